//! R27: where a probe may ask for a restart (`restart_after`).

use std::time::Duration;

use crate::TagSet;

use super::rule::Rule;
use super::sink::Violations;

/// R27: a probe with `restart_after` is on `ready` alone, is `shared`, and
/// restarts only after the orchestrator's detection time.
///
/// * On `ready` alone: the restart is for a dependency this pod cannot
///   reach while its peers can; a `live` or `active` probe is no such
///   dependency (R1 keeps probes off `live`).
/// * `shared`: the peers' verdicts of the same dependency (gossip, see
///   `zb_health::shared`) are what tells this pod's own failure from an
///   outage, and only a shared probe's are published.
/// * Strictly longer than `detection` (the readiness `periodSeconds ×
///   failureThreshold` that `zb-health k8s` emits), counted from the
///   reported failure: the pod is out of rotation before it is restarted,
///   so a restart never drops requests the endpoints still send.
///
/// `tags` and `shared` are `None` where the caller cannot know them (a
/// custom probe's attribute holds them and checks them itself); a
/// `detection` of `None` skips the last check (the attribute alone, without
/// a manifest, has none). Every violation is reported at `restart_after`'s
/// location. The comparison is
/// [`crate::facts::restart_after_fits_detection`], the one the generated
/// code runs for a custom probe's attribute.
pub fn check_restart_after<L: Clone>(
    name: &str,
    restart_after: (Duration, L),
    tags: Option<TagSet>,
    shared: Option<bool>,
    detection: Option<Duration>,
    sink: &mut Violations<L>,
) {
    let (after, at) = restart_after;
    if let Some(tags) = tags
        && tags != TagSet::READY
    {
        sink.push(
            Rule::RestartAfter,
            at.clone(),
            format!("probe `{name}` has `restart_after` but is on tags {tags}"),
            RESTART_TAGS_HELP,
        );
    }
    if shared == Some(false) {
        sink.push(
            Rule::RestartAfter,
            at.clone(),
            format!("probe `{name}` has `restart_after` but is not `shared`"),
            RESTART_SHARED_HELP,
        );
    }
    if let Some(detection) = detection
        && !crate::facts::restart_after_fits_detection(Some(after), detection)
    {
        sink.push(
            Rule::RestartAfter,
            at,
            format!(
                "probe `{name}` restarts the pod after {} ms, not longer than the orchestrator's detection time of {} ms",
                after.as_millis(),
                detection.as_millis()
            ),
            RESTART_DETECTION_HELP,
        );
    }
}

/// Help for R27, a probe not on `ready` alone.
pub const RESTART_TAGS_HELP: &str = "`restart_after` restarts a pod whose dependency fails here while its peers reach it; put the probe on `tags: [ready]` only, or remove `restart_after`";

/// Help for R27, a probe that is not `shared`.
pub const RESTART_SHARED_HELP: &str = "the peers' verdicts of the same dependency tell this pod's own failure from an outage, and only a shared probe publishes them; add `shared: true`, or remove `restart_after`";

/// Help for R27, a restart within the detection time.
pub const RESTART_DETECTION_HELP: &str = "the pod must be out of rotation before it restarts: make `restart_after` longer than the detection time (readiness periodSeconds × failureThreshold, from `lifecycle.drain_delay`), e.g. `restart_after: 2m`";
