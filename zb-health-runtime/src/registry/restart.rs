//! The restart escalation's driver (`restart_after`, R27): once shared
//! verdicts are set, a step about once a second on the probe thread finds
//! the probe that qualifies and hands it to the lifecycle, which claims
//! the cluster's restart budget and fails `live` (see `crate::shared`).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::inner::{HealthRegistry, Inner};
use crate::executor::spawn_on_probe_thread;
use crate::lifecycle::Candidate;
use crate::shared::SharedVerdicts;

/// How often the escalation steps: well inside any settle time, and a
/// restart's own `restart_after` is at least the detection time.
const STEP_PERIOD: Duration = Duration::from_millis(500);

impl HealthRegistry {
    /// Starts the escalation's steps, once per registry; they end with it.
    pub(super) fn start_restart_steps(&self) {
        if self.inner.restart_steps.swap(true, Ordering::Relaxed) {
            return;
        }
        let inner = Arc::downgrade(&self.inner);
        spawn_on_probe_thread(async move {
            loop {
                tokio::time::sleep(STEP_PERIOD).await;
                let Some(inner) = inner.upgrade() else {
                    return;
                };
                step(&inner);
            }
        });
    }

    /// Whether this node asks the orchestrator to restart it: a probe with
    /// [`restart_after`](crate::registry::ProbeRegistration::restart_after) failed
    /// here alone for that long, and `live` answers 503 with a `restart`
    /// entry.
    pub fn restart_requested(&self) -> bool {
        self.inner.lifecycle.restart_requested()
    }
}

/// One step: the first probe with `restart_after` that qualifies, if the
/// view can tell, and the lifecycle's move on it.
fn step(inner: &Inner) {
    let verdicts = inner.executor.shared_verdicts();
    let candidate = verdicts.as_deref().and_then(|v| candidate(inner, v));
    inner.lifecycle.step_restart(candidate, verdicts.as_deref());
}

/// The first probe, in registration order, that has failed here for its
/// `restart_after` while a majority of the peers that report it find it
/// healthy. The peers are the `Up`, reachable members that publish a
/// verdict of it, this node not counted: a member that does not run the
/// probe cannot say.
fn candidate(inner: &Inner, verdicts: &dyn SharedVerdicts) -> Option<Candidate> {
    inner.table.all().into_iter().find_map(|probe| {
        let (after, failing_for) = probe.restart_due()?;
        let failing_for = failing_for.filter(|f| *f >= after)?;
        let tally = verdicts.tally(&probe.name)?;
        // This node's own failing verdict is in the tally.
        let peers = tally.reporting.checked_sub(1)?;
        let healthy_peers = peers - tally.failing.saturating_sub(1).min(peers);
        (peers > 0 && u64::from(healthy_peers) * 2 > u64::from(peers)).then(|| Candidate {
            probe: probe.name.clone(),
            failing_for,
            healthy_peers,
            peers,
        })
    })
}
