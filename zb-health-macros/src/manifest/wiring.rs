//! `install` and `install_into` in generated code: the manifest's wiring
//! facts as assignments to the runtime's `zb_health::install::Settings`,
//! whose `install` does the steps. What is generated here is data and the
//! typed handles, never the steps.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use zb_health_spec::manifest::{Located, Manifest};
use zb_health_spec::{Disclosure, Tag};

use crate::builtin;
use crate::lifecycle;
use crate::site::Site;
use crate::tokens::{DisclosureTokens, DurationTokens, ResponseFormatTokens, TagTokens};

/// `install` and `install_into`: the manifest's wiring facts as
/// assignments to the runtime's `Settings`, whose `install` does the wiring; what is
/// generated here is data and the typed handles, never the steps.
pub fn install(m: &Manifest, site: &Site<'_>, life: &lifecycle::Generated) -> TokenStream {
    let Site {
        krate,
        deps: ref deps_name,
        ref installed,
        ref startup,
        ref watchdogs,
        ..
    } = *site;
    let service = &m.service.value;
    let log_interval = m.failure_log_interval.map(|t| {
        let d = DurationTokens(t.value, krate);
        quote!(settings.registry.failure_log_interval = ::core::option::Option::Some(#d);)
    });
    let webhook = m.webhook.as_ref().map(|url| {
        let url = &url.value;
        quote!(settings.webhook = ::core::option::Option::Some(::core::convert::Into::into(#url));)
    });
    let has_cluster = m
        .probes
        .iter()
        .any(|p| builtin::feature(&p.kind) == Some("cluster"));
    let cluster_view = has_cluster.then(|| {
        let f = format_ident!("{}", builtin::CLUSTER_FIELD);
        quote!(settings.cluster_view = ::core::option::Option::Some(::std::sync::Arc::clone(&deps.#f));)
    });
    let endpoints = endpoints(m, krate);
    let grpc = m
        .grpc
        .as_ref()
        .map(|_| quote!(settings.grpc = ::core::option::Option::Some(Self::grpc);));
    // Started only once the install succeeded: a failed one watches nothing.
    let exit_on_stall = m
        .lifecycle
        .exits_on_stall()
        .then(|| quote!(registry.lifecycle().exit_on_stall();));
    let lifecycle::Generated {
        watchdog_fields,
        gate_fields,
        ..
    } = life;
    // What the runtime's install registers, all or none, in manifest order.
    let watchdog_loops = m.lifecycle.watchdogs.iter().map(|w| {
        let name = &w.name.value;
        let deadline = DurationTokens(w.deadline.value, krate);
        quote!((#name, #deadline))
    });
    let gate_names = m.lifecycle.startup_gates.iter().map(|g| &g.value);
    quote! {
        /// Installs the manifest into the process registry,
        /// `HealthRegistry::process()` (AT-1: one per process), and
        /// returns its `server` (the tiers, the management port,
        /// `grpc.health.v1` and the drain, serving that registry), with
        /// the handles of the declared startup gates and watchdogs.
        ///
        /// The runtime's `Settings::install` does it, with the
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
        /// With `lifecycle.exit_on_stall: true`, a successful one starts
        /// the stall exit (`Lifecycle::exit_on_stall`).
        pub fn install_into(
            registry: &#krate::registry::HealthRegistry,
            deps: #deps_name,
        ) -> ::core::result::Result<#installed, #krate::registry::RegistryError> {
            let mut settings = #krate::install::Settings::new(#service, Self::DRAIN);
            settings.registry.orchestrator_timeout = Self::ORCHESTRATOR_TIMEOUT;
            settings.registry.detection_time =
                ::core::option::Option::Some(Self::DETECTION_TIME);
            settings.termination_grace_period = Self::TERMINATION_GRACE_PERIOD;
            settings.management_port = Self::MANAGEMENT_PORT;
            #log_interval
            #webhook
            #endpoints
            #cluster_view
            #grpc
            let #krate::install::Installed {
                server,
                heartbeats: [#(#watchdog_fields),*],
                startup_gates: [#(#gate_fields),*],
            } = settings.install(
                registry,
                Self::registrations(deps),
                [#(#watchdog_loops),*],
                [#(#gate_names),*],
            )?;
            #exit_on_stall
            ::core::result::Result::Ok(#installed {
                server,
                startup: #startup { #(#gate_fields),* },
                watchdogs: #watchdogs { #(#watchdog_fields),* },
            })
        }
    }
}

/// The calls on each port's `EndpointSettings`: the paths, the format,
/// `cluster_ready` and the groups on both (a group is served wherever the
/// tiers are); each port's disclosure and authorized levels; the cluster
/// addresses where the manifest hides them (the application port); the
/// history on the management port, and on the application port only with
/// `application_port: true` (R26). Nothing for what the manifest leaves
/// at its default.
fn endpoints(m: &Manifest, krate: &TokenStream) -> TokenStream {
    let mut both = quote!(.paths(Self::paths()));
    if let Some(format) = m.responses.format {
        let format = ResponseFormatTokens(format.value, krate);
        both.extend(quote!(.format(#format)));
    }
    if let Some(name) = &m.responses.cluster_ready {
        let name = &name.value;
        both.extend(quote!(.cluster_ready(#name)));
    }
    both.extend(groups(m, krate));
    let app_addresses = m.responses.cluster_addresses();
    let mut application = quote!(.cluster_addresses(#app_addresses));
    application.extend(levels(
        &m.responses.disclosure,
        &m.responses.authorized,
        krate,
    ));
    let mut management = levels(&m.management_disclosure, &m.management_authorized, krate);
    if let Some(h) = &m.history {
        let (path, ui_path, ui) = (&h.path.value, &h.ui_path.value, h.ui);
        let history = quote! {
            .history(true).history_path(#path).history_ui(#ui).history_ui_path(#ui_path)
        };
        if h.application_port {
            application.extend(history.clone());
        }
        management.extend(history);
    }
    let management = (!management.is_empty())
        .then(|| quote!(settings.port(#krate::install::Port::Management) #management;));
    quote! {
        for endpoints in &mut settings.endpoints {
            endpoints #both;
        }
        settings.port(#krate::install::Port::Application) #application;
        #management
    }
}

/// The `group` calls for `groups`.
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

/// One port's `tier_disclosure` and `tier_authorized` calls. The token
/// that unlocks an authorized level comes from `HEALTH_TOKEN` at run
/// time, never from the manifest.
fn levels(
    disclosure: &[Option<Located<Disclosure>>; 3],
    authorized: &[Option<Located<Disclosure>>; 3],
    krate: &TokenStream,
) -> TokenStream {
    let mut calls = TokenStream::new();
    for tag in Tag::ALL {
        let tier = TagTokens(tag, krate);
        if let Some(level) = disclosure[tag as usize] {
            let level = DisclosureTokens(level.value, krate);
            calls.extend(quote!(.tier_disclosure(#tier, #level)));
        }
        if let Some(level) = authorized[tag as usize] {
            let level = DisclosureTokens(level.value, krate);
            calls.extend(quote!(.tier_authorized(#tier, #level)));
        }
    }
    calls
}
