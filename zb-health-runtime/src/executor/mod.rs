//! The executor: runs a tier's probes, every one concurrently, each under
//! its deadline and a panic guard, within the registry's in-flight bound
//! (AT-2, AT-3, AT-4), and obtains each probe's result under its execution
//! policy (BE-HLTH-006): single-flight, the result cache, background probes.
//!
//! It owns each running probe's state (its flight, its last result, its
//! schedule, its log state) in a `ProbeRuntime` that the probe table
//! holds; observation ([`crate::observe`]) is a leaf it hands each run's
//! result to.
//!
//! # Single-flight (always on)
//!
//! Every run of a probe is claimed by the request that starts it, in the
//! probe's state, so every other request for the probe waits for that
//! run's result instead of starting one (`Run`).
//!
//! * **The first poll is the fast path.** The request that
//!   claims a run polls the check once, at once, with the probe thread's
//!   runtime entered (see `thread`) and under the panic guard, after
//!   taking an in-flight slot without waiting (one atomic). A check that
//!   answers then (nearly every probe on nearly every request) costs no
//!   deadline timer, no shared future, no task and no thread hop; a
//!   request that arrives during that poll (the check blocks its thread)
//!   is handed the result at its end (`Handoff`), within its own
//!   deadline.
//! * **A run that waits becomes a *flight*:** a `futures_util`
//!   [`Shared`](futures_util::future::Shared) future holding the in-flight
//!   slot, the deadline and the panic guard around the rest of the check.
//!   The probe's state keeps only a *weak* reference to it; every request
//!   that wants the probe's result upgrades it and awaits a strong clone.
//!   The flight is moved to the probe thread, where its timers and I/O
//!   were registered, so it finishes on its own time whichever runtime
//!   asked, and however blocked that runtime is (BE-HLTH-006: a handler
//!   that blocks an application worker cannot stall the management port's
//!   answer). Every waiter, on any runtime, only waits for the result. Two
//!   workers asking at once share one run, because the state lives in the
//!   registry they share, not in a runtime. A registry built with
//!   [`probes_on_caller_runtime`](crate::registry::HealthRegistryBuilder::probes_on_caller_runtime)
//!   keeps the whole flight on the runtime of the request that started it,
//!   for tests on tokio's paused clock.
//! * **Nothing abandoned.** When the last waiter drops, the last strong
//!   reference goes, the flight (and the probe's future in it, or its task
//!   on the probe thread, which is aborted) is dropped, which cancels it.
//!   The run is retired only when the execution's future is really gone
//!   (`Retiring`): an abort takes effect later, on the probe thread, so a
//!   request that finds the flight abandoned but not yet dropped waits for
//!   that (within its deadline) before it starts afresh. So a hung
//!   dependency has at most **one** execution alive, whatever the request
//!   rate, and none once nobody is waiting.
//! * **Deadline.** The flight runs under the probe's deadline, counted from
//!   its start. A late joiner therefore waits at most the *remaining* time
//!   of the flight it joins, never longer than its own deadline would
//!   allow, and gets that flight's answer (possibly `timed out` after a
//!   short wait). Starting a second execution for the late joiner instead
//!   would break "at most one in flight" exactly when a dependency hangs.
//! * **Bound and panics inside.** The in-flight slot (`max_in_flight`) is
//!   taken before the first poll, which may already open a connection, and
//!   kept by the flight, so one run holds one slot however many requests
//!   wait on it, given back only after the check's future is dropped
//!   (`Holding`); with no slot free, the run is a flight that waits for one
//!   (within its deadline) before its first poll. The `catch_unwind` guard
//!   is around every poll, so a panicking probe never poisons the shared
//!   future.
//!
//! Every waiter also keeps the flight's deadline on its *own* runtime and
//! answers `timed out` at it whatever the flight does: a probe that blocks
//! the probe thread itself (synchronous code in an `async` check) cannot
//! stretch any answer past its deadline either. A waiter whose timer
//! notices the deadline before the flight's own (on another runtime, its
//! timer may fire first) ends the run there as a timeout, **once for
//! all** (`Crew::ended`): the hysteresis, the shared comparison and the
//! log see that run exactly once, whoever noticed, and every waiter
//! answers with its entry. Otherwise a waiter would answer a raw
//! `timed out` and, as the flight's last waiter, cancel the run before it
//! was recorded: a hung shared dependency would never be published as
//! failing, and would not fail open (BE-HLTH-003).
//!
//! # Transitions before the start
//!
//! While a startup gate is pending, the ready tier answers 503 `starting`
//! whatever the probes say, and a dependency that is not there yet (a table
//! the migrations create, a cluster still forming) is part of a normal
//! start. Such runs are measured (status gauge, duration) but are not
//! transitions: nothing is logged or counted as a failure until the gates
//! open (BE-HLTH-008, see [`crate::observe`]).
//!
//! # Result cache (`cache`)
//!
//! A healthy result younger than `cache` is served without running the
//! probe; the entry is the original one, `durationMs` included. A result
//! that is not healthy (a failure, a timeout, a degraded answer) is never
//! served from the cache and clears it: the next request runs the probe
//! again, so a two-second blip costs two seconds, not `cache`. A failing or
//! hung dependency is still not hit by every request: single flight joins
//! every concurrent request to one run, so it sees at most one execution
//! at a time (see `spec/probes.md` and `spec/conflicts.md`). `cache` is
//! below the orchestrator's detection time (R19), so a cached healthy
//! answer hides an outage no longer than the orchestrator would miss it.
//!
//! # Hysteresis (`failure_threshold`, `failing_for`, `success_threshold`)
//!
//! Each run's raw result passes through the probe's hysteresis state
//! (`hysteresis`) before it becomes the entry, the cached or background
//! result and the input of the transition log, so a held-back failure is
//! no transition (BE-HLTH-008). The hold is bounded by R20, and counted in
//! the probe's run periods, not runs: `refresh`, else the
//! readiness period behind the registry's detection time, which the table
//! gives the executor (`Executor::set_detection_time`).
//!
//! # Background probes (`refresh`)
//!
//! The probe runs on its own schedule (one run every `refresh`, counted
//! from each run's start; a run longer than that delays the next) and a
//! request only reads the latest result: it never waits and never starts
//! a run. Every outcome is recorded, a timeout included. A result older
//! than `max_staleness` (default: twice `refresh` plus the deadline,
//! [`background_max_age`]; below the detection time, R19) is
//! reported with the probe's failure status and [the fixed stale
//! description](stale_description). Before the first result, a request
//! gets the failure status and [`NO_RESULT_YET_DESCRIPTION`]: the honest
//! answer, and a readiness probe simply retries. Both entries have the
//! outcome [`EntryOutcome::TimedOut`] (no result within the bound) and a
//! zero duration (nothing ran for this request).
//!
//! The schedule is a tokio task on the probe thread, started when the
//! probe is added (at `install`, for a manifest), so the first answer
//! after the startup gates open is already a measured one. With
//! `probes_on_caller_runtime` it starts on the runtime of the first
//! request that reads the probe instead (a runtime always exists there;
//! `add` may run before any), and if that runtime shuts down, the next
//! request starts it again on its own. The task holds only weak references between runs and
//! a stop signal owned by the registration, so it ends as soon as the
//! registration is removed or replaced or the registry is dropped (a run
//! under way finishes first, within its deadline); it never keeps either
//! alive.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Either, WeakShared, select};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tracing::instrument::WithSubscriber;

use futures_util::future::join_all;
use std::sync::atomic::AtomicU64;
use zb_health_spec::detection::{background_max_age, default_probe_timeout};
use zb_health_spec::{FailureStatus, HealthStatus, Tag, TagSet, Violations};

