//! A probe's run: what every run shares (the [`Executor`] handle, the
//! in-flight bound, the probe thread), how a request gets its turn at a
//! probe (the kept result, the run it claims and polls first, or the run
//! under way it waits for), the flight a run becomes when it waits, and
//! its end, recorded once.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::runtime::{Builder, Handle, Runtime};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tracing::instrument::WithSubscriber;
use zb_health_spec::HealthStatus;

use super::runtime::{Crew, Flight, ProbeRuntime, Run, Slot, keep_result, kept_entry, lost};
use crate::history::ProbeHistory;
use crate::observe::RunError;
use crate::probe::{BoxProbeFuture, ProbeOutcome};
use crate::publish::{Transition, TransitionQueue};
use crate::report::{
    ERRORED_DESCRIPTION, EntryOutcome, HealthEntry, PANICKED_DESCRIPTION, timeout_description,
};
use crate::shared::SharedVerdicts;
use crate::sync::lock;

/// Whether the service is still starting (its startup gates pending):
/// runs before the gates open are not transitions to log.
pub(crate) type Starting = Box<dyn Fn() -> bool + Send + Sync>;

/// Runs probes. Cheap to clone; clones share the bound.
#[derive(Clone)]
pub(crate) struct Executor {
    pub(super) shared: Arc<RunContext>,
}

/// What every run shares: the in-flight bound, the log interval, where
/// executions run and whether the service is still starting.
pub(super) struct RunContext {
    pub(super) limiter: Limiter,
    /// In nanoseconds; an atomic so a manifest's `install` can set it on
    /// the process registry after it is built.
    pub(super) failure_log_interval: AtomicU64,
    pub(super) runs: Runs,
    pub(super) starting: Starting,
    /// Where shared probes compare their verdicts (BE-HLTH-003), with how
    /// many times it was set; read only by a shared probe's run.
    pub(super) verdicts: std::sync::RwLock<Option<(u64, Arc<dyn SharedVerdicts>)>>,
    /// Whether each reported entry goes into its probe's history.
    pub(super) history: AtomicBool,
    /// The registry's detection time in nanoseconds (0: none known), which
    /// a request-driven probe's threshold counts periods of.
    pub(super) detection: AtomicU64,
    /// Where the probes' transitions go to the publishers.
    pub(super) transitions: Arc<TransitionQueue>,
}

impl RunContext {
    /// The period a probe's threshold counts (R20's
    /// [`run_period`](zb_health_spec::detection::run_period)): `refresh`,
    /// else the readiness period behind the detection time; zero (every
    /// run counts) for a request-driven probe while none is known.
    pub(super) fn run_period(&self, refresh: Option<Duration>) -> Duration {
        let detection = Duration::from_nanos(self.detection.load(Ordering::Relaxed));
        zb_health_spec::detection::run_period(refresh, detection)
    }
}

/// Where a registry's probe executions run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runs {
    /// On the library's probe thread (the default).
    ProbeThread,
    /// On the runtime of the request that starts them, for tests on tokio's
    /// paused clock, which the probe thread does not share.
    #[cfg_attr(not(any(test, feature = "test-util")), allow(dead_code))]
    Caller,
}

impl Runs {
    /// The runtime executions are moved to, or `None` to run on the caller.
    pub(crate) fn handle(self) -> Option<&'static Handle> {
        match self {
            Runs::ProbeThread => probe_runtime(),
            Runs::Caller => None,
        }
    }
}

/// Runs `work` on the probe thread, detached: the library's own timers
/// (a maintenance window's end), which must not depend on any request.
/// Without a probe thread (logged once) the work does not run; its owner
/// also checks when read.
pub(crate) fn spawn_on_probe_thread(work: impl Future<Output = ()> + Send + 'static) {
    if let Some(handle) = probe_runtime() {
        handle.spawn(work);
    }
}

