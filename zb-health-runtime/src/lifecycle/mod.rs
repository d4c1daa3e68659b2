//! A process's life around its probes: the startup gate (BE-HLTH-004), the
//! liveness watchdog (BE-HLTH-002), the shutdown drain (BE-HLTH-005),
//! maintenance mode (an operator's control) and the restart request
//! (`restart_after`, R27).
//!
//! All of them belong to the [`HealthRegistry`](crate::registry::HealthRegistry), so
//! every server that answers from the registry sees the same state:
//!
//! * [`Lifecycle::startup_gate`](crate::lifecycle::Lifecycle::startup_gate)
//!   declares startup work; until every declared [`StartupGate`] says
//!   [`ready`](StartupGate::ready), `ready` and `active` answer 503 with a
//!   first entry `startup` (`starting`).
//! * [`Lifecycle::watchdog`](crate::lifecycle::Lifecycle::watchdog)
//!   registers a loop's [`Heartbeat`]; a missed deadline turns `live` to
//!   503 and names the loop, and so does a heartbeat dropped without
//!   [`retire`](Heartbeat::retire): a loop that died.
//! * [`Lifecycle::begin_drain`](crate::lifecycle::Lifecycle::begin_drain)
//!   starts the drain: `ready` and `active` answer 503 with a first entry
//!   `shutdown` (`draining`); [`crate::server`] calls it on SIGTERM and
//!   serves on for the [`Drain`] delay.
//!
//! The startup path ([`Lifecycle::started`](crate::lifecycle::Lifecycle::started))
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
mod stall_exit;
mod startup;
mod watchdog;

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::history::{Event, EventKind, Events, LifecycleView, MaintenanceView};
use crate::registration::RegistryError;
use crate::report::{HealthEntry, HealthReport};
use zb_health_spec::{HealthStatus, Tag};

use crate::executor::spawn_on_probe_thread;
use crate::wallclock::unix_ms;
pub use drain::Drain;
pub(crate) use maintenance::Ended;
pub use maintenance::MaintenanceWindow;
pub use stall_exit::{STALL_CHECK_PERIOD, WATCHDOG_STALL_EXIT_CODE};
pub use startup::StartupGate;
pub use watchdog::Heartbeat;
pub(crate) use watchdog::LiveAnswer;
use zb_health_spec::operator::{FieldError, check_reason, check_ttl_value};

use crate::sync::lock;
use maintenance::Maintenance;
pub(crate) use restart::Candidate;
use restart::Restart;
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

/// The lifecycle's states that change what `ready` and `active` answer,
/// one bit each in one word, so the request path reads the steady state
/// (started, not draining, no maintenance window) in a single load. Each
/// bit is written where its state changes, under that state's own lock
/// (the startup gates', the maintenance window's); the drain's is set once.
#[derive(Default)]
struct Phase(AtomicU8);

impl Phase {
    /// A declared startup gate is not signalled yet.
    const STARTING: u8 = 1;
    /// A startup gate failed; sticky.
    const START_FAILED: u8 = 2;
    /// The drain has begun; there is no way back.
    const DRAINING: u8 = 4;
    /// A maintenance window may be open (its expiry not yet noticed
    /// included).
    const MAINTENANCE: u8 = 8;

    #[inline]
    fn get(&self) -> u8 {
        self.0.load(Ordering::Acquire)
    }

    /// Makes the bits of `mask` those of `bits`, in one step (so no reader
    /// sees a state between two bits); the bits of `mask` before.
    fn put(&self, mask: u8, bits: u8) -> u8 {
        let old = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
                Some(old & !mask | bits & mask)
            });
        old.unwrap_or_else(|old| old) & mask
    }

    /// A normal start under way: a gate pending and none failed.
    #[inline]
    fn is_starting(&self) -> bool {
        self.get() & (Self::STARTING | Self::START_FAILED) == Self::STARTING
    }

    /// The startup entry's description while one applies.
    fn startup_description(&self) -> Option<&'static str> {
        let bits = self.get();
        if bits & Self::START_FAILED != 0 {
            Some(STARTUP_FAILED_DESCRIPTION)
        } else if bits & Self::STARTING != 0 {
            Some(STARTING_DESCRIPTION)
        } else {
            None
        }
    }
}

