//! A process's life around its probes: the startup gate (BE-HLTH-004), the
//! liveness watchdog (BE-HLTH-002) and the shutdown drain (BE-HLTH-005).
//!
//! All three live on the [`HealthRegistry`], so every server that answers
//! from the registry sees the same state, and generated code reaches them
//! with plain values:
//!
//! * [`HealthRegistry::startup_gate`] declares startup work; until every
//!   declared [`StartupGate`] says [`ready`](StartupGate::ready), `ready`
//!   and `active` answer 503 with a first entry `startup` (`starting`).
//! * [`HealthRegistry::watchdog`] registers a loop's [`Heartbeat`]; a
//!   missed deadline turns `live` to 503 and names the loop.
//! * [`serve`](fn@serve) runs an actix `HttpServer` with SIGTERM and SIGINT wired to
//!   [`HealthRegistry::begin_drain`]: `ready` and `active` answer 503 with
//!   a first entry `shutdown` (`draining`) at once, the server keeps serving
//!   for the drain delay, then stops gracefully.
//!
//! The entry names [`STARTUP_ENTRY`] and [`SHUTDOWN_ENTRY`] are reserved:
//! do not give a probe either name.

mod serve;
mod watchdog;

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, Weak};
use std::time::Duration;

use crate::registry::{HealthRegistry, Inner};
use crate::report::{EntryOutcome, HealthEntry, HealthReport};
use crate::{HealthStatus, Tag};

pub use serve::{Drain, Serveable, serve, serve_with_management};
pub use watchdog::{Heartbeat, STALLED_PREFIX};
pub(crate) use watchdog::{LiveAnswer, Watchdogs};

/// The name of the entry the startup gate puts first in `ready` and
/// `active` until initialisation is complete; no probe may take it (R9).
pub use zb_health_spec::STARTUP_ENTRY;
/// The description of the startup entry while initialisation runs.
pub const STARTING_DESCRIPTION: &str = "starting";
/// The description of the startup entry after a failed initialisation. The
/// error itself goes to the log only (BE-HLTH-007).
pub const STARTUP_FAILED_DESCRIPTION: &str = "startup failed";
/// The name of the entry a drain puts first in `ready` and `active`; no
/// probe may take it (R9).
pub use zb_health_spec::SHUTDOWN_ENTRY;
/// The description of the shutdown entry.
pub const DRAINING_DESCRIPTION: &str = "draining";

type DrainHook = Box<dyn FnOnce() + Send>;

/// A registry's lifecycle state. Read with atomic loads on every request,
/// so the common case (started, not draining) costs two loads.
pub(crate) struct Lifecycle {
    /// Declared startup gates not yet signalled.
    pending: AtomicUsize,
    /// Set by any gate that failed (or was dropped unsignalled); sticky.
    failed: AtomicBool,
    draining: AtomicBool,
    /// Taken (and run) by the first `begin_drain`.
    on_drain: Mutex<Option<Vec<DrainHook>>>,
    pub(crate) watchdogs: Watchdogs,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Self {
            pending: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            draining: AtomicBool::new(false),
            on_drain: Mutex::new(Some(Vec::new())),
            watchdogs: Watchdogs::default(),
        }
    }
}

impl Lifecycle {
    /// The fixed entries that precede the probes' in `ready` and `active`:
    /// `startup` while starting or after a failed start, `shutdown` while
    /// draining. Empty in the steady state.
    fn entries(&self) -> Vec<HealthEntry> {
        let mut entries = Vec::new();
        let failed = self.failed.load(Ordering::Acquire);
        if failed || self.pending.load(Ordering::Acquire) > 0 {
            entries.push(fixed_entry(
                STARTUP_ENTRY,
                if failed {
                    STARTUP_FAILED_DESCRIPTION
                } else {
                    STARTING_DESCRIPTION
                },
            ));
        }
        if self.draining.load(Ordering::Acquire) {
            entries.push(fixed_entry(SHUTDOWN_ENTRY, DRAINING_DESCRIPTION));
        }
        entries
    }

    /// `report` (of `ready` or `active`) with the lifecycle entries first;
    /// unchanged, without allocating, in the steady state.
    pub(crate) fn apply(&self, report: HealthReport) -> HealthReport {
        let mut entries = self.entries();
        if entries.is_empty() {
            return report;
        }
        entries.extend(report.entries);
        HealthReport::new(report.tier, entries, report.total_duration)
    }
}

