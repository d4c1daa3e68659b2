//! What a probe is registered with: its name, tiers, deadline, failure
//! status, execution policy (cache, schedule, hysteresis, sharing) and
//! dependencies, checked against the spec rules; and `RegistryError`, why
//! the registry refused a change. Data only: nothing here runs a probe or
//! holds one's state.

use std::sync::Arc;
use std::time::Duration;

use zb_health_spec::settings::ProbeSettings;
use zb_health_spec::{FailureStatus, Rule, SpecError, TagSet, Violation};

use crate::probe::{DynProbe, Probe};
use crate::setting::setters;

/// How a probe is registered: its name, tiers, deadline and failure status.
pub struct ProbeRegistration {
    pub(crate) name: Arc<str>,
    /// Its settings; the timeout is `None` until [`timeout`](Self::timeout)
    /// states one, and is then resolved against the registry's
    /// orchestrator timeout ([`ProbeSettings::resolved_timeout`]).
    pub(crate) settings: ProbeSettings,
    pub(crate) probe: Arc<dyn DynProbe>,
    /// The probes this one waits on (`depends_on`, R21, R22), by name.
    pub(crate) depends_on: Vec<Arc<str>>,
}

impl ProbeRegistration {
    /// A registration on the `ready` tier that fails as `Unhealthy`, with
    /// the default deadline: below the registry's orchestrator timeout, or
    /// below Kubernetes' default `timeoutSeconds` (1 s, so 800 ms) when none
    /// is set ([`zb_health_spec::detection::default_probe_timeout`]), so
    /// only a deadline stated with [`timeout`](Self::timeout) can break R5.
    pub fn new(name: impl Into<Arc<str>>, probe: impl Probe) -> Self {
        Self {
            name: name.into(),
            settings: ProbeSettings::DEFAULT,
            probe: Arc::new(probe),
            depends_on: Vec::new(),
        }
    }

    /// The probes this one depends on, by name: while one of
    /// them is failing (its latest entry has its failure status), this
    /// probe does not run and its entry is its own failure status,
    /// described `skipped: <dependency> failing`. A dependency may be in
    /// any tier; it is evaluated first, in the same request, so its
    /// outage shows in the same answer. Each name must be a probe
    /// registered before or in the same `add_all` (R21), and the
    /// dependencies must form no cycle (R22). Adds to earlier calls. See
    /// `spec/probes.md`.
    pub fn depends_on<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Arc<str>>,
    {
        self.depends_on.extend(names.into_iter().map(Into::into));
        self
    }

