//! The comparisons behind the checks that span two items, as `const fn`s.
//!
//! `manifest!` cannot see a custom probe's `#[zb_health]` attribute, so it
//! emits one check item per fact that compares the manifest with the
//! attribute's `ZbHealthProbe::META` in a const context (axum's
//! `debug_handler` does the same: one item per fact, so rustc reports every
//! broken fact, not the first); the attribute's own callback calls the
//! limits among them at expansion time.
//! Each comparison is one of these functions, and the rule functions in
//! [`crate::rules`](crate::Rule) that check the same fact at run time call
//! the same function, so the compile-time and run-time verdicts cannot
//! drift apart. Each help text exists once, here, for both.

use std::time::Duration;

use crate::{FailureStatus, TagSet};

/// Help for R5 when a deadline does not fit the orchestrator's timeout.
pub const ORCHESTRATOR_HELP: &str = "each probe's deadline must be smaller than the orchestrator's, or the orchestrator gives up before the endpoint answers; lower the probe's `timeout`";

/// Help for R19 when a cached or background result may outlive the
/// orchestrator's detection time.
pub const DETECTION_HELP: &str = "the orchestrator notices a changed readiness answer within its detection time (readiness periodSeconds × failureThreshold, as `zb-health k8s` derives them from `lifecycle.drain_delay`); an older cached or background answer would hide an outage, or a recovery, for longer; lower `cache` (or `refresh` and `max_staleness`), or lengthen `lifecycle.drain_delay` (in code, `HealthRegistryBuilder::detection_time`)";

/// Help for R3, a name used by two probes.
pub const DUPLICATE_NAME_HELP: &str =
    "names key the JSON entries, so each must be unique; rename one of the probes";

/// Help for R7, a manifest entry restating a custom probe's attribute with
/// another value.
pub const CONTRADICTION_HELP: &str = "state each fact in one place: delete the key from the manifest entry (the #[zb_health] attribute already states it), or make it equal to the attribute";

/// Whether two probe names are the same (R3, R7).
pub const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether two tag sets are the same (R7).
pub const fn same_tags(a: TagSet, b: TagSet) -> bool {
    a.bits() == b.bits()
}

/// Whether two deadlines are the same (R7).
pub const fn same_timeout(a: Duration, b: Duration) -> bool {
    a.as_nanos() == b.as_nanos()
}

/// Whether an attribute's optional execution-policy duration (`cache`,
/// `refresh`, `max_staleness`) is the one the manifest states (R7): a
/// manifest value the attribute leaves out contradicts it too.
pub const fn states_duration(attribute: Option<Duration>, manifest: Duration) -> bool {
    matches!(attribute, Some(a) if same_timeout(a, manifest))
}

/// Whether an attribute's optional run count (`failure_threshold`,
/// `success_threshold`) is the one the manifest states (R7).
pub const fn states_count(attribute: Option<u32>, manifest: u32) -> bool {
    matches!(attribute, Some(a) if a == manifest)
}

/// R20 over an attribute's threshold: its hold-back, in runs `refresh`
/// or the readiness period apart, not longer than `detection`. The
/// generated code calls it with a custom probe's `META`;
/// [`check_threshold`](crate::rules::check_threshold) the same comparison.
pub const fn threshold_fits(
    threshold: crate::detection::Threshold,
    refresh: Option<Duration>,
    detection: Duration,
) -> bool {
    let period = crate::detection::run_period(refresh, detection);
    crate::detection::threshold_fits_detection(threshold, period, detection)
}

/// R27: whether a probe's `restart_after` (if any) is strictly longer
/// than the orchestrator's detection time, so the pod is out of rotation
/// before it restarts. The generated code calls it with a custom probe's
/// attribute `META`; [`check_restart_after`](crate::rules::check_restart_after)
/// the same comparison.
pub const fn restart_after_fits_detection(
    restart_after: Option<Duration>,
    detection: Duration,
) -> bool {
    match restart_after {
        Some(after) => after.as_nanos() > detection.as_nanos(),
        None => true,
    }
}

/// Whether two failure statuses are the same (R7).
pub const fn same_failure_status(a: FailureStatus, b: FailureStatus) -> bool {
    a as u8 == b as u8
}

/// R5 (BE-HLTH-006): whether a probe deadline fits the orchestrator's probe
/// timeout, i.e. is strictly below it, so the endpoint answers before the
/// orchestrator gives up.
pub const fn fits_orchestrator(timeout: Duration, orchestrator: Duration) -> bool {
    timeout.as_nanos() < orchestrator.as_nanos()
}

/// R19 (BE-HLTH-006): whether a result at most `max_age` old stays below
/// the orchestrator's detection time, strictly.
pub const fn fits_detection(max_age: Duration, detection: Duration) -> bool {
    max_age.as_nanos() < detection.as_nanos()
}

/// R19 over a whole execution policy: the `cache`, and a background
/// probe's maximum age ([`crate::detection::background_max_age`] of
/// `refresh`, `max_staleness` and the deadline), each below `detection`.
/// The generated code calls it with a custom probe's attribute `META`;
/// [`check_max_age`](crate::rules::check_max_age) with each key alone.
pub const fn policy_fits_detection(
    cache: Option<Duration>,
    refresh: Option<Duration>,
    max_staleness: Option<Duration>,
    timeout: Duration,
    detection: Duration,
) -> bool {
    let cached = match cache {
        Some(c) => fits_detection(c, detection),
        None => true,
    };
    let background = match refresh {
        Some(r) => fits_detection(
            crate::detection::background_max_age(r, max_staleness, timeout),
            detection,
        ),
        None => true,
    };
    cached && background
}

