//! The manifest's `lifecycle` section in generated code: typed handles for
//! the declared startup gates and watchdogs, `NAMEInstalled` (what
//! `install` returns: the server and those handles), the checked drain,
//! and the management port.

use proc_macro2::TokenStream;
use quote::quote;
use zb_health_spec::manifest::{Located, Manifest};
use zb_health_spec::{NameOf, Rule};

use crate::builtin;
use crate::errors::Ctxt;
use crate::site::Site;
use crate::tokens::{DurationTokens, OptionTokens, optional_duration};

/// What `install` needs from the lifecycle section.
pub struct Generated {
    /// The handle structs, at module level.
    pub items: TokenStream,
    /// Constants in the manifest type's `impl`.
    pub consts: TokenStream,
    /// The field of each watchdog's heartbeat, in manifest order.
    pub watchdog_fields: Vec<syn::Ident>,
    /// The field of each startup gate, in manifest order.
    pub gate_fields: Vec<syn::Ident>,
}

/// The lifecycle items; a clash of two gates' or two watchdogs' fields is
/// reported into `cx`, and the items are still generated, so a clash
/// among the gates does not hide one among the watchdogs.
pub fn generate(cx: &Ctxt, m: &Manifest, site: &Site<'_>) -> Generated {
    let Site {
        file,
        krate,
        vis,
        name: ty,
        ref installed,
        ref startup,
        ref watchdogs,
        ..
    } = *site;
    let lifecycle = &m.lifecycle;
    let gates = lifecycle.startup_gates.iter();
    let gate_fields = fields(cx, site, NameOf::StartupGate, gates);
    let watchdog_names = lifecycle.watchdogs.iter().map(|w| &w.name);
    let dog_fields = fields(cx, site, NameOf::Watchdog, watchdog_names);

    let gate_decls = gate_fields.iter().zip(&lifecycle.startup_gates).map(|(f, g)| {
        let doc = format!(
            "The startup work `{}` (manifest line {}). Call `ready()` when it is done, or `failed(error)`; until every gate is ready, `ready` and `active` answer 503.",
            g.value, g.location.line
        );
        quote!(#[doc = #doc] pub #f: #krate::lifecycle::StartupGate,)
    });
    let dog_decls = dog_fields.iter().zip(&lifecycle.watchdogs).map(|(f, w)| {
        let doc = format!(
            "The heartbeat of loop `{}`: `beat()` at least every {} ms, or `live` answers 503 naming it.",
            w.name.value,
            w.deadline.value.as_millis()
        );
        quote!(#[doc = #doc] pub #f: #krate::lifecycle::Heartbeat,)
    });
    let startup_doc = format!(
        "The startup gates `{file}` declares (`lifecycle.startup_gates`), one field each. Dropping one unsignalled counts as a failed start."
    );
    let watchdogs_doc = format!(
        "The heartbeats of the loops `{file}` declares (`lifecycle.watchdogs`), one field each. Dropping one removes its watchdog."
    );
    let installed_doc = format!(
        "What [`{ty}::install`] returns: the server of everything `{file}` declares, and the lifecycle handles it declares."
    );
    let items = quote! {
        #[doc = #startup_doc]
        #[derive(Debug)]
        #[must_use = "the service stays not-ready until every startup gate is signalled"]
        #vis struct #startup {
            #(#gate_decls)*
        }

        #[doc = #watchdogs_doc]
        #[derive(Debug)]
        #vis struct #watchdogs {
            #(#dog_decls)*
        }

        #[doc = #installed_doc]
        #vis struct #installed {
            /// Everything the manifest declares, ready to serve: the tiers,
            /// the management port, `grpc.health.v1` and the drain
            /// (`installed.server.from_env()?.app(routes).run().await`). Its
            /// `endpoints()` mount the tiers on a server of your own instead.
            pub server: #krate::server::ZbHealthServer,
            /// The declared startup gates.
            pub startup: #startup,
            /// The declared watchdogs' heartbeats.
            pub watchdogs: #watchdogs,
        }
    };

    let delay = DurationTokens(lifecycle.drain_delay(), krate);
    // Only a stated shutdown timeout is fixed: without one the graceful
    // stop is what the grace period leaves, also after a `DRAIN_DELAY_MS`.
    let stop = lifecycle.shutdown_timeout.map(|t| {
        let t = DurationTokens(t.value, krate);
        quote!(.shutdown_timeout(#t))
    });
    let declared = quote!(#krate::lifecycle::Drain::new(#delay) #stop);
    let drain = match m.termination_grace_period {
        Some(g) => {
            let g = DurationTokens(g.value, krate);
            quote!(#krate::__private::fitted_drain(#declared, #g))
        }
        None => declared,
    };
    let grace = optional_duration(m.termination_grace_period.map(|g| g.value), krate);
    let management = OptionTokens(m.management_port.map(|p| p.value));
    let consts = quote! {
        /// The drain `lifecycle.drain_delay` and `lifecycle.shutdown_timeout`
        /// declare, already fitted to the termination grace period (rule
        /// R18, checked at compile time); the `server` of `install` runs under it.
        pub const DRAIN: #krate::lifecycle::Drain = #drain;

        /// The manifest's `orchestrator.termination_grace_period`, if it
        /// states one: the time between SIGTERM and SIGKILL that
        /// [`DRAIN`](Self::DRAIN) fits in.
        pub const TERMINATION_GRACE_PERIOD: ::core::option::Option<#krate::__private::Duration> = #grace;

        /// The manifest's `management.port`, if it declares one: the `server`
        /// of `install` serves the tiers on their own server there.
        pub const MANAGEMENT_PORT: ::core::option::Option<u16> = #management;
    };
    Generated {
        items,
        consts,
        watchdog_fields: dog_fields,
        gate_fields,
    }
}

/// One field per name; two names with one field (`warm-cache` and
/// `warm_cache`) are an R3 error naming both, never a silent suffix.
fn fields<'a>(
    cx: &Ctxt,
    site: &Site<'_>,
    of: NameOf,
    names: impl Iterator<Item = &'a Located<String>>,
) -> Vec<syn::Ident> {
    let mut out: Vec<(syn::Ident, &Located<String>)> = Vec::new();
    for name in names {
        let ident = builtin::ident_for(&name.value);
        if let Some((_, first)) = out.iter().find(|(i, _)| *i == ident) {
            let (noun, file) = (of.noun(), site.file);
            let text = format!(
                "{noun}s `{}` (at {file}:{}) and `{}` would both get the field `{ident}`",
                first.value, first.location, name.value
            );
            let help = format!(
                "a field is named after the {noun}'s name with `-` and `.` turned into `_`; rename one of them"
            );
            let message = site.message(Rule::DuplicateName, name.location, text, &help);
            cx.push(syn::Error::new(site.span, message));
        }
        out.push((ident, name));
    }
    out.into_iter().map(|(i, _)| i).collect()
}
