//! `zb-health dashboard` over 300 pods: synthetic pods
//! (`zb_health_testkit::fleet`, real registries' history documents over
//! real sockets on 127.0.0.1), the dashboard as a binary, its page in
//! headless Chromium. The page shows the unhealthy pods first, its filter
//! narrows the list, and a pod that stops answering (its port open, no
//! answer) is shown unreachable once its poll's deadline passes, while
//! the other pods go on being polled.

use std::path::Path;
use std::time::Duration;

use zb_health_testkit::dashboard::Dashboard;
use zb_health_testkit::dom::{count, element, text, try_element};
use zb_health_testkit::fleet::{Fleet, FleetSpec};
use zb_health_testkit::{PATIENCE, browser, eventually};

const PODS: usize = 300;
const UNHEALTHY: usize = 7;
const DEGRADED: usize = 13;

fn fleet() -> Fleet {
    Fleet::start(&FleetSpec {
        pods: PODS,
        probes: 3,
        unhealthy: UNHEALTHY,
        degraded: DEGRADED,
        answer_every: Duration::from_secs(5),
    })
}

/// The page's DOM at `fragment` once its fleet list holds `pods` pods.
fn page(dashboard: &Dashboard, fragment: &str, done: impl Fn(&str) -> bool) -> String {
    let url = format!("http://{}/{fragment}", dashboard.addr);
    browser::dump_dom_until(&url, 1200, 900, |dom| {
        dom.contains(browser::LOADED) && dom.contains(&format!("data-pods=\"{PODS}\"")) && done(dom)
    })
}

#[test]
fn three_hundred_pods_unhealthy_first_filtered_and_a_hung_one_unreachable() {
    let fleet = fleet();
    let dashboard = Dashboard::start_with(
        Path::new(env!("CARGO_BIN_EXE_zb-health")),
        &fleet.urls(),
        &["--period", "500ms", "--timeout", "1s"],
    );
    eventually("every pod answers", PATIENCE, || {
        let states = dashboard.states()?;
        (states.len() == PODS && states.iter().all(|s| s == "answering")).then_some(())
    });

    // Unhealthy first, then degraded, then healthy; 50 rows a page.
    let dom = page(&dashboard, "", |_| true);
    let fleet_el = element(&dom, "<div id=\"fleet\"");
    let groups: Vec<&str> = ["unhealthy", "degraded", "healthy"]
        .into_iter()
        .filter(|g| fleet_el.contains(&format!("<tbody class=\"group\" data-group=\"{g}\"")))
        .collect();
    assert_eq!(groups, ["unhealthy", "degraded", "healthy"]);
    let at = |g: &str| {
        fleet_el
            .find(&format!("<tbody class=\"group\" data-group=\"{g}\""))
            .unwrap()
    };
    assert!(at("unhealthy") < at("degraded") && at("degraded") < at("healthy"));
    assert_eq!(count(fleet_el, "<tr class=\"pod\""), 50);
    let unhealthy = element(fleet_el, "<tbody class=\"group\" data-group=\"unhealthy\"");
    assert_eq!(count(unhealthy, "<tr class=\"pod\""), UNHEALTHY);
    assert!(text(unhealthy).contains(&format!("Unhealthy ({UNHEALTHY})")));
    // The failing probe is named on its row.
    assert!(unhealthy.contains("data-entry=\"probe-0\""));
    assert!(text(element(&dom, "<span id=\"page-info\"")).contains("page 1 of 6"));
    let summary = text(element(&dom, "<p id=\"summary\""));
    assert_eq!(
        summary,
        format!("{PODS} pods: {UNHEALTHY} unhealthy, {DEGRADED} degraded, 280 healthy")
    );
    // Only the list: no pod's details unless it is opened.
    assert!(try_element(&dom, "<section class=\"service").is_none());

    // The filter, by name, and by status; and an opened pod's details.
    let dom = page(&dashboard, "#q=pod-150&open=150", |dom| {
        dom.contains("data-shown=\"1\"") && dom.contains("<section class=\"service\"")
    });
    let row = element(&dom, "<tr class=\"pod\"");
    assert!(text(row).contains("pod-150"), "{row}");
    let details = element(&dom, "<section class=\"service\" data-service=\"pod-150\"");
    assert!(details.contains("<tr class=\"entry\" data-entry=\"probe-2\""));
    let dom = page(&dashboard, "#status=degraded", |dom| {
        dom.contains(&format!("data-shown=\"{DEGRADED}\""))
    });
    assert_eq!(count(&dom, "<tr class=\"pod\""), DEGRADED);
    // One option per group, each with its count, relabelled in place.
    let select = element(&dom, "<select id=\"status-filter\"");
    assert_eq!(count(select, "<option"), 6, "{select}");
    assert!(
        text(select).contains(&format!("Degraded ({DEGRADED})"))
            && text(select).contains(&format!("All ({PODS})")),
        "{select}"
    );
    assert_eq!(
        count(&dom, "<tr class=\"pod\" data-pod=\""),
        count(&dom, "data-group=\"degraded\" data-url=")
    );

    // Pod 42 stops answering with its port open: unreachable once its
    // poll's deadline has passed, and the others are still polled.
    let before = dashboard.history().expect("the fleet").json();
    fleet.hang(42);
    let json = eventually("the hung pod is unreachable", PATIENCE, || {
        let json = dashboard.history()?.json();
        (json["services"][42]["state"] == "unreachable").then_some(json)
    });
    let error = json["services"][42]["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("timed out: "), "{error}");
    eventually("the other pods are polled on", PATIENCE, || {
        let now = dashboard.history()?.json();
        let advanced = (0..PODS).filter(|&i| i != 42).all(|i| {
            now["services"][i]["lastAnsweredMs"].as_u64()
                > before["services"][i]["lastAnsweredMs"].as_u64()
        });
        advanced.then_some(())
    });
    let dom = page(&dashboard, "#q=pod-042", |dom| {
        dom.contains("data-shown=\"1\"") && dom.contains("data-group=\"unreachable\"")
    });
    let row = element(&dom, "<tr class=\"pod\"");
    assert!(text(element(row, "<td class=\"pod-state\"")).contains("unreachable"));
    assert!(text(row).contains("timed out"), "{row}");
}
