//! What every run shares: the [`Executor`] handle and its settings (the
//! in-flight bound, the log interval, where executions run, the shared
//! verdicts, the history switch, the detection time).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use std::sync::atomic::AtomicU64;

use super::limiter::Limiter;
use super::thread::Runs;
use crate::publish::TransitionQueue;
use crate::shared::SharedVerdicts;

/// Whether the service is still starting (its startup gates pending):
/// runs before the gates open are not transitions to log.
pub(crate) type Starting = Box<dyn Fn() -> bool + Send + Sync>;

/// What every run shares: the in-flight bound, the log interval, where
/// executions run and whether the service is still starting.
pub(super) struct RunContext {
    pub(super) limiter: Limiter,
    /// In nanoseconds; an atomic so a manifest's `install` can set it on
    /// the process registry after it is built.
    pub(super) failure_log_interval: AtomicU64,
    pub(super) runs: Runs,
    pub(super) starting: Starting,
    /// Where shared probes compare their verdicts (BE-HLTH-003), with how
    /// many times it was set; read only by a shared probe's run.
    pub(super) verdicts: std::sync::RwLock<Option<(u64, Arc<dyn SharedVerdicts>)>>,
    /// Whether each reported entry goes into its probe's history.
    pub(super) history: AtomicBool,
    /// The registry's detection time in nanoseconds (0: none known), which
    /// a request-driven probe's threshold counts periods of.
    pub(super) detection: AtomicU64,
    /// Where the probes' transitions go to the publishers.
    pub(super) transitions: Arc<TransitionQueue>,
}

impl RunContext {
    /// The period a probe's threshold counts (R20's
    /// [`run_period`](zb_health_spec::detection::run_period)): `refresh`,
    /// else the readiness period behind the detection time; zero (every
    /// run counts) for a request-driven probe while none is known.
    #[inline]
    pub(super) fn run_period(&self, refresh: Option<Duration>) -> Duration {
        let detection = Duration::from_nanos(self.detection.load(Ordering::Relaxed));
        zb_health_spec::detection::run_period(refresh, detection)
    }
}

/// Runs probes. Cheap to clone; clones share the bound.
#[derive(Clone)]
pub(crate) struct Executor {
    pub(super) shared: Arc<RunContext>,
}

#[inline]
pub(super) fn nanos(d: Duration) -> u64 {
    d.as_nanos().try_into().unwrap_or(u64::MAX)
}
