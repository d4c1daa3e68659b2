//! Where generated check items come from: the manifest's name and string
//! literal, the runtime's path and the generated type. A leaf, so the
//! manifest's stages and the gRPC mapping share it without importing each
//! other.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote_spanned};
use zb_health_spec::Rule;
use zb_health_spec::Violation;
use zb_health_spec::manifest::Location;

use crate::errors::located;

/// Where generated code comes from and what it refers to: every check item
/// needs all four.
pub struct Site<'a> {
    /// The manifest as the user named it (`health.yaml`, or
    /// `<inline manifest>`), the prefix of every message.
    pub file: &'a str,
    /// The manifest's string literal, where every error points.
    pub span: Span,
    /// The runtime crate's path.
    pub krate: &'a TokenStream,
    /// The generated manifest type.
    pub name: &'a syn::Ident,
}

impl Site<'_> {
    /// A violation at `location` of the manifest, as the generated code's
    /// panic message: the one wording of every compile error.
    pub fn message(&self, rule: Rule, location: Location, text: String, help: &str) -> String {
        let v = Violation {
            rule,
            location,
            message: text,
            help: help.to_owned(),
        };
        located(self.file, &v)
    }

    /// The check item of probe `index`'s `fact` (see [`fact_item`]).
    pub fn probe_fact(
        &self,
        index: usize,
        fact: &str,
        ok: TokenStream,
        message: &str,
    ) -> TokenStream {
        let item = format_ident!("{}__probe{}__{}", self.name, index + 1, fact);
        fact_item(&item, self.span, ok, message)
    }
}

/// One `const` item checking one fact: `ok` must hold, else compilation
/// fails with `message` at `span`. The item's name says which fact broke,
/// since rustc's "evaluation of `…` failed" line quotes it.
pub fn fact_item(item: &syn::Ident, span: Span, ok: TokenStream, message: &str) -> TokenStream {
    quote_spanned! {span=>
        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code)]
        const #item: () = if !(#ok) {
            ::core::panic!("{}", #message)
        };
    }
}
