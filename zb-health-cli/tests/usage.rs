//! The command line itself, the same in every subcommand: `--help` and `-h`
//! on stdout with exit 0, a usage error on stderr with exit 2, `--` ending
//! the options.
//!
//! The help texts are snapshots in `tests/snapshots/help/`;
//! `SNAPSHOTS=overwrite cargo test -p zb-health-cli --test usage` rewrites
//! them (review the diff).

mod common;

use common::{cli, snapshot, text, zb_health};

const SUBCOMMANDS: [&str; 7] = [
    "check",
    "k8s",
    "probe",
    "dashboard",
    "maintenance",
    "step-down",
    "schema",
];

#[test]
fn the_help_texts_match_their_snapshots() {
    cli(&["--help"])
        .assert()
        .code(0)
        .stdout_eq(snapshot("help/zb-health.stdout"))
        .stderr_eq("");
    for name in SUBCOMMANDS {
        cli(&[name, "--help"])
            .assert()
            .code(0)
            .stdout_eq(snapshot(&format!("help/{name}.stdout")))
            .stderr_eq("");
    }
}

#[test]
fn every_spelling_of_help_works_in_every_subcommand() {
    for name in SUBCOMMANDS {
        for args in [[name, "-h"], [name, "--help"], ["help", name]] {
            let out = zb_health(&args);
            assert_eq!(out.status.code(), Some(0), "{args:?}");
            let stdout = text(&out.stdout);
            assert!(
                stdout.contains(&format!("Usage: zb-health {name} [OPTIONS]")),
                "{args:?}: {stdout}"
            );
            assert_eq!(text(&out.stderr), "", "{args:?}");
        }
    }
}

#[test]
fn an_unknown_option_exits_2_with_the_usage_on_stderr_in_every_subcommand() {
    for name in SUBCOMMANDS {
        let out = zb_health(&[name, "--strict", "x"]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert_eq!(text(&out.stdout), "", "{name}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.starts_with("error: unexpected argument '--strict'"),
            "{name}: {stderr}"
        );
        assert!(
            stderr.contains(&format!("Usage: zb-health {name} [OPTIONS]")),
            "{name}: {stderr}"
        );
    }
}

#[test]
fn double_dash_ends_the_options_in_every_subcommand() {
    // What follows `--` is a file or a URL, so it fails as one (exit 2).
    for (args, says) in [
        (["check", "--", "--help"], "error: cannot read `--help`: "),
        (["k8s", "--", "--help"], "error: cannot read `--help`: "),
        (
            ["probe", "--", "--help"],
            "error: `--help` is not a URL: it has no `http://`",
        ),
    ] {
        let out = zb_health(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.starts_with(says), "{args:?}: {stderr}");
    }
}
