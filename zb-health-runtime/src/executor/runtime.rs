//! [`ProbeRuntime`]: a registered probe as the executor runs it, the
//! registration's facts and the state of its runs.

use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::time::Instant;

use std::sync::atomic::AtomicU64;
use zb_health_spec::detection::default_probe_timeout;
use zb_health_spec::{FailureStatus, HealthStatus, TagSet, Violations};

use super::context::RunContext;
use super::state::{Failed, OPENED, Opened, ProbeState, RunState, slot_status};
use crate::history::{ProbeHistory, ProbeView};
use crate::observe::ProbeLog;
use crate::probe::DynProbe;
use crate::registration::ProbeRegistration;
use crate::report::{EntryOutcome, HealthEntry};
use crate::shared::Tally;
use crate::sync::lock;
use zb_health_spec::settings::{ExecutionPolicy, ProbeSettings};

/// A registered probe as the executor runs it: the registration's facts,
/// immutable, and the state of its runs.
pub(crate) struct ProbeRuntime {
    pub(crate) name: Arc<str>,
    pub(crate) tags: TagSet,
    pub(crate) timeout: Duration,
    /// Whether the registration stated `timeout`; if not, it is the
    /// default for the orchestrator timeout it was registered under, and
    /// follows a later one ([`retimed`](Self::retimed)).
    pub(crate) timeout_stated: bool,
    pub(super) failure_status: FailureStatus,
    pub(super) probe: Arc<dyn DynProbe>,
    /// `None` for the default policy (no cache, schedule, threshold or
    /// sharing: most probes), so those keep one pointer, not a whole
    /// policy; read through [`policy`](Self::policy).
    pub(super) policy: Option<Box<ExecutionPolicy>>,
    /// Single-flight, cache and schedule state (BE-HLTH-006).
    pub(super) state: ProbeState,
    /// Transition-log state (BE-HLTH-008): goes with the registration.
    pub(super) log: ProbeLog,
    /// The names of the probes this one depends on (`depends_on`).
    /// A boxed slice: empty, it allocates nothing (an empty `Arc<[_]>`
    /// still allocates its counts).
    pub(crate) depends_on: Box<[Arc<str>]>,
    /// Those probes as the table holds them now: weak, so a dependency's
    /// removal frees it; found again by name at every table change.
    pub(super) dependencies: Mutex<Box<[Weak<ProbeRuntime>]>>,
    /// Its history, allocated at its first result once history
    /// is enabled on the registry; never before, never again.
    pub(super) history: std::sync::OnceLock<Box<ProbeHistory>>,
}

impl ProbeRuntime {
    /// Whether `?exclude=` may leave it out of its tier's verdict
    /// ([`Probe::EXCLUDABLE`](crate::probe::Probe::EXCLUDABLE)).
    pub(crate) fn excludable(&self) -> bool {
        self.probe.excludable()
    }

    /// The probe's execution policy.
    #[inline]
    pub(super) fn policy(&self) -> &ExecutionPolicy {
        self.policy.as_deref().unwrap_or(&ExecutionPolicy::DEFAULT)
    }

    /// Its `restart_after` and how long its reported entry has been
    /// failing here (`None` when it is not), for the restart escalation;
    /// `None` for a probe without `restart_after`.
    pub(crate) fn restart_due(&self) -> Option<(Duration, Option<Duration>)> {
        let after = self.policy().restart_after?;
        Some((after, self.state.failing_for()))
    }

    /// The runtime of a probe just registered under `orchestrator` (the
    /// registry's orchestrator timeout, which a default deadline is
    /// derived below): nothing run yet.
    pub(crate) fn new(r: ProbeRegistration, orchestrator: Option<Duration>) -> Self {
        let timeout = r.resolved_timeout(orchestrator);
        Self::with((r.name, r.settings, r.probe, r.depends_on.into()), timeout)
    }

    pub(super) fn with(facts: Facts, timeout: Duration) -> Self {
        let (name, settings, probe, depends_on) = facts;
        let ProbeSettings {
            tags,
            failure_status,
            policy,
            ..
        } = settings;
        let timeout_stated = settings.timeout.is_some();
        Self {
            depends_on,
            dependencies: Mutex::new(Box::default()),
            history: std::sync::OnceLock::new(),
            state: ProbeState::new(policy, timeout),
            log: ProbeLog::new(&name),
            policy: (policy != ExecutionPolicy::DEFAULT).then(|| Box::new(policy)),
            name,
            tags,
            timeout,
            timeout_stated,
            failure_status,
            probe,
        }
    }

