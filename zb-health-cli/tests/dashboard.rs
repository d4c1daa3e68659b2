//! `zb-health dashboard` as a binary: three fixture services on 127.0.0.1
//! (std servers answering `tests/fixtures/history/full.json` under three
//! names), one stopped after it answered; the aggregate read over a real
//! socket and the page's DOM in headless Chromium.

mod common;

use std::path::Path;

use common::fixture::FixtureServer;
use common::{text as utf8, zb_health};
use zb_health_testkit::dashboard::Dashboard;
use zb_health_testkit::dom::{body, element, text};
use zb_health_testkit::{PATIENCE, browser, eventually, request};

/// A fixture service named `name` at `/health/history`, plus a page that
/// is not a history document at `/other`.
fn service(name: &str) -> FixtureServer {
    let path = common::root().join("tests/fixtures/history/full.json");
    let full = std::fs::read_to_string(path).expect("the full fixture");
    let named = full.replace(
        "\"service\": \"scadabridge\"",
        &format!("\"service\": \"{name}\""),
    );
    assert_ne!(named, full);
    FixtureServer::start(vec![
        ("/health/history", "application/json", named),
        ("/other", "text/html", "<html>not history</html>".into()),
        (
            "/json",
            "application/json",
            "{\"status\":\"Healthy\"}".into(),
        ),
    ])
}

#[test]
fn a_stopped_service_is_unreachable_with_its_last_document_and_the_others_answer() {
    let (alpha, beta, mut gamma) = (service("alpha"), service("beta"), service("gamma"));
    let urls = [&alpha, &beta, &gamma].map(|s| s.url("health/history"));
    let dashboard = Dashboard::start(Path::new(env!("CARGO_BIN_EXE_zb-health")), &urls);

    eventually("every service answers", PATIENCE, || {
        (dashboard.states()? == ["answering"; 3]).then_some(())
    });
    gamma.stop();
    let json = eventually("the stopped service is unreachable", PATIENCE, || {
        let json = dashboard.history()?.json();
        (json["services"][2]["state"] == "unreachable").then_some(json)
    });
    assert!(json["nowMs"].is_u64());
    let services = json["services"].as_array().expect("services");
    assert_eq!(services.len(), 3);
    for (i, name) in ["alpha", "beta"].iter().enumerate() {
        assert_eq!(services[i]["url"], urls[i].as_str());
        assert_eq!(services[i]["state"], "answering");
        assert!(services[i]["error"].is_null());
        assert!(services[i]["lastAnsweredMs"].is_u64());
        assert_eq!(services[i]["history"]["service"], *name);
    }
    let stopped = &services[2];
    assert_eq!(stopped["url"], urls[2].as_str());
    assert!(stopped["lastAnsweredMs"].is_u64(), "{stopped}");
    assert!(
        stopped["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("unreachable: ")),
        "{stopped}"
    );
    // Its last document is kept, verbatim.
    assert_eq!(stopped["history"]["service"], "gamma");
    assert_eq!(stopped["history"]["probes"][0]["name"], "database");

    // The page, from the dashboard itself: one section per service.
    let dom = browser::dump_dom(&format!("http://{}/", dashboard.addr));
    for name in ["alpha", "beta"] {
        let section = element(
            &dom,
            &format!("<section class=\"service\" data-service=\"{name}\""),
        );
        assert!(section.contains("<span class=\"service-state\" data-state=\"answering\">"));
        assert!(section.contains("<tr class=\"entry\" data-entry=\"database\""));
    }
    let gone = element(
        &dom,
        "<section class=\"service stale\" data-service=\"gamma\"",
    );
    assert!(
        gone.contains("<span class=\"service-state\" data-state=\"unreachable\">"),
        "{}",
        body(&dom)
    );
    assert!(text(element(gone, "<span class=\"last-answered\"")).starts_with("last answered 20"));
    // The last document, still shown (greyed by its class).
    assert!(
        gone.contains("<tr class=\"entry\" data-entry=\"database\" data-status=\"Unhealthy\">")
    );
    assert!(text(element(&dom, "<p id=\"summary\"")).contains("gamma: unreachable"));
}

#[test]
fn a_url_that_is_not_a_history_endpoint_is_that_services_error() {
    let server = service("alpha");
    let urls = [
        server.url("other"),
        server.url("missing"),
        server.url("json"),
        server.url("health/history"),
    ];
    let dashboard = Dashboard::start(Path::new(env!("CARGO_BIN_EXE_zb-health")), &urls);
    // Each service is polled on its own: wait until every one has been
    // polled once, not only the good one.
    let json = eventually(
        "every service polled, the good one answering",
        PATIENCE,
        || {
            let json = dashboard.history()?.json();
            let polled = (0..3).all(|i| json["services"][i]["error"] != "no answer yet");
            (polled && json["services"][3]["state"] == "answering").then_some(json)
        },
    );
    let error = |i: usize| json["services"][i]["error"].as_str().map(str::to_owned);
    for (i, why) in [
        (0, "not a history document: not a JSON object"),
        (1, "not a history endpoint: HTTP 404 Not Found"),
        (2, "not a history document: no `nowMs`"),
    ] {
        assert_eq!(json["services"][i]["state"], "unreachable");
        assert_eq!(error(i).as_deref(), Some(why), "{}", urls[i]);
        assert!(json["services"][i]["history"].is_null());
        assert!(json["services"][i]["lastAnsweredMs"].is_null());
    }

    // The page routes and the rest.
    for path in ["/", "/ui"] {
        let page = request(dashboard.addr, "GET", path, "").expect("an answer");
        assert_eq!(page.status, 200);
        assert_eq!(
            page.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        assert_eq!(page.header("cache-control"), Some("no-store"));
        assert_eq!(page.text(), zb_health_spec::history::PAGE);
    }
    let head = request(dashboard.addr, "HEAD", "/history", "").expect("an answer");
    assert_eq!(
        (head.status, head.header("content-type"), head.body.len()),
        (200, Some("application/json"), 0)
    );
    assert_eq!(
        request(dashboard.addr, "GET", "/nope", "")
            .expect("an answer")
            .status,
        404
    );
    assert_eq!(
        request(dashboard.addr, "POST", "/history", "{}")
            .expect("an answer")
            .status,
        405
    );
}

#[test]
fn only_http_urls_and_a_usable_listen_address() {
    let out = zb_health(&["dashboard", "https://127.0.0.1:8081/health/history"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = utf8(&out.stderr);
    assert!(
        stderr.contains("https is not supported") && stderr.contains("http://"),
        "{stderr}"
    );
    let out = zb_health(&["dashboard", "ftp://h/x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(utf8(&out.stderr).contains("does not start with `http://`"));

    // A port someone else holds.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = taken.local_addr().expect("its address").to_string();
    let out = zb_health(&["dashboard", "http://127.0.0.1:1/h", "--listen", &addr]);
    assert_eq!(out.status.code(), Some(2));
    assert!(utf8(&out.stderr).starts_with(&format!("error: cannot listen on {addr}")));
}
