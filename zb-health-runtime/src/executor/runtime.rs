//! [`ProbeRuntime`]: a registered probe as the executor runs it: the
//! registration's facts, and the state of its runs (the run under way and
//! its waiters, the kept result, the hysteresis, the shared-outage mark),
//! with the entries a probe gives without a run's result.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use futures_util::future::{BoxFuture, Shared, WeakShared};
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use zb_health_spec::detection::{background_max_age, default_probe_timeout};
use zb_health_spec::settings::{ExecutionPolicy, ProbeSettings};
use zb_health_spec::{FailureStatus, HealthStatus, TagSet, Violations};

use super::descriptions::{NO_RESULT_YET_DESCRIPTION, stale_description};
use super::hysteresis::Hysteresis;
use crate::history::{ProbeHistory, ProbeView};
use crate::observe::ProbeLog;
use crate::probe::DynProbe;
use crate::registration::ProbeRegistration;
use crate::report::{ERRORED_DESCRIPTION, EntryOutcome, HealthEntry};
use crate::shared::Tally;
use crate::sync::lock;

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
    pub(super) history: OnceLock<Box<ProbeHistory>>,
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
        let timeout = r.settings.resolved_timeout(orchestrator);
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
            history: OnceLock::new(),
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
            .map_or_else(ProbeView::default, |h| h.view_since(now_ms, from_ms))
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
        let run = slot.run.as_ref()?;
        let Some(crew) = &run.crew else {
            return Some((0, run.started.elapsed()));
        };
        // A flight nobody drives any more is over, whatever it recorded;
        // the upgrade is dropped after the lock, which ending it takes.
        let alive = crew.flight.get().map(WeakShared::upgrade);
        let answer = (crew.waiting.load(Ordering::SeqCst), run.started.elapsed());
        drop(slot);
        match alive {
            Some(None) => None,
            _ => Some(answer),
        }
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

/// One probe's runtime state: its run under way, its last result, its
/// schedule.
pub(super) struct ProbeState {
    pub(super) slot: Mutex<Slot>,
    /// A background probe's schedule (`refresh`); boxed, and `None` for
    /// every other probe.
    pub(super) background: Option<Box<Background>>,
    /// Grows whenever `slot.last` is stored or cleared (see [`versions`]).
    pub(super) version: AtomicU64,
    /// Between each run's raw result and its entry (R20 bounds its hold);
    /// `None` for a probe without a threshold.
    pub(super) hysteresis: Option<Box<Hysteresis>>,
    /// The shared-probe verdict last published, with the generation of
    /// the verdicts it went to (0: none yet).
    pub(super) published: AtomicU64,
    /// The status of the latest entry a run (or a skip) gave: what a
    /// background dependent reads of this probe. One byte
    /// (0: none yet, [`OPENED`] for an opened entry, else
    /// [`slot_code`]), so a run stores it without a lock.
    pub(super) last_status: AtomicU8,
    /// What marks this probe's opened entries, made at the
    /// first; boxed, since most probes are never opened.
    pub(super) opened: OnceLock<Box<Opened>>,
    /// For a probe with `restart_after`: since when its reported entry
    /// has been failing here, as milliseconds since [`restart_epoch`]
    /// plus one (0: not failing).
    pub(super) failing_since: AtomicU64,
}

/// The instant `failing_since` counts from: the first use in this
/// process.
pub(super) fn restart_epoch() -> std::time::Instant {
    static EPOCH: OnceLock<std::time::Instant> = OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

impl ProbeState {
    /// Whether the background schedule is running (its task alive).
    #[inline]
    pub(super) fn task_running(&self) -> bool {
        self.background
            .as_ref()
            .is_some_and(|b| lock(&b.task).as_ref().is_some_and(|stop| !stop.is_closed()))
    }

    /// How old a background result may be; zero for other probes.
    #[inline]
    pub(super) fn max_staleness(&self) -> Duration {
        self.background
            .as_ref()
            .map_or(Duration::ZERO, |b| b.max_staleness)
    }

    pub(super) fn new(policy: ExecutionPolicy, timeout: Duration) -> Self {
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
            hysteresis: Hysteresis::for_threshold(policy.threshold),
            published: AtomicU64::new(0),
            last_status: AtomicU8::new(0),
            opened: OnceLock::new(),
            failing_since: AtomicU64::new(0),
        }
    }

    /// Notes whether the reported entry is failing here, for
    /// `restart_after`: keeps the start of a failure, clears it on
    /// recovery.
    pub(super) fn note_failing(&self, failing: bool) {
        if !failing {
            self.failing_since.store(0, Ordering::Relaxed);
        } else if self.failing_since.load(Ordering::Relaxed) == 0 {
            let ms = restart_epoch().elapsed().as_millis() as u64 + 1;
            self.failing_since.store(ms, Ordering::Relaxed);
        }
    }

    /// How long the reported entry has been failing here, if it is.
    pub(super) fn failing_for(&self) -> Option<Duration> {
        match self.failing_since.load(Ordering::Relaxed) {
            0 => None,
            since => {
                let now = restart_epoch().elapsed().as_millis() as u64 + 1;
                Some(Duration::from_millis(now.saturating_sub(since)))
            }
        }
    }
}

