//! Execution policy (BE-HLTH-006): single-flight, the result cache and
//! background probes.
//!
//! # Single-flight (always on)
//!
//! Every run of a probe is one *flight*: a `futures_util`
//! [`Shared`](futures_util::future::Shared)
//! future holding the in-flight slot, the deadline, the panic guard and the
//! probe's own future. The probe's runtime state keeps only a *weak*
//! reference to the current flight; every request that wants the probe's
//! result upgrades it and awaits a strong clone, or starts a new flight if
//! there is none.
//!
//! Why this shape:
//!
//! * **No driver task.** The flight is polled by whichever waiter polls
//!   it; if that waiter goes away (its client hung up), the next waiter
//!   drives it, so the others still get the result. Nothing is spawned, so
//!   the same code works on any runtime: each actix worker's own
//!   single-threaded runtime, a management server's, a gRPC server's. Two
//!   workers asking at once share one flight, because the state lives in
//!   the registry they share, not in a runtime.
//! * **Nothing abandoned.** When the last waiter drops, the last strong
//!   reference goes, the flight (and the probe's future in it) is dropped,
//!   which cancels it; the weak reference then fails to upgrade and the
//!   next request starts afresh. So a hung dependency has at most **one**
//!   execution in flight, whatever the request rate, and none once nobody
//!   is waiting.
//! * **Deadline.** The flight runs under the probe's deadline, counted from
//!   its start. A late joiner therefore waits at most the *remaining* time
//!   of the flight it joins, never longer than its own deadline would
//!   allow, and gets that flight's answer (possibly `timed out` after a
//!   short wait). Starting a second execution for the late joiner instead
//!   would break "at most one in flight" exactly when a dependency hangs.
//! * **Bound and panics inside.** The in-flight slot (`max_in_flight`) is
//!   taken inside the flight, so one flight holds one slot however many
//!   requests wait on it; the `catch_unwind` guard is inside too, so a
//!   panicking probe never poisons the shared future.
//!
//! A flight's timer (and the probe's own I/O) belongs to the runtime of
//! the request that started it; waiters on other runtimes are woken from
//! there. So that a stalled runtime (a worker blocked by a synchronous
//! handler) cannot stretch another worker's answer, every waiter also
//! keeps the flight's deadline on its *own* runtime and answers `timed
//! out` at it whatever the flight does.
//!
//! # Result cache (`cache`)
//!
//! A result younger than `cache` is served without running the probe; the
//! entry is the original one, `durationMs` included. Failures are cached
//! too: the cache is the statement "an answer this old is good enough", and
//! a failing or hung dependency is exactly the one that must not be hit by
//! every request.
//!
//! # Background probes (`refresh`)
//!
//! The probe runs on its own schedule (one run every `refresh`, counted
//! from each run's start; a run longer than that delays the next) and a
//! request only reads the latest result: it never waits and never starts
//! a run. Every outcome is recorded, a timeout included. A result older
//! than `max_staleness` (default: twice `refresh` plus the deadline) is
//! reported with the probe's failure status and [the fixed stale
//! description](stale_description). Before the first result, a request
//! gets the failure status and [`NO_RESULT_YET_DESCRIPTION`]: the honest
//! answer, and a readiness probe simply retries. Both entries have the
//! outcome [`EntryOutcome::TimedOut`] (no result within the bound) and a
//! zero duration (nothing ran for this request).
//!
//! The schedule is a tokio task, started on the runtime of the first
//! request that reads the probe (a runtime always exists there; `add` may
//! run before any). If that runtime shuts down, the next request starts it
//! again on its own. The task holds only weak references between runs and
//! a stop signal owned by the registration, so it ends as soon as the
//! registration is removed or replaced or the registry is dropped (a run
//! under way finishes first, within its deadline); it never keeps either
//! alive.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Either, WeakShared, select};
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::observe::{self, RunError};
use crate::registry::{HealthRegistry, Inner, Registered};
use crate::report::{ERRORED_DESCRIPTION, EntryOutcome, HealthEntry, PANICKED_DESCRIPTION};

/// The fixed description of a background probe's entry before its first
/// run has finished.
pub const NO_RESULT_YET_DESCRIPTION: &str = "no result yet";

/// The fixed description of a background probe's entry whose latest result
/// is older than `max_staleness`: `stale: no result for over N ms`, with
/// the probe's `max_staleness`.
pub fn stale_description(max_staleness: Duration) -> String {
    format!("stale: no result for over {} ms", max_staleness.as_millis())
}

