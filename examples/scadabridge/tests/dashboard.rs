//! `zb-health dashboard` over three real scadabridge pods
//! (`spec/history.md`): a three-node cluster on loopback, each pod's
//! `/health/history` named by its own address (never a Service that picks
//! one), one pod stopped with SIGTERM. The aggregate is read over a real
//! socket and its page in headless Chromium. Each pod's history lists every
//! member with the ready verdict it gossips over real chitchat on loopback
//! UDP.

mod common;

use common::{DEADLINE, launch};
use zb_health_testkit::dashboard::{Dashboard, cli_binary};
use zb_health_testkit::dom::{element, text};
use zb_health_testkit::{browser, eventually, start_cluster};

#[test]
fn three_pods_one_stopped_the_dashboard_degrades_only_that_one() {
    let mut nodes = start_cluster(&launch(), 3);
    for node in &nodes {
        node.until_status("/health/ready", 200, DEADLINE);
    }
    let urls: Vec<String> = nodes
        .iter()
        .map(|n| format!("http://{}/health/history", n.management))
        .collect();
    // Each pod's page shows every member's ready verdict, as the members
    // gossip it (the kubelet's readiness requests above made each one).
    for node in &nodes {
        eventually(
            "every member's ready verdict in the gossip",
            DEADLINE,
            || {
                let doc = node.get_management("/health/history").json();
                let members = doc["cluster"]["members"].as_array()?.clone();
                (members.len() == 3 && members.iter().all(|m| m["ready"] == "Healthy"))
                    .then_some(())
            },
        );
    }
    let dashboard = Dashboard::start(&cli_binary(), &urls);
    eventually("every pod answers the dashboard", DEADLINE, || {
        (dashboard.states()? == ["answering"; 3]).then_some(())
    });

    // The third pod goes away as Kubernetes stops it.
    nodes[2].sigterm();
    nodes[2].wait_exit(DEADLINE);
    let json = eventually("the stopped pod is unreachable", DEADLINE, || {
        let json = dashboard.history()?.json();
        (json["services"][2]["state"] == "unreachable").then_some(json)
    });
    let services = json["services"].as_array().expect("services");
    for (i, service) in services.iter().enumerate().take(2) {
        assert_eq!(service["url"], urls[i].as_str());
        assert_eq!(service["state"], "answering", "{service}");
        assert_eq!(service["history"]["service"], "scadabridge");
        let names: Vec<&str> = service["history"]["probes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert!(names.contains(&"database"), "{names:?}");
        // Each pod's own cluster view: three members, one of them active.
        let members = service["history"]["cluster"]["members"].as_array().unwrap();
        assert!(members.iter().filter(|m| m["active"] == true).count() <= 1);
    }
    let stopped = &services[2];
    assert!(stopped["lastAnsweredMs"].is_u64(), "{stopped}");
    assert!(stopped["error"].is_string(), "{stopped}");
    // What it said last is kept: its entries are still there to read.
    assert_eq!(stopped["history"]["service"], "scadabridge");

    let dom = browser::dump_dom_until(&format!("http://{}/", dashboard.addr), 1200, 900, |dom| {
        dom.contains(browser::LOADED) && dom.contains("data-state=\"unreachable\"")
    });
    assert_eq!(
        dom.matches("<section class=\"service\" data-service=\"scadabridge\"")
            .count(),
        2,
        "two pods answering"
    );
    let gone = element(
        &dom,
        "<section class=\"service stale\" data-service=\"scadabridge\"",
    );
    assert!(
        gone.contains(&urls[2]),
        "the stopped pod is named by its URL"
    );
    assert!(text(element(gone, "<span class=\"last-answered\"")).starts_with("last answered"));
    assert!(gone.contains("<tr class=\"entry\" data-entry=\"database\""));
}

/// `zb-health dashboard --discover` given one pod's management address:
/// the pods publish their history URLs in gossip, so the dashboard finds
/// the other two; a pod stopped with SIGTERM leaves the cluster (leaving,
/// then unreachable) and the page after `--forget-after`.
#[test]
fn one_pods_address_finds_the_fleet_and_a_departed_pod_goes() {
    let mut nodes = start_cluster(&launch(), 3);
    for node in &nodes {
        node.until_status("/health/ready", 200, DEADLINE);
    }
    let history =
        |n: &zb_health_testkit::ServiceProcess| format!("http://{}/health/history", n.management);
    let dashboard = Dashboard::start_with(
        &cli_binary(),
        &[format!("http://{}", nodes[0].management)],
        &["--discover", "--forget-after", "2s"],
    );
    let mut expected: Vec<String> = nodes.iter().map(history).collect();
    expected.sort();
    eventually("the dashboard polls all three pods", DEADLINE, || {
        let pods = dashboard.pods()?;
        let mut urls: Vec<String> = pods.iter().map(|(u, _)| u.clone()).collect();
        urls.sort();
        (urls == expected && pods.iter().all(|(_, s)| s == "answering")).then_some(())
    });
    let json = dashboard.get("/history").expect("the fleet").json();
    let services = json["services"].as_array().unwrap();
    assert_eq!(json["discover"], true);
    assert_eq!(services[0]["given"], true);
    assert!(services[1..].iter().all(|s| s["given"] == false));
    assert!(
        services
            .iter()
            .all(|s| s["summary"]["service"] == "scadabridge")
    );

    // The third pod goes away as Kubernetes stops it: it is shown
    // unreachable while its peers still list it, and gone after.
    let gone = history(&nodes[2]);
    nodes[2].sigterm();
    nodes[2].wait_exit(DEADLINE);
    eventually("the stopped pod leaves the page", DEADLINE, || {
        let pods = dashboard.pods()?;
        (pods.len() == 2 && pods.iter().all(|(u, s)| *u != gone && s == "answering")).then_some(())
    });
}
