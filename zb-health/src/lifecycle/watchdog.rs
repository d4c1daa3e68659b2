//! The liveness watchdog (BE-HLTH-002): heartbeats from the app's own
//! loops, checked by the `live` tier with atomic loads and no I/O.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use actix_web::web::Bytes;
use tokio::time::Instant;
use zb_health_spec::{
    NameOf, Tag, Violations, check_name_of, check_unique_names_of, check_watchdog_deadline,
};

use crate::HealthStatus;
use crate::registry::{HealthRegistry, Inner, RegistryError};
use crate::report::{EntryOutcome, HealthEntry, HealthReport};
use crate::writer::canonical_json;

/// How a stalled watchdog's description starts: `no heartbeat within
/// <deadline> ms`. Fixed per watchdog, so it is computed once.
pub const STALLED_PREFIX: &str = "no heartbeat within";

/// One registered loop.
struct Slot {
    name: Arc<str>,
    deadline_ms: u64,
    /// Milliseconds since the registry's epoch at the last beat.
    last: AtomicU64,
    stalled_description: String,
}

/// The watchdogs of a registry, swapped whole on (de)registration so a
/// request sees one consistent set.
struct Table {
    slots: Vec<Arc<Slot>>,
    /// The canonical live body while every loop beats in time.
    healthy_body: Bytes,
}

impl Table {
    fn new(slots: Vec<Arc<Slot>>) -> Self {
        let entries = slots
            .iter()
            .map(|s| entry(s, HealthStatus::Healthy))
            .collect();
        let healthy_body =
            canonical_json(&HealthReport::new(Tag::Live, entries, Duration::ZERO)).into();
        Self {
            slots,
            healthy_body,
        }
    }
}

fn entry(slot: &Slot, status: HealthStatus) -> HealthEntry {
    HealthEntry {
        name: slot.name.clone(),
        status,
        description: (status != HealthStatus::Healthy)
            .then(|| Cow::Owned(slot.stalled_description.clone())),
        duration: Duration::ZERO,
        data: None,
        outcome: EntryOutcome::Completed,
    }
}

/// The watchdogs of one registry.
pub(crate) struct Watchdogs {
    /// The zero of every heartbeat timestamp; a `tokio` instant so tests
    /// can pause time.
    epoch: Instant,
    table: RwLock<Option<Arc<Table>>>,
}

impl Default for Watchdogs {
    fn default() -> Self {
        Self {
            epoch: Instant::now(),
            table: RwLock::new(None),
        }
    }
}

/// What `live` answers.
pub(crate) enum LiveAnswer {
    /// No watchdog registered: the tier's fixed body.
    Fixed,
    /// Every loop beat in time: this precomputed canonical body, 200.
    Healthy(Bytes, HealthyReport),
    /// At least one loop stalled: this report, 503.
    Stalled(HealthReport),
}

/// Builds the healthy report for a non-canonical writer, only when asked.
pub(crate) struct HealthyReport(Arc<Table>);

impl HealthyReport {
    pub(crate) fn report(&self) -> HealthReport {
        let entries = self
            .0
            .slots
            .iter()
            .map(|s| entry(s, HealthStatus::Healthy))
            .collect();
        HealthReport::new(Tag::Live, entries, Duration::ZERO)
    }
}

impl Watchdogs {
    fn now_ms(&self) -> u64 {
        millis(self.epoch.elapsed())
    }