/// A probe's execution policy, as registered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Policy {
    pub(crate) cache: Option<Duration>,
    pub(crate) refresh: Option<Duration>,
    pub(crate) max_staleness: Option<Duration>,
}

/// One probe's runtime state: its flight, its last result, its schedule.
pub(crate) struct ProbeState {
    slot: Mutex<Slot>,
    /// `Some` while a background task may be running; dropping it (with
    /// the registration) stops the task.
    task: Mutex<Option<oneshot::Sender<()>>>,
    max_staleness: Duration,
    stale_description: String,
}

#[derive(Default)]
struct Slot {
    flight: Option<CurrentFlight>,
    /// The last finished run and when it finished.
    last: Option<(Instant, HealthEntry)>,
    next_generation: u64,
}

struct CurrentFlight {
    generation: u64,
    flight: WeakShared<BoxFuture<'static, HealthEntry>>,
    waiting: Arc<AtomicUsize>,
    started: Instant,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section is a few assignments that cannot panic
    // half-way, so poisoning carries no meaning here.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ProbeState {
    pub(crate) fn new(policy: Policy, timeout: Duration) -> Self {
        let max_staleness = policy.max_staleness.unwrap_or_else(|| {
            policy.refresh.map_or(Duration::ZERO, |r| {
                r.saturating_mul(2).saturating_add(timeout)
            })
        });
        Self {
            slot: Mutex::new(Slot::default()),
            task: Mutex::new(None),
            max_staleness,
            stale_description: stale_description(max_staleness),
        }
    }
}

/// Counts one waiter of a flight for as long as it waits.
struct Waiting(Arc<AtomicUsize>);

impl Waiting {
    fn new(count: Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl HealthRegistry {
    /// The entry of one probe for one request, under its policy: the
    /// background result, a fresh cached one, or the shared flight's.
    pub(crate) async fn probe_entry(&self, probe: &Arc<Registered>) -> HealthEntry {
        if probe.policy.refresh.is_some() {
            ensure_task(probe, &self.inner);
            return background_entry(probe);
        }
        let (flight, waiting, started) = {
            let mut slot = lock(&probe.state.slot);
            if let (Some(cache), Some((at, entry))) = (probe.policy.cache, &slot.last)
                && at.elapsed() < cache
            {
                return entry.clone();
            }
            let current = slot
                .flight
                .as_ref()
                .and_then(|c| Some((c.flight.upgrade()?, c.waiting.clone(), c.started)));
            match current {
                Some(joined) => joined,
                None => {
                    let generation = slot.next_generation;
                    slot.next_generation += 1;
                    let started = Instant::now();
                    let flight = execute(self.inner.clone(), probe.clone(), generation, started)
                        .boxed()
                        .shared();
                    let waiting = Arc::new(AtomicUsize::new(0));
                    slot.flight = Some(CurrentFlight {
                        generation,
                        // `downgrade` fails only for a finished flight.
                        flight: flight.downgrade().expect("a new flight is pending"),
                        waiting: waiting.clone(),
                        started,
                    });
                    (flight, waiting, started)
                }
            }
        };
        let _waiting = Waiting::new(waiting);
        // The flight's own deadline ends it in time, but its timer belongs
        // to the runtime that started it; this one, on the waiter's own
        // runtime, keeps the bound even if that runtime is stalled.
        match tokio::time::timeout_at(started + probe.timeout, flight).await {
            Ok(entry) => entry,
            Err(_elapsed) => {
                // Kept for the cache like the flight's own timeout would
                // be; the flight itself retires when it ends.
                let entry = timed_out(probe, started.elapsed());
                remember(probe, &mut lock(&probe.state.slot), &entry);
                entry
            }
        }
    }

    /// How many requests are waiting right now on the in-flight execution
    /// of the probe `name` (0 when none is in flight or no such probe is
    /// registered). For metrics and for tests of single-flight.
    pub fn waiting(&self, name: &str) -> usize {
        let tables = [crate::Tag::Ready, crate::Tag::Active].map(|t| self.table(t));
        let Some(probe) = tables
            .iter()
            .flatten()
            .flat_map(|t| t.iter())
            .find(|r| &*r.name == name)
        else {
            return 0;
        };
        let slot = lock(&probe.state.slot);
        slot.flight
            .as_ref()
            .filter(|c| c.flight.upgrade().is_some())
            .map_or(0, |c| c.waiting.load(Ordering::SeqCst))
    }
}

/// One run of a probe: in-flight slot, deadline and panic guard, then the
/// result is recorded and the flight retired, so no request can join a
/// finished flight and get an old answer from it.
async fn execute(
    inner: Arc<Inner>,
    probe: Arc<Registered>,
    generation: u64,
    started: Instant,
) -> HealthEntry {
    let guarded = async {
        // Waiting for a slot counts against the deadline: the endpoint
        // must answer in time even when the bound is saturated. A free
        // slot is taken without queueing.
        let _slot = match inner.limiter.try_acquire() {
            Ok(slot) => Ok(slot),
            Err(_) => inner.limiter.acquire().await,
        };
        // `check_boxed` is called inside the guarded future, so a panic
        // in a check's synchronous part is caught like one in its
        // `async` part (AT-3).
        AssertUnwindSafe(async { probe.probe.check_boxed().await })
            .catch_unwind()
            .await
    };
    let result = tokio::time::timeout_at(started + probe.timeout, guarded).await;
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
            let d = Some(Cow::Owned(probe.timeout_description.clone()));
            let error = RunError::Timeout(probe.timeout);
            (failed, d, None, EntryOutcome::TimedOut, error)
        }
    };
    let entry = HealthEntry {
        name: probe.name.clone(),
        status,
        description,
        duration,
        data,
        outcome,
    };
    record(&probe, generation, &entry);
    observe::probe_ran(&probe, &entry, &error, inner.failure_log_interval());
    entry
}

