//! Registration of the built-in probe kinds: each kind demands its typed
//! dependency in the generated deps struct and is built with the manifest's options.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use zb_health_spec::MajorityGuard;
use zb_health_spec::disk::FreeSpace;
use zb_health_spec::manifest::{ActiveScope, CertificateSource, Manifest, ProbeDecl, ProbeKind};

use crate::tokens::{HealthStatusTokens, MembershipPolicyTokens, OptionTokens, ProbeMetaTokens};

/// The shared deps field every cluster kind reads, so membership,
/// transport, active node and the gate all see one view.
pub const CLUSTER_FIELD: &str = "cluster_view";

/// The runtime feature a kind needs: most are named like the kind.
pub fn feature(kind: &ProbeKind) -> Option<&'static str> {
    match kind {
        ProbeKind::Custom { .. } => None,
        ProbeKind::Http { .. } => Some("http-probe"),
        ProbeKind::Certificate {
            source: CertificateSource::Address { .. },
            ..
        } => Some("certificate-handshake"),
        ProbeKind::ClusterMembership { .. }
        | ProbeKind::ClusterTransport { .. }
        | ProbeKind::ActiveNode { .. } => Some("cluster"),
        other => Some(other.as_str()),
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
pub fn meta<'a>(m: &Manifest, p: &'a ProbeDecl, krate: &'a TokenStream) -> ProbeMetaTokens<'a> {
    ProbeMetaTokens {
        krate,
        name: p.name.as_ref().map_or("", |n| n.value.as_str()),
        settings: p.settings(m),
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
            let policy = MembershipPolicyTokens(*policy, krate);
            quote!(#krate::cluster::ClusterMembershipProbe::new(#view).policy(#policy))
        }
        ProbeKind::ClusterTransport { guard } => guarded(
            quote!(#krate::cluster::ClusterTransportProbe::new(#view)),
            *guard,
            krate,
        ),
        ProbeKind::ActiveNode {
            no_active_role_status,
            ..
        } => {
            let rule = active_rule(p, krate).unwrap_or_default();
            let status = HealthStatusTokens(*no_active_role_status, krate);
            quote!(#krate::cluster::ActiveNodeProbe::new(#view, #rule).no_active_role_status(#status))
        }
        ProbeKind::Http {
            url,
            status,
            body_contains,
        } => {
            let (url, low, high) = (url.value.as_str(), status.low, status.high);
            let body = OptionTokens(body_contains.as_ref().map(|t| t.value.as_str()));
            // The url and range passed their rules at compile time.
            quote!(#krate::__private::http_probe(#url, #low, #high, #body))
        }
        ProbeKind::Disk {
            path,
            degraded_below,
            unhealthy_below,
        } => {
            let path = &path.value;
            let levels = [
                (quote!(degraded_below), degraded_below),
                (quote!(unhealthy_below), unhealthy_below),
            ]
            .into_iter()
            .filter_map(|(method, level)| {
                let level = free_space(level.as_ref()?.value, krate);
                Some(quote!(.#method(#level)))
            });
            quote!(#krate::probes::disk::DiskProbe::new(#path) #(#levels)*)
        }
        ProbeKind::Redis { url } => {
            let url = url.value.as_str();
            // The url passed its rule at compile time.
            quote!(#krate::__private::redis_probe(#url))
        }
        ProbeKind::Certificate {
            source,
            warn_within,
        } => {
            let secs = warn_within.as_secs();
            // Named after the entry, so its gauge carries the probe's name.
            let name = p.name.as_ref().map_or("", |n| n.value.as_str());
            let probe = match source {
                CertificateSource::Files(paths) => {
                    let paths = paths.iter().map(|p| p.value.as_str());
                    quote!(#krate::probes::certificate::CertificateProbe::with_paths([#(#paths),*]))
                }
                CertificateSource::Address {
                    address,
                    server_name,
                } => {
                    let address = address.value.as_str();
                    let server_name = OptionTokens(server_name.as_ref().map(|n| n.value.as_str()));
                    // Both passed their rules at compile time.
                    quote!(#krate::__private::certificate_address(#address, #server_name))
                }
            };
            quote!(#probe
                .warn_within(::core::time::Duration::from_secs(#secs))
                .named(#name))
        }
        ProbeKind::Custom { .. } => quote!(),
    }
}

/// A level the manifest read, as the same value in code.
fn free_space(level: FreeSpace, krate: &TokenStream) -> TokenStream {
    match level {
        FreeSpace::Share(hundredths) => {
            quote!(#krate::spec::disk::FreeSpace::Share(#hundredths))
        }
        FreeSpace::Bytes(n) => quote!(#krate::spec::disk::FreeSpace::Bytes(#n)),
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
    Some(guarded(base, *guard, krate))
}

/// `base` (a cluster probe or rule) with the majority guard in force: the
/// manifest's, its size replaced by `CLUSTER_EXPECTED_SIZE` when the run
/// time sets it, which also turns a guard on where the
/// manifest states none.
fn guarded(base: TokenStream, g: Option<MajorityGuard>, krate: &TokenStream) -> TokenStream {
    let stated = OptionTokens(g.map(|g| {
        let (size, require) = (g.expected_size, g.require_majority);
        quote!(#krate::spec::MajorityGuard { expected_size: #size, require_majority: #require })
    }));
    quote!({
        let base = #base;
        match #krate::__private::runtime_guard(#stated) {
            ::core::option::Option::Some(guard) => base.with_guard(guard),
            ::core::option::Option::None => base,
        }
    })
}
