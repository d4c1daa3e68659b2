//! A start that fails, as a user of the README's service sees it: the
//! tour's real binary with a port taken by another socket, or a variable
//! it cannot use, exits non-zero with one readable line that names what
//! to change, and none of `io::Error`'s `Debug` fields.

use std::net::TcpListener;

use zb_health_testkit::{Launch, PATIENCE, free_port};

/// The tour with an in-memory database (no file in the package dir) and
/// `env`: started, waited out, its exit status and its output.
fn start_and_fail(env: &[(&str, String)]) -> String {
    let mut launch = Launch::new(env!("CARGO_BIN_EXE_tour")).env("DATABASE_URL", "sqlite::memory:");
    for (name, value) in env {
        launch = launch.env(name, value.clone());
    }
    let mut service = launch.start();
    let status = service.wait_exit(PATIENCE);
    let output = service.output();
    assert!(!status.success(), "it must not start; output:\n{output}");
    for noise in ["Os {", "Custom {", "kind:"] {
        assert!(!output.contains(noise), "`{noise}` in:\n{output}");
    }
    output
}

#[test]
fn a_taken_management_port_exits_naming_management_port_and_the_address() {
    let port = free_port();
    // Another process's socket, as the service that held 8081 was.
    let _held = TcpListener::bind(("127.0.0.1", port)).expect("the port is free");
    let output = start_and_fail(&[("MANAGEMENT_PORT", port.to_string())]);
    let line = format!("Error: MANAGEMENT_PORT={port}: 127.0.0.1:{port} is already in use\n");
    assert!(output.starts_with(&line), "expected `{line}` in:\n{output}");
}

#[test]
fn a_bad_variable_exits_naming_it_and_what_would_do() {
    let output = start_and_fail(&[("DRAIN_DELAY_MS", "five".to_owned())]);
    assert_eq!(
        output,
        "Error: DRAIN_DELAY_MS=\"five\": invalid digit found in string; expected whole milliseconds, e.g. 5000\n"
    );
}
