//! A process's life around its probes: the startup gate (BE-HLTH-004), the
//! liveness watchdog (BE-HLTH-002), the shutdown drain (BE-HLTH-005),
//! maintenance mode (an operator's control) and the restart request
//! (`restart_after`, R27).
//!
//! All of them belong to the [`HealthRegistry`](crate::HealthRegistry), so
//! every server that answers from the registry sees the same state:
//!
//! * [`HealthRegistry::startup_gate`](crate::HealthRegistry::startup_gate)
//!   declares startup work; until every declared [`StartupGate`] says
//!   [`ready`](StartupGate::ready), `ready` and `active` answer 503 with a
//!   first entry `startup` (`starting`).
//! * [`HealthRegistry::watchdog`](crate::HealthRegistry::watchdog)
//!   registers a loop's [`Heartbeat`]; a missed deadline turns `live` to
//!   503 and names the loop, and so does a heartbeat dropped without
//!   [`retire`](Heartbeat::retire): a loop that died.
//! * [`HealthRegistry::begin_drain`](crate::HealthRegistry::begin_drain)
//!   starts the drain: `ready` and `active` answer 503 with a first entry
//!   `shutdown` (`draining`); [`crate::server`] calls it on SIGTERM and
//!   serves on for the [`Drain`] delay.
//!
//! The startup path ([`HealthRegistry::started`](crate::HealthRegistry::started))
//! reads the first two only: 200 once every gate is ready and every
//! watchdog has beaten once, 503 before. It never runs a probe, so a
//! kubelet `startupProbe` on it cannot restart a pod over a dependency.
//!
//! A gate and a heartbeat hold only their own state, never the registry:
//! neither keeps it alive, and neither can reach a probe.
//!
//! Maintenance (`maintenance.rs`) turns `ready` 503 with a first entry
//! `maintenance` for an operator's window; the restart request
//! (`restart.rs`) fails `live` with an entry `restart` when a shared
//! probe's `restart_after` finds the failure this pod's own.
//!
//! The entry names ([`LIFECYCLE_ENTRIES`](zb_health_spec::rules::LIFECYCLE_ENTRIES):
//! [`STARTUP_ENTRY`], [`SHUTDOWN_ENTRY`], `maintenance` and `restart`) are
//! reserved (R9), and `?exclude=` cannot leave them out.

mod drain;
mod maintenance;
mod restart;
mod startup;
mod watchdog;

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::history::{Event, EventKind, Events, LifecycleView, MaintenanceView};
use crate::registration::RegistryError;
use crate::report::{EntryOutcome, HealthEntry, HealthReport};
use zb_health_spec::{HealthStatus, Tag};

use crate::wallclock::unix_ms;
pub use drain::Drain;
pub(crate) use maintenance::Ended;
pub use maintenance::MaintenanceWindow;
pub use startup::StartupGate;
pub use watchdog::Heartbeat;
pub(crate) use watchdog::LiveAnswer;

use crate::sync::lock;
use maintenance::Maintenance;
use restart::Restart;
pub(crate) use restart::{Candidate, Inputs as RestartInputs};
use startup::Startup;
use watchdog::Watchdogs;

/// The name of the entry the startup gate puts first in `ready` and
/// `active` until initialisation is complete; no probe may take it (R9).
pub(crate) use zb_health_spec::STARTUP_ENTRY;
/// The description of the startup entry while initialisation runs.
pub(crate) const STARTING_DESCRIPTION: &str = "starting";
/// The description of the startup entry after a failed initialisation. The
/// error itself goes to the log only (BE-HLTH-007).
pub(crate) const STARTUP_FAILED_DESCRIPTION: &str = "startup failed";
/// The name of the entry a drain puts first in `ready` and `active`; no
/// probe may take it (R9).
pub(crate) use zb_health_spec::SHUTDOWN_ENTRY;
use zb_health_spec::operator::MAINTENANCE_ENTRY;
/// The description of the shutdown entry.
pub(crate) const DRAINING_DESCRIPTION: &str = "draining";

type DrainHook = Box<dyn FnOnce() + Send>;

/// A registry's lifecycle state. Read with atomic loads on every request,
/// so the common case (started, not draining) costs two loads.
pub(crate) struct Lifecycle {
    startup: Arc<Startup>,
    draining: Arc<AtomicBool>,
    /// Taken (and run) by the first `begin_drain`.
    on_drain: Mutex<Option<Vec<DrainHook>>>,
    watchdogs: Arc<Watchdogs>,
    /// The last lifecycle events, for the history; shared with
    /// the gates and the watchdogs, which record their own.
    events: Arc<Events>,
    /// When the drain began (Unix ms), 0 before.
    drain_since_ms: AtomicU64,
    /// An operator's maintenance window, if one is open.
    maintenance: Maintenance,
    /// The restart escalation of the probes with `restart_after`.
    restart: Restart,
}

