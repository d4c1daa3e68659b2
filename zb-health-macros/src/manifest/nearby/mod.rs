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

use std::path::PathBuf;

use zb_health_spec::suggest;

use super::declared::{self, Declared};

#[cfg(test)]
mod tests;
mod walk;

pub use walk::crate_source;

/// A `#[zb_health]` struct or async fn found in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its module, from the crate root: `["probes"]` for `crate::probes`.
    pub module: Vec<String>,
    /// The struct's name, or the fn's (its probe type's).
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
    /// How many files the scan read, up to `walk::MAX_FILES`.
    files: usize,
}

/// The hint for a `type:` written as `written` that names no type: the
/// closest probe's path, in the form the user wrote where they can be
/// compared, or nothing.
pub fn hint(written: &syn::Path, found: &[Found]) -> Option<String> {
    let idents: Vec<String> = written
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let (last, parent) = idents.split_last()?;
    // `crate::a::X` names module `a`; `X` or `self::X` the caller's, which
    // the scan cannot place, so any module is as good.
    let module = place(written, None).map(|(module, _)| module);
    let written_text = idents.join("::");
    // The same name in another module: the path was wrong, not the name.
    if let Some(same) = found
        .iter()
        .find(|f| f.name == *last && module.as_ref() != Some(&f.module))
    {
        return Some(same.path()).filter(|p| *p != written_text);
    }
    let near = suggest::did_you_mean(last, found.iter().map(|f| f.name.as_str()))?;
    let f = found.iter().find(|f| f.name == near)?;
    let path = if module.as_ref().is_none_or(|m| *m == f.module) {
        // Written as the user wrote it, with the name mended.
        let mut mended = parent.to_vec();
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
    place(written, source.caller.as_deref()).is_some_and(|(module, name)| {
        source
            .found
            .iter()
            .any(|f| f.name == name && f.module == module)
    })
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
    let Some((module, name)) = place(written, Some(&here)) else {
        return false;
    };
    // Generic arguments on a module: not a path to decide on.
    if written
        .segments
        .iter()
        .rev()
        .skip(1)
        .any(|s| !s.arguments.is_none())
    {
        return false;
    }
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
    let (module, name) = place(&path, Some(&here))?;
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
/// `self`), and for a path from `here` when it is not known.
fn place(path: &syn::Path, here: Option<&[String]>) -> Option<(Vec<String>, String)> {
    let idents: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let (name, parent) = idents
        .split_last()
        .filter(|_| path.leading_colon.is_none())?;
    let module = match parent.first().map(String::as_str) {
        None => here?.to_vec(),
        Some("crate") => parent[1..].to_vec(),
        Some("self") => here?.iter().chain(&parent[1..]).cloned().collect(),
        // `super::`, another crate: not placed.
        Some(_) => return None,
    };
    Some((module, name.clone()))
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
