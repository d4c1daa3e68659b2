//! Which tiers a probe may be on: R1 (never `live`, ZB-1.3), R13 (at
//! least one, ZB-1.1), R10 (never optional on `active`, ZB-2.3b) and R7 for
//! a `shared` dependency (on `ready` only).

use super::rule::Rule;
use super::sink::Violations;
use crate::status::FailureStatus;
use crate::tag::{Tag, TagSet};

/// R1: a probe serves `ready` and/or `active`, never `live` (ZB-1.3); and
/// R13: at least one tier (ZB-1.1).
///
/// `tags` pairs each tag with where it was written, so the error points at
/// the `live` itself; an empty list is reported at `probe_location`.
pub fn check_probe_tags<L: Clone>(
    name: &str,
    tags: &[(Tag, L)],
    probe_location: L,
    sink: &mut Violations<L>,
) {
    for (tag, loc) in tags {
        if *tag == Tag::Live {
            sink.push(
                Rule::LiveTag,
                loc.clone(),
                format!("probe `{name}` is registered to the `live` tier"),
                "the live tier (`/healthz`) carries no probes, so a failing dependency can never restart the pod; tag the probe `ready` (or `active`) instead",
            );
        }
    }
    if tags.is_empty() {
        sink.push(
            Rule::NoTags,
            probe_location,
            format!("probe `{name}` has no tags, so no tier would ever run it"),
            "tag it `ready` for a dependency, or `active` for an active-node check",
        );
    }
}

/// R10: no probe on the `active` tier may be optional (ZB-2.3b; the
/// conflict with BE-HLTH-003 is resolved in `spec/conflicts.md`).
///
/// A `degraded` failure status caps the probe's failures at Degraded, which
/// answers 200. On `ready` that is how an optional dependency is declared
/// (BE-HLTH-003); on `active` a 200 means "this is the active node, route
/// the writes here", so every standby would claim the role. The rule covers
/// every probe tagged `active`, not only the built-in active-node kind: any
/// entry of that tier answers the same question.
pub fn check_active_not_optional<L>(
    name: &str,
    tags: TagSet,
    failure_status: FailureStatus,
    location: L,
    sink: &mut Violations<L>,
) {
    if tags.contains(Tag::Active) && failure_status == FailureStatus::Degraded {
        sink.push(
            Rule::ActiveNotOptional,
            location,
            format!("probe `{name}` is on the `active` tier with failure status `degraded`"),
            "on `/health/active` a 200 means \"route the writes here\", so a degraded failure would make every standby answer active; remove `failure_status: degraded` (an optional dependency belongs on `ready` only)",
        );
    }
}

/// R7 for a shared dependency: `shared` makes a failure that most nodes
/// of the cluster share answer `Degraded` (how BE-HLTH-003 meets a
/// shared outage, `spec/conflicts.md`), so the tier stays
/// 200 and no pod leaves the Service over an outage no pod can fix. That is
/// a readiness decision: a probe marked shared must be on `ready`, and
/// never on `active`, where a 200 means "route the writes here" and a
/// shared failure must not elect every node.
pub fn check_shared<L>(name: &str, tags: TagSet, location: L, sink: &mut Violations<L>) {
    if !tags.contains(Tag::Ready) || tags.contains(Tag::Active) {
        sink.push(
            Rule::Contradiction,
            location,
            format!(
                "probe `{name}` is marked `shared` but is on {}",
                if tags.contains(Tag::Active) {
                    "the `active` tier"
                } else {
                    "no `ready` tier"
                }
            ),
            "`shared: true` keeps `/health/ready` at 200 when a dependency fails on most nodes at once; put the probe on `tags: [ready]` only, or remove `shared`",
        );
    }
}
