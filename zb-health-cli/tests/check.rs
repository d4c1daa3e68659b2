//! `zb-health check` as a binary: exit codes, stdout, and the diagnostics on
//! stderr compared with checked-in snapshots.
//!
//! Snapshots live in `tests/snapshots/`; `SNAPSHOTS=overwrite cargo test -p
//! zb-health-cli --test check` rewrites them (review the diff).

mod common;

use std::process::Command;

use common::{cli, example_manifests, manifests, root, snapshot, text, zb_health};
use zb_health_spec::manifest::parse_manifest;

#[test]
fn every_valid_manifest_passes_with_ok_on_stdout_and_exit_0() {
    let mut files = example_manifests();
    files.extend(manifests("tests/ui/pass/manifests"));
    let args: Vec<&str> = ["check"]
        .into_iter()
        .chain(files.iter().map(String::as_str))
        .collect();
    let out = zb_health(&args);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), files.len(), "{stdout}");
    for (line, file) in lines.iter().zip(&files) {
        assert!(
            *line == format!("{file}: ok")
                || line.starts_with(&format!(
                    "{file}: ok as a manifest; `cargo check` also checks its custom probes `"
                )),
            "{line}"
        );
    }
    assert_eq!(text(&out.stderr), "");
}

/// `check`'s line for `full.yaml`: ok as a manifest, and what only the
/// build sees, its custom probes' attributes, named with how to check them.
const FULL_OK: &str = "tests/ui/pass/manifests/full.yaml: ok as a manifest; `cargo check` also checks its custom probes `crate::probes::CacheProbe`, `crate::probes::PrimaryProbe`, `crate::probes::SearchProbe` (each a #[zb_health] probe whose attribute agrees with it), which this check cannot see\n";

#[test]
fn a_violation_exits_1_and_the_valid_files_are_still_reported() {
    let out = zb_health(&[
        "check",
        "tests/ui/fail/manifests/live_tag.yaml",
        "tests/ui/pass/manifests/full.yaml",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), FULL_OK);
    assert!(text(&out.stderr).starts_with("error[R1]: "));
}

#[test]
fn diagnostics_match_their_snapshots() {
    for name in [
        "live_tag",
        "drain_grace",
        "unknown",
        "invalid",
        "durations",
        "duplicate_type",
        "max_age",
        "authorized",
        "threshold",
        "group_unknown_probe",
        "group_path",
        "group_on_live",
        "depends_on_unknown",
        "depends_on_cycle",
        "shared",
        "history_no_port",
        "restart_after",
        "unknown_probe_key",
        "disk_levels",
        "exit_on_stall",
        "redis",
        "certificate",
    ] {
        let file = format!("tests/ui/fail/manifests/{name}.yaml");
        cli(&["check", "--color", "never", &file])
            .assert()
            .code(1)
            .stdout_eq("")
            .stderr_eq(snapshot(&format!("{name}.stderr")));
    }
}

