//! The registry (AT-1): one per process, shared by every server that serves
//! health. A façade over the probe table (which validates registrations
//! and hands each new probe to the [executor](crate::executor), starting a
//! background probe's schedule), the executor that runs a tier's probes
//! (asking the [lifecycle](crate::lifecycle) whether a startup gate is
//! pending), and the lifecycle (gates, watchdogs, drain); beside them it
//! keeps each tier's last verdict for the transition log and metrics
//! (BE-HLTH-008) and the registry's part of the [history](crate::history).
//!
//! Answering a tier is the lifecycle applied to the executor's report of
//! the table's probes; it also answers one probe's path, a health group,
//! the startup path and the history document. Every public method of the
//! registry is in this file, except `set_cluster_view` (in `cluster`,
//! whose types it names: `cluster` builds on the registry, not the other
//! way round).

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::time::Instant;

use crate::executor::{Executor, Runs};
use crate::history::{ClusterSource, Document, TierAnswers, render};
use crate::lifecycle::{Heartbeat, Lifecycle, LiveAnswer, StartupGate};
use crate::observe::{self, DEFAULT_FAILURE_LOG_INTERVAL, TierLog};
use crate::report::HealthReport;
use crate::table::ProbeTable;
use zb_health_spec::{Disclosure, HealthStatus, Tag};

pub use crate::executor::InFlight;
pub use crate::registration::{ProbeRegistration, RegistryError};
pub use crate::table::RegistrationHandle;

struct Inner {
    table: Arc<ProbeTable>,
    executor: Executor,
    lifecycle: Lifecycle,
    /// Each tier's last verdict, for its transition metric and log.
    tiers: TierLog,
    /// What the history shows besides the probes' and the lifecycle's own
    /// records.
    history: RegistryHistory,
}

/// The registry's part of the history: each tier's last answer, when the
/// registry was made, the service's name and the cluster, if set.
struct RegistryHistory {
    tiers: TierAnswers,
    started_ms: u64,
    service: std::sync::RwLock<Option<Arc<str>>>,
    cluster: std::sync::RwLock<Option<Arc<dyn ClusterSource>>>,
}

/// The health registry (AT-1): framework components and the app add probes
/// to the same object, and every endpoint reads it.
///
/// Cloning is cheap and shares the registry, so the actix server, a
/// management port and the gRPC health service all serve one notion of
/// "ready". Use [`HealthRegistry::process`] in an application; use
/// [`HealthRegistry::new`] in a unit test, where it holds only what the test
/// adds (AT-9).
#[derive(Clone)]
pub struct HealthRegistry {
    inner: Arc<Inner>,
}

impl Default for HealthRegistry {
    fn default() -> Self {
        Self::builder().build()
    }
}

impl std::fmt::Debug for HealthRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HealthRegistry")
            .field("probes", &self.inner.table)
            .finish()
    }
}

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
    /// [`shared`](crate::ProbeRegistration::shared) is an ordinary probe.
    /// A manifest's `install` sets its `cluster_view` when it has one.
    pub fn set_shared_verdicts(&self, verdicts: Arc<dyn crate::shared::SharedVerdicts>) {
        self.inner.executor.set_shared_verdicts(verdicts);
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
        let mut handles = self.inner.table.commit(vec![registration], None)?;
        Ok(handles.remove(0))
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
            .filter_map(|p| p.in_flight())
            .collect()
    }
}

/// What a kept answer of a tier was made from, and until when it holds:
/// the tier's probe table, its probes' kept-result versions, and the
/// first expiry among those results. Made only by
/// [`HealthRegistry::tier_answer`], for an answer made of kept results
/// alone and serving, in the steady state.
pub(crate) struct Validity {
    /// The tier's probe table then; weak so a replaced table's probes (and
    /// their background schedules) are dropped, while its address cannot
    /// be reused by a new table.
    table: std::sync::Weak<[Arc<crate::executor::ProbeRuntime>]>,
    changes: u64,
    /// When its first kept result expires.
    until: Instant,
    status: HealthStatus,
}

impl Validity {
    /// Whether an answer of this validity is still the tier's answer, now
    /// that the table and versions are `table` and `changes`.
    fn holds(&self, table: &Arc<[Arc<crate::executor::ProbeRuntime>]>, changes: u64) -> bool {
        self.changes == changes
            && std::ptr::eq(self.table.as_ptr(), Arc::as_ptr(table))
            && Instant::now() < self.until
    }
}

/// A tier's answer for a server that keeps its rendered answers
/// ([`HealthRegistry::tier_answer`]).
pub(crate) enum TierAnswer<K, F> {
    /// The kept answer still holds; it was counted as an answer.
    Again(K),
    /// A new answer: this future runs the tier and yields its report, with
    /// its validity when it may be kept.
    Fresh(F),
}

