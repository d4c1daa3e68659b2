//! The limits a manifest sets on what a custom probe's `#[zb_health]`
//! attribute states: its deadline under the orchestrator's timeout (R5),
//! and its cache or background result (R19), its threshold (R20) and its
//! restart (R27) within the orchestrator's detection time.
//!
//! Written once, checked in one of two places:
//! - **at the attribute**, when `manifest!` can reach the attribute's
//!   callback (the probe is in this crate's source): the attribute is what
//!   the user changes, so the error points at its key, with the manifest's
//!   line as a note ([`crate::attr::limits`]);
//! - **at the manifest**, as generated facts over the probe's `META`,
//!   when it cannot (a probe from another crate, or made by a macro).
//!
//! Both evaluate the same `zb_health_spec::facts` functions, and word the
//! same message.

use std::time::Duration;

use proc_macro2::TokenStream;
use quote::quote;
use zb_health_spec::Rule;
use zb_health_spec::facts;
use zb_health_spec::settings::ProbeSettings;

use crate::tokens::{DurationTokens, optional_duration};

/// One limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// R5: the deadline is below the orchestrator's timeout.
    Orchestrator,
    /// R19: a cached or background result stays younger than detection.
    Detection,
    /// R20: the threshold holds a failure back for less than detection.
    Threshold,
    /// R27: a restart comes after detection.
    RestartAfter,
}

/// What the manifest sets the limits with.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bounds {
    /// `orchestrator.timeout`, if stated.
    pub orchestrator: Option<Duration>,
    /// The detection time the manifest implies.
    pub detection: Duration,
}

impl Limit {
    /// Every limit, in the order their errors are reported.
    pub const ALL: [Limit; 4] = [
        Limit::Orchestrator,
        Limit::Detection,
        Limit::Threshold,
        Limit::RestartAfter,
    ];

    /// Whether the manifest sets this limit at all (R5 needs a stated
    /// orchestrator timeout).
    pub fn applies(self, b: Bounds) -> bool {
        self != Limit::Orchestrator || b.orchestrator.is_some()
    }

    /// The fact's name, for its generated check.
    pub fn fact(self) -> &'static str {
        match self {
            Limit::Orchestrator => "fits_orchestrator",
            Limit::Detection => "fits_detection",
            Limit::Threshold => "threshold_fits",
            Limit::RestartAfter => "restart_after_fits",
        }
    }

    /// The attribute keys that can break it, the first written one being
    /// where the error points.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            Limit::Orchestrator => &["timeout"],
            Limit::Detection => &["cache", "refresh", "max_staleness", "timeout"],
            Limit::Threshold => &["failure_threshold", "failing_for", "refresh"],
            Limit::RestartAfter => &["restart_after"],
        }
    }

    /// What breaking it is, for the probe type written `tyname`: the rule,
    /// what is wrong, and the fix.
    pub fn violation(self, tyname: &str, b: Bounds) -> (Rule, String, &'static str) {
        let detection = b.detection.as_millis();
        match self {
            Limit::Orchestrator => (
                Rule::Duration,
                format!(
                    "the #[zb_health] timeout of `{tyname}` is not below the orchestrator's probe timeout of {} ms",
                    b.orchestrator.unwrap_or_default().as_millis()
                ),
                facts::ORCHESTRATOR_HELP,
            ),
            Limit::Detection => (
                Rule::MaxAgeFitsDetection,
                format!(
                    "the #[zb_health] `cache`, `refresh` or `max_staleness` of `{tyname}` lets a result reach the orchestrator's detection time of {detection} ms"
                ),
                facts::DETECTION_HELP,
            ),
            Limit::Threshold => (
                Rule::ThresholdFitsDetection,
                format!(
                    "the #[zb_health] `failure_threshold` or `failing_for` of `{tyname}` can hold a failure back longer than the orchestrator's detection time of {detection} ms"
                ),
                zb_health_spec::rules::THRESHOLD_HELP,
            ),
            Limit::RestartAfter => (
                Rule::RestartAfter,
                format!(
                    "the #[zb_health] `restart_after` of `{tyname}` is not longer than the orchestrator's detection time of {detection} ms"
                ),
                zb_health_spec::rules::RESTART_DETECTION_HELP,
            ),
        }
    }

    /// Whether `s`, an attribute's settings, keeps the limit: at the
    /// attribute.
    pub fn holds(self, s: &ProbeSettings, b: Bounds) -> bool {
        let timeout = facts::attribute_timeout(s.timeout, b.orchestrator);
        let p = &s.policy;
        match self {
            Limit::Orchestrator => b
                .orchestrator
                .is_none_or(|o| facts::fits_orchestrator(timeout, o)),
            Limit::Detection => facts::policy_fits_detection(
                p.cache,
                p.refresh,
                p.max_staleness,
                timeout,
                b.detection,
            ),
            Limit::Threshold => facts::threshold_fits(p.threshold, p.refresh, b.detection),
            Limit::RestartAfter => {
                facts::restart_after_fits_detection(p.restart_after, b.detection)
            }
        }
    }

    /// The same comparison as a `const` expression over a `ProbeMeta`
    /// (`meta`), at the manifest.
    pub fn holds_tokens(self, krate: &TokenStream, meta: &TokenStream, b: Bounds) -> TokenStream {
        let f = quote!(#krate::__private::facts);
        // The deadline the registry will run it with: a default one is
        // derived below the orchestrator's, so only a stated one can break R5.
        let stated = optional_duration(b.orchestrator, krate);
        let timeout = quote!(#f::attribute_timeout(#meta.settings.timeout, #stated));
        let orchestrator = b.orchestrator.map(|o| DurationTokens(o, krate));
        let detection = DurationTokens(b.detection, krate);
        let p = quote!(#meta.settings.policy);
        match self {
            Limit::Orchestrator => quote!(#f::fits_orchestrator(#timeout, #orchestrator)),
            Limit::Detection => quote!(#f::policy_fits_detection(
                #p.cache, #p.refresh, #p.max_staleness, #timeout, #detection
            )),
            Limit::Threshold => quote!(#f::threshold_fits(#p.threshold, #p.refresh, #detection)),
            Limit::RestartAfter => {
                quote!(#f::restart_after_fits_detection(#p.restart_after, #detection))
            }
        }
    }
}