use crate::history::{ProbeHistory, ProbeView};
use crate::observe::{ProbeLog, RunError};
use crate::probe::{BoxProbeFuture, DynProbe, ProbeOutcome};
use crate::registration::{Policy, ProbeRegistration};
use crate::report::{
    ERRORED_DESCRIPTION, EntryOutcome, HealthEntry, HealthReport, PANICKED_DESCRIPTION,
    timeout_description,
};
use crate::shared::{SharedVerdicts, Tally, skipped_in_shared_outage_description};
use crate::sync::lock;

/// The fixed description of a background probe's entry before its first
/// run has finished.
pub const NO_RESULT_YET_DESCRIPTION: &str = "no result yet";

/// The fixed description of a background probe's entry whose latest result
/// is older than `max_staleness`: `stale: no result for over N ms`, with
/// the probe's `max_staleness`.
pub fn stale_description(max_staleness: Duration) -> String {
    format!("stale: no result for over {} ms", max_staleness.as_millis())
}

/// The description of an entry skipped because a dependency is failing:
/// `skipped: <dependency> failing` (`depends_on`).
pub fn skipped_description(dependency: &str) -> String {
    format!("skipped: {dependency} failing")
}

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
    failure_status: FailureStatus,
    probe: Arc<dyn DynProbe>,
    /// `None` for the default policy (no cache, schedule, threshold or
    /// sharing: most probes), so those keep one pointer, not a whole
    /// policy; read through [`policy`](Self::policy).
    policy: Option<Box<Policy>>,
    /// Single-flight, cache and schedule state (BE-HLTH-006).
    state: ProbeState,
    /// Transition-log state (BE-HLTH-008): goes with the registration.
    log: ProbeLog,
    /// The names of the probes this one depends on (`depends_on`).
    /// A boxed slice: empty, it allocates nothing (an empty `Arc<[_]>`
    /// still allocates its counts).
    pub(crate) depends_on: Box<[Arc<str>]>,
    /// Those probes as the table holds them now: weak, so a dependency's
    /// removal frees it; found again by name at every table change.
    dependencies: Mutex<Box<[Weak<ProbeRuntime>]>>,
    /// Its history, allocated at its first result once history
    /// is enabled on the registry; never before, never again.
    history: std::sync::OnceLock<Box<ProbeHistory>>,
}

impl ProbeRuntime {
    /// The probe's execution policy.
    fn policy(&self) -> &Policy {
        self.policy.as_deref().unwrap_or(&Policy::DEFAULT)
    }

    /// The runtime of a probe just registered under `orchestrator` (the
    /// registry's orchestrator timeout, which a default deadline is
    /// derived below): nothing run yet.
    pub(crate) fn new(r: ProbeRegistration, orchestrator: Option<Duration>) -> Self {
        let timeout = r.resolved_timeout(orchestrator);
        let stated = r.timeout.is_some();
        Self::with(
            (
                r.name,
                r.tags,
                r.failure_status,
                r.probe,
                r.policy,
                r.depends_on.into(),
            ),
            timeout,
            stated,
        )
    }

