//! A tier's report: every probe of the tier evaluated concurrently, in
//! dependency order (`depends_on`), and the executor's registry-facing
//! settings.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::time::Instant;

use futures_util::future::join_all;
use std::sync::atomic::AtomicU64;
use zb_health_spec::{HealthStatus, Tag};

use super::descriptions::skipped_description;
use super::run::{EntryOrWait, Executor, Limiter, RunContext, Runs, Starting, record};
use super::runtime::{Failed, Flight, ProbeRuntime, background_entry, keep_result, kept_entry};
use super::schedule::ensure_task;
use crate::observe::{DEFAULT_FAILURE_LOG_INTERVAL, RunError};
use crate::publish::TransitionQueue;
use crate::report::{EntryOutcome, HealthEntry, HealthReport};
use crate::shared::{SharedVerdicts, skipped_in_shared_outage_description};
use crate::sync::lock;

impl Executor {
    pub(crate) fn new(
        max_in_flight: usize,
        runs: Runs,
        starting: Starting,
        transitions: Arc<TransitionQueue>,
    ) -> Self {
        Self {
            shared: Arc::new(RunContext {
                limiter: Limiter::new(max_in_flight),
                failure_log_interval: AtomicU64::new(nanos(DEFAULT_FAILURE_LOG_INTERVAL)),
                runs,
                starting,
                verdicts: std::sync::RwLock::new(None),
                history: AtomicBool::new(false),
                detection: AtomicU64::new(0),
                transitions,
            }),
        }
    }

    /// Publishes this node's ready verdict where the shared verdicts go,
    /// if they are set, so every member's history shows it.
    pub(crate) fn publish_ready(&self, status: HealthStatus) {
        let slot = crate::sync::read(&self.shared.verdicts);
        if let Some((_, verdicts)) = &*slot {
            verdicts.publish_ready(status);
        }
    }

    /// Where the shared verdicts go, if they are set.
    pub(crate) fn shared_verdicts(&self) -> Option<Arc<dyn SharedVerdicts>> {
        let slot = crate::sync::read(&self.shared.verdicts);
        slot.as_ref().map(|(_, v)| Arc::clone(v))
    }

    pub(crate) fn set_shared_verdicts(&self, verdicts: Arc<dyn SharedVerdicts>) {
        let mut slot = crate::sync::write(&self.shared.verdicts);
        // A new generation: every probe publishes to the new one afresh.
        let generation = slot.as_ref().map_or(1, |(g, _)| g + 1);
        *slot = Some((generation, verdicts));
    }

    /// The registry's detection time, which request-driven thresholds
    /// count periods of (set by the table with it, under its lock).
    pub(crate) fn set_detection_time(&self, detection: Duration) {
        self.shared
            .detection
            .store(nanos(detection), Ordering::Relaxed);
    }

    /// From now on every reported entry is recorded in its probe's
    /// history; there is no way back, a page may be open.
    pub(crate) fn enable_history(&self) {
        self.shared.history.store(true, Ordering::Relaxed);
    }

    /// Whether history is recorded.
    pub(crate) fn history_enabled(&self) -> bool {
        self.shared.history.load(Ordering::Relaxed)
    }

    /// Starts a background probe's schedule now, when it has one and the
    /// probe thread runs it, so the first answer after the gates open is
    /// already a measured one. On the caller's runtime it starts at the
    /// first request instead (a runtime is certain to exist only there).
    pub(crate) fn start(&self, probe: &Arc<ProbeRuntime>) {
        if probe.policy().refresh.is_some() && self.shared.runs == Runs::ProbeThread {
            ensure_task(probe, &self.shared);
        }
    }

    /// How often an unchanged failing state is logged again (BE-HLTH-008).
    pub(crate) fn failure_log_interval(&self) -> Duration {
        Duration::from_nanos(self.shared.failure_log_interval.load(Ordering::Relaxed))
    }

    pub(crate) fn set_failure_log_interval(&self, interval: Duration) {
        self.shared
            .failure_log_interval
            .store(nanos(interval), Ordering::Relaxed);
    }

