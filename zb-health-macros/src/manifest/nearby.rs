//! The `#[zb_health]` probes written in the crate's source, for the "did
//! you mean" of a custom `type:` that names no type.
//!
//! A macro cannot ask the compiler which types are in scope, and the check
//! that the type exists runs after expansion. So the macro reads the
//! source itself: the crate of the file that calls `manifest!`, from its
//! root along its `mod` declarations, parsed with syn, each `#[zb_health]`
//! struct with the module its file and inline `mod`s give it.
//!
//! The hint is only words: what the scan misses (a probe another macro
//! writes, one in another crate) costs the hint, never a build, and the
//! message shows only when the type is missing. The same scan tells
//! `manifest!` whether a probe's attribute callback is [`reachable`] (see
//! `crate::limits`); a wrong "yes" would be an unresolved macro, so only a
//! probe found at the very path written counts, and nothing under
//! `#[cfg]`, which may not exist. Any other probe's limits are checked at
//! the manifest.

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

/// What the scan found: the probes of the caller's crate, and the module
/// of the file that calls `manifest!`.
#[derive(Debug, Default)]
pub struct CrateSource {
    /// Every `#[zb_health]` struct of the crate, by module.
    pub found: Vec<Found>,
    /// The caller's module, if the scan placed it.
    caller: Option<Vec<String>>,
}

/// The crate that `caller` belongs to, read from its root along its `mod`
/// declarations: `src/lib.rs`, `src/main.rs` and `src/bin/*` of
/// `$CARGO_MANIFEST_DIR` are tried in turn (each is its own crate: a
/// library's probe is not the binary's), else the caller is its own root
/// (a test, an example, a trybuild case).
pub fn crate_source(caller: Option<&Path>) -> CrateSource {
    let src = std::env::var_os("CARGO_MANIFEST_DIR").map(|d| PathBuf::from(d).join("src"));
    crate_source_in(src.as_deref(), caller)
}

fn crate_source_in(src: Option<&Path>, caller: Option<&Path>) -> CrateSource {
    let Some(caller) = caller.and_then(|c| c.canonicalize().ok()) else {
        return CrateSource::default();
    };
    let mut roots = Vec::new();
    if let Some(src) = src {
        roots.push(src.join("lib.rs"));
        roots.push(src.join("main.rs"));
        if let Ok(bins) = std::fs::read_dir(src.join("bin")) {
            let mut bins: Vec<PathBuf> = bins.filter_map(|e| e.ok().map(|e| e.path())).collect();
            bins.sort();
            roots.extend(
                bins.into_iter()
                    .map(|b| if b.is_dir() { b.join("main.rs") } else { b }),
            );
        }
    }
    for root in roots.iter().filter_map(|r| r.canonicalize().ok()) {
        let tree = Tree::walk(&root);
        if let Some(module) = tree.module_of(&caller) {
            return CrateSource {
                found: tree.found,
                caller: Some(module),
            };
        }
    }
    let tree = Tree::walk(&caller);
    CrateSource {
        found: tree.found,
        caller: Some(Vec::new()),
    }
}

/// One crate's files, each with its module, and its probes.
#[derive(Default)]
struct Tree {
    files: Vec<(PathBuf, Vec<String>)>,
    found: Vec<Found>,
}

impl Tree {
    /// The files `root` declares, transitively.
    fn walk(root: &Path) -> Self {
        let mut tree = Tree::default();
        let dir = root.parent().unwrap_or(Path::new("")).to_owned();
        tree.file(root, Vec::new(), &dir);
        tree
    }

    fn module_of(&self, file: &Path) -> Option<Vec<String>> {
        self.files
            .iter()
            .find(|(f, _)| f == file)
            .map(|(_, m)| m.clone())
    }

    /// Reads `file`, module `module`, whose `mod x;` files are in `dir`.
    fn file(&mut self, file: &Path, module: Vec<String>, dir: &Path) {
        let file = file.canonicalize().unwrap_or_else(|_| file.to_owned());
        if self.files.len() >= MAX_FILES || self.files.iter().any(|(f, _)| *f == file) {
            return;
        }
        let small = std::fs::metadata(&file).is_ok_and(|m| m.len() <= MAX_BYTES);
        let Some(text) = small.then(|| std::fs::read_to_string(&file).ok()).flatten() else {
            return;
        };
        self.files.push((file, module.clone()));
        // Most files declare no module and hold no probe: not parsed.
        if !text.contains("zb_health") && !text.contains("mod ") {
            return;
        }
        if let Ok(parsed) = syn::parse_file(&text) {
            self.items(&parsed.items, &module, dir);
        }
    }

