//! [`HealthRegistryBuilder`]: a registry's settings before it is built.

use std::sync::Arc;
use std::time::Duration;

use super::RegistryError;
use super::inner::{HealthRegistry, Inner, RegistryHistory};
use crate::executor::{Executor, Runs};
use crate::history::TierAnswers;
use crate::lifecycle::Lifecycle;
use crate::observe::TierLog;
use crate::publish::TransitionQueue;
use crate::setting::setters;
use crate::table::ProbeTable;

/// A registry's own settings, as plain data: [`build`](Self::build)
/// makes a new registry with all of them, and a manifest's `install`
/// applies the ones an existing registry can take
/// ([`apply`](Self::apply)). Each is checked where it is used: the
/// timeouts against the probes (R5, R19), the bound at least 1.
#[derive(Debug, Clone)]
pub struct HealthRegistryBuilder {
    /// [`max_in_flight`](Self::max_in_flight).
    pub max_in_flight: usize,
    /// [`orchestrator_timeout`](Self::orchestrator_timeout).
    pub orchestrator_timeout: Option<Duration>,
    /// [`detection_time`](Self::detection_time).
    pub detection_time: Option<Duration>,
    /// [`failure_log_interval`](Self::failure_log_interval); `None`
    /// leaves the registry's own, on a new one
    /// [`DEFAULT_FAILURE_LOG_INTERVAL`](crate::observe::DEFAULT_FAILURE_LOG_INTERVAL).
    pub failure_log_interval: Option<Duration>,
    pub(crate) runs: Runs,
}

impl Default for HealthRegistryBuilder {
    fn default() -> Self {
        Self {
            max_in_flight: 16,
            orchestrator_timeout: None,
            detection_time: None,
            failure_log_interval: None,
            runs: Runs::ProbeThread,
        }
    }
}

impl HealthRegistryBuilder {
    /// Sets the timeouts and the failure log interval that are set here
    /// on `registry`, which already exists (the bound and where probes
    /// run are a new registry's own): what a manifest's `install` does.
    ///
    /// # Errors
    ///
    /// As [`HealthRegistry::set_orchestrator_timeout`] and
    /// [`HealthRegistry::set_detection_time`]; the failure log interval
    /// is set only once both are.
    pub fn apply(&self, registry: &HealthRegistry) -> Result<(), RegistryError> {
        if let Some(timeout) = self.orchestrator_timeout {
            registry.set_orchestrator_timeout(timeout)?;
        }
        if let Some(detection) = self.detection_time {
            registry.set_detection_time(detection)?;
        }
        if let Some(interval) = self.failure_log_interval {
            registry.set_failure_log_interval(interval);
        }
        Ok(())
    }

    /// Builds the registry.
    pub fn build(self) -> HealthRegistry {
        let lifecycle = Lifecycle::default();
        let transitions = Arc::new(TransitionQueue::new(Box::new(lifecycle.quiet())));
        let executor = Executor::new(
            self.max_in_flight.max(1),
            self.runs,
            Box::new(lifecycle.starting()),
            transitions.clone(),
        );
        let registry = HealthRegistry {
            inner: Arc::new(Inner {
                table: Arc::new(ProbeTable::new(executor.clone())),
                executor,
                lifecycle,
                tiers: TierLog::default(),
                transitions,
                restart_steps: Default::default(),
                kept: Default::default(),
                history: RegistryHistory {
                    tiers: TierAnswers::default(),
                    started_ms: crate::history::now_ms(),
                    service: std::sync::RwLock::new(None),
                    cluster: std::sync::RwLock::new(None),
                },
            }),
        };
        // The one way a setting reaches a registry, new or not.
        // A registry without probes takes any timeout.
        if let Err(e) = self.apply(&registry) {
            unreachable!("an empty registry refused its settings: {e}");
        }
        registry
    }
}

setters!(HealthRegistryBuilder {
    /// The most probes that run at once across all requests (BE-HLTH-006),
    /// so a burst of probe requests cannot flood a dependency. At least 1;
    /// default 16. A probe waiting for a slot is still under its deadline.
    fn max_in_flight(n: usize) => max_in_flight = n;

    /// The orchestrator's probe timeout; every probe deadline must be below
    /// it (BE-HLTH-006, rule R5). See
    /// [`HealthRegistry::set_orchestrator_timeout`].
    fn orchestrator_timeout(timeout: Duration) => orchestrator_timeout = Some(timeout);

    /// The orchestrator's detection time; no cached or background result
    /// may reach it (BE-HLTH-006, rule R19). Unset, the checks use
    /// [`DEFAULT_DETECTION_TIME`](zb_health_spec::detection::DEFAULT_DETECTION_TIME).
    /// See [`HealthRegistry::set_detection_time`].
    fn detection_time(detection: Duration) => detection_time = Some(detection);

    /// How often a probe that keeps failing the same way is logged again
    /// (BE-HLTH-008): the transition to failure is logged at once, then at
    /// most one line per `interval`, counting the runs it suppressed.
    /// Default [`DEFAULT_FAILURE_LOG_INTERVAL`](crate::observe::DEFAULT_FAILURE_LOG_INTERVAL) (5 min); zero logs every
    /// failing run. See [`crate::observe`].
    fn failure_log_interval(interval: Duration) => failure_log_interval = Some(interval);

    /// Runs each probe execution on the runtime of the request that starts
    /// it, instead of on the library's probe thread.
    ///
    /// For tests on tokio's paused clock (`#[tokio::test(start_paused =
    /// true)]`), whose clock the probe thread does not share. A service
    /// keeps the default: with this, a probe started by an application
    /// worker depends on that worker's thread, so a handler that blocks it
    /// stalls the answer on every port, the management port included
    /// (BE-HLTH-006); and a background probe starts at the first request
    /// rather than at registration. With the `test-util` feature only.
    #[cfg(any(test, feature = "test-util"))]
    fn probes_on_caller_runtime() => runs = Runs::Caller;
});