    fn with(facts: Facts, timeout: Duration, timeout_stated: bool) -> Self {
        let (name, tags, failure_status, probe, policy, depends_on) = facts;
        Self {
            depends_on,
            dependencies: Mutex::new(Box::default()),
            history: std::sync::OnceLock::new(),
            state: ProbeState::new(policy, timeout),
            log: ProbeLog::new(&name),
            policy: (policy != Policy::DEFAULT).then(|| Box::new(policy)),
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
                self.tags,
                self.failure_status,
                self.probe.clone(),
                *self.policy(),
                self.depends_on.clone(),
            );
            Self::with(facts, timeout, false)
        })
    }

    /// What this probe's history holds at `now_ms`; empty before its first
    /// recorded result. Reads only: never runs the probe.
    pub(crate) fn history_view(&self, now_ms: u64) -> ProbeView {
        self.history
            .get()
            .map_or_else(ProbeView::empty, |h| h.view(now_ms))
    }

    /// Records a reported entry in the history while it is enabled: one
    /// relaxed load otherwise, and no allocation after the first.
    /// `starting`: the service's startup gates are pending, so a change is
    /// no transition, as in the transition log.
    fn remember_history(&self, shared: &Shared, entry: &HealthEntry, starting: bool) {
        if shared.history.load(Ordering::Relaxed) {
            self.history.get_or_init(ProbeHistory::boxed).record(
                entry,
                crate::history::now_ms(),
                starting,
            );
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
    fn dependencies(&self) -> Vec<Arc<ProbeRuntime>> {
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
    fn is_failing(&self, status: HealthStatus) -> bool {
        status >= self.failure_status.status()
    }

    /// Whether `entry`, this probe's, stops its dependents:
    /// a failure here, including one a shared outage opened to `Degraded`
    /// (which its marked name tells); a held-back failure (`Healthy`) does
    /// not.
    fn failed(&self, entry: &HealthEntry) -> Failed {
        match self.state.opened.get() {
            Some(opened) if Arc::ptr_eq(&opened.name, &entry.name) => {
                Failed::SharedOutage(opened.tally())
            }
            _ if self.is_failing(entry.status) => Failed::Here,
            _ => Failed::No,
        }
    }

    /// `entry`, this probe's, opened to `Degraded` by the shared outage
    /// `tally`: carrying the probe's second name, so every copy of it (a
    /// flight's waiters, a background result) is known as a failure here
    /// that was opened, whatever its status says.
    fn opened(&self, mut entry: HealthEntry, tally: Tally) -> HealthEntry {
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
    fn is_opened(&self, entry: &HealthEntry) -> bool {
        self.state
            .opened
            .get()
            .is_some_and(|opened| Arc::ptr_eq(&opened.name, &entry.name))
    }

    /// The first dependency whose latest known entry stops this probe, and
    /// how, for a background run, which reads and never waits; a
    /// dependency that has no entry yet is not known to fail.
    fn failing_dependency_known(&self) -> Option<(Arc<ProbeRuntime>, Failed)> {
        self.dependencies().into_iter().find_map(|d| {
            let failed = match d.state.last_status.load(Ordering::Acquire) {
                OPENED => Failed::SharedOutage(d.state.opened.get()?.tally()),
                code => match status_of(code) {
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

    /// The execution in flight right now, if any: a flight, or a first
    /// poll under way (a check blocking its thread), whose waiters are
    /// the requests that arrived during it.
    pub(crate) fn in_flight(&self) -> Option<InFlight> {
        let slot = lock(&self.state.slot);
        let (waiting, started) = match &slot.run {
            Run::Idle => return None,
            Run::FirstPoll(first) => {
                let waiting = first
                    .handoff
                    .as_ref()
                    .map_or(0, |h| Arc::strong_count(h) - 1);
                (waiting, first.started)
            }
            Run::Flight(current) => {
                // A flight nobody drives any more is over, whatever it recorded.
                let _alive = current.flight.upgrade()?;
                (current.crew.waiting.load(Ordering::SeqCst), current.started)
            }
        };
        Some(InFlight {
            name: self.name.clone(),
            waiting,
            running_for: started.elapsed(),
        })
    }
}

/// What a registration fixes about a probe, whatever its deadline.
type Facts = (
    Arc<str>,
    TagSet,
    FailureStatus,
    Arc<dyn DynProbe>,
    Policy,
    Box<[Arc<str>]>,
);

/// A probe execution under way, from
/// [`HealthRegistry::in_flight`](crate::HealthRegistry::in_flight): which
/// dependency is slow right now, and how many requests wait on it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InFlight {
    /// The probe's registered name.
    pub name: Arc<str>,
    /// Requests waiting on this one execution (single flight): one
    /// execution however many wait.
    pub waiting: usize,
    /// How long it has run; never past the probe's deadline.
    pub running_for: Duration,
}

/// Whether the service is still starting (its startup gates pending):
/// runs before the gates open are not transitions to log.
pub(crate) type Starting = Box<dyn Fn() -> bool + Send + Sync>;

/// What every run shares: the in-flight bound, the log interval, where
/// executions run and whether the service is still starting.
struct Shared {
    limiter: Limiter,
    /// In nanoseconds; an atomic so a manifest's `install` can set it on
    /// the process registry after it is built.
    failure_log_interval: AtomicU64,
    runs: Runs,
    starting: Starting,
    /// Where shared probes compare their verdicts (BE-HLTH-003), with how
    /// many times it was set; read only by a shared probe's run.
    verdicts: std::sync::RwLock<Option<(u64, Arc<dyn SharedVerdicts>)>>,
    /// Whether each reported entry goes into its probe's history.
    history: AtomicBool,
    /// The registry's detection time in nanoseconds (0: none known), which
    /// a request-driven probe's threshold counts periods of.
    detection: AtomicU64,
}

impl Shared {
    /// The period a probe's threshold counts (R20's
    /// [`run_period`](zb_health_spec::detection::run_period)): `refresh`,
    /// else the readiness period behind the detection time; zero (every
    /// run counts) for a request-driven probe while none is known.
    fn run_period(&self, refresh: Option<Duration>) -> Duration {
        let detection = Duration::from_nanos(self.detection.load(Ordering::Relaxed));
        zb_health_spec::detection::run_period(refresh, detection)
    }
}

/// Runs probes. Cheap to clone; clones share the bound.
#[derive(Clone)]
pub(crate) struct Executor {
    shared: Arc<Shared>,
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos().try_into().unwrap_or(u64::MAX)
}

impl Executor {
    pub(crate) fn new(
        max_in_flight: usize,
        failure_log_interval: Duration,
        runs: Runs,
        starting: Starting,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                limiter: Limiter::new(max_in_flight),
                failure_log_interval: AtomicU64::new(nanos(failure_log_interval)),
                runs,
                starting,
                verdicts: std::sync::RwLock::new(None),
                history: AtomicBool::new(false),
                detection: AtomicU64::new(0),
            }),
        }
    }

    /// Publishes this node's ready verdict where the shared verdicts go,
    /// if they are set, so every member's history shows it.
    pub(crate) fn publish_ready(&self, status: HealthStatus) {
        let slot = self
            .shared
            .verdicts
            .read()
            .unwrap_or_else(|e| e.into_inner());
        if let Some((_, verdicts)) = &*slot {
            verdicts.publish_ready(status);
        }
    }

    pub(crate) fn set_shared_verdicts(&self, verdicts: Arc<dyn SharedVerdicts>) {
        let mut slot = self
            .shared
            .verdicts
            .write()
            .unwrap_or_else(|e| e.into_inner());
        // A new generation: every probe publishes to the new one afresh.
        let generation = slot.as_ref().map_or(1, |(g, _)| g + 1);
        *slot = Some((generation, verdicts));
    }

    /// The registry's detection time, which request-driven thresholds
    /// count periods of (set by the table with it, under its lock).
    pub(crate) fn set_detection_time(&self, detection: Duration) {
        self.shared
            .detection
            .store(nanos(detection), Ordering::Relaxed);
    }

    /// From now on every reported entry is recorded in its probe's
    /// history; there is no way back, a page may be open.
    pub(crate) fn enable_history(&self) {
        self.shared.history.store(true, Ordering::Relaxed);
    }

    /// Whether history is recorded.
    pub(crate) fn history_enabled(&self) -> bool {
        self.shared.history.load(Ordering::Relaxed)
    }

    /// Starts a background probe's schedule now, when it has one and the
    /// probe thread runs it, so the first answer after the gates open is
    /// already a measured one. On the caller's runtime it starts at the
    /// first request instead (a runtime is certain to exist only there).
    pub(crate) fn start(&self, probe: &Arc<ProbeRuntime>) {
        if probe.policy().refresh.is_some() && self.shared.runs == Runs::ProbeThread {
            ensure_task(probe, &self.shared);
        }
    }

    /// How often an unchanged failing state is logged again (BE-HLTH-008).
    pub(crate) fn failure_log_interval(&self) -> Duration {
        Duration::from_nanos(self.shared.failure_log_interval.load(Ordering::Relaxed))
    }

    pub(crate) fn set_failure_log_interval(&self, interval: Duration) {
        self.shared
            .failure_log_interval
            .store(nanos(interval), Ordering::Relaxed);
    }

    /// Runs every probe of `probes` (one tier's) and reports the result.
    ///
    /// The probes run concurrently on the calling task, so the tier takes
    /// as long as its slowest probe, never the sum. Each entry comes
    /// through the probe's execution policy: a shared flight, a cached or a
    /// background result.
    pub(crate) async fn report(&self, tier: Tag, probes: &[Arc<ProbeRuntime>]) -> HealthReport {
        self.report_until(tier, probes).await.0
    }

    /// [`report`](Self::report), and until when it holds as it is: `Some`
    /// exactly when every entry is a kept result (a fresh cached one, a
    /// background one within its staleness bound), then the earliest
    /// instant one of them expires. Until then, and while [`versions`] is
    /// unchanged, the same probes give the same report.
    ///
    /// Every probe is first asked in turn for its entry *now* (a kept
    /// result, or a run that answers at its first poll); only the probes
    /// that must be waited for are then awaited together.
    pub(crate) async fn report_until(
        &self,
        tier: Tag,
        probes: &[Arc<ProbeRuntime>],
    ) -> (HealthReport, Option<Instant>) {
        let started = Instant::now();
        if probes.iter().any(|p| !p.depends_on.is_empty()) {
            // A tier with a dependent is never kept whole: its entry
            // follows dependencies that may be in another tier, whose
            // results are not in this tier's `versions`.
            let mut memo = Vec::new();
            let evaluations: Vec<Flight> = probes
                .iter()
                .map(|p| self.evaluation(p, &mut memo, &mut Vec::new()))
                .collect();
            let entries = join_all(evaluations).await;
            return (HealthReport::new(tier, entries, started.elapsed()), None);
        }
        // `None` once any entry is not a kept one; an empty tier has
        // nothing to keep (and costs nothing to render).
        let mut until: Option<Option<Instant>> = Some(None);
        // The entries known now, in order; the report's own vector when
        // nothing waits (no second vector of 1,000 entries per request).
        let mut entries = Vec::with_capacity(probes.len());
        let mut waits = Vec::new();
        for (index, probe) in probes.iter().enumerate() {
            match self.now(probe) {
                Now::Entry(entry, expires) => {
                    until = match (until, expires) {
                        (Some(soonest), Some(e)) => Some(Some(soonest.map_or(e, |s| s.min(e)))),
                        _ => None,
                    };
                    entries.push(entry);
                }
                Now::Wait(wait) => {
                    until = None;
                    waits.push(wait.map(move |entry| (index, entry)));
                }
            }
        }
        if !waits.is_empty() {
            // In probe order: `join_all` answers in the order it was given.
            let mut waited = join_all(waits).await.into_iter().peekable();
            let mut known = entries.into_iter();
            entries = (0..probes.len())
                .filter_map(|index| match waited.next_if(|(i, _)| *i == index) {
                    Some((_, entry)) => Some(entry),
                    None => known.next(),
                })
                .collect();
        }
        (
            HealthReport::new(tier, entries, started.elapsed()),
            until.flatten(),
        )
    }

    /// The entry of one probe for one request, after its dependencies
    /// (`depends_on`): for the gRPC service's single-probe targets.
    #[cfg(feature = "grpc")]
    pub(crate) async fn entry_after_dependencies(&self, probe: &Arc<ProbeRuntime>) -> HealthEntry {
        if probe.depends_on.is_empty() {
            return self.entry(probe).await;
        }
        self.evaluation(probe, &mut Vec::new(), &mut Vec::new())
            .await
    }

    /// One request's evaluation of `probe`: its dependencies' first
    /// (every probe once per request, in `memo`, so a dependency in the
    /// same tier runs once and its dependents wait for that one run, not
    /// for a second deadline), then its own entry, or a skipped one while
    /// a dependency is failing, which never calls the probe. `path` holds
    /// the probes being evaluated above this one: R22 refuses cycles, and
    /// a link back is ignored rather than recursed into.
    fn evaluation(
        &self,
        probe: &Arc<ProbeRuntime>,
        memo: &mut Vec<(usize, Flight)>,
        path: &mut Vec<usize>,
    ) -> Flight {
        // The address identifies the probe for this request only.
        let key = Arc::as_ptr(probe) as usize;
        if let Some((_, e)) = memo.iter().find(|(p, _)| *p == key) {
            return e.clone();
        }
        path.push(key);
        let mut dependencies: Vec<(Arc<ProbeRuntime>, Flight)> = Vec::new();
        for d in probe.dependencies() {
            if !path.contains(&(Arc::as_ptr(&d) as usize)) {
                let e = self.evaluation(&d, memo, path);
                dependencies.push((d, e));
            }
        }
        path.pop();
        let executor = self.clone();
        let probe = probe.clone();
        let evaluation = async move {
            let (dependencies, evaluations): (Vec<_>, Vec<_>) = dependencies.into_iter().unzip();
            let entries = join_all(evaluations).await;
            // A dependency that failed here stops its dependents, also
            // when a shared outage opened its entry.
            let failing = dependencies
                .iter()
                .zip(&entries)
                .find_map(|(d, e)| match d.failed(e) {
                    Failed::No => None,
                    failed => Some((d, failed)),
                });
            match failing {
                Some((d, failed)) => executor.skip(&probe, &d.name, failed),
                None => executor.entry(&probe).await,
            }
        }
        .boxed()
        .shared();
        memo.push((key, evaluation.clone()));
        evaluation
    }

    /// The entry of a run skipped because `dependency` is failing (`failed`
    /// says how): the probe's failure status, [`skipped_description`],
    /// zero duration (nothing ran), [`EntryOutcome::Skipped`]; in a shared
    /// outage of the dependency `Degraded` instead, with
    /// [`skipped_in_shared_outage_description`], and marked opened, so its
    /// own dependents are skipped the same way. It is the probe's latest
    /// entry like a run's (it clears a cached result, is a background
    /// probe's result until its next run) and goes to the transition log
    /// as one (a skip is logged when the entry turns to it, then rate
    /// limited like any failing state); it bypasses the probe's own
    /// hysteresis, which counts the probe's own failures.
    fn skip(&self, probe: &ProbeRuntime, dependency: &str, failed: Failed) -> HealthEntry {
        let entry = |status, description| HealthEntry {
            name: probe.name.clone(),
            status,
            description: Some(Cow::Owned(description)),
            duration: Duration::ZERO,
            data: None,
            outcome: EntryOutcome::Skipped,
        };
        let entry = match failed {
            Failed::SharedOutage(tally) => probe.opened(
                entry(
                    HealthStatus::Degraded,
                    skipped_in_shared_outage_description(dependency, tally),
                ),
                tally,
            ),
            Failed::Here | Failed::No => entry(
                probe.failure_status.status(),
                skipped_description(dependency),
            ),
        };
        remember(probe, &mut lock(&probe.state.slot), &entry, false);
        let starting = (self.shared.starting)();
        probe.remember_history(&self.shared, &entry, starting);
        let interval = self.failure_log_interval();
        probe.log.ran(&entry, &RunError::None, interval, starting);
        entry
    }
}

/// The sum of the probes' kept-result versions: each grows whenever its
/// probe's kept result is stored or cleared, so over one table the sum is
/// unchanged exactly while no kept result changed.
pub(crate) fn versions(probes: &[Arc<ProbeRuntime>]) -> u64 {
    probes.iter().fold(0u64, |sum, p| {
        sum.wrapping_add(p.state.version.load(Ordering::Acquire))
    })
}

/// The probe's kept result while it is the answer (a fresh cached result,
/// a background one within its staleness bound) and when it stops being
/// so; `None` when the request must go through the policy.
fn kept_entry(probe: &ProbeRuntime) -> Option<(HealthEntry, Instant)> {
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

/// One probe's runtime state: its flight, its last result, its schedule.
struct ProbeState {
    slot: Mutex<Slot>,
    /// A background probe's schedule (`refresh`); boxed, and `None` for
    /// every other probe.
    background: Option<Box<Background>>,
    /// Grows whenever `slot.last` is stored or cleared (see [`versions`]).
    version: AtomicU64,
    /// Between each run's raw result and its entry (R20 bounds its hold).
    hysteresis: Hysteresis,
    /// The shared-probe verdict last published, with the generation of
    /// the verdicts it went to (0: none yet).
    published: AtomicU64,
    /// The status of the latest entry a run (or a skip) gave: what a
    /// background dependent reads of this probe. One byte
    /// (0: none yet, [`OPENED`] for an opened entry, else
    /// [`status_code`]), so a run stores it without a lock.
    last_status: std::sync::atomic::AtomicU8,
    /// What marks this probe's opened entries, made at the
    /// first; boxed, since most probes are never opened.
    opened: std::sync::OnceLock<Box<Opened>>,
}

/// How a dependency's entry bears on its dependents.
#[derive(Clone, Copy)]
enum Failed {
    /// Not failing (a held-back failure included): they run.
    No,
    /// Failing here with its failure status: they are skipped with theirs.
    Here,
    /// Failing here, opened to `Degraded` by a shared outage with this
    /// tally: they are skipped as `Degraded`.
    SharedOutage(Tally),
}

/// The marker of a probe's entries whose failure here a shared outage
/// opened to `Degraded`.
struct Opened {
    /// The probe's name in a second allocation: an opened entry carries
    /// this one, so every copy of it is known as opened while its text
    /// stays the name (`HealthEntry` is public and has no room for a flag).
    name: Arc<str>,
    /// The tally of the latest opening, `failing << 32 | reporting`.
    tally: AtomicU64,
}

impl Opened {
    fn tally(&self) -> Tally {
        let t = self.tally.load(Ordering::Relaxed);
        Tally {
            failing: (t >> 32) as u32,
            reporting: t as u32,
        }
    }
}

/// The [`ProbeState::last_status`] of an opened entry (`Degraded`, and a
/// failure here).
const OPENED: u8 = 4;

/// A status from its [`status_code`] (or [`OPENED`], `Degraded`).
fn status_of(code: u8) -> Option<HealthStatus> {
    match code {
        1 => Some(HealthStatus::Healthy),
        2 | OPENED => Some(HealthStatus::Degraded),
        3 => Some(HealthStatus::Unhealthy),
        _ => None,
    }
}

/// A status as one byte, never 0.
fn status_code(status: HealthStatus) -> u8 {
    match status {
        HealthStatus::Healthy => 1,
        HealthStatus::Degraded => 2,
        HealthStatus::Unhealthy => 3,
    }
}

#[derive(Default)]
struct Slot {
    run: Run,
    /// The last finished run and when it finished, for a probe that keeps
    /// results (cache, background): boxed, so the many probes that keep
    /// none carry one pointer, not a whole entry.
    last: Option<Box<(Instant, HealthEntry)>>,
    next_generation: u64,
}

/// The probe's run under way, if any.
#[derive(Default)]
enum Run {
    #[default]
    Idle,
    /// A request is polling a new run for the first time, right now.
    FirstPoll(FirstPoll),
    /// A run that did not answer at its first poll.
    Flight(CurrentFlight),
}

struct FirstPoll {
    generation: u64,
    started: Instant,
    /// Made by the first request to arrive during the poll.
    handoff: Option<Arc<Handoff>>,
}

struct CurrentFlight {
    generation: u64,
    flight: WeakShared<BoxFuture<'static, HealthEntry>>,
    crew: Arc<Crew>,
    started: Instant,
}

impl ProbeState {
    /// Whether the background schedule is running (its task alive).
    fn task_running(&self) -> bool {
        self.background
            .as_ref()
            .is_some_and(|b| lock(&b.task).as_ref().is_some_and(|stop| !stop.is_closed()))
    }

    /// How old a background result may be; zero for other probes.
    fn max_staleness(&self) -> Duration {
        self.background
            .as_ref()
            .map_or(Duration::ZERO, |b| b.max_staleness)
    }

    fn new(policy: Policy, timeout: Duration) -> Self {
        let background = policy.refresh.map(|r| {
            Box::new(Background {
                task: Mutex::new(None),
                max_staleness: background_max_age(r, policy.max_staleness, timeout),
            })
        });
        Self {
            slot: Mutex::new(Slot::default()),
            background,
            version: AtomicU64::new(0),
            hysteresis: Hysteresis::new(policy.threshold),
            published: AtomicU64::new(0),
            last_status: std::sync::atomic::AtomicU8::new(0),
            opened: std::sync::OnceLock::new(),
        }
    }
}

/// What only a background probe keeps.
struct Background {
    /// `Some` while its task may be running; dropping it (with the
    /// registration) stops the task.
    task: Mutex<Option<oneshot::Sender<()>>>,
    max_staleness: Duration,
}

/// What a flight's waiters share besides the flight.
#[derive(Default)]
struct Crew {
    /// How many wait now.
    waiting: AtomicUsize,
    /// The run's entry, set once by whoever ends the run first: the
    /// flight, or a waiter whose timer noticed the run's deadline before
    /// the flight's own did (it may run on another runtime). So a run that
    /// reaches its deadline is finished (hysteresis, shared comparison,
    /// log) exactly once, and every waiter answers with that entry, not
    /// with a raw timeout of its own.
    ended: std::sync::OnceLock<HealthEntry>,
    /// Notified when the flight's execution is dropped ([`Retiring`]).
    retired: tokio::sync::Notify,
}

/// Counts one waiter of a flight for as long as it waits.
struct Waiting(Arc<Crew>);

impl Waiting {
    fn new(crew: Arc<Crew>) -> Self {
        crew.waiting.fetch_add(1, Ordering::SeqCst);
        Self(crew)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A probe's entry for one request, as far as it is known at once.
enum Now<'a> {
    /// Known now: a kept result (and when it expires), a background one, or
    /// a run that answered at its first poll (`None`).
    Entry(HealthEntry, Option<Instant>),
    /// To be waited for: a flight still running, or the first poll of
    /// another request's run.
    Wait(BoxFuture<'a, HealthEntry>),
}

/// What a request does about a probe with no kept result.
enum Turn {
    /// Start a run: nobody else is running it.
    Own(u64, Instant),
    /// Wait on the flight under way, which started then.
    Join(Flight, Arc<Crew>, Instant),
    /// Wait on another request's first poll, which started then.
    Handoff(Arc<Handoff>, Instant),
    /// Wait until an abandoned flight's execution is dropped, then take a
    /// turn again.
    Retiring(Arc<Crew>),
}

/// One entry awaited by several: a run's flight (every request for the
/// probe waits on it), and a probe's evaluation within one tier request
/// (its dependents wait on it, `Executor::evaluation`).
type Flight = futures_util::future::Shared<BoxFuture<'static, HealthEntry>>;

/// How a first poll hands its result to the requests that arrived during
/// it (single flight, without a flight: a probe that answers at once
/// needs no shared future). Made only when a request does arrive.
#[derive(Default)]
struct Handoff {
    handed: std::sync::OnceLock<Handed>,
    notify: tokio::sync::Notify,
}

enum Handed {
    /// The run answered at its first poll.
    Entry(HealthEntry),
    /// The run waits: join its flight.
    Flight(Flight, Arc<Crew>),
}

impl Handoff {
    fn hand(&self, handed: Handed) {
        // Set once, by the claim's owner or its guard, then read by all.
        let _ = self.handed.set(handed);
        self.notify.notify_waiters();
    }
}

impl Executor {
    /// The entry of one probe for one request, under its policy: the
    /// background result, a fresh cached one, or the run's (its own, or
    /// the one it joins). For one probe alone (the gRPC health service's
    /// targets); a tier's report asks [`now`](Self::now) for each.
    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    pub(crate) async fn entry(&self, probe: &Arc<ProbeRuntime>) -> HealthEntry {
        match self.now(probe) {
            Now::Entry(entry, _) => entry,
            Now::Wait(wait) => wait.await,
        }
    }

    /// The entry of `probe` if it is known without waiting, else what to
    /// wait for. Never blocks, except on the probe's own first poll.
    fn now<'a>(&'a self, probe: &'a Arc<ProbeRuntime>) -> Now<'a> {
        self.turn(probe, None)
    }

    /// [`now`](Self::now) for a request that arrived at `arrived` (`None`:
    /// now) and waited since for an abandoned flight to retire: a run it
    /// starts counts its deadline from the arrival, so the request
    /// answers within its own deadline through the run.
    fn turn<'a>(&'a self, probe: &'a Arc<ProbeRuntime>, arrived: Option<Instant>) -> Now<'a> {
        if let Some((entry, expires)) = kept_entry(probe) {
            return Now::Entry(entry, Some(expires));
        }
        if probe.policy().refresh.is_some() {
            ensure_task(probe, &self.shared);
            return Now::Entry(background_entry(probe), None);
        }
        let turn = {
            let mut slot = lock(&probe.state.slot);
            match &mut slot.run {
                Run::Flight(current) => match current.flight.upgrade() {
                    Some(flight) => Turn::Join(flight, current.crew.clone(), current.started),
                    // Abandoned, but its execution is still being dropped
                    // (an aborted task on the probe thread): a new run now
                    // would be a second execution alive at once.
                    None => Turn::Retiring(current.crew.clone()),
                },
                Run::FirstPoll(first) => {
                    let handoff = first.handoff.get_or_insert_with(Default::default);
                    Turn::Handoff(handoff.clone(), first.started)
                }
                Run::Idle => claim(&mut slot, arrived),
            }
        };
        match turn {
            Turn::Own(generation, started) => self.first_poll(probe, generation, started),
            Turn::Join(flight, crew, started) => {
                Now::Wait(join(&self.shared, probe, flight, crew, started).boxed())
            }
            Turn::Retiring(crew) => {
                self.after_retirement(probe, crew, arrived.unwrap_or_else(Instant::now))
            }
            Turn::Handoff(handoff, started) => Now::Wait(
                async move {
                    match wait_handoff(&handoff, started + probe.timeout).await {
                        Some(Handed::Entry(entry)) => entry.clone(),
                        Some(Handed::Flight(flight, crew)) => {
                            join(&self.shared, probe, flight.clone(), crew.clone(), started).await
                        }
                        None => waited_out(probe, started),
                    }
                }
                .boxed(),
            ),
        }
    }

    /// The entry of a request that found the probe's flight abandoned but
    /// its execution not yet dropped: it waits for that (on the probe
    /// thread, an abort takes effect at the task's next turn there), then
    /// takes its turn, all within the probe's deadline from its arrival
    /// (`arrived`): a run it starts then is counted from the arrival. So a
    /// probe's next execution never starts while the previous one's future
    /// is alive (single flight, exactly).
    fn after_retirement<'a>(
        &'a self,
        probe: &'a Arc<ProbeRuntime>,
        crew: Arc<Crew>,
        arrived: Instant,
    ) -> Now<'a> {
        let retirement = async move {
            loop {
                let mut notified = pin!(crew.retired.notified());
                // Registered before the check, so a retirement between the
                // two still wakes this request.
                notified.as_mut().enable();
                let retiring = matches!(
                    &lock(&probe.state.slot).run,
                    Run::Flight(c) if Arc::ptr_eq(&c.crew, &crew)
                );
                if !retiring {
                    break;
                }
                notified.await;
            }
        };
        Now::Wait(
            async move {
                let deadline = arrived + probe.timeout;
                if tokio::time::timeout_at(deadline, retirement).await.is_err() {
                    // Still not dropped (the probe thread is blocked).
                    return waited_out(probe, arrived);
                }
                // Every wait from here ends by `deadline` or earlier: its
                // own run's, or the deadline of a flight it joins.
                match self.turn(probe, Some(arrived)) {
                    Now::Entry(entry, _) => entry,
                    Now::Wait(wait) => wait.await,
                }
            }
            .boxed(),
        )
    }

    /// Starts a run: its first poll here and now, with the probe thread's
    /// runtime entered and under the panic guard, but with no deadline
    /// timer. A probe that answers at once (nearly every probe on nearly
    /// every request) needs none; one that waits becomes a flight, which
    /// arms it. The in-flight slot is taken first, without
    /// waiting (one atomic), since a first poll may already open a
    /// connection; with none free, the run is a flight that waits for one.
    fn first_poll<'a>(
        &'a self,
        probe: &'a Arc<ProbeRuntime>,
        generation: u64,
        started: Instant,
    ) -> Now<'a> {
        let mut claim = ClaimGuard {
            probe,
            generation,
            started,
            armed: true,
        };
        let Some(slot) = self.shared.limiter.try_take() else {
            let check = probe.probe.clone().check_owned();
            return self.take_off(probe, generation, started, check, None, claim);
        };
        let polled = {
            let _probe_runtime = self.shared.runs.handle().map(|h| h.enter());
            // `check_owned` is called inside the guard, so a panic in a
            // check's synchronous part is caught like one in its `async`
            // part (AT-3). The waker is never used: a pending check is
            // polled again at once by its flight, and only the latest
            // poll's waker counts.
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                let mut check = probe.probe.clone().check_owned();
                let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                match check.as_mut().poll(&mut cx) {
                    std::task::Poll::Ready(outcome) => Ok(outcome),
                    std::task::Poll::Pending => Err(check),
                }
            }))
        };
        let pending = match polled {
            Ok(Ok(outcome)) => Ok(Ok(outcome)),
            Err(panic) => Ok(Err(panic)),
            Ok(Err(pending)) => Err(pending),
        };
        match pending {
            Ok(result) => {
                drop(slot);
                let entry = finish(&self.shared, probe, Some(generation), Ok(result), started);
                claim.armed = false;
                Now::Entry(entry, None)
            }
            Err(pending) => {
                // The flight keeps the slot until it ends.
                std::mem::forget(slot);
                let held = HeldSlot(self.shared.clone());
                self.take_off(probe, generation, started, pending, Some(held), claim)
            }
        }
    }

    /// Makes the claimed run a flight (`held`: with the in-flight slot its
    /// first poll took), hands it to the requests that arrived during the
    /// claim, and joins it.
    fn take_off<'a>(
        &'a self,
        probe: &'a Arc<ProbeRuntime>,
        generation: u64,
        started: Instant,
        check: BoxProbeFuture<'static>,
        held: Option<HeldSlot>,
        mut claim: ClaimGuard<'_>,
    ) -> Now<'a> {
        let crew = Arc::new(Crew::default());
        let flight = self.flight(probe, generation, started, check, held, &crew);
        let handoff = {
            let mut slot = lock(&probe.state.slot);
            match std::mem::replace(&mut slot.run, Run::Idle) {
                Run::FirstPoll(first) if first.generation == generation => {
                    slot.run = Run::Flight(CurrentFlight {
                        generation,
                        // `downgrade` fails only for a finished flight.
                        flight: flight.downgrade().expect("a new flight is pending"),
                        crew: crew.clone(),
                        started,
                    });
                    first.handoff
                }
                other => {
                    slot.run = other;
                    None
                }
            }
        };
        claim.armed = false;
        if let Some(handoff) = handoff {
            handoff.hand(Handed::Flight(flight.clone(), crew.clone()));
        }
        Now::Wait(join(&self.shared, probe, flight, crew, started).boxed())
    }

    /// The flight of a run whose first poll is pending (or not yet made):
    /// the in-flight slot, the deadline and the panic guard around the
    /// rest of it, moved to the probe thread if it waits.
    fn flight(
        &self,
        probe: &Arc<ProbeRuntime>,
        generation: u64,
        started: Instant,
        pending: BoxProbeFuture<'static>,
        held: Option<HeldSlot>,
        crew: &Arc<Crew>,
    ) -> Flight {
        let work = Retiring {
            work: Some(
                execute(
                    self.shared.clone(),
                    probe.clone(),
                    generation,
                    started,
                    pending,
                    held,
                    Some(crew.clone()),
                )
                .boxed(),
            ),
            probe: probe.clone(),
            generation,
            crew: crew.clone(),
        };
        match self.shared.runs.handle() {
            Some(handle) => {
                let probe = probe.clone();
                // The asker's subscriber (a test's local one) sees the
                // run's lines wherever it runs.
                let work = work.with_current_subscriber();
                Execution::new(work.boxed(), handle)
                    .map(move |run| {
                        run.unwrap_or_else(|_lost| {
                            let entry = lost(&probe, started.elapsed());
                            record(&probe, Some(generation), &entry, false);
                            entry
                        })
                    })
                    .boxed()
            }
            None => work.boxed(),
        }
        .shared()
    }
}

