//! `install` and `install_into` in generated code: the manifest's wiring
//! facts as calls on the runtime's `zb_health::install::ManifestWiring`,
//! whose `install` does the steps. What is generated here is data and the
//! typed handles, never the steps.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use zb_health_spec::Tag;
use zb_health_spec::manifest::Manifest;

use crate::builtin;
use crate::lifecycle;
use crate::tokens::{DisclosureTokens, DurationTokens, ResponseFormatTokens, TagTokens};

/// `install` and `install_into`: the manifest's wiring facts as calls on
/// the runtime's `ManifestWiring`, whose `install` does the wiring; what is
/// generated here is data and the typed handles, never the steps.
pub fn install(
    m: &Manifest,
    krate: &TokenStream,
    deps_name: &syn::Ident,
    installed: &syn::Ident,
    life: &lifecycle::Generated,
) -> TokenStream {
    let service = &m.service.value;
    let log_interval = m.failure_log_interval.map(|t| {
        let d = DurationTokens(t.value, krate);
        quote!(.failure_log_interval(#d))
    });
    let webhook = m.webhook.as_ref().map(|url| {
        let url = &url.value;
        quote!(.webhook(#url))
    });
    let has_cluster = m
        .probes
        .iter()
        .any(|p| builtin::feature(&p.kind) == Some("cluster"));
    let cluster_view = has_cluster.then(|| {
        let f = format_ident!("{}", builtin::CLUSTER_FIELD);
        quote!(.cluster_view(::std::sync::Arc::clone(&deps.#f)))
    });
    let styles = body_style(m, krate);
    let app_addresses = m.responses.cluster_addresses();
    let groups = groups(m, krate);
    let history = history(m);
    let grpc = m.grpc.as_ref().map(|_| quote!(.grpc(Self::grpc)));
    let lifecycle::Generated {
        watchdog_loops,
        watchdog_fields,
        gate_names,
        gate_fields,
        startup,
        watchdogs,
        ..
    } = life;
    quote! {
        /// Installs the manifest into the process registry,
        /// `HealthRegistry::process()` (AT-1: one per process), and
        /// returns its `server` (the tiers, the management port,
        /// `grpc.health.v1` and the drain, serving that registry), with
        /// the handles of the declared startup gates and watchdogs.
        ///
        /// The runtime's `ManifestWiring::install` does it, with the
        /// manifest's facts: all or none, in the order it documents.
        /// Errors if the process registry already holds a probe or
        /// watchdog of the same name (R3), a probe whose deadline does not
        /// fit the timeout, or another orchestrator timeout (R5), or a
        /// probe whose cached or background result would reach the
        /// detection time (R19): facts only the running process knows.
        pub fn install(
            deps: #deps_name,
        ) -> ::core::result::Result<#installed, #krate::registry::RegistryError> {
            Self::install_into(#krate::registry::HealthRegistry::process(), deps)
        }

        /// [`install`](Self::install) into `registry` instead of the
        /// process registry: for tests, each with its own
        /// `HealthRegistry::new()` (AT-9). A failed install may leave the
        /// orchestrator timeout set, but adds no probe, watchdog or gate.
        pub fn install_into(
            registry: &#krate::registry::HealthRegistry,
            deps: #deps_name,
        ) -> ::core::result::Result<#installed, #krate::registry::RegistryError> {
            let wiring = #krate::install::ManifestWiring::new(
                #service,
                Self::paths(),
                Self::DETECTION_TIME,
                Self::DRAIN,
            )
            .orchestrator_timeout(Self::ORCHESTRATOR_TIMEOUT)
            .termination_grace_period(Self::TERMINATION_GRACE_PERIOD)
            .management_port(Self::MANAGEMENT_PORT)
            #log_interval
            #webhook
            #styles
            .application_cluster_addresses(#app_addresses)
            #groups
            #history
            #cluster_view
            #grpc;
            let #krate::install::Installed {
                server,
                heartbeats: [#(#watchdog_fields),*],
                startup_gates: [#(#gate_fields),*],
            } = wiring.install(
                registry,
                Self::registrations(deps),
                [#(#watchdog_loops),*],
                [#(#gate_names),*],
            )?;
            ::core::result::Result::Ok(#installed {
                server,
                startup: #startup,
                watchdogs: #watchdogs,
            })
        }
    }
}

/// The wiring's `group` calls for `groups`, the same on both ports (a
/// group is served wherever the tiers are).
fn groups(m: &Manifest, krate: &TokenStream) -> TokenStream {
    let mut calls = TokenStream::new();
    for g in &m.groups {
        let (name, path) = (&g.name.value, &g.path.value);
        let mut group = quote!(#krate::http::HealthGroup::new(#name, #path));
        if !g.probes.is_empty() {
            let probes = g.probes.iter().map(|p| &p.value);
            group.extend(quote!(.probes([#(#probes),*])));
        }
        if !g.tiers.is_empty() {
            let tiers = g.tiers.iter().map(|t| TagTokens(t.value, krate));
            group.extend(quote!(.tiers([#(#tiers),*])));
        }
        if let Some(level) = g.disclosure {
            let level = DisclosureTokens(level.value, krate);
            group.extend(quote!(.disclosure(#level)));
        }
        calls.extend(quote!(.group(#group)));
    }
    calls
}

/// The wiring's `history` call: the pages are on the management port
/// whenever `history` is there, on the application port only with
/// `application_port: true` (R26).
fn history(m: &Manifest) -> Option<TokenStream> {
    let h = m.history.as_ref()?;
    let (path, ui_path, ui, app) = (&h.path.value, &h.ui_path.value, h.ui, h.application_port);
    Some(quote!(.history(#path, #ui, #ui_path, #app)))
}

/// The wiring's calls for `endpoints.format`, each port's `disclosure`
/// and authorized level, and `cluster_ready`; nothing for what the
/// manifest leaves at its default.
fn body_style(m: &Manifest, krate: &TokenStream) -> TokenStream {
    let mut calls = TokenStream::new();
    if let Some(format) = m.responses.format {
        let format = ResponseFormatTokens(format.value, krate);
        calls.extend(quote!(.format(#format)));
    }
    let ports = [
        (
            quote!(#krate::install::Port::Application),
            &m.responses.disclosure,
            &m.responses.authorized,
        ),
        (
            quote!(#krate::install::Port::Management),
            &m.management_disclosure,
            &m.management_authorized,
        ),
    ];
    for (port, disclosure, authorized) in ports {
        for tag in Tag::ALL {
            let tier = TagTokens(tag, krate);
            if let Some(level) = disclosure[tag as usize] {
                let level = DisclosureTokens(level.value, krate);
                calls.extend(quote!(.disclosure(#port, #tier, #level)));
            }
            // The level a bearer token unlocks; the token itself comes
            // from `HEALTH_TOKEN` at run time, never from the manifest.
            if let Some(level) = authorized[tag as usize] {
                let level = DisclosureTokens(level.value, krate);
                calls.extend(quote!(.authorized(#port, #tier, #level)));
            }
        }
    }
    if let Some(name) = &m.responses.cluster_ready {
        let name = &name.value;
        calls.extend(quote!(.cluster_ready(#name)));
    }
    calls
}