    fn current(&self) -> Option<Arc<Table>> {
        self.table.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The live tier's answer: one clock read and one atomic load per
    /// watchdog on the healthy path; a report is built only on a stall.
    pub(crate) fn live(&self) -> LiveAnswer {
        let Some(table) = self.current() else {
            return LiveAnswer::Fixed;
        };
        let now = self.now_ms();
        let stalled = |s: &Slot| now.saturating_sub(s.last.load(Ordering::Relaxed)) > s.deadline_ms;
        if !table.slots.iter().any(|s| stalled(s)) {
            return LiveAnswer::Healthy(table.healthy_body.clone(), HealthyReport(table));
        }
        let entries = table
            .slots
            .iter()
            .map(|s| {
                let status = if stalled(s) {
                    HealthStatus::Unhealthy
                } else {
                    HealthStatus::Healthy
                };
                entry(s, status)
            })
            .collect();
        LiveAnswer::Stalled(HealthReport::new(Tag::Live, entries, Duration::ZERO))
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl HealthRegistry {
    /// Registers a watchdog for one of the app's own loops (BE-HLTH-002): if
    /// the returned [`Heartbeat`] does not [`beat`](Heartbeat::beat) for
    /// longer than `deadline`, `live` answers 503 with an `Unhealthy` entry
    /// named `name` (described `no heartbeat within <deadline> ms`), and
    /// returns to 200 with the next beat. The deadline starts now.
    ///
    /// It is not a probe: it does no I/O and runs nothing; `live` only
    /// compares timestamps. Dropping the `Heartbeat` removes the watchdog.
    ///
    /// Refused if `name` is not a short identifier (R9), another watchdog
    /// has it (R3), or `deadline` is under 1 ms.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use zb_health::HealthRegistry;
    /// let registry = HealthRegistry::new();
    /// let heartbeat = registry.watchdog("consumer", Duration::from_secs(30)).unwrap();
    /// // in the consumer loop, once per iteration:
    /// heartbeat.beat();
    /// ```
    pub fn watchdog(&self, name: &str, deadline: Duration) -> Result<Heartbeat, RegistryError> {
        let watchdogs = &self.inner.lifecycle.watchdogs;
        let mut table = watchdogs.table.write().unwrap_or_else(|e| e.into_inner());
        let existing: &[Arc<Slot>] = table.as_ref().map_or(&[], |t| &t.slots);
        let mut sink = Violations::new();
        check_name_of(NameOf::Watchdog, name, (), &mut sink);
        check_unique_names_of(
            NameOf::Watchdog,
            existing
                .iter()
                .map(|s| (&*s.name, ()))
                .chain(std::iter::once((name, ()))),
            &mut sink,
        );
        check_watchdog_deadline(name, deadline, (), &mut sink);
        let deadline_ms = millis(deadline);
        sink.into_result()?;
        let slot = Arc::new(Slot {
            name: name.into(),
            deadline_ms,
            last: AtomicU64::new(watchdogs.now_ms()),
            stalled_description: format!("{STALLED_PREFIX} {deadline_ms} ms"),
        });
        let mut slots = existing.to_vec();
        slots.push(slot.clone());
        *table = Some(Arc::new(Table::new(slots)));
        Ok(Heartbeat {
            slot,
            epoch: watchdogs.epoch,
            registry: Arc::downgrade(&self.inner),
        })
    }

    /// The registered watchdog names, in registration order.
    pub fn watchdog_names(&self) -> Vec<Arc<str>> {
        self.inner
            .lifecycle
            .watchdogs
            .current()
            .map_or_else(Vec::new, |t| {
                t.slots.iter().map(|s| s.name.clone()).collect()
            })
    }
}

/// A loop's heartbeat, from [`HealthRegistry::watchdog`]. `Send + Sync`:
/// share it with `Arc` if several tasks make up one loop.
///
/// Dropping it removes the watchdog, so a loop that ends on purpose does
/// not read as stalled.
pub struct Heartbeat {
    slot: Arc<Slot>,
    epoch: Instant,
    registry: Weak<Inner>,
}

impl Heartbeat {
    /// Records that the loop is alive: one clock read and one relaxed
    /// atomic store, no lock, no allocation.
    pub fn beat(&self) {
        self.slot
            .last
            .store(millis(self.epoch.elapsed()), Ordering::Relaxed);
    }

    /// The watchdog's name.
    pub fn name(&self) -> &str {
        &self.slot.name
    }

    /// The watchdog's deadline.
    pub fn deadline(&self) -> Duration {
        Duration::from_millis(self.slot.deadline_ms)
    }
}

impl std::fmt::Debug for Heartbeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Heartbeat")
            .field("name", &self.slot.name)
            .field("deadline_ms", &self.slot.deadline_ms)
            .finish_non_exhaustive()
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        let Some(inner) = self.registry.upgrade() else {
            return;
        };
        let watchdogs = &inner.lifecycle.watchdogs;
        let mut table = watchdogs.table.write().unwrap_or_else(|e| e.into_inner());
        let Some(current) = table.as_ref() else {
            return;
        };
        let slots: Vec<Arc<Slot>> = current
            .slots
            .iter()
            .filter(|s| !Arc::ptr_eq(s, &self.slot))
            .cloned()
            .collect();
        // Back to "no watchdogs": `live` returns to its fixed body.
        *table = (!slots.is_empty()).then(|| Arc::new(Table::new(slots)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zb_health_spec::Rule;

    fn stalled_names(registry: &HealthRegistry) -> Option<Vec<(String, HealthStatus)>> {
        match registry.inner.lifecycle.watchdogs.live() {
            LiveAnswer::Stalled(report) => Some(
                report
                    .entries
                    .iter()
                    .map(|e| (e.name.to_string(), e.status))
                    .collect(),
            ),
            _ => None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_missed_deadline_stalls_only_that_loop_and_a_beat_recovers_it() {
        let registry = HealthRegistry::new();
        assert!(matches!(
            registry.inner.lifecycle.watchdogs.live(),
            LiveAnswer::Fixed
        ));
        let consumer = registry
            .watchdog("consumer", Duration::from_millis(100))
            .unwrap();
        let scheduler = registry
            .watchdog("scheduler", Duration::from_secs(10))
            .unwrap();
        tokio::time::advance(Duration::from_millis(100)).await;
        assert_eq!(stalled_names(&registry), None, "at the deadline: in time");
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(
            stalled_names(&registry),
            Some(vec![
                ("consumer".into(), HealthStatus::Unhealthy),
                ("scheduler".into(), HealthStatus::Healthy),
            ])
        );
        consumer.beat();
        assert_eq!(stalled_names(&registry), None, "recovered");
        scheduler.beat();
        let LiveAnswer::Healthy(body, _) = registry.inner.lifecycle.watchdogs.live() else {
            panic!("healthy");
        };
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["status"], "Healthy");
        assert_eq!(body["entries"]["consumer"]["status"], "Healthy");
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_the_heartbeat_removes_the_watchdog() {
        let registry = HealthRegistry::new();
        let consumer = registry
            .watchdog("consumer", Duration::from_millis(10))
            .unwrap();
        tokio::time::advance(Duration::from_millis(50)).await;
        assert!(stalled_names(&registry).is_some());
        drop(consumer);
        assert!(matches!(
            registry.inner.lifecycle.watchdogs.live(),
            LiveAnswer::Fixed
        ));
        assert!(registry.watchdog_names().is_empty());
        // The name is free again.
        registry
            .watchdog("consumer", Duration::from_millis(10))
            .unwrap();
    }

    #[test]
    fn bad_names_duplicates_and_zero_deadlines_are_refused() {
        let registry = HealthRegistry::new();
        let _a = registry
            .watchdog("consumer", Duration::from_secs(1))
            .unwrap();
        let dup = registry
            .watchdog("consumer", Duration::from_secs(1))
            .unwrap_err();
        assert_eq!(dup.rules(), [Rule::DuplicateName]);
        let bad = registry.watchdog("a b", Duration::ZERO).unwrap_err();
        assert_eq!(bad.rules(), [Rule::ProbeName, Rule::Duration]);
        assert_eq!(&*registry.watchdog_names(), [Arc::from("consumer")]);
    }
}
