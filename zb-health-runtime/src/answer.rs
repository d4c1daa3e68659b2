//! Finished answers and the one cache of their bodies.
//!
//! An answer the registry may hand out again unchanged is a [`Kept`]: a
//! tier made of kept results alone (cached, background) while none of them
//! changed or expired, `live` for one set of watchdogs all in time, `live`
//! without watchdogs. A new validity makes a new `Kept`, so the bodies
//! rendered from it (one per endpoint, its public body only) go with the
//! answer they were made from, and a cached tier costs what a static
//! answer costs (BE-HLTH-006).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Instant;
use zb_health_spec::Tag;

use crate::report::HealthReport;

/// How many endpoints keep a body of one answer (an application port and a
/// management port need two); an endpoint past them renders each time.
const BODIES: usize = 4;

/// A key for one endpoint's bodies in every [`Kept`]: unique in the
/// process, so no endpoint is served another's body.
pub(crate) fn body_key() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// An answer that holds until its validity ends, with the bodies rendered
/// from it.
#[derive(Debug)]
pub(crate) struct Kept {
    report: HealthReport,
    /// When its first kept result expires; `None` for `live`, which holds
    /// until the set of watchdogs changes.
    until: Option<Instant>,
    bodies: [OnceLock<(u64, Bytes)>; BODIES],
}

impl Kept {
    pub(crate) fn new(report: HealthReport, until: Option<Instant>) -> Self {
        Self {
            report,
            until,
            bodies: Default::default(),
        }
    }

    /// `live`'s answer without watchdogs: the same in every registry, and
    /// it never changes.
    pub(crate) fn fixed_live() -> &'static Kept {
        static FIXED: LazyLock<Kept> = LazyLock::new(|| {
            Kept::new(
                HealthReport::new(Tag::Live, Vec::new(), Duration::ZERO),
                None,
            )
        });
        &FIXED
    }

    pub(crate) fn report(&self) -> &HealthReport {
        &self.report
    }

    pub(crate) fn until(&self) -> Option<Instant> {
        self.until
    }

    /// The body of endpoint `key`: the one it rendered of this answer, or
    /// `render`'s, kept while a place is free.
    pub(crate) fn body(&self, key: u64, render: impl FnOnce(&HealthReport) -> Bytes) -> Bytes {
        for slot in &self.bodies {
            match slot.get() {
                Some((k, body)) if *k == key => return body.clone(),
                Some(_) => {}
                None => {
                    let body = render(&self.report);
                    // Taken meanwhile by another endpoint: this body is
                    // served anyway, and rendered again next time.
                    let _ = slot.set((key, body.clone()));
                    return body;
                }
            }
        }
        render(&self.report)
    }
}