    /// The entry of one probe for one request, under its policy: the
    /// background result, a fresh cached one, or the run's (its own, or
    /// the one it joins). For one probe alone (the gRPC health service's
    /// targets); a tier's report asks [`now`](Self::now) for each.
    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    pub(crate) async fn entry(&self, probe: &Arc<ProbeRuntime>) -> HealthEntry {
        self.now(probe).resolve().await
    }

    /// The entry of `probe` if it is known without waiting, else what to
    /// wait for. Never blocks, except on the probe's own first poll. A
    /// background probe's request only reads its latest result.
    #[inline]
    pub(super) fn now<'a>(&'a self, probe: &'a Arc<ProbeRuntime>) -> EntryOrWait<'a> {
        if probe.policy().refresh.is_none() {
            return self.turn(probe, None);
        }
        if let Some((entry, expires)) = kept_entry(probe) {
            return EntryOrWait::Entry(entry, Some(expires));
        }
        ensure_task(probe, &self.shared);
        EntryOrWait::Entry(background_entry(probe), None)
    }

    /// Runs every probe of `probes` (one tier's) and reports the result.
    ///
    /// The probes run concurrently on the calling task, so the tier takes
    /// as long as its slowest probe, never the sum. Each entry comes
    /// through the probe's execution policy: a shared flight, a cached or a
    /// background result.
    pub(crate) async fn report(&self, tier: Tag, probes: &[Arc<ProbeRuntime>]) -> HealthReport {
        self.report_until(tier, probes).await.0
    }

    /// [`report`](Self::report), and until when it holds as it is: `Some`
    /// exactly when every entry is a kept result (a fresh cached one, a
    /// background one within its staleness bound), then the earliest
    /// instant one of them expires. Until then, and while [`versions`] is
    /// unchanged, the same probes give the same report.
    ///
    /// Every probe is first asked in turn for its entry *now* (a kept
    /// result, or a run that answers at its first poll); only the probes
    /// that must be waited for are then awaited together.
    pub(crate) async fn report_until(
        &self,
        tier: Tag,
        probes: &[Arc<ProbeRuntime>],
    ) -> (HealthReport, Option<Instant>) {
        let started = Instant::now();
        if probes.iter().any(|p| !p.depends_on.is_empty()) {
            // A tier with a dependent is never kept whole: its entry
            // follows dependencies that may be in another tier, whose
            // results are not in this tier's `versions`.
            let mut memo = Vec::new();
            let evaluations: Vec<Flight> = probes
                .iter()
                .map(|p| self.evaluation(p, &mut memo, &mut Vec::new()))
                .collect();
            let entries = join_all(evaluations).await;
            return (HealthReport::new(tier, entries, started.elapsed()), None);
        }
        // `None` once any entry is not a kept one; an empty tier has
        // nothing to keep (and costs nothing to render).
        let mut until: Option<Option<Instant>> = Some(None);
        // The entries known now, in order; the report's own vector when
        // nothing waits (no second vector of 1,000 entries per request).
        let mut entries = Vec::with_capacity(probes.len());
        let mut waits = Vec::new();
        for (index, probe) in probes.iter().enumerate() {
            match self.now(probe) {
                EntryOrWait::Entry(entry, expires) => {
                    until = match (until, expires) {
                        (Some(soonest), Some(e)) => Some(Some(soonest.map_or(e, |s| s.min(e)))),
                        _ => None,
                    };
                    entries.push(entry);
                }
                EntryOrWait::Wait(wait) => {
                    until = None;
                    waits.push(wait.map(move |entry| (index, entry)));
                }
            }
        }
        if !waits.is_empty() {
            // In probe order: `join_all` answers in the order it was given.
            let mut waited = join_all(waits).await.into_iter().peekable();
            let mut known = entries.into_iter();
            entries = (0..probes.len())
                .filter_map(|index| match waited.next_if(|(i, _)| *i == index) {
                    Some((_, entry)) => Some(entry),
                    None => known.next(),
                })
                .collect();
        }
        (
            HealthReport::new(tier, entries, started.elapsed()),
            until.flatten(),
        )
    }

    /// The entry of one probe for one request, after its dependencies
    /// (`depends_on`): a probe answered without its tier (gRPC's probe
    /// targets).
    pub(crate) async fn entry_after_dependencies(&self, probe: &Arc<ProbeRuntime>) -> HealthEntry {
        if probe.depends_on.is_empty() {
            return self.entry(probe).await;
        }
        self.evaluation(probe, &mut Vec::new(), &mut Vec::new())
            .await
    }

