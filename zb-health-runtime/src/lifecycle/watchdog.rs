//! The liveness watchdog (BE-HLTH-002): heartbeats from the app's own
//! loops, checked by the `live` tier with atomic loads and no I/O.
//!
//! A deadline runs from the loop's first beat, not from its registration:
//! a loop that starts only after a long startup gate is "starting" until
//! then, `live` stays 200 for it, and the startup path waits for it. A loop
//! that never starts is the startup probe's to catch (its budget), not the
//! liveness probe's.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use tokio::time::Instant;
use zb_health_spec::{
    NameOf, Tag, Violations,
    rules::{check_name_of, check_unique_names_of, check_watchdog_deadline},
};

use super::Phase;
use crate::answer::Kept;
use crate::history::{EventKind, Events, WatchdogView};
use crate::registration::RegistryError;
use crate::report::{HealthEntry, HealthReport};
use zb_health_spec::HealthStatus;

/// How a stalled watchdog's description starts: `no heartbeat within
/// <deadline> ms`. Fixed per watchdog, so it is computed once.
pub(crate) const STALLED_PREFIX: &str = "no heartbeat within";

/// The description of a loop whose [`Heartbeat`] was dropped without
/// [`Heartbeat::retire`]: the loop ended (a panic, an early return), and
/// nothing will beat again. Only a restart cures it.
pub(crate) const DEAD_DESCRIPTION: &str = "loop ended: its heartbeat was dropped without retire()";

/// The description of a watchdog on the startup path before its loop's
/// first beat.
pub(crate) const WAITING_DESCRIPTION: &str = "waiting for the first heartbeat";

/// [`Slot::last`] before the first beat: no deadline runs yet.
const NOT_BEATEN: u64 = u64::MAX;

/// One registered loop.
struct Slot {
    name: Arc<str>,
    deadline_ms: u64,
    /// Milliseconds since the registry's epoch at the last beat;
    /// [`NOT_BEATEN`] until the first.
    last: AtomicU64,
    /// Set when the heartbeat was dropped unretired: the loop is gone.
    dead: AtomicBool,
    /// Whether the latest `live` saw it stalled, so the transition is
    /// logged once each way.
    reported: AtomicBool,
    stalled_description: String,
}

impl Slot {
    fn is_dead(&self) -> bool {
        self.dead.load(Ordering::Relaxed)
    }

    fn has_beaten(&self) -> bool {
        self.last.load(Ordering::Relaxed) != NOT_BEATEN
    }

    /// Dead, or beaten once and silent for longer than the deadline; a
    /// loop that has not beaten yet is starting, not stalled.
    fn is_stalled(&self, now_ms: u64) -> bool {
        let last = self.last.load(Ordering::Relaxed);
        self.is_dead() || (last != NOT_BEATEN && now_ms.saturating_sub(last) > self.deadline_ms)
    }
}

/// The watchdogs of a registry, swapped whole on (de)registration so a
/// request sees one consistent set.
struct Table {
    slots: Vec<Arc<Slot>>,
    /// This set's healthy answer, with its bodies: the live tier's hot
    /// path renders nothing.
    healthy: Arc<Kept>,
}

impl Table {
    fn new(slots: Vec<Arc<Slot>>) -> Self {
        let entries = slots.iter().map(|s| live_entry(s, false)).collect();
        let report = HealthReport::new(Tag::Live, entries, Duration::ZERO);
        Self {
            slots,
            healthy: Arc::new(Kept::new(report, None)),
        }
    }
}

/// `slot`'s entry: `Healthy` unless `failing`; else `Unhealthy`, described
/// as a dead loop when it is one, else by `alive` (stalled, or waiting for
/// its first beat).
fn entry(slot: &Slot, failing: bool, alive: impl FnOnce() -> Cow<'static, str>) -> HealthEntry {
    let (status, description) = if !failing {
        (HealthStatus::Healthy, None)
    } else if slot.is_dead() {
        (
            HealthStatus::Unhealthy,
            Some(Cow::Borrowed(DEAD_DESCRIPTION)),
        )
    } else {
        (HealthStatus::Unhealthy, Some(alive()))
    };
    HealthEntry::fixed(slot.name.clone(), status, description)
}

/// `slot`'s `live` entry.
fn live_entry(slot: &Slot, stalled: bool) -> HealthEntry {
    entry(slot, stalled, || {
        Cow::Owned(slot.stalled_description.clone())
    })
}