/// A flight's execution, which retires the flight (the probe's next run
/// may start) only once its future is dropped: finished, or cancelled
/// wherever it runs. A finished run has retired it already
/// (`execute`), after its check's future was dropped.
struct Retiring {
    work: Option<BoxFuture<'static, HealthEntry>>,
    probe: Arc<ProbeRuntime>,
    generation: u64,
    crew: Arc<Crew>,
}

impl Future for Retiring {
    type Output = HealthEntry;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<HealthEntry> {
        match self.get_mut().work.as_mut() {
            Some(work) => work.as_mut().poll(cx),
            None => unreachable!("the work is taken only when dropped"),
        }
    }
}

impl Drop for Retiring {
    fn drop(&mut self) {
        // The execution's future first, the probe's check in it.
        drop(self.work.take());
        retire(&self.probe, self.generation);
        self.crew.retired.notify_waiters();
    }
}

/// A check's future with the in-flight slot its execution holds: the
/// check is dropped before the slot is given back (fields drop in order),
/// however the execution ends, so the bound counts an execution until its
/// future is gone.
struct Holding<F> {
    check: F,
    _slot: HeldSlot,
}

impl<F: Future + Unpin> Future for Holding<F> {
    type Output = F::Output;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        std::pin::Pin::new(&mut self.get_mut().check).poll(cx)
    }
}