/// The probe thread's runtime, started on first use. One thread: probes
/// are I/O-bound waits, and a probe that blocks its thread is bounded by
/// the waiters' own deadlines either way. `None` (logged once) if the OS
/// refuses a thread or an event loop; probes then run on their callers, as
/// a registry built with `probes_on_caller_runtime` does.
fn probe_runtime() -> Option<&'static Handle> {
    static RUNTIME: OnceLock<Option<Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("zb-health-probe")
                .enable_all()
                .build()
                .inspect_err(|error| {
                    tracing::error!(%error, "cannot start the health probe thread; probes run on the requests' runtimes");
                })
                .ok()
        })
        .as_ref()
        .map(Runtime::handle)
}

/// The registry-wide in-flight bound (BE-HLTH-006, `max_in_flight`). A
/// free slot costs one compare-and-swap to take and one subtraction to
/// give back (tokio's semaphore locks a mutex on every release); only a
/// run that finds none free waits, on `freed`.
pub(super) struct Limiter {
    max: usize,
    taken: AtomicUsize,
    /// Runs waiting for a slot: a release notifies only while there are.
    waiting: AtomicUsize,
    freed: Notify,
}

impl Limiter {
    pub(super) fn new(max: usize) -> Self {
        Self {
            max,
            taken: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            freed: Notify::new(),
        }
    }

    /// Takes a slot if one is free now.
    #[inline]
    fn try_take(&self) -> bool {
        // Sequentially consistent, with `waiting`, so a release that sees
        // no waiter is seen by the waiter's own next try (see `take`).
        self.taken
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max).then_some(n + 1)
            })
            .is_ok()
    }

    /// Waits until a slot is free and takes it; the caller gives it back.
    async fn take(&self) {
        if !self.try_take() {
            // Counted off however the wait ends: taken, or dropped at the
            // deadline.
            let _waiting = Counted::new(&self.waiting);
            woken_until(&self.freed, || self.try_take().then_some(())).await;
        }
    }

    #[inline]
    fn give(&self) {
        self.taken.fetch_sub(1, Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.freed.notify_one();
        }
    }
}

/// An in-flight slot a flight holds until it ends, owned (the flight
/// outlives any borrow of the registry's context).
pub(super) struct HeldSlot(Arc<RunContext>);

impl Drop for HeldSlot {
    fn drop(&mut self) {
        self.0.limiter.give();
    }
}

/// A future, and what is released only once the future is dropped
/// (fields drop in order), however it ends: a check before its in-flight
/// slot, so the bound counts an execution until its future is gone; a
/// flight's execution before its run is retired ([`Retire`]).
struct Then<F, R> {
    future: F,
    _then: R,
}

impl<F: Future + Unpin, R: Unpin> Future for Then<F, R> {
    type Output = F::Output;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        std::pin::Pin::new(&mut self.get_mut().future).poll(cx)
    }
}

/// A probe's entry for one request, as far as it is known at once.
pub(super) enum EntryOrWait<'a> {
    /// Known now: a kept result (and when it expires), a background one, or
    /// a run that answered at its first poll (`None`).
    Entry(HealthEntry, Option<Instant>),
    /// To be waited for: a flight still running, or the first poll of
    /// another request's run.
    Wait(BoxFuture<'a, HealthEntry>),
}

impl EntryOrWait<'_> {
    /// The entry, waited for if need be.
    pub(super) async fn resolve(self) -> HealthEntry {
        match self {
            EntryOrWait::Entry(entry, _) => entry,
            EntryOrWait::Wait(wait) => wait.await,
        }
    }
}