/// The deadline a probe runs with: its stated `timeout` (a custom probe's
/// attribute, a registration's setting) when there is one, else
/// [`crate::detection::default_probe_timeout`] of the orchestrator
/// timeout, as the registry resolves it (R5, R19).
pub const fn attribute_timeout(
    timeout: Option<Duration>,
    orchestrator: Option<Duration>,
) -> Duration {
    match timeout {
        Some(timeout) => timeout,
        None => crate::detection::default_probe_timeout(orchestrator),
    }
}

/// R3: whether `names[i]` differs from every earlier name of the table.
/// An empty name stands for one not known here and is never compared.
/// `false` also for an index outside the table, so a generator bug cannot
/// pass silently.
pub const fn name_unique_at(names: &[&str], i: usize) -> bool {
    if i >= names.len() {
        return false;
    }
    if names[i].is_empty() {
        return true;
    }
    let mut j = 0;
    while j < i {
        if same_name(names[i], names[j]) {
            return false;
        }
        j += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FailureStatus, Tag};

    #[test]
    fn names_compare_bytewise() {
        assert!(same_name("cache", "cache"));
        assert!(!same_name("cache", "cach"));
        assert!(!same_name("a-b", "a_b"));
    }

    #[test]
    fn tags_timeouts_and_statuses_compare_by_value() {
        assert!(same_tags(TagSet::READY, TagSet::of(&[Tag::Ready])));
        assert!(!same_tags(TagSet::READY, TagSet::READY.with(Tag::Active)));
        assert!(same_timeout(
            Duration::from_millis(1500),
            Duration::from_secs_f64(1.5)
        ));
        assert!(!same_timeout(
            Duration::from_millis(1),
            Duration::from_micros(1001)
        ));
        assert!(states_duration(
            Some(Duration::from_millis(1500)),
            Duration::from_secs_f64(1.5)
        ));
        assert!(!states_duration(None, Duration::from_secs(1)));
        assert!(!states_duration(
            Some(Duration::from_secs(2)),
            Duration::from_secs(1)
        ));
        assert!(same_failure_status(
            FailureStatus::Degraded,
            FailureStatus::Degraded
        ));
        assert!(!same_failure_status(
            FailureStatus::Degraded,
            FailureStatus::Unhealthy
        ));
    }

    #[test]
    fn a_deadline_fits_only_strictly_below_the_orchestrator() {
        let orch = Duration::from_secs(1);
        assert!(fits_orchestrator(Duration::from_millis(999), orch));
        assert!(!fits_orchestrator(orch, orch));
        assert!(!fits_orchestrator(Duration::from_millis(1001), orch));
    }

    #[test]
    fn uniqueness_is_judged_at_the_later_occurrence() {
        let names = ["db", "", "cache", "db", ""];
        let verdicts: Vec<bool> = (0..names.len())
            .map(|i| name_unique_at(&names, i))
            .collect();
        assert_eq!(verdicts, [true, true, true, false, true]);
        assert!(!name_unique_at(&names, 5), "out of range never passes");
    }

    #[test]
    fn the_runtime_rule_and_the_generated_check_agree_on_the_orchestrator() {
        let orch = Duration::from_millis(1000);
        for ms in [1, 500, 999, 1000, 1001, 5000] {
            let timeout = Duration::from_millis(ms);
            let mut sink = crate::Violations::new();
            crate::rules::check_timeout("p", timeout, Some(orch), (), &mut sink);
            let refused = sink.into_result().is_err();
            assert_eq!(refused, !fits_orchestrator(timeout, orch), "{ms} ms");
        }
    }

    #[test]
    fn the_runtime_rule_and_the_generated_check_agree_on_the_detection_time() {
        let ms = Duration::from_millis;
        let detection = ms(4000);
        for (cache, refresh, stale) in [
            (Some(3999), None, None),
            (Some(4000), None, None),
            (None, Some(1000), None),
            (None, Some(1500), None),
            (None, Some(1000), Some(3999)),
            (None, Some(1000), Some(4000)),
        ] {
            let [c, r, m] = [cache, refresh, stale].map(|d: Option<u64>| d.map(ms));
            let mut sink = crate::Violations::new();
            let at = |d: Option<Duration>| d.map(|d| (d, ()));
            crate::rules::check_max_age("p", ms(1000), at(c), at(r), at(m), detection, &mut sink);
            let refused = sink.into_result().is_err();
            let fits = policy_fits_detection(c, r, m, ms(1000), detection);
            assert_eq!(refused, !fits, "{cache:?} {refresh:?} {stale:?}");
        }
        assert!(!fits_detection(detection, detection));
    }

    // The generated checks run these in const contexts: they must stay `const`.
    const _: () = assert!(same_name("a", "a") && fits_orchestrator(Duration::ZERO, Duration::MAX));
    const _: () = assert!(policy_fits_detection(
        None,
        None,
        None,
        Duration::ZERO,
        Duration::MAX
    ));
}