/// The watchdogs of one registry.
pub(super) struct Watchdogs {
    /// The zero of every heartbeat timestamp; a `tokio` instant so tests
    /// can pause time.
    epoch: Instant,
    table: RwLock<Option<Arc<Table>>>,
    /// The lifecycle's phase: once it is draining, loops end with the
    /// process, so a heartbeat dropped from then on is retired, not a dead
    /// loop.
    phase: Arc<Phase>,
    /// Where stalls and recoveries are recorded for the history.
    events: Arc<Events>,
    /// Set once the opt-in stall exit watches this set
    /// (`Lifecycle::exit_on_stall`), so it is started once.
    pub(super) exit_watched: AtomicBool,
}

impl Watchdogs {
    pub(super) fn new(phase: Arc<Phase>, events: Arc<Events>) -> Self {
        Self {
            epoch: Instant::now(),
            table: RwLock::new(None),
            phase,
            events,
            exit_watched: AtomicBool::new(false),
        }
    }

    fn now_ms(&self) -> u64 {
        millis(self.epoch.elapsed())
    }

    fn current(&self) -> Option<Arc<Table>> {
        crate::sync::read(&self.table).clone()
    }

    /// The live tier's answer: one clock read and two atomic loads per
    /// watchdog on the healthy path; a report is built only on a stall.
    pub(super) fn live(&self) -> LiveAnswer {
        let Some(table) = self.current() else {
            return LiveAnswer::Fixed;
        };
        let now = self.now_ms();
        let mut any = false;
        for s in &table.slots {
            let stalled = s.is_stalled(now);
            any |= stalled;
            self.note(s, stalled);
        }
        if !any {
            return LiveAnswer::Healthy(table.healthy.clone());
        }
        let entries = table
            .slots
            .iter()
            .map(|s| live_entry(s, s.is_stalled(now)))
            .collect();
        LiveAnswer::Stalled(HealthReport::new(Tag::Live, entries, Duration::ZERO))
    }

    /// One log line and one history event per transition, naming the loop
    /// (BE-HLTH-008); the flag only flips on a change, so a steady state
    /// writes nothing.
    fn note(&self, s: &Slot, stalled: bool) {
        if s.reported.load(Ordering::Relaxed) != stalled
            && s.reported.swap(stalled, Ordering::Relaxed) != stalled
        {
            if stalled {
                tracing::warn!(watchdog = %s.name, dead = s.is_dead(), deadline_ms = s.deadline_ms, "watchdog stalled: live answers 503");
                self.events.push(EventKind::WatchdogStalled, s.name.clone());
            } else {
                tracing::info!(watchdog = %s.name, "watchdog recovered");
                self.events
                    .push(EventKind::WatchdogRecovered, s.name.clone());
            }
        }
    }

    /// Each watchdog as the history shows it: its silence since the last
    /// beat and whether it is stalled, the transition noted as `live`
    /// notes it (a page may see a stall before the kubelet does).
    pub(super) fn views(&self) -> Vec<WatchdogView> {
        let Some(table) = self.current() else {
            return Vec::new();
        };
        let now = self.epoch.elapsed();
        let now_ms = millis(now);
        table
            .slots
            .iter()
            .map(|s| {
                let stalled = s.is_stalled(now_ms);
                self.note(s, stalled);
                let last = s.last.load(Ordering::Relaxed);
                let since = (last != NOT_BEATEN).then(|| {
                    now.saturating_sub(Duration::from_millis(last))
                        .as_secs_f64()
                        * 1e3
                });
                WatchdogView {
                    name: s.name.clone(),
                    deadline_ms: s.deadline_ms,
                    since_beat_ms: since,
                    stalled,
                }
            })
            .collect()
    }

    /// Registers watchdogs, all or none; see `Lifecycle::watchdogs`.
    pub(super) fn register<const N: usize>(
        this: &Arc<Self>,
        loops: [(&str, Duration); N],
    ) -> Result<[Heartbeat; N], RegistryError> {
        let mut table = crate::sync::write(&this.table);
        let existing: &[Arc<Slot>] = table.as_ref().map_or(&[], |t| &t.slots);
        let mut sink = Violations::new();
        for (name, deadline) in loops {
            check_name_of(NameOf::Watchdog, name, (), &mut sink);
            check_watchdog_deadline(name, deadline, (), &mut sink);
        }
        check_unique_names_of(
            NameOf::Watchdog,
            existing
                .iter()
                .map(|s| (&*s.name, ()))
                .chain(loops.iter().map(|(name, _)| (*name, ()))),
            &mut sink,
        );
        sink.into_result()?;
        let slots = loops.map(|(name, deadline)| {
            let deadline_ms = millis(deadline);
            Arc::new(Slot {
                name: name.into(),
                deadline_ms,
                last: AtomicU64::new(NOT_BEATEN),
                dead: AtomicBool::new(false),
                reported: AtomicBool::new(false),
                stalled_description: format!("{STALLED_PREFIX} {deadline_ms} ms"),
            })
        });
        let mut all = existing.to_vec();
        all.extend(slots.iter().cloned());
        *table = Some(Arc::new(Table::new(all)));
        Ok(slots.map(|slot| Heartbeat {
            slot,
            epoch: this.epoch,
            watchdogs: Arc::downgrade(this),
            retired: false,
        }))
    }