    /// One request's evaluation of `probe`: its dependencies' first
    /// (every probe once per request, in `memo`, so a dependency in the
    /// same tier runs once and its dependents wait for that one run, not
    /// for a second deadline), then its own entry, or a skipped one while
    /// a dependency is failing, which never calls the probe. `path` holds
    /// the probes being evaluated above this one: R22 refuses cycles, and
    /// a link back is ignored rather than recursed into.
    pub(super) fn evaluation(
        &self,
        probe: &Arc<ProbeRuntime>,
        memo: &mut Vec<(usize, Flight)>,
        path: &mut Vec<usize>,
    ) -> Flight {
        // The address identifies the probe for this request only.
        let key = Arc::as_ptr(probe) as usize;
        if let Some((_, e)) = memo.iter().find(|(p, _)| *p == key) {
            return e.clone();
        }
        path.push(key);
        let mut dependencies: Vec<(Arc<ProbeRuntime>, Flight)> = Vec::new();
        for d in probe.dependencies() {
            if !path.contains(&(Arc::as_ptr(&d) as usize)) {
                let e = self.evaluation(&d, memo, path);
                dependencies.push((d, e));
            }
        }
        path.pop();
        let executor = self.clone();
        let probe = probe.clone();
        let evaluation = async move {
            let (dependencies, evaluations): (Vec<_>, Vec<_>) = dependencies.into_iter().unzip();
            let entries = join_all(evaluations).await;
            // A dependency that failed here stops its dependents, also
            // when a shared outage opened its entry.
            let failing = dependencies
                .iter()
                .zip(&entries)
                .find_map(|(d, e)| match d.failed(e) {
                    Failed::No => None,
                    failed => Some((d, failed)),
                });
            match failing {
                Some((d, failed)) => executor.skip(&probe, &d.name, failed),
                None => executor.entry(&probe).await,
            }
        }
        .boxed()
        .shared();
        memo.push((key, evaluation.clone()));
        evaluation
    }

    /// The entry of a run skipped because `dependency` is failing (`failed`
    /// says how): the probe's failure status, [`skipped_description`],
    /// zero duration (nothing ran), [`EntryOutcome::Skipped`]; in a shared
    /// outage of the dependency `Degraded` instead, with
    /// [`skipped_in_shared_outage_description`], and marked opened, so its
    /// own dependents are skipped the same way. It is the probe's latest
    /// entry like a run's (it clears a cached result, is a background
    /// probe's result until its next run) and goes to the transition log
    /// as one (a skip is logged when the entry turns to it, then rate
    /// limited like any failing state); it bypasses the probe's own
    /// hysteresis, which counts the probe's own failures.
    pub(super) fn skip(
        &self,
        probe: &ProbeRuntime,
        dependency: &str,
        failed: Failed,
    ) -> HealthEntry {
        let entry = |status, description: String| {
            probe.failed_entry(
                status,
                Cow::Owned(description),
                Duration::ZERO,
                EntryOutcome::Skipped,
            )
        };
        let entry = match failed {
            Failed::SharedOutage(tally) => probe.opened(
                entry(
                    HealthStatus::Degraded,
                    skipped_in_shared_outage_description(dependency, tally),
                ),
                tally,
            ),
            Failed::Here | Failed::No => entry(
                probe.failure_status.status(),
                skipped_description(dependency),
            ),
        };
        keep_result(probe, &mut lock(&probe.state.slot), &entry, false);
        record(&self.shared, probe, &entry, &RunError::None);
        entry
    }
}

/// The sum of the probes' kept-result versions: each grows whenever its
/// probe's kept result is stored or cleared, so over one table the sum is
/// unchanged exactly while no kept result changed.
pub(crate) fn versions(probes: &[Arc<ProbeRuntime>]) -> u64 {
    probes.iter().fold(0u64, |sum, p| {
        sum.wrapping_add(p.state.version.load(Ordering::Acquire))
    })
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos().try_into().unwrap_or(u64::MAX)
}
