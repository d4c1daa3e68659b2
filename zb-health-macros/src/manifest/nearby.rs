//! The `#[zb_health]` probes written in the crate's source, for the "did
//! you mean" of a custom `type:` that names no type, and what each module
//! declares, to tell when such a type certainly does not exist.
//!
//! A macro cannot ask the compiler which types are in scope, and the check
//! that the type exists runs after expansion. So the macro reads the
//! source itself: the crate of the file that calls `manifest!`, from its
//! root along its `mod` declarations, parsed with syn, each `#[zb_health]`
//! struct with the module its file and inline `mod`s give it, and each
//! module's names (`declared`).
//!
//! The hint is only words: what the scan misses (a probe another macro
//! writes, one in another crate) costs the hint, never a build. When the
//! scan proves the type [`missing`], `manifest!` reports it itself, with
//! the probe the hint names standing in ([`usable`]), so a struct literal
//! of the deps adds no error to it; any doubt leaves the check to the
//! compiler, as one error in our words with rustc's label naming the
//! check. The same scan tells `manifest!` whether a probe's attribute
//! callback is [`reachable`] (see `crate::limits`); a wrong "yes" would be
//! an unresolved macro, so only a probe found at the very path written
//! counts, and nothing under `#[cfg]`, which may not exist. Any other
//! probe's limits are checked at the manifest.

use std::path::{Path, PathBuf};

use zb_health_spec::suggest;

use super::declared::{self, Declared};

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
    /// Whether it is `pub` or `pub(crate)`, so any module can name it.
    pub public: bool,
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

/// A module the scan read, with what its items declare.
#[derive(Debug, Clone)]
struct Module {
    /// From the crate root: `["probes"]`.
    path: Vec<String>,
    /// The file it is written in.
    file: PathBuf,
    /// Whether its `mod` item is `pub` or `pub(crate)` (the root is).
    public: bool,
    /// Its names; open if its file was not parsed.
    declared: Declared,
}

/// What the scan found: the probes of the caller's crate, and the module
/// of the file that calls `manifest!`.
#[derive(Debug, Default)]
pub struct CrateSource {
    /// Every `#[zb_health]` struct of the crate, by module.
    pub found: Vec<Found>,
    /// The caller's module, if the scan placed it.
    caller: Option<Vec<String>>,
    /// The file that calls `manifest!`, if the scan read it from a root
    /// Cargo knows (for [`missing`]; a guessed root decides nothing).
    rooted: Option<PathBuf>,
    /// Every module read, for [`missing`].
    modules: Vec<Module>,
    /// The names of every `manifest!` call in each file, at any depth.
    calls: Vec<(PathBuf, Vec<String>)>,
}

/// The crate that `caller` belongs to, read from its root along its `mod`
/// declarations: `src/lib.rs`, `src/main.rs`, `src/bin/*`, the `.rs`
/// paths `Cargo.toml` declares and the examples, tests and benches of
/// `$CARGO_MANIFEST_DIR` are tried in turn (each is its own crate: a
/// library's probe is not the binary's), else the caller is its own root
/// (a guess: an included file, a build without Cargo).
pub fn crate_source(caller: Option<&Path>) -> CrateSource {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let krate = std::env::var("CARGO_CRATE_NAME").ok();
    crate_source_in(dir.as_deref(), krate.as_deref(), caller)
}

/// [`crate_source`] of the package in `dir`, compiling the crate named
/// `krate` (a root of another name is another crate: `tests/common.rs`
/// is its own test and a module of the others).
fn crate_source_in(dir: Option<&Path>, krate: Option<&str>, caller: Option<&Path>) -> CrateSource {
    let Some(caller) = caller.and_then(|c| c.canonicalize().ok()) else {
        return CrateSource::default();
    };
    let roots: Vec<PathBuf> = dir
        .map(roots)
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, name)| match (name, krate) {
            (Some(name), Some(krate)) => name.replace('-', "_") == krate,
            _ => true,
        })
        .filter_map(|(r, _)| r.canonicalize().ok())
        .collect();
    // A root itself first: trybuild's cases are a hundred `[[bin]]`s.
    let ordered = roots
        .iter()
        .filter(|r| **r == caller)
        .chain(roots.iter().filter(|r| **r != caller));
    for root in ordered {
        let tree = Tree::walk(root);
        if let Some(module) = tree.module_of(&caller) {
            return tree.source(module, Some(caller));
        }
    }
    Tree::walk(&caller).source(Vec::new(), None)
}

