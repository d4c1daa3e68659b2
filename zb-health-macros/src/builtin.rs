//! Registration of the built-in probe kinds: each kind demands its typed
//! dependency in `HealthDeps` and is built with the manifest's options.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use zb_health_spec::manifest::{ActiveScope, Manifest, ProbeDecl, ProbeKind};
use zb_health_spec::{FailureStatus, HealthStatus, MajorityGuard, MembershipPolicy, Tag};

/// The shared `HealthDeps` field every cluster kind reads, so membership,
/// transport, active node and the gate all see one view.
pub const CLUSTER_FIELD: &str = "cluster_view";

/// The runtime feature a kind needs.
pub fn feature(kind: &ProbeKind) -> Option<&'static str> {
    match kind {
        ProbeKind::Database => Some("database"),
        ProbeKind::Grpc => Some("grpc"),
        ProbeKind::ClusterMembership { .. } | ProbeKind::ClusterTransport { .. } | ProbeKind::ActiveNode { .. } => {
            Some("cluster")
        }
        ProbeKind::Custom { .. } => None,
    }
}

/// The field a kind needs of its own (database and gRPC probes: one per
/// probe), as `(name, type)`.
pub fn own_field(probe: &ProbeDecl, krate: &TokenStream) -> Option<(syn::Ident, TokenStream)> {
    let name = probe.name.as_ref()?;
    let ident = ident_for(&name.value);
    match probe.kind {
        ProbeKind::Database => Some((ident, quote!(#krate::database::DatabaseProbe))),
        ProbeKind::Grpc => Some((ident, quote!(#krate::grpc::GrpcDependencyProbe))),
        _ => None,
    }
}

/// `name-with.dots` → `name_with_dots`, a legal field name.
pub fn ident_for(name: &str) -> syn::Ident {
    let base = name.replace(['-', '.'], "_").to_ascii_lowercase();
    let base = if base.starts_with(|c: char| c.is_ascii_digit()) { format!("p_{base}") } else { base };
    syn::parse_str::<syn::Ident>(&base).unwrap_or_else(|_| format_ident!("r#{}", base))
}

/// The `ProbeMeta` of a built-in probe, from the manifest alone.
pub fn meta(m: &Manifest, p: &ProbeDecl, krate: &TokenStream) -> TokenStream {
    let name = p.name.as_ref().map_or("", |n| n.value.as_str());
    let tags = p.effective_tags().unwrap_or_default().iter().map(|t| tag(t, krate)).collect::<Vec<_>>();
    let ms = p.effective_timeout(m).as_millis() as u64;
    let failure = match p
        .failure_status
        .as_ref()
        .or(m.default_failure_status.as_ref())
        .map_or(FailureStatus::Unhealthy, |f| f.value)
    {
        FailureStatus::Unhealthy => quote!(#krate::FailureStatus::Unhealthy),
        FailureStatus::Degraded => quote!(#krate::FailureStatus::Degraded),
    };
    quote! {
        #krate::ProbeMeta {
            name: #name,
            tags: #krate::TagSet::of(&[#(#tags),*]),
            timeout: #krate::__private::Duration::from_millis(#ms),
            failure_status: #failure,
        }
    }
}

/// The probe value of a built-in kind, built from `deps`.
pub fn probe(p: &ProbeDecl, krate: &TokenStream) -> TokenStream {
    let view = format_ident!("{}", CLUSTER_FIELD);
    let view = quote!(::std::sync::Arc::clone(&deps.#view));
    match &p.kind {
        ProbeKind::Database | ProbeKind::Grpc => {
            let field = ident_for(p.name.as_ref().map_or("", |n| n.value.as_str()));
            quote!(deps.#field)
        }
        ProbeKind::ClusterMembership { policy } => {
            let policy = match policy {
                MembershipPolicy::Default => quote!(#krate::cluster::MembershipPolicy::Default),
                MembershipPolicy::OtOpcUaCompat => quote!(#krate::cluster::MembershipPolicy::OtOpcUaCompat),
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
        ProbeKind::ActiveNode { no_active_role_status, .. } => {
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
    let ProbeKind::ActiveNode { scope, guard, .. } = &p.kind else { return None };
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

/// A tag as a runtime expression.
pub fn tag(t: Tag, krate: &TokenStream) -> TokenStream {
    match t {
        Tag::Ready => quote!(#krate::Tag::Ready),
        Tag::Active => quote!(#krate::Tag::Active),
        Tag::Live => quote!(#krate::Tag::Live),
    }
}
