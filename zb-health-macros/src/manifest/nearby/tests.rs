//! The scan of a crate's source and what it decides, on files the tests write.

use std::path::Path;

use super::walk::*;
use super::*;

fn found(module: &[&str], name: &str) -> Found {
    Found {
        module: module.iter().map(|s| s.to_string()).collect(),
        name: name.into(),
        public: true,
    }
}

fn hint_for(written: &str, all: &[Found]) -> Option<String> {
    hint(&syn::parse_str(written).unwrap(), all)
}

#[test]
fn a_misspelt_name_is_mended_in_the_form_written() {
    let all = [found(&[], "CacheProbe"), found(&["db"], "PoolProbe")];
    assert_eq!(
        hint_for("crate::CahceProbe", &all).as_deref(),
        Some("crate::CacheProbe")
    );
    assert_eq!(hint_for("CahceProbe", &all).as_deref(), Some("CacheProbe"));
    assert_eq!(
        hint_for("crate::PolProbe", &all).as_deref(),
        Some("crate::db::PoolProbe")
    );
    assert_eq!(hint_for("crate::Unrelated", &all), None);
}

#[test]
fn the_right_name_in_the_wrong_module_gets_its_path() {
    let all = [found(&["probes"], "CacheProbe")];
    assert_eq!(
        hint_for("crate::CacheProbe", &all).as_deref(),
        Some("crate::probes::CacheProbe")
    );
    assert_eq!(hint_for("crate::probes::CacheProbe", &all), None);
}

#[test]
fn only_a_probe_found_at_the_written_path_is_reachable() {
    let path = |p: &str| syn::parse_str::<syn::Path>(p).unwrap();
    let source = |caller: Option<Vec<String>>| CrateSource {
        found: vec![found(&[], "CacheProbe"), found(&["probes"], "DiskProbe")],
        caller,
        ..CrateSource::default()
    };
    let unplaced = source(None);
    assert!(reachable(&path("crate::CacheProbe"), &unplaced));
    assert!(reachable(&path("crate::probes::DiskProbe"), &unplaced));
    assert!(!reachable(&path("crate::DiskProbe"), &unplaced));
    // A relative path needs the caller's module.
    assert!(!reachable(&path("CacheProbe"), &unplaced));
    for other in [
        "super::CacheProbe",
        "::other::CacheProbe",
        "other::CacheProbe",
    ] {
        assert!(
            !reachable(&path(other), &source(Some(Vec::new()))),
            "{other}"
        );
    }
    let root = source(Some(Vec::new()));
    assert!(reachable(&path("CacheProbe"), &root));
    assert!(reachable(&path("self::probes::DiskProbe"), &root));
    let in_probes = source(Some(vec!["probes".into()]));
    assert!(reachable(&path("DiskProbe"), &in_probes));
    assert!(!reachable(&path("CacheProbe"), &in_probes));
}