fn fixed_entry(name: &'static str, description: &'static str) -> HealthEntry {
    HealthEntry {
        name: name.into(),
        status: HealthStatus::Unhealthy,
        description: Some(Cow::Borrowed(description)),
        duration: Duration::ZERO,
        data: None,
        outcome: EntryOutcome::Completed,
    }
}

impl HealthRegistry {
    /// Declares one piece of startup work (BE-HLTH-004). Until every
    /// declared gate is [`ready`](StartupGate::ready), `ready` and `active`
    /// answer 503 with a first entry [`STARTUP_ENTRY`] described
    /// [`STARTING_DESCRIPTION`]; `live` is unaffected. A cluster probe's
    /// startup `Degraded` (a 200) therefore cannot make a booting service
    /// look ready.
    ///
    /// Declare the gate before the server starts, and signal it when the
    /// work is done:
    ///
    /// ```
    /// # use zb_health::HealthRegistry;
    /// let registry = HealthRegistry::new();
    /// let warm_up = registry.startup_gate();
    /// // … load caches, run migrations …
    /// warm_up.ready();
    /// ```
    pub fn startup_gate(&self) -> StartupGate {
        self.inner.lifecycle.pending.fetch_add(1, Ordering::AcqRel);
        StartupGate {
            registry: std::sync::Arc::downgrade(&self.inner),
            signalled: false,
        }
    }

    /// Whether every declared startup gate is ready (and none failed).
    /// `true` when no gate was declared.
    pub fn is_started(&self) -> bool {
        let lifecycle = &self.inner.lifecycle;
        !lifecycle.failed.load(Ordering::Acquire) && lifecycle.pending.load(Ordering::Acquire) == 0
    }

    /// Starts the drain (BE-HLTH-005): from now on `ready` and `active`
    /// answer 503 with a first entry [`SHUTDOWN_ENTRY`] described
    /// [`DRAINING_DESCRIPTION`], and the [`on_drain`](Self::on_drain) hooks
    /// run, once, in registration order. `live` is unaffected. There is no
    /// way back: a drain ends with the process.
    ///
    /// [`serve`](fn@serve) calls this on SIGTERM or SIGINT; call it yourself when
    /// something else decides the process is going away. Returns `true` the
    /// first time.
    pub fn begin_drain(&self) -> bool {
        let lifecycle = &self.inner.lifecycle;
        if lifecycle.draining.swap(true, Ordering::AcqRel) {
            return false;
        }
        let hooks = lock(&lifecycle.on_drain).take().unwrap_or_default();
        for hook in hooks {
            // A hook that panics must not stop the others (the node must
            // still give up its active role) nor the drain itself.
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(hook)).is_err() {
                tracing::error!("a zb-health on_drain hook panicked");
            }
        }
        true
    }

    /// Whether the drain has begun.
    pub fn is_draining(&self) -> bool {
        self.inner.lifecycle.draining.load(Ordering::Acquire)
    }

    /// Runs `hook` when the drain begins, e.g. to make this node give up
    /// the active role so the cluster elects another (a cluster view
    /// leaving the cluster). Runs at once, on this thread, if the drain has
    /// already begun. Keep it short: it runs on the drain's path.
    pub fn on_drain(&self, hook: impl FnOnce() + Send + 'static) {
        let mut hooks = lock(&self.inner.lifecycle.on_drain);
        match hooks.as_mut() {
            Some(hooks) => hooks.push(Box::new(hook)),
            None => {
                drop(hooks);
                hook();
            }
        }
    }

    /// What the `live` tier answers, from the watchdogs alone.
    pub(crate) fn live_answer(&self) -> LiveAnswer {
        let answer = self.inner.lifecycle.watchdogs.live();
        let status = match &answer {
            LiveAnswer::Fixed | LiveAnswer::Healthy(..) => HealthStatus::Healthy,
            LiveAnswer::Stalled(report) => report.status,
        };
        crate::observe::tier_answered(Tag::Live, status);
        answer
    }

    /// A tier's whole answer, as every server should serve it: for `ready`
    /// and `active`, [`check`](Self::check) with the startup and shutdown
    /// entries first while they apply; for `live`, one entry per watchdog,
    /// `Unhealthy` for a stalled loop (an empty, `Healthy` report without
    /// watchdogs). Map its status with [`tier_status_code`](crate::tier_status_code),
    /// except that a stalled `live` is a 503.
    pub async fn answer(&self, tier: Tag) -> HealthReport {
        match tier {
            Tag::Live => match self.live_answer() {
                LiveAnswer::Fixed => HealthReport::new(Tag::Live, Vec::new(), Duration::ZERO),
                LiveAnswer::Healthy(_, healthy) => healthy.report(),
                LiveAnswer::Stalled(report) => report,
            },
            Tag::Ready | Tag::Active => {
                let report = self.inner.lifecycle.apply(self.check(tier).await);
                crate::observe::tier_answered(tier, report.status);
                report
            }
        }
    }
}

