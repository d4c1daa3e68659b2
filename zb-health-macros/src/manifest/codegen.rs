//! The items `manifest!` generates from a checked manifest: the deps
//! struct, the manifest type with its consts and methods, the lifecycle
//! handles, the gRPC mapping, and the check items of the facts the macro
//! cannot see; `install` is in `wiring`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use zb_health_spec::manifest::{Location, Manifest, ProbeDecl, ProbeKind};
use zb_health_spec::{Rule, Tag};

use super::custom::{CustomType, lookup_module};
use super::wiring::install;
use super::{facts, nearby};
use crate::builtin;
use crate::errors::Ctxt;
use crate::lifecycle;
use crate::site::{Site, named_by_attribute};
use crate::tokens::{DurationTokens, optional_duration};

/// What the probe list generates.
#[derive(Default)]
struct Probes {
    /// The deps struct's fields (none for cluster kinds, which share one
    /// view, and for kinds that need nothing of their own).
    fields: Vec<TokenStream>,
    /// Each probe's `ProbeRegistration`, in manifest order.
    registrations: Vec<TokenStream>,
    /// Each probe's `ProbeMeta`, in manifest order.
    metas: Vec<TokenStream>,
    /// Module-level items: the custom types' lookups and fact checks.
    checks: Vec<TokenStream>,
    /// The runtime features the kinds need, in first-use order.
    features: Vec<&'static str>,
    /// The custom probes' types, by probe index.
    types: Vec<Option<CustomType>>,
    /// Aliases named like the custom types, for the deps fields.
    aliases: Vec<TokenStream>,
}

