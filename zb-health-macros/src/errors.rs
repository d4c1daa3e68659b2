//! Turning spec violations into compile errors.

use proc_macro2::{Span, TokenStream};
use zb_health_spec::{Violation, Violations};

/// Collects every error of one expansion, so the user sees all of them at
/// once (serde_derive's `Ctxt`).
#[derive(Default)]
pub struct Errors {
    all: Option<syn::Error>,
}

impl Errors {
    /// Adds an error.
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.all {
            Some(all) => all.combine(error),
            None => self.all = Some(error),
        }
    }

    /// Adds an error that breaks no spec rule (a misplaced attribute), in
    /// the same layout as a violation: what is wrong, then the fix.
    pub fn help(&mut self, span: Span, message: &str, help: &str) {
        self.push(syn::Error::new(
            span,
            format!("{message}\n  = help: {help}"),
        ));
    }

    /// Adds a spec violation located at a token.
    pub fn violation(&mut self, v: Violation<Span>) {
        self.push(syn::Error::new(v.location, render(&v)));
    }

    /// Adds every violation a spec check found.
    pub fn violations(&mut self, sink: Violations<Span>) {
        if let Err(found) = sink.into_result() {
            for v in found {
                self.violation(v);
            }
        }
    }

    /// The errors as `compile_error!` invocations, or nothing.
    pub fn into_tokens(self) -> TokenStream {
        self.all.map(|e| e.to_compile_error()).unwrap_or_default()
    }
}

/// The one wording of a violation: what is wrong, the rule it breaks with
/// its spec ID, and the fix.
pub fn render<L>(v: &Violation<L>) -> String {
    format!("{}\n  = rule {}\n  = help: {}", v.message, v.rule, v.help)
}
