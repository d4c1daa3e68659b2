//! Answers: a tier's report as every server serves it, one probe's path,
//! a health group, and the kept answer's validity (`tier_answer`); and
//! `record`, the one place a tier's plain answer is recorded.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::inner::HealthRegistry;

/// What [`HealthRegistry::answer_excluding`] left out, and what it would
/// not: the checks it excluded, the names that name a check no exclusion
/// may leave out, and the names that match no check of the tier.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exclusion {
    /// The checks left out of the verdict, in the tier's order.
    pub excluded: Vec<Arc<str>>,
    /// The names asked for that name a check that always counts: the
    /// lifecycle's entries ([`LIFECYCLE_ENTRIES`](zb_health_spec::rules::LIFECYCLE_ENTRIES))
    /// and a probe that is not [`EXCLUDABLE`](crate::probe::Probe::EXCLUDABLE)
    /// (the active-node decision), as asked.
    pub kept: Vec<String>,
    /// The names that matched nothing, as asked.
    pub unknown: Vec<String>,
}
use crate::lifecycle::LiveAnswer;
use crate::observe::{self};
use crate::report::HealthReport;
use zb_health_spec::{HealthStatus, Tag};

/// What a kept answer of a tier was made from, and until when it holds:
/// the tier's probe table, its probes' kept-result versions, and the
/// first expiry among those results. Made only by
/// [`HealthRegistry::tier_answer`], for an answer made of kept results
/// alone and serving, in the steady state.
pub(crate) struct Validity {
    /// The tier's probe table then; weak so a replaced table's probes (and
    /// their background schedules) are dropped, while its address cannot
    /// be reused by a new table.
    pub(super) table: std::sync::Weak<[Arc<crate::executor::ProbeRuntime>]>,
    pub(super) changes: u64,
    /// When its first kept result expires.
    pub(super) until: Instant,
    pub(super) status: HealthStatus,
}

impl Validity {
    /// Whether an answer of this validity is still the tier's answer, now
    /// that the table and versions are `table` and `changes`.
    pub(super) fn holds(
        &self,
        table: &Arc<[Arc<crate::executor::ProbeRuntime>]>,
        changes: u64,
    ) -> bool {
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
    /// may be cached or run in the background.
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
    /// except that a stalled `live` is a 503. The tier's plain answer, so
    /// it is recorded: the tier's metrics, history and publishers follow it.
    pub async fn answer(&self, tier: Tag) -> HealthReport {
        let report = match tier {
            Tag::Live => self.inner.lifecycle.live_report(),
            Tag::Ready | Tag::Active => self.inner.lifecycle.apply(self.check(tier).await),
        };
        self.record(tier, report.status, || observe::unhealthy_entries(&report));
        report
    }

    /// A tier's answer with the checks named in `exclude` left out of the
    /// verdict (kube-apiserver's `?exclude=`, for an emergency): they do
    /// not run and are not in the report. Excluding every check is
    /// allowed.
    ///
    /// Some checks always count, and a name of one is reported in
    /// [`Exclusion::kept`]: the lifecycle's entries (a drain, a maintenance
    /// window or a restart request must hold) and a probe that is not
    /// [`EXCLUDABLE`](crate::probe::Probe::EXCLUDABLE): the active-node decision,
    /// without which a standby's `active` would answer 200.
    ///
    /// The answer is this response's alone: it is not recorded, so no
    /// caller changes what the tier's metrics, history and publishers
    /// report (`spec/tiers.md`, verbose and exclude). On `live` the checks are
    /// the watchdogs.
    pub async fn answer_excluding(
        &self,
        tier: Tag,
        exclude: &[String],
    ) -> (HealthReport, Exclusion) {
        let asked = |name: &str| exclude.iter().any(|e| e == name);
        let mut exclusion = Exclusion::default();
        let report = match tier {
            Tag::Live => {
                let report = self.inner.lifecycle.live_report();
                let (out, kept): (Vec<_>, Vec<_>) = report.entries.into_iter().partition(|e| {
                    asked(&e.name) && !zb_health_spec::rules::is_lifecycle_entry(&e.name)
                });
                exclusion.excluded = out.into_iter().map(|e| Arc::from(&*e.name)).collect();
                HealthReport::new(tier, kept, report.total_duration)
            }
            Tag::Ready | Tag::Active => {
                let probes = self.inner.table.tier(tier);
                let (out, kept): (Vec<_>, Vec<_>) = probes
                    .iter()
                    .flat_map(|t| t.iter().cloned())
                    .partition(|p| asked(&p.name) && p.excludable());
                exclusion.excluded = out.iter().map(|p| p.name.clone()).collect();
                exclusion.kept = kept
                    .iter()
                    .filter(|p| asked(&p.name))
                    .map(|p| p.name.to_string())
                    .collect();
                self.inner
                    .lifecycle
                    .apply(self.inner.executor.report(tier, &kept).await)
            }
        };
        for name in exclude {
            if exclusion.excluded.iter().any(|x| **x == **name) || exclusion.kept.contains(name) {
                continue;
            }
            if zb_health_spec::rules::is_lifecycle_entry(name) {
                exclusion.kept.push(name.clone());
            } else {
                exclusion.unknown.push(name.clone());
            }
        }
        (report, exclusion)
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
                self.record(tier, v.status, String::new);
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
            registry.record(tier, report.status, || observe::unhealthy_entries(&report));
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

    /// Records an answer of `tier` as the tier's: its gauge and failure
    /// counter, its history (and the ready verdict gossiped to the other
    /// members' pages), and a change of verdict for the publishers.
    /// `failing` names the `Unhealthy` entries, called only on a change
    /// to 503 (an answer served again is a serving one, with none).
    ///
    /// The one place an answer is recorded, and only the tier's **plain**
    /// answer is: what the orchestrator's probe asks for (`GET` on the
    /// tier's path without a query, gRPC's tier services). An answer
    /// shaped by a query (`?exclude=`, `?verbose`), a per-probe path or a
    /// group is that response alone, as kube-apiserver's `?exclude=` is:
    /// recorded, one anonymous `?exclude=` would rewrite what Prometheus,
    /// the history, the dashboard and the publishers see.
    pub(super) fn record(&self, tier: Tag, status: HealthStatus, failing: impl FnOnce() -> String) {
        self.history_answered(tier, status);
        let changed = self.inner.tiers.answered(tier, status, failing);
        self.publish_tier(tier, status, changed);
    }

    /// A tier's change of verdict, for the publishers: `from` is the
    /// verdict it left, as `Healthy` (200) or `Unhealthy` (503).
    #[inline]
    fn publish_tier(&self, tier: Tag, status: HealthStatus, changed: Option<Option<bool>>) {
        if let Some(from) = changed {
            self.publish_tier_change(tier, status, from);
        }
    }

    /// The rare part of [`publish_tier`](Self::publish_tier), out of line
    /// so the answer's hot path stays small.
    #[cold]
    #[inline(never)]
    fn publish_tier_change(&self, tier: Tag, status: HealthStatus, from: Option<bool>) {
        let from = from.map(|serving| {
            if serving {
                HealthStatus::Healthy
            } else {
                HealthStatus::Unhealthy
            }
        });
        self.inner.transitions.offer_tier(tier, || {
            crate::publish::Transition::tier(tier, from, status)
        });
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
        self.record(Tag::Live, status, || {
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
