//! Probes: adding, replacing and listing them, and the registry-wide
//! settings they are checked against (the orchestrator timeout, R5; the
//! detection time, R19/R20).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::registration::{ProbeRegistration, RegistryError};
use crate::table::RegistrationHandle;

use super::builder::HealthRegistryBuilder;
use super::inner::HealthRegistry;

/// Probes: adding, listing, the orchestrator's timeout.
impl HealthRegistry {
    /// A plain, empty registry with default limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// The process-wide registry: the single one that framework components
    /// and the application share (AT-1). Built with default limits on first
    /// use; a manifest's generated `install` sets its orchestrator timeout
    /// ([`set_orchestrator_timeout`](Self::set_orchestrator_timeout)) and
    /// adds its probes here.
    pub fn process() -> &'static HealthRegistry {
        static PROCESS: OnceLock<HealthRegistry> = OnceLock::new();
        PROCESS.get_or_init(HealthRegistry::new)
    }

    /// Configures limits before building a registry.
    pub fn builder() -> HealthRegistryBuilder {
        HealthRegistryBuilder::default()
    }

    /// Sets the orchestrator's probe timeout on a registry that already
    /// exists, such as [`process`](Self::process): from then on every `add`,
    /// from a manifest or from code, must have a deadline below it (R5,
    /// BE-HLTH-006).
    ///
    /// Refused with R5 violations, and nothing changes, if a registered
    /// probe's deadline does not fit, or if a *different* timeout is already
    /// set (one process has one orchestrator; two manifests that disagree
    /// about it are a mistake). Setting the same value again is a no-op.
    pub fn set_orchestrator_timeout(&self, timeout: Duration) -> Result<(), RegistryError> {
        self.inner.table.set_orchestrator_timeout(timeout)
    }

    /// The orchestrator's probe timeout every deadline is checked against,
    /// if one is set.
    pub fn orchestrator_timeout(&self) -> Option<Duration> {
        self.inner.table.orchestrator_timeout()
    }

    /// Sets the orchestrator's detection time on a registry that already
    /// exists, such as [`process`](Self::process): how long a changed
    /// readiness answer may go unseen (readiness `periodSeconds ×
    /// failureThreshold`, [`zb_health_spec::detection::detection_time`]).
    /// From then on no probe's cached or background result may reach it
    /// (R19, BE-HLTH-006). A manifest's generated `install` sets the one
    /// its drain delay implies.
    ///
    /// Until one is set, the checks use
    /// [`DEFAULT_DETECTION_TIME`](zb_health_spec::detection::DEFAULT_DETECTION_TIME)
    /// (4 s, what `zb-health k8s` emits for the default drain delay), so a
    /// registry built in code refuses an unbounded cache age too. The
    /// first time set replaces that default; after it the registry keeps
    /// the shortest time it is given: the orchestrator notices within the
    /// shortest, and a longer one changes nothing.
    /// Refused with R19 violations, and nothing changes, if a registered
    /// probe's policy does not fit a shorter one.
    pub fn set_detection_time(&self, detection: Duration) -> Result<(), RegistryError> {
        self.inner.table.set_detection_time(detection)
    }

    /// The detection time that was set, if any. While `None`, cached and
    /// background results are checked against
    /// [`DEFAULT_DETECTION_TIME`](zb_health_spec::detection::DEFAULT_DETECTION_TIME).
    pub fn detection_time(&self) -> Option<Duration> {
        self.inner.table.detection_time()
    }

    /// Sets, on a registry that already exists such as
    /// [`process`](Self::process), how often an unchanged failing probe is
    /// logged again (BE-HLTH-008); see
    /// [`HealthRegistryBuilder::failure_log_interval`]. A manifest's
    /// `observability.failure_log_interval` is set this way by `install`.
    pub fn set_failure_log_interval(&self, interval: Duration) {
        self.inner.executor.set_failure_log_interval(interval);
    }

    /// Where the shared probes' verdicts are published and compared
    /// across the cluster, so a shared outage fails open (BE-HLTH-003,
    /// [`crate::shared`]): usually the
    /// node's [`ChitchatClusterView`](crate::cluster::chitchat::ChitchatClusterView).
    /// Until it is set, a probe registered with
    /// [`shared`](crate::registry::ProbeRegistration::shared) is an ordinary probe.
    /// A manifest's `install` sets its `cluster_view` when it has one.
    pub fn set_shared_verdicts(&self, verdicts: Arc<dyn crate::shared::SharedVerdicts>) {
        self.inner.executor.set_shared_verdicts(verdicts);
        // The probes with `restart_after` compare with the same verdicts.
        self.start_restart_steps();
    }

    /// How often an unchanged failing probe is logged again.
    pub fn failure_log_interval(&self) -> Duration {
        self.inner.executor.failure_log_interval()
    }

    /// Adds a probe. Refused, with every broken rule, if its name is empty
    /// or taken (R9, R3), it is tagged `live` or nothing (R1), or its
    /// deadline is zero, absurd or not below the orchestrator's (R5).
    pub fn add(
        &self,
        registration: ProbeRegistration,
    ) -> Result<RegistrationHandle, RegistryError> {
        Ok(self.add_all([registration])?.remove(0))
    }

    /// Adds several probes, all or none: if any breaks a rule, nothing is
    /// added and every violation of every registration is returned.
    pub fn add_all(
        &self,
        registrations: impl IntoIterator<Item = ProbeRegistration>,
    ) -> Result<Vec<RegistrationHandle>, RegistryError> {
        self.inner
            .table
            .commit(registrations.into_iter().collect(), None)
    }

    /// The registered probe names, in registration order.
    pub fn names(&self) -> Vec<Arc<str>> {
        self.inner.table.names()
    }

    /// The probe executions under way right now, in registration order:
    /// which dependency is slow, for how long, and how many requests wait
    /// on its one execution. Reading it runs nothing.
    pub fn in_flight(&self) -> Vec<InFlight> {
        self.inner
            .table
            .all()
            .iter()
            .filter_map(|p| {
                let (waiting, running_for) = p.in_flight()?;
                Some(InFlight {
                    name: p.name.clone(),
                    waiting,
                    running_for,
                })
            })
            .collect()
    }
}

/// A probe execution under way, from
/// [`HealthRegistry::in_flight`]: which dependency is slow right now, and
/// how many requests wait on it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InFlight {
    /// The probe's registered name.
    pub name: Arc<str>,
    /// Requests waiting on this one execution (single flight): one
    /// execution however many wait.
    pub waiting: usize,
    /// How long it has run; never past the probe's deadline.
    pub running_for: Duration,
}
