//! What every subcommand shares: its exit status, and reading a file.

use std::path::Path;

/// Why a subcommand did not succeed, as its exit status (0 is `Ok(())`).
/// Ordered: when several files fail, the worst failure is the status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Failure {
    /// 1: a rule is broken, a setting drifted, or the probe failed.
    Failed = 1,
    /// 2: an input that cannot be used: a file that cannot be read, a bad
    /// URL, a Deployment that cannot be compared (clap exits 2 on a usage
    /// error itself).
    Unusable = 2,
}

/// Says on stderr why an input cannot be used; the subcommand then exits 2.
pub fn unusable(why: impl std::fmt::Display) -> Failure {
    eprintln!("error: {why}");
    Failure::Unusable
}

/// A file read as text, with the name the diagnostics show.
pub struct Source {
    /// The path as given, for `--> path:line:col` and the messages.
    pub shown: String,
    /// The content.
    pub text: String,
}

/// Reads `path` as UTF-8 text, or says on stderr which file cannot be read
/// and why (exit 2).
pub fn read(path: &Path) -> Result<Source, Failure> {
    let shown = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Source { shown, text }),
        Err(error) => Err(unusable(format!("cannot read `{shown}`: {error}"))),
    }
}
