//! The registry: one per process (AT-1), shared by every server that serves
//! health. Probes are added with a registration and removed only through
//! the handle that `add` returns.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock, Weak};
use std::time::Duration;

use tokio::sync::Semaphore;
use zb_health_spec::{
    DEFAULT_PROBE_TIMEOUT, FailureStatus, Rule, SpecError, Tag, TagSet, Violation, Violations,
    check_active_not_optional, check_execution_policy, check_name, check_probe_tags, check_timeout,
    check_unique_names,
};

use crate::observe::{DEFAULT_FAILURE_LOG_INTERVAL, ProbeLog};
use crate::policy::{Policy, ProbeState};
use crate::probe::{DynProbe, Probe};

/// How a probe is registered: its name, tiers, deadline and failure status.
pub struct ProbeRegistration {
    pub(crate) name: Arc<str>,
    pub(crate) tags: TagSet,
    pub(crate) timeout: Duration,
    pub(crate) failure_status: FailureStatus,
    pub(crate) probe: Arc<dyn DynProbe>,
    pub(crate) policy: Policy,
}

impl ProbeRegistration {
    /// A registration on the `ready` tier with a 1 s deadline (Kubernetes'
    /// default `timeoutSeconds`) that fails as `Unhealthy`.
    pub fn new(name: impl Into<Arc<str>>, probe: impl Probe) -> Self {
        Self::from_arc(name, Arc::new(probe))
    }

    /// Like [`new`](Self::new), for a probe that is already shared.
    pub fn from_arc(name: impl Into<Arc<str>>, probe: Arc<dyn DynProbe>) -> Self {
        Self {
            name: name.into(),
            tags: TagSet::READY,
            timeout: DEFAULT_PROBE_TIMEOUT,
            failure_status: FailureStatus::Unhealthy,
            probe,
            policy: Policy::default(),
        }
    }

    /// Sets the tiers that run the probe. `live` is refused by `add`.
    pub fn tags(mut self, tags: TagSet) -> Self {
        self.tags = tags;
        self
    }

    /// Sets the deadline; on expiry the probe is cancelled (AT-4).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the status a failure reports; `Degraded` marks an optional
    /// dependency (BE-HLTH-003).
    pub fn failure_status(mut self, status: FailureStatus) -> Self {
        self.failure_status = status;
        self
    }

    /// Serves a result younger than `cache` without running the probe
    /// (BE-HLTH-006); failures are cached too. Not on an `active` probe
    /// (R17). See [`crate::policy`].
    pub fn cache(mut self, cache: Duration) -> Self {
        self.policy.cache = Some(cache);
        self
    }

    /// Runs the probe in the background every `refresh`; requests read the
    /// latest result and never wait (BE-HLTH-006). Not with `cache` (R16),
    /// not on an `active` probe (R17). See [`crate::policy`].
    pub fn refresh(mut self, refresh: Duration) -> Self {
        self.policy.refresh = Some(refresh);
        self
    }

    /// With [`refresh`](Self::refresh): a result older than this is
    /// reported with the failure status as stale. Must be greater than
    /// `refresh` (R16); default twice `refresh` plus the deadline.
    pub fn max_staleness(mut self, max_staleness: Duration) -> Self {
        self.policy.max_staleness = Some(max_staleness);
        self
    }

    /// The registered name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Checks this registration alone against the spec rules, pushing into
    /// `sink`. Shared by `add`, `replace` and generated code.
    fn validate(&self, orchestrator: Option<Duration>, sink: &mut Violations<()>) {
        check_name(&self.name, (), sink);
        let tags: Vec<(Tag, ())> = self.tags.iter().map(|t| (t, ())).collect();
        check_probe_tags(&self.name, &tags, (), sink);
        check_timeout(&self.name, self.timeout, orchestrator, (), sink);
        check_active_not_optional(&self.name, self.tags, self.failure_status, (), sink);
        let p = self.policy;
        check_execution_policy(
            &self.name,
            self.tags,
            p.cache,
            p.refresh,
            p.max_staleness,
            (),
            sink,
        );
    }
}

impl std::fmt::Debug for ProbeRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProbeRegistration")
            .field("name", &self.name)
            .field("tags", &self.tags)
            .field("timeout", &self.timeout)
            .field("failure_status", &self.failure_status)
            .field("policy", &self.policy)
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
}

impl RegistryError {
    /// The rules broken, in the order found; empty for [`Gone`](Self::Gone).
    pub fn rules(&self) -> Vec<Rule> {
        match self {
            RegistryError::Rules(e) => e.rules(),
            RegistryError::Gone { .. } => Vec::new(),
        }
    }