/// A new user adds a database to the tour, whose manifest states
/// `orchestrator.timeout: 1s`: the default deadline is derived below it,
/// so `check` accepts it; a deadline the user writes still breaks R5.
#[test]
fn the_tour_with_a_database_and_no_timeout_passes_check() {
    let tour = std::fs::read_to_string(root().join("examples/tour/health.yaml")).expect("tour");
    assert!(
        tour.contains("timeout: 1s"),
        "the tour states its orchestrator timeout"
    );
    let dir = std::env::temp_dir().join(format!("zb-health-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for (entry, code) in [
        ("  - { name: db, kind: database }\n", 0),
        ("  - { name: db, kind: database, timeout: 1s }\n", 1),
    ] {
        let file = dir.join("health.yaml");
        std::fs::write(&file, format!("{tour}{entry}")).expect("written");
        let file = file.to_str().expect("UTF-8 path").to_owned();
        let out = zb_health(&["check", "--color", "never", &file]);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{entry}: {}",
            text(&out.stderr)
        );
        if code == 1 {
            assert!(
                text(&out.stderr).starts_with("error[R5]: "),
                "{}",
                text(&out.stderr)
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn carets_count_characters_after_non_ascii_text() {
    cli(&[
        "check",
        "--color=never",
        "zb-health-cli/tests/fixtures/non_ascii.yaml",
    ])
    .assert()
    .code(1)
    .stderr_eq(snapshot("non_ascii.stderr"));
}

/// The `(rule, line, column)` list that the CLI printed: each `error[R…]`
/// title and the `--> path:line:column` after it.
fn reported(stderr: &str) -> Vec<(String, usize, usize)> {
    let mut found = Vec::new();
    let mut lines = stderr.lines();
    while let Some(line) = lines.next() {
        let Some(code) = line
            .strip_prefix("error[")
            .and_then(|rest| rest.split_once(']'))
            .map(|(code, _)| code.to_string())
        else {
            continue;
        };
        let arrow = lines.next().expect("a `-->` line after the title");
        let place = arrow
            .trim_start()
            .strip_prefix("--> ")
            .expect("a `-->` line");
        let mut parts = place.rsplitn(3, ':');
        let column = parts.next().and_then(|c| c.parse().ok()).expect("column");
        let line = parts.next().and_then(|l| l.parse().ok()).expect("line");
        found.push((code, line, column));
    }
    found
}

/// Some manifests under `tests/ui/fail/` are valid on their own and fail only
/// against the Rust code (an R7 contradiction with a `#[zb_health]`
/// attribute, a `type` that is not a probe): the CLI, which sees no Rust,
/// must accept those, as `parse_manifest` does.
#[test]
fn the_cli_reports_exactly_what_parse_manifest_reports_for_every_failing_manifest() {
    let mut files = manifests("tests/ui/fail/manifests");
    files.push("zb-health-cli/tests/fixtures/non_ascii.yaml".into());
    let mut failing = 0;
    for file in files {
        let yaml = std::fs::read_to_string(root().join(&file)).expect("readable");
        let expected: Vec<(String, usize, usize)> = parse_manifest(&yaml)
            .err()
            .unwrap_or_default()
            .iter()
            .map(|v| {
                let code = v.rule.code().to_string();
                (code, v.location.line, v.location.column)
            })
            .collect();
        let out = zb_health(&["check", "--color", "never", &file]);
        if expected.is_empty() {
            assert_eq!(out.status.code(), Some(0), "{file}");
            assert!(
                text(&out.stdout).starts_with(&format!("{file}: ok")),
                "{file}"
            );
        } else {
            failing += 1;
            assert_eq!(out.status.code(), Some(1), "{file}");
            assert_eq!(text(&out.stdout), "", "{file}");
        }
        assert_eq!(reported(&text(&out.stderr)), expected, "{file}");
    }
    // Most of them break a manifest rule, so the comparison is not vacuous.
    assert!(failing >= 15, "only {failing} manifests fail");
}

#[test]
fn usage_errors_and_unreadable_files_exit_2_and_say_why() {
    for args in [
        &[][..],
        &["check"][..],
        &["lint", "health.yaml"][..],
        &["check", "--color", "blue", "health.yaml"][..],
    ] {
        let out = zb_health(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        // clap's errors end by pointing at the help.
        assert!(stderr.contains("try '--help'"), "{args:?}: {stderr}");
    }

    // An unreadable file does not stop the others, and wins over a violation.
    let out = zb_health(&[
        "check",
        "no/such/health.yaml",
        "tests/ui/fail/manifests/live_tag.yaml",
        "tests/ui/pass/manifests/full.yaml",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("error: cannot read `no/such/health.yaml`: "),
        "{stderr}"
    );
    assert!(stderr.contains("error[R1]"), "{stderr}");
    assert_eq!(text(&out.stdout), FULL_OK);

    // Not UTF-8: unreadable as a manifest, said as such.
    let latin1 = std::env::temp_dir().join(format!("zb-health-cli-{}.yaml", std::process::id()));
    std::fs::write(&latin1, b"service: k\xfchlung\n").expect("the temp dir is writable");
    let out = Command::new(env!("CARGO_BIN_EXE_zb-health"))
        .arg("check")
        .arg(&latin1)
        .output()
        .expect("the zb-health binary runs");
    std::fs::remove_file(&latin1).expect("the temp file is removable");
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("error: cannot read `"), "{stderr}");
    assert!(stderr.contains("UTF-8"), "{stderr}");

    // A directory is a file that cannot be read as a manifest.
    let out = zb_health(&["check", "tests"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("error: cannot read `tests`: "));
}

#[test]
fn help_and_version_go_to_stdout_and_exit_0() {
    let out = zb_health(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("Usage: zb-health <COMMAND>"));

    let out = zb_health(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        format!("zb-health {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn colour_is_off_when_stderr_is_not_a_terminal_and_on_when_asked() {
    let file = "tests/ui/fail/manifests/live_tag.yaml";
    // The test captures stderr through a pipe: `auto` (the default) is plain.
    let auto = zb_health(&["check", file]);
    let never = zb_health(&["check", "--color", "never", file]);
    assert!(!text(&auto.stderr).contains('\u{1b}'));
    assert_eq!(auto.stderr, never.stderr);

    let always = zb_health(&["check", "--color", "always", file]);
    assert_eq!(always.status.code(), Some(1));
    assert!(text(&always.stderr).contains("\u{1b}["));
}
