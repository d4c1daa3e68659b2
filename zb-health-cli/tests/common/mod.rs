//! What every binary test of `zb-health` needs: the workspace root, the
//! binary, and the snapshot comparison.
//!
//! Snapshots live in `tests/snapshots/`; `SNAPSHOTS=overwrite cargo test
//! --workspace --all-features --test NAME` rewrites them (review the diff).

#![allow(dead_code)] // Each test crate uses its own part of this module.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root: the CLI runs there so that paths in the diagnostics
/// (and so the snapshots) are the same on every machine.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate is in the workspace")
        .to_path_buf()
}

/// Runs `zb-health ARGS` in the workspace root.
pub fn zb_health(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zb-health"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the zb-health binary runs")
}

/// The CLI's output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("the CLI writes UTF-8")
}

/// Compares `actual` with `tests/snapshots/NAME`, or rewrites the file when
/// `SNAPSHOTS=overwrite`.
pub fn assert_snapshot(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("SNAPSHOTS").is_some_and(|v| v == "overwrite") {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("the snapshot directory is writable");
        }
        std::fs::write(&path, actual).expect("the snapshot is writable");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "no snapshot {}: {e}; run with SNAPSHOTS=overwrite",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{} differs from the output (SNAPSHOTS=overwrite rewrites it)\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
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
