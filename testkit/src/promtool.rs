//! `promtool check metrics` on a `/metrics` scrape: Prometheus' own lint
//! of the exposition format and its naming conventions.
//!
//! The binary is `$ZB_HEALTH_PROMTOOL`, else the one `scripts/promtool.sh`
//! unpacks under the workspace's `target/prometheus`, else `promtool` on
//! the `PATH`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The promtool binary; panics saying how to get it when there is none.
pub fn promtool() -> PathBuf {
    if let Some(path) = std::env::var_os("ZB_HEALTH_PROMTOOL").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let unpacked =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/prometheus/usr/bin/promtool");
    if unpacked.is_file() {
        return unpacked;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join("promtool");
        if candidate.is_file() {
            return candidate;
        }
    }
    panic!("no promtool: run scripts/promtool.sh (tests/run.sh does), or set $ZB_HEALTH_PROMTOOL");
}

/// Runs `promtool ARGS` in `dir`: `Err` with its output when it fails.
pub fn run(dir: &std::path::Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(promtool())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("promtool starts");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(said)
    } else {
        Err(said)
    }
}

/// `promtool check metrics` over `scrape`: `Err` with what it reported
/// when it finds a problem, a lint warning included.
pub fn check_metrics(scrape: &str) -> Result<(), String> {
    let mut child = Command::new(promtool())
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool starts");
    child
        .stdin
        .take()
        .expect("its stdin")
        .write_all(scrape.as_bytes())
        .expect("promtool reads the scrape");
    let out = child.wait_with_output().expect("promtool ends");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() && said.trim().is_empty() {
        Ok(())
    } else {
        Err(said)
    }
}