    /// For a probe with the default deadline, a fresh runtime (nothing
    /// run yet) with the default for a newly set orchestrator timeout;
    /// `None` when the deadline was stated or does not change.
    pub(crate) fn retimed(&self, orchestrator: Duration) -> Option<Self> {
        let timeout = default_probe_timeout(Some(orchestrator));
        (!self.timeout_stated && timeout != self.timeout).then(|| {
            let facts = (
                self.name.clone(),
                self.settings(),
                self.probe.clone(),
                self.depends_on.clone(),
            );
            Self::with(facts, timeout)
        })
    }

    /// What this probe's history holds at `now_ms`, from `from_ms` on (0:
    /// all of it); empty before its first recorded result. Reads only:
    /// never runs the probe.
    pub(crate) fn history_view(&self, now_ms: u64, from_ms: u64) -> ProbeView {
        self.history
            .get()
            .map_or_else(ProbeView::empty, |h| h.view_since(now_ms, from_ms))
    }

    /// Records a reported entry in the history while it is enabled: one
    /// relaxed load otherwise, and no allocation after the first.
    /// `starting`: the service's startup gates are pending, so a change is
    /// no transition, as in the transition log.
    #[inline]
    pub(super) fn remember_history(
        &self,
        shared: &RunContext,
        entry: &HealthEntry,
        starting: bool,
    ) {
        if shared.history.load(Ordering::Relaxed) {
            self.history.get_or_init(ProbeHistory::boxed).record(
                entry,
                crate::history::now_ms(),
                starting,
            );
        }
    }

    /// The settings this probe was registered with.
    pub(crate) fn settings(&self) -> ProbeSettings {
        ProbeSettings {
            tags: self.tags,
            timeout: self.timeout_stated.then_some(self.timeout),
            failure_status: self.failure_status,
            policy: *self.policy(),
        }
    }

    /// Whether a result of this probe is kept and served again (a cache or
    /// a background schedule), so a tier made of such probes can keep its
    /// rendered answer.
    pub(crate) fn keeps_results(&self) -> bool {
        self.policy().cache.is_some() || self.policy().refresh.is_some()
    }

    /// R19 and R20 for this probe's policy against a detection time.
    pub(crate) fn check_detection(&self, detection: Duration, sink: &mut Violations<()>) {
        self.policy()
            .check_detection(&self.name, self.timeout, Some(detection), sink);
    }