/// The crate roots of the package in `dir`, as Cargo finds them, with
/// the crate's name where the file gives it.
fn roots(dir: &Path) -> Vec<(PathBuf, Option<String>)> {
    let src = dir.join("src");
    let mut roots = vec![(src.join("lib.rs"), None), (src.join("main.rs"), None)];
    roots.extend(targets_in(&src.join("bin")));
    if let Ok(toml) = std::fs::read_to_string(dir.join("Cargo.toml")) {
        roots.extend(
            declared_paths(&toml)
                .into_iter()
                .map(|p| (dir.join(p), None)),
        );
    }
    for auto in ["examples", "tests", "benches"] {
        roots.extend(targets_in(&dir.join(auto)));
    }
    roots
}

/// `dir/*.rs` and `dir/*/main.rs`, sorted, each with its target's name.
fn targets_in(dir: &Path) -> Vec<(PathBuf, Option<String>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(PathBuf, Option<String>)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let name = p.file_stem()?.to_string_lossy().into_owned();
            let file = if p.is_dir() { p.join("main.rs") } else { p };
            file.extension()
                .is_some_and(|e| e == "rs")
                .then_some((file, Some(name)))
        })
        .collect();
    found.sort();
    found
}

/// The values of `path = "….rs"` in a `Cargo.toml`: the targets it
/// declares (a dependency's `path` is a directory).
fn declared_paths(toml: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = toml;
    while let Some(at) = rest.find("path") {
        rest = &rest[at + 4..];
        let value = rest.trim_start().strip_prefix('=').map(str::trim_start);
        let Some(value) = value else { continue };
        let Some(quote) = value.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        let value = &value[1..];
        if let Some(end) = value.find(quote) {
            let path = &value[..end];
            if path.ends_with(".rs") {
                out.push(path.to_owned());
            }
        }
    }
    out
}

/// One file of a crate, with its module.
#[derive(Debug)]
struct File {
    path: PathBuf,
    module: Vec<String>,
}

/// One crate's files, each with its module, and its probes.
#[derive(Default)]
struct Tree {
    files: Vec<File>,
    found: Vec<Found>,
    modules: Vec<Module>,
    calls: Vec<(PathBuf, Vec<String>)>,
}

impl Tree {
    /// The files `root` declares, transitively.
    fn walk(root: &Path) -> Self {
        let mut tree = Tree::default();
        let dir = root.parent().unwrap_or(Path::new("")).to_owned();
        tree.file(root, Vec::new(), true, &dir);
        tree
    }

    fn module_of(&self, file: &Path) -> Option<Vec<String>> {
        self.files
            .iter()
            .find(|f| f.path == file)
            .map(|f| f.module.clone())
    }

    fn source(self, caller: Vec<String>, rooted: Option<PathBuf>) -> CrateSource {
        CrateSource {
            found: self.found,
            caller: Some(caller),
            rooted,
            modules: self.modules,
            calls: self.calls,
        }
    }