/// Every generated item. Errors go into `cx`; every stage runs even when
/// an earlier one reported, and the caller drops the items if any did.
pub fn generate(cx: &Ctxt, m: &Manifest, site: &Site<'_>) -> TokenStream {
    let Site {
        file,
        krate,
        vis,
        name,
        deps: ref deps_name,
        ref installed,
        ..
    } = *site;
    let Probes {
        mut fields,
        registrations,
        metas,
        mut checks,
        features,
        types,
        aliases,
    } = probes(cx, m, site);
    let life = lifecycle::generate(cx, m, site);
    let (names_table, unique) = facts::unique_name_facts(site, m, &types);
    checks.extend(unique);
    let grpc = crate::grpc::generate(m, site);
    checks.push(grpc.checks);
    checks.push(group_checks(m, site));

    let install = install(m, site, &life);
    let service = &m.service.value;
    let [ready, active, live] = Tag::ALL.map(|t| m.paths.get(t).to_owned());
    let started = m.paths.started.clone();
    let orchestrator = optional_duration(m.orchestrator_timeout.map(|t| t.value), krate);
    let detection = DurationTokens(m.detection_time(), krate);
    if features.contains(&"cluster") {
        let f = format_ident!("{}", builtin::CLUSTER_FIELD);
        fields.push(quote! {
            /// The cluster view every cluster probe of the manifest reads.
            pub #f: ::std::sync::Arc<dyn #krate::cluster::ClusterView>,
        });
    }
    let requires = features.iter().map(|f| {
        // A feature name may hold `-` (`http-probe`); a macro name cannot.
        let mac = format_ident!("__zb_require_{}", f.replace('-', "_"));
        quote!(#krate::#mac!();)
    });
    let lookup = lookup_items(site, &types, aliases);
    let gate = active_node_gate(m, krate);
    let deps_doc = format!(
        "What the health manifest `{file}` needs from the application, for [`{name}`]: one field per probe it names (leaving one out is a compile error naming it; a `fn:` entry, an async fn with no state, has none), plus `cluster_view` if it has cluster kinds.\n\n\
         A field is named after the probe's `name` in the manifest, with `-` and `.` turned into `_` (`disk-space` → `disk_space`). A `kind: custom` entry without `name:` takes its name from its `#[zb_health]` attribute, which the macro cannot read, so its field is named after its type in snake case (`CacheProbe` → `cache_probe`); write `name:` in the entry to name the field after the probe."
    );
    let manifest_doc = format!(
        "The health of service `{service}`, as declared in `{file}`. Its dependencies are [`{deps_name}`]; `install` registers them in the process registry and returns [`{installed}`]: the server of everything the manifest declares and the lifecycle handles."
    );
    let life_items = &life.items;
    let life_consts = &life.consts;
    let grpc_items = &grpc.items;
    quote! {
        #(#requires)*

        #lookup

        #[doc = #deps_doc]
        // A custom probe's field names its type through the lookup module.
        #[allow(private_interfaces)]
        #vis struct #deps_name {
            #(#fields)*
        }

        #life_items

        #[doc = #manifest_doc]
        #vis struct #name;

        #[allow(dead_code)]
        impl #name {
            #gate

            /// The manifest's `service`.
            pub const SERVICE: &'static str = #service;

            /// The manifest's `orchestrator.timeout`, if it states one: every
            /// probe of the registry it is installed into must answer within it.
            pub const ORCHESTRATOR_TIMEOUT: ::core::option::Option<#krate::__private::Duration> = #orchestrator;

            /// The orchestrator's detection time the manifest implies (readiness
            /// `periodSeconds × failureThreshold` for its drain delay, as
            /// `zb-health k8s` emits them): no cached or background result of
            /// the registry it is installed into may reach it (R19).
            pub const DETECTION_TIME: #krate::__private::Duration = #detection;

            #life_consts

            /// Every probe's metadata, in manifest order.
            pub const PROBES: &'static [#krate::meta::ProbeMeta] = &[#(#metas),*];

            #names_table

            #grpc_items

            /// The tier paths and the startup path the manifest declares.
            pub fn paths() -> #krate::spec::EndpointPaths {
                #krate::spec::EndpointPaths {
                    ready: ::std::string::String::from(#ready),
                    active: ::std::string::String::from(#active),
                    live: ::std::string::String::from(#live),
                    started: ::std::string::String::from(#started),
                }
            }

            /// The registrations, in manifest order.
            pub fn registrations(deps: #deps_name) -> ::std::vec::Vec<#krate::registry::ProbeRegistration> {
                ::std::vec![#(#registrations),*]
            }

            #install
        }

        #(#checks)*
    }
}

/// The probe list: a deps field, registration and metadata per probe, and
/// the checks of custom probes. A field clash or a `type:` that is not a
/// path is reported and the other probes are still generated, so every
/// such error shows at once.
fn probes(cx: &Ctxt, m: &Manifest, site: &Site<'_>) -> Probes {
    let Site {
        file, span, krate, ..
    } = *site;
    let deps_name = &site.deps;
    let mut out = Probes::default();
    let mut alias_names: Vec<String> = Vec::new();
    // Read only when the manifest names a custom type.
    let mut scan: Option<nearby::CrateSource> = None;
    // Field names are a stable function of what the user wrote: two
    // probes that would share one are an error, never a silent suffix.
    // Who claimed each field first, to name both probes on a clash: the
    // field, the probe and where it is written.
    let mut claims = vec![(
        builtin::CLUSTER_FIELD.to_owned(),
        String::new(),
        Location::default(),
    )];
    let mut field = |ident: syn::Ident,
                     ty: TokenStream,
                     doc: String,
                     probe: &ProbeDecl,
                     label: &str| {
        let field = ident.to_string();
        if let Some((_, first, at)) = claims.iter().find(|(f, ..)| *f == field) {
            let message = if first.is_empty() {
                format!(
                    "probe {label} would get the `{deps_name}` field `{field}`, which holds the cluster view shared by the cluster kinds"
                )
            } else {
                format!(
                    "probes {first} (at {file}:{at}) and {label} would both get the `{deps_name}` field `{field}`"
                )
            };
            let help = "a field is named after the probe's `name` (`-` and `.` become `_`), or, for a `kind: custom` entry without `name:`, after its type in snake case; give one of the entries a `name:` that differs as an identifier";
            let message = site.message(Rule::DuplicateName, probe.location, message, help);
            cx.push(syn::Error::new(span, message));
        }
        claims.push((field, label.to_owned(), probe.location));
        out.fields.push(quote!(#[doc = #doc] pub #ident: #ty,));
    };
    for (index, probe) in m.probes.iter().enumerate() {
        if let Some(f) = builtin::feature(&probe.kind)
            && !out.features.contains(&f)
        {
            out.features.push(f);
        }
        let (registration, meta) = match &probe.kind {
            ProbeKind::Custom {
                type_path,
                function,
            } => {
                let Ok(path) = syn::parse_str::<syn::Path>(&type_path.value) else {
                    cx.push(syn::Error::new(
                        span,
                        format!(
                            "{file}:{}: `{}` is not a Rust type path",
                            type_path.location, type_path.value
                        ),
                    ));
                    out.types.push(None);
                    continue;
                };
                let custom = CustomType::new(site, index, path, type_path.location, *function);
                let tyname = &custom.written;
                let source = scan.get_or_insert_with(|| nearby::crate_source(site.caller));
                let hint = nearby::hint(&custom.path, &source.found);
                let at_attribute = nearby::reachable(&custom.path, source);
                let call = site.name.to_string();
                let missing = nearby::missing(&custom.path, &call, source);
                // For a type proved missing, the probe the hint names stands
                // in, field name and all, so the caller's struct literal
                // adds no error to ours.
                let instead = hint
                    .as_deref()
                    .filter(|_| missing)
                    .and_then(|h| nearby::usable(h, &call, source))
                    .and_then(|p| syn::parse_str::<syn::Path>(&p).ok());
                out.checks
                    .push(custom.lookup(site, hint.as_deref(), missing, instead.as_ref()));
                out.checks.push(custom.form_fact(site));
                out.checks
                    .extend(facts::custom_facts(site, m, probe, &custom, at_attribute));
                let resolved = &custom.resolved;
                let meta = custom.meta(krate);
                let registration = if *function {
                    // Needs no state: made from nothing, no deps field.
                    let stateless = quote!(<#resolved as #krate::meta::ZbHealthProbe>::STATELESS);
                    quote!(#krate::__private::stateless(#stateless))
                } else {
                    let (ident, doc, label) =
                        custom_field(probe, instead.as_ref().unwrap_or(&custom.path), tyname);
                    // The field's type reads as the user's in the docs: an
                    // alias of that name, unless two types share the name.
                    let last = custom.path.segments.last().map(|s| &s.ident);
                    let ty = match last {
                        Some(last) if !alias_names.contains(&last.to_string()) => {
                            alias_names.push(last.to_string());
                            let target = custom.in_module();
                            out.aliases.push(quote! {
                                #[doc = concat!("`", #tyname, "`, as the manifest names it.")]
                                pub type #last = #target;
                            });
                            let module = lookup_module(site.name);
                            quote!(#module::#last)
                        }
                        _ => resolved.clone(),
                    };
                    let registration = quote!(<#resolved as #krate::meta::ZbHealthProbe>::registration(deps.#ident));
                    field(ident, ty, doc, probe, &label);
                    registration
                };
                out.types.push(Some(custom));
                (registration, meta)
            }
            kind => {
                let own = builtin::own_field_type(kind, krate).map(|ty| {
                    let probe_name = probe.name.as_ref().map_or("probe", |n| n.value.as_str());
                    let ident = builtin::ident_for(probe_name);
                    let doc = format!(
                        "The `{probe_name}` probe (`kind: {}`); the field is named after its `name`.",
                        kind.as_str()
                    );
                    field(ident.clone(), ty, doc, probe, &format!("`{probe_name}`"));
                    ident
                });
                let meta = builtin::meta(m, probe, krate);
                let value = builtin::probe(probe, own.as_ref(), krate);
                out.types.push(None);
                (quote!((#meta).registration(#value)), quote!(#meta))
            }
        };
        out.registrations
            .push(with_dependencies(registration, probe));
        out.metas.push(meta);
    }
    out
}

/// A registration with the entry's `depends_on`, which the
/// manifest reader checked (R21, R22) and the registry checks again.
fn with_dependencies(registration: TokenStream, probe: &ProbeDecl) -> TokenStream {
    if probe.depends_on.is_empty() {
        return registration;
    }
    let names = probe.depends_on.iter().map(|n| n.value.as_str());
    quote!((#registration).depends_on([#(#names),*]))
}

/// The module of the custom types' lookups (see `custom`); nothing
/// without custom probes.
fn lookup_items(
    site: &Site<'_>,
    types: &[Option<CustomType>],
    aliases: Vec<TokenStream>,
) -> TokenStream {
    if types.iter().all(Option::is_none) {
        return quote!();
    }
    let vis = site.vis;
    let module = lookup_module(site.name);
    quote! {
        /// The custom probes' types of the manifest type, under the names
        /// the manifest gives them.
        ///
        /// The trait and its `Self` are private to the calling module, so
        /// an impl naming a type only the caller sees is legal (E0446); the
        /// aliases and deps fields that name them through a projection are
        /// as visible as the manifest, hence `private_interfaces`.
        #[doc(hidden)]
        #[allow(non_snake_case, private_interfaces)]
        #vis mod #module {
            /// The custom probes' types, by position in the manifest; found
            /// where `manifest!` is called, or a fallback when one is missing.
            pub(super) trait Custom<const N: usize> {
                /// The type.
                type Type;
                /// Whether no such type exists (`Type` is then the fallback).
                const MISSING: bool;
            }

            /// What implements [`Custom`], once per custom probe.
            pub(super) struct Manifest;

            #(#aliases)*
        }
    }
}

/// `active_node_rule()` and `active_node_gate(view)`, with exactly one
/// active-node probe.
fn active_node_gate(m: &Manifest, krate: &TokenStream) -> TokenStream {
    let active_rules: Vec<TokenStream> = m
        .probes
        .iter()
        .filter_map(|p| builtin::active_rule(p, krate))
        .collect();
    match active_rules.as_slice() {
        [rule] => quote! {
            /// The manifest's `ClusterActiveNode` rule: the one the active-node
            /// probe uses, for the gate and the application (ZB-2.3a).
            pub fn active_node_rule() -> #krate::cluster::ClusterActiveNode {
                #rule
            }

            /// The `ActiveNodeGate` over `view` with the same rule as the
            /// active-node probe, so a gated endpoint and `/health/active`
            /// cannot disagree (ZB-4).
            pub fn active_node_gate(
                view: ::std::sync::Arc<dyn #krate::cluster::ClusterView>,
            ) -> #krate::cluster::ClusterActiveNodeGate {
                #krate::cluster::ClusterActiveNodeGate::new(view, Self::active_node_rule())
            }
        },
        _ => quote!(),
    }
}

/// R23 in generated code: the reader checked the groups' probe names
/// against the manifest's unless a custom probe takes its name from its
/// attribute; then `__PROBE_NAMES` exists and each name is checked here.
fn group_checks(m: &Manifest, site: &Site<'_>) -> TokenStream {
    if !m.probes.iter().any(named_by_attribute) {
        return quote!();
    }
    let mut checks = TokenStream::new();
    for g in &m.groups {
        for p in &g.probes {
            checks.extend(site.probe_known(
                Rule::GroupUnknownProbe,
                format!("health group `{}` names", g.name.value),
                p,
                (
                    &format!("{}_{}", g.name.value, p.value),
                    "group_probe_known",
                ),
            ));
        }
    }
    checks
}

/// `CacheProbe` → `cache_probe`, `HTTPProbe` → `http_probe`,
/// `Http2Probe` → `http2_probe`: a word starts at an upper-case letter
/// after a lower-case letter or digit, or at the last capital of an
/// acronym that a lower-case letter follows.
pub fn snake_case(ident: &str) -> String {
    let chars: Vec<char> = ident.chars().collect();
    let mut out = String::with_capacity(ident.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1);
            let boundary = match prev {
                Some(p) if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                Some(p) if p.is_ascii_uppercase() => next.is_some_and(char::is_ascii_lowercase),
                _ => false,
            };
            if boundary {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The deps field of a custom probe, its doc and how a clash names the
/// probe: the manifest's `name`, else the type's name in snake case.
fn custom_field(probe: &ProbeDecl, ty: &syn::Path, tyname: &str) -> (syn::Ident, String, String) {
    match &probe.name {
        Some(n) => (
            builtin::ident_for(&n.value),
            format!(
                "The `{}` probe, `{tyname}`; the field is named after the manifest entry's `name`.",
                n.value
            ),
            format!("`{}`", n.value),
        ),
        None => {
            let last = ty.segments.last().map(|s| s.ident.unraw().to_string());
            (
                builtin::ident_for(&snake_case(&last.unwrap_or_default())),
                format!(
                    "The `{tyname}` probe. The field is named after the type: the probe's name is on its #[zb_health] attribute, which `manifest!` cannot read. Write `name:` in the manifest entry to name the field after the probe."
                ),
                format!("`{tyname}`"),
            )
        }
    }
}
