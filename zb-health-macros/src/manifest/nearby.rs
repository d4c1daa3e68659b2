//! The `#[zb_health]` probes written in the crate's source, for the "did
//! you mean" of a custom `type:` that names no type.
//!
//! A macro cannot ask the compiler which types are in scope, and the check
//! that the type exists runs after expansion. So the macro reads the
//! source itself: the file that calls `manifest!` and every `.rs` file
//! under the crate's `src/`, parsed with syn, each `#[zb_health]` struct
//! with the module path its file and inline `mod`s give it. It only words
//! a hint: what it misses (a probe made by another macro, one in another
//! crate) costs the hint, never a build, and the message shows only when
//! the type is missing.
//!
//! The same scan tells `manifest!` whether a probe's attribute callback is
//! [`reachable`] (see `crate::limits`): only a probe found at the path
//! written is checked at its attribute; any other at the manifest. A
//! struct under `#[cfg]` is not counted, since it may not exist.

use std::path::{Path, PathBuf};

use zb_health_spec::suggest;

/// Files past this size or count are not read: a hint is not worth a slow
/// build.
const MAX_FILES: usize = 512;
const MAX_BYTES: u64 = 1 << 20;

/// A `#[zb_health]` struct found in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its module, from the crate root: `["probes"]` for `crate::probes`.
    pub module: Vec<String>,
    /// The struct's name.
    pub name: String,
}

impl Found {
    /// `crate::probes::CacheProbe`.
    fn path(&self) -> String {
        std::iter::once("crate")
            .chain(self.module.iter().map(String::as_str))
            .chain(std::iter::once(self.name.as_str()))
            .collect::<Vec<_>>()
            .join("::")
    }
}

/// Every `#[zb_health]` struct in `caller` (taken as a crate root when it
/// is not under `src/`) and under `$CARGO_MANIFEST_DIR/src`.
pub fn probes_in_source(caller: Option<&Path>) -> Vec<Found> {
    let src = std::env::var_os("CARGO_MANIFEST_DIR").map(|d| PathBuf::from(d).join("src"));
    let mut files = Vec::new();
    if let Some(src) = &src {
        rs_files(src, &mut files);
    }
    let mut found = Vec::new();
    if let Some(caller) = caller {
        let caller = caller.canonicalize().unwrap_or_else(|_| caller.to_owned());
        if !files.contains(&caller) {
            scan(&caller, Vec::new(), &mut found);
        }
    }
    for file in &files {
        let module = src
            .as_deref()
            .and_then(|s| module_of(s, file))
            .unwrap_or_default();
        scan(file, module, &mut found);
    }
    found
}

/// The hint for a `type:` written as `written` that names no type: the
/// closest probe's path, in the form the user wrote where they can be
/// compared, or nothing.
pub fn hint(written: &syn::Path, found: &[Found]) -> Option<String> {
    let last = written.segments.last()?.ident.to_string();
    let parent: Vec<String> = written
        .segments
        .iter()
        .rev()
        .skip(1)
        .rev()
        .map(|s| s.ident.to_string())
        .collect();
    // `crate::a::X` names module `a`; `X` or `self::X` the caller's, which
    // the scan cannot place, so any module is as good.
    let module: Option<Vec<String>> = match parent.first().map(String::as_str) {
        Some("crate") => Some(parent[1..].to_vec()),
        _ => None,
    };
    let written_text = written
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::");
    // The same name in another module: the path was wrong, not the name.
    if let Some(same) = found
        .iter()
        .find(|f| f.name == last && module.as_ref() != Some(&f.module))
    {
        return Some(same.path()).filter(|p| *p != written_text);
    }
    let names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
    let near = suggest::did_you_mean(&last, names.iter().copied())?;
    let f = found.iter().find(|f| f.name == near)?;
    let path = if module.is_none() || module.as_ref() == Some(&f.module) {
        // Written as the user wrote it, with the name mended.
        let mut mended = parent;
        mended.push(f.name.clone());
        mended.join("::")
    } else {
        f.path()
    };
    // The type as written exists in the source: no hint can help.
    Some(path).filter(|p| *p != written_text)
}

/// Whether `written` names a `#[zb_health]` struct found in the source at
/// that very path: `crate::a::X` in module `a`, `X` or `self::a::X` from
/// the module of the file that calls `manifest!` (`caller`).
pub fn reachable(written: &syn::Path, found: &[Found], caller: Option<&Path>) -> bool {
    let idents: Vec<String> = written
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let Some((name, parent)) = idents.split_last() else {
        return false;
    };
    let module: Vec<String> = match parent.first().map(String::as_str) {
        Some("crate") => parent[1..].to_vec(),
        None | Some("self") => {
            let Some(mut here) = caller_module(caller) else {
                return false;
            };
            here.extend(parent.iter().skip(usize::from(!parent.is_empty())).cloned());
            here
        }
        // `super::`, another crate, a leading `::`: not placed.
        Some(_) => return false,
    };
    written.leading_colon.is_none() && found.iter().any(|f| f.name == *name && f.module == module)
}

