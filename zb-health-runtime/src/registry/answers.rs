//! Answers: [`HealthRegistry::answer`], the one way a selection (a tier,
//! a tier with exclusions, one probe, a group) is answered, the kept
//! answers it hands out again while they hold, and `record`, the one place
//! a tier's plain answer is recorded.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::inner::{HealthRegistry, KeptTier};
use crate::answer::Kept;
use crate::lifecycle::LiveAnswer;
use crate::observe;
use crate::report::HealthReport;
use crate::sync::lock;
use crate::table::TierTable;
use zb_health_spec::{HealthStatus, Tag};

/// What [`HealthRegistry::answer`] answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection<'a> {
    /// A tier's plain answer (`GET` on its path without a query, gRPC's
    /// tier services): for `ready` and `active` its probes with the
    /// startup, shutdown and maintenance entries first while they apply;
    /// for `live` one entry per watchdog, `Unhealthy` for a stalled loop
    /// (an empty, `Healthy` report without watchdogs). The only selection
    /// that is recorded: the tier's metrics, history and publishers follow
    /// it.
    Tier(Tag),
    /// A tier with the checks named here left out of the verdict
    /// (kube-apiserver's `?exclude=`, for an emergency): they do not run
    /// and are not in the report; excluding every check is allowed. Some
    /// checks always count, named in [`Exclusion::kept`]: the lifecycle's
    /// entries (a drain, a maintenance window or a restart request must
    /// hold) and a probe that is not [`EXCLUDABLE`](crate::probe::Probe::EXCLUDABLE)
    /// (the active-node decision, without which a standby's `active` would
    /// answer 200). On `live` the checks are the watchdogs.
    Excluding(Tag, &'a [String]),
    /// One probe (`GET <tier path>/{probe}`). With a tier: that tier's
    /// probe of this name run alone through its execution policy (the
    /// shared flight, the cache, the background result), with the
    /// lifecycle's entries first as a tier puts them, so a probe of a
    /// service that is starting or draining does not look ready on its
    /// own. Without (gRPC's probe targets): any registered probe of this
    /// name, after its dependencies, without the lifecycle's entries.
    /// [`Answer::is_unknown`] when there is no such probe: an unknown
    /// name, a probe of the other tier, any name on `live`, which carries
    /// no probes (ZB-1.3).
    Probe(Option<Tag>, &'a str),
    /// A health group (`ZbHealth::group`, a manifest's `groups`): every
    /// registered probe named in `probes` or tagged with one of `tiers`,
    /// once each and in registration order, run concurrently through their
    /// execution policies, with the lifecycle's entries first. Aggregated
    /// as a tier; the report is tagged `ready`. A named probe that is no
    /// longer registered is left out.
    Group {
        /// The probes named.
        probes: &'a [Arc<str>],
        /// The tiers whose probes are in.
        tiers: &'a [Tag],
    },
}

impl From<Tag> for Selection<'_> {
    fn from(tier: Tag) -> Self {
        Selection::Tier(tier)
    }
}

/// What [`Selection::Excluding`] left out, and what it would not: the
/// checks it excluded, the names that name a check no exclusion may leave
/// out, and the names that match no check of the tier.
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

/// A selection's answer ([`HealthRegistry::answer`]): its status, its
/// report (through `Deref`), what `?exclude=` left out, and whether it is
/// a kept answer, served again, body and all, while it holds.
#[derive(Debug)]
pub struct Answer {
    /// The verdict, which the HTTP code (200 while serving, 503 when
    /// `Unhealthy`), gRPC's serving status and the metrics follow.
    pub status: HealthStatus,
    report: Report,
    exclusion: Option<Box<Exclusion>>,
    unknown: bool,
}

#[derive(Debug)]
enum Report {
    Made(HealthReport),
    Kept(Arc<Kept>),
    /// `live` without watchdogs, the same in every registry.
    Fixed(&'static Kept),
}

impl Answer {
    fn made(report: HealthReport) -> Self {
        Self::new(Report::Made(report))
    }

    fn new(report: Report) -> Self {
        let mut answer = Self {
            status: HealthStatus::Healthy,
            report,
            exclusion: None,
            unknown: false,
        };
        answer.status = answer.report().status;
        answer
    }

    /// The report answered.
    pub fn report(&self) -> &HealthReport {
        match &self.report {
            Report::Made(report) => report,
            Report::Kept(kept) => kept.report(),
            Report::Fixed(kept) => kept.report(),
        }
    }

    /// The HTTP status code (ZB-1.2): 200 while serving, 503 when
    /// `Unhealthy`, on every tier (`live` is `Unhealthy` only for a
    /// stalled watchdog or a restart request).
    pub fn http_code(&self) -> u16 {
        self.status.http_code()
    }

    /// What [`Selection::Excluding`] left out; `None` for other selections.
    pub fn exclusion(&self) -> Option<&Exclusion> {
        self.exclusion.as_deref()
    }

    /// Whether a [`Selection::Probe`] named no probe (an HTTP 404, gRPC's
    /// `NOT_SERVING`).
    pub fn is_unknown(&self) -> bool {
        self.unknown
    }