#[test]
fn a_crate_is_read_from_its_root_along_its_mod_declarations() {
    let dir = std::env::temp_dir().join(format!("zb-nearby-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("a/b/inner")).unwrap();
    std::fs::create_dir_all(src.join("elsewhere")).unwrap();
    let write = |f: &str, text: &str| std::fs::write(src.join(f), text).unwrap();
    // The library is another crate than the binary.
    write("lib.rs", "#[zb_health(name = \"l\")] pub struct LibProbe;");
    let private = |module: &[&str], name: &str| Found {
        public: false,
        ..found(module, name)
    };
    write(
        "main.rs",
        "mod a; mod missing; #[cfg(test)] mod t; #[path = \"elsewhere/p.rs\"] mod p;\n\
         zb_health::prelude::manifest!(Health = \"health.yaml\");",
    );
    write("t.rs", "#[zb_health(name = \"t\")] struct TestOnly;");
    write(
        "elsewhere/p.rs",
        "#[zb_health(name = \"p\")] pub struct PathProbe;",
    );
    write("a/mod.rs", "pub mod b;");
    write(
        "a/b.rs",
        "#[zb_health(name = \"x\", tags = [ready])] pub struct X;\n\
         mod inner { #[zb_health::prelude::zb_health(name = \"y\")] struct Y; struct Z; mod c; }\n\
         #[cfg(test)] #[zb_health(name = \"w\")] struct W;",
    );
    write("a/b/inner/c.rs", "#[zb_health(name = \"c\")] pub struct C;");
    // Not declared by any module: not part of the crate.
    write("a/stray.rs", "#[zb_health(name = \"s\")] pub struct Stray;");

    let source = crate_source_in(Some(&dir), None, Some(&src.join("main.rs")));
    assert_eq!(
        source.found,
        [
            found(&["a", "b"], "X"),
            private(&["a", "b", "inner"], "Y"),
            found(&["a", "b", "inner", "c"], "C"),
            found(&["p"], "PathProbe"),
        ]
    );
    assert_eq!(source.caller, Some(Vec::new()));
    let from_b = crate_source_in(Some(&dir), None, Some(&src.join("a/b.rs")));
    assert_eq!(from_b.caller, Some(vec!["a".to_string(), "b".to_string()]));
    let lib = crate_source_in(Some(&dir), None, Some(&src.join("lib.rs")));
    assert_eq!(lib.found, [found(&[], "LibProbe")]);
    // A file outside every crate root is a root of its own.
    let test = dir.join("test.rs");
    std::fs::write(&test, "#[zb_health(name = \"q\")] struct Q;").unwrap();
    let alone = crate_source_in(Some(&dir), None, Some(&test));
    assert_eq!(alone.found, [private(&[], "Q")]);
    assert_eq!(alone.caller, Some(Vec::new()));
    assert_eq!(alone.rooted, None, "a guessed root");
    std::fs::remove_dir_all(dir).unwrap();
}

/// A package in a fresh directory: `Cargo.toml` and `files`.
fn package(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zb-missing-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (f, text) in files {
        let path = dir.join(f);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn path(p: &str) -> syn::Path {
    syn::parse_str(p).unwrap()
}

const PROBES: &str = "#[zb_health(name = \"c\")] pub struct CacheProbe;\n\
    mod hidden { #[zb_health(name = \"h\")] pub struct HiddenProbe; }\n\
    pub mod inner { #[zb_health(name = \"i\")] pub struct InnerProbe; #[zb_health(name = \"p\")] struct PrivateProbe; }\n\
    pub use inner::InnerProbe as Renamed;\n\
    pub type Alias = inner::InnerProbe;\n\
    #[cfg(feature = \"x\")] #[zb_health(name = \"m\")] pub struct MaybeProbe;\n";

#[test]
fn a_name_nothing_declares_in_a_module_read_whole_is_missing() {
    let main = format!(
        "{PROBES}zb_health::prelude::manifest!(pub Health = \"health.yaml\");\nfn main() {{}}"
    );
    let dir = package(
        "whole",
        &[
            ("Cargo.toml", "[package]\nname = \"p\""),
            ("src/main.rs", &main),
        ],
    );
    let source = crate_source(Some(&dir), "src/main.rs");
    let missing = |p: &str| missing(&path(p), "Health", &source);
    for absent in [
        "crate::CahceProbe",
        "self::CahceProbe",
        "CahceProbe",
        "crate::inner::Nothing",
        "self::inner::CacheProbe",
    ] {
        assert!(missing(absent), "{absent}");
    }
    for present in [
        "crate::CacheProbe",
        "CacheProbe",
        "self::CacheProbe",
        "crate::Renamed",
        "crate::Alias",
        "crate::inner::InnerProbe",
        "crate::MaybeProbe",
        "crate::HealthDeps",
        "String",
        "u8",
        // Not placed: another crate, `super`, a module named without `self`.
        "other::CahceProbe",
        "::CahceProbe",
        "super::CahceProbe",
        "inner::Nothing",
        // A module the scan did not read.
        "crate::nowhere::CahceProbe",
    ] {
        assert!(!missing(present), "{present}");
    }
    // The probe to use instead, if the call's module can name it.
    assert_eq!(
        usable("crate::CacheProbe", "Health", &source).as_deref(),
        Some("crate::CacheProbe")
    );
    assert_eq!(
        usable("CacheProbe", "Health", &source).as_deref(),
        Some("crate::CacheProbe")
    );
    assert_eq!(
        usable("crate::inner::InnerProbe", "Health", &source).as_deref(),
        Some("crate::inner::InnerProbe")
    );
    assert_eq!(
        usable("crate::inner::PrivateProbe", "Health", &source),
        None
    );
    assert_eq!(
        usable("crate::hidden::HiddenProbe", "Health", &source).as_deref(),
        Some("crate::hidden::HiddenProbe")
    );
    assert_eq!(usable("crate::Nothing", "Health", &source), None);
    std::fs::remove_dir_all(dir).unwrap();
}

fn crate_source(dir: Option<&Path>, caller: &str) -> CrateSource {
    let dir = dir.unwrap();
    crate_source_in(Some(dir), None, Some(&dir.join(caller)))
}

#[test]
fn any_doubt_decides_nothing() {
    let call = "zb_health::prelude::manifest!(pub Health = \"health.yaml\");\n";
    let cases: &[(&str, String)] = &[
        ("glob", format!("{PROBES}use other::*;\n{call}")),
        ("macro", format!("{PROBES}make_probes!();\n{call}")),
        (
            "attribute",
            format!("{PROBES}#[generate::types] fn f() {{}}\n{call}"),
        ),
        (
            "derive",
            format!("{PROBES}#[derive(Builder)] struct B;\n{call}"),
        ),
        ("in-a-function", format!("{PROBES}fn main() {{ {call} }}")),
        (
            "twice",
            format!("{PROBES}{call}#[cfg(test)] mod t {{ {call} }}"),
        ),
    ];
    for (tag, main) in cases {
        let dir = package(
            tag,
            &[
                ("Cargo.toml", "[package]\nname = \"p\""),
                ("src/main.rs", main),
            ],
        );
        let source = crate_source(Some(&dir), "src/main.rs");
        assert!(
            !missing(&path("crate::CahceProbe"), "Health", &source),
            "{tag}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
    // A root Cargo does not know: the caller might be a module.
    let dir = package(
        "guess",
        &[
            ("Cargo.toml", "[package]\nname = \"p\""),
            ("other/x.rs", &format!("{PROBES}{call}")),
        ],
    );
    let source = crate_source(Some(&dir), "other/x.rs");
    assert!(!missing(&path("crate::CahceProbe"), "Health", &source));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_target_of_another_name_is_another_crate() {
    // `tests/common.rs` is a test of its own and `mod common;` of `it`.
    let call = "zb_health::prelude::manifest!(Health = \"health.yaml\");\n";
    let dir = package(
        "named",
        &[
            ("Cargo.toml", "[package]\nname = \"p\""),
            ("tests/common.rs", call),
            ("tests/it.rs", &format!("{PROBES}mod common;")),
        ],
    );
    let caller = dir.join("tests/common.rs");
    let as_it = crate_source_in(Some(&dir), Some("it"), Some(&caller));
    assert_eq!(as_it.caller, Some(vec!["common".to_string()]));
    assert!(missing(&path("crate::CahceProbe"), "Health", &as_it));
    assert!(!missing(&path("crate::CacheProbe"), "Health", &as_it));
    let alone = crate_source_in(Some(&dir), Some("common"), Some(&caller));
    assert_eq!(alone.caller, Some(Vec::new()));
    assert!(missing(&path("crate::CacheProbe"), "Health", &alone));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_target_cargo_toml_declares_is_a_root() {
    let main =
        format!("{PROBES}mod probes;\nzb_health::prelude::manifest!(Health = \"health.yaml\");\n");
    let dir = package(
        "declared",
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"p\"\n[[bin]]\nname = \"case\"\npath = 'cases/case.rs'\n[dependencies]\nq = { path = \"../q\" }",
            ),
            ("cases/case.rs", &main),
            (
                "cases/probes.rs",
                "#[zb_health(name = \"d\")] pub struct DiskProbe;",
            ),
        ],
    );
    let source = crate_source(Some(&dir), "cases/case.rs");
    assert!(missing(&path("crate::CahceProbe"), "Health", &source));
    assert!(missing(&path("crate::probes::DiskProb"), "Health", &source));
    assert!(!missing(
        &path("crate::probes::DiskProbe"),
        "Health",
        &source
    ));
    std::fs::remove_dir_all(dir).unwrap();
}
