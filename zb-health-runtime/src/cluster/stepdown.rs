//! [`StepDown`]: a deliberate hand-over of the active role, for a bounded
//! time, through the view's gossip.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use zb_health_spec::operator::{FieldError, check_reason, check_ttl_value};

use super::view::ClusterView;
use crate::executor::spawn_on_probe_thread;
use crate::observe::STEPPED_DOWN;
use crate::sync::lock;

/// One step-down, as [`StepDown`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepDownWindow {
    /// Why, as the operator said it.
    pub reason: Arc<str>,
    /// When it began.
    pub since: SystemTime,
    /// When this node stands for the role again by itself.
    pub until: SystemTime,
}

/// A deliberate hand-over of the active role (the operator's `step-down`):
/// the node announces through its view ([`ClusterView::step_down`]) that it
/// gives the role up, and every node's [`ClusterActiveNode`](super::ClusterActiveNode)
/// then treats it as a silent active node: no one is active for the
/// hand-over margin, then the next node in line is. The same lease-safe
/// hand-over as a failure, so the active node can be patched without an
/// outage of the active tier longer than the margin and without two active
/// nodes at any instant.
///
/// For its TTL the node does not take the role back, unless it is the
/// only candidate left (then it stays active: better one active node than
/// none). At the TTL, or at [`end`](Self::end), it stands again, and being
/// the oldest it takes the role back after the margin (the node that held
/// it stands down first).
pub struct StepDown {
    view: Arc<dyn ClusterView>,
    window: Mutex<Option<StepDownWindow>>,
    /// Which window the TTL timer belongs to.
    generation: AtomicU64,
}

impl std::fmt::Debug for StepDown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepDown")
            .field("window", &self.current())
            .finish_non_exhaustive()
    }
}

impl StepDown {
    /// The step-down of the node behind `view`.
    pub fn new(view: Arc<dyn ClusterView>) -> Arc<Self> {
        Arc::new(Self {
            view,
            window: Mutex::new(None),
            generation: AtomicU64::new(0),
        })
    }

    /// Steps down for `ttl`, for `reason` (checked as maintenance's are);
    /// a second call replaces the window.
    ///
    /// # Errors
    ///
    /// A bad reason or TTL, or a view that cannot announce a step-down
    /// (`field` is `cluster`); nothing changes then.
    pub fn begin(
        self: &Arc<Self>,
        reason: &str,
        ttl: Duration,
    ) -> Result<StepDownWindow, FieldError> {
        let reason = check_reason(Some(reason))?;
        check_ttl_value(ttl)?;
        if !self.view.step_down(true) {
            return Err(FieldError {
                field: "cluster",
                message: "this node's cluster view cannot announce a step-down (no cluster yet, or a view without gossip)".into(),
            });
        }
        let since = SystemTime::now();
        let window = StepDownWindow {
            reason: Arc::from(reason),
            since,
            until: since + ttl,
        };
        *lock(&self.window) = Some(window.clone());
        metrics::gauge!(STEPPED_DOWN).set(1.0);
        let generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
        tracing::warn!(
            target: "zb_health::cluster",
            reason = &*window.reason,
            ttl_ms = ttl.as_millis() as u64,
            "stepped down from the active role: the next node in line takes it after the hand-over margin"
        );
        let this = Arc::downgrade(self);
        spawn_on_probe_thread(async move {
            tokio::time::sleep(ttl).await;
            if let Some(this) = this.upgrade()
                && this.generation.load(Ordering::Acquire) == generation
            {
                this.finish("its time ran out");
            }
        });
        Ok(window)
    }

    /// Stands for the role again now; the window that was open, if any.
    pub fn end(&self) -> Option<StepDownWindow> {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.finish("ended by an operator")
    }

    /// The open window, if any.
    pub fn current(&self) -> Option<StepDownWindow> {
        lock(&self.window).clone()
    }

    fn finish(&self, how: &str) -> Option<StepDownWindow> {
        let window = lock(&self.window).take()?;
        self.view.step_down(false);
        metrics::gauge!(STEPPED_DOWN).set(0.0);
        tracing::warn!(
            target: "zb_health::cluster",
            reason = &*window.reason,
            "step-down ended ({how}): this node stands for the active role again"
        );
        Some(window)
    }
}
