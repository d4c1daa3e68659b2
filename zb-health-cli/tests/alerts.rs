//! `zb-health alerts`: the rules of a manifest pass `promtool check
//! rules`, and `promtool test rules` fires each alert on what the
//! orchestrator acts on and keeps it silent on one scrape that shows a
//! blip and on a rolling update (the unit tests are
//! `tests/fixtures/alerts/*.test.yml`, series scraped every 30 s or 10 s
//! as the rules were generated for), for scadabridge's manifest and a
//! second one with other timings. The whole output is pinned by a
//! snapshot (`tests/snapshots/alerts/`).

mod common;

use std::path::Path;

use common::{cli, snapshot};
use zb_health_testkit::promtool;

/// The evaluation intervals every unit test file runs at: one finer than
/// any scrape (the worst case for a blip), the 15 s, and
/// Prometheus' default 1 m.
const EVALUATION_INTERVALS: [&str; 3] = ["1s", "15s", "1m"];

/// Generates `manifest`'s rules (with `args`, e.g. a scrape interval),
/// checks and snapshots them, then runs the unit tests
/// `fixtures/alerts/NAME.test.yml` against them at each of
/// [`EVALUATION_INTERVALS`].
fn rules_pass_promtool(manifest: &str, args: &[&str], name: &str) {
    let out = cli(&[&["alerts"], args, &[manifest]].concat())
        .output()
        .unwrap();
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
    let unit = std::fs::read_to_string(&tests).unwrap();
    let tested: Vec<_> = EVALUATION_INTERVALS
        .iter()
        .map(|every| {
            let file = format!("unit-{every}.test.yml");
            std::fs::write(
                dir.join(&file),
                format!("evaluation_interval: {every}\n{unit}"),
            )
            .unwrap();
            (every, promtool::run(&dir, &["test", "rules", &file]))
        })
        .collect();
    std::fs::remove_dir_all(&dir).ok();
    for (every, result) in tested {
        if let Err(said) = result {
            panic!("promtool test rules ({name}, evaluated every {every}):\n{said}");
        }
    }
}

/// At the default 30 s scrapes: a one-scrape not-ready blip is silent
/// (it fired at 75 s and 85 s with the old 4 s hold), five minutes not
/// ready fire; likewise every other alert.
#[test]
fn scadabridges_rules_pass_promtool_and_their_unit_tests() {
    rules_pass_promtool("examples/scadabridge/health.yaml", &[], "scadabridge");
}

/// At 10 s scrapes: a one-scrape not-ready blip and a one-scrape probe
/// failure are silent; five minutes not ready, and a probe failing every
/// 40 s, fire.
#[test]
fn at_10s_scrapes_a_one_scrape_blip_is_silent_and_an_outage_fires() {
    rules_pass_promtool(
        "examples/scadabridge/health.yaml",
        &["--scrape-interval", "10s"],
        "scadabridge-10s",
    );
}

#[test]
fn a_second_manifests_rules_take_its_own_timings_and_pass() {
    rules_pass_promtool(
        "zb-health-cli/tests/fixtures/alerts/orders.yaml",
        &[],
        "orders",
    );
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

/// `--scrape-interval` lengthens every hold by two scrapes (what the
/// orchestrator takes to act, plus two scrapes), and the flap window to
/// ten scrapes.
#[test]
fn a_longer_scrape_interval_lengthens_every_hold_and_the_flap_window() {
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
    for (alert, hold) in [
        // The detection time (4 s) and two scrapes.
        ("ZbHealthNotReady", "124s"),
        ("ZbHealthProbeFlapping", "124s"),
        // The grace period or the liveness restart (30 s) and two scrapes.
        ("ZbHealthDrainOutlivesGrace", "150s"),
        ("ZbHealthWatchdogStalled", "150s"),
        // A hand-over of five detection times and two scrapes.
        ("ZbHealthNoActiveNode", "140s"),
        ("ZbHealthSeveralActiveNodes", "140s"),
    ] {
        assert_eq!(hold_of(alert), hold, "{alert}");
    }
    assert!(rules.contains("[600s]) >= 4"), "{rules}");
}
