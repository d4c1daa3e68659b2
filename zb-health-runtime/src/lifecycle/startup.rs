//! The startup gate (BE-HLTH-004): `ready` and `active` answer 503 until
//! every declared piece of startup work is done.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, Weak};

use futures_util::FutureExt;

use super::{Phase, STARTUP_ENTRY};
use crate::history::{EventKind, Events, GateView};

/// The gates of one registry. What the request path reads of them is the
/// lifecycle's [`Phase`] word, whose startup bits only the gates write,
/// under `names`'s lock.
pub(super) struct Startup {
    phase: Arc<Phase>,
    /// The gates by state, with the named ones in declaration order: what
    /// the startup path names.
    names: Mutex<GateNames>,
    /// Where a gate's signal is recorded for the history.
    events: Arc<Events>,
}

/// The gates by state: how many are unsignalled, whether one failed, and
/// the states of the named ones.
#[derive(Default)]
struct GateNames {
    /// Declared gates, named or not, not yet signalled.
    unsignalled: usize,
    /// Whether any gate failed; sticky.
    any_failed: bool,
    /// Every named gate in declaration order, in its state: what the
    /// startup path and the history name.
    states: Vec<GateView>,
}

impl Startup {
    pub(super) fn new(phase: Arc<Phase>, events: Arc<Events>) -> Self {
        Self {
            phase,
            names: Mutex::new(GateNames::default()),
            events,
        }
    }

    /// The named gates in declaration order, in their states, ready and
    /// failed ones with when, for the history.
    pub(super) fn gate_views(&self) -> Vec<GateView> {
        crate::sync::lock(&self.names).states.clone()
    }

    /// Writes the phase's startup bits and the
    /// [`STARTING`](crate::observe::STARTING) gauge (1 while a normal start
    /// is under way, 0 once started or failed: a failed start is a failure
    /// to alert on, not a start) from `names`, whose lock the caller holds,
    /// so the last change written is the last one made.
    fn note(&self, names: &GateNames) {
        let pending = if names.unsignalled > 0 {
            Phase::STARTING
        } else {
            0
        };
        let failed = if names.any_failed {
            Phase::START_FAILED
        } else {
            0
        };
        self.phase
            .put(Phase::STARTING | Phase::START_FAILED, pending | failed);
        // Only the gates write these bits, under the lock held here.
        let starting = self.phase.is_starting();
        metrics::gauge!(crate::observe::STARTING).set(f64::from(u8::from(starting)));
    }

    /// The pending and the failed named gates, in declaration order, for
    /// the startup path.
    pub(super) fn named(&self) -> (Vec<Arc<str>>, Vec<Arc<str>>) {
        let names = crate::sync::lock(&self.names);
        let named = |state| {
            let gates = names.states.iter().filter(|g| g.state == state);
            gates.map(|g| g.name.clone()).collect()
        };
        (named("pending"), named("failed"))
    }
}

/// One declared piece of startup work, from
/// [`Lifecycle::startup_gate`](crate::lifecycle::Lifecycle::startup_gate).
/// Signal it once: [`ready`](Self::ready) or [`failed`](Self::failed), or
/// let [`run`](Self::run) signal it from the outcome of the work.
///
/// Dropping it unsignalled is a bug, never a verdict: the gate stays
/// pending (`ready` keeps answering 503 `starting`, which a startup probe
/// turns into a restart) and one error line names the mistake. So no
/// accidental drop, of a temporary or of a struct holding the gate, can
/// turn the start into a failure for good; and a crashed initialisation,
/// which never signals, never looks ready.
#[must_use = "the service stays not-ready until the gate is signalled"]
#[derive(Debug)]
pub struct StartupGate {
    startup: Weak<Startup>,
    /// The gate's name, when it was declared with one.
    name: Option<Arc<str>>,
    signalled: bool,
}

impl StartupGate {
    pub(super) fn declare(startup: &Arc<Startup>, name: Option<Arc<str>>) -> Self {
        let mut names = crate::sync::lock(&startup.names);
        names.unsignalled += 1;
        if let Some(name) = &name {
            names.states.push(GateView {
                name: name.clone(),
                state: "pending",
                at_ms: None,
            });
        }
        startup.note(&names);
        drop(names);
        Self {
            startup: Arc::downgrade(startup),
            name,
            signalled: false,
        }
    }

    /// The gate's name, if it was declared with one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Takes the gate out of the pending ones, into the failed ones when
    /// it `failed`.
    fn settle(&self, startup: &Startup, failed: bool) {
        let kind = if failed {
            EventKind::GateFailed
        } else {
            EventKind::GateReady
        };
        // An unnamed gate's event speaks of the startup as a whole.
        let event_name = self.name.clone().unwrap_or_else(|| STARTUP_ENTRY.into());
        startup.events.push(kind, event_name);
        let at = crate::history::now_ms();
        let mut names = crate::sync::lock(&startup.names);
        names.unsignalled -= 1;
        names.any_failed |= failed;
        if let Some(name) = &self.name
            && let Some(gate) = names.states.iter_mut().find(|g| Arc::ptr_eq(&g.name, name))
        {
            gate.state = if failed { "failed" } else { "ready" };
            gate.at_ms = Some(at);
        }
        startup.note(&names);
    }

    /// This piece of initialisation is complete. When it is the last one,
    /// `ready` and `active` answer from their probes again.
    pub fn ready(mut self) {
        self.signalled = true;
        if let Some(startup) = self.startup.upgrade() {
            self.settle(&startup, false);
        }
    }

    /// Initialisation failed: `ready` and `active` stay 503 with the fixed
    /// description `startup failed` for the rest of the
    /// process. `error` goes to the log only (BE-HLTH-007).
    pub fn failed(mut self, error: impl std::fmt::Display) {
        self.signalled = true;
        tracing::error!(error = %error, "startup failed; ready and active answer 503");
        if let Some(startup) = self.startup.upgrade() {
            self.settle(&startup, true);
        }
    }

    /// Runs the startup work `work` and signals the gate from its outcome:
    /// [`ready`](Self::ready) on `Ok`, [`failed`](Self::failed) on `Err`
    /// and when `work` panics (the panic is caught and logged, and the
    /// task goes on). Returns whether it succeeded.
    pub async fn run<E: std::fmt::Display>(
        self,
        work: impl Future<Output = Result<(), E>>,
    ) -> bool {
        match AssertUnwindSafe(work).catch_unwind().await {
            Ok(Ok(())) => {
                self.ready();
                true
            }
            Ok(Err(error)) => {
                self.failed(error);
                false
            }
            Err(_) => {
                self.failed("the startup work panicked");
                false
            }
        }
    }
}

impl Drop for StartupGate {
    fn drop(&mut self) {
        if !self.signalled && self.startup.strong_count() > 0 {
            tracing::error!(
                "a startup gate was dropped without `ready()` or `failed()`: ready and active answer 503 `starting` until the process restarts; signal the gate, or use `StartupGate::run`"
            );
        }
    }
}
