//! Prometheus' own tools in tests: `promtool check metrics` on a
//! `/metrics` scrape (the exposition format and its naming conventions),
//! `promtool` on rule files, and `amtool` on an Alertmanager
//! configuration.
//!
//! promtool is `$ZB_HEALTH_PROMTOOL`, else the one
//! `scripts/prometheus-tools.sh` unpacks under the workspace's
//! `target/prometheus`, else `promtool` on the `PATH`; amtool likewise.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The promtool binary; panics saying how to get it when there is none.
pub fn promtool() -> PathBuf {
    if let Some(path) = std::env::var_os("ZB_HEALTH_PROMTOOL").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    tool("promtool")
}

/// The amtool binary (Alertmanager's), found as promtool is without its
/// variable.
pub fn amtool() -> PathBuf {
    tool("amtool")
}

/// `name` as `scripts/prometheus-tools.sh` unpacks it, else on the `PATH`.
fn tool(name: &str) -> PathBuf {
    let unpacked = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../target/prometheus/usr/bin")
        .join(name);
    if unpacked.is_file() {
        return unpacked;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(name);
        if candidate.is_file() {
            return candidate;
        }
    }
    panic!("no {name}: run scripts/prometheus-tools.sh (tests/run.sh does)");
}

/// Runs `promtool ARGS` in `dir`: `Err` with its output when it fails.
pub fn run(dir: &std::path::Path, args: &[&str]) -> Result<String, String> {
    run_tool(promtool(), dir, args)
}

/// Runs `amtool ARGS` in `dir`, as [`run`] does promtool.
pub fn run_amtool(dir: &std::path::Path, args: &[&str]) -> Result<String, String> {
    run_tool(amtool(), dir, args)
}

fn run_tool(tool: PathBuf, dir: &std::path::Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(tool)
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
