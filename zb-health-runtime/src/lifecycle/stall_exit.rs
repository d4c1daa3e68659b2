//! The opt-in end of a process whose watchdog stalled
//! ([`Lifecycle::exit_on_stall`](super::Lifecycle::exit_on_stall)).
//!
//! `live` notices a stall only when someone asks it, and the kubelet acts
//! only after `periodSeconds × failureThreshold` of 503s. A process that
//! ends itself with a known code instead is restarted at once by whatever
//! supervises it: a Kubernetes container restart rule on that code
//! (KEP-5307), systemd's `Restart=on-failure`, a plain shell loop.
//!
//! The watcher is a thread of its own, not a task: a stall is often a
//! blocked async runtime, which would never run a task that notices it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::watchdog::Watchdogs;

pub use zb_health_spec::drain::WATCHDOG_STALL_EXIT_CODE;

/// How often the watcher reads the watchdogs: a stall ends the process
/// within its deadline plus this, at a few atomic loads per read.
pub const STALL_CHECK_PERIOD: Duration = Duration::from_millis(100);

/// Starts the watcher of `watchdogs` once; it calls `exit` with
/// [`WATCHDOG_STALL_EXIT_CODE`] at the first stall it sees, and ends with
/// the registry.
pub(super) fn watch(watchdogs: &Arc<Watchdogs>, exit: fn(i32)) {
    if watchdogs.exit_watched.swap(true, Ordering::SeqCst) {
        return;
    }
    let weak: Weak<Watchdogs> = Arc::downgrade(watchdogs);
    let spawned = std::thread::Builder::new()
        .name("zb-health-stall-exit".into())
        .spawn(move || {
            loop {
                std::thread::sleep(STALL_CHECK_PERIOD);
                let Some(watchdogs) = weak.upgrade() else {
                    return;
                };
                if let Some(name) = watchdogs.first_stalled() {
                    tracing::error!(
                        watchdog = %name,
                        exit_code = WATCHDOG_STALL_EXIT_CODE,
                        "watchdog stalled: ending the process (exit_on_stall)"
                    );
                    exit(WATCHDOG_STALL_EXIT_CODE);
                    return;
                }
            }
        });
    if let Err(error) = spawned {
        // No thread, no exit: `live` still answers 503 on a stall.
        watchdogs.exit_watched.store(false, Ordering::SeqCst);
        tracing::error!(%error, "the stall exit's thread could not start; a stall only turns live 503");
    }
}