    /// Reads `file`, module `module`, whose `mod x;` files are in `dir`.
    fn file(&mut self, file: &Path, module: Vec<String>, public: bool, dir: &Path) {
        let file = file.canonicalize().unwrap_or_else(|_| file.to_owned());
        if self.files.len() >= MAX_FILES || self.files.iter().any(|f| f.path == file) {
            return;
        }
        let small = std::fs::metadata(&file).is_ok_and(|m| m.len() <= MAX_BYTES);
        let Some(text) = small.then(|| std::fs::read_to_string(&file).ok()).flatten() else {
            return;
        };
        self.files.push(File {
            path: file.clone(),
            module: module.clone(),
        });
        let mut module = Module {
            path: module,
            file: file.clone(),
            public,
            declared: Declared {
                open: true,
                ..Declared::default()
            },
        };
        // Most files declare no module and hold no probe: not parsed (and
        // so decide nothing).
        if !text.contains("zb_health") && !text.contains("mod ") {
            self.modules.push(module);
            return;
        }
        let Ok(parsed) = syn::parse_file(&text) else {
            self.modules.push(module);
            return;
        };
        if text.contains("manifest") {
            let mut calls = Vec::new();
            if let Ok(tokens) = text.parse() {
                declared::calls_anywhere(tokens, &mut calls);
            }
            self.calls.push((file.clone(), calls));
        }
        module.declared = Declared::of(&parsed.attrs, &parsed.items);
        let path = module.path.clone();
        self.modules.push(module);
        self.items(&parsed.items, &path, &file, dir);
    }

