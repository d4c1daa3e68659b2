//! The health page (`spec/history.md`) of a real scadabridge process, as an
//! operator's browser shows it: `/health/ui` on the management port, loaded
//! in headless Chromium (Debian's, installed by `tests/run.sh`), and
//! asserted on the DOM after the page's scripts read `/health/history`.

mod common;

use common::{DEADLINE, SqliteLock, launch, start_warm};
use serde_json::Value;
use zb_health_testkit::dom::{cell, element, text};
use zb_health_testkit::{ServiceProcess, browser, request};

/// The entries scadabridge's manifest declares, in their tiers' order.
const ENTRIES: [&str; 4] = ["database", "cluster-membership", "plc-link", "active-node"];

/// The page's DOM once it has loaded and `done` accepts it.
fn page_until(node: &ServiceProcess, what: &str, done: impl Fn(&str) -> bool) -> String {
    let url = format!("http://{}/health/ui", node.management);
    let dom = browser::dump_dom_until(&url, 1200, 900, |dom| {
        dom.contains(browser::LOADED) && done(dom)
    });
    assert!(
        !dom.contains("data-error="),
        "{what}: the page failed:\n{dom}"
    );
    dom
}

fn row<'a>(dom: &'a str, entry: &str) -> &'a str {
    element(dom, &format!("<tr class=\"entry\" data-entry=\"{entry}\""))
}

/// The `data-status` of `entry`'s row, if the page shows one.
fn shown_status<'a>(dom: &'a str, entry: &str) -> Option<&'a str> {
    let open = format!("<tr class=\"entry\" data-entry=\"{entry}\" data-status=\"");
    let at = dom.find(&open)? + open.len();
    dom[at..].split('"').next()
}

fn flaps_on_page(dom: &str, entry: &str) -> u64 {
    let flaps = cell(row(dom, entry), "entry-flaps");
    flaps
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("flaps of {entry} is not a number: {flaps:?}"))
}

/// The probe's record in the JSON the page reads.
fn history_entry(node: &ServiceProcess, entry: &str) -> Value {
    let answer = request(node.management, "GET", "/health/history", "").unwrap();
    assert_eq!(answer.status, 200);
    let doc = answer.json();
    doc["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == entry)
        .unwrap_or_else(|| panic!("no {entry} in {doc}"))
        .clone()
}

/// Every entry is on the page with its status in words; a locked SQLite
/// file turns the database entry Unhealthy with the transition listed,
/// and its release turns it Healthy again, each change one more flap.
#[test]
fn the_page_shows_every_entry_and_a_locked_database_as_a_transition_and_a_flap() {
    let node = start_warm(&launch());
    // The kubelet's part: the tiers are asked (the page itself never runs
    // a probe, so without a reader its history would not move).
    for path in ["/health/ready", "/health/active", "/healthz"] {
        node.until_status(path, 200, DEADLINE);
    }
    let dom = page_until(&node, "warm", |dom| {
        ENTRIES
            .iter()
            .all(|e| shown_status(dom, e) == Some("Healthy"))
    });
    for entry in ENTRIES {
        let status = cell(row(&dom, entry), "entry-status");
        assert!(status.contains("Healthy"), "{entry}: {status:?}");
    }
    let tier = text(element(&dom, "<div class=\"tier\" data-tier=\"ready\""));
    assert!(tier.contains("Healthy") && tier.contains("200"), "{tier}");
    let before = flaps_on_page(&dom, "database");
    assert_eq!(history_entry(&node, "database")["flaps"], before);

    // Another connection holds the file's exclusive lock: the probe's read
    // cannot proceed (as in `single_node`).
    let lock = SqliteLock::hold(&node);
    node.until_status("/health/ready", 503, DEADLINE);
    let dom = page_until(&node, "locked", |dom| {
        shown_status(dom, "database") == Some("Unhealthy")
    });
    let status = cell(row(&dom, "database"), "entry-status");
    assert!(status.contains("Unhealthy"), "{status:?}");
    let transition = text(element(
        &dom,
        "<li class=\"transition\" data-entry=\"database\" data-to=\"Unhealthy\"",
    ));
    assert!(transition.contains("database"), "{transition}");
    // A timestamp: the date the page writes, 2026-12-01 12:00:00.
    assert!(
        transition
            .split_whitespace()
            .any(|w| w.len() == 10 && w.as_bytes()[4] == b'-' && w.as_bytes()[7] == b'-'),
        "{transition}"
    );
    let locked = flaps_on_page(&dom, "database");
    assert_eq!(locked, before + 1, "one transition, one flap");
    // The raw error (SQLite's "database is locked") is in no page.
    assert!(!dom.to_lowercase().contains("locked"), "{dom}");

    lock.release();
    node.until_status("/health/ready", 200, DEADLINE);
    let dom = page_until(&node, "released", |dom| {
        shown_status(dom, "database") == Some("Healthy")
    });
    assert_eq!(flaps_on_page(&dom, "database"), locked + 1);
    assert!(
        dom.contains("<li class=\"transition\" data-entry=\"database\" data-to=\"Healthy\""),
        "the recovery is listed too"
    );
    let json = history_entry(&node, "database");
    assert_eq!(json["flaps"], locked + 1);
    assert_eq!(json["status"], "Healthy");
}
