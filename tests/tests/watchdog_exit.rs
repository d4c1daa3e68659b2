//! The opt-in stall exit (`Lifecycle::exit_on_stall`, for KEP-5307
//! container restart rules) in a real child process
//! (`src/bin/stall_service.rs`) whose only watchdog beats once and stalls.
//!
//! With the opt-in it ends itself with `WATCHDOG_STALL_EXIT_CODE`, though
//! nothing asks `live` and its runtime's only thread is blocked; without
//! it, it is still running after `live` has turned 503, and ends with 0
//! only when told. Each wait has a deadline; no test measures a duration.

#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use zb_health::lifecycle::WATCHDOG_STALL_EXIT_CODE;

/// Generous: only a missing exit gets near it.
const DEADLINE: Duration = Duration::from_secs(30);

/// The child, killed if the test fails before it exits.
struct Service {
    child: Child,
    events: mpsc::Receiver<String>,
}

impl Drop for Service {
    fn drop(&mut self) {
        // Only this test's own child, by its handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Service {
    fn start(envs: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_stall-service"))
            .env_remove("EXIT_ON_STALL")
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn stall-service");
        let stdout = child.stdout.take().unwrap();
        let (tx, events) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, events }
    }

    /// The next line of stdout, within the deadline.
    fn next_event(&mut self) -> Option<String> {
        self.events.recv_timeout(DEADLINE).ok()
    }

    fn exit_status(&mut self) -> ExitStatus {
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().expect("waitable") {
                return status;
            }
            assert!(Instant::now() < deadline, "the child did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

#[test]
fn a_stalled_watchdog_ends_the_process_with_the_documented_code_when_opted_in() {
    // `lifecycle.exit_on_stall: true` in the manifest, or the call in code.
    for how in ["manifest", "code"] {
        let mut service = Service::start(&[("EXIT_ON_STALL", how)]);
        assert_eq!(service.next_event().as_deref(), Some("beaten"), "{how}");
        let status = service.exit_status();
        assert_eq!(
            status.code(),
            Some(WATCHDOG_STALL_EXIT_CODE),
            "{how}: {status}"
        );
    }
    assert_eq!(WATCHDOG_STALL_EXIT_CODE, 75, "the documented code");
}

#[test]
fn without_the_opt_in_a_stall_only_turns_live_503_and_the_process_runs_on() {
    let mut service = Service::start(&[]);
    assert_eq!(service.next_event().as_deref(), Some("beaten"));
    assert_eq!(service.next_event().as_deref(), Some("stalled"));
    // Still running: it ends with 0 when told, not with the stall's code.
    let stdin = service.child.stdin.as_mut().expect("piped");
    writeln!(stdin, "exit").expect("the child reads stdin");
    let status = service.exit_status();
    assert_eq!(status.code(), Some(0), "{status}");
}