/// Makes a drain take this node out of the chitchat cluster cleanly: on
/// [`HealthRegistry::begin_drain`] the node gossips `Leaving` (keeping
/// `roles`), so its peers stop counting it as an `Up` candidate and the
/// next-oldest node takes the active role within a few gossip rounds,
/// without waiting for failure detection (AT-6).
///
/// Publishing needs chitchat's async lock, so the hook spawns it on the
/// current tokio runtime (the drain runs on one under [`serve`](fn@serve)); with no
/// runtime it logs and does nothing.
#[cfg(feature = "chitchat")]
pub fn leave_cluster_on_drain(
    registry: &HealthRegistry,
    view: std::sync::Arc<crate::cluster::chitchat::ChitchatClusterView>,
    roles: Vec<String>,
) {
    registry.on_drain(move || match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(async move {
                view.publish(crate::cluster::MemberStatus::Leaving, roles)
                    .await;
            });
        }
        Err(_) => tracing::warn!("drain outside a tokio runtime: cannot announce Leaving"),
    });
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The guarded values are replaced whole, never left half-written.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One declared piece of startup work, from
/// [`HealthRegistry::startup_gate`]. Signal it once:
/// [`ready`](Self::ready) or [`failed`](Self::failed).
///
/// Dropping it unsignalled (say, the init task panicked) counts as a failed
/// start, so a crashed initialisation never looks ready.
#[must_use = "the service stays not-ready until the gate is signalled"]
#[derive(Debug)]
pub struct StartupGate {
    registry: Weak<Inner>,
    signalled: bool,
}

