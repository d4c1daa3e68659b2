//! Transition publishers (.NET's `IHealthCheckPublisher`, done for
//! transitions): each tier and probe transition, after hysteresis, goes to
//! every [`TransitionPublisher`] through a bounded queue, off the probe
//! path, so a slow or failing publisher never delays a probe or an answer;
//! what does not fit is dropped and counted.
//!
//! Noise control by default:
//! * nothing is published while the service starts (before its startup
//!   gates open) or drains: a rolling update is not an incident;
//! * transitions are grouped over a window ([`DEFAULT_WINDOW`]): the same
//!   tier or probe changing several times inside it is one message, from
//!   its first state to its last, with a `count` (the webhook floods
//!   HealthChecks.UI's users report on flaps and redeploys); at the end of
//!   the drain, what was gathered before it is published at once, so the
//!   last transitions are not lost with the process.
//!
//! [`WebhookPublisher`] POSTs them as JSON, with retries and a timeout;
//! with the `otel` feature, `observe::otel` sends them as OpenTelemetry log
//! events.

mod queue;
mod webhook;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use zb_health_spec::{HealthStatus, Tag};

pub(crate) use queue::TransitionQueue;
pub use webhook::{WEBHOOK_URL_VAR, WebhookPublisher};

/// How long transitions are gathered before they are published.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(10);
/// How many transitions wait at most; more are dropped and counted.
pub const DEFAULT_CAPACITY: usize = 256;
/// Counter: transitions dropped because the queue was full.
pub const DROPPED_TRANSITIONS: &str = "zb_health_transitions_dropped_total";

/// What changed: a tier's HTTP verdict, or a probe's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransitionKind {
    /// A tier (`ready`, `active`, `live`) went from 200 to 503 or back.
    Tier,
    /// A probe's status changed (after its hysteresis).
    Probe,
}

impl TransitionKind {
    /// `tier` or `probe`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TransitionKind::Tier => "tier",
            TransitionKind::Probe => "probe",
        }
    }
}

/// One transition, or a group of them inside one window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// A tier or a probe.
    pub kind: TransitionKind,
    /// The tier's name (`ready`) or the probe's.
    pub name: Arc<str>,
    /// The status before the first change of the group; `None` when it
    /// had none yet.
    pub from: Option<HealthStatus>,
    /// The status after the last change.
    pub to: HealthStatus,
    /// When the last change happened.
    pub at: SystemTime,
    /// Why, as a fixed category: `failing`, `recovered` or `changed` for a
    /// tier; for a probe `recovered`, `degraded` or `unhealthy` (its own
    /// verdict), or its run's outcome (`timedOut`, `errored`, `panicked`,
    /// …). Never an error's text.
    pub reason: &'static str,
    /// How many changes the group holds (1 for a lone transition).
    pub count: u32,
}

impl Transition {
    pub(crate) fn tier(tier: Tag, from: Option<HealthStatus>, to: HealthStatus) -> Self {
        let reason = match (from.is_none_or(HealthStatus::is_serving), to.is_serving()) {
            (true, false) => "failing",
            (false, true) => "recovered",
            _ => "changed",
        };
        Self {
            kind: TransitionKind::Tier,
            name: Arc::from(tier.as_str()),
            from,
            to,
            at: SystemTime::now(),
            reason,
            count: 1,
        }
    }

    pub(crate) fn probe(
        name: &Arc<str>,
        from: Option<HealthStatus>,
        to: HealthStatus,
        outcome: &'static str,
    ) -> Self {
        let reason = match (to, outcome) {
            (HealthStatus::Healthy, _) => "recovered",
            (HealthStatus::Degraded, "completed") => "degraded",
            (HealthStatus::Unhealthy, "completed") => "unhealthy",
            (_, outcome) => outcome,
        };
        Self {
            kind: TransitionKind::Probe,
            name: name.clone(),
            from,
            to,
            at: SystemTime::now(),
            reason,
            count: 1,
        }
    }
}

/// Receives the transitions, a window's worth at a time, on the library's
/// probe thread. Called one batch at a time; while it runs, new
/// transitions wait in the queue (and past its capacity are dropped), so
/// it may take its time, and should bound it.
pub trait TransitionPublisher: Send + Sync + 'static {
    /// Publishes one batch (never empty). An `Err` is logged, with its
    /// text, and the batch is not retried by the caller.
    fn publish<'a>(&'a self, batch: &'a [Transition]) -> BoxFuture<'a, Result<(), String>>;
}
