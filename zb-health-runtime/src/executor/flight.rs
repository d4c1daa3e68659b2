//! Single flight: how a request gets a probe's entry, from the kept
//! result, the flight under way, or a run it starts and polls first.

use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;

use futures_util::FutureExt;
use tokio::time::Instant;
use tracing::instrument::WithSubscriber;

use super::context::Executor;
use super::run::{
    HeldSlot, Retiring, background_entry, conclude_run, execute, finish, join, lost, waited_out,
};
use super::runtime::{ProbeRuntime, kept_entry};
use super::schedule::ensure_task;
use super::state::{
    Claim, Crew, CurrentFlight, EntryOrWait, Flight, PollOutcome, RunState, claim, wait_handoff,
};
use super::thread::Execution;
use crate::probe::BoxProbeFuture;
use crate::report::HealthEntry;
use crate::sync::lock;

impl Executor {
    /// The entry of one probe for one request, under its policy: the
    /// background result, a fresh cached one, or the run's (its own, or
    /// the one it joins). For one probe alone (the gRPC health service's
    /// targets); a tier's report asks [`now`](Self::now) for each.
    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    pub(crate) async fn entry(&self, probe: &Arc<ProbeRuntime>) -> HealthEntry {
        match self.now(probe) {
            EntryOrWait::Entry(entry, _) => entry,
            EntryOrWait::Wait(wait) => wait.await,
        }
    }

    /// The entry of `probe` if it is known without waiting, else what to
    /// wait for. Never blocks, except on the probe's own first poll.
    #[inline]
    pub(super) fn now<'a>(&'a self, probe: &'a Arc<ProbeRuntime>) -> EntryOrWait<'a> {
        self.turn(probe, None)
    }

    /// [`now`](Self::now) for a request that arrived at `arrived` (`None`:
    /// now) and waited since for an abandoned flight to retire: a run it
    /// starts counts its deadline from the arrival, so the request
    /// answers within its own deadline through the run.
    #[inline]
    pub(super) fn turn<'a>(
        &'a self,
        probe: &'a Arc<ProbeRuntime>,
        arrived: Option<Instant>,
    ) -> EntryOrWait<'a> {
        if let Some((entry, expires)) = kept_entry(probe) {
            return EntryOrWait::Entry(entry, Some(expires));
        }
        if probe.policy().refresh.is_some() {
            ensure_task(probe, &self.shared);
            return EntryOrWait::Entry(background_entry(probe), None);
        }
        let turn = {
            let mut slot = lock(&probe.state.slot);
            match &mut slot.run {
                RunState::Flight(current) => match current.flight.upgrade() {
                    Some(flight) => Claim::Join(flight, current.crew.clone(), current.started),
                    // Abandoned, but its execution is still being dropped
                    // (an aborted task on the probe thread): a new run now
                    // would be a second execution alive at once.
                    None => Claim::Retiring(current.crew.clone()),
                },
                RunState::FirstPoll(first) => {
                    let handoff = first.handoff.get_or_insert_with(Default::default);
                    Claim::Handoff(handoff.clone(), first.started)
                }
                RunState::Idle => claim(&mut slot, arrived),
            }
        };
        match turn {
            Claim::Own(generation, started) => self.first_poll(probe, generation, started),
            Claim::Join(flight, crew, started) => {
                EntryOrWait::Wait(join(&self.shared, probe, flight, crew, started).boxed())
            }
            Claim::Retiring(crew) => {
                self.after_retirement(probe, crew, arrived.unwrap_or_else(Instant::now))
            }
            Claim::Handoff(handoff, started) => EntryOrWait::Wait(
                async move {
                    match wait_handoff(&handoff, started + probe.timeout).await {
                        Some(PollOutcome::Entry(entry)) => entry.clone(),
                        Some(PollOutcome::Flight(flight, crew)) => {
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
    pub(super) fn after_retirement<'a>(
        &'a self,
        probe: &'a Arc<ProbeRuntime>,
        crew: Arc<Crew>,
        arrived: Instant,
    ) -> EntryOrWait<'a> {
        let retirement = async move {
            loop {
                let mut notified = pin!(crew.retired.notified());
                // Registered before the check, so a retirement between the
                // two still wakes this request.
                notified.as_mut().enable();
                let retiring = matches!(
                    &lock(&probe.state.slot).run,
                    RunState::Flight(c) if Arc::ptr_eq(&c.crew, &crew)
                );
                if !retiring {
                    break;
                }
                notified.await;
            }
        };
        EntryOrWait::Wait(
            async move {
                let deadline = arrived + probe.timeout;
                if tokio::time::timeout_at(deadline, retirement).await.is_err() {
                    // Still not dropped (the probe thread is blocked).
                    return waited_out(probe, arrived);
                }
                // Every wait from here ends by `deadline` or earlier: its
                // own run's, or the deadline of a flight it joins.
                match self.turn(probe, Some(arrived)) {
                    EntryOrWait::Entry(entry, _) => entry,
                    EntryOrWait::Wait(wait) => wait.await,
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
    #[inline]
    pub(super) fn first_poll<'a>(
        &'a self,
        probe: &'a Arc<ProbeRuntime>,
        generation: u64,
        started: Instant,
    ) -> EntryOrWait<'a> {
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
        let result = match polled {
            Ok(Ok(outcome)) => Ok(outcome),
            Err(panic) => Err(panic),
            Ok(Err(pending)) => {
                // The flight keeps the slot until it ends.
                std::mem::forget(slot);
                let held = HeldSlot(self.shared.clone());
                return self.take_off(probe, generation, started, pending, Some(held), claim);
            }
        };
        drop(slot);
        let entry = finish(&self.shared, probe, Some(generation), Ok(result), started);
        claim.armed = false;
        EntryOrWait::Entry(entry, None)
    }

    /// Makes the claimed run a flight (`held`: with the in-flight slot its
    /// first poll took), hands it to the requests that arrived during the
    /// claim, and joins it.
    pub(super) fn take_off<'a>(
        &'a self,
        probe: &'a Arc<ProbeRuntime>,
        generation: u64,
        started: Instant,
        check: BoxProbeFuture<'static>,
        held: Option<HeldSlot>,
        mut claim: ClaimGuard<'_>,
    ) -> EntryOrWait<'a> {
        let crew = Arc::new(Crew::default());
        let flight = self.flight(probe, generation, started, check, held, &crew);
        let handoff = {
            let mut slot = lock(&probe.state.slot);
            match std::mem::replace(&mut slot.run, RunState::Idle) {
                RunState::FirstPoll(first) if first.generation == generation => {
                    slot.run = RunState::Flight(CurrentFlight {
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
            handoff.hand(PollOutcome::Flight(flight.clone(), crew.clone()));
        }
        EntryOrWait::Wait(join(&self.shared, probe, flight, crew, started).boxed())
    }

    /// The flight of a run whose first poll is pending (or not yet made):
    /// the in-flight slot, the deadline and the panic guard around the
    /// rest of it, moved to the probe thread if it waits.
    pub(super) fn flight(
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
                            conclude_run(&probe, Some(generation), &entry, false);
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

/// Gives up a first poll that ended without a result (something outside
/// the probe's guard unwound): its waiters get the probe's failure, and
/// the next request runs the probe again.
pub(super) struct ClaimGuard<'a> {
    pub(super) probe: &'a ProbeRuntime,
    pub(super) generation: u64,
    pub(super) started: Instant,
    pub(super) armed: bool,
}

impl Drop for ClaimGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            let entry = lost(self.probe, self.started.elapsed());
            conclude_run(self.probe, Some(self.generation), &entry, false);
        }
    }
}
