//! One execution of a probe: under its deadline and panic guard, its
//! outcome turned into an entry (failure status, hysteresis, the shared
//! comparison), recorded, and its flight retired only once its future is
//! dropped.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::time::Instant;

use zb_health_spec::HealthStatus;

use super::context::RunContext;
use super::descriptions::{NO_RESULT_YET_DESCRIPTION, stale_description};
use super::runtime::ProbeRuntime;
use super::state::{Crew, Flight, OPENED, PollOutcome, RunState, Slot, Waiting, slot_code};
use crate::observe::RunError;
use crate::probe::{BoxProbeFuture, ProbeOutcome};
use crate::publish::Transition;
use crate::report::{
    ERRORED_DESCRIPTION, EntryOutcome, HealthEntry, PANICKED_DESCRIPTION, timeout_description,
};
use crate::sync::lock;

/// A flight's execution, which retires the flight (the probe's next run
/// may start) only once its future is dropped: finished, or cancelled
/// wherever it runs. A finished run has retired it already
/// (`execute`), after its check's future was dropped.
pub(super) struct Retiring {
    pub(super) work: Option<BoxFuture<'static, HealthEntry>>,
    pub(super) probe: Arc<ProbeRuntime>,
    pub(super) generation: u64,
    pub(super) crew: Arc<Crew>,
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
pub(super) struct Holding<F> {
    pub(super) check: F,
    pub(super) _slot: HeldSlot,
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
pub(super) struct HeldSlot(pub(super) Arc<RunContext>);

impl Drop for HeldSlot {
    fn drop(&mut self) {
        self.0.limiter.give();
    }
}

/// Waits on a flight, counted as one of its waiters, within its deadline.
pub(super) async fn join(
    shared: &RunContext,
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
pub(super) fn waited_out(probe: &ProbeRuntime, started: Instant) -> HealthEntry {
    let entry = timed_out(probe, started.elapsed());
    keep_result(probe, &mut lock(&probe.state.slot), &entry, false);
    entry
}

/// What a check gave: its outcome or its panic, or `Err` at its deadline.
pub(super) type Finished = Result<std::thread::Result<ProbeOutcome>, tokio::time::error::Elapsed>;

/// The rest of a run whose first poll is pending: in-flight slot,
/// deadline (counted from the run's start) and panic guard; then the run
/// is finished like one that answered at once.
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
#[inline]
pub(super) fn finish(
    shared: &RunContext,
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
    // `restart_after` counts from the reported failure, opened or not.
    if policy.restart_after.is_some() {
        let failing = entry.status == failed && failed != HealthStatus::Healthy;
        probe.state.note_failing(failing);
    }
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
    conclude_run(probe, generation, &entry, held);
    let starting = (shared.starting)();
    probe.remember_history(shared, &entry, starting);
    let interval = Duration::from_nanos(shared.failure_log_interval.load(Ordering::Relaxed));
    if let Some(from) = probe.log.ran(&entry, &error, interval, starting) {
        shared
            .transitions
            .offer(|| Transition::probe(&entry.name, from, entry.status, entry.outcome.as_str()));
    }
    entry
}

/// Retires the run `generation` (if given) and keeps its result for the
/// cache or readers; `held` marks an entry the threshold holds back.
/// Requests that arrived during its first poll get the entry.
#[inline]
pub(super) fn conclude_run(
    probe: &ProbeRuntime,
    generation: Option<u64>,
    entry: &HealthEntry,
    held: bool,
) {
    let handoff = {
        let mut slot = lock(&probe.state.slot);
        let handoff = match &mut slot.run {
            RunState::Flight(c) if Some(c.generation) == generation => {
                slot.run = RunState::Idle;
                None
            }
            RunState::FirstPoll(first) if Some(first.generation) == generation => {
                let handoff = first.handoff.take();
                slot.run = RunState::Idle;
                handoff
            }
            _ => None,
        };
        keep_result(probe, &mut slot, entry, held);
        handoff
    };
    if let Some(handoff) = handoff {
        handoff.hand(PollOutcome::Entry(entry.clone()));
    }
}

/// Retires the flight `generation` (its check's future is gone): the
/// probe's next run may start.
pub(super) fn retire(probe: &ProbeRuntime, generation: u64) {
    let mut slot = lock(&probe.state.slot);
    if matches!(&slot.run, RunState::Flight(c) if c.generation == generation) {
        slot.run = RunState::Idle;
    }
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

/// The entry of a run that missed its deadline.
pub(super) fn timed_out(probe: &ProbeRuntime, duration: Duration) -> HealthEntry {
    probe.failed_entry(
        probe.failure_status.status(),
        Cow::Owned(timeout_description(probe.timeout)),
        duration,
        EntryOutcome::TimedOut,
    )
}

/// The entry of an execution whose task ended without a result (see
/// [`Lost`](thread::Lost)): the probe's failure, never a hang.
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
