//! Maintenance mode: an operator's bounded "out of rotation", held in the
//! lifecycle's [`Phase`] word for the request path, its end in one atomic
//! and its reason in a mutex.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use super::Phase;
use crate::history::{EventKind, Events, now_ms};
use crate::observe::MAINTENANCE;
use crate::sync::lock;
use crate::wallclock::{rfc3339, unix_ms};
use zb_health_spec::operator::MAINTENANCE_ENTRY;

/// One maintenance window, as the registry reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaintenanceWindow {
    /// Why, as the operator said it.
    pub reason: Arc<str>,
    /// When it began.
    pub since: SystemTime,
    /// When it ends by itself.
    pub until: SystemTime,
}

impl MaintenanceWindow {
    /// The entry's description: `maintenance: <reason>, until <time>`
    /// (RFC 3339, UTC, whole seconds).
    pub(crate) fn description(&self) -> String {
        format!(
            "{MAINTENANCE_ENTRY}: {}, until {}",
            self.reason,
            rfc3339(unix_ms(self.until))
        )
    }
}

/// The window and how it ended, for the one log line at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Its time to live ran out.
    Expired,
    /// An operator ended it.
    ByOperator,
    /// A new window replaced it.
    Replaced,
}

/// The state: `until_ms` is 0 outside maintenance, and the phase's
/// maintenance bit is on exactly while it is not (both written under
/// `window`'s lock).
pub(super) struct Maintenance {
    phase: Arc<Phase>,
    until_ms: AtomicU64,
    window: Mutex<Option<MaintenanceWindow>>,
    events: Arc<Events>,
}

impl Maintenance {
    pub(super) fn new(phase: Arc<Phase>, events: Arc<Events>) -> Self {
        Self {
            phase,
            until_ms: AtomicU64::new(0),
            window: Mutex::new(None),
            events,
        }
    }

    /// Opens a window of `ttl` for `reason` (already checked), replacing
    /// any open one.
    pub(super) fn begin(&self, reason: &str, ttl: Duration) -> MaintenanceWindow {
        let since = SystemTime::now();
        let window = MaintenanceWindow {
            reason: Arc::from(reason),
            since,
            until: since + ttl,
        };
        let mut slot = lock(&self.window);
        if let Some(old) = slot.take() {
            log_end(&old, Ended::Replaced);
        }
        *slot = Some(window.clone());
        // At least 1, so a window never reads as "off".
        self.until_ms
            .store(unix_ms(window.until).max(1), Ordering::Release);
        self.phase.put(Phase::MAINTENANCE, Phase::MAINTENANCE);
        drop(slot);
        self.events
            .push(EventKind::MaintenanceStarted, Arc::from(MAINTENANCE_ENTRY));
        metrics::gauge!(MAINTENANCE).set(1.0);
        tracing::warn!(
            target: "zb_health::lifecycle",
            reason = &*window.reason,
            until = %rfc3339(unix_ms(window.until)),
            "maintenance started: ready answers 503 until it ends"
        );
        window
    }

    /// Closes the open window, if any, and says how it ended. An expiry
    /// closes it only if it is still past its end: another caller may have
    /// ended or replaced it meanwhile.
    pub(super) fn end(&self, how: Ended) -> Option<MaintenanceWindow> {
        let mut slot = lock(&self.window);
        let window =
            slot.take_if(|w| how != Ended::Expired || unix_ms(w.until).max(1) <= now_ms())?;
        self.until_ms.store(0, Ordering::Release);
        self.phase.put(Phase::MAINTENANCE, 0);
        drop(slot);
        self.events
            .push(EventKind::MaintenanceEnded, Arc::from(MAINTENANCE_ENTRY));
        metrics::gauge!(MAINTENANCE).set(0.0);
        log_end(&window, how);
        Some(window)
    }

    /// The open window, or `None`; a window past its end is closed here
    /// (the timer may not have run yet), so the answer flips at its time.
    pub(super) fn current(&self) -> Option<MaintenanceWindow> {
        let until = self.until_ms.load(Ordering::Acquire);
        if until == 0 {
            return None;
        }
        if now_ms() >= until {
            self.end_if_expired();
            return None;
        }
        lock(&self.window).clone()
    }

    /// Ends the window if its time has come: the timer's call, and the
    /// readers' when they notice first.
    pub(super) fn end_if_expired(&self) {
        let until = self.until_ms.load(Ordering::Acquire);
        if until != 0 && now_ms() >= until {
            self.end(Ended::Expired);
        }
    }
}

fn log_end(window: &MaintenanceWindow, how: Ended) {
    let how = match how {
        Ended::Expired => "its time ran out",
        Ended::ByOperator => "ended by an operator",
        Ended::Replaced => "replaced by a new window",
    };
    tracing::warn!(
        target: "zb_health::lifecycle",
        reason = &*window.reason,
        "maintenance ended ({how}): ready answers from the probes again"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_on_until_its_end_or_until_ended() {
        let m = Maintenance::new(Arc::default(), Arc::new(Events::default()));
        let may_be_on = || m.phase.get() & Phase::MAINTENANCE != 0;
        assert!(!may_be_on() && m.current().is_none());
        let w = m.begin("kernel patch", Duration::from_secs(600));
        assert!(
            w.description()
                .starts_with("maintenance: kernel patch, until ")
        );
        assert_eq!(m.current(), Some(w.clone()));
        assert_eq!(m.end(Ended::ByOperator), Some(w));
        assert!(!may_be_on() && m.current().is_none() && m.end(Ended::ByOperator).is_none());
        m.begin("short", Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(5));
        assert!(
            m.current().is_none(),
            "a window past its end is closed when read"
        );
        assert!(!may_be_on());
    }
}