    /// Links this probe's `depends_on` names to the probes of `all` (the
    /// table's, after a change); a name no longer registered links to
    /// nothing and gates nothing.
    pub(crate) fn resolve_dependencies<'a>(
        &self,
        all: impl Iterator<Item = &'a Arc<ProbeRuntime>>,
    ) {
        if self.depends_on.is_empty() {
            return;
        }
        let all: Vec<&Arc<ProbeRuntime>> = all.collect();
        *lock(&self.dependencies) = self
            .depends_on
            .iter()
            .filter_map(|name| {
                all.iter()
                    .find(|p| p.name == *name && !std::ptr::eq(Arc::as_ptr(p), self))
            })
            .map(|p| Arc::downgrade(p))
            .collect();
    }

    /// The dependencies still registered, in `depends_on` order.
    pub(super) fn dependencies(&self) -> Vec<Arc<ProbeRuntime>> {
        if self.depends_on.is_empty() {
            return Vec::new();
        }
        lock(&self.dependencies)
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// Whether `entry`, this probe's, is a failure: its failure status
    /// (every failed run reports exactly that; a probe's own worse verdict
    /// is capped to it), so an optional dependency's `Degraded` is one,
    /// a held-back failure (`Healthy`) is not.
    #[inline]
    pub(super) fn is_failing(&self, status: HealthStatus) -> bool {
        status >= self.failure_status.status()
    }

    /// Whether `entry`, this probe's, stops its dependents:
    /// a failure here, including one a shared outage opened to `Degraded`
    /// (which its marked name tells); a held-back failure (`Healthy`) does
    /// not.
    #[inline]
    pub(super) fn failed(&self, entry: &HealthEntry) -> Failed {
        match self.state.opened.get() {
            Some(opened) if Arc::ptr_eq(&opened.name, &entry.name) => {
                Failed::SharedOutage(opened.tally())
            }
            _ if self.is_failing(entry.status) => Failed::Here,
            _ => Failed::No,
        }
    }
    /// An entry of this probe that reports no result of a run: a missed
    /// deadline, a lost execution, a background result missing or stale,
    /// a skipped run. No `data`, a fixed `description`: the one builder of
    /// such entries.
    pub(super) fn failed_entry(
        &self,
        status: HealthStatus,
        description: Cow<'static, str>,
        duration: Duration,
        outcome: EntryOutcome,
    ) -> HealthEntry {
        HealthEntry {
            name: self.name.clone(),
            status,
            description: Some(description),
            duration,
            data: None,
            outcome,
        }
    }

    /// `entry`, this probe's, opened to `Degraded` by the shared outage
    /// `tally`: carrying the probe's second name, so every copy of it (a
    /// flight's waiters, a background result) is known as a failure here
    /// that was opened, whatever its status says.
    pub(super) fn opened(&self, mut entry: HealthEntry, tally: Tally) -> HealthEntry {
        let opened = self.state.opened.get_or_init(|| {
            Box::new(Opened {
                name: Arc::from(&*self.name),
                tally: AtomicU64::new(0),
            })
        });
        opened.tally.store(
            u64::from(tally.failing) << 32 | u64::from(tally.reporting),
            Ordering::Relaxed,
        );
        entry.name = opened.name.clone();
        entry
    }

    /// Whether `entry`, this probe's, is an opened one ([`opened`](Self::opened)).
    #[inline]
    pub(super) fn is_opened(&self, entry: &HealthEntry) -> bool {
        self.state
            .opened
            .get()
            .is_some_and(|opened| Arc::ptr_eq(&opened.name, &entry.name))
    }

    /// The first dependency whose latest known entry stops this probe, and
    /// how, for a background run, which reads and never waits; a
    /// dependency that has no entry yet is not known to fail.
    #[inline]
    pub(super) fn failing_dependency_known(&self) -> Option<(Arc<ProbeRuntime>, Failed)> {
        self.dependencies().into_iter().find_map(|d| {
            let failed = match d.state.last_status.load(Ordering::Acquire) {
                OPENED => Failed::SharedOutage(d.state.opened.get()?.tally()),
                code => match slot_status(code) {
                    Some(status) if d.is_failing(status) => Failed::Here,
                    _ => Failed::No,
                },
            };
            match failed {
                Failed::No => None,
                failed => Some((d, failed)),
            }
        })
    }

    /// The execution in flight right now, if any, as the requests waiting
    /// on it and how long it has run: a flight, or a first poll under way
    /// (a check blocking its thread), whose waiters are the requests that
    /// arrived during it.
    pub(crate) fn in_flight(&self) -> Option<(usize, Duration)> {
        let slot = lock(&self.state.slot);
        let (waiting, started) = match &slot.run {
            RunState::Idle => return None,
            RunState::FirstPoll(first) => {
                let waiting = first
                    .handoff
                    .as_ref()
                    .map_or(0, |h| Arc::strong_count(h) - 1);
                (waiting, first.started)
            }
            RunState::Flight(current) => {
                // A flight nobody drives any more is over, whatever it recorded.
                let _alive = current.flight.upgrade()?;
                (current.crew.waiting.load(Ordering::SeqCst), current.started)
            }
        };
        Some((waiting, started.elapsed()))
    }
}

/// What a registration fixes about a probe, whatever its deadline.
pub(super) type Facts = (Arc<str>, ProbeSettings, Arc<dyn DynProbe>, Box<[Arc<str>]>);

/// The probe's kept result while it is the answer (a fresh cached result,
/// a background one within its staleness bound) and when it stops being
/// so; `None` when the request must go through the policy.
#[inline]
pub(super) fn kept_entry(probe: &ProbeRuntime) -> Option<(HealthEntry, Instant)> {
    let lifetime = match (probe.policy().refresh, probe.policy().cache) {
        // Its schedule must be running for the result to be refreshed.
        (Some(_), _) if !probe.state.task_running() => return None,
        (Some(_), _) => probe.state.max_staleness(),
        (None, Some(cache)) => cache,
        (None, None) => return None,
    };
    let slot = lock(&probe.state.slot);
    let (at, entry) = slot.last.as_deref()?;
    let expires = *at + lifetime;
    (Instant::now() < expires).then(|| (entry.clone(), expires))
}
