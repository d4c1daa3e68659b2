//! Registration of the built-in probe kinds: each kind demands its typed
//! dependency in the generated deps struct and is built with the manifest's options.

use std::time::Duration;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use zb_health_spec::manifest::{ActiveScope, Manifest, ProbeDecl, ProbeKind};
use zb_health_spec::{FailureStatus, HealthStatus, MajorityGuard, MembershipPolicy, Tag};

/// The shared deps field every cluster kind reads, so membership,
/// transport, active node and the gate all see one view.
pub const CLUSTER_FIELD: &str = "cluster_view";

/// The runtime feature a kind needs.
pub fn feature(kind: &ProbeKind) -> Option<&'static str> {
    match kind {
        ProbeKind::Database => Some("database"),
        ProbeKind::Grpc => Some("grpc"),
        ProbeKind::ClusterMembership { .. }
        | ProbeKind::ClusterTransport { .. }
        | ProbeKind::ActiveNode { .. } => Some("cluster"),
        ProbeKind::Custom { .. } => None,
    }
}

/// The type of the field a kind needs of its own (database and gRPC
/// probes: one per probe); `None` for kinds that need none of their own.
pub fn own_field_type(kind: &ProbeKind, krate: &TokenStream) -> Option<TokenStream> {
    match kind {
        ProbeKind::Database => Some(quote!(#krate::database::DatabaseProbe)),
        ProbeKind::Grpc => Some(quote!(#krate::grpc::GrpcDependencyProbe)),
        _ => None,
    }
}

/// A legal field name for `name`: `name-with.dots` → `name_with_dots`;
/// keywords become raw identifiers, and names no identifier can spell
/// (`_`, `self`, a leading digit) get a `p_` prefix. Never panics: probe
/// names are whatever rule R9 lets through.
pub fn ident_for(name: &str) -> syn::Ident {
    let base = name.replace(['-', '.'], "_").to_ascii_lowercase();
    if let Ok(ident) = syn::parse_str::<syn::Ident>(&base) {
        return ident;
    }
    if let Ok(raw) = syn::parse_str::<syn::Ident>(&format!("r#{base}")) {
        return raw;
    }
    // `base` holds only ASCII letters, digits and `_`, so this is legal.
    format_ident!("p_{}", base)
}

/// The `ProbeMeta` of a built-in probe, from the manifest alone.
pub fn meta(m: &Manifest, p: &ProbeDecl, krate: &TokenStream) -> TokenStream {
    let name = p.name.as_ref().map_or("", |n| n.value.as_str());
    let tags = p
        .effective_tags()
        .unwrap_or_default()
        .iter()
        .map(|t| tag(t, krate))
        .collect::<Vec<_>>();
    let ms = p.effective_timeout(m).as_millis() as u64;
    let failure = failure_status(
        p.failure_status
            .as_ref()
            .or(m.default_failure_status.as_ref())
            .map_or(FailureStatus::Unhealthy, |f| f.value),
        krate,
    );
    let [cache, refresh, max_staleness] = [&p.cache, &p.refresh, &p.max_staleness]
        .map(|d| optional_duration(d.as_ref().map(|d| d.value), krate));
    quote! {
        #krate::meta::ProbeMeta {
            name: #name,
            tags: #krate::TagSet::of(&[#(#tags),*]),
            timeout: #krate::__private::Duration::from_millis(#ms),
            failure_status: #failure,
            cache: #cache,
            refresh: #refresh,
            max_staleness: #max_staleness,
        }
    }
}

/// An optional execution-policy duration as a runtime expression.
pub fn optional_duration(d: Option<Duration>, krate: &TokenStream) -> TokenStream {
    match d {
        Some(d) => {
            let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
            quote!(::core::option::Option::Some(#krate::__private::Duration::from_millis(#ms)))
        }
        None => quote!(::core::option::Option::None),
    }
}

/// The probe value of a built-in kind, built from `deps`; `field` is the
/// probe's own deps field, for kinds that have one.
pub fn probe(p: &ProbeDecl, field: Option<&syn::Ident>, krate: &TokenStream) -> TokenStream {
    let view = format_ident!("{}", CLUSTER_FIELD);
    let view = quote!(::std::sync::Arc::clone(&deps.#view));
    match &p.kind {
        ProbeKind::Database | ProbeKind::Grpc => quote!(deps.#field),
        ProbeKind::ClusterMembership { policy } => {
            let policy = match policy {
                MembershipPolicy::Default => quote!(#krate::cluster::MembershipPolicy::Default),
                MembershipPolicy::OtOpcUaCompat => {
                    quote!(#krate::cluster::MembershipPolicy::OtOpcUaCompat)
                }
            };
            quote!(#krate::cluster::ClusterMembershipProbe::new(#view).policy(#policy))
        }
        ProbeKind::ClusterTransport { guard } => {
            let guard = guard.map(|g| {
                let g = majority(g, krate);
                quote!(.with_guard(#g))
            });
            quote!(#krate::cluster::ClusterTransportProbe::new(#view) #guard)
        }
        ProbeKind::ActiveNode {
            no_active_role_status,
            ..
        } => {
            let rule = active_rule(p, krate).unwrap_or_default();
            let status = status(*no_active_role_status, krate);
            quote!(#krate::cluster::ActiveNodeProbe::new(#view, #rule).no_active_role_status(#status))
        }
        ProbeKind::Custom { .. } => quote!(),
    }
}

/// The `ClusterActiveNode` rule of an active-node probe; the same
/// expression serves the probe and the generated gate (ZB-2.3a).
pub fn active_rule(p: &ProbeDecl, krate: &TokenStream) -> Option<TokenStream> {
    let ProbeKind::ActiveNode { scope, guard, .. } = &p.kind else {
        return None;
    };
    let base = match scope {
        ActiveScope::Cluster => quote!(#krate::cluster::ClusterActiveNode::unscoped()),
        ActiveScope::Roles(roles) => {
            let roles = roles.iter().map(|r| r.value.as_str());
            // The roles passed rule R2 at compile time.
            quote!(#krate::__private::checked_roles(&[#(#roles),*]))
        }
    };
    let guard = guard.map(|g| {
        let g = majority(g, krate);
        quote!(.with_guard(#g))
    });
    Some(quote!(#base #guard))
}

fn majority(g: MajorityGuard, krate: &TokenStream) -> TokenStream {
    let (size, require) = (g.expected_size, g.require_majority);
    quote!(#krate::cluster::MajorityGuard { expected_size: #size, require_majority: #require })
}

fn status(s: HealthStatus, krate: &TokenStream) -> TokenStream {
    match s {
        HealthStatus::Healthy => quote!(#krate::HealthStatus::Healthy),
        HealthStatus::Degraded => quote!(#krate::HealthStatus::Degraded),
        HealthStatus::Unhealthy => quote!(#krate::HealthStatus::Unhealthy),
    }
}

/// A failure status as a runtime expression.
pub fn failure_status(f: FailureStatus, krate: &TokenStream) -> TokenStream {
    match f {
        FailureStatus::Unhealthy => quote!(#krate::FailureStatus::Unhealthy),
        FailureStatus::Degraded => quote!(#krate::FailureStatus::Degraded),
    }
}

/// A tag as a runtime expression.
pub fn tag(t: Tag, krate: &TokenStream) -> TokenStream {
    match t {
        Tag::Ready => quote!(#krate::Tag::Ready),
        Tag::Active => quote!(#krate::Tag::Active),
        Tag::Live => quote!(#krate::Tag::Live),
    }
}