impl Executor {
    /// A request's turn at a request-driven probe: its fresh kept result,
    /// else the run under way (waited for), else a run it claims and
    /// polls first. `arrived`: when a request that waited for an abandoned
    /// flight to retire arrived (`None`: now), so a run it starts counts
    /// its deadline from the arrival and the request answers within it.
    #[inline]
    pub(super) fn turn<'a>(
        &'a self,
        probe: &'a Arc<ProbeRuntime>,
        arrived: Option<Instant>,
    ) -> EntryOrWait<'a> {
        if let Some((entry, expires)) = kept_entry(probe) {
            return EntryOrWait::Entry(entry, Some(expires));
        }
        let claimed = {
            let mut slot = lock(&probe.state.slot);
            match slot.run.as_mut() {
                Some(run) => Err((
                    run.crew.get_or_insert_with(Default::default).clone(),
                    run.started,
                )),
                None => {
                    let generation = slot.next_generation;
                    slot.next_generation += 1;
                    let started = arrived.unwrap_or_else(Instant::now);
                    let run = Run {
                        generation,
                        started,
                        crew: None,
                    };
                    slot.run = Some(run);
                    Ok((generation, started))
                }
            }
        };
        match claimed {
            Ok((generation, started)) => self.first_poll(probe, generation, started),
            Err((crew, started)) => {
                let arrived = arrived.unwrap_or_else(Instant::now);
                EntryOrWait::Wait(self.wait(probe, crew, started, arrived).boxed())
            }
        }
    }

    /// Starts a claimed run: its first poll here and now, with the probe
    /// thread's runtime entered and under the panic guard, but with no
    /// deadline timer. A probe that answers at once (nearly every probe on
    /// nearly every request) needs none; one that waits becomes a flight,
    /// which arms it. The in-flight slot is taken first, without waiting
    /// (one atomic), since a first poll may already open a connection;
    /// with none free, the run is a flight that waits for one.
    #[inline]
    fn first_poll<'a>(
        &'a self,
        probe: &'a Arc<ProbeRuntime>,
        generation: u64,
        started: Instant,
    ) -> EntryOrWait<'a> {
        let claim = ClaimGuard {
            probe,
            generation,
            started,
        };
        if !self.shared.limiter.try_take() {
            let check = probe.probe.clone().check_owned();
            return self.take_off(claim, check, None);
        }
        let polled = {
            let _probe_runtime = self.shared.runs.handle().map(Handle::enter);
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
        let result = match polled {
            Ok(Ok(outcome)) => Ok(outcome),
            Err(panic) => Err(panic),
            // The flight keeps the slot until it ends.
            Ok(Err(pending)) => {
                let held = HeldSlot(self.shared.clone());
                return self.take_off(claim, pending, Some(held));
            }
        };
        self.shared.limiter.give();
        let duration = started.elapsed();
        let entry = match duration < probe.timeout {
            true => finish(&self.shared, probe, Some(generation), Ok(result), duration),
            false => self.late_first_poll(probe, generation, Ok(result), duration),
        };
        std::mem::forget(claim);
        EntryOrWait::Entry(entry, None)
    }

    /// Ends a run whose first poll blocked its thread past the deadline.
    /// The run leaves the slot first, so no request joins it while it is
    /// ended (one that came now would end it at once, at the deadline
    /// passed). A waiter may have ended it at the deadline (`wait`): that
    /// entry stands, as for a flight, and the late result counts for
    /// nothing; else the late result is the run's.
    #[cold]
    #[inline(never)]
    fn late_first_poll(
        &self,
        probe: &ProbeRuntime,
        generation: u64,
        result: Finished,
        duration: Duration,
    ) -> HealthEntry {
        let shared = &self.shared;
        let Some(crew) = retire(&mut lock(&probe.state.slot), generation) else {
            return finish(shared, probe, None, result, duration);
        };
        let entry = end_once(shared, probe, &crew, result, duration);
        crew.changed.notify_waiters();
        entry
    }

    /// Makes the claimed run a flight (`held`: with the in-flight slot its
    /// first poll took): the in-flight slot, the deadline and the panic
    /// guard around the rest of the check, moved to the probe thread.
    /// Wakes the requests that arrived during the claim, and joins it.
    fn take_off<'a>(
        &'a self,
        claim: ClaimGuard<'a>,
        check: BoxProbeFuture<'static>,
        held: Option<HeldSlot>,
    ) -> EntryOrWait<'a> {
        let (probe, generation, started) = (claim.probe, claim.generation, claim.started);
        std::mem::forget(claim);
        let crew: Arc<Crew> = match lock(&probe.state.slot).run.as_mut() {
            Some(run) if run.generation == generation => {
                run.crew.get_or_insert_with(Default::default).clone()
            }
            _ => Arc::default(),
        };
        let (shared, run_crew) = (self.shared.clone(), Some(crew.clone()));
        let work = Then {
            future: execute(
                shared,
                probe.clone(),
                generation,
                started,
                check,
                held,
                run_crew,
            )
            .boxed(),
            _then: Retire {
                probe: probe.clone(),
                generation,
                crew: crew.clone(),
            },
        };
        let flight = match self.shared.runs.handle() {
            Some(handle) => {
                // The asker's subscriber (a test's local one) sees the
                // run's lines wherever it runs.
                let mut task = AbortOnDrop(handle.spawn(work.with_current_subscriber()));
                let probe = probe.clone();
                async move {
                    (&mut task.0)
                        .await
                        .unwrap_or_else(|_lost| end_lost(&probe, generation, started))
                }
                .boxed()
            }
            None => work.boxed(),
        }
        .shared();
        // `downgrade` fails only for a finished flight; this one has not
        // been polled yet here.
        let weak = flight.downgrade().expect("a new flight is pending");
        let _ = crew.flight.set(weak);
        crew.changed.notify_waiters();
        EntryOrWait::Wait(join(&self.shared, probe, flight, crew, started).boxed())
    }

    /// A request's wait for a run another request claimed, within the
    /// run's deadline: the entry its first poll ended with, else the
    /// flight it took off as; at the deadline, with the first poll still
    /// blocking its thread, it ends the run as a timeout ([`end_once`]).
    /// A flight abandoned but not yet dropped is waited out first
    /// ([`after_retirement`](Self::after_retirement)).
    async fn wait(
        &self,
        probe: &Arc<ProbeRuntime>,
        crew: Arc<Crew>,
        started: Instant,
        arrived: Instant,
    ) -> HealthEntry {
        let next = {
            let _waiting = Counted::new(&crew.waiting);
            // `Err`: the entry of a run that ended at its first poll.
            // `Ok(None)`: the flight is abandoned, not yet dropped: the
            // next run waits until its execution is gone.
            let next = woken_until(&crew.changed, || match crew.flight.get() {
                Some(flight) => Some(Ok(flight.upgrade())),
                None => crew.ended.get().cloned().map(Err),
            });
            match tokio::time::timeout_at(started + probe.timeout, next).await {
                Ok(next) => next,
                // The run's first poll blocks its thread past the deadline:
                // the run ends here, once for all, as `join` ends a flight.
                Err(elapsed) => {
                    return end_once(&self.shared, probe, &crew, Err(elapsed), started.elapsed());
                }
            }
        };
        match next {
            Err(entry) => entry,
            Ok(Some(flight)) => join(&self.shared, probe, flight, crew, started).await,
            Ok(None) => self.after_retirement(probe, crew, arrived).await,
        }
    }

    /// The entry of a request that found the probe's flight abandoned but
    /// its execution not yet dropped: it waits for that (on the probe
    /// thread, an abort takes effect at the task's next turn there), then
    /// takes its turn, all within the probe's deadline from its arrival
    /// (`arrived`): a run it starts then is counted from the arrival. So a
    /// probe's next execution never starts while the previous one's future
    /// is alive (single flight, exactly). A request whose deadline passes
    /// first has no run to end: its timeout is judged on its own, so
    /// several such requests each count as one.
    async fn after_retirement(
        &self,
        probe: &Arc<ProbeRuntime>,
        crew: Arc<Crew>,
        arrived: Instant,
    ) -> HealthEntry {
        let retired = woken_until(&crew.changed, || {
            let slot = lock(&probe.state.slot);
            let crew_of = |run: &Run| run.crew.as_ref().is_some_and(|c| Arc::ptr_eq(c, &crew));
            (!slot.run.as_ref().is_some_and(crew_of)).then_some(())
        });
        if let Err(elapsed) = tokio::time::timeout_at(arrived + probe.timeout, retired).await {
            // Still not dropped (the probe thread is blocked): no run could
            // start in time, a timeout judged like a run's (threshold,
            // shared comparison, log), with no run of its own to end.
            return finish(&self.shared, probe, None, Err(elapsed), arrived.elapsed());
        }
        // Every wait from here ends by the same deadline or earlier: its
        // own run's, or the deadline of a flight it joins.
        self.turn(probe, Some(arrived)).resolve().await
    }
}