    fn items(&mut self, items: &[syn::Item], module: &[String], file: &Path, dir: &Path) {
        for item in items {
            match item {
                syn::Item::Struct(s) if is_probe(&s.attrs) && !is_cfg(&s.attrs) => {
                    self.found.push(Found {
                        module: module.to_vec(),
                        name: s.ident.to_string(),
                        public: is_public(&s.vis),
                    });
                }
                // A module under `#[cfg]` may not exist: its probes are
                // left to the checks at the manifest.
                syn::Item::Mod(m) if !is_cfg(&m.attrs) => {
                    let name = m.ident.to_string();
                    let mut nested = module.to_vec();
                    nested.push(name.clone());
                    let public = is_public(&m.vis);
                    match &m.content {
                        Some((_, inner)) => {
                            let mut declared = Declared::of(&m.attrs, inner);
                            // `#[path]` on an inline module moves its
                            // children's files: not followed for `missing`.
                            declared.open |= m
                                .attrs
                                .iter()
                                .any(|a| !declared::inert(a) || a.path().is_ident("path"));
                            self.modules.push(Module {
                                path: nested.clone(),
                                file: file.to_owned(),
                                public,
                                declared,
                            });
                            self.items(inner, &nested, file, &dir.join(&name));
                        }
                        None => {
                            let (child, child_dir) = module_file(&m.attrs, dir, &name);
                            self.file(&child, nested.clone(), public, &child_dir);
                            // A `cfg_attr` may move the file: its names
                            // decide nothing.
                            if !m.attrs.iter().all(declared::inert)
                                && let Some(read) =
                                    self.modules.iter_mut().find(|r| r.path == nested)
                            {
                                read.declared.open = true;
                            }
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

/// Whether `written`, the `type:` of the `manifest!` call named `call`,
/// certainly names no type, so `manifest!` can say so itself: the call is
/// the only one of that name in its file, at a module's top level, in a
/// crate read from a root Cargo knows; the path is `crate::…`, `self::…`
/// or one name (not the prelude's); the module it names was read whole,
/// and nothing there declares the name or could (see `declared`). Any
/// doubt is a `false`, which leaves the check to the compiler.
pub fn missing(written: &syn::Path, call: &str, source: &CrateSource) -> bool {
    let Some(here) = call_module(call, source) else {
        return false;
    };
    let Some((module, name)) = place(written, &here) else {
        return false;
    };
    if written.segments.len() == 1 && STD_PRELUDE.contains(&name.as_str()) {
        return false;
    }
    source
        .modules
        .iter()
        .find(|m| m.path == module)
        .is_some_and(|m| !m.declared.may_declare(&name))
}

/// The probe `hint` (a path [`hint`] gave) names, as a path from the
/// crate root, if the module of the call `call` can name it.
pub fn usable(hint: &str, call: &str, source: &CrateSource) -> Option<String> {
    let here = call_module(call, source)?;
    let path: syn::Path = syn::parse_str(hint).ok()?;
    let (module, name) = place(&path, &here)?;
    let f = source
        .found
        .iter()
        .find(|f| f.module == module && f.name == name)?;
    // Private items are visible in their own module and below it.
    let visible = |public: bool, parent: &[String]| public || here.starts_with(parent);
    let modules_visible = (1..=f.module.len()).all(|depth| {
        source
            .modules
            .iter()
            .find(|m| m.path == f.module[..depth])
            .is_some_and(|m| visible(m.public, &f.module[..depth - 1]))
    });
    (modules_visible && visible(f.public, &f.module)).then(|| f.path())
}

/// The module of the one `manifest!` call named `call` in the caller's
/// file, if the crate's root is known and the call is at a module's top
/// level.
fn call_module(call: &str, source: &CrateSource) -> Option<Vec<String>> {
    let file = source.rooted.as_ref()?;
    let (_, calls) = source.calls.iter().find(|(f, _)| f == file)?;
    if calls.iter().filter(|c| *c == call).count() != 1 {
        return None;
    }
    let mut at = source
        .modules
        .iter()
        .filter(|m| m.file == *file && m.declared.calls.iter().any(|c| c == call));
    match (at.next(), at.next()) {
        (Some(m), None) => Some(m.path.clone()),
        _ => None,
    }
}

/// The module a path names an item of, and the item's name, from the
/// module `here`: `crate::a::X`, `self::a::X` and `X`; `None` for any
/// other path (another crate, `super`, a module of `here` named without
/// `self`, generic arguments on a module).
fn place(path: &syn::Path, here: &[String]) -> Option<(Vec<String>, String)> {
    if path.leading_colon.is_some() {
        return None;
    }
    let (last, parent) = path
        .segments
        .iter()
        .collect::<Vec<_>>()
        .split_last()
        .map(|(l, p)| (*l, p.to_vec()))?;
    if parent.iter().any(|s| !s.arguments.is_none()) {
        return None;
    }
    let parent: Vec<String> = parent.iter().map(|s| s.ident.to_string()).collect();
    let module = match parent.first().map(String::as_str) {
        None => here.to_vec(),
        Some("crate") => parent[1..].to_vec(),
        Some("self") => here.iter().chain(&parent[1..]).cloned().collect(),
        Some(_) => return None,
    };
    Some((module, last.ident.to_string()))
}

/// The type and trait names of the standard preludes and the primitive
/// types: a lone name among them exists without being declared.
const STD_PRELUDE: &[&str] = &[
    "AsMut",
    "AsRef",
    "Box",
    "Clone",
    "Copy",
    "Default",
    "DoubleEndedIterator",
    "Drop",
    "Eq",
    "ExactSizeIterator",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Future",
    "Into",
    "IntoFuture",
    "IntoIterator",
    "Iterator",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Send",
    "Sized",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "Vec",
    "AsyncFn",
    "AsyncFnMut",
    "AsyncFnOnce",
    "bool",
    "char",
    "f16",
    "f32",
    "f64",
    "f128",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "str",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "Self",
];

/// Whether an item is `pub` or `pub(crate)`.
fn is_public(vis: &syn::Visibility) -> bool {
    match vis {
        syn::Visibility::Public(_) => true,
        syn::Visibility::Restricted(r) => r.path.is_ident("crate"),
        syn::Visibility::Inherited => false,
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
        let main =
            format!("{PROBES}zb_health::manifest!(pub Health = \"health.yaml\");\nfn main() {{}}");
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
        let call = "zb_health::manifest!(pub Health = \"health.yaml\");\n";
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
        let call = "zb_health::manifest!(Health = \"health.yaml\");\n";
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
            format!("{PROBES}mod probes;\nzb_health::manifest!(Health = \"health.yaml\");\n");
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
}
