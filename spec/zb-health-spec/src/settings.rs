//! One probe's settings, modelled once: what a manifest entry and a
//! `#[zb_health]` attribute declare, what `ProbeMeta` carries, what a
//! registration holds and what the executor runs by. [`SettingsAt::check`]
//! applies every rule that concerns the settings alone, each at where the
//! setting was written: a registration's through [`ProbeSettings::check`],
//! the manifest reader's at each key's YAML location.
//!
//! A new setting is a field here (with its default in
//! [`ProbeSettings::DEFAULT`] or [`ExecutionPolicy::DEFAULT`]) and in
//! [`SettingsAt`], its key in the manifest reader and the attribute, and
//! its rule in [`crate::rules`], called from [`SettingsAt::check`].

use std::time::Duration;

use crate::detection::Threshold;
use crate::rules::{
    check_active_not_optional, check_execution_policy_at, check_max_age, check_name,
    check_probe_tags, check_restart_after, check_shared, check_threshold, check_timeout,
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
    /// checked without a detection time too); R27: its restart comes
    /// after `detection`. What a registry checks again when its detection
    /// time changes.
    pub fn check_detection(
        &self,
        name: &str,
        timeout: Duration,
        detection: Option<Duration>,
        sink: &mut Violations<()>,
    ) {
        let settings = ProbeSettings {
            timeout: Some(timeout),
            policy: *self,
            ..ProbeSettings::DEFAULT
        };
        settings.stated(None).check_held(name, detection, sink);
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
    /// `sink`: [`SettingsAt::check`] with every setting stated, at `()`,
    /// the deadline resolved under `orchestrator`. What a registry checks
    /// on `add`.
    pub fn check(
        &self,
        name: &str,
        orchestrator: Option<Duration>,
        detection: Option<Duration>,
        sink: &mut Violations<()>,
    ) {
        let stated = self.stated(orchestrator);
        stated.check(name, orchestrator, detection, sink);
    }

    /// These settings as a registration states them: each one, at `()`,
    /// with the deadline resolved under `orchestrator`.
    fn stated(&self, orchestrator: Option<Duration>) -> SettingsAt<()> {
        fn at<T>(value: Option<T>) -> Option<(T, ())> {
            value.map(|v| (v, ()))
        }
        let (p, t) = (self.policy, self.policy.threshold);
        SettingsAt {
            name: Some(()),
            written_tags: Some((self.tags.iter().map(|t| (t, ())).collect(), ())),
            tags: Some(self.tags),
            deadline: (self.resolved_timeout(orchestrator), Some(())),
            failure_status: Some((self.failure_status, ())),
            cache: at(p.cache),
            refresh: at(p.refresh),
            max_staleness: at(p.max_staleness),
            failures: at(t.failures),
            failing_for: at(t.failing_for),
            successes: at(t.successes),
            shared: Some((p.shared, ())),
            restart_after: at(p.restart_after),
        }
    }
}

/// A probe's settings as one declaration states them, each with where it
/// was written: the input of the one checker of a probe's settings,
/// [`SettingsAt::check`]. A registration ([`ProbeSettings::check`])
/// states every setting, at `()`; the manifest reader each key it read,
/// at its YAML location. A setting is `None` where its rules are left
/// out: not written, written but invalid (reported where it was read),
/// or a custom probe's, which its attribute checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsAt<L> {
    /// Where the name was written (R9).
    pub name: Option<L>,
    /// The tags as written, each where, and where the list is (R1, R13).
    pub written_tags: Option<(Vec<(Tag, L)>, L)>,
    /// The tiers that run the probe, when known: what R10, R16, R17, R7
    /// and R27 judge by.
    pub tags: Option<TagSet>,
    /// The deadline the probe runs with, which R19 counts, and where it
    /// was decided when R5 checks it.
    pub deadline: (Duration, Option<L>),
    /// The failure status and where it was decided (R10).
    pub failure_status: Option<(FailureStatus, L)>,
    /// `cache` (R5, R16, R17, R19).
    pub cache: Option<(Duration, L)>,
    /// `refresh` (R5, R16, R17, R19).
    pub refresh: Option<(Duration, L)>,
    /// `max_staleness` (R5, R16, R19).
    pub max_staleness: Option<(Duration, L)>,
    /// `failure_threshold` (R20).
    pub failures: Option<(u32, L)>,
    /// `failing_for` (R20).
    pub failing_for: Option<(Duration, L)>,
    /// `success_threshold` (R20).
    pub successes: Option<(u32, L)>,
    /// `shared` (R7 where `true`, R27).
    pub shared: Option<(bool, L)>,
    /// `restart_after` (R27).
    pub restart_after: Option<(Duration, L)>,
}

impl<L: Copy> SettingsAt<L> {
    /// Every rule about a probe's name and settings alone, pushed into
    /// `sink`, each at the location of the setting it is about: its name
    /// (R9), its tags (R1, R13), its deadline under `orchestrator` (R5),
    /// an optional active check (R10), its policy (R5, R16, R17), its
    /// results' age and its hysteresis against `detection`, the
    /// orchestrator's detection time when known (R19, R20), sharing (R7)
    /// and its restart (R27). The rules that need the tags run only where
    /// they are known.
    pub fn check(
        &self,
        name: &str,
        orchestrator: Option<Duration>,
        detection: Option<Duration>,
        sink: &mut Violations<L>,
    ) {
        if let Some(at) = self.name {
            check_name(name, at, sink);
        }
        if let Some((tags, at)) = &self.written_tags {
            check_probe_tags(name, tags, *at, sink);
        }
        if let (deadline, Some(at)) = self.deadline {
            check_timeout(name, deadline, orchestrator, at, sink);
        }
        if let (Some(tags), Some((status, at))) = (self.tags, self.failure_status) {
            check_active_not_optional(name, tags, status, at, sink);
        }
        if let Some(tags) = self.tags {
            check_execution_policy_at(
                name,
                tags,
                self.cache,
                self.refresh,
                self.max_staleness,
                sink,
            );
        }
        self.check_held(name, detection, sink);
        if let (Some((true, at)), Some(tags)) = (self.shared, self.tags) {
            check_shared(name, tags, at, sink);
        }
        if let Some(after) = self.restart_after {
            let shared = self.shared.is_some_and(|s| s.0);
            check_restart_after(name, after, self.tags, Some(shared), detection, sink);
        }
    }

    /// R19: the results' age below `detection`, when known; R20: the
    /// threshold counts at least one run, and holds a failure back no
    /// longer than `detection`.
    fn check_held(&self, name: &str, detection: Option<Duration>, sink: &mut Violations<L>) {
        if let Some(detection) = detection {
            check_max_age(
                name,
                self.deadline.0,
                self.cache,
                self.refresh,
                self.max_staleness,
                detection,
                sink,
            );
        }
        let refresh = self.refresh.map(|r| r.0);
        check_threshold(
            name,
            self.failures,
            self.failing_for,
            self.successes,
            refresh,
            detection,
            sink,
        );
    }
}

impl Default for ProbeSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}