/// Ends a first poll that ended without a result (something outside the
/// probe's guard unwound) with the probe's failure, for its waiters, so
/// the next request runs the probe again. Forgotten once the run answered
/// or became a flight.
struct ClaimGuard<'a> {
    probe: &'a Arc<ProbeRuntime>,
    generation: u64,
    started: Instant,
}

impl Drop for ClaimGuard<'_> {
    fn drop(&mut self) {
        end_lost(self.probe, self.generation, self.started);
    }
}

/// Ends the run `generation`, whose execution is gone without a result,
/// with the probe's failure ([`lost`]), for its waiters.
fn end_lost(probe: &ProbeRuntime, generation: u64, started: Instant) -> HealthEntry {
    let entry = lost(probe, started.elapsed());
    conclude_run(probe, Some(generation), &entry, false);
    entry
}

/// Retires a flight's run (the probe's next run may start) once its
/// execution is dropped ([`Then`]): finished, or cancelled wherever it
/// runs. A finished run has retired it already (`execute`), after its
/// check's future was dropped.
struct Retire {
    probe: Arc<ProbeRuntime>,
    generation: u64,
    crew: Arc<Crew>,
}

impl Drop for Retire {
    fn drop(&mut self) {
        retire(&mut lock(&self.probe.state.slot), self.generation);
        self.crew.changed.notify_waiters();
    }
}

