//! `zb-health schema`: the manifest's JSON Schema reaches a manifest
//! outside this repository, and the manifest's first line then points
//! editors at it.

mod common;

use common::{root, text, zb_health};

/// A manifest in a fresh folder outside the workspace.
fn manifest_outside(name: &str, content: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("zb-schema-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let file = dir.join("health.yaml");
    std::fs::write(&file, content).expect("the manifest is written");
    file
}

#[test]
fn schema_prints_the_specs_schema() {
    let out = zb_health(&["schema"]);
    assert_eq!(out.status.code(), Some(0));
    let spec = std::fs::read_to_string(root().join("spec/health-manifest.schema.json")).unwrap();
    assert_eq!(text(&out.stdout), spec);
    let _: serde_json::Value = serde_json::from_str(&spec).expect("the schema is JSON");
}

#[test]
fn next_to_writes_the_schema_beside_a_manifest_and_says_how_to_point_at_it() {
    let spec = std::fs::read_to_string(root().join("spec/health-manifest.schema.json")).unwrap();
    let file = manifest_outside("bare", "service: orders\n");
    let out = zb_health(&["schema", "--next-to", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = file.with_file_name("health-manifest.schema.json");
    assert_eq!(std::fs::read_to_string(&written).unwrap(), spec);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("make this its first line")
            && stdout.ends_with("# yaml-language-server: $schema=health-manifest.schema.json\n"),
        "{stdout}"
    );
    // The manifest itself is never edited.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "service: orders\n");

    let pointed = manifest_outside(
        "pointed",
        "# yaml-language-server: $schema=health-manifest.schema.json\nservice: orders\n",
    );
    let out = zb_health(&["schema", "--next-to", pointed.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).contains("already points editors at it"),
        "{}",
        text(&out.stdout)
    );
    for f in [file, pointed] {
        std::fs::remove_dir_all(f.parent().unwrap()).unwrap();
    }
}

#[test]
fn a_manifest_that_cannot_be_read_writes_nothing() {
    let dir = std::env::temp_dir().join(format!("zb-schema-missing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("helth.yaml");
    let out = zb_health(&["schema", "--next-to", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with("error: cannot read `"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.join("health-manifest.schema.json").exists());
    std::fs::remove_dir_all(dir).unwrap();
}