impl StartupGate {
    /// This piece of initialisation is complete. When it is the last one,
    /// `ready` and `active` answer from their probes again.
    pub fn ready(mut self) {
        self.signalled = true;
        if let Some(inner) = self.registry.upgrade() {
            inner.lifecycle.pending.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Initialisation failed: `ready` and `active` stay 503 with the fixed
    /// description [`STARTUP_FAILED_DESCRIPTION`] for the rest of the
    /// process. `error` goes to the log only (BE-HLTH-007).
    pub fn failed(mut self, error: impl std::fmt::Display) {
        self.signalled = true;
        tracing::error!(error = %error, "startup failed; ready and active answer 503");
        self.fail();
    }

    fn fail(&self) {
        if let Some(inner) = self.registry.upgrade() {
            inner.lifecycle.failed.store(true, Ordering::Release);
            inner.lifecycle.pending.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Drop for StartupGate {
    fn drop(&mut self) {
        if !self.signalled {
            tracing::error!(
                "a startup gate was dropped without `ready()` or `failed()`; treating it as a failed start"
            );
            self.fail();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{ProbeResult, from_fn};
    use crate::{ProbeRegistration, TagSet};

    fn names(report: &HealthReport) -> Vec<(&str, HealthStatus, Option<&str>)> {
        report
            .entries
            .iter()
            .map(|e| (&*e.name, e.status, e.description.as_deref()))
            .collect()
    }

    fn degraded_registry() -> HealthRegistry {
        let registry = HealthRegistry::new();
        registry
            .add(
                ProbeRegistration::new(
                    "cluster",
                    from_fn(|| async { Ok(ProbeResult::degraded("cluster not yet available")) }),
                )
                .tags(TagSet::READY),
            )
            .unwrap();
        registry
    }

    #[tokio::test]
    async fn a_pending_gate_puts_a_starting_entry_first_over_a_degraded_probe() {
        let registry = degraded_registry();
        let gate = registry.startup_gate();
        assert!(!registry.is_started());
        let report = registry.answer(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Unhealthy);
        assert_eq!(
            names(&report),
            [
                (STARTUP_ENTRY, HealthStatus::Unhealthy, Some("starting")),
                (
                    "cluster",
                    HealthStatus::Degraded,
                    Some("cluster not yet available")
                ),
            ]
        );
        gate.ready();
        assert!(registry.is_started());
        let report = registry.answer(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Degraded);
        assert_eq!(names(&report).len(), 1, "no startup entry once started");
    }

    #[tokio::test(start_paused = true)]
    async fn answer_live_is_the_watchdogs_and_ignores_the_gate_and_the_drain() {
        let registry = degraded_registry();
        let _gate = registry.startup_gate();
        registry.begin_drain();
        let empty = registry.answer(Tag::Live).await;
        assert_eq!(
            (empty.status, empty.entries.len()),
            (HealthStatus::Healthy, 0)
        );
        let consumer = registry
            .watchdog("consumer", Duration::from_millis(10))
            .unwrap();
        tokio::time::advance(Duration::from_millis(11)).await;
        let stalled = registry.answer(Tag::Live).await;
        assert_eq!(
            names(&stalled),
            [(
                "consumer",
                HealthStatus::Unhealthy,
                Some("no heartbeat within 10 ms")
            )]
        );
        consumer.beat();
        let healthy = registry.answer(Tag::Live).await;
        assert_eq!(names(&healthy), [("consumer", HealthStatus::Healthy, None)]);
        let ready = registry.answer(Tag::Ready).await;
        assert_eq!(
            names(&ready).iter().map(|e| e.0).collect::<Vec<_>>(),
            [STARTUP_ENTRY, SHUTDOWN_ENTRY, "cluster"]
        );
    }

    #[test]
    fn every_declared_gate_must_be_ready() {
        let registry = HealthRegistry::new();
        let a = registry.startup_gate();
        let b = registry.startup_gate();
        a.ready();
        assert!(!registry.is_started());
        b.ready();
        assert!(registry.is_started());
    }

    #[test]
    fn a_failed_or_dropped_gate_is_a_sticky_failed_start() {
        for how in ["failed", "dropped"] {
            let registry = HealthRegistry::new();
            let gate = registry.startup_gate();
            let other = registry.startup_gate();
            match how {
                "failed" => gate.failed("postgres://user:secret@db refused"),
                _ => drop(gate),
            }
            other.ready();
            assert!(!registry.is_started(), "{how}");
            let entries = registry.inner.lifecycle.entries();
            assert_eq!(entries.len(), 1);
            assert_eq!(
                entries[0].description.as_deref(),
                Some(STARTUP_FAILED_DESCRIPTION),
                "{how}: fixed text, never the error"
            );
        }
    }

    #[test]
    fn a_drain_adds_a_shutdown_entry_after_startup_and_runs_hooks_once() {
        let registry = HealthRegistry::new();
        let ran = std::sync::Arc::new(AtomicUsize::new(0));
        let counter = ran.clone();
        registry.on_drain(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        let _gate = registry.startup_gate();
        assert!(registry.begin_drain());
        assert!(!registry.begin_drain(), "second call is a no-op");
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        let late = ran.clone();
        registry.on_drain(move || {
            late.fetch_add(10, Ordering::SeqCst);
        });
        assert_eq!(ran.load(Ordering::SeqCst), 11, "a late hook runs at once");
        let entries = registry.inner.lifecycle.entries();
        let order: Vec<&str> = entries.iter().map(|e| &*e.name).collect();
        assert_eq!(order, [STARTUP_ENTRY, SHUTDOWN_ENTRY]);
        assert!(registry.is_draining());
    }

    #[test]
    fn a_panicking_hook_does_not_stop_the_others() {
        let registry = HealthRegistry::new();
        let ran = std::sync::Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        registry.on_drain(|| panic!("hook bug"));
        registry.on_drain(move || flag.store(true, Ordering::SeqCst));
        assert!(registry.begin_drain());
        assert!(ran.load(Ordering::SeqCst));
    }
}
