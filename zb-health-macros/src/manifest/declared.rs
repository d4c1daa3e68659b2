//! What one module's items declare, as the source shows them: every name,
//! in any namespace, and whether something the source does not show could
//! declare more. `nearby` collects it per module, so `manifest!` can tell
//! that a custom `type:` certainly names nothing (`nearby::missing`) and
//! say so itself, in one error without the type system's names.
//!
//! A wrong "nothing there" would be an error in a build that is right, so
//! whatever could add a name counts as "could": a glob import, a macro
//! call (but `manifest!`'s own, whose names all start with its name), an
//! attribute or derive that is not one of the inert ones below. A `#[cfg]`
//! item's name counts as declared: it may exist.

use syn::punctuated::Punctuated;

/// The names `items` declare, and whether something could declare more.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Declared {
    /// Every name declared, in any namespace.
    pub names: Vec<String>,
    /// The names of the `manifest!` calls among the items: every item a
    /// call generates is named with it as a prefix (`Health`,
    /// `HealthDeps`, `Health__types`).
    pub calls: Vec<String>,
    /// Whether an item could declare a name the source does not show.
    pub open: bool,
}

impl Declared {
    /// What `items` declare; `attrs` are the module's inner attributes.
    pub fn of(attrs: &[syn::Attribute], items: &[syn::Item]) -> Self {
        let mut d = Declared {
            open: !attrs.iter().all(|a| inert(&a.meta)),
            ..Declared::default()
        };
        for item in items {
            d.item(item);
        }
        d
    }

    /// Whether `name` is declared, or could be.
    pub fn may_declare(&self, name: &str) -> bool {
        self.open
            || self.names.iter().any(|n| n == name)
            || self.calls.iter().any(|c| name.starts_with(c.as_str()))
    }

    fn item(&mut self, item: &syn::Item) {
        use syn::Item;
        let (attrs, name) = match item {
            Item::Const(i) => (&i.attrs, Some(&i.ident)),
            Item::Enum(i) => (&i.attrs, Some(&i.ident)),
            Item::ExternCrate(i) => (&i.attrs, Some(i.rename.as_ref().map_or(&i.ident, |r| &r.1))),
            Item::Fn(i) => (&i.attrs, Some(&i.sig.ident)),
            Item::ForeignMod(i) => {
                for f in &i.items {
                    match f {
                        syn::ForeignItem::Fn(f) => self.declare(&f.sig.ident),
                        syn::ForeignItem::Static(f) => self.declare(&f.ident),
                        syn::ForeignItem::Type(f) => self.declare(&f.ident),
                        _ => self.open = true,
                    }
                }
                (&i.attrs, None)
            }
            Item::Impl(i) => (&i.attrs, None),
            Item::Macro(i) => {
                let path = &i.mac.path;
                if path.is_ident("macro_rules") {
                    // Defines a macro, in the macro namespace only.
                } else if path.segments.last().is_some_and(|s| s.ident == "manifest") {
                    match call_name(i.mac.tokens.clone()) {
                        Some(n) => self.calls.push(n),
                        None => self.open = true,
                    }
                } else {
                    self.open = true;
                }
                (&i.attrs, None)
            }
            Item::Mod(i) => (&i.attrs, Some(&i.ident)),
            Item::Static(i) => (&i.attrs, Some(&i.ident)),
            Item::Struct(i) => (&i.attrs, Some(&i.ident)),
            Item::Trait(i) => (&i.attrs, Some(&i.ident)),
            Item::TraitAlias(i) => (&i.attrs, Some(&i.ident)),
            Item::Type(i) => (&i.attrs, Some(&i.ident)),
            Item::Union(i) => (&i.attrs, Some(&i.ident)),
            Item::Use(i) => {
                // `use ::zb_health::…` is the same path.
                self.use_tree(&i.tree, &mut Vec::new());
                (&i.attrs, None)
            }
            _ => {
                self.open = true;
                return;
            }
        };
        if let Some(n) = name {
            self.declare(n);
        }
        if !attrs.iter().all(|a| inert(&a.meta)) {
            self.open = true;
        }
    }

    fn declare(&mut self, ident: &syn::Ident) {
        self.names.push(ident.to_string());
    }