/// An in-flight slot a flight holds until it ends, owned (the flight
/// outlives any borrow of the semaphore).
struct HeldSlot(Arc<Shared>);

impl Drop for HeldSlot {
    fn drop(&mut self) {
        self.0.limiter.give();
    }
}

/// The registry-wide in-flight bound (BE-HLTH-006, `max_in_flight`). A
/// free slot costs one compare-and-swap to take and one subtraction to
/// give back (tokio's semaphore locks a mutex on every release); only a
/// run that finds none free waits, on `freed`.
struct Limiter {
    max: usize,
    taken: AtomicUsize,
    /// Runs waiting for a slot: a release notifies only while there are.
    waiting: AtomicUsize,
    freed: tokio::sync::Notify,
}

/// A slot taken by a first poll, given back when dropped (a panic
/// included) unless it is forgotten into a [`HeldSlot`].
struct Taken<'a>(&'a Limiter);

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        self.0.give();
    }
}

impl Limiter {
    fn new(max: usize) -> Self {
        Self {
            max,
            taken: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            freed: tokio::sync::Notify::new(),
        }
    }

    /// A slot if one is free now.
    fn try_take(&self) -> Option<Taken<'_>> {
        // Sequentially consistent, with `waiting`, so a release that sees
        // no waiter is seen by the waiter's own next try (see `take`).
        self.taken
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()
            .map(|_| Taken(self))
    }

    /// Waits until a slot is free and takes it; the caller gives it back.
    async fn take(&self) {
        if let Some(taken) = self.try_take() {
            std::mem::forget(taken);
            return;
        }
        self.waiting.fetch_add(1, Ordering::SeqCst);
        // Counted off however the wait ends: taken, or dropped at the
        // deadline.
        struct Waiter<'a>(&'a AtomicUsize);
        impl Drop for Waiter<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let _waiter = Waiter(&self.waiting);
        loop {
            let mut freed = pin!(self.freed.notified());
            // Registered before the try, so a release between the two
            // still wakes this waiter.
            freed.as_mut().enable();
            if let Some(taken) = self.try_take() {
                std::mem::forget(taken);
                return;
            }
            freed.await;
        }
    }

    fn give(&self) {
        self.taken.fetch_sub(1, Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.freed.notify_one();
        }
    }
}

