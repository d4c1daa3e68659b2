//! What every binary test of `zb-health` needs: the workspace root, the
//! binary, and the snapshots, compared by snapbox.
//!
//! Snapshots live in `tests/snapshots/`; `SNAPSHOTS=overwrite cargo test -p
//! zb-health-cli` rewrites the ones that differ (review the diff).

#![allow(dead_code)] // Each test crate uses its own part of this module.

pub mod fixture;

use std::path::{Path, PathBuf};
use std::process::Output;

use snapbox::cmd::{Command, cargo_bin};

/// The workspace root: the CLI runs there so that paths in the diagnostics
/// (and so the snapshots) are the same on every machine.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate is in the workspace")
        .to_path_buf()
}

/// `zb-health ARGS` in the workspace root, to assert on with snapbox.
pub fn cli(args: &[&str]) -> Command {
    Command::new(cargo_bin!("zb-health"))
        .args(args)
        .current_dir(root())
}

/// Runs `zb-health ARGS` in the workspace root.
pub fn zb_health(args: &[&str]) -> Output {
    cli(args).output().expect("the zb-health binary runs")
}

/// The CLI's output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("the CLI writes UTF-8")
}

/// `tests/snapshots/NAME`, compared exactly: `raw` turns off snapbox's
/// wildcards (`...`, `[..]`), so a diagnostic cannot pass by matching one.
pub fn snapshot(name: &str) -> snapbox::Data {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    snapbox::Data::read_from(&path, None).raw()
}

/// Every `.yaml` file in a directory of the workspace, sorted, as paths
/// relative to the root.
pub fn manifests(dir: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join(dir))
        .expect("the manifest directory exists")
        .map(|entry| entry.expect("a readable entry").file_name())
        .map(|name| name.into_string().expect("UTF-8 file names"))
        .filter(|name| name.ends_with(".yaml"))
        .map(|name| format!("{dir}/{name}"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no manifests in {dir}");
    files
}

/// Every example's `health.yaml`, whatever the examples are called.
pub fn example_manifests() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("examples"))
        .expect("the examples directory exists")
        .map(|entry| entry.expect("a readable entry").file_name())
        .map(|name| name.into_string().expect("UTF-8 file names"))
        .map(|name| format!("examples/{name}/health.yaml"))
        .filter(|file| root().join(file).is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no example has a health.yaml");
    files
}
