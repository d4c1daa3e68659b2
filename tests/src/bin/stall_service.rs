//! The child process of `tests/watchdog_exit.rs`: one watchdog, `poller`,
//! declared by a manifest, whose loop beats once and then stalls.
//!
//! * env `EXIT_ON_STALL`: `manifest` installs the manifest that says
//!   `lifecycle.exit_on_stall: true`; `code` installs the one without and
//!   calls `Lifecycle::exit_on_stall`; unset, neither opts in;
//! * stdout, one event a line: `beaten` (the one beat), then, without the
//!   opt-in, `stalled` once `live` answers 503 naming the loop;
//! * stdin: `exit` ends the process with 0 (the test's proof that it was
//!   still running).
//!
//! With the opt-in, nothing here asks `live`, and the main thread (the
//! runtime's only one) is blocked on stdin: the library's own watcher must
//! notice the stall.

use std::io::{BufRead, Write};
use std::time::Duration;

use zb_health::prelude::{HealthRegistry, Heartbeat, Tag};
use zb_health::registry::Selection;
use zb_health::spec::HealthStatus;

zb_health::prelude::manifest!(
    OptedIn,
    yaml = r#"
service: stall-service
lifecycle:
  watchdogs: [{ name: poller, deadline: 50ms }]
  exit_on_stall: true
"#
);

zb_health::prelude::manifest!(
    Plain,
    yaml = r#"
service: stall-service
lifecycle:
  watchdogs: [{ name: poller, deadline: 50ms }]
"#
);

fn event(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = HealthRegistry::new();
    let opt_in = std::env::var("EXIT_ON_STALL").ok();
    let poller: Heartbeat = match opt_in.as_deref() {
        Some("manifest") => {
            OptedIn::install_into(&registry, OptedInDeps {})
                .expect("installs")
                .watchdogs
                .poller
        }
        _ => {
            Plain::install_into(&registry, PlainDeps {})
                .expect("installs")
                .watchdogs
                .poller
        }
    };
    if opt_in.as_deref() == Some("code") {
        registry.lifecycle().exit_on_stall();
    }
    poller.beat();
    event("beaten");
    if opt_in.is_none() {
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