/// A registry's lifecycle ([`HealthRegistry::lifecycle`](crate::registry::HealthRegistry::lifecycle)):
/// startup gates, watchdogs, the drain and maintenance mode. Read on every
/// request, so the common case (started, not draining, no maintenance)
/// costs one load.
pub struct Lifecycle {
    /// What the gates, the drain and maintenance make of `ready` and
    /// `active`; shared with the gates and the maintenance window, which
    /// write their own bits.
    phase: Arc<Phase>,
    startup: Arc<Startup>,
    /// Taken (and run) by the first `begin_drain`.
    on_drain: Mutex<Option<Vec<DrainHook>>>,
    watchdogs: Arc<Watchdogs>,
    /// The last lifecycle events, for the history; shared with
    /// the gates and the watchdogs, which record their own.
    events: Arc<Events>,
    /// When the drain began (Unix ms), 0 before.
    drain_since_ms: AtomicU64,
    /// An operator's maintenance window, if one is open; shared with its
    /// expiry timer.
    maintenance: Arc<Maintenance>,
    /// The restart escalation of the probes with `restart_after`.
    restart: Restart,
}

impl Default for Lifecycle {
    fn default() -> Self {
        let events = Arc::new(Events::default());
        let phase = Arc::new(Phase::default());
        Self {
            startup: Arc::new(Startup::new(phase.clone(), events.clone())),
            on_drain: Mutex::new(Some(Vec::new())),
            watchdogs: Arc::new(Watchdogs::new(phase.clone(), events.clone())),
            maintenance: Arc::new(Maintenance::new(phase.clone(), events.clone())),
            restart: Restart::new(events.clone()),
            phase,
            events,
            drain_since_ms: AtomicU64::new(0),
        }
    }
}

impl Lifecycle {
    /// Declares one piece of startup work (BE-HLTH-004). Until every
    /// declared gate is [`ready`](StartupGate::ready), `ready` and `active`
    /// answer 503 with a first entry
    /// [`STARTUP_ENTRY`] described
    /// `starting`;
    /// `live` is unaffected. A cluster probe's startup `Degraded` (a 200)
    /// therefore cannot make a booting service look ready.
    ///
    /// Declare the gate before the server starts, and signal it when the
    /// work is done:
    ///
    /// ```
    /// # use zb_health::prelude::HealthRegistry;
    /// let registry = HealthRegistry::new();
    /// let warm_up = registry.lifecycle().startup_gate();
    /// // … load caches, run migrations …
    /// warm_up.ready();
    /// ```
    pub fn startup_gate(&self) -> StartupGate {
        StartupGate::declare(&self.startup, None)
    }

    /// [`startup_gate`](Self::startup_gate) with a name, which the startup
    /// path ([`started`](Self::started)) shows in its `startup` entry's
    /// `data` (`pending`, `failed`) until the gate is ready. How a
    /// manifest's `install` declares its `lifecycle.startup_gates`.
    pub fn startup_gate_named(&self, name: impl Into<Arc<str>>) -> StartupGate {
        StartupGate::declare(&self.startup, Some(name.into()))
    }

    /// Whether every declared startup gate is ready (and none failed).
    /// `true` when no gate was declared.
    pub fn is_started(&self) -> bool {
        self.phase.get() & (Phase::STARTING | Phase::START_FAILED) == 0
    }

    /// A question for the executor: is a startup gate still pending (and
    /// none failed)? Holds the phase word only, so it keeps no gate, probe
    /// or registry alive.
    pub(crate) fn starting(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let phase = self.phase.clone();
        move || phase.is_starting()
    }

    /// A question for the transition publishers: is the service starting
    /// or draining (nothing is published then)? Holds the phase word only.
    pub(crate) fn quiet(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let phase = self.phase.clone();
        move || phase.is_starting() || phase.get() & Phase::DRAINING != 0
    }