/// Answers: a tier's report, as every server serves it.
impl HealthRegistry {
    /// Runs every probe of `tier` and reports the result, without the
    /// lifecycle's entries ([`answer`](Self::answer) adds them).
    ///
    /// The probes run concurrently on the calling task, so the tier takes
    /// as long as its slowest probe, never the sum. A probe that misses its
    /// deadline is dropped, which cancels it, so hung calls cannot pile up.
    /// Concurrent requests for one probe share one execution, and a probe
    /// may be cached or run in the background (see [`crate::executor`]).
    /// The `live` tier carries no probes (ZB-1.3) and is always `Healthy`.
    pub async fn check(&self, tier: Tag) -> HealthReport {
        match self.inner.table.tier(tier) {
            Some(probes) => self.inner.executor.report(tier, &probes).await,
            None => HealthReport::new(tier, Vec::new(), Duration::ZERO),
        }
    }

    /// A tier's whole answer, as every server should serve it: for `ready`
    /// and `active`, [`check`](Self::check) with the startup and shutdown
    /// entries first while they apply; for `live`, one entry per watchdog,
    /// `Unhealthy` for a stalled loop (an empty, `Healthy` report without
    /// watchdogs). Map its status with [`tier_status_code`](crate::http::tier_status_code),
    /// except that a stalled `live` is a 503.
    pub async fn answer(&self, tier: Tag) -> HealthReport {
        let report = match tier {
            Tag::Live => self.inner.lifecycle.live_report(),
            Tag::Ready | Tag::Active => self.inner.lifecycle.apply(self.check(tier).await),
        };
        self.answered(tier, report.status, &report);
        report
    }

    /// One probe's answer through its tier (`GET <tier path>/{probe}`): the
    /// probe `name` of `tier` run alone through its execution policy (the
    /// shared flight, the cache, the background result), with the startup
    /// and shutdown entries first while they apply, as
    /// [`answer`](Self::answer) puts them: a probe of a service that is
    /// starting or draining must not look ready on its own.
    ///
    /// `None` when `tier` has no probe `name`: an unknown name, a probe of
    /// the other tier, or any name on `live`, which carries no probes
    /// (ZB-1.3). It is not counted as an answer of the tier (the tier
    /// metrics and transition log speak of whole tiers).
    pub async fn answer_probe(&self, tier: Tag, name: &str) -> Option<HealthReport> {
        let probe = self
            .inner
            .table
            .tier(tier)?
            .iter()
            .find(|p| &*p.name == name)?
            .clone();
        let started = Instant::now();
        let entry = self.inner.executor.entry(&probe).await;
        let report = HealthReport::new(tier, vec![entry], started.elapsed());
        Some(self.inner.lifecycle.apply(report))
    }

    /// A health group's answer (`ZbHealth::group`, a manifest's `groups`):
    /// every registered probe named in `probes` or tagged with one of
    /// `tiers`, once each and in registration order, run concurrently
    /// through their execution policies, with the startup and shutdown
    /// entries first while they apply. Its status is aggregated as a
    /// tier's; the report is tagged `ready`, whose status-code mapping it
    /// answers with. A named probe that is no longer registered is left
    /// out. Not counted as an answer of any tier.
    pub async fn answer_group(&self, probes: &[Arc<str>], tiers: &[Tag]) -> HealthReport {
        let selected: Vec<_> = self
            .inner
            .table
            .all()
            .into_iter()
            .filter(|p| probes.contains(&p.name) || tiers.iter().any(|t| p.tags.contains(*t)))
            .collect();
        let report = self.inner.executor.report(Tag::Ready, &selected).await;
        self.inner.lifecycle.apply(report)
    }

