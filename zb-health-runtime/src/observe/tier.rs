//! The tiers' side of the observability: each tier's gauge, and its last
//! HTTP verdict with the one log line per change of it.

use std::sync::atomic::{AtomicU8, Ordering};

use metrics::{Key, Label, counter, with_recorder};

use super::{METADATA, TIER_FAILURES, TIER_STATUS, TIER_TARGET, status_value};
use crate::report::HealthReport;
use zb_health_spec::{HealthStatus, Tag};

/// Sets the tier gauge: called with every answer a server is given.
fn tier_gauge(tier: Tag, status: HealthStatus) {
    // Built and hashed at compile time: an answer costs the recorder's
    // lookup and one store, and builds no key.
    static READY_LABEL: [Label; 1] = [Label::from_static_parts("tier", "ready")];
    static ACTIVE_LABEL: [Label; 1] = [Label::from_static_parts("tier", "active")];
    static LIVE_LABEL: [Label; 1] = [Label::from_static_parts("tier", "live")];
    static READY: Key = Key::from_static_parts(TIER_STATUS, &READY_LABEL);
    static ACTIVE: Key = Key::from_static_parts(TIER_STATUS, &ACTIVE_LABEL);
    static LIVE: Key = Key::from_static_parts(TIER_STATUS, &LIVE_LABEL);
    let key = match tier {
        Tag::Ready => &READY,
        Tag::Active => &ACTIVE,
        Tag::Live => &LIVE,
    };
    with_recorder(|recorder| {
        recorder
            .register_gauge(key, &METADATA)
            .set(status_value(status));
    });
    #[cfg(feature = "otel")]
    super::otel::tier_answered(tier, status);
}

/// A tier's verdict as [`TierLog`] keeps it; `UNANSWERED` is 0, so a
/// default (zeroed) slot has not answered yet.
const UNANSWERED: u8 = 0;
const SERVING: u8 = 1;
const FAILING: u8 = 2;

/// The last HTTP verdict of each tier of one registry: what
/// [`TIER_FAILURES`] and the tier transition lines are counted from.
#[derive(Default)]
pub(crate) struct TierLog {
    /// Indexed by `Tag as usize`: [`UNANSWERED`], [`SERVING`] or
    /// [`FAILING`].
    verdicts: [AtomicU8; 3],
}

impl TierLog {
    /// Records one answer of `tier`: its gauge, and, when the verdict
    /// changed, the counter and the log line. `failing` names the
    /// `Unhealthy` entries; it is called only on a change to 503.
    ///
    /// Returns the verdict it changed from, when it changed: `None` for a
    /// first answer, `Some(true)` from serving, `Some(false)` from failing;
    /// a first answer that serves is no change.
    pub(crate) fn answered(
        &self,
        tier: Tag,
        status: HealthStatus,
        failing: impl FnOnce() -> String,
    ) -> Option<Option<bool>> {
        tier_gauge(tier, status);
        let verdict = if status.is_serving() {
            SERVING
        } else {
            FAILING
        };
        let slot = &self.verdicts[tier as usize];
        // The steady state is one load; only a change writes, and of two
        // concurrent answers with the same change only one sees it.
        if slot.load(Ordering::Relaxed) == verdict {
            return None;
        }
        let previous = slot.swap(verdict, Ordering::AcqRel);
        if previous == verdict {
            return None;
        }
        let to_failure = verdict == FAILING;
        let counter = match tier {
            Tag::Ready => counter!(TIER_FAILURES, "tier" => "ready"),
            Tag::Active => counter!(TIER_FAILURES, "tier" => "active"),
            Tag::Live => counter!(TIER_FAILURES, "tier" => "live"),
        };
        // The first answer registers the counter at 0, so a dashboard's
        // `increase()` sees the first failure.
        counter.increment(u64::from(to_failure));
        if to_failure {
            tracing::warn!(
                target: TIER_TARGET,
                tier = %tier,
                status = %status.as_str(),
                unhealthy = %failing(),
                previous = %if previous == UNANSWERED { "none" } else { "serving" },
                "health tier failing"
            );
        } else if previous == FAILING {
            tracing::info!(target: TIER_TARGET, tier = %tier, "health tier recovered");
        }
        match previous {
            UNANSWERED if !to_failure => None,
            UNANSWERED => Some(None),
            previous => Some(Some(previous == SERVING)),
        }
    }
}

/// The names of `report`'s `Unhealthy` entries, comma-separated, for the
/// tier's failing line.
pub(crate) fn unhealthy_entries(report: &HealthReport) -> String {
    let mut names = String::new();
    for e in report
        .entries
        .iter()
        .filter(|e| e.status == HealthStatus::Unhealthy)
    {
        if !names.is_empty() {
            names.push(',');
        }
        names.push_str(&e.name);
    }
    names
}