    /// The startup path's entries, one per watchdog in registration order:
    /// `Healthy` once its loop has beaten, `Unhealthy` before (waiting, or
    /// dead without a beat). Empty without watchdogs.
    pub(super) fn started_entries(&self) -> Vec<HealthEntry> {
        let Some(table) = self.current() else {
            return Vec::new();
        };
        table
            .slots
            .iter()
            .map(|s| entry(s, !s.has_beaten(), || Cow::Borrowed(WAITING_DESCRIPTION)))
            .collect()
    }

    /// The registered watchdog names, in registration order.
    pub(super) fn names(&self) -> Vec<Arc<str>> {
        self.current().map_or_else(Vec::new, |t| {
            t.slots.iter().map(|s| s.name.clone()).collect()
        })
    }

    /// The first stalled (or dead) watchdog's name, noted as `live` notes
    /// it; none once the drain has begun, as the loops then end with the
    /// process. What the opt-in stall exit watches.
    pub(super) fn first_stalled(&self) -> Option<Arc<str>> {
        if self.is_draining() {
            return None;
        }
        let table = self.current()?;
        let now = self.now_ms();
        let slot = table.slots.iter().find(|s| s.is_stalled(now))?;
        self.note(slot, true);
        Some(slot.name.clone())
    }

    fn is_draining(&self) -> bool {
        self.phase.get() & Phase::DRAINING != 0
    }

    /// Takes `slot` out of the table: `live` no longer watches it.
    fn remove(&self, slot: &Arc<Slot>) {
        let mut table = crate::sync::write(&self.table);
        let Some(current) = table.as_ref() else {
            return;
        };
        let slots: Vec<Arc<Slot>> = current
            .slots
            .iter()
            .filter(|s| !Arc::ptr_eq(s, slot))
            .cloned()
            .collect();
        // Back to "no watchdogs": `live` returns to its fixed body.
        *table = (!slots.is_empty()).then(|| Arc::new(Table::new(slots)));
    }
}

/// What `live` answers.
pub(crate) enum LiveAnswer {
    /// No watchdog registered: the tier's fixed answer.
    Fixed,
    /// Every loop beat in time: 200, with this set's healthy answer.
    Healthy(Arc<Kept>),
    /// At least one loop stalled: this report, 503.
    Stalled(HealthReport),
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A loop's heartbeat, from [`Lifecycle::watchdog`](crate::lifecycle::Lifecycle::watchdog). `Send + Sync`:
/// share it with `Arc` if several tasks make up one loop.
///
/// The deadline runs from the first [`beat`](Self::beat): until then the
/// loop is starting, `live` does not count it as stalled, and the startup
/// path answers 503 naming it.
///
/// A loop that ends on purpose says so with [`retire`](Self::retire),
/// which removes the watchdog. Dropping the heartbeat without it means the
/// loop died (it panicked, or returned early): `live` answers 503 naming
/// it, at once and for good, because nothing will beat again and only a
/// restart brings the loop back (BE-HLTH-002). Once the drain has begun, a
/// dropped heartbeat is retired instead: the loops end with the process.
pub struct Heartbeat {
    slot: Arc<Slot>,
    epoch: Instant,
    watchdogs: Weak<Watchdogs>,
    retired: bool,
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

    /// The loop ends on purpose: its watchdog is removed, so `live` no
    /// longer expects it to beat.
    pub fn retire(mut self) {
        // Dropped here: the drop removes it.
        self.retired = true;
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
        let Some(watchdogs) = self.watchdogs.upgrade() else {
            return;
        };
        // Retired, or dropped during the drain, when the process is going
        // away and its loops with it (their owners are dropped as the
        // servers stop): not a dead loop.
        if self.retired || watchdogs.is_draining() {
            watchdogs.remove(&self.slot);
            return;
        }
        self.slot.dead.store(true, Ordering::Relaxed);
        tracing::error!(
            watchdog = %self.slot.name,
            "a watched loop ended: its heartbeat was dropped without retire(); live answers 503 until the process restarts"
        );
    }
}
