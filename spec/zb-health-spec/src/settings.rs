//! One probe's settings, modelled once: what a manifest entry and a
//! `#[zb_health]` attribute declare, what `ProbeMeta` carries, what a
//! registration holds and what the executor runs by. [`ProbeSettings::check`]
//! applies every rule that concerns the settings alone.
//!
//! A new setting is a field here (with its default in
//! [`ProbeSettings::DEFAULT`] or [`ExecutionPolicy::DEFAULT`]), its key in
//! the manifest reader and the attribute, and its rule in [`crate::rules`],
//! called from [`ProbeSettings::check`].

use std::time::Duration;

use crate::detection::Threshold;
use crate::rules::{
    check_active_not_optional, check_execution_policy, check_max_age, check_name, check_probe_tags,
    check_restart_after, check_shared, check_threshold, check_timeout,
};
use crate::{FailureStatus, Tag, TagSet, Violations};

/// How a probe's runs are scheduled, kept and judged (BE-HLTH-006,
/// BE-HLTH-003): its cache, background schedule, hysteresis and sharing.
/// The `Default` is [`ExecutionPolicy::DEFAULT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExecutionPolicy {
    /// `cache`: a result this young is served again without running the
    /// probe.
    pub cache: Option<Duration>,
    /// `refresh`: the probe runs in the background on this period and
    /// requests read its latest result.
    pub refresh: Option<Duration>,
    /// `max_staleness`: a background result older than this reports the
    /// probe's failure status.
    pub max_staleness: Option<Duration>,
    /// The hysteresis between a run and the entry (`failure_threshold`,
    /// `failing_for`, `success_threshold`); R20 bounds its hold.
    pub threshold: Threshold,
    /// `shared`: the dependency is the same for every node, so a failure
    /// the cluster shares fails open.
    pub shared: bool,
    /// `restart_after`: failing here this long while most peers that
    /// report the same shared dependency find it healthy, the probe fails
    /// `live`, so the orchestrator restarts this pod alone (R27).
    pub restart_after: Option<Duration>,
}

impl ExecutionPolicy {
    /// No cache, schedule, threshold or sharing: what most probes have.
    pub const DEFAULT: Self = Self {
        cache: None,
        refresh: None,
        max_staleness: None,
        threshold: Threshold {
            failures: None,
            failing_for: None,
            successes: None,
        },
        shared: false,
        restart_after: None,
    };

    /// R19: every result this policy serves stays younger than
    /// `detection`, the orchestrator's detection time when known, with
    /// `timeout` the probe's deadline; R20: its threshold holds a failure
    /// back no longer than `detection` (and counts at least one run,
    /// checked without a detection time too).
    pub fn check_detection(
        &self,
        name: &str,
        timeout: Duration,
        detection: Option<Duration>,
        sink: &mut Violations<()>,
    ) {
        let at = |d: Option<Duration>| d.map(|d| (d, ()));
        if let Some(detection) = detection {
            check_max_age(
                name,
                timeout,
                at(self.cache),
                at(self.refresh),
                at(self.max_staleness),
                detection,
                sink,
            );
        }
        let t = self.threshold;
        check_threshold(
            name,
            t.failures.map(|n| (n, ())),
            at(t.failing_for),
            t.successes.map(|n| (n, ())),
            self.refresh,
            detection,
            sink,
        );
        if let Some(after) = self.restart_after {
            check_restart_after(name, (after, ()), None, None, detection, sink);
        }
    }
}

/// Everything a probe is declared with besides its name, its probe and
/// its dependencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeSettings {
    /// The tiers that run it.
    pub tags: TagSet,
    /// Its deadline as stated; `None` leaves it to the registry: below its
    /// orchestrator timeout, or below Kubernetes' default when it has none
    /// ([`default_probe_timeout`](crate::detection::default_probe_timeout)), so only a deadline the user wrote can
    /// break R5.
    pub timeout: Option<Duration>,
    /// What a failure reports.
    pub failure_status: FailureStatus,
    /// How its runs are scheduled, kept and judged.
    pub policy: ExecutionPolicy,
}

impl ProbeSettings {
    /// On `ready`, the default deadline, failing as `Unhealthy`, with the
    /// default policy.
    pub const DEFAULT: Self = Self {
        tags: TagSet::READY,
        timeout: None,
        failure_status: FailureStatus::Unhealthy,
        policy: ExecutionPolicy::DEFAULT,
    };

    /// The deadline the probe runs with under `orchestrator`: the stated
    /// one, else the spec's default for it.
    pub fn resolved_timeout(&self, orchestrator: Option<Duration>) -> Duration {
        crate::facts::attribute_timeout(self.timeout, orchestrator)
    }

    /// Every rule about a probe's name and settings alone, pushed into
    /// `sink`: its name (R9), its tags (R1, R13), its deadline under
    /// `orchestrator` (R5), an optional active check (R10), its policy
    /// (R5, R16, R17), its results' age, its hysteresis and its restart
    /// against `detection`, the orchestrator's detection time when known
    /// (R19, R20, R27), sharing (R7) and where a restart applies (R27).
    /// What a registry checks on `add`.
    pub fn check(
        &self,
        name: &str,
        orchestrator: Option<Duration>,
        detection: Option<Duration>,
        sink: &mut Violations<()>,
    ) {
        check_name(name, (), sink);
        let tags: Vec<(Tag, ())> = self.tags.iter().map(|t| (t, ())).collect();
        check_probe_tags(name, &tags, (), sink);
        let timeout = self.resolved_timeout(orchestrator);
        check_timeout(name, timeout, orchestrator, (), sink);
        check_active_not_optional(name, self.tags, self.failure_status, (), sink);
        let p = self.policy;
        check_execution_policy(
            name,
            self.tags,
            p.cache,
            p.refresh,
            p.max_staleness,
            (),
            sink,
        );
        p.check_detection(name, timeout, detection, sink);
        if p.shared {
            check_shared(name, self.tags, (), sink);
        }
        if let Some(after) = p.restart_after {
            // The detection time was checked with the policy's.
            check_restart_after(
                name,
                (after, ()),
                Some(self.tags),
                Some(p.shared),
                None,
                sink,
            );
        }
    }
}

impl Default for ProbeSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}