/// Claims the next run for this request (see [`Turn::Own`]), counted
/// from `since` (the request's arrival), else from now.
fn claim(slot: &mut Slot, since: Option<Instant>) -> Turn {
    let generation = slot.next_generation;
    slot.next_generation += 1;
    let started = since.unwrap_or_else(Instant::now);
    slot.run = Run::FirstPoll(FirstPoll {
        generation,
        started,
        handoff: None,
    });
    Turn::Own(generation, started)
}

/// Gives up a first poll that ended without a result (something outside
/// the probe's guard unwound): its waiters get the probe's failure, and
/// the next request runs the probe again.
struct ClaimGuard<'a> {
    probe: &'a ProbeRuntime,
    generation: u64,
    started: Instant,
    armed: bool,
}

impl Drop for ClaimGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            let entry = lost(self.probe, self.started.elapsed());
            record(self.probe, Some(self.generation), &entry, false);
        }
    }
}

/// Waits, until `deadline`, for a first poll to hand its result over.
async fn wait_handoff(handoff: &Handoff, deadline: Instant) -> Option<&Handed> {
    let mut notified = pin!(handoff.notify.notified());
    loop {
        // Registered before the check, so a hand-over between the two
        // still wakes this waiter.
        notified.as_mut().enable();
        if let Some(handed) = handoff.handed.get() {
            return Some(handed);
        }
        tokio::time::timeout_at(deadline, notified.as_mut())
            .await
            .ok()?;
        notified.set(handoff.notify.notified());
    }
}

