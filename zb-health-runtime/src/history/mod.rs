//! History in the process, bounded (`spec/history.md`): what
//! `/health/history` and `/health/ui` show.
//!
//! * Per probe, a `ProbeHistory`: a ring of the last [`SAMPLES`]
//!   results (time, status, duration, outcome kind), a ring of the last
//!   [`TRANSITIONS`] status changes (time, from, to, outcome, the entry's
//!   fixed description, cut to [`DESCRIPTION_BYTES`]) and the flap count:
//!   status changes within [`FLAP_WINDOW`], kept in 60 one-minute buckets.
//!   Its memory is fixed (4,808 bytes, `spec/history.md`), allocated once, at the
//!   probe's first result after history was enabled; nothing grows later.
//! * Per tier, its last answer (status, HTTP code, time): one atomic store.
//! * The lifecycle's last [`EVENTS`] events (`Events`): gates, watchdog
//!   stalls and recoveries, the drain.
//!
//! The executor records each reported entry (after the hysteresis and the
//! shared-probe comparison) only while history is enabled on the registry
//! ([`HealthRegistry::enable_history`](crate::registry::HealthRegistry::enable_history));
//! otherwise a result costs one relaxed load. Reading the history copies
//! what was recorded and never runs a probe. The document is rendered by
//! [`HealthRegistry::history_json`](crate::registry::HealthRegistry::history_json),
//! at a disclosure level; raw error text is never recorded, so it cannot
//! be shown.

mod probe;
mod render;

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use zb_health_spec::{HealthStatus, Tag};

use crate::sync::lock;

#[cfg(any(test, feature = "test-util"))]
pub use probe::PROBE_HISTORY_BYTES;
pub(crate) use probe::{ProbeHistory, ProbeView};
#[cfg(feature = "cluster")]
pub(crate) use render::MemberDoc;
pub(crate) use render::{
    ClusterDoc, Document, GateView, LifecycleView, MaintenanceView, WatchdogView, render,
};

/// How many results each probe's history keeps, newest last.
pub const SAMPLES: usize = 60;
/// How many status transitions each probe's history keeps.
pub const TRANSITIONS: usize = 20;
/// How many lifecycle events the registry keeps.
pub const EVENTS: usize = 20;
/// The window `flaps` counts status transitions over: one hour, in
/// one-minute buckets (so a transition leaves the count 59 to 60 minutes
/// after it happened).
pub const FLAP_WINDOW: Duration = Duration::from_secs(3600);
/// The longest description kept per transition and per last result, in
/// bytes of UTF-8; a longer one is cut at a character boundary. Fixed so
/// the memory per probe is.
pub const DESCRIPTION_BYTES: usize = 96;

/// Where the history reads the cluster from: the node's cluster view
/// (`HealthRegistry::set_cluster_view`, with the `cluster` feature).
pub(crate) trait ClusterSource: Send + Sync {
    /// The cluster now, addresses included; `None` without one.
    fn cluster(&self) -> Option<ClusterDoc>;
}

/// The wall clock in Unix epoch milliseconds: what the document shows.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The status of a code in the history's compact stores (a status's
/// [`severity`](HealthStatus::severity)); a code past `Unhealthy` reads as
/// it.
pub(crate) fn stored_status(code: u8) -> HealthStatus {
    HealthStatus::from_severity(code).unwrap_or(HealthStatus::Unhealthy)
}

/// The last answer of each tier: `atMs << 16 | code`, with the status in
/// the code's top bits; 0 before the first answer. One relaxed store per
/// answer.
#[derive(Default)]
pub(crate) struct TierAnswers([AtomicU64; 3]);

impl TierAnswers {
    pub(crate) fn answered(&self, tier: Tag, status: HealthStatus, code: u16) {
        let packed = now_ms() << 16 | u64::from(status.severity()) << 10 | u64::from(code & 0x3ff);
        self.0[tier as usize].store(packed, Ordering::Relaxed);
    }

    /// The tier's last answer: status, code, time; `None` before one.
    pub(crate) fn last(&self, tier: Tag) -> Option<(HealthStatus, u16, u64)> {
        let packed = self.0[tier as usize].load(Ordering::Relaxed);
        (packed != 0).then(|| {
            let code = (packed & 0x3ff) as u16;
            let status = stored_status(((packed >> 10) & 0x3) as u8);
            (status, code, packed >> 16)
        })
    }
}

/// A lifecycle event's kind, as the document names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    GateReady,
    GateFailed,
    WatchdogStalled,
    WatchdogRecovered,
    DrainStarted,
    MaintenanceStarted,
    MaintenanceEnded,
    RestartRequested,
    RestartWithdrawn,
}

impl EventKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventKind::GateReady => "gate-ready",
            EventKind::GateFailed => "gate-failed",
            EventKind::WatchdogStalled => "watchdog-stalled",
            EventKind::WatchdogRecovered => "watchdog-recovered",
            EventKind::DrainStarted => "drain-started",
            EventKind::MaintenanceStarted => "maintenance-started",
            EventKind::MaintenanceEnded => "maintenance-ended",
            EventKind::RestartRequested => "restart-requested",
            EventKind::RestartWithdrawn => "restart-withdrawn",
        }
    }
}

/// One lifecycle event: when, what, and the gate's or watchdog's name
/// (`startup` for an unnamed gate, `shutdown` for the drain).
#[derive(Clone)]
pub(crate) struct Event {
    pub(crate) at_ms: u64,
    pub(crate) kind: EventKind,
    pub(crate) name: std::sync::Arc<str>,
}

/// The lifecycle's last [`EVENTS`] events, always recorded (they are rare:
/// a gate opens once, a watchdog stalls when a loop does). A fixed ring:
/// the oldest is overwritten.
#[derive(Default)]
pub(crate) struct Events {
    ring: Mutex<EventRing>,
}

#[derive(Default)]
struct EventRing {
    events: [Option<Event>; EVENTS],
    next: usize,
}

impl Events {
    pub(crate) fn push(&self, kind: EventKind, name: std::sync::Arc<str>) {
        let mut ring = lock(&self.ring);
        let at = ring.next % EVENTS;
        ring.events[at] = Some(Event {
            at_ms: now_ms(),
            kind,
            name,
        });
        ring.next = ring.next.wrapping_add(1);
    }

    /// Oldest first.
    pub(crate) fn snapshot(&self) -> Vec<Event> {
        let ring = lock(&self.ring);
        (0..EVENTS)
            .filter_map(|i| ring.events[(ring.next + i) % EVENTS].clone())
            .collect()
    }
}

#[cfg(test)]
mod tests;
