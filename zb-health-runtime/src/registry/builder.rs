//! [`HealthRegistryBuilder`]: a registry's settings before it is built.

use std::sync::Arc;
use std::time::Duration;

use super::inner::{HealthRegistry, Inner, RegistryHistory};
use crate::executor::{Executor, Runs};
use crate::history::TierAnswers;
use crate::lifecycle::Lifecycle;
use crate::observe::{DEFAULT_FAILURE_LOG_INTERVAL, TierLog};
use crate::publish::TransitionQueue;
use crate::table::ProbeTable;

/// Limits of a [`HealthRegistry`].
#[derive(Debug, Clone)]
pub struct HealthRegistryBuilder {
    pub(super) max_in_flight: usize,
    pub(super) orchestrator_timeout: Option<Duration>,
    pub(super) detection_time: Option<Duration>,
    pub(super) failure_log_interval: Duration,
    pub(super) runs: Runs,
}

impl Default for HealthRegistryBuilder {
    fn default() -> Self {
        Self {
            max_in_flight: 16,
            orchestrator_timeout: None,
            detection_time: None,
            failure_log_interval: DEFAULT_FAILURE_LOG_INTERVAL,
            runs: Runs::ProbeThread,
        }
    }
}

impl HealthRegistryBuilder {
    /// The most probes that run at once across all requests (BE-HLTH-006),
    /// so a burst of probe requests cannot flood a dependency. At least 1;
    /// default 16. A probe waiting for a slot is still under its deadline.
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }

    /// The orchestrator's probe timeout; every probe deadline must be below
    /// it (BE-HLTH-006, rule R5).
    pub fn orchestrator_timeout(mut self, timeout: Duration) -> Self {
        self.orchestrator_timeout = Some(timeout);
        self
    }

    /// The orchestrator's detection time; no cached or background result
    /// may reach it (BE-HLTH-006, rule R19). Unset, the checks use
    /// [`DEFAULT_DETECTION_TIME`](zb_health_spec::detection::DEFAULT_DETECTION_TIME).
    /// See [`HealthRegistry::set_detection_time`].
    pub fn detection_time(mut self, detection: Duration) -> Self {
        self.detection_time = Some(detection);
        self
    }

    /// How often a probe that keeps failing the same way is logged again
    /// (BE-HLTH-008): the transition to failure is logged at once, then at
    /// most one line per `interval`, counting the runs it suppressed.
    /// Default [`DEFAULT_FAILURE_LOG_INTERVAL`] (5 min); zero logs every
    /// failing run. See [`crate::observe`].
    pub fn failure_log_interval(mut self, interval: Duration) -> Self {
        self.failure_log_interval = interval;
        self
    }

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
    pub fn probes_on_caller_runtime(mut self) -> Self {
        self.runs = Runs::Caller;
        self
    }

    /// Builds the registry.
    pub fn build(self) -> HealthRegistry {
        let lifecycle = Lifecycle::default();
        let transitions = Arc::new(TransitionQueue::new(Box::new(lifecycle.quiet())));
        let executor = Executor::new(
            self.max_in_flight,
            self.failure_log_interval,
            self.runs,
            Box::new(lifecycle.starting()),
            transitions.clone(),
        );
        HealthRegistry {
            inner: Arc::new(Inner {
                table: Arc::new(ProbeTable::new(
                    self.orchestrator_timeout,
                    self.detection_time,
                    executor.clone(),
                )),
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
        }
    }
}