/// Retires the flight and keeps its result for the cache or readers.
fn record(probe: &Registered, generation: u64, entry: &HealthEntry) {
    let mut slot = lock(&probe.state.slot);
    if slot
        .flight
        .as_ref()
        .is_some_and(|c| c.generation == generation)
    {
        slot.flight = None;
    }
    remember(probe, &mut slot, entry);
}

/// Keeps a result where the cache or the background readers find it.
fn remember(probe: &Registered, slot: &mut Slot, entry: &HealthEntry) {
    if probe.policy.cache.is_some() || probe.policy.refresh.is_some() {
        slot.last = Some((Instant::now(), entry.clone()));
    }
}

pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&'static str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("non-string panic payload")
}

/// The entry of a run that missed its deadline.
fn timed_out(probe: &Registered, duration: Duration) -> HealthEntry {
    HealthEntry {
        name: probe.name.clone(),
        status: probe.failure_status.status(),
        description: Some(Cow::Owned(probe.timeout_description.clone())),
        duration,
        data: None,
        outcome: EntryOutcome::TimedOut,
    }
}

/// The latest background result as this request sees it; never waits.
fn background_entry(probe: &Registered) -> HealthEntry {
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
    match &lock(&state.slot).last {
        None => failed(Cow::Borrowed(NO_RESULT_YET_DESCRIPTION)),
        Some((at, _)) if at.elapsed() > state.max_staleness => {
            failed(Cow::Owned(state.stale_description.clone()))
        }
        Some((_, entry)) => entry.clone(),
    }
}

