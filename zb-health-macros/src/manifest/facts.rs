//! The facts the manifest states about items it cannot see, checked by the
//! generated code: one check item per fact (`crate::site::Site::fact`), each calling a `const fn` of
//! `zb_health_spec::facts`, so rustc reports every broken fact at once
//! (axum's `debug_handler` does the same), each message naming the YAML
//! line and column.

use std::time::Duration;

use proc_macro2::TokenStream;
use quote::quote;
use zb_health_spec::manifest::{Located, Location, Manifest, ProbeDecl};
use zb_health_spec::vocab::PROBE_SETTING_KEYS;
use zb_health_spec::{Rule, facts};

use super::custom::CustomType;
use crate::limits::{Bounds, Limit};
use crate::site::{Site, named_by_attribute};
use crate::tokens::{DurationTokens, FailureStatusTokens, TagTokens};

/// R7, R5, R19, R20 and R27 for a custom probe: what the manifest states about it
/// must match its attribute, one item per key it states, its attribute
/// timeout must fit the orchestrator's, and its attribute's cache or
/// background result must stay younger than the detection time (those
/// limits through the attribute's callback when `at_attribute`). A type
/// that does not exist is reported once, by its own check; these then
/// hold vacuously.
pub fn custom_facts(
    site: &Site<'_>,
    m: &Manifest,
    p: &ProbeDecl,
    ty: &CustomType,
    at_attribute: bool,
) -> Vec<TokenStream> {
    let krate = site.krate;
    let meta = ty.meta(krate);
    let missing = &ty.missing;
    let tyname = &ty.written;
    let f = quote!(#krate::__private::facts);
    let mut out = Vec::new();
    // Each key the entry states, with where and the comparison.
    let duration = |d: &Option<Located<Duration>>, field: TokenStream| {
        stated(d, |v| {
            let v = DurationTokens(*v, krate);
            quote!(#f::states_duration(#meta.settings.policy.#field, #v))
        })
    };
    let count = |n: &Option<Located<u32>>, field: TokenStream| {
        stated(
            n,
            |v| quote!(#f::states_count(#meta.settings.policy.threshold.#field, #v)),
        )
    };
    for key in PROBE_SETTING_KEYS {
        let stated = match key {
            "name" => stated(&p.name, |v| quote!(#f::same_name(#meta.name, #v))),
            "tags" => p.tags.as_ref().map(|tags| {
                let toks = tags.iter().map(|t| TagTokens(t.value, krate));
                let loc = tags.first().map_or(p.location, |t| t.location);
                let v = quote!(#krate::spec::TagSet::of(&[#(#toks),*]));
                (loc, quote!(#f::same_tags(#meta.settings.tags, #v)))
            }),
            "timeout" => stated(&p.timeout, |v| {
                let v = DurationTokens(*v, krate);
                let none = quote!(::core::option::Option::None);
                quote!(#f::same_timeout(#f::attribute_timeout(#meta.settings.timeout, #none), #v))
            }),
            "failure_status" => stated(&p.failure_status, |v| {
                let v = FailureStatusTokens(*v, krate);
                quote!(#f::same_failure_status(#meta.settings.failure_status, #v))
            }),
            "cache" => duration(&p.cache, quote!(cache)),
            "refresh" => duration(&p.refresh, quote!(refresh)),
            "max_staleness" => duration(&p.max_staleness, quote!(max_staleness)),
            "failure_threshold" => count(&p.failure_threshold, quote!(failures)),
            "failing_for" => duration(&p.failing_for, quote!(threshold.failing_for)),
            "success_threshold" => count(&p.success_threshold, quote!(successes)),
            "shared" => stated(&p.shared, |v| quote!(#meta.settings.policy.shared == #v)),
            "restart_after" => duration(&p.restart_after, quote!(restart_after)),
            _ => None,
        };
        if let Some((loc, ok)) = stated {
            let text = format!(
                "the manifest's `{key}` for `{tyname}` contradicts its #[zb_health] attribute"
            );
            let msg = site.message(Rule::Contradiction, loc, text, facts::CONTRADICTION_HELP);
            // The check's name reads as a sentence: `TagsAgree`, `CacheAgrees`.
            let verb = if key == "tags" { "agree" } else { "agrees" };
            let fact = format!("{key}_{verb}");
            out.push(site.fact(&ty.ident(), &fact, quote!(#missing || #ok), &msg));
        }
    }
    // R5, R19, R20 and R27: the attribute's values against the limits
    // the manifest sets. Checked at the attribute, by a call of its
    // callback, when that is reachable (`at_attribute`), else here, with
    // the same words.
    let b = Bounds {
        orchestrator: m.orchestrator_timeout.map(|t| t.value),
        detection: m.detection_time(),
    };
    if at_attribute {
        out.push(ty.limits_callback(site, p, b));
    } else {
        for limit in Limit::ALL.into_iter().filter(|l| l.applies(b)) {
            let (rule, text, help) = limit.violation(tyname, b);
            let msg = site.message(rule, p.location, text, help);
            let ok = limit.holds_tokens(krate, &meta, b);
            out.push(site.fact(&ty.ident(), limit.fact(), quote!(#missing || #ok), &msg));
        }
    }
    out
}

/// Where the entry states a key, and `ok`, the check that the attribute
/// agrees with the value stated.
fn stated<T>(key: &Option<Located<T>>, ok: impl Fn(&T) -> TokenStream) -> Stated {
    key.as_ref().map(|k| (k.location, ok(&k.value)))
}

/// Where a key is stated and its check, if the entry states it.
type Stated = Option<(Location, TokenStream)>;

/// R3 across the manifest and the attributes: a probe's name must not
/// repeat an earlier probe's, where one of the two comes from an attribute
/// (literal names the parser has already compared).
///
/// One item per probe over one table of names (a hidden associated
/// `const` of the generated type), so expansion stays linear in the number
/// of probes; returns the table and the items. `types` are the custom
/// probes' types, by probe index.
pub fn unique_name_facts(
    site: &Site<'_>,
    m: &Manifest,
    types: &[Option<CustomType>],
) -> (TokenStream, Vec<TokenStream>) {
    let krate = site.krate;
    let Some(first_dynamic) = m.probes.iter().position(named_by_attribute) else {
        return (quote!(), Vec::new());
    };
    let names = m
        .probes
        .iter()
        .zip(types)
        .map(|(p, ty)| match (&p.name, ty) {
            (Some(n), _) => {
                let v = &n.value;
                quote!(#v)
            }
            (None, Some(ty)) => {
                let meta = ty.meta(krate);
                quote!(#meta.name)
            }
            (None, None) => quote!(""),
        });
    let n = m.probes.len();
    let table = quote! {
        /// Every probe's name, for the generated uniqueness checks (R3).
        #[doc(hidden)]
        const __PROBE_NAMES: [&'static str; #n] = [#(#names),*];
    };
    let name = site.name;
    let items = m
        .probes
        .iter()
        .enumerate()
        .skip(first_dynamic.max(1))
        .map(|(i, p)| {
            let msg = site.message(
                Rule::DuplicateName,
                p.location,
                "this probe's name is already used by an earlier probe of the manifest".into(),
                facts::DUPLICATE_NAME_HELP,
            );
            let subject = match (&p.name, &types[i]) {
                (Some(n), _) => n.value.clone(),
                (None, Some(ty)) => ty.ident(),
                (None, None) => format!("probe{}", i + 1),
            };
            site.fact(
                &subject,
                "name_unique",
                quote!(#krate::__private::facts::name_unique_at(&#name::__PROBE_NAMES, #i)),
                &msg,
            )
        })
        .collect();
    (table, items)
}
