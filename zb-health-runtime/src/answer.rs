//! Precomputed answers: the one owner of the bodies a server serves again
//! without rendering them.
//!
//! * A tier (`ready`, `active`) made of kept results alone (cached,
//!   background) is rendered once and served again while the registry
//!   says the answer holds ([`HealthRegistry::tier_answer`]): a cached
//!   tier then costs what a static answer costs (BE-HLTH-006).
//! * `live` with every watchdog in time is the same body until the set of
//!   watchdogs changes: rendered at its first healthy answer and kept with
//!   that set by the lifecycle, which stores it without knowing how it was
//!   made.
//!
//! Only the built-in canonical writer's public body is kept: a custom
//! writer, or a body that depends on the request's token, is rendered for
//! each answer by the HTTP layer.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use zb_health_spec::{HealthStatus, Tag};

use crate::lifecycle::HealthyReport;
use crate::registry::{HealthRegistry, TierAnswer, Validity};
use crate::sync::lock;
use crate::writer::{BodyStyle, canonical_json};

/// The kept answer of one tier endpoint (so of one port and disclosure
/// level): its last body made of kept results alone, and the length of
/// the last body, to size the next one's buffer.
#[derive(Default)]
pub(crate) struct KeptTier {
    kept: Mutex<Option<Kept>>,
    last_len: AtomicUsize,
}

/// A kept body and what it holds for.
struct Kept {
    validity: Validity,
    status: HealthStatus,
    body: Bytes,
}

impl KeptTier {
    /// A fresh one that starts sizing its buffers from `other`'s last body.
    pub(crate) fn sized_like(other: &KeptTier) -> Self {
        Self {
            kept: Mutex::new(None),
            last_len: AtomicUsize::new(other.last_len.load(Ordering::Relaxed)),
        }
    }

    /// `tier`'s status and body in `style`: the kept body again while the
    /// registry says it holds, else a new one, kept when the registry
    /// gives it a validity.
    pub(crate) async fn answer(
        &self,
        registry: &HealthRegistry,
        tier: Tag,
        style: &BodyStyle,
    ) -> (HealthStatus, Bytes) {
        let fresh = {
            let kept = lock(&self.kept);
            match registry.tier_answer(tier, kept.as_ref(), |k| &k.validity) {
                TierAnswer::Again(k) => return (k.status, k.body.clone()),
                TierAnswer::Fresh(fresh) => fresh,
            }
        };
        let (report, validity) = fresh.await;
        let status = report.status;
        let body = Bytes::from(style.json_sized(&report, self.last_len.load(Ordering::Relaxed)));
        self.last_len.store(body.len(), Ordering::Relaxed);
        if let Some(validity) = validity {
            *lock(&self.kept) = Some(Kept {
                validity,
                status,
                body: body.clone(),
            });
        }
        (status, body)
    }
}

/// The canonical body of a healthy `live` answer, rendered once per set of
/// watchdogs.
pub(crate) fn healthy_live_body(healthy: &HealthyReport) -> Bytes {
    healthy.body(|report| canonical_json(report).into())
}
