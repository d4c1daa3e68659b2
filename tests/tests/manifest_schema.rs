//! `spec/health-manifest.schema.json` agrees with the parser on the
//! manifests this repository ships: every manifest the compiler accepts
//! validates against the schema, and shape errors the schema can express
//! are refused by both.

use std::path::Path;

use serde_json::Value;
use zb_health_spec::manifest::parse_manifest;

fn schema() -> jsonschema::Validator {
    let text = include_str!("../../spec/health-manifest.schema.json");
    jsonschema::validator_for(&serde_json::from_str(text).unwrap()).unwrap()
}

fn as_json(yaml: &str) -> Value {
    serde_saphyr::from_str(yaml).unwrap()
}

fn shipped_valid_manifests() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut paths = vec![root.join("examples/plant-service/health.yaml")];
    for entry in std::fs::read_dir(root.join("tests/ui/pass/manifests")).unwrap() {
        paths.push(entry.unwrap().path());
    }
    paths
}

#[test]
fn every_manifest_the_compiler_accepts_validates_against_the_schema() {
    let schema = schema();
    let paths = shipped_valid_manifests();
    assert!(paths.len() >= 4, "{paths:?}");
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            parse_manifest(&text).is_ok(),
            "{} does not parse",
            path.display()
        );
        let errors: Vec<String> = schema
            .iter_errors(&as_json(&text))
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
}

#[test]
fn shape_errors_are_refused_by_schema_and_parser_alike() {
    let schema = schema();
    for yaml in [
        "probes: []\n",                                                           // no service
        "service: s\nprobez: []\n",                                               // unknown key
        "service: s\nprobes:\n  - { name: db, kind: databse }\n",                 // unknown kind
        "service: s\nprobes:\n  - { name: db, kind: database, tags: [live] }\n",  // live tag
        "service: s\nprobes:\n  - { name: a, kind: active-node, scope: role }\n", // R2
        "service: s\nprobes:\n  - { name: a, kind: active-node, scope: role, roles: [] }\n",
        "service: s\nprobes:\n  - { name: db, kind: database, policy: default }\n", // option of another kind
        "service: s\nprobes:\n  - { kind: custom }\n", // custom without type
        "service: s\nprobes:\n  - { name: db, kind: database, timeout: 1.5s }\n", // malformed duration
    ] {
        assert!(parse_manifest(yaml).is_err(), "parser accepted {yaml}");
        assert!(!schema.is_valid(&as_json(yaml)), "schema accepted {yaml}");
    }
}
