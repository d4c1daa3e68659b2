//! Reading the caller's crate: its roots as Cargo finds them, then each
//! file along its `mod` declarations, parsed with syn, into the probes
//! and modules a [`CrateSource`] holds.

use std::path::{Path, PathBuf};

use super::{CrateSource, Declared, Found, Module, declared};

/// Files past this size or count are not read: a hint is not worth a slow
/// build.
const MAX_FILES: usize = 512;
const MAX_BYTES: u64 = 1 << 20;

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
pub(super) fn crate_source_in(
    dir: Option<&Path>,
    krate: Option<&str>,
    caller: Option<&Path>,
) -> CrateSource {
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
        let mut source = CrateSource::walk(root);
        // A file's own module is the first read from it.
        if let Some(m) = source.modules.iter().find(|m| m.file == caller) {
            source.caller = Some(m.path.clone());
            source.rooted = Some(caller);
            return source;
        }
    }
    let mut alone = CrateSource::walk(&caller);
    alone.caller = Some(Vec::new());
    alone
}

/// The crate roots of the package in `dir`, as Cargo finds them, with
/// the crate's name where the file gives it.
pub(super) fn roots(dir: &Path) -> Vec<(PathBuf, Option<String>)> {
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
pub(super) fn targets_in(dir: &Path) -> Vec<(PathBuf, Option<String>)> {
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
pub(super) fn declared_paths(toml: &str) -> Vec<String> {
    toml.match_indices("path")
        .filter_map(|(at, _)| {
            let value = toml[at + 4..].trim_start().strip_prefix('=')?.trim_start();
            let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'')?;
            let value = &value[1..];
            let path = &value[..value.find(quote)?];
            path.ends_with(".rs").then(|| path.to_owned())
        })
        .collect()
}

impl CrateSource {
    /// The files `root` declares, transitively, with no caller placed.
    fn walk(root: &Path) -> Self {
        let mut source = CrateSource::default();
        let dir = root.parent().unwrap_or(Path::new("")).to_owned();
        source.file(root, Vec::new(), true, &dir);
        source
    }

    /// Reads `file`, module `module`, whose `mod x;` files are in `dir`.
    fn file(&mut self, file: &Path, module: Vec<String>, public: bool, dir: &Path) {
        let file = file.canonicalize().unwrap_or_else(|_| file.to_owned());
        // Every file read has its module, the first of those in it.
        if self.files >= MAX_FILES || self.modules.iter().any(|m| m.file == file) {
            return;
        }
        let small = std::fs::metadata(&file).is_ok_and(|m| m.len() <= MAX_BYTES);
        let Some(text) = small.then(|| std::fs::read_to_string(&file).ok()).flatten() else {
            return;
        };
        self.files += 1;
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
        let worth = text.contains("zb_health") || text.contains("mod ");
        let Some(parsed) = worth.then(|| syn::parse_file(&text).ok()).flatten() else {
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
            // An async fn probe's type is named like the fn.
            let probe = match item {
                syn::Item::Struct(s) => Some((&s.attrs, &s.ident, &s.vis)),
                syn::Item::Fn(f) => Some((&f.attrs, &f.sig.ident, &f.vis)),
                _ => None,
            };
            if let Some((attrs, ident, vis)) = probe
                && is_probe(attrs)
                && !is_cfg(attrs)
            {
                self.found.push(Found {
                    module: module.to_vec(),
                    name: ident.to_string(),
                    public: is_public(vis),
                });
            }
            // A module under `#[cfg]` may not exist: its probes are left
            // to the checks at the manifest.
            let syn::Item::Mod(m) = item else { continue };
            if is_cfg(&m.attrs) {
                continue;
            }
            let name = m.ident.to_string();
            let mut nested = module.to_vec();
            nested.push(name.clone());
            let public = is_public(&m.vis);
            match &m.content {
                Some((_, inner)) => {
                    let mut declared = Declared::of(&m.attrs, inner);
                    // `#[path]` on an inline module moves its children's
                    // files: not followed for `missing`.
                    declared.open |= m
                        .attrs
                        .iter()
                        .any(|a| !declared::inert(&a.meta) || a.path().is_ident("path"));
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
                    // A `cfg_attr` may move the file: its names decide
                    // nothing.
                    if !m.attrs.iter().all(|a| declared::inert(&a.meta))
                        && let Some(read) = self.modules.iter_mut().find(|r| r.path == nested)
                    {
                        read.declared.open = true;
                    }
                }
            }
        }
    }
}

/// Where `mod name;` declared in `dir` lives, and where its own `mod`s
/// do: `#[path]`, else `name.rs` (children in `name/`), else
/// `name/mod.rs`.
pub(super) fn module_file(attrs: &[syn::Attribute], dir: &Path, name: &str) -> (PathBuf, PathBuf) {
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