/// A flight's task on the probe thread, aborted when the flight is
/// dropped (its last waiter gone: nothing is left running). Its error is
/// a panic outside the probe's guard or the runtime's shutdown.
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Waits on a flight, counted as one of its waiters, within its deadline.
async fn join(
    shared: &RunContext,
    probe: &ProbeRuntime,
    flight: Flight,
    crew: Arc<Crew>,
    started: Instant,
) -> HealthEntry {
    let _waiting = Counted::new(&crew.waiting);
    // The flight's own deadline ends it in time, but its timer belongs
    // to the runtime that started it; this one, on the waiter's own
    // runtime, keeps the bound even if that runtime is stalled.
    match tokio::time::timeout_at(started + probe.timeout, flight).await {
        Ok(entry) => entry,
        // The run's deadline, noticed here first perhaps: the run ends as a
        // timeout, once for all (its flight, when it gets there, keeps this
        // entry and retires the run).
        Err(elapsed) => end_once(shared, probe, &crew, Err(elapsed), started.elapsed()),
    }
}

/// What a check gave: its outcome or its panic, or `Err` at its deadline.
type Finished = Result<std::thread::Result<ProbeOutcome>, tokio::time::error::Elapsed>;

/// The rest of a run whose first poll is pending (or a background run):
/// in-flight slot, deadline (counted from the run's start) and panic
/// guard; then the run is finished like one that answered at once.
pub(super) async fn execute(
    shared: Arc<RunContext>,
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
        Then {
            future: AssertUnwindSafe(pending).catch_unwind(),
            _then: slot,
        }
        .await
    };
    let result = tokio::time::timeout_at(started + probe.timeout, guarded).await;
    let duration = started.elapsed();
    let Some(crew) = crew else {
        return finish(&shared, &probe, Some(generation), result, duration);
    };
    let entry = end_once(&shared, &probe, &crew, result, duration);
    retire(&mut lock(&probe.state.slot), generation);
    entry
}

/// The entry of a run that requests wait on (`crew`), finished once for
/// all from what its check gave, whoever ends it first: its flight or
/// first poll, or a waiter at the deadline. A later caller gets the first
/// one's entry. Retires nothing.
fn end_once(
    shared: &RunContext,
    probe: &ProbeRuntime,
    crew: &Crew,
    result: Finished,
    duration: Duration,
) -> HealthEntry {
    crew.ended
        .get_or_init(|| finish(shared, probe, None, result, duration))
        .clone()
}