    /// The registered name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

setters!(ProbeRegistration {
    /// Sets the tiers that run the probe. `live` is refused by `add`.
    fn tags(tags: TagSet) => settings.tags = tags;

    /// Sets the deadline; on expiry the probe is cancelled (AT-4).
    fn timeout(timeout: Duration) => settings.timeout = Some(timeout);

    /// Sets the status a failure reports; `Degraded` marks an optional
    /// dependency (BE-HLTH-003).
    fn failure_status(status: FailureStatus) => settings.failure_status = status;

    /// Serves a healthy result younger than `cache` without running the
    /// probe (BE-HLTH-006); a failure is never served from the cache, so
    /// the next request checks again. Below the registry's detection time
    /// (R19), not on an `active` probe (R17).
    fn cache(cache: Duration) => settings.policy.cache = Some(cache);

    /// Runs the probe in the background every `refresh`; requests read the
    /// latest result and never wait (BE-HLTH-006). Not with `cache` (R16),
    /// not on an `active` probe (R17).
    fn refresh(refresh: Duration) => settings.policy.refresh = Some(refresh);

    /// With [`refresh`](Self::refresh): a result older than this is
    /// reported with the failure status as stale. Must be greater than
    /// `refresh` (R16); default twice `refresh` plus the deadline.
    fn max_staleness(max_staleness: Duration) =>
        settings.policy.max_staleness = Some(max_staleness);

    /// Hysteresis: the entry stays `Healthy` (described `1 of N
    /// failures`) until the probe has failed through `failures` run
    /// periods in a row, or until [`failing_for`](Self::failing_for),
    /// whichever comes first. A period is `refresh`, else the readiness
    /// period behind the registry's detection time: a failed run counts
    /// only once a period has passed since the last counted one, so runs
    /// other callers add count for nothing (without a
    /// detection time every run counts). At least 1; the hold must fit
    /// the registry's detection time (R20). See `spec/probes.md`.
    fn failure_threshold(failures: u32) => settings.policy.threshold.failures = Some(failures);

    /// Hysteresis: the entry stays `Healthy` until the probe has failed
    /// for this long (from its first failed run in a row), or
    /// [`failure_threshold`](Self::failure_threshold) runs, whichever
    /// comes first; within the detection time (R20).
    fn failing_for(failing_for: Duration) =>
        settings.policy.threshold.failing_for = Some(failing_for);

    /// Hysteresis: a failed entry recovers after `successes` healthy run
    /// periods in a row, counted as [`failure_threshold`](Self::failure_threshold)
    /// counts failed ones (described `1 of N successes` until then). At
    /// least 1.
    fn success_threshold(successes: u32) => settings.policy.threshold.successes = Some(successes);

    /// Marks the dependency as the same for every node of the cluster (one
    /// database all replicas use): when it fails on a majority of the
    /// members that report it, this node included, the entry is
    /// `Degraded` (`failing on 3 of 3 nodes`) and the tier stays 200; on
    /// this node alone it fails as usual. Needs the registry's
    /// [`set_shared_verdicts`](crate::registry::HealthRegistry::set_shared_verdicts);
    /// until then an ordinary probe. On `ready` only, never `active` (R7).
    /// See [`crate::shared`].
    fn shared() => settings.policy.shared = true;

    /// Restarts this pod when its failure is its own (R27): once the
    /// entry has failed here for `after`, while a majority of the peers
    /// that report this shared dependency find it healthy, `live` answers
    /// 503 with a `restart` entry, so the orchestrator restarts this pod,
    /// one pod of the cluster at a time. Never in an outage (most nodes
    /// fail it), without a cluster view, while starting, draining or in
    /// maintenance. Needs [`shared`](Self::shared), `ready` alone, and
    /// `after` longer than the detection time, so the pod is out of
    /// rotation first. See [`crate::shared`].
    fn restart_after(after: Duration) => settings.policy.restart_after = Some(after);

    /// With every setting of `settings` at once: how `ProbeMeta`, the
    /// model the attribute and the manifest fill, registers.
    fn settings(settings: ProbeSettings) => settings = settings;
});

impl std::fmt::Debug for ProbeRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbeRegistration")
            .field("name", &self.name)
            .field("settings", &self.settings)
            .field("depends_on", &self.depends_on)
            .finish_non_exhaustive()
    }
}

/// Why the registry refused a change.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// The registration breaks spec rules: every violation, not just the
    /// first, as the same [`Rule`]s the compile-time checks report.
    Rules(SpecError),
    /// `replace` on a registration that is no longer there: the probe was
    /// removed or the registry dropped.
    Gone {
        /// The name the probe was registered under.
        name: String,
    },
    /// A setting of the run time that the install reads, such as
    /// `CLUSTER_EXPECTED_SIZE`, cannot be used: refused at start, naming
    /// the variable.
    Setting(crate::setting::SettingError),
}

impl RegistryError {
    /// The rules broken, in the order found; empty for [`Gone`](Self::Gone).
    pub fn rules(&self) -> Vec<Rule> {
        self.violations().iter().map(|v| v.rule).collect()
    }

    /// The violations, in the order found; empty for [`Gone`](Self::Gone).
    pub fn violations(&self) -> &[Violation<()>] {
        match self {
            RegistryError::Rules(e) => e.violations(),
            RegistryError::Gone { .. } | RegistryError::Setting(_) => &[],
        }
    }
}

impl std::fmt::Display for RegistryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegistryError::Rules(e) => e.fmt(f),
            RegistryError::Gone { name } => write!(
                f,
                "probe `{name}` is no longer registered: the registry was dropped or the probe was removed; add it again with `HealthRegistry::add`"
            ),
            RegistryError::Setting(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for RegistryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RegistryError::Rules(e) => Some(e),
            RegistryError::Gone { .. } => None,
            RegistryError::Setting(e) => Some(e),
        }
    }
}

/// So `main` can `?` an install: a refused registration ends the process
/// at start with every broken rule.
impl From<RegistryError> for std::io::Error {
    fn from(e: RegistryError) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string())
    }
}

impl From<SpecError> for RegistryError {
    fn from(e: SpecError) -> Self {
        RegistryError::Rules(e)
    }
}

impl From<Vec<Violation<()>>> for RegistryError {
    fn from(violations: Vec<Violation<()>>) -> Self {
        RegistryError::Rules(violations.into())
    }
}