    /// Until when a kept answer holds at most (a kept result expires
    /// then); `None` for an answer made for this caller alone, or for one
    /// that holds until something changes (`live`). A kept answer is
    /// handed out again, rendered bodies and all, while its probes' kept
    /// results are unchanged and the lifecycle adds no entry.
    pub fn valid_until(&self) -> Option<Instant> {
        self.kept().and_then(Kept::until)
    }

    /// The kept answer, whose bodies are kept with it.
    pub(crate) fn kept(&self) -> Option<&Kept> {
        match &self.report {
            Report::Made(_) => None,
            Report::Kept(kept) => Some(kept),
            Report::Fixed(kept) => Some(kept),
        }
    }
}

impl std::ops::Deref for Answer {
    type Target = HealthReport;

    fn deref(&self) -> &HealthReport {
        self.report()
    }
}

/// An answer that needs its probes run ([`HealthRegistry::answer_now`]):
/// the selection, and for a tier what a new answer would be kept with.
pub(crate) struct Pending<'a> {
    selection: Selection<'a>,
    key: Option<(u64, TierTable)>,
}

/// Answers: one call for every selection.
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

    /// The answer to `selection` (a [`Tag`] is its tier's plain answer),
    /// as every server serves it: HTTP renders it with its status code
    /// ([`Answer::http_code`]), gRPC with its serving status.
    ///
    /// Only a plain tier answer is recorded (the tier's metrics, history,
    /// gossiped ready verdict and publishers follow it): an answer shaped
    /// by a query, a probe's path or a group is its caller's alone
    /// (`spec/tiers.md`, verbose and exclude).
    ///
    /// A tier made of kept results alone (cached, background) is made
    /// once and handed out again while none of them changed or expired and
    /// the lifecycle adds no entry, at the cost of a few atomic loads.
    pub async fn answer<'a>(&self, selection: impl Into<Selection<'a>>) -> Answer {
        match self.answer_now(selection.into()) {
            Ok(answer) => answer,
            Err(pending) => self.answer_pending(pending).await,
        }
    }

    /// [`answer`](Self::answer)'s first half: the answer when it is there
    /// at once (`live`, a kept answer that holds), recorded; else what the
    /// second half ([`answer_pending`](Self::answer_pending)) needs. Apart
    /// so a server's hot path builds no state machine for a kept answer.
    pub(crate) fn answer_now<'a>(&self, selection: Selection<'a>) -> Result<Answer, Pending<'a>> {
        let key = match selection {
            Selection::Tier(Tag::Live) => Ok(self.live()),
            Selection::Tier(tier) => self.kept_tier(tier),
            _ => Err(None),
        };
        match key {
            Ok(answer) => {
                self.record(selection, &answer);
                Ok(answer)
            }
            Err(key) => Err(Pending { selection, key }),
        }
    }

    /// [`answer`](Self::answer)'s second half: the probes run.
    pub(crate) async fn answer_pending(&self, pending: Pending<'_>) -> Answer {
        let Pending { selection, key } = pending;
        let answer = match selection {
            Selection::Tier(tier) => self.tier(tier, key).await,
            Selection::Excluding(tier, names) => self.excluding(tier, names).await,
            Selection::Probe(tier, name) => self.probe(tier, name).await,
            Selection::Group { probes, tiers } => self.group(probes, tiers).await,
        };
        self.record(selection, &answer);
        answer
    }

    /// `live`: from the watchdogs alone, a kept answer while every loop
    /// is in time.
    fn live(&self) -> Answer {
        match self.inner.lifecycle.live() {
            LiveAnswer::Fixed => Answer::new(Report::Fixed(Kept::fixed_live())),
            LiveAnswer::Healthy(kept) => Answer::new(Report::Kept(kept)),
            LiveAnswer::Stalled(report) => Answer::made(report),
        }
    }

    /// The kept answer of `ready` or `active` while it holds; else what a
    /// new one would be kept with, `None` when it would not be (a probe
    /// that keeps nothing, told by the table without visiting the probes;
    /// a lifecycle entry). Read before the probes run, so a change during
    /// the run only makes the next answer fresh too.
    fn kept_tier(&self, tier: Tag) -> Result<Answer, Option<(u64, TierTable)>> {
        if !self.inner.lifecycle.is_steady() {
            return Err(None);
        }
        let Some(table) = self.inner.table.tier_if_kept(tier) else {
            return Err(None);
        };
        let changes = crate::executor::versions(&table);
        if let Some(k) = &*lock(&self.inner.kept[tier as usize])
            && k.changes == changes
            && std::ptr::eq(k.table.as_ptr(), Arc::as_ptr(&table))
            && k.kept.until().is_some_and(|until| Instant::now() < until)
        {
            return Ok(Answer::new(Report::Kept(k.kept.clone())));
        }
        Err(Some((changes, table)))
    }

    /// `ready` or `active` run, kept with `key` when every entry is a kept
    /// result and it serves.
    async fn tier(&self, tier: Tag, key: Option<(u64, TierTable)>) -> Answer {
        let (report, until) = match self.inner.table.tier(tier) {
            Some(probes) => self.inner.executor.report_until(tier, &probes).await,
            None => (HealthReport::new(tier, Vec::new(), Duration::ZERO), None),
        };
        let report = self.inner.lifecycle.apply(report);
        match (key, until) {
            (Some((changes, table)), Some(until)) if report.status.is_serving() => {
                let kept = Arc::new(Kept::new(report, Some(until)));
                *lock(&self.inner.kept[tier as usize]) = Some(KeptTier {
                    table: Arc::downgrade(&table),
                    changes,
                    kept: kept.clone(),
                });
                Answer::new(Report::Kept(kept))
            }
            _ => Answer::made(report),
        }
    }

    /// [`Selection::Excluding`].
    async fn excluding(&self, tier: Tag, exclude: &[String]) -> Answer {
        let asked = |name: &str| exclude.iter().any(|e| e == name);
        let mut exclusion = Exclusion::default();
        let report = match tier {
            Tag::Live => {
                let live = self.live();
                let report = live.report();
                let (out, kept): (Vec<_>, Vec<_>) = report.entries.iter().cloned().partition(|e| {
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
        let mut answer = Answer::made(report);
        answer.exclusion = Some(Box::new(exclusion));
        answer
    }

    /// [`Selection::Probe`].
    async fn probe(&self, tier: Option<Tag>, name: &str) -> Answer {
        let found = match tier {
            Some(tier) => self
                .inner
                .table
                .tier(tier)
                .and_then(|t| t.iter().find(|p| &*p.name == name).cloned()),
            None => self.inner.table.find(name),
        };
        let Some(probe) = found else {
            let mut answer = Answer::made(HealthReport::new(
                tier.unwrap_or(Tag::Ready),
                Vec::new(),
                Duration::ZERO,
            ));
            answer.status = HealthStatus::Unhealthy;
            answer.unknown = true;
            return answer;
        };
        let started = Instant::now();
        Answer::made(match tier {
            Some(tier) => {
                let entry = self.inner.executor.entry(&probe).await;
                let report = HealthReport::new(tier, vec![entry], started.elapsed());
                self.inner.lifecycle.apply(report)
            }
            None => {
                let entry = self.inner.executor.entry_after_dependencies(&probe).await;
                HealthReport::new(Tag::Ready, vec![entry], started.elapsed())
            }
        })
    }

    /// [`Selection::Group`].
    async fn group(&self, probes: &[Arc<str>], tiers: &[Tag]) -> Answer {
        let selected: Vec<_> = self
            .inner
            .table
            .all()
            .into_iter()
            .filter(|p| probes.contains(&p.name) || tiers.iter().any(|t| p.tags.contains(*t)))
            .collect();
        let report = self.inner.executor.report(Tag::Ready, &selected).await;
        Answer::made(self.inner.lifecycle.apply(report))
    }

    /// Records an answer of `tier` as the tier's: its gauge and failure
    /// counter, its history (and the ready verdict gossiped to the other
    /// members' pages), and a change of verdict for the publishers.
    ///
    /// The one place an answer is recorded, and only the tier's **plain**
    /// answer is: what the orchestrator's probe asks for (`GET` on the
    /// tier's path without a query, gRPC's tier services). An answer
    /// shaped by a query (`?exclude=`, `?verbose`), a per-probe path or a
    /// group is that response alone, as kube-apiserver's `?exclude=` is:
    /// recorded, one anonymous `?exclude=` would rewrite what Prometheus,
    /// the history, the dashboard and the publishers see.
    fn record(&self, selection: Selection<'_>, answer: &Answer) {
        let Selection::Tier(tier) = selection else {
            return;
        };
        let status = answer.status;
        if self.inner.executor.history_enabled() {
            self.history_answered(tier, status);
        }
        // The `Unhealthy` entries are named only on a change to 503.
        let changed = self
            .inner
            .tiers
            .answered(tier, status, || observe::unhealthy_entries(answer));
        if let Some(from) = changed {
            self.publish_tier_change(tier, status, from);
        }
    }

    /// A tier's change of verdict, for the publishers: `from` is the
    /// verdict it left, as `Healthy` (200) or `Unhealthy` (503). Out of
    /// line so the answer's hot path stays small.
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

    /// Keeps a tier's answer for the history (while it is enabled), and
    /// gossips a change of the ready verdict: the other members' pages
    /// show it.
    fn history_answered(&self, tier: Tag, status: HealthStatus) {
        let changed = tier == Tag::Ready
            && self.inner.history.tiers.last(tier).map(|(s, _, _)| s) != Some(status);
        self.inner
            .history
            .tiers
            .answered(tier, status, status.http_code());
        if changed {
            self.inner.executor.publish_ready(status);
        }
    }

    /// The tiers that run the probe `name`, if it is registered.
    #[cfg(feature = "grpc")]
    pub(crate) fn probe_tags(&self, name: &str) -> Option<zb_health_spec::TagSet> {
        self.inner.table.find(name).map(|p| p.tags)
    }
}
