//! A probe's execution policy (BE-HLTH-006): R5 for its durations, R16
//! for `cache`, `refresh` and `max_staleness` together, R17 for a probe on
//! `active`, whose answer must be live.

use std::time::Duration;

use super::rule::Rule;
use super::sink::Violations;
use crate::tag::{Tag, TagSet};

/// R5, R16, R17: a probe's execution policy (BE-HLTH-006).
///
/// * R5: `cache`, `refresh` and `max_staleness` are non-zero.
/// * R16: `max_staleness` needs `refresh` and must be greater than it (a
///   result is due every `refresh`, so a bound at or below it would report
///   every result stale); `cache` and `refresh` exclude each other (a
///   background probe is never run by a request, so there is nothing to
///   cache).
/// * R17: no probe tagged `active` may be cached or refreshed in the
///   background. Its 200 means "this node is the active one, route the
///   writes here" (ZB-2.3b); an answer up to `cache` or `max_staleness` old
///   would let a node that lost the role keep claiming it, so two nodes
///   answer active at once. Readiness tolerates a bounded stale answer
///   (the orchestrator itself probes only every few seconds); the active
///   role does not. As for R10, the rule covers every `active`-tagged
///   probe, not only the built-in active-node kind: every entry of that
///   tier answers the same question.
pub fn check_execution_policy<L: Clone>(
    name: &str,
    tags: TagSet,
    cache: Option<Duration>,
    refresh: Option<Duration>,
    max_staleness: Option<Duration>,
    location: L,
    sink: &mut Violations<L>,
) {
    let at = |d: Option<Duration>| d.map(|d| (d, location.clone()));
    check_execution_policy_at(name, tags, at(cache), at(refresh), at(max_staleness), sink);
}

/// [`check_execution_policy`] with each key's own location, as
/// [`SettingsAt::check`](crate::settings::SettingsAt::check) calls it for
/// the registry, the manifest and the attribute: a violation is located
/// at the key it is about (`max_staleness` for its bound, `cache` for
/// `cache` with `refresh`).
pub fn check_execution_policy_at<L: Clone>(
    name: &str,
    tags: TagSet,
    cache: Option<(Duration, L)>,
    refresh: Option<(Duration, L)>,
    max_staleness: Option<(Duration, L)>,
    sink: &mut Violations<L>,
) {
    for (key, value) in [
        ("cache", &cache),
        ("refresh", &refresh),
        ("max_staleness", &max_staleness),
    ] {
        if let Some((d, at)) = value
            && d.is_zero()
        {
            sink.push(
                Rule::Duration,
                at.clone(),
                format!("probe `{name}` has a zero `{key}`"),
                "leave the key out for the default, or give a positive duration such as `5s`",
            );
        }
    }
    match (&refresh, &max_staleness) {
        (None, Some((_, at))) => sink.push(
            Rule::RefreshPolicy,
            at.clone(),
            format!("probe `{name}` has `max_staleness` but no `refresh`"),
            "`max_staleness` bounds the age of a background result; add `refresh` or remove `max_staleness`",
        ),
        (Some((r, _)), Some((m, at))) if m <= r => sink.push(
            Rule::RefreshPolicy,
            at.clone(),
            format!(
                "probe `{name}` has `max_staleness` {} ms, not greater than its `refresh` {} ms",
                m.as_millis(),
                r.as_millis()
            ),
            "a result is due every `refresh`, so every result would be reported stale; make `max_staleness` greater, e.g. twice `refresh` plus the timeout",
        ),
        _ => {}
    }
    if let (Some((_, at)), Some(_)) = (&cache, &refresh) {
        sink.push(
            Rule::RefreshPolicy,
            at.clone(),
            format!("probe `{name}` has both `cache` and `refresh`"),
            "a background probe is never run by a request, so there is nothing to cache; keep one of them",
        );
    }
    if tags.contains(Tag::Active) {
        for (key, value) in [("cache", &cache), ("refresh", &refresh)] {
            if let Some((_, at)) = value {
                sink.push(
                    Rule::LiveAnswer,
                    at.clone(),
                    format!("probe `{name}` is on the `active` tier with `{key}`"),
                    "`/health/active` answers \"route the writes here\"; an old answer would let a node that lost the role keep claiming it; remove the key",
                );
            }
        }
    }
}