    /// A tier's answer (`ready`, `active`) for a server that keeps a
    /// rendered answer: one call, so a request crosses the registry once.
    ///
    /// While the lifecycle adds no entry (not starting, not draining), the
    /// tier's probes all keep their results (cached, background) and none
    /// of those changed or expired since `kept` was made, the kept answer
    /// still holds: it is counted as an answer and [`TierAnswer::Again`]
    /// hands it back, at the cost of a few atomic loads. Otherwise the future in
    /// [`TierAnswer::Fresh`] runs the tier as [`answer`](Self::answer) does
    /// and yields the report with its validity, `Some` when every entry is
    /// a kept result and the answer serves. What it depends on is read
    /// before the probes run, so a change during the run only makes the
    /// next answer fresh too.
    ///
    /// `kept` is the server's kept answer, whatever it holds besides its
    /// validity (`validity` reads that), handed back in `Again`.
    pub(crate) fn tier_answer<'k, K>(
        &self,
        tier: Tag,
        kept: Option<&'k K>,
        validity: impl FnOnce(&K) -> &Validity,
    ) -> TierAnswer<&'k K, impl Future<Output = (HealthReport, Option<Validity>)> + 'static> {
        let key = if self.inner.lifecycle.is_steady() {
            // `None` at once for a tier with a probe that keeps nothing,
            // told by the table without visiting the probes.
            self.inner
                .table
                .tier_if_kept(tier)
                .map(|table| (crate::executor::versions(&table), table))
        } else {
            None
        };
        if let (Some((changes, table)), Some(kept)) = (&key, kept) {
            let v = validity(kept);
            if v.holds(table, *changes) {
                self.answered_again(tier, v.status);
                return TierAnswer::Again(kept);
            }
        }
        let registry = self.clone();
        TierAnswer::Fresh(async move {
            let (report, until) = match registry.inner.table.tier(tier) {
                Some(probes) => registry.inner.executor.report_until(tier, &probes).await,
                None => (HealthReport::new(tier, Vec::new(), Duration::ZERO), None),
            };
            let report = registry.inner.lifecycle.apply(report);
            registry.answered(tier, report.status, &report);
            let validity = match (key, until) {
                (Some((changes, table)), Some(until)) if report.status.is_serving() => {
                    Some(Validity {
                        table: Arc::downgrade(&table),
                        changes,
                        until,
                        status: report.status,
                    })
                }
                _ => None,
            };
            (report, validity)
        })
    }

    /// Counts an answer of `tier` with `status`, as [`answer`](Self::answer)
    /// does, for an answer served again without its report at hand: only a
    /// serving one is, so no failing entries are listed.
    fn answered_again(&self, tier: Tag, status: HealthStatus) {
        self.history_answered(tier, status);
        self.inner.tiers.answered(tier, status, String::new);
    }

    fn answered(&self, tier: Tag, status: HealthStatus, report: &HealthReport) {
        self.history_answered(tier, status);
        self.inner
            .tiers
            .answered(tier, status, || observe::unhealthy_entries(report));
    }

    /// Keeps a tier's answer for the history while it is enabled: one
    /// relaxed load otherwise, one store then. The code is the HTTP one
    /// the tier maps the status to (a stalled `live` is a 503).
    fn history_answered(&self, tier: Tag, status: HealthStatus) {
        if self.inner.executor.history_enabled() {
            let serving = match tier {
                Tag::Live => status == HealthStatus::Healthy,
                Tag::Ready | Tag::Active => status.is_serving(),
            };
            let code = if serving { 200 } else { 503 };
            let changed = tier == Tag::Ready
                && self.inner.history.tiers.last(tier).map(|(s, _, _)| s) != Some(status);
            self.inner.history.tiers.answered(tier, status, code);
            // Gossiped on a change only: the other members' pages show it.
            if changed {
                self.inner.executor.publish_ready(status);
            }
        }
    }

    /// What the `live` tier answers, from the watchdogs alone: the
    /// precomputed body on the healthy path.
    pub(crate) fn live_answer(&self) -> LiveAnswer {
        let answer = self.inner.lifecycle.live();
        let (status, report) = match &answer {
            LiveAnswer::Fixed | LiveAnswer::Healthy(..) => (HealthStatus::Healthy, None),
            LiveAnswer::Stalled(report) => (report.status, Some(report)),
        };
        self.history_answered(Tag::Live, status);
        self.inner.tiers.answered(Tag::Live, status, || {
            report.map_or_else(String::new, observe::unhealthy_entries)
        });
        answer
    }

    /// The tiers that run the probe `name`, if it is registered.
    #[cfg(feature = "grpc")]
    pub(crate) fn probe_tags(&self, name: &str) -> Option<zb_health_spec::TagSet> {
        self.inner.table.find(name).map(|p| p.tags)
    }

    /// The entry of the probe `name` through its execution policy (the
    /// shared flight, the cache, the background result); `None` if no such
    /// probe is registered. For the gRPC health service's probe targets.
    #[cfg(feature = "grpc")]
    pub(crate) async fn probe_entry(&self, name: &str) -> Option<crate::report::HealthEntry> {
        let probe = self.inner.table.find(name)?;
        Some(self.inner.executor.entry_after_dependencies(&probe).await)
    }
}

