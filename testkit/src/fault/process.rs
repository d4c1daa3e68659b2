//! The programs the harness runs (`ip`, `iptables`) and the signals it
//! sends to the nodes (`kill`).

use std::process::Command;

use crate::process::ServiceProcess;

/// Runs a command, panicking with its output unless it succeeds.
pub(super) fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (install iproute2 and iptables): {e}"));
    assert!(
        out.status.success(),
        "{program} {} failed ({}): {}{} (the fault harness needs root)",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Sends `signal` (e.g. `STOP`, `CONT`) to `node` with `kill(1)`: the
/// workspace forbids `unsafe`, so no libc call.
pub fn signal(node: &ServiceProcess, signal: &str) {
    run("kill", &[&format!("-{signal}"), &node.pid().to_string()]);
}