    /// The violations, in the order found; empty for [`Gone`](Self::Gone).
    pub fn violations(&self) -> &[Violation<()>] {
        match self {
            RegistryError::Rules(e) => e.violations(),
            RegistryError::Gone { .. } => &[],
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
        }
    }
}

impl std::error::Error for RegistryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RegistryError::Rules(e) => Some(e),
            RegistryError::Gone { .. } => None,
        }
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

/// A probe as the executor sees it: immutable once registered.
pub(crate) struct Registered {
    pub(crate) id: u64,
    pub(crate) name: Arc<str>,
    pub(crate) tags: TagSet,
    pub(crate) timeout: Duration,
    pub(crate) failure_status: FailureStatus,
    pub(crate) probe: Arc<dyn DynProbe>,
    /// Computed once so a timeout costs no formatting on the request path.
    pub(crate) timeout_description: String,
    pub(crate) policy: Policy,
    /// Single-flight, cache and schedule state (BE-HLTH-006).
    pub(crate) state: ProbeState,
    /// Transition-log state (BE-HLTH-008): goes with the registration.
    pub(crate) log: ProbeLog,
}

/// A tier's probes, precomputed at registration so a request does no tag
/// filtering.
pub(crate) type TierTable = Arc<[Arc<Registered>]>;

struct State {
    all: Vec<Arc<Registered>>,
    ready: TierTable,
    active: TierTable,
    next_id: u64,
    /// The orchestrator's probe timeout, once known. Under the same lock as
    /// the probes, so no `add` can slip in between the check of the
    /// registered deadlines and the setting (R5 at registration).
    orchestrator_timeout: Option<Duration>,
}

impl State {
    fn rebuild_tiers(&mut self) {
        let table = |tag| {
            self.all
                .iter()
                .filter(|r| r.tags.contains(tag))
                .cloned()
                .collect()
        };
        self.ready = table(Tag::Ready);
        self.active = table(Tag::Active);
    }
}

pub(crate) struct Inner {
    state: RwLock<State>,
    pub(crate) limiter: Semaphore,
    pub(crate) lifecycle: crate::lifecycle::Lifecycle,
    /// The failure log interval in nanoseconds; an atomic so a manifest's
    /// `install` can set it on the process registry after it is built.
    failure_log_interval: AtomicU64,
}

impl Inner {
    /// How often an unchanged failing state is logged again (BE-HLTH-008).
    pub(crate) fn failure_log_interval(&self) -> Duration {
        Duration::from_nanos(self.failure_log_interval.load(Ordering::Relaxed))
    }
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos().try_into().unwrap_or(u64::MAX)
}

/// The health registry (AT-1): framework components and the app add probes
/// to the same object, and every endpoint reads it.
///
/// Cloning is cheap and shares the registry, so the actix server, a
/// management port (and the planned gRPC health service) can all serve one notion of
/// "ready". Use [`HealthRegistry::process`] in an application; use
/// [`HealthRegistry::new`] in a unit test, where it holds only what the test
/// adds (AT-9).
#[derive(Clone)]
pub struct HealthRegistry {
    pub(crate) inner: Arc<Inner>,
}

impl Default for HealthRegistry {
    fn default() -> Self {
        Self::builder().build()
    }
}