/// The history (`spec/history.md`): what `/health/history` and
/// `/health/ui` show.
impl HealthRegistry {
    /// Starts recording the history: from now on every probe result (the
    /// reported entry, after hysteresis and the shared comparison) goes
    /// into its probe's fixed-size history, and each tier's answer is
    /// kept; see [`crate::history`]. [`ZbHealth::build`](crate::ZbHealth::build)
    /// calls it for endpoints that serve the history. Until then a result
    /// costs one relaxed load. There is no way back.
    pub fn enable_history(&self) {
        self.inner.executor.enable_history();
    }

    /// Whether the history is recorded.
    pub fn is_history_enabled(&self) -> bool {
        self.inner.executor.history_enabled()
    }

    /// The service's name, shown as the history's `service` (a manifest's
    /// `install` sets its `service`).
    pub fn set_service_name(&self, name: impl Into<Arc<str>>) {
        *self
            .inner
            .history
            .service
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(name.into());
    }

    /// Where the history reads the cluster from (see `set_cluster_view`).
    #[cfg_attr(not(feature = "cluster"), allow(dead_code))]
    pub(crate) fn set_history_cluster(&self, source: Arc<dyn ClusterSource>) {
        *self
            .inner
            .history
            .cluster
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(source);
    }

    /// The history document (`spec/health-history.schema.json`) at
    /// `level`, with the cluster addresses when `cluster_addresses`: what
    /// `/health/history` answers. It copies what was recorded and never
    /// runs a probe; raw error text is never recorded, so it shows at no
    /// level.
    pub fn history_json(&self, level: Disclosure, cluster_addresses: bool) -> String {
        let now = crate::history::now_ms();
        let probes = self
            .inner
            .table
            .all()
            .iter()
            .map(|p| (p.name.clone(), p.tags, p.history_view(now)))
            .collect();
        let h = &self.inner.history;
        let cluster = h.cluster.read().unwrap_or_else(|e| e.into_inner()).clone();
        let doc = Document {
            service: h.service.read().unwrap_or_else(|e| e.into_inner()).clone(),
            now_ms: now,
            started_ms: h.started_ms,
            tiers: Tag::ALL.map(|t| h.tiers.last(t)),
            probes,
            lifecycle: self.inner.lifecycle.history_view(),
            events: self.inner.lifecycle.events(),
            cluster: cluster.and_then(|c| c.cluster()),
        };
        render(&doc, level, cluster_addresses)
    }
}

/// The lifecycle: startup gates, watchdogs, the drain.
impl HealthRegistry {
    /// Declares one piece of startup work (BE-HLTH-004). Until every
    /// declared gate is [`ready`](StartupGate::ready), `ready` and `active`
    /// answer 503 with a first entry
    /// [`STARTUP_ENTRY`](crate::lifecycle::STARTUP_ENTRY) described
    /// [`STARTING_DESCRIPTION`](crate::lifecycle::STARTING_DESCRIPTION);
    /// `live` is unaffected. A cluster probe's startup `Degraded` (a 200)
    /// therefore cannot make a booting service look ready.
    ///
    /// Declare the gate before the server starts, and signal it when the
    /// work is done:
    ///
    /// ```
    /// # use zb_health::HealthRegistry;
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
    /// # use zb_health::HealthRegistry;
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
    /// [`SHUTDOWN_ENTRY`](crate::lifecycle::SHUTDOWN_ENTRY) described
    /// [`DRAINING_DESCRIPTION`](crate::lifecycle::DRAINING_DESCRIPTION),
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

    /// Runs `hook` when the drain begins, e.g. to make this node give up
    /// the active role so the cluster elects another (a cluster view
    /// leaving the cluster). Runs at once, on this thread, if the drain has
    /// already begun. Keep it short: it runs on the drain's path.
    pub fn on_drain(&self, hook: impl FnOnce() + Send + 'static) {
        self.inner.lifecycle.on_drain(Box::new(hook));
    }

    /// The lifecycle, for the lifecycle's own tests.
    #[cfg(test)]
    pub(crate) fn lifecycle(&self) -> &Lifecycle {
        &self.inner.lifecycle
    }
}

/// Limits of a [`HealthRegistry`].
#[derive(Debug, Clone)]
pub struct HealthRegistryBuilder {
    max_in_flight: usize,
    orchestrator_timeout: Option<Duration>,
    detection_time: Option<Duration>,
    failure_log_interval: Duration,
    runs: Runs,
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
    /// rather than at registration.
    pub fn probes_on_caller_runtime(mut self) -> Self {
        self.runs = Runs::Caller;
        self
    }

    /// Builds the registry.
    pub fn build(self) -> HealthRegistry {
        let lifecycle = Lifecycle::default();
        let executor = Executor::new(
            self.max_in_flight,
            self.failure_log_interval,
            self.runs,
            Box::new(lifecycle.starting()),
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

#[cfg(test)]
mod tests;