    fn items(&mut self, items: &[syn::Item], module: &[String], dir: &Path) {
        for item in items {
            match item {
                syn::Item::Struct(s) if is_probe(&s.attrs) && !is_cfg(&s.attrs) => {
                    self.found.push(Found {
                        module: module.to_vec(),
                        name: s.ident.to_string(),
                    });
                }
                // A module under `#[cfg]` may not exist: its probes are
                // left to the checks at the manifest.
                syn::Item::Mod(m) if !is_cfg(&m.attrs) => {
                    let name = m.ident.to_string();
                    let mut nested = module.to_vec();
                    nested.push(name.clone());
                    match &m.content {
                        Some((_, inner)) => self.items(inner, &nested, &dir.join(&name)),
                        None => {
                            let (file, child_dir) = module_file(&m.attrs, dir, &name);
                            self.file(&file, nested, &child_dir);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Where `mod name;` declared in `dir` lives, and where its own `mod`s
/// do: `#[path]`, else `name.rs` (children in `name/`), else
/// `name/mod.rs`.
fn module_file(attrs: &[syn::Attribute], dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let path = attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    });
    if let Some(p) = path {
        let file = dir.join(p);
        let child_dir = file.parent().unwrap_or(dir).to_owned();
        return (file, child_dir);
    }
    let flat = dir.join(format!("{name}.rs"));
    if flat.is_file() {
        (flat, dir.join(name))
    } else {
        (dir.join(name).join("mod.rs"), dir.join(name))
    }
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
/// the module of the file that calls `manifest!`.
pub fn reachable(written: &syn::Path, source: &CrateSource) -> bool {
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
            let Some(mut here) = source.caller.clone() else {
                return false;
            };
            here.extend(parent.iter().skip(usize::from(!parent.is_empty())).cloned());
            here
        }
        // `super::`, another crate, a leading `::`: not placed.
        Some(_) => return false,
    };
    written.leading_colon.is_none()
        && source
            .found
            .iter()
            .any(|f| f.name == *name && f.module == module)
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
        let path = |p: &str| syn::parse_str::<syn::Path>(p).unwrap();
        let source = |caller: Option<Vec<String>>| CrateSource {
            found: vec![found(&[], "CacheProbe"), found(&["probes"], "DiskProbe")],
            caller,
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
        write(
            "main.rs",
            "mod a; mod missing; #[cfg(test)] mod t; #[path = \"elsewhere/p.rs\"] mod p;\n\
             zb_health::manifest!(Health = \"health.yaml\");",
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
             mod inner { #[zb_health::zb_health(name = \"y\")] struct Y; struct Z; mod c; }\n\
             #[cfg(test)] #[zb_health(name = \"w\")] struct W;",
        );
        write("a/b/inner/c.rs", "#[zb_health(name = \"c\")] pub struct C;");
        // Not declared by any module: not part of the crate.
        write("a/stray.rs", "#[zb_health(name = \"s\")] pub struct Stray;");

        let source = crate_source_in(Some(&src), Some(&src.join("main.rs")));
        assert_eq!(
            source.found,
            [
                found(&["a", "b"], "X"),
                found(&["a", "b", "inner"], "Y"),
                found(&["a", "b", "inner", "c"], "C"),
                found(&["p"], "PathProbe"),
            ]
        );
        assert_eq!(source.caller, Some(Vec::new()));
        let from_b = crate_source_in(Some(&src), Some(&src.join("a/b.rs")));
        assert_eq!(from_b.caller, Some(vec!["a".to_string(), "b".to_string()]));
        let lib = crate_source_in(Some(&src), Some(&src.join("lib.rs")));
        assert_eq!(lib.found, [found(&[], "LibProbe")]);
        // A file outside every crate root is a root of its own.
        let test = dir.join("test.rs");
        std::fs::write(&test, "#[zb_health(name = \"q\")] struct Q;").unwrap();
        let alone = crate_source_in(Some(&src), Some(&test));
        assert_eq!(alone.found, [found(&[], "Q")]);
        assert_eq!(alone.caller, Some(Vec::new()));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
