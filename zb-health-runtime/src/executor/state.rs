//! A probe's run state: its slot (the flight under way, the last result
//! and its hysteresis), the claim that makes each run single-flight, and
//! the hand-off between a finished run and its waiters.

use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::{BoxFuture, WeakShared};
use tokio::sync::oneshot;
use tokio::time::Instant;

use std::sync::atomic::AtomicU64;
use zb_health_spec::HealthStatus;
use zb_health_spec::detection::background_max_age;

use super::hysteresis::Hysteresis;
use crate::report::HealthEntry;
use crate::shared::Tally;
use crate::sync::lock;
use zb_health_spec::settings::ExecutionPolicy;

/// One probe's runtime state: its flight, its last result, its schedule.
pub(super) struct ProbeState {
    pub(super) slot: Mutex<Slot>,
    /// A background probe's schedule (`refresh`); boxed, and `None` for
    /// every other probe.
    pub(super) background: Option<Box<Background>>,
    /// Grows whenever `slot.last` is stored or cleared (see [`versions`]).
    pub(super) version: AtomicU64,
    /// Between each run's raw result and its entry (R20 bounds its hold).
    pub(super) hysteresis: Hysteresis,
    /// The shared-probe verdict last published, with the generation of
    /// the verdicts it went to (0: none yet).
    pub(super) published: AtomicU64,
    /// The status of the latest entry a run (or a skip) gave: what a
    /// background dependent reads of this probe. One byte
    /// (0: none yet, [`OPENED`] for an opened entry, else
    /// [`slot_code`]), so a run stores it without a lock.
    pub(super) last_status: std::sync::atomic::AtomicU8,
    /// What marks this probe's opened entries, made at the
    /// first; boxed, since most probes are never opened.
    pub(super) opened: std::sync::OnceLock<Box<Opened>>,
    /// For a probe with `restart_after`: since when its reported entry
    /// has been failing here, as milliseconds since [`restart_epoch`]
    /// plus one (0: not failing).
    pub(super) failing_since: AtomicU64,
}

/// The instant `failing_since` counts from: the first use in this
/// process.
pub(super) fn restart_epoch() -> std::time::Instant {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

impl ProbeState {
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

#[derive(Default)]
pub(super) struct Slot {
    pub(super) run: RunState,
    /// The last finished run and when it finished, for a probe that keeps
    /// results (cache, background): boxed, so the many probes that keep
    /// none carry one pointer, not a whole entry.
    pub(super) last: Option<Box<(Instant, HealthEntry)>>,
    pub(super) next_generation: u64,
}

/// The probe's run under way, if any.
#[derive(Default)]
pub(super) enum RunState {
    #[default]
    Idle,
    /// A request is polling a new run for the first time, right now.
    FirstPoll(FirstPoll),
    /// A run that did not answer at its first poll.
    Flight(CurrentFlight),
}

pub(super) struct FirstPoll {
    pub(super) generation: u64,
    pub(super) started: Instant,
    /// Made by the first request to arrive during the poll.
    pub(super) handoff: Option<Arc<Handoff>>,
}

pub(super) struct CurrentFlight {
    pub(super) generation: u64,
    pub(super) flight: WeakShared<BoxFuture<'static, HealthEntry>>,
    pub(super) crew: Arc<Crew>,
    pub(super) started: Instant,
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
            hysteresis: Hysteresis::new(policy.threshold),
            published: AtomicU64::new(0),
            last_status: std::sync::atomic::AtomicU8::new(0),
            opened: std::sync::OnceLock::new(),
            failing_since: AtomicU64::new(0),
        }
    }
}

/// What only a background probe keeps.
pub(super) struct Background {
    /// `Some` while its task may be running; dropping it (with the
    /// registration) stops the task.
    pub(super) task: Mutex<Option<oneshot::Sender<()>>>,
    pub(super) max_staleness: Duration,
}

/// What a flight's waiters share besides the flight.
#[derive(Default)]
pub(super) struct Crew {
    /// How many wait now.
    pub(super) waiting: AtomicUsize,
    /// The run's entry, set once by whoever ends the run first: the
    /// flight, or a waiter whose timer noticed the run's deadline before
    /// the flight's own did (it may run on another runtime). So a run that
    /// reaches its deadline is finished (hysteresis, shared comparison,
    /// log) exactly once, and every waiter answers with that entry, not
    /// with a raw timeout of its own.
    pub(super) ended: std::sync::OnceLock<HealthEntry>,
    /// Notified when the flight's execution is dropped ([`Retiring`]).
    pub(super) retired: tokio::sync::Notify,
}

/// Counts one waiter of a flight for as long as it waits.
pub(super) struct Waiting(pub(super) Arc<Crew>);

impl Waiting {
    pub(super) fn new(crew: Arc<Crew>) -> Self {
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
pub(super) enum EntryOrWait<'a> {
    /// Known now: a kept result (and when it expires), a background one, or
    /// a run that answered at its first poll (`None`).
    Entry(HealthEntry, Option<Instant>),
    /// To be waited for: a flight still running, or the first poll of
    /// another request's run.
    Wait(BoxFuture<'a, HealthEntry>),
}

/// What a request does about a probe with no kept result.
pub(super) enum Claim {
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
pub(super) type Flight = futures_util::future::Shared<BoxFuture<'static, HealthEntry>>;

/// How a first poll hands its result to the requests that arrived during
/// it (single flight, without a flight: a probe that answers at once
/// needs no shared future). Made only when a request does arrive.
#[derive(Default)]
pub(super) struct Handoff {
    pub(super) handed: std::sync::OnceLock<PollOutcome>,
    pub(super) notify: tokio::sync::Notify,
}

pub(super) enum PollOutcome {
    /// The run answered at its first poll.
    Entry(HealthEntry),
    /// The run waits: join its flight.
    Flight(Flight, Arc<Crew>),
}

impl Handoff {
    pub(super) fn hand(&self, handed: PollOutcome) {
        // Set once, by the claim's owner or its guard, then read by all.
        let _ = self.handed.set(handed);
        self.notify.notify_waiters();
    }
}

/// Claims the next run for this request (see [`Claim::Own`]), counted
/// from `since` (the request's arrival), else from now.
#[inline]
pub(super) fn claim(slot: &mut Slot, since: Option<Instant>) -> Claim {
    let generation = slot.next_generation;
    slot.next_generation += 1;
    let started = since.unwrap_or_else(Instant::now);
    slot.run = RunState::FirstPoll(FirstPoll {
        generation,
        started,
        handoff: None,
    });
    Claim::Own(generation, started)
}

/// Waits, until `deadline`, for a first poll to hand its result over.
pub(super) async fn wait_handoff(handoff: &Handoff, deadline: Instant) -> Option<&PollOutcome> {
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