/// The module of the file that calls `manifest!`: by the layout under
/// `src/`, or the crate root for a file elsewhere (a test, an example).
fn caller_module(caller: Option<&Path>) -> Option<Vec<String>> {
    let caller = caller?.canonicalize().ok()?;
    let src = std::env::var_os("CARGO_MANIFEST_DIR").map(|d| PathBuf::from(d).join("src"));
    Some(
        src.as_deref()
            .and_then(|s| module_of(s, &caller))
            .unwrap_or_default(),
    )
}

/// The `.rs` files under `dir`, depth first, up to [`MAX_FILES`].
fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if out.len() >= MAX_FILES {
            return;
        }
        if path.is_dir() {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.canonicalize().unwrap_or(path));
        }
    }
}

/// The module a file under `src` is, by Rust's file layout: `lib.rs`,
/// `main.rs` and `bin/*.rs` are roots, `a/mod.rs` and `a.rs` are `a`.
fn module_of(src: &Path, file: &Path) -> Option<Vec<String>> {
    let src = src.canonicalize().ok()?;
    let rel = file.strip_prefix(&src).ok()?;
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let leaf = parts.pop()?;
    if parts.first().is_some_and(|p| p == "bin") {
        return Some(Vec::new());
    }
    let stem = leaf.trim_end_matches(".rs");
    if !(parts.is_empty() && matches!(stem, "lib" | "main")) && stem != "mod" {
        parts.push(stem.to_owned());
    }
    Some(parts)
}

/// The `#[zb_health]` structs of one file, in `module`.
fn scan(file: &Path, module: Vec<String>, found: &mut Vec<Found>) {
    let small = std::fs::metadata(file).is_ok_and(|m| m.len() <= MAX_BYTES);
    let Some(text) = small.then(|| std::fs::read_to_string(file).ok()).flatten() else {
        return;
    };
    // Most files hold no probe: skip them without parsing.
    if !text.contains("zb_health") {
        return;
    }
    if let Ok(parsed) = syn::parse_file(&text) {
        collect(&parsed.items, &module, found);
    }
}

fn collect(items: &[syn::Item], module: &[String], found: &mut Vec<Found>) {
    for item in items {
        match item {
            syn::Item::Struct(s) if is_probe(&s.attrs) && !is_cfg(&s.attrs) => found.push(Found {
                module: module.to_vec(),
                name: s.ident.to_string(),
            }),
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    let mut nested = module.to_vec();
                    nested.push(m.ident.to_string());
                    collect(inner, &nested, found);
                }
            }
            _ => {}
        }
    }
}

/// Whether the item is compiled only under a condition.
fn is_cfg(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("cfg"))
}

/// Whether an attribute is `#[zb_health(...)]`, by any path.
fn is_probe(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "zb_health")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(module: &[&str], name: &str) -> Found {
        Found {
            module: module.iter().map(|s| s.to_string()).collect(),
            name: name.into(),
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
        let all = [found(&[], "CacheProbe"), found(&["probes"], "DiskProbe")];
        let path = |p: &str| syn::parse_str::<syn::Path>(p).unwrap();
        // No caller file: a relative path cannot be placed.
        assert!(reachable(&path("crate::CacheProbe"), &all, None));
        assert!(reachable(&path("crate::probes::DiskProbe"), &all, None));
        assert!(!reachable(&path("crate::DiskProbe"), &all, None));
        assert!(!reachable(&path("CacheProbe"), &all, None));
        assert!(!reachable(&path("super::CacheProbe"), &all, None));
        assert!(!reachable(&path("::other::CacheProbe"), &all, None));
        assert!(!reachable(&path("other::CacheProbe"), &all, None));
        // A caller outside `src/` is a crate root.
        let caller = std::env::temp_dir();
        assert!(reachable(&path("CacheProbe"), &all, Some(&caller)));
        assert!(reachable(
            &path("self::probes::DiskProbe"),
            &all,
            Some(&caller)
        ));
    }

    #[test]
    fn files_are_modules_by_rusts_layout() {
        let dir = std::env::temp_dir().join(format!("zb-nearby-{}", std::process::id()));
        let src = dir.join("src");
        std::fs::create_dir_all(src.join("a")).unwrap();
        std::fs::write(src.join("main.rs"), "mod a;").unwrap();
        std::fs::write(src.join("a/mod.rs"), "mod b;").unwrap();
        std::fs::write(
            src.join("a/b.rs"),
            "#[zb_health(name = \"x\", tags = [ready])] pub struct X;\n\
             mod inner { #[zb_health::zb_health(name = \"y\", tags = [ready])] struct Y; struct Z; }\n\
             #[cfg(test)] #[zb_health(name = \"w\")] struct W;",
        )
        .unwrap();
        let mut files = Vec::new();
        rs_files(&src, &mut files);
        let mut all = Vec::new();
        for f in &files {
            scan(f, module_of(&src, f).unwrap(), &mut all);
        }
        assert_eq!(
            all,
            [found(&["a", "b"], "X"), found(&["a", "b", "inner"], "Y")]
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
