//! The one error context of an expansion, and the one wording of a
//! violation.

use std::cell::RefCell;

use proc_macro2::{Span, TokenStream};
use zb_health_spec::manifest::Location;
use zb_health_spec::{Rule, Violations};

/// Collects every error of one expansion, from every stage, so the user
/// sees all of them at once (serde_derive's `Ctxt`). Stages push through a
/// shared reference, so closures and helpers can report without threading
/// `&mut`.
///
/// It must end in [`check`](Self::check): dropping it unchecked is a bug
/// in this crate (an expansion path that forgot to report), never
/// something user input can cause, and panics as serde_derive's does, so
/// the fuzz tests in `tests.rs` find such a path.
pub struct Ctxt {
    /// `None` once checked.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    /// An empty context.
    pub fn new() -> Self {
        Self {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Adds an error.
    pub fn push(&self, error: syn::Error) {
        // `check` takes the context by value, so it is never `None` here.
        if let Some(errors) = self.errors.borrow_mut().as_mut() {
            errors.push(error);
        }
    }

    /// Adds an error that breaks no spec rule (a misplaced attribute), in
    /// the same layout as a violation: what is wrong, then the fix.
    pub fn help(&self, span: Span, message: &str, help: &str) {
        self.push(syn::Error::new(
            span,
            format!("{message}\n  = help: {help}"),
        ));
    }

    /// Adds every violation a spec check found, each at its token.
    pub fn violations(&self, sink: Violations<Span>) {
        for v in sink.into_result().err().unwrap_or_default() {
            let message = render(v.rule, &v.message, &v.help, None);
            self.push(syn::Error::new(v.location, message));
        }
    }

    /// Whether any stage reported an error so far.
    pub fn has_errors(&self) -> bool {
        self.errors.borrow().as_ref().is_some_and(|e| !e.is_empty())
    }

    /// Ends the context: every error as a `compile_error!` invocation, or
    /// nothing.
    pub fn check(self) -> TokenStream {
        let errors = self.errors.borrow_mut().take().unwrap_or_default();
        errors.iter().map(syn::Error::to_compile_error).collect()
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // Not while unwinding from another panic: that would abort and
        // hide the first one.
        if self.errors.get_mut().is_some() && !std::thread::panicking() {
            panic!("zb-health-macros bug: an error context was dropped without `check()`");
        }
    }
}

/// The one wording of a violation: what is wrong, the rule it breaks with
/// its spec ID, a note of where else the fact comes from (the manifest line
/// behind an attribute's error), and the fix.
pub fn render(rule: Rule, message: &str, help: &str, note: Option<&str>) -> String {
    let note = note.map(|n| format!("\n  = note: {n}")).unwrap_or_default();
    format!("{message}\n  = rule {rule}{note}\n  = help: {help}")
}

/// A violation of the manifest `file` with its YAML position in front,
/// `health.yaml:9:5: ...`: every manifest message, whether the macro or
/// the generated code reports it.
pub fn located(file: &str, location: Location, rule: Rule, message: &str, help: &str) -> String {
    format!("{file}:{location}: {}", render(rule, message, help, None))
}