    /// The names a `use` brings in; `prefix` is the path before `tree`
    /// (`use a::b::{self}` names `b`).
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Name(n) if n.ident == "self" => match prefix.last() {
                Some(p) => self.names.push(p.clone()),
                None => self.open = true,
            },
            syn::UseTree::Name(n) => self.declare(&n.ident),
            syn::UseTree::Rename(r) => self.declare(&r.rename),
            // This crate's prelude brings only its own names.
            syn::UseTree::Glob(_) if *prefix == ["zb_health", "prelude"] => {
                self.names.extend(PRELUDE.iter().map(|n| n.to_string()));
            }
            syn::UseTree::Glob(_) => self.open = true,
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(t, prefix);
                }
            }
        }
    }
}

/// The names `zb_health::prelude` exports (a test compares them with the
/// runtime's source), so the tour's `use zb_health::prelude::*;` leaves
/// its module decidable.
const PRELUDE: &[&str] = &[
    "ActiveNodeGate",
    "BlockingProbe",
    "FailureStatus",
    "HealthGroup",
    "HealthRegistry",
    "HealthStatus",
    "Heartbeat",
    "Probe",
    "ProbeError",
    "ProbeOutcome",
    "ProbeRegistration",
    "ProbeResult",
    "StartError",
    "RegistryError",
    "RequireActiveNode",
    "StartupGate",
    "Tag",
    "TagSet",
    "ZbHealth",
    "ZbHealthProbe",
    "from_fn",
    "map_zb_health",
    "manifest",
    "zb_health",
];

/// The name a `manifest!` call gives (`pub(crate) Health = "…"` →
/// `Health`): the first identifier after the visibility.
pub fn call_name(tokens: proc_macro2::TokenStream) -> Option<String> {
    use syn::parse::{ParseStream, Parser};
    let name = |input: ParseStream<'_>| {
        input.parse::<syn::Visibility>()?;
        let name = input.parse::<syn::Ident>()?;
        input.parse::<proc_macro2::TokenStream>()?;
        Ok(name)
    };
    name.parse2(tokens).ok().map(|n| n.to_string())
}

/// The names of every `manifest!` call in `tokens`, at any depth (in a
/// function, a `#[cfg]` module, a `macro_rules!` body).
pub fn calls_anywhere(tokens: proc_macro2::TokenStream, out: &mut Vec<String>) {
    use proc_macro2::TokenTree;
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in tokens.iter().enumerate() {
        if let TokenTree::Group(g) = t {
            let before = |k: usize| i.checked_sub(k).map(|j| &tokens[j]);
            let is_call = matches!(
                (before(2), before(1)),
                (Some(TokenTree::Ident(m)), Some(TokenTree::Punct(p))) if m == "manifest" && p.as_char() == '!'
            );
            if is_call {
                // A call whose name cannot be read still counts, so it is
                // never taken for absent.
                out.push(call_name(g.stream()).unwrap_or_default());
            }
            calls_anywhere(g.stream(), out);
        }
    }
}

const BUILT_IN: &[&str] = &[
    "allow",
    "automatically_derived",
    "cfg",
    "cold",
    "deny",
    "deprecated",
    "doc",
    "expect",
    "export_name",
    "forbid",
    "ignore",
    "inline",
    "link",
    "link_name",
    "link_section",
    "macro_export",
    "macro_use",
    "must_use",
    "no_implicit_prelude",
    "no_main",
    "no_mangle",
    "no_std",
    "non_exhaustive",
    "path",
    "recursion_limit",
    "repr",
    "should_panic",
    "target_feature",
    "test",
    "track_caller",
    "unsafe",
    "used",
    "warn",
    "zb_health",
];

const TOOLS: &[&str] = &["rustfmt", "clippy", "diagnostic", "rustdoc"];

const ENTRY_POINTS: &[&str] = &[
    "tokio::main",
    "tokio::test",
    "actix_web::main",
    "actix_web::test",
    "actix_rt::main",
    "actix_rt::test",
];

const STD_DERIVES: &[&str] = &[
    "Clone",
    "Copy",
    "Debug",
    "Default",
    "PartialEq",
    "Eq",
    "PartialOrd",
    "Ord",
    "Hash",
];