    /// Starts the drain (BE-HLTH-005): from now on `ready` and `active`
    /// answer 503 with a first entry
    /// [`SHUTDOWN_ENTRY`] described
    /// `draining`,
    /// and the [`on_drain`](Self::on_drain) hooks run, once, in
    /// registration order. `live` is unaffected. There is no way back: a
    /// drain ends with the process.
    ///
    /// The servers of [`crate::server`] call this on SIGTERM or SIGINT;
    /// call it yourself when something else decides the process is going
    /// away. Returns `true` the first time.
    pub fn begin_drain(&self) -> bool {
        if self.phase.put(Phase::DRAINING, Phase::DRAINING) != 0 {
            return false;
        }
        self.drain_since_ms
            .store(crate::history::now_ms(), Ordering::Relaxed);
        metrics::gauge!(crate::observe::DRAINING).set(1.0);
        self.events
            .push(EventKind::DrainStarted, Arc::from(SHUTDOWN_ENTRY));
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

    /// Whether the drain has begun.
    pub fn is_draining(&self) -> bool {
        self.phase.get() & Phase::DRAINING != 0
    }

    /// Takes this pod out of rotation for `ttl`, for `reason`: maintenance
    /// mode. From now on `ready` answers 503 with a first entry
    /// [`MAINTENANCE_ENTRY`]
    /// described `maintenance: <reason>, until <time>` (where the level
    /// shows descriptions), every HTTP answer says `Connection: close` (as
    /// in the drain), and the gauge `zb_health_maintenance` is 1. `live`
    /// and `active` are untouched. It ends by itself after `ttl`, or at
    /// [`end_maintenance`](Self::end_maintenance); a second call replaces
    /// the window. One log line at the start and one at the end.
    ///
    /// The management port serves it to operators with the bearer token
    /// (`POST /health/maintenance`, [`crate::http::OperatorControls`]).
    ///
    /// # Errors
    ///
    /// A missing, empty, control-character or over-long reason, or a TTL
    /// of zero or above a day ([`zb_health_spec::operator`]); nothing
    /// changes then.
    pub fn begin_maintenance(
        &self,
        reason: &str,
        ttl: Duration,
    ) -> Result<MaintenanceWindow, FieldError> {
        let reason = check_reason(Some(reason))?;
        check_ttl_value(ttl)?;
        let window = self.maintenance.begin(reason, ttl);
        // The window ends by itself: a timer on the probe thread, so the
        // log line, the event and the gauge come at the time even with no
        // request; readers also end it when they see it past its time.
        let maintenance = Arc::downgrade(&self.maintenance);
        spawn_on_probe_thread(async move {
            tokio::time::sleep(ttl).await;
            if let Some(maintenance) = maintenance.upgrade() {
                maintenance.end_if_expired();
            }
        });
        Ok(window)
    }

    /// Ends maintenance mode now; the window that was open, if any.
    pub fn end_maintenance(&self) -> Option<MaintenanceWindow> {
        self.maintenance.end(Ended::ByOperator)
    }

    /// The open maintenance window, if any.
    pub fn maintenance(&self) -> Option<MaintenanceWindow> {
        self.maintenance.current()
    }

    /// Whether new connections should go to another pod: draining, or in
    /// maintenance. The servers' `Connection: close` reads it: one load
    /// each in the common case.
    #[inline]
    pub fn is_out_of_rotation(&self) -> bool {
        let bits = self.phase.get();
        bits & Phase::DRAINING != 0
            || (bits & Phase::MAINTENANCE != 0 && self.maintenance().is_some())
    }

    /// Runs `hook` when the drain begins, e.g. to make this node give up
    /// the active role so the cluster elects another (a cluster view
    /// leaving the cluster). Runs at once, on this thread, if the drain has
    /// already begun. Keep it short: it runs on the drain's path.
    pub fn on_drain(&self, hook: impl FnOnce() + Send + 'static) {
        let mut hooks = lock(&self.on_drain);
        match hooks.as_mut() {
            Some(hooks) => hooks.push(Box::new(hook)),
            None => {
                drop(hooks);
                hook();
            }
        }
    }

    /// Registers a watchdog for one of the app's own loops (BE-HLTH-002): if
    /// the returned [`Heartbeat`] does not [`beat`](Heartbeat::beat) for
    /// longer than `deadline`, `live` answers 503 with an `Unhealthy` entry
    /// named `name` (described `no heartbeat within <deadline> ms`), and
    /// returns to 200 with the next beat. The deadline runs from the first
    /// beat: until then the loop is starting, `live` stays 200 for it and
    /// the startup path ([`started`](Self::started)) answers 503 naming it.
    ///
    /// It is not a probe: it does no I/O and runs nothing; `live` only
    /// compares timestamps. A loop that ends on purpose calls
    /// [`Heartbeat::retire`]; a heartbeat dropped without it is a dead loop,
    /// and `live` answers 503 for good.
    ///
    /// Refused if `name` is not a short identifier (R9), another watchdog
    /// has it (R3), or `deadline` is under 1 ms.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use zb_health::prelude::HealthRegistry;
    /// let registry = HealthRegistry::new();
    /// let heartbeat = registry
    ///     .lifecycle()
    ///     .watchdog("consumer", Duration::from_secs(30))
    ///     .unwrap();
    /// // in the consumer loop, once per iteration:
    /// heartbeat.beat();
    /// // when the loop ends on purpose:
    /// heartbeat.retire();
    /// ```
    pub fn watchdog(&self, name: &str, deadline: Duration) -> Result<Heartbeat, RegistryError> {
        let [heartbeat] = self.watchdogs([(name, deadline)])?;
        Ok(heartbeat)
    }

    /// Registers several watchdogs at once, all or none: if any name or
    /// deadline breaks a rule, none is registered and every violation is
    /// returned. How a manifest's `install` registers its
    /// `lifecycle.watchdogs`.
    pub fn watchdogs<const N: usize>(
        &self,
        loops: [(&str, Duration); N],
    ) -> Result<[Heartbeat; N], RegistryError> {
        Watchdogs::register(&self.watchdogs, loops)
    }

    /// Opt-in, off unless called: once a watchdog stalls (or its loop
    /// dies), end the process with [`WATCHDOG_STALL_EXIT_CODE`] (75) instead
    /// of only turning `live` 503, so a supervisor restarts it at once: a
    /// Kubernetes container restart rule on that code (KEP-5307), systemd's
    /// `Restart=on-failure`. A thread of its own reads the watchdogs every
    /// [`STALL_CHECK_PERIOD`], so a blocked async runtime cannot hide the
    /// stall; it logs the watchdog's name, then exits without a drain (the
    /// process is not serving its loop; the kubelet's endpoints drop it as
    /// the container ends). Never once the drain has begun. Calling it
    /// again does nothing; watchdogs registered later are watched too.
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # use zb_health::prelude::HealthRegistry;
    /// let registry = HealthRegistry::new();
    /// let heartbeat = registry.lifecycle().watchdog("consumer", Duration::from_secs(30)).unwrap();
    /// registry.lifecycle().exit_on_stall();
    /// ```
    pub fn exit_on_stall(&self) {
        stall_exit::watch(&self.watchdogs, |code| std::process::exit(code));
    }

    /// The registered watchdog names, in registration order.
    pub fn watchdog_names(&self) -> Vec<Arc<str>> {
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
        let blocked = self.phase.startup_description().is_some()
            || self.is_draining()
            || self.maintenance().is_some();
        self.restart
            .step(candidate, blocked, budget, std::time::Instant::now());
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
        if let Some(description) = self.phase.startup_description() {
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
    #[inline]
    pub(crate) fn is_steady(&self) -> bool {
        self.phase.get() == 0
    }

    /// `report` (of `ready` or `active`) with the lifecycle entries first;
    /// unchanged, without allocating, in the steady state.
    pub(crate) fn apply(&self, report: HealthReport) -> HealthReport {
        if self.is_steady() {
            return report;
        }
        let mut entries = self.entries(report.tier);
        if entries.is_empty() {
            return report;
        }
        entries.extend(report.entries);
        HealthReport::new(report.tier, entries, report.total_duration)
    }

    /// What the startup path answers (`/health/started`): `Healthy` (200)
    /// once every startup gate is ready and every watchdog has beaten
    /// once; else `Unhealthy` (503) with the `startup` entry (`starting` or
    /// `startup failed`, the named gates pending or failed in its `data`)
    /// and an entry for each watchdog still waiting for its first beat. It
    /// runs no probe and reads no dependency, so a kubelet `startupProbe`
    /// on it restarts only a process that did not start, which a restart
    /// can cure. Tagged `live`: like that tier it speaks of the process
    /// only.
    pub fn started(&self) -> HealthReport {
        let mut entries = Vec::new();
        if let Some(description) = self.phase.startup_description() {
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
    HealthEntry::fixed(
        name,
        HealthStatus::Unhealthy,
        Some(Cow::Borrowed(description)),
    )
}