impl std::fmt::Debug for HealthRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.read().all.iter().map(|r| r.name.to_string()).collect();
        f.debug_struct("HealthRegistry")
            .field("probes", &names)
            .finish()
    }
}

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
        let mut state = self.write();
        let mut sink = Violations::new();
        match state.orchestrator_timeout {
            Some(set) if set == timeout => return Ok(()),
            Some(set) => sink.push(
                Rule::Duration,
                (),
                format!(
                    "the registry's orchestrator timeout is already {} ms; refusing {} ms",
                    set.as_millis(),
                    timeout.as_millis()
                ),
                "one process answers one orchestrator: make every manifest installed into this registry state the same `orchestrator.timeout`",
            ),
            None => {
                for r in &state.all {
                    check_timeout(&r.name, r.timeout, Some(timeout), (), &mut sink);
                }
            }
        }
        sink.into_result()?;
        state.orchestrator_timeout = Some(timeout);
        Ok(())
    }

    /// The orchestrator's probe timeout every deadline is checked against,
    /// if one is set.
    pub fn orchestrator_timeout(&self) -> Option<Duration> {
        self.read().orchestrator_timeout
    }

    /// Sets, on a registry that already exists such as
    /// [`process`](Self::process), how often an unchanged failing probe is
    /// logged again (BE-HLTH-008); see
    /// [`HealthRegistryBuilder::failure_log_interval`]. A manifest's
    /// `observability.failure_log_interval` is set this way by `install`.
    pub fn set_failure_log_interval(&self, interval: Duration) {
        self.inner
            .failure_log_interval
            .store(nanos(interval), Ordering::Relaxed);
    }

    /// How often an unchanged failing probe is logged again.
    pub fn failure_log_interval(&self) -> Duration {
        self.inner.failure_log_interval()
    }

    /// Adds a probe. Refused, with every broken rule, if its name is empty
    /// or taken (R9, R3), it is tagged `live` or nothing (R1), or its
    /// deadline is zero, absurd or not below the orchestrator's (R5).
    pub fn add(
        &self,
        registration: ProbeRegistration,
    ) -> Result<RegistrationHandle, RegistryError> {
        let mut handles = self.commit(vec![registration], None)?;
        Ok(handles.remove(0))
    }

    /// Adds several probes, all or none: if any breaks a rule, nothing is
    /// added and every violation of every registration is returned.
    pub fn add_all(
        &self,
        registrations: impl IntoIterator<Item = ProbeRegistration>,
    ) -> Result<Vec<RegistrationHandle>, RegistryError> {
        self.commit(registrations.into_iter().collect(), None)
    }

    /// The one place registrations are validated and stored. With
    /// `replacing`, the single registration takes that probe's slot.
    fn commit(
        &self,
        registrations: Vec<ProbeRegistration>,
        replacing: Option<u64>,
    ) -> Result<Vec<RegistrationHandle>, RegistryError> {
        let mut state = self.write();
        let slot = match replacing {
            Some(id) => Some(state.all.iter().position(|r| r.id == id).ok_or_else(|| {
                RegistryError::Gone {
                    name: registrations.first().map_or("?", |r| &*r.name).to_owned(),
                }
            })?),
            None => None,
        };
        let mut sink = Violations::new();
        for r in &registrations {
            r.validate(state.orchestrator_timeout, &mut sink);
        }
        check_unique_names(
            state
                .all
                .iter()
                .filter(|r| Some(r.id) != replacing)
                .map(|r| (&*r.name, ()))
                .chain(registrations.iter().map(|r| (&*r.name, ()))),
            &mut sink,
        );
        sink.into_result()?;
        let mut handles = Vec::with_capacity(registrations.len());
        for r in registrations {
            let id = state.next_id;
            state.next_id += 1;
            handles.push(RegistrationHandle {
                registry: Arc::downgrade(&self.inner),
                id,
                name: r.name.clone(),
            });
            let registered = Arc::new(Registered::new(id, r));
            match slot {
                Some(pos) => state.all[pos] = registered,
                None => state.all.push(registered),
            }
        }
        state.rebuild_tiers();
        Ok(handles)
    }

    /// The registered probe names, in registration order.
    pub fn names(&self) -> Vec<Arc<str>> {
        self.read().all.iter().map(|r| r.name.clone()).collect()
    }

    /// The probes of `tier`, as the executor will run them.
    pub(crate) fn table(&self, tier: Tag) -> Option<TierTable> {
        let state = self.read();
        match tier {
            Tag::Ready => Some(state.ready.clone()),
            Tag::Active => Some(state.active.clone()),
            Tag::Live => None,
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        // A panic while holding the lock cannot leave `State` half-written
        // (every mutation is a push or a swap), so poisoning is ignored.
        self.inner.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.inner.state.write().unwrap_or_else(|e| e.into_inner())
    }
}

/// Limits of a [`HealthRegistry`].
#[derive(Debug, Clone)]
pub struct HealthRegistryBuilder {
    max_in_flight: usize,
    orchestrator_timeout: Option<Duration>,
    failure_log_interval: Duration,
}

