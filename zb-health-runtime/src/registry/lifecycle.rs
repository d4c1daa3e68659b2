//! The lifecycle through the registry: startup gates, watchdogs, the
//! drain (BE-HLTH-002, BE-HLTH-004, BE-HLTH-005).

use std::sync::Arc;
use std::time::Duration;

use crate::registration::RegistryError;

use super::inner::HealthRegistry;
use crate::executor::spawn_on_probe_thread;
use crate::lifecycle::{Heartbeat, MaintenanceWindow, StartupGate};
use crate::report::HealthReport;
use zb_health_spec::operator::{FieldError, check_reason, check_ttl_value};

/// The lifecycle: startup gates, watchdogs, the drain.
impl HealthRegistry {
    /// Declares one piece of startup work (BE-HLTH-004). Until every
    /// declared gate is [`ready`](StartupGate::ready), `ready` and `active`
    /// answer 503 with a first entry
    /// [`STARTUP_ENTRY`](zb_health_spec::STARTUP_ENTRY) described
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
    /// let warm_up = registry.startup_gate();
    /// // … load caches, run migrations …
    /// warm_up.ready();
    /// ```
    pub fn startup_gate(&self) -> StartupGate {
        self.inner.lifecycle.startup_gate(None)
    }

    /// [`startup_gate`](Self::startup_gate) with a name, which the startup
    /// path ([`started`](Self::started)) shows in its `startup` entry's
    /// `data` (`pending`, `failed`) until the gate is ready. How a
    /// manifest's `install` declares its `lifecycle.startup_gates`.
    pub fn startup_gate_named(&self, name: impl Into<Arc<str>>) -> StartupGate {
        self.inner.lifecycle.startup_gate(Some(name.into()))
    }

    /// Whether every declared startup gate is ready (and none failed).
    /// `true` when no gate was declared.
    pub fn is_started(&self) -> bool {
        self.inner.lifecycle.is_started()
    }

    /// What the startup path answers (`/health/started`): `Healthy` (200)
    /// once every startup gate is ready and every watchdog has beaten
    /// once; else `Unhealthy` (503) with the `startup` entry (`starting` or
    /// `startup failed`) and an entry for each watchdog still waiting for
    /// its first beat. It runs no probe and reads no dependency, so a
    /// kubelet `startupProbe` on it restarts only a process that did not
    /// start, which a restart can cure.
    pub fn started(&self) -> HealthReport {
        self.inner.lifecycle.started_report()
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
    /// let heartbeat = registry.watchdog("consumer", Duration::from_secs(30)).unwrap();
    /// // in the consumer loop, once per iteration:
    /// heartbeat.beat();
    /// // when the loop ends on purpose:
    /// heartbeat.retire();
    /// ```
    pub fn watchdog(&self, name: &str, deadline: Duration) -> Result<Heartbeat, RegistryError> {
        let [heartbeat] = self.inner.lifecycle.watchdogs([(name, deadline)])?;
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
        self.inner.lifecycle.watchdogs(loops)
    }

    /// The registered watchdog names, in registration order.
    pub fn watchdog_names(&self) -> Vec<Arc<str>> {
        self.inner.lifecycle.watchdog_names()
    }

    /// Starts the drain (BE-HLTH-005): from now on `ready` and `active`
    /// answer 503 with a first entry
    /// [`SHUTDOWN_ENTRY`](zb_health_spec::SHUTDOWN_ENTRY) described
    /// `draining`,
    /// and the [`on_drain`](Self::on_drain) hooks run, once, in
    /// registration order. `live` is unaffected. There is no way back: a
    /// drain ends with the process.
    ///
    /// The servers of [`crate::server`] call this on SIGTERM or SIGINT;
    /// call it yourself when something else decides the process is going
    /// away. Returns `true` the first time.
    pub fn begin_drain(&self) -> bool {
        self.inner.lifecycle.begin_drain()
    }

    /// Whether the drain has begun.
    pub fn is_draining(&self) -> bool {
        self.inner.lifecycle.is_draining()
    }

    /// Takes this pod out of rotation for `ttl`, for `reason`: maintenance
    /// mode. From now on `ready` answers 503 with a first entry
    /// [`MAINTENANCE_ENTRY`](zb_health_spec::operator::MAINTENANCE_ENTRY)
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
        let window = self.inner.lifecycle.begin_maintenance(reason, ttl);
        // The window ends by itself: a timer on the probe thread, so the
        // log line, the event and the gauge come at the time even with no
        // request; readers also end it when they see it past its time.
        let inner = Arc::downgrade(&self.inner);
        spawn_on_probe_thread(async move {
            tokio::time::sleep(ttl).await;
            if let Some(inner) = inner.upgrade() {
                inner.lifecycle.end_expired_maintenance();
            }
        });
        Ok(window)
    }

    /// Ends maintenance mode now; the window that was open, if any.
    pub fn end_maintenance(&self) -> Option<MaintenanceWindow> {
        self.inner.lifecycle.end_maintenance()
    }

    /// The open maintenance window, if any.
    pub fn maintenance(&self) -> Option<MaintenanceWindow> {
        self.inner.lifecycle.maintenance()
    }

    /// Whether new connections should go to another pod: draining, or in
    /// maintenance. The servers' `Connection: close` reads it.
    pub fn is_out_of_rotation(&self) -> bool {
        self.inner.lifecycle.is_out_of_rotation()
    }

    /// Runs `hook` when the drain begins, e.g. to make this node give up
    /// the active role so the cluster elects another (a cluster view
    /// leaving the cluster). Runs at once, on this thread, if the drain has
    /// already begun. Keep it short: it runs on the drain's path.
    pub fn on_drain(&self, hook: impl FnOnce() + Send + 'static) {
        self.inner.lifecycle.on_drain(Box::new(hook));
    }

    /// The lifecycle, for the lifecycle's own tests.
    #[cfg(test)]
    pub(crate) fn lifecycle(&self) -> &crate::lifecycle::Lifecycle {
        &self.inner.lifecycle
    }
}
