//! Spec values as runtime expressions: each one written once, as a
//! `ToTokens` newtype carrying the runtime crate's path, so `quote!(#d)`
//! emits e.g. `::zb_health::__private::Duration::from_millis(750u64)`.

use std::time::Duration;

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use zb_health_spec::settings::ProbeSettings;
use zb_health_spec::{
    Disclosure, FailureStatus, HealthStatus, MembershipPolicy, ResponseFormat, Tag,
};

/// The runtime crate's path: the one given by `crate = "..."`, else
/// `::zb_health`.
pub fn krate(given: Option<&syn::Path>) -> TokenStream {
    given.map_or_else(|| quote!(::zb_health), ToTokens::to_token_stream)
}

/// A newtype that emits a spec enum's value as the runtime's variant of
/// the same name, `#krate::Enum::Variant`.
macro_rules! variant_tokens {
    ($($(#[$doc:meta])* $name:ident($ty:ident) { $($variant:ident),* })*) => {$(
        $(#[$doc])*
        pub struct $name<'a>(pub $ty, pub &'a TokenStream);

        impl ToTokens for $name<'_> {
            fn to_tokens(&self, out: &mut TokenStream) {
                let krate = self.1;
                out.extend(match self.0 {
                    $($ty::$variant => quote!(#krate::spec::$ty::$variant),)*
                });
            }
        }
    )*};
}

variant_tokens! {
    /// A tag (or tier): `#krate::spec::Tag::Ready`.
    TagTokens(Tag) { Ready, Active, Live }

    /// A failure status: `#krate::spec::FailureStatus::Degraded`.
    FailureStatusTokens(FailureStatus) { Unhealthy, Degraded }

    /// A health status: `#krate::spec::HealthStatus::Degraded`.
    HealthStatusTokens(HealthStatus) { Healthy, Degraded, Unhealthy }

    /// A cluster membership policy: `#krate::spec::MembershipPolicy::Default`.
    MembershipPolicyTokens(MembershipPolicy) { Default, OtOpcUaCompat }

    /// A tier's disclosure level: `#krate::spec::Disclosure::Names`.
    DisclosureTokens(Disclosure) { Full, Names, Status }

    /// The response body format: `#krate::spec::ResponseFormat::PassFail`.
    ResponseFormatTokens(ResponseFormat) { Zb, PassFail }
}

/// A duration, in whole milliseconds as the spec's durations are:
/// `#krate::__private::Duration::from_millis(N)`.
pub struct DurationTokens<'a>(pub Duration, pub &'a TokenStream);

impl ToTokens for DurationTokens<'_> {
    fn to_tokens(&self, out: &mut TokenStream) {
        let krate = self.1;
        let ms = millis(self.0);
        out.extend(quote!(#krate::__private::Duration::from_millis(#ms)));
    }
}

/// A duration's milliseconds as the generated `u64`, saturating.
pub fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// An optional value: `::core::option::Option::Some(..)` or `None`.
pub struct OptionTokens<T>(pub Option<T>);

impl<T: ToTokens> ToTokens for OptionTokens<T> {
    fn to_tokens(&self, out: &mut TokenStream) {
        out.extend(match &self.0 {
            Some(value) => quote!(::core::option::Option::Some(#value)),
            None => quote!(::core::option::Option::None),
        });
    }
}

/// An optional duration, for the execution policy and the orchestrator's
/// timeouts.
pub fn optional_duration(
    d: Option<Duration>,
    krate: &TokenStream,
) -> OptionTokens<DurationTokens<'_>> {
    OptionTokens(d.map(|d| DurationTokens(d, krate)))
}

/// A `ProbeMeta` literal: what the attribute declares, or what the
/// manifest states for a built-in kind.
pub struct ProbeMetaTokens<'a> {
    /// The runtime crate's path.
    pub krate: &'a TokenStream,
    /// The probe's name (`""` when only an attribute knows it).
    pub name: &'a str,
    /// Its settings, in the spec's one model of them.
    pub settings: ProbeSettings,
}

impl ToTokens for ProbeMetaTokens<'_> {
    fn to_tokens(&self, out: &mut TokenStream) {
        let krate = self.krate;
        let name = self.name;
        let ProbeSettings {
            tags,
            timeout,
            failure_status,
            policy,
        } = self.settings;
        let tags = tags.iter().map(|t| TagTokens(t, krate));
        let timeout = optional_duration(timeout, krate);
        let failure = FailureStatusTokens(failure_status, krate);
        let [cache, refresh, max_staleness] = [policy.cache, policy.refresh, policy.max_staleness]
            .map(|d| optional_duration(d, krate));
        let [failures, successes] =
            [policy.threshold.failures, policy.threshold.successes].map(OptionTokens);
        let failing_for = optional_duration(policy.threshold.failing_for, krate);
        let shared = policy.shared;
        let restart_after = optional_duration(policy.restart_after, krate);
        out.extend(quote! {
            #krate::meta::ProbeMeta {
                name: #name,
                settings: #krate::spec::settings::ProbeSettings {
                    tags: #krate::spec::TagSet::of(&[#(#tags),*]),
                    timeout: #timeout,
                    failure_status: #failure,
                    policy: #krate::spec::settings::ExecutionPolicy {
                        cache: #cache,
                        refresh: #refresh,
                        max_staleness: #max_staleness,
                        threshold: #krate::spec::detection::Threshold {
                            failures: #failures,
                            failing_for: #failing_for,
                            successes: #successes,
                        },
                        shared: #shared,
                        restart_after: #restart_after,
                    },
                },
            }
        });
    }
}
