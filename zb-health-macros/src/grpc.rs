//! The manifest's `grpc` section in generated code: `GRPC_PERIOD` and
//! `grpc(registry)`, which builds the `grpc.health.v1` server with the
//! manifest's service mapping (AT-7).

use proc_macro2::TokenStream;
use quote::quote;
use zb_health_spec::Rule;
use zb_health_spec::manifest::{GrpcTargetDecl, Manifest};

use crate::site::{Site, named_by_attribute};
use crate::tokens::{DurationTokens, TagTokens};

/// What the manifest type gets from the `grpc` section.
#[derive(Default)]
pub struct Generated {
    /// Items of the manifest type's `impl`.
    pub items: TokenStream,
    /// Module-level items: the feature guard and the checks of probe
    /// targets whose names only the attributes know.
    pub checks: TokenStream,
}

/// The `grpc` section's items and checks; nothing without one.
pub fn generate(m: &Manifest, site: &Site<'_>) -> Generated {
    let krate = site.krate;
    let Some(grpc) = &m.grpc else {
        return Generated::default();
    };
    let period = DurationTokens(grpc.period(), krate);
    let services = grpc.services.iter().map(|s| {
        let service = &s.name.value;
        let target = match &s.target {
            GrpcTargetDecl::Tier(t) => {
                let tier = TagTokens(t.value, krate);
                quote!(#krate::grpc::server::GrpcTarget::Tier(#tier))
            }
            GrpcTargetDecl::Probe(p) => {
                let p = &p.value;
                quote!(#krate::grpc::server::GrpcTarget::probe(#p))
            }
        };
        quote!(.service(#service, #target))
    });
    let items = quote! {
        /// The manifest's `grpc.period`: how often the one evaluation
        /// feeding every gRPC `Watch` stream runs.
        pub const GRPC_PERIOD: #krate::__private::Duration = #period;

        /// The `grpc.health.v1` server over `registry` with the manifest's
        /// `grpc.services` mapping and `grpc.period`; call it after
        /// `install`, so the probe targets are registered. Serve it with
        /// `tonic::transport::Server::builder().add_service(health.server())`.
        ///
        /// Errors only if a probe target is not in `registry` (R4): the
        /// other rules held at compile time.
        pub fn grpc(
            registry: &#krate::registry::HealthRegistry,
        ) -> ::core::result::Result<#krate::grpc::server::GrpcHealth, #krate::spec::SpecError> {
            #krate::grpc::server::GrpcHealth::builder(::core::clone::Clone::clone(registry))
                .period(Self::GRPC_PERIOD)
                #(#services)*
                .build()
        }
    };
    // The reader checked probe targets against the manifest's names unless
    // a custom probe takes its name from its attribute; then `__PROBE_NAMES`
    // exists and the check happens here, against the attributes' names.
    let dynamic = m.probes.iter().any(named_by_attribute);
    let targets = grpc.services.iter().filter_map(|s| match &s.target {
        GrpcTargetDecl::Probe(p) if dynamic => Some(site.probe_known(
            Rule::Unknown,
            format!("gRPC service `{}` maps to", s.name.value),
            p,
            (&s.name.value, "grpc_service_probe_known"),
        )),
        _ => None,
    });
    let checks = quote! {
        #krate::__zb_require_grpc_server!();
        #(#targets)*
    };
    Generated { items, checks }
}
