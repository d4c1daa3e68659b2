//! Argument parsing by hand: two flags and one subcommand do not need a
//! parser crate.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

/// The short usage, for `--help` and after a usage error.
pub const USAGE: &str = "\
Usage: zb-health check [--color auto|always|never] FILE...

Commands:
  check FILE...   validate health.yaml manifests with the compile-time rules

Options:
  --color WHEN    colour the diagnostics: auto (default: when stderr is a terminal), always, never
  -h, --help      print this help
  -V, --version   print the version

Exit status: 0 all files valid, 1 a rule is broken, 2 usage error or unreadable file.
";

/// When to colour the diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// When stderr is a terminal.
    Auto,
    /// Always, e.g. for a CI log that renders ANSI.
    Always,
    /// Never.
    Never,
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    /// `--help`, `-h`.
    Help,
    /// `--version`, `-V`.
    Version,
    /// `check FILE...`.
    Check {
        /// When to colour.
        color: Color,
        /// The manifests, in the order given.
        files: Vec<PathBuf>,
    },
}

/// A command line that cannot be run.
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, UsageError> {
    let mut args = args.into_iter();
    // No command is a usage error, not help: a CI step that lost its
    // arguments must fail, not pass.
    let Some(first) = args.next() else {
        return Err(UsageError("no command given".into()));
    };
    match first.to_str() {
        Some("-h" | "--help" | "help") => Ok(Command::Help),
        Some("-V" | "--version") => Ok(Command::Version),
        Some("check") => parse_check(args),
        _ => Err(UsageError(format!(
            "unknown command `{}`",
            first.to_string_lossy()
        ))),
    }
}

fn parse_check(mut args: impl Iterator<Item = OsString>) -> Result<Command, UsageError> {
    let mut color = Color::Auto;
    let mut files = Vec::new();
    let mut options_done = false;
    while let Some(arg) = args.next() {
        // A path need not be UTF-8; only options are matched as text.
        let text = arg.to_str().filter(|_| !options_done);
        match text {
            Some("--") => options_done = true,
            Some("-h" | "--help") => return Ok(Command::Help),
            Some("--color") => {
                let when = args
                    .next()
                    .ok_or_else(|| UsageError("`--color` needs a value".into()))?;
                color = parse_color(&when.to_string_lossy())?;
            }
            Some(flag) if flag.starts_with("--color=") => {
                color = parse_color(&flag["--color=".len()..])?;
            }
            Some(flag) if flag.starts_with('-') && flag.len() > 1 => {
                return Err(UsageError(format!("unknown option `{flag}`")));
            }
            _ => files.push(PathBuf::from(arg)),
        }
    }
    if files.is_empty() {
        return Err(UsageError(
            "`check` needs at least one manifest file".into(),
        ));
    }
    Ok(Command::Check { color, files })
}

fn parse_color(when: &str) -> Result<Color, UsageError> {
    match when {
        "auto" => Ok(Color::Auto),
        "always" => Ok(Color::Always),
        "never" => Ok(Color::Never),
        other => Err(UsageError(format!(
            "`--color` takes auto, always or never, not `{other}`"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Command, UsageError> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn check_takes_color_in_both_spellings_and_files_after_double_dash() {
        assert_eq!(
            parse_strs(&["check", "--color", "never", "a.yaml", "--", "--b.yaml"]),
            Ok(Command::Check {
                color: Color::Never,
                files: vec!["a.yaml".into(), "--b.yaml".into()],
            })
        );
        assert_eq!(
            parse_strs(&["check", "--color=always", "-"]),
            Ok(Command::Check {
                color: Color::Always,
                files: vec!["-".into()],
            })
        );
    }

    #[test]
    fn usage_errors_are_errors() {
        assert!(parse_strs(&["check"]).is_err());
        assert!(parse_strs(&["check", "--color"]).is_err());
        assert!(parse_strs(&["check", "--color", "blue", "a.yaml"]).is_err());
        assert!(parse_strs(&["check", "--strict", "a.yaml"]).is_err());
        assert!(parse_strs(&["lint", "a.yaml"]).is_err());
    }

    #[test]
    fn nothing_help_and_version() {
        assert!(parse_strs(&[]).is_err());
        assert_eq!(parse_strs(&["--help"]), Ok(Command::Help));
        assert_eq!(parse_strs(&["-V"]), Ok(Command::Version));
    }
}