/// Waits on a flight, counted as one of its waiters, within its deadline.
async fn join(
    shared: &Shared,
    probe: &ProbeRuntime,
    flight: Flight,
    crew: Arc<Crew>,
    started: Instant,
) -> HealthEntry {
    let _waiting = Waiting::new(crew.clone());
    // The flight's own deadline ends it in time, but its timer belongs
    // to the runtime that started it; this one, on the waiter's own
    // runtime, keeps the bound even if that runtime is stalled.
    match tokio::time::timeout_at(started + probe.timeout, flight).await {
        Ok(entry) => entry,
        // The run's deadline, noticed here first perhaps: the run ends
        // as a timeout, once for all (the flight, when it gets there,
        // keeps this entry and retires the run).
        Err(elapsed) => crew
            .ended
            .get_or_init(|| finish(shared, probe, None, Err(elapsed), started))
            .clone(),
    }
}

/// The entry of a waiter whose deadline passed before the run answered;
/// kept for the cache as the run's own timeout would be (the run itself
/// retires when it ends).
fn waited_out(probe: &ProbeRuntime, started: Instant) -> HealthEntry {
    let entry = timed_out(probe, started.elapsed());
    remember(probe, &mut lock(&probe.state.slot), &entry, false);
    entry
}

/// What a check gave: its outcome or its panic, or `Err` at its deadline.
type Finished = Result<std::thread::Result<ProbeOutcome>, tokio::time::error::Elapsed>;

/// The rest of a run whose first poll is pending: in-flight slot,
/// deadline (counted from the run's start) and panic guard; then the run
/// is finished like one that answered at once.
async fn execute(
    shared: Arc<Shared>,
    probe: Arc<ProbeRuntime>,
    generation: u64,
    started: Instant,
    pending: BoxProbeFuture<'static>,
    held: Option<HeldSlot>,
    crew: Option<Arc<Crew>>,
) -> HealthEntry {
    let guarded = async {
        // Waiting for a slot counts against the deadline: the endpoint
        // must answer in time even when the bound is saturated. A free
        // slot is taken without queueing.
        let slot = match held {
            Some(held) => held,
            None => {
                shared.limiter.take().await;
                HeldSlot(shared.clone())
            }
        };
        Holding {
            check: AssertUnwindSafe(pending).catch_unwind(),
            _slot: slot,
        }
        .await
    };
    let result = tokio::time::timeout_at(started + probe.timeout, guarded).await;
    match crew {
        // A waiter may have ended the run at its deadline already.
        Some(crew) => {
            let entry = crew
                .ended
                .get_or_init(|| finish(&shared, &probe, None, result, started))
                .clone();
            retire(&probe, generation);
            entry
        }
        None => finish(&shared, &probe, Some(generation), result, started),
    }
}

/// Makes a run's entry from what its check gave, passes it through the
/// hysteresis, records it (retiring the run `generation`, if given) and
/// logs it.
fn finish(
    shared: &Shared,
    probe: &ProbeRuntime,
    generation: Option<u64>,
    result: Finished,
    started: Instant,
) -> HealthEntry {
    let duration = started.elapsed();
    let failed = probe.failure_status.status();
    // The real error is kept for the transition log (`observe`), never
    // for the entry (BE-HLTH-007).
    let (status, description, data, outcome, error) = match result {
        Ok(Ok(Ok(r))) => {
            // A probe's own "Unhealthy" is a failure too, so an optional
            // dependency registered as Degraded never fails the tier.
            let status = r.status.min(failed);
            let completed = EntryOutcome::Completed;
            (status, r.description, r.data, completed, RunError::None)
        }
        Ok(Ok(Err(error))) => {
            let d = Some(Cow::Borrowed(ERRORED_DESCRIPTION));
            let error = RunError::Error(error);
            (failed, d, None, EntryOutcome::Errored, error)
        }
        Ok(Err(panic)) => {
            let d = Some(Cow::Borrowed(PANICKED_DESCRIPTION));
            let error = RunError::Panic(panic);
            (failed, d, None, EntryOutcome::Panicked, error)
        }
        Err(_elapsed) => {
            let d = Some(Cow::Owned(timeout_description(probe.timeout)));
            let error = RunError::Timeout(probe.timeout);
            (failed, d, None, EntryOutcome::TimedOut, error)
        }
    };
    let raw = HealthEntry {
        name: probe.name.clone(),
        status,
        description,
        duration,
        data: data.map(Box::new),
        outcome,
    };
    // The log and the metrics see the reported entry: a failure the
    // threshold holds back is no transition, and its error is not logged.
    let policy = probe.policy();
    // Only a threshold counts periods: no division on the fast path.
    let period = match policy.threshold.is_set() {
        true => shared.run_period(policy.refresh),
        false => Duration::ZERO,
    };
    let (entry, held) = probe
        .state
        .hysteresis
        .apply(policy.threshold, period, raw, failed);
    // A shared dependency compares the reported verdict with the
    // cluster's, to fail open (BE-HLTH-003); without a view it is an
    // ordinary probe.
    let entry = match probe.policy().shared {
        true => match &*shared.verdicts.read().unwrap_or_else(|e| e.into_inner()) {
            Some((generation, verdicts)) => {
                // Published on a change only: a steady verdict costs one
                // atomic, not a call into the view.
                let changed = |failing: bool| {
                    let key = generation << 2 | 2 | u64::from(failing);
                    probe.state.published.swap(key, Ordering::Relaxed) != key
                };
                match crate::shared::compare(&**verdicts, entry, failed, changed) {
                    (entry, Some(tally)) => probe.opened(entry, tally),
                    (entry, None) => entry,
                }
            }
            None => entry,
        },
        false => entry,
    };
    let error = if held { RunError::None } else { error };
    record(probe, generation, &entry, held);
    let starting = (shared.starting)();
    probe.remember_history(shared, &entry, starting);
    let interval = Duration::from_nanos(shared.failure_log_interval.load(Ordering::Relaxed));
    probe.log.ran(&entry, &error, interval, starting);
    entry
}