/// Makes a run's entry from what its check gave in `duration`, passes it
/// through the hysteresis, records it (retiring the run `generation`, if
/// given) and logs it.
#[inline]
pub(super) fn finish(
    shared: &RunContext,
    probe: &ProbeRuntime,
    generation: Option<u64>,
    result: Finished,
    duration: Duration,
) -> HealthEntry {
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
    // Only a threshold counts periods; a probe without one (nearly every
    // one) does not enter the hysteresis at all.
    let (entry, held) = match &probe.state.hysteresis {
        Some(hysteresis) => {
            let period = shared.run_period(policy.refresh);
            hysteresis.apply(policy.threshold, period, raw, failed)
        }
        None => (raw, false),
    };
    // `restart_after` counts from the reported failure, opened or not.
    if policy.restart_after.is_some() {
        let failing = entry.status == failed && failed != HealthStatus::Healthy;
        probe.state.note_failing(failing);
    }
    // A shared dependency compares the reported verdict with the
    // cluster's, to fail open (BE-HLTH-003); without a view it is an
    // ordinary probe.
    let entry = match probe.policy().shared {
        true => match &*crate::sync::read(&shared.verdicts) {
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
    conclude_run(probe, generation, &entry, held);
    record(shared, probe, &entry, &error);
    entry
}

/// Records a probe's reported entry (a run's, or a skip's): in its
/// history while that is enabled (one relaxed load otherwise, no
/// allocation after the first) and in the transition log. While the
/// startup gates are pending, a change is no transition in either.
#[inline]
pub(super) fn record(
    shared: &RunContext,
    probe: &ProbeRuntime,
    entry: &HealthEntry,
    error: &RunError,
) {
    let starting = (shared.starting)();
    if shared.history.load(Ordering::Relaxed) {
        let history = probe.history.get_or_init(ProbeHistory::boxed);
        history.record(entry, crate::history::now_ms(), starting);
    }
    let interval = Duration::from_nanos(shared.failure_log_interval.load(Ordering::Relaxed));
    if let Some(from) = probe.log.ran(entry, error, interval, starting) {
        shared
            .transitions
            .offer(|| Transition::probe(&entry.name, from, entry.status, entry.outcome.as_str()));
    }
}

/// Ends the run `generation` and keeps its entry for the cache or
/// readers; `held` marks an entry the threshold holds back. Requests that
/// wait on its first poll get the entry.
#[inline]
pub(super) fn conclude_run(
    probe: &ProbeRuntime,
    generation: Option<u64>,
    entry: &HealthEntry,
    held: bool,
) {
    let crew = {
        let mut slot = lock(&probe.state.slot);
        keep_result(probe, &mut slot, entry, held);
        generation.and_then(|generation| retire(&mut slot, generation))
    };
    if let Some(crew) = crew {
        // Set once: a flight's own end may have set it already.
        let _ = crew.ended.set(entry.clone());
        crew.changed.notify_waiters();
    }
}

/// Ends the run `generation` if it is still the probe's (its check's
/// future is gone), so the next request starts afresh; its crew, if any.
fn retire(slot: &mut Slot, generation: u64) -> Option<Arc<Crew>> {
    match &slot.run {
        Some(run) if run.generation == generation => slot.run.take()?.crew,
        _ => None,
    }
}

/// Waits until `ready` gives a value, trying again at each wake-up of
/// `notify`; registered before each try, so a wake-up between the two
/// still counts.
async fn woken_until<T>(notify: &Notify, mut ready: impl FnMut() -> Option<T>) -> T {
    loop {
        let mut woken = pin!(notify.notified());
        woken.as_mut().enable();
        if let Some(value) = ready() {
            return value;
        }
        woken.await;
    }
}

/// Counts one waiter in `0` for as long as it waits.
struct Counted<'a>(&'a AtomicUsize);

impl<'a> Counted<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
