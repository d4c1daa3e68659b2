//! The child process of `tests/watchdog_exit.rs`: one watchdog whose loop
//! beats once and then stalls.
//!
//! * env: `EXIT_ON_STALL=1` opts in to `Lifecycle::exit_on_stall`;
//! * stdout, one event a line: `beaten` (the one beat), then, without the
//!   opt-in, `stalled` once `live` answers 503 naming the loop;
//! * stdin: `exit` ends the process with 0 (the test's proof that it was
//!   still running).
//!
//! With the opt-in, nothing here asks `live`, and the main thread is
//! blocked on stdin: the library's own watcher must notice the stall.

use std::io::{BufRead, Write};
use std::time::Duration;

use zb_health::prelude::{HealthRegistry, Tag};
use zb_health::registry::Selection;
use zb_health::spec::HealthStatus;

fn event(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = HealthRegistry::new();
    let poller = registry
        .lifecycle()
        .watchdog("poller", Duration::from_millis(50))
        .expect("a valid watchdog");
    if std::env::var("EXIT_ON_STALL").is_ok_and(|v| v == "1") {
        registry.lifecycle().exit_on_stall();
    }
    poller.beat();
    event("beaten");
    if std::env::var("EXIT_ON_STALL").is_err() {
        loop {
            let answer = registry.answer(Selection::Tier(Tag::Live)).await;
            if answer.status == HealthStatus::Unhealthy {
                event("stalled");
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    // Blocks this (the runtime's only) thread, as a stuck loop would.
    for line in std::io::stdin().lock().lines() {
        if line.is_ok_and(|l| l.trim() == "exit") {
            break;
        }
    }
    poller.retire();
}
