//! `zb-health alerts`: the rules of a manifest pass `promtool check
//! rules`, and `promtool test rules` fires each alert on a series that
//! should fire it and keeps it silent on a flap shorter than its `for:`
//! and on a rolling update (the unit tests are
//! `tests/fixtures/alerts/*.test.yml`), for scadabridge's manifest and a
//! second one with other timings. The whole output is pinned by a
//! snapshot (`tests/snapshots/alerts/`).

mod common;

use std::path::Path;

use common::{cli, snapshot};
use zb_health_testkit::promtool;

/// Generates `manifest`'s rules, checks and snapshots them, then runs the
/// unit tests `fixtures/alerts/NAME.test.yml` against them.
fn rules_pass_promtool(manifest: &str, name: &str) {
    let out = cli(&["alerts", manifest]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rules = String::from_utf8(out.stdout).unwrap();
    snapbox::assert_data_eq!(rules.clone(), snapshot(&format!("alerts/{name}.rules.yml")));

    let dir = std::env::temp_dir().join(format!("zb-health-alerts-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("full.yml"), &rules).unwrap();
    if let Err(said) = promtool::run(&dir, &["check", "rules", "full.yml"]) {
        panic!("promtool check rules:\n{said}\n{rules}");
    }
    // The unit tests compare labels; the annotations (templates that
    // `check rules` parsed) are the snapshot's.
    let stripped: String = rules
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t == "annotations:"
                || t.starts_with("summary: ")
                || t.starts_with("description: ")
                || t.starts_with("runbook: "))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.join(format!("{name}.rules.yml")), stripped).unwrap();
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/fixtures/alerts/{name}.test.yml"));
    std::fs::copy(&tests, dir.join("unit.test.yml")).unwrap();
    let tested = promtool::run(&dir, &["test", "rules", "unit.test.yml"]);
    std::fs::remove_dir_all(&dir).ok();
    if let Err(said) = tested {
        panic!("promtool test rules ({name}):\n{said}");
    }
}

#[test]
fn scadabridges_rules_pass_promtool_and_their_unit_tests() {
    rules_pass_promtool("examples/scadabridge/health.yaml", "scadabridge");
}

#[test]
fn a_second_manifests_rules_take_its_own_timings_and_pass() {
    rules_pass_promtool("zb-health-cli/tests/fixtures/alerts/orders.yaml", "orders");
}

/// Every alert has a summary, a description and a runbook; an alert on a
/// part the manifest lacks is left out; `--selector` replaces `job`.
#[test]
fn every_alert_says_what_to_do_and_only_what_the_manifest_has_is_alerted() {
    let out = cli(&[
        "alerts",
        "--selector",
        "namespace=\"prod\",app=\"gw\"",
        "examples/mxgateway/health.yaml",
    ])
    .output()
    .unwrap();
    assert!(out.status.success());
    let rules = String::from_utf8(out.stdout).unwrap();
    let alerts = rules.matches("- alert: ").count();
    assert_eq!(
        alerts, 3,
        "no watchdog, shared probe or active node:\n{rules}"
    );
    for key in ["summary: ", "description: ", "runbook: "] {
        assert_eq!(rules.matches(key).count(), alerts, "{key}");
    }
    assert!(
        rules.contains("namespace=\\\"prod\\\",app=\\\"gw\\\""),
        "{rules}"
    );
    assert!(!rules.contains("job="), "{rules}");
    // A manifest that breaks a rule gets the diagnostics, exit 1.
    cli(&["alerts", "tests/ui/fail/manifests/restart_after.yaml"])
        .assert()
        .code(1)
        .stdout_eq("");
}

/// The example Alertmanager route (`spec/alertmanager.example.yml`)
/// passes `amtool check-config`, pages on `critical`, tickets on
/// `warning`.
#[test]
fn the_example_alertmanager_route_is_valid_and_routes_by_severity() {
    let root = common::root();
    let config = "--config.file=spec/alertmanager.example.yml";
    promtool::run_amtool(&root, &["check-config", "spec/alertmanager.example.yml"])
        .unwrap_or_else(|said| panic!("amtool check-config:\n{said}"));
    for (severity, receiver) in [("critical", "pager"), ("warning", "tickets")] {
        let said = promtool::run_amtool(
            &root,
            &[
                "config",
                "routes",
                "test",
                config,
                "alertname=ZbHealthNotReady",
                "service=orders",
                &format!("severity={severity}"),
            ],
        )
        .unwrap_or_else(|said| panic!("amtool config routes test:\n{said}"));
        assert!(
            said.lines().any(|l| l.trim() == receiver),
            "{severity}: {said}"
        );
    }
}

/// `--scrape-interval` lengthens what must span scrapes: the cluster-wide
/// alerts hold for two of them, the flap window spans ten.
#[test]
fn a_longer_scrape_interval_lengthens_the_cluster_hold_and_the_flap_window() {
    let out = cli(&[
        "alerts",
        "--scrape-interval",
        "1m",
        "examples/scadabridge/health.yaml",
    ])
    .output()
    .unwrap();
    assert!(out.status.success());
    let rules = String::from_utf8(out.stdout).unwrap();
    let hold_of = |alert: &str| {
        let at = rules.find(&format!("- alert: {alert}\n")).unwrap();
        let rest = &rules[at..];
        let line = rest
            .lines()
            .find(|l| l.trim_start().starts_with("for: "))
            .unwrap();
        line.trim_start().trim_start_matches("for: ").to_owned()
    };
    assert_eq!(hold_of("ZbHealthNoActiveNode"), "120s");
    assert_eq!(hold_of("ZbHealthSeveralActiveNodes"), "120s");
    assert_eq!(
        hold_of("ZbHealthNotReady"),
        "4s",
        "the manifest's detection time"
    );
    assert!(rules.contains("[600s]) >= 4"), "{rules}");
}