impl Default for Lifecycle {
    fn default() -> Self {
        let events = Arc::new(Events::default());
        Self {
            startup: Arc::new(Startup::new(events.clone())),
            draining: Arc::default(),
            on_drain: Mutex::new(Some(Vec::new())),
            watchdogs: Arc::new(Watchdogs::new(events.clone())),
            maintenance: Maintenance::new(events.clone()),
            restart: Restart::new(events.clone()),
            events,
            drain_since_ms: AtomicU64::new(0),
        }
    }
}

impl Lifecycle {
    /// Declares one piece of startup work, named or not.
    pub(crate) fn startup_gate(&self, name: Option<Arc<str>>) -> StartupGate {
        StartupGate::declare(&self.startup, name)
    }

    pub(crate) fn is_started(&self) -> bool {
        self.startup.is_started()
    }

    /// A question for the executor: is a startup gate still pending (and
    /// none failed)? Holds the gates weakly, so it keeps nothing alive.
    pub(crate) fn starting(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let startup = Arc::downgrade(&self.startup);
        move || startup.upgrade().is_some_and(|s| s.is_starting())
    }

    /// A question for the transition publishers: is the service starting
    /// or draining (nothing is published then)? Holds the state weakly.
    pub(crate) fn quiet(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let starting = self.starting();
        let draining = Arc::downgrade(&self.draining);
        move || {
            starting()
                || draining
                    .upgrade()
                    .is_some_and(|d| d.load(Ordering::Acquire))
        }
    }

