//! The registry itself: one value shared by every server (AT-1), and what
//! it holds (the probe table, the executor, the lifecycle, each tier's last
//! verdict, the registry's part of the history).

use std::sync::{Arc, Weak};

use crate::answer::Kept;
use crate::executor::{Executor, ProbeRuntime};
use crate::history::{ClusterSource, TierAnswers};
use crate::lifecycle::Lifecycle;
use crate::observe::TierLog;
use crate::publish::TransitionQueue;
use crate::table::ProbeTable;

pub(super) struct Inner {
    pub(super) table: Arc<ProbeTable>,
    pub(super) executor: Executor,
    pub(super) lifecycle: Lifecycle,
    /// Each tier's last verdict, for its transition metric and log.
    pub(super) tiers: TierLog,
    /// Where tier and probe transitions go to the publishers.
    pub(super) transitions: Arc<TransitionQueue>,
    /// What the history shows besides the probes' and the lifecycle's own
    /// records.
    pub(super) history: RegistryHistory,
    /// The kept answers of `ready` and `active`, handed out again while
    /// they hold.
    pub(super) kept: [std::sync::Mutex<Option<KeptTier>>; 2],
    /// Whether the restart escalation's steps run (`restart_after`).
    pub(super) restart_steps: std::sync::atomic::AtomicBool,
}

/// The registry's part of the history: each tier's last answer, when the
/// registry was made, the service's name and the cluster, if set.
pub(super) struct RegistryHistory {
    pub(super) tiers: TierAnswers,
    pub(super) started_ms: u64,
    pub(super) service: std::sync::RwLock<Option<Arc<str>>>,
    pub(super) cluster: std::sync::RwLock<Option<Arc<dyn ClusterSource>>>,
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
    pub(super) inner: Arc<Inner>,
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

impl HealthRegistry {
    /// The registry's lifecycle: startup gates, watchdogs, the drain and
    /// maintenance mode (BE-HLTH-002, BE-HLTH-004, BE-HLTH-005), which
    /// every server answering from this registry sees.
    ///
    /// ```
    /// # use zb_health::prelude::HealthRegistry;
    /// let registry = HealthRegistry::new();
    /// let warm_up = registry.lifecycle().startup_gate();
    /// warm_up.ready();
    /// assert!(registry.lifecycle().is_started());
    /// ```
    pub fn lifecycle(&self) -> &Lifecycle {
        &self.inner.lifecycle
    }
}

/// The kept answer of a tier (`ready`, `active`) and what it was made
/// from: the tier's probe table then (weak, so a replaced table's probes
/// and their background schedules are dropped, while its address cannot
/// be reused by a new table) and its probes' kept-result versions. Made
/// only for an answer made of kept results alone and serving, in the
/// steady state.
pub(super) struct KeptTier {
    pub(super) table: Weak<[Arc<ProbeRuntime>]>,
    pub(super) changes: u64,
    pub(super) kept: Arc<Kept>,
}