impl Default for HealthRegistryBuilder {
    fn default() -> Self {
        Self {
            max_in_flight: 16,
            orchestrator_timeout: None,
            failure_log_interval: DEFAULT_FAILURE_LOG_INTERVAL,
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

    /// How often a probe that keeps failing the same way is logged again
    /// (BE-HLTH-008): the transition to failure is logged at once, then at
    /// most one line per `interval`, counting the runs it suppressed.
    /// Default [`DEFAULT_FAILURE_LOG_INTERVAL`] (5 min); zero logs every
    /// failing run. See [`crate::observe`].
    pub fn failure_log_interval(mut self, interval: Duration) -> Self {
        self.failure_log_interval = interval;
        self
    }

    /// Builds the registry.
    pub fn build(self) -> HealthRegistry {
        let empty: TierTable = Arc::from(Vec::new());
        HealthRegistry {
            inner: Arc::new(Inner {
                state: RwLock::new(State {
                    all: Vec::new(),
                    ready: empty.clone(),
                    active: empty,
                    next_id: 0,
                    orchestrator_timeout: self.orchestrator_timeout,
                }),
                limiter: Semaphore::new(self.max_in_flight),
                lifecycle: Default::default(),
                failure_log_interval: AtomicU64::new(nanos(self.failure_log_interval)),
            }),
        }
    }
}

impl Registered {
    fn new(id: u64, r: ProbeRegistration) -> Self {
        Self {
            id,
            timeout_description: format!("timed out after {} ms", r.timeout.as_millis()),
            state: ProbeState::new(r.policy, r.timeout),
            log: ProbeLog::default(),
            policy: r.policy,
            name: r.name,
            tags: r.tags,
            timeout: r.timeout,
            failure_status: r.failure_status,
            probe: r.probe,
        }
    }
}

/// The undo handle of one registration (AT-1).
///
/// Use it to **replace** a probe (e.g. after a cluster re-join) or to remove
/// it when the thing it watches is torn down, never to signal "out of
/// service": an empty tier is healthy, so removing a failing probe would
/// turn "failing" into "all clear". Dropping the handle keeps the probe.
#[derive(Debug)]
pub struct RegistrationHandle {
    registry: Weak<Inner>,
    id: u64,
    name: Arc<str>,
}

impl RegistrationHandle {
    /// The name the probe was registered under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Replaces the probe in place, keeping its position in the report.
    /// On error the old probe stays and the handle is given back.
    pub fn replace(
        self,
        registration: ProbeRegistration,
    ) -> Result<RegistrationHandle, (RegistryError, RegistrationHandle)> {
        let Some(inner) = self.registry.upgrade() else {
            let name = self.name.to_string();
            return Err((RegistryError::Gone { name }, self));
        };
        match (HealthRegistry { inner }).commit(vec![registration], Some(self.id)) {
            Ok(mut handles) => Ok(handles.remove(0)),
            Err(e) => Err((e, self)),
        }
    }

    /// Removes the probe, for teardown of what it watches. Returns whether
    /// it was still registered.
    pub fn remove(self) -> bool {
        let Some(inner) = self.registry.upgrade() else {
            return false;
        };
        let registry = HealthRegistry { inner };
        let mut state = registry.write();
        let before = state.all.len();
        state.all.retain(|r| r.id != self.id);
        let removed = state.all.len() != before;
        if removed {
            state.rebuild_tiers();
        }
        removed
    }
}

#[cfg(test)]
mod orchestrator_tests {
    use super::*;
    use crate::probe::{ProbeResult, from_fn};

    fn probe(name: &'static str, ms: u64) -> ProbeRegistration {
        ProbeRegistration::new(name, from_fn(|| async { Ok(ProbeResult::healthy()) }))
            .timeout(Duration::from_millis(ms))
    }

    #[test]
    fn a_timeout_set_later_holds_every_later_add_to_r5() {
        let registry = HealthRegistry::new();
        registry.add(probe("early", 900)).unwrap();
        registry
            .set_orchestrator_timeout(Duration::from_secs(1))
            .unwrap();
        assert_eq!(
            registry.orchestrator_timeout(),
            Some(Duration::from_secs(1))
        );
        let refused = registry.add(probe("slow", 1000)).unwrap_err();
        assert_eq!(refused.rules(), [Rule::Duration]);
        assert!(registry.add(probe("quick", 999)).is_ok());
        assert_eq!(&*registry.names(), ["early", "quick"].map(Arc::from));
    }

    #[test]
    fn a_timeout_that_a_registered_deadline_does_not_fit_is_refused() {
        let registry = HealthRegistry::new();
        registry.add(probe("a", 800)).unwrap();
        registry.add(probe("b", 1500)).unwrap();
        let refused = registry
            .set_orchestrator_timeout(Duration::from_secs(1))
            .unwrap_err();
        assert_eq!(refused.rules(), [Rule::Duration]);
        assert!(refused.to_string().contains("probe `b`"), "{refused}");
        assert_eq!(registry.orchestrator_timeout(), None, "nothing changed");
    }

    #[test]
    fn the_same_timeout_again_is_a_no_op_and_another_is_refused() {
        let registry = HealthRegistry::new();
        let one = Duration::from_secs(1);
        registry.set_orchestrator_timeout(one).unwrap();
        registry.set_orchestrator_timeout(one).unwrap();
        let refused = registry
            .set_orchestrator_timeout(Duration::from_secs(2))
            .unwrap_err();
        assert_eq!(refused.rules(), [Rule::Duration]);
        assert_eq!(registry.orchestrator_timeout(), Some(one));
    }
}