    /// Starts the drain and runs the hooks, once; `true` the first time.
    pub(crate) fn begin_drain(&self) -> bool {
        if self.draining.swap(true, Ordering::AcqRel) {
            return false;
        }
        self.drain_since_ms
            .store(crate::history::now_ms(), Ordering::Relaxed);
        metrics::gauge!(crate::observe::DRAINING).set(1.0);
        self.events
            .push(EventKind::DrainStarted, Arc::from(SHUTDOWN_ENTRY));
        self.watchdogs.begin_drain();
        let hooks = lock(&self.on_drain).take().unwrap_or_default();
        for hook in hooks {
            // A hook that panics must not stop the others (the node must
            // still give up its active role) nor the drain itself.
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(hook)).is_err() {
                tracing::error!("a zb-health on_drain hook panicked");
            }
        }
        true
    }

    pub(crate) fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// Opens a maintenance window (reason and TTL already checked).
    pub(crate) fn begin_maintenance(&self, reason: &str, ttl: Duration) -> MaintenanceWindow {
        self.maintenance.begin(reason, ttl)
    }

    /// Closes the maintenance window, if one is open.
    pub(crate) fn end_maintenance(&self) -> Option<MaintenanceWindow> {
        self.maintenance.end(Ended::ByOperator)
    }

    /// The open maintenance window, if any.
    pub(crate) fn maintenance(&self) -> Option<MaintenanceWindow> {
        self.maintenance.current()
    }

    /// Ends the maintenance window if its time has come (the timer's call).
    pub(crate) fn end_expired_maintenance(&self) {
        self.maintenance.end_if_expired();
    }

    /// Whether new connections should go elsewhere: draining, or in
    /// maintenance. One load each in the common case.
    #[inline]
    pub(crate) fn is_out_of_rotation(&self) -> bool {
        self.is_draining() || (self.maintenance.may_be_on() && self.maintenance().is_some())
    }

    /// Runs `hook` at the drain, or now if it has begun.
    pub(crate) fn on_drain(&self, hook: DrainHook) {
        let mut hooks = lock(&self.on_drain);
        match hooks.as_mut() {
            Some(hooks) => hooks.push(hook),
            None => {
                drop(hooks);
                hook();
            }
        }
    }

    pub(crate) fn watchdogs<const N: usize>(
        &self,
        loops: [(&str, Duration); N],
    ) -> Result<[Heartbeat; N], RegistryError> {
        Watchdogs::register(&self.watchdogs, loops)
    }

    pub(crate) fn watchdog_names(&self) -> Vec<Arc<str>> {
        self.watchdogs.names()
    }

    /// The lifecycle as the history shows it: the named gates,
    /// each watchdog's silence (its stall transitions noted as `live`
    /// notes them), the drain. Reads only.
    pub(crate) fn history_view(&self) -> LifecycleView {
        let since = self.drain_since_ms.load(Ordering::Relaxed);
        LifecycleView {
            gates: self.startup.gate_views(),
            watchdogs: self.watchdogs.views(),
            drain_since_ms: (self.is_draining()).then_some(since),
            maintenance: self.maintenance().map(|w| MaintenanceView {
                reason: w.reason,
                since_ms: unix_ms(w.since),
                until_ms: unix_ms(w.until),
            }),
        }
    }

    /// The last lifecycle events, oldest first.
    pub(crate) fn events(&self) -> Vec<Event> {
        self.events.snapshot()
    }

    /// What `live` answers: from the watchdogs, and `Unhealthy` with a
    /// last [`RESTART_ENTRY`](zb_health_spec::rules::RESTART_ENTRY) while
    /// a restart is requested.
    pub(crate) fn live(&self) -> LiveAnswer {
        let answer = self.watchdogs.live();
        let Some(restart) = self.restart.entry() else {
            return answer;
        };
        let mut entries = match answer {
            LiveAnswer::Fixed => Vec::new(),
            LiveAnswer::Healthy(healthy) => healthy.report().entries.clone(),
            LiveAnswer::Stalled(report) => report.entries,
        };
        entries.push(restart);
        LiveAnswer::Stalled(HealthReport::new(Tag::Live, entries, Duration::ZERO))
    }

    /// One step of the restart escalation (`restart_after`, R27) with
    /// `candidate` the probe that qualifies now; never while starting,
    /// draining or in maintenance.
    pub(crate) fn step_restart(
        &self,
        candidate: Option<Candidate>,
        budget: Option<&dyn crate::shared::SharedVerdicts>,
    ) {
        let blocked = self.startup.description().is_some()
            || self.is_draining()
            || self.maintenance().is_some();
        let inputs = RestartInputs {
            candidate,
            blocked,
            budget,
        };
        self.restart.step(inputs, std::time::Instant::now());
    }

    /// Whether this node asks for a restart (`live` fails for it).
    pub(crate) fn restart_requested(&self) -> bool {
        self.restart.is_requested()
    }

    /// The fixed entries that precede the probes' in `ready` and `active`:
    /// `startup` while starting or after a failed start, `shutdown` while
    /// draining, and on `ready` only `maintenance` while in maintenance.
    /// Empty in the steady state.
    fn entries(&self, tier: Tag) -> Vec<HealthEntry> {
        let mut entries = Vec::new();
        if let Some(description) = self.startup.description() {
            entries.push(fixed_entry(STARTUP_ENTRY, description));
        }
        if self.is_draining() {
            entries.push(fixed_entry(SHUTDOWN_ENTRY, DRAINING_DESCRIPTION));
        }
        if tier == Tag::Ready
            && let Some(window) = self.maintenance()
        {
            let mut entry = fixed_entry(MAINTENANCE_ENTRY, "");
            entry.description = Some(Cow::Owned(window.description()));
            entries.push(entry);
        }
        entries
    }

    /// Whether the lifecycle adds no entry to `ready` and `active` (started,
    /// not draining, not in maintenance), the state [`apply`](Self::apply)
    /// leaves a report unchanged in.
    pub(crate) fn is_steady(&self) -> bool {
        self.startup.description().is_none() && !self.is_draining() && !self.maintenance.may_be_on()
    }

    /// `report` (of `ready` or `active`) with the lifecycle entries first;
    /// unchanged, without allocating, in the steady state.
    pub(crate) fn apply(&self, report: HealthReport) -> HealthReport {
        let mut entries = self.entries(report.tier);
        if entries.is_empty() {
            return report;
        }
        entries.extend(report.entries);
        HealthReport::new(report.tier, entries, report.total_duration)
    }

    /// The startup path's report: the `startup` entry while a gate is
    /// pending or failed, then one entry per watchdog (`Unhealthy` until its
    /// first beat). `Healthy` exactly when the process has started. Tagged
    /// `live`: like that tier it speaks of the process only, and a restart
    /// is what its 503 asks for.
    pub(crate) fn started_report(&self) -> HealthReport {
        let mut entries = Vec::new();
        if let Some(description) = self.startup.description() {
            let mut entry = fixed_entry(STARTUP_ENTRY, description);
            // Which named gates it waits for, and which failed: values,
            // not keys, so a gate's name cannot collide with an entry's.
            let (pending, failed) = self.startup.named();
            let mut data = serde_json::Map::new();
            for (key, names) in [("pending", pending), ("failed", failed)] {
                if !names.is_empty() {
                    let names = names
                        .iter()
                        .map(|n| serde_json::Value::from(&**n))
                        .collect();
                    data.insert(key.into(), serde_json::Value::Array(names));
                }
            }
            entry.data = (!data.is_empty()).then(|| Box::new(data));
            entries.push(entry);
        }
        entries.extend(self.watchdogs.started_entries());
        HealthReport::new(Tag::Live, entries, Duration::ZERO)
    }
}

fn fixed_entry(name: &'static str, description: &'static str) -> HealthEntry {
    HealthEntry {
        name: name.into(),
        status: HealthStatus::Unhealthy,
        description: Some(Cow::Borrowed(description)),
        duration: Duration::ZERO,
        data: None,
        outcome: EntryOutcome::Completed,
    }
}