/// Whether an attribute (its meta) adds no item: the compiler's built-in
/// ones, tool attributes, the standard derives, `#[zb_health]` (a trait
/// impl and a macro named like the struct), and the async runtimes' entry
/// points, which rewrite their function only.
pub fn inert(meta: &syn::Meta) -> bool {
    let path = meta.path();
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let joined = segments.join("::");
    match segments.as_slice() {
        [one] if one == "derive" => {
            let syn::Meta::List(list) = meta else {
                return false;
            };
            list.parse_args_with(Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
                .is_ok_and(|derives| derives.iter().all(std_derive))
        }
        [one] if one == "cfg_attr" => {
            let syn::Meta::List(list) = meta else {
                return false;
            };
            // The condition, then the attributes it applies.
            list.parse_args_with(Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
                .is_ok_and(|metas| metas.iter().skip(1).all(inert))
        }
        [one] => BUILT_IN.contains(&one.as_str()),
        [first, .., last] => {
            TOOLS.contains(&first.as_str())
                || last == "zb_health"
                || ENTRY_POINTS.contains(&joined.as_str())
        }
        [] => false,
    }
}

/// `Clone`, `std::fmt::Debug`, `::core::hash::Hash`.
fn std_derive(path: &syn::Path) -> bool {
    let last = path.segments.last().map(|s| s.ident.to_string());
    let from_std = path.segments.len() == 1
        || path
            .segments
            .first()
            .is_some_and(|s| s.ident == "std" || s.ident == "core");
    from_std && last.is_some_and(|l| STD_DERIVES.contains(&l.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(text: &str) -> Declared {
        let file = syn::parse_file(text).unwrap();
        Declared::of(&file.attrs, &file.items)
    }

    #[test]
    fn every_kind_of_item_declares_its_name() {
        let d = declared(
            "pub use other::Thing; use a::{b::{self}, C as D}; type Alias = u8; mod inner {}\n\
             #[cfg(feature = \"x\")] struct Maybe; enum E {} union U { a: u8 } trait T {} fn f() {}\n\
             const K: u8 = 0; static S: u8 = 0; extern crate alloc as al; extern \"C\" { type Opaque; }\n\
             #[derive(Clone, Debug, std::hash::Hash)] #[allow(dead_code)] struct P;\n\
             #[tokio::main] async fn main() {} #[zb_health::prelude::zb_health(name = \"p\")] struct Q;\n\
             #[cfg_attr(test, derive(Default))] struct R; macro_rules! m { () => {} }\n\
             zb_health::prelude::manifest!(pub(crate) Health = \"health.yaml\");",
        );
        assert!(!d.open, "{d:?}");
        for name in [
            "Thing",
            "b",
            "D",
            "Alias",
            "inner",
            "Maybe",
            "E",
            "U",
            "T",
            "f",
            "K",
            "S",
            "al",
            "Opaque",
            "P",
            "main",
            "Q",
            "R",
            "HealthDeps",
            "Health__types",
        ] {
            assert!(d.may_declare(name), "{name}");
        }
        for name in ["C", "Other", "CahceProbe", "m"] {
            assert!(!d.may_declare(name), "{name}");
        }
    }

    #[test]
    fn what_could_declare_an_unseen_name_opens_the_module() {
        for text in [
            "use other::*;",
            "make_probe!();",
            "#[some_crate::generate] fn f() {}",
            "#[derive(serde::Serialize)] struct S;",
            "#[derive(Builder)] struct S;",
            "#[cfg_attr(test, some_attr)] struct S;",
            "#![some_crate::inner]",
            "extern \"C\" { m!(); }",
        ] {
            assert!(declared(text).open, "{text}");
        }
    }

    #[test]
    fn the_prelude_names_are_the_runtimes() {
        let lib = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../zb-health-runtime/src/lib.rs");
        let file = syn::parse_file(&std::fs::read_to_string(lib).unwrap()).unwrap();
        let prelude = file
            .items
            .iter()
            .find_map(|i| match i {
                syn::Item::Mod(m) if m.ident == "prelude" => m.content.as_ref(),
                _ => None,
            })
            .expect("the runtime has a prelude");
        let mut names = declared(
            &prelude
                .1
                .iter()
                .map(|i| quote::quote!(#i).to_string())
                .collect::<String>(),
        )
        .names;
        names.sort();
        let mut expected: Vec<String> = PRELUDE.iter().map(|n| n.to_string()).collect();
        expected.sort();
        assert_eq!(names, expected);
        let d = declared("use zb_health::prelude::*; use ::zb_health::prelude::*;");
        assert!(!d.open && d.may_declare("Probe") && !d.may_declare("CahceProbe"));
        assert!(declared("use zbh::prelude::*;").open);
    }

    #[test]
    fn manifest_calls_are_found_at_any_depth() {
        let mut out = Vec::new();
        calls_anywhere(
            "zb_health::prelude::manifest!(pub Health = \"a\"); fn f() { manifest!(Other, yaml = \"\"); }\n\
             macro_rules! m { () => { manifest!(pub(crate) Third = \"b\"); } }"
                .parse()
                .unwrap(),
            &mut out,
        );
        assert_eq!(out, ["Health", "Other", "Third"]);
    }
}