/// Starts the probe's schedule on the current runtime unless it runs.
fn ensure_task(probe: &Arc<Registered>, inner: &Arc<Inner>) {
    let mut task = lock(&probe.state.task);
    // A closed sender means the task is gone: its runtime shut down.
    if task.as_ref().is_some_and(|stop| !stop.is_closed()) {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let (stop_tx, stop_rx) = oneshot::channel();
    *task = Some(stop_tx);
    runtime.spawn(schedule(
        Arc::downgrade(probe),
        Arc::downgrade(inner),
        stop_rx,
    ));
}

/// A background probe's schedule. Holds the registration and the registry
/// only during a run; stops when `stop`'s sender (owned by the
/// registration) is dropped.
async fn schedule(probe: Weak<Registered>, registry: Weak<Inner>, mut stop: oneshot::Receiver<()>) {
    loop {
        let (Some(p), Some(inner)) = (probe.upgrade(), registry.upgrade()) else {
            return;
        };
        let Some(period) = p.policy.refresh else {
            return;
        };
        let next = Instant::now() + period;
        let generation = {
            let mut slot = lock(&p.state.slot);
            slot.next_generation += 1;
            slot.next_generation
        };
        let run = execute(inner, p, generation, Instant::now());
        if let Either::Right(_) = select(pin!(run), &mut stop).await {
            return;
        }
        if let Either::Right(_) = select(pin!(tokio::time::sleep_until(next)), &mut stop).await {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    use futures_util::future::join_all;

    use crate::{
        EntryOutcome, HealthRegistry, HealthStatus, ProbeRegistration, ProbeResult, Rule, Tag,
        TagSet, from_fn,
    };

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Counts starts, the peak of runs at once and dropped futures.
    #[derive(Default)]
    struct Counters {
        started: AtomicUsize,
        now: AtomicUsize,
        peak: AtomicUsize,
        dropped: AtomicUsize,
        hang: AtomicBool,
    }

    impl Counters {
        fn started(&self) -> usize {
            self.started.load(Ordering::SeqCst)
        }
    }

    struct Running(Arc<Counters>);
    impl Drop for Running {
        fn drop(&mut self) {
            self.0.now.fetch_sub(1, Ordering::SeqCst);
            self.0.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A probe that takes `run` (or hangs while `hang` is set) and counts.
    fn counted(name: &'static str, run: Duration) -> (ProbeRegistration, Arc<Counters>) {
        let c = Arc::new(Counters::default());
        let counters = c.clone();
        let probe = from_fn(move || {
            let c = counters.clone();
            async move {
                c.started.fetch_add(1, Ordering::SeqCst);
                let n = c.now.fetch_add(1, Ordering::SeqCst) + 1;
                c.peak.fetch_max(n, Ordering::SeqCst);
                let _running = Running(c.clone());
                if c.hang.load(Ordering::SeqCst) {
                    std::future::pending::<()>().await;
                }
                tokio::time::sleep(run).await;
                Ok(ProbeResult::healthy())
            }
        });
        (ProbeRegistration::new(name, probe), c)
    }

    /// A ready check on its own task, to be dropped or awaited later.
    fn spawn_check(reg: &HealthRegistry) -> tokio::task::JoinHandle<crate::HealthReport> {
        let reg = reg.clone();
        tokio::spawn(async move { reg.check(Tag::Ready).await })
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_checks_share_one_execution() {
        let reg = HealthRegistry::new();
        let (r, c) = counted("db", ms(5));
        reg.add(r).unwrap();
        let reports = join_all((0..32).map(|_| reg.check(Tag::Ready))).await;
        assert_eq!(c.started(), 1);
        for report in &reports {
            assert_eq!(report.status, HealthStatus::Healthy);
            assert_eq!(report.entries[0].duration, ms(5));
        }
        // The flight is retired when it ends: the next request runs anew.
        reg.check(Tag::Ready).await;
        assert_eq!(c.started(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_probe_on_two_tiers_runs_once_for_both() {
        let reg = HealthRegistry::new();
        let (r, c) = counted("db", ms(5));
        reg.add(r.tags(TagSet::READY.with(Tag::Active))).unwrap();
        let (ready, active) = tokio::join!(reg.check(Tag::Ready), reg.check(Tag::Active));
        assert_eq!(c.started(), 1);
        assert_eq!(ready.entries, active.entries);
    }

    #[tokio::test(start_paused = true)]
    async fn the_others_get_the_result_when_the_first_waiter_leaves() {
        let reg = HealthRegistry::new();
        let (r, c) = counted("db", ms(50));
        reg.add(r).unwrap();
        let first = spawn_check(&reg);
        let second = spawn_check(&reg);
        tokio::time::sleep(ms(10)).await;
        assert_eq!(reg.waiting("db"), 2);
        first.abort();
        assert!(first.await.unwrap_err().is_cancelled());
        let report = second.await.unwrap();
        assert_eq!(report.status, HealthStatus::Healthy);
        assert_eq!(report.entries[0].duration, ms(50));
        assert_eq!(c.started(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_flight_nobody_waits_for_is_cancelled() {
        let reg = HealthRegistry::new();
        let (r, c) = counted("db", ms(50));
        reg.add(r).unwrap();
        let only = spawn_check(&reg);
        tokio::time::sleep(ms(10)).await;
        only.abort();
        let _ = only.await;
        assert_eq!(c.dropped.load(Ordering::SeqCst), 1, "probe future dropped");
        assert_eq!(reg.waiting("db"), 0);
        // Nothing left to join: the next request starts its own run.
        reg.check(Tag::Ready).await;
        assert_eq!(c.started(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_probe_has_one_execution_for_64_requests() {
        let reg = HealthRegistry::new();
        let (r, c) = counted("hung", ms(0));
        c.hang.store(true, Ordering::SeqCst);
        reg.add(r.timeout(ms(200))).unwrap();
        let reports = join_all((0..64).map(|_| reg.check(Tag::Ready))).await;
        assert_eq!(c.started(), 1);
        assert_eq!(c.peak.load(Ordering::SeqCst), 1);
        assert_eq!(
            c.dropped.load(Ordering::SeqCst),
            1,
            "the hung future was dropped"
        );
        for report in &reports {
            let e = &report.entries[0];
            assert_eq!(e.outcome, EntryOutcome::TimedOut);
            assert_eq!(report.total_duration, ms(200));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_joiner_waits_only_the_remaining_time() {
        let reg = HealthRegistry::new();
        let (r, c) = counted("hung", ms(0));
        c.hang.store(true, Ordering::SeqCst);
        reg.add(r.timeout(ms(200))).unwrap();
        let first = spawn_check(&reg);
        tokio::time::sleep(ms(150)).await;
        let late = reg.check(Tag::Ready).await;
        assert_eq!(late.total_duration, ms(50));
        assert_eq!(late.entries[0].outcome, EntryOutcome::TimedOut);
        assert_eq!(first.await.unwrap().total_duration, ms(200));
        assert_eq!(c.started(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn one_flight_takes_one_in_flight_slot() {
        // With a bound of 1, requests that each ran the probe would queue
        // behind each other and miss the deadline; sharing, all answer.
        let reg = HealthRegistry::builder().max_in_flight(1).build();
        let (r, c) = counted("db", ms(100));
        reg.add(r.timeout(ms(150))).unwrap();
        let reports = join_all((0..8).map(|_| reg.check(Tag::Ready))).await;
        assert!(reports.iter().all(|r| r.status == HealthStatus::Healthy));
        assert_eq!(c.started(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_cached_result_is_served_with_its_original_duration() {
        let reg = HealthRegistry::new();
        let (r, c) = counted("db", ms(5));
        reg.add(r.cache(ms(1000))).unwrap();
        let first = reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(500)).await;
        let second = reg.check(Tag::Ready).await;
        assert_eq!(c.started(), 1, "no run within the cache time");
        assert_eq!(second.entries, first.entries);
        assert_eq!(second.entries[0].duration, ms(5));
        assert_eq!(second.total_duration, Duration::ZERO);
        tokio::time::sleep(ms(500)).await;
        reg.check(Tag::Ready).await;
        assert_eq!(c.started(), 2, "a run once the cache time has passed");
    }

    #[tokio::test(start_paused = true)]
    async fn failures_are_cached_too() {
        let reg = HealthRegistry::new();
        let (r, c) = counted("hung", ms(0));
        c.hang.store(true, Ordering::SeqCst);
        reg.add(r.timeout(ms(100)).cache(ms(1000))).unwrap();
        assert_eq!(
            reg.check(Tag::Ready).await.entries[0].outcome,
            EntryOutcome::TimedOut
        );
        let again = reg.check(Tag::Ready).await;
        assert_eq!(again.entries[0].outcome, EntryOutcome::TimedOut);
        assert_eq!(again.total_duration, Duration::ZERO);
        assert_eq!(c.started(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_background_probe_never_makes_a_request_wait() {
        let reg = HealthRegistry::new();
        let (r, c) = counted("db", ms(10));
        reg.add(r.refresh(ms(100)).max_staleness(ms(150)).timeout(ms(500)))
            .unwrap();
        let first = reg.check(Tag::Ready).await;
        assert_eq!(first.total_duration, Duration::ZERO);
        let e = &first.entries[0];
        assert_eq!(e.status, HealthStatus::Unhealthy);
        assert_eq!(e.description.as_deref(), Some("no result yet"));
        // The first request started the schedule; the run is under way.
        tokio::time::sleep(ms(5)).await;
        assert_eq!(c.started(), 1);
        assert_eq!(reg.check(Tag::Ready).await.total_duration, Duration::ZERO);
        tokio::time::sleep(ms(10)).await;
        let fresh = reg.check(Tag::Ready).await;
        assert_eq!(fresh.status, HealthStatus::Healthy);
        assert_eq!(fresh.entries[0].duration, ms(10));
        assert_eq!(fresh.total_duration, Duration::ZERO);
        // On schedule: one run per 100 ms, requests or not.
        tokio::time::sleep(ms(300)).await;
        assert_eq!(c.started(), 4);
        assert_eq!(reg.waiting("db"), 0, "requests never join a run");
    }

    #[tokio::test(start_paused = true)]
    async fn an_old_background_result_is_reported_stale() {
        let reg = HealthRegistry::new();
        let (r, c) = counted("db", ms(0));
        reg.add(r.refresh(ms(100)).max_staleness(ms(150)).timeout(ms(500)))
            .unwrap();
        reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(1)).await;
        assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Healthy);
        // The dependency hangs from the next run on (at 100 ms); its last
        // result (at 0 ms) ages past 150 ms long before the 500 ms deadline.
        c.hang.store(true, Ordering::SeqCst);
        tokio::time::sleep(ms(148)).await;
        assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Healthy);
        tokio::time::sleep(ms(3)).await;
        let stale = reg.check(Tag::Ready).await;
        let e = &stale.entries[0];
        assert_eq!(e.status, HealthStatus::Unhealthy);
        assert_eq!(
            e.description.as_deref(),
            Some("stale: no result for over 150 ms")
        );
        assert_eq!(stale.total_duration, Duration::ZERO);
        // At the deadline the timeout is recorded as the latest result.
        tokio::time::sleep(ms(500)).await;
        let timed_out = reg.check(Tag::Ready).await;
        assert_eq!(timed_out.entries[0].outcome, EntryOutcome::TimedOut);
        assert_eq!(
            timed_out.entries[0].description.as_deref(),
            Some("timed out after 500 ms")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_schedule_ends_when_the_probe_is_removed() {
        let reg = HealthRegistry::new();
        let (r, c) = counted("db", ms(10));
        let handle = reg.add(r.refresh(ms(100))).unwrap();
        reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(250)).await;
        assert_eq!(c.started(), 3);
        assert!(handle.remove());
        tokio::time::sleep(ms(10_000)).await;
        assert_eq!(c.started(), 3, "a run after removal");
    }

    #[tokio::test(start_paused = true)]
    async fn the_schedule_ends_when_the_probe_is_replaced() {
        let reg = HealthRegistry::new();
        let (r, old) = counted("db", ms(10));
        let handle = reg.add(r.refresh(ms(100))).unwrap();
        reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(250)).await;
        let (r, new) = counted("db", ms(10));
        let _handle = handle.replace(r).unwrap();
        tokio::time::sleep(ms(10_000)).await;
        assert_eq!(old.started(), 3, "the old schedule ran on");
        assert_eq!(
            new.started(),
            0,
            "the replacement is not a background probe"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_schedule_ends_with_the_registry() {
        let reg = HealthRegistry::new();
        let (r, c) = counted("db", ms(10));
        reg.add(r.refresh(ms(100))).unwrap();
        reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(250)).await;
        assert_eq!(c.started(), 3);
        drop(reg);
        tokio::time::sleep(ms(10_000)).await;
        assert_eq!(c.started(), 3, "a run after the registry was dropped");
        assert_eq!(Arc::strong_count(&c), 1, "the task still holds the probe");
    }

    #[test]
    fn the_builder_applies_the_execution_policy_rules() {
        let reg = HealthRegistry::new();
        let ok = || ProbeRegistration::new("p", from_fn(|| async { Ok(ProbeResult::healthy()) }));
        let rules = |r| reg.add(r).unwrap_err().rules();
        assert_eq!(rules(ok().max_staleness(ms(5))), [Rule::RefreshPolicy]);
        assert_eq!(
            rules(ok().refresh(ms(5)).max_staleness(ms(5))),
            [Rule::RefreshPolicy]
        );
        assert_eq!(
            rules(ok().refresh(ms(5)).cache(ms(5))),
            [Rule::RefreshPolicy]
        );
        assert_eq!(rules(ok().cache(ms(0))), [Rule::Duration]);
        assert_eq!(
            rules(ok().tags(TagSet::ACTIVE).cache(ms(5))),
            [Rule::LiveAnswer]
        );
        assert_eq!(
            rules(ok().tags(TagSet::READY.with(Tag::Active)).refresh(ms(5))),
            [Rule::LiveAnswer]
        );
        assert!(reg.names().is_empty());
        reg.add(ok().refresh(ms(5)).max_staleness(ms(6))).unwrap();
    }
}