/// How a dependency's entry bears on its dependents.
#[derive(Clone, Copy)]
pub(super) enum Failed {
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
pub(super) struct Opened {
    /// The probe's name in a second allocation: an opened entry carries
    /// this one, so every copy of it is known as opened while its text
    /// stays the name (`HealthEntry` is public and has no room for a flag).
    pub(super) name: Arc<str>,
    /// The tally of the latest opening, `failing << 32 | reporting`.
    pub(super) tally: AtomicU64,
}

impl Opened {
    pub(super) fn tally(&self) -> Tally {
        let t = self.tally.load(Ordering::Relaxed);
        Tally {
            failing: (t >> 32) as u32,
            reporting: t as u32,
        }
    }
}

/// The [`ProbeState::last_status`] of an opened entry (`Degraded`, and a
/// failure here).
pub(super) const OPENED: u8 = 4;

/// A status from its [`slot_code`] (or [`OPENED`], `Degraded`).
#[inline]
pub(super) fn slot_status(code: u8) -> Option<HealthStatus> {
    match code {
        OPENED => Some(HealthStatus::Degraded),
        0 => None,
        code => HealthStatus::from_severity(code - 1),
    }
}

/// A status as one byte, never 0 (0: no status yet): its severity plus 1.
#[inline]
pub(super) fn slot_code(status: HealthStatus) -> u8 {
    status.severity() + 1
}

/// A probe's run under way and its kept result, under one lock.
#[derive(Default)]
pub(super) struct Slot {
    /// The run under way: claimed by the request that polls it first, so
    /// every other request waits for it instead of starting one.
    pub(super) run: Option<Run>,
    /// The last finished run and when it finished, for a probe that keeps
    /// results (cache, background): boxed, so the many probes that keep
    /// none carry one pointer, not a whole entry.
    pub(super) last: Option<Box<(Instant, HealthEntry)>>,
    pub(super) next_generation: u64,
}

/// A claimed run: its first poll under way, or the flight it became.
pub(super) struct Run {
    pub(super) generation: u64,
    /// Its deadline counts from here, for every request that waits on it.
    pub(super) started: Instant,
    /// Made by the first request that waits on it, or when it takes off:
    /// a run that answers at its first poll, alone, allocates none.
    pub(super) crew: Option<Arc<Crew>>,
}

/// What the requests waiting on one run share.
#[derive(Default)]
pub(super) struct Crew {
    /// How many wait now.
    pub(super) waiting: AtomicUsize,
    /// The run's flight, once its first poll was pending: weak, so the
    /// flight is dropped (cancelled) with its last waiter.
    pub(super) flight: OnceLock<WeakShared<BoxFuture<'static, HealthEntry>>>,
    /// The run's entry, set once by whoever ends the run first: its first
    /// poll, the flight, or a waiter whose timer noticed the run's deadline
    /// first (before the flight's own timer, which may run on another
    /// runtime, or while a first poll blocks its thread). So a run that
    /// reaches its deadline is finished (hysteresis, shared comparison,
    /// log) exactly once, and every waiter answers with that entry, not
    /// with a raw timeout of its own. (A first poll that answers in time
    /// sets it after its own `finish`, not through it: if a waiter's timer
    /// fires in that moment, at the deadline, both record; a lock on
    /// every fast-path run would be the price of closing it.)
    pub(super) ended: OnceLock<HealthEntry>,
    /// Woken when the run ends at its first poll or takes off, and when
    /// its flight's execution is dropped.
    pub(super) changed: Notify,
}

/// One entry awaited by several: a run's flight (every request for the
/// probe waits on it), and a probe's evaluation within one tier request
/// (its dependents wait on it, `Executor::evaluation`).
pub(super) type Flight = Shared<BoxFuture<'static, HealthEntry>>;

/// What only a background probe keeps.
pub(super) struct Background {
    /// `Some` while its task may be running; dropping it (with the
    /// registration) stops the task.
    pub(super) task: Mutex<Option<oneshot::Sender<()>>>,
    pub(super) max_staleness: Duration,
}

/// Keeps a result where the cache or the background readers find it.
/// The cache keeps a healthy result only: a failure (or a degraded
/// answer) clears it, so the next request checks again and a blip
/// recovers as soon as the dependency does. A held-back failure (`held`,
/// reported `Healthy`) is not a healthy result and is not cached either.
#[inline]
pub(super) fn keep_result(probe: &ProbeRuntime, slot: &mut Slot, entry: &HealthEntry, held: bool) {
    let code = match probe.is_opened(entry) {
        true => OPENED,
        false => slot_code(entry.status),
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

/// The entry of an execution whose task ended without a result (it
/// panicked outside the probe's guard, or its runtime shut down): the
/// probe's failure, never a hang.
pub(super) fn lost(probe: &ProbeRuntime, duration: Duration) -> HealthEntry {
    probe.failed_entry(
        probe.failure_status.status(),
        Cow::Borrowed(ERRORED_DESCRIPTION),
        duration,
        EntryOutcome::Errored,
    )
}

/// The latest background result as this request sees it; never waits.
pub(super) fn background_entry(probe: &ProbeRuntime) -> HealthEntry {
    let state = &probe.state;
    // No result within the bound: the same class as a missed deadline.
    let failed = |description: Cow<'static, str>| {
        probe.failed_entry(
            probe.failure_status.status(),
            description,
            Duration::ZERO,
            EntryOutcome::TimedOut,
        )
    };
    match lock(&state.slot).last.as_deref() {
        None => failed(Cow::Borrowed(NO_RESULT_YET_DESCRIPTION)),
        Some((at, _)) if at.elapsed() > state.max_staleness() => {
            failed(Cow::Owned(stale_description(state.max_staleness())))
        }
        Some((_, entry)) => entry.clone(),
    }
}