/// Retires the run `generation` (if given) and keeps its result for the
/// cache or readers; `held` marks an entry the threshold holds back.
/// Requests that arrived during its first poll get the entry.
fn record(probe: &ProbeRuntime, generation: Option<u64>, entry: &HealthEntry, held: bool) {
    let handoff = {
        let mut slot = lock(&probe.state.slot);
        let handoff = match &mut slot.run {
            Run::Flight(c) if Some(c.generation) == generation => {
                slot.run = Run::Idle;
                None
            }
            Run::FirstPoll(first) if Some(first.generation) == generation => {
                let handoff = first.handoff.take();
                slot.run = Run::Idle;
                handoff
            }
            _ => None,
        };
        remember(probe, &mut slot, entry, held);
        handoff
    };
    if let Some(handoff) = handoff {
        handoff.hand(Handed::Entry(entry.clone()));
    }
}

/// Retires the flight `generation` (its check's future is gone): the
/// probe's next run may start.
fn retire(probe: &ProbeRuntime, generation: u64) {
    let mut slot = lock(&probe.state.slot);
    if matches!(&slot.run, Run::Flight(c) if c.generation == generation) {
        slot.run = Run::Idle;
    }
}

/// Keeps a result where the cache or the background readers find it.
/// The cache keeps a healthy result only: a failure (or a degraded
/// answer) clears it, so the next request checks again and a blip
/// recovers as soon as the dependency does. A held-back failure (`held`,
/// reported `Healthy`) is not a healthy result and is not cached either.
fn remember(probe: &ProbeRuntime, slot: &mut Slot, entry: &HealthEntry, held: bool) {
    let code = match probe.is_opened(entry) {
        true => OPENED,
        false => status_code(entry.status),
    };
    probe.state.last_status.store(code, Ordering::Release);
    if probe.policy().refresh.is_some()
        || (probe.policy().cache.is_some() && entry.status == HealthStatus::Healthy && !held)
    {
        slot.last = Some(Box::new((Instant::now(), entry.clone())));
        probe.state.version.fetch_add(1, Ordering::AcqRel);
    } else if probe.policy().cache.is_some() && slot.last.take().is_some() {
        probe.state.version.fetch_add(1, Ordering::AcqRel);
    }
}

/// The entry of a run that missed its deadline.
fn timed_out(probe: &ProbeRuntime, duration: Duration) -> HealthEntry {
    HealthEntry {
        name: probe.name.clone(),
        status: probe.failure_status.status(),
        description: Some(Cow::Owned(timeout_description(probe.timeout))),
        duration,
        data: None,
        outcome: EntryOutcome::TimedOut,
    }
}

/// The entry of an execution whose task ended without a result (see
/// [`Lost`](thread::Lost)): the probe's failure, never a hang.
fn lost(probe: &ProbeRuntime, duration: Duration) -> HealthEntry {
    HealthEntry {
        name: probe.name.clone(),
        status: probe.failure_status.status(),
        description: Some(Cow::Borrowed(ERRORED_DESCRIPTION)),
        duration,
        data: None,
        outcome: EntryOutcome::Errored,
    }
}

/// The latest background result as this request sees it; never waits.
fn background_entry(probe: &ProbeRuntime) -> HealthEntry {
    let state = &probe.state;
    let failed = |description: Cow<'static, str>| HealthEntry {
        name: probe.name.clone(),
        status: probe.failure_status.status(),
        description: Some(description),
        duration: Duration::ZERO,
        data: None,
        // No result within the bound: the same class as a missed deadline.
        outcome: EntryOutcome::TimedOut,
    };
    match lock(&state.slot).last.as_deref() {
        None => failed(Cow::Borrowed(NO_RESULT_YET_DESCRIPTION)),
        Some((at, _)) if at.elapsed() > state.max_staleness() => {
            failed(Cow::Owned(stale_description(state.max_staleness())))
        }
        Some((_, entry)) => entry.clone(),
    }
}

/// Starts the probe's schedule on the current runtime unless it runs.
fn ensure_task(probe: &Arc<ProbeRuntime>, shared: &Arc<Shared>) {
    let Some(background) = &probe.state.background else {
        return;
    };
    let mut task = lock(&background.task);
    // A closed sender means the task is gone: its runtime shut down.
    if task.as_ref().is_some_and(|stop| !stop.is_closed()) {
        return;
    }
    let runtime = match shared.runs.handle() {
        Some(probe_thread) => probe_thread.clone(),
        None => match tokio::runtime::Handle::try_current() {
            Ok(current) => current,
            Err(_) => return,
        },
    };
    let (stop_tx, stop_rx) = oneshot::channel();
    *task = Some(stop_tx);
    runtime.spawn(
        schedule(Arc::downgrade(probe), Arc::downgrade(shared), stop_rx).with_current_subscriber(),
    );
}

/// A background probe's schedule. Holds the probe and the executor only
/// during a run; stops when `stop`'s sender (owned by the
/// registration) is dropped.
async fn schedule(
    probe: Weak<ProbeRuntime>,
    shared: Weak<Shared>,
    mut stop: oneshot::Receiver<()>,
) {
    loop {
        let (Some(p), Some(shared)) = (probe.upgrade(), shared.upgrade()) else {
            return;
        };
        let Some(period) = p.policy().refresh else {
            return;
        };
        let next = Instant::now() + period;
        if let Some((dependency, failed)) = p.failing_dependency_known() {
            // Not run while a dependency fails: a hung parent costs its
            // dependents no deadline of their own.
            Executor { shared }.skip(&p, &dependency.name, failed);
            drop(p);
            if let Either::Right(_) = select(pin!(tokio::time::sleep_until(next)), &mut stop).await
            {
                return;
            }
            continue;
        }
        let generation = {
            let mut slot = lock(&p.state.slot);
            slot.next_generation += 1;
            slot.next_generation
        };
        let check = p.probe.clone().check_owned();
        let run = execute(shared, p, generation, Instant::now(), check, None, None);
        if let Either::Right(_) = select(pin!(run), &mut stop).await {
            return;
        }
        if let Either::Right(_) = select(pin!(tokio::time::sleep_until(next)), &mut stop).await {
            return;
        }
    }
}

mod hysteresis;
mod thread;

use hysteresis::Hysteresis;
use thread::Execution;
pub(crate) use thread::Runs;

#[cfg(test)]
mod tests;
