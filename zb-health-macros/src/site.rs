//! Where generated check items come from: the manifest's name and string
//! literal, the runtime's path and the generated type. A leaf, so the
//! manifest's stages and the gRPC mapping share it without importing each
//! other.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use zb_health_spec::Rule;
use zb_health_spec::manifest::{Located, Location, ProbeDecl, ProbeKind};

use crate::errors::located;

/// Where generated code comes from and what it refers to: the manifest,
/// the runtime's path and the names of the generated items.
pub struct Site<'a> {
    /// The manifest as the user named it (`health.yaml`, or
    /// `<inline manifest>`), the prefix of every message.
    pub file: &'a str,
    /// The manifest's string literal, where every error points.
    pub span: Span,
    /// The runtime crate's path.
    pub krate: &'a TokenStream,
    /// The generated items' visibility.
    pub vis: &'a syn::Visibility,
    /// The generated manifest type.
    pub name: &'a syn::Ident,
    /// The file that calls `manifest!`, if rustc says (`Span::local_file`).
    pub caller: Option<&'a std::path::Path>,
    /// Its dependencies struct: `NAMEDeps`.
    pub deps: syn::Ident,
    /// What `install` returns: `NAMEInstalled`.
    pub installed: syn::Ident,
    /// The startup gates' handles: `NAMEStartup`.
    pub startup: syn::Ident,
    /// The watchdogs' heartbeats: `NAMEWatchdogs`.
    pub watchdogs: syn::Ident,
}

impl Site<'_> {
    /// A violation at `location` of the manifest, worded as every
    /// manifest compile error is ([`located`]).
    pub fn message(&self, rule: Rule, location: Location, text: String, help: &str) -> String {
        located(self.file, location, rule, &text, help)
    }

    /// One item checking one fact: `ok` must hold, else compilation fails
    /// with `message` at the manifest's string, as ONE `E0277` whose text
    /// is ours; `subject` and `fact` name its trait.
    ///
    /// The fact becomes a type, `Fact<{ ok }>`, that must implement a trait
    /// only `Fact<true>` implements; the trait's `on_unimplemented` carries
    /// the message. A `panic!` in a `const` would say "evaluation panicked"
    /// and quote the item's generated name; an unmet bound says only what
    /// the trait says, and rustc's one label names the trait, which is named
    /// after what the fact is about and the fact (`CacheProbe`,
    /// `fits_orchestrator` → `CacheProbeFitsOrchestrator`): unique, so rustc
    /// prints it without a path. Each trait lives in its own block, so a
    /// repeated name never clashes.
    pub fn fact(&self, subject: &str, fact: &str, ok: TokenStream, message: &str) -> TokenStream {
        let (krate, span) = (self.krate, self.span);
        let name = format_ident!("{}{}", camel_case(subject), camel_case(fact));
        // `on_unimplemented` formats its strings: `{Self}` would be replaced.
        let message = message.replace('{', "{{").replace('}', "}}");
        quote_spanned! {span=>
            const _: () = {
                // Named here, so every token of the check is at `span` and
                // rustc's label reads `Fact<false>`.
                use #krate::meta::Fact;
                #[diagnostic::on_unimplemented(message = #message)]
                trait #name {
                    const HOLDS: () = ();
                }
                // Never offered as "implemented for `Fact<true>`".
                #[diagnostic::do_not_recommend]
                impl #name for Fact<true> {}
                <Fact<{ #ok }> as #name>::HOLDS
            };
        }
    }

    /// The check that `probe`, named by `referrer` (``health group `g`
    /// names``), is a probe of the manifest, against the attributes'
    /// `__PROBE_NAMES`: the reader checked the names unless a custom probe
    /// takes its name from its attribute.
    pub fn probe_known(
        &self,
        rule: Rule,
        referrer: String,
        probe: &Located<String>,
        (subject, fact): (&str, &str),
    ) -> TokenStream {
        let message = self.message(
            rule,
            probe.location,
            format!(
                "{referrer} probe `{}`, which is not a probe of this manifest",
                probe.value
            ),
            "name a probe of the manifest (a custom probe's name is on its #[zb_health] attribute)",
        );
        let (krate, name, value) = (self.krate, self.name, &probe.value);
        let ok = quote!(#krate::spec::grpc::names_contain(&#name::__PROBE_NAMES, #value));
        self.fact(subject, fact, ok, &message)
    }
}

/// Whether `p` takes its name from its `#[zb_health]` attribute, which the
/// macro cannot read (a custom entry without `name:`): then the names that
/// refer to probes are checked by generated code, against `__PROBE_NAMES`.
pub fn named_by_attribute(p: &ProbeDecl) -> bool {
    matches!(p.kind, ProbeKind::Custom { .. }) && p.name.is_none()
}

/// `fits_orchestrator` → `FitsOrchestrator`, `orders.v1` → `OrdersV1`:
/// words of an identifier, whatever the separator, and a leading digit
/// kept out of first place.
fn camel_case(words: &str) -> String {
    let camel: String = words
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|first| first.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect();
    if camel.starts_with(|c: char| c.is_ascii_digit()) {
        format!("N{camel}")
    } else {
        camel
    }
}
