//! The health page (`zb_health_spec::history::PAGE`) in headless Chromium:
//! served with a fixture history document (`tests/fixtures/history/`) from
//! a std server on 127.0.0.1, its DOM read after its scripts ran. The
//! page's hooks are the contract's (`<tr class="entry" data-entry=…>`, …).

mod common;

use common::fixture::FixtureServer;
use zb_health_spec::history::PAGE;
use zb_health_testkit::browser;
use zb_health_testkit::dom::{body, body_tag, cell, count, element, text, try_element};

fn fixture(name: &str) -> String {
    let path = common::root().join("tests/fixtures/history").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The page at `/health/ui` and `history` at `/health/history`, as
/// zb-health serves them (the page reads its sibling `history`).
fn serve(history: String) -> FixtureServer {
    FixtureServer::start(vec![
        ("/health/ui", "text/html; charset=utf-8", PAGE.to_string()),
        ("/health/history", "application/json", history),
        ("/narrow", "text/html; charset=utf-8", NARROW.to_string()),
    ])
}

/// The page in a 320 px wide frame: headless Chromium lays out a
/// `--dump-dom` window no narrower than 500 px, a frame as narrow as asked.
/// Its script copies the page's layout hooks to its own body, where the
/// dumped DOM shows them (the frame's document is not serialized).
const NARROW: &str = r#"<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" src="/health/ui" style="width:320px;height:900px;border:0"></iframe>
<script>
(function wait() {
  var d = document.getElementById("f").contentDocument;
  var b = d && d.body;
  if (b && b.getAttribute("data-loaded") === "true") {
    ["data-loaded", "data-overflow", "data-viewport"].forEach(function (k) {
      document.body.setAttribute(k, b.getAttribute(k));
    });
  } else setTimeout(wait, 50);
})();
</script></body></html>"#;

fn row<'a>(dom: &'a str, entry: &str, status: &str) -> &'a str {
    element(
        dom,
        &format!("<tr class=\"entry\" data-entry=\"{entry}\" data-status=\"{status}\">"),
    )
}

#[test]
fn the_page_is_self_contained() {
    // The one `://` is the SVG namespace, a name and never fetched.
    assert_eq!(
        PAGE.matches("://").count(),
        PAGE.matches("http://www.w3.org/2000/svg").count(),
        "the page names an external URL"
    );
    for needle in ["<link", " src=", "@import", "url(", "@font-face", "<img"] {
        assert!(!PAGE.contains(needle), "the page contains `{needle}`");
    }
    assert!(PAGE.contains("new URL(\"history\", location.href)"));
    assert!(PAGE.contains("aria-live=\"polite\""));
    assert!(PAGE.contains("prefers-color-scheme: dark"));
    // Data goes in as text, never as markup.
    assert!(!PAGE.contains("innerHTML"));
}

#[test]
fn a_full_history_shows_every_entry_transition_tier_and_member() {
    let server = serve(fixture("full.json"));
    let dom = browser::dump_dom(&server.url("health/ui"));
    let tag = body_tag(&dom);
    assert!(!tag.contains("data-error"), "{tag}\n{}", body(&dom));

    let section = element(
        &dom,
        "<section class=\"service\" data-service=\"scadabridge\"",
    );
    assert!(section.contains("<span class=\"service-state\" data-state=\"answering\">"));

    // Tiers: the verdict and the code.
    let ready = text(element(
        &dom,
        "<div class=\"tier\" data-tier=\"ready\" data-status=\"Unhealthy\"",
    ));
    assert!(
        ready.contains("Unhealthy") && ready.contains("503"),
        "{ready}"
    );
    let live = text(element(
        &dom,
        "<div class=\"tier\" data-tier=\"live\" data-status=\"Healthy\"",
    ));
    assert!(live.contains("Healthy") && live.contains("200"), "{live}");

    // Every entry, its status in words and shape.
    let database = row(&dom, "database", "Unhealthy");
    assert_eq!(cell(database, "entry-status"), "✖ Unhealthy (errored)");
    assert_eq!(cell(database, "entry-description"), "check failed");
    assert_eq!(cell(database, "entry-since"), "for 3m 12s");
    assert_eq!(cell(database, "entry-flaps"), "3");
    assert!(cell(database, "entry-duration").ends_with(" ms"));
    assert!(element(database, "<td class=\"entry-sparkline").contains("<svg"));
    assert_eq!(
        cell(row(&dom, "cluster-membership", "Healthy"), "entry-status"),
        "✔ Healthy"
    );
    let plc = row(&dom, "plc-link", "Degraded");
    assert_eq!(cell(plc, "entry-status"), "▲ Degraded");
    assert_eq!(cell(plc, "entry-flaps"), "1");
    assert_eq!(cell(plc, "entry-since"), "for 1h 0m");
    // A never-run probe: nulls everywhere, and no crash.
    let never = row(&dom, "warm-cache", "none");
    assert_eq!(cell(never, "entry-status"), "? never run");
    assert_eq!(cell(never, "entry-flaps"), "0");
    assert!(row(&dom, "active-node", "Healthy").contains("entry-sparkline"));
    assert_eq!(count(&dom, "<tr class=\"entry\""), 5);

    // The data is text: markup in a description is shown, not parsed.
    assert!(dom.contains("&lt;b&gt;slow&lt;/b&gt;"), "{}", body(&dom));
    assert!(!dom.contains("<b>slow"));

    // Transitions, newest first, each with its timestamp.
    assert_eq!(count(&dom, "<li class=\"transition\""), 5);
    let last = element(
        &dom,
        "<li class=\"transition\" data-entry=\"database\" data-to=\"Unhealthy\">",
    );
    assert!(
        last.contains("<time datetime=\"2025-12-01T19:20:08.123Z\">"),
        "{last}"
    );
    assert!(text(last).contains("✔ Healthy → ✖ Unhealthy (errored) — check failed"));
    assert!(dom.contains("<li class=\"transition\" data-entry=\"plc-link\" data-to=\"Degraded\">"));
    // The first result has no `from`.
    assert!(
        dom.split("<li class=\"transition\"")
            .any(|li| text(li).contains("database first result → ✔ Healthy (completed)")),
        "{}",
        body(&dom)
    );

    // Gates, watchdogs, the drain.
    assert_eq!(count(&dom, "<li class=\"gate\""), 2);
    assert_eq!(count(&dom, "<li class=\"watchdog\""), 2);
    let stalled = text(element(
        &dom,
        "<li class=\"watchdog\" data-stalled=\"true\"",
    ));
    assert!(
        stalled.contains("exporter") && stalled.contains("stalled, no beat yet"),
        "{stalled}"
    );
    assert_eq!(text(element(&dom, "<div class=\"drain\"")), "Not draining");

    // The cluster: who is active, each member's shared verdicts and the
    // ready verdict it gossips, in words.
    let active_row = element(&dom, "<tr class=\"member\" data-active=\"true\"");
    let active = text(active_row);
    assert!(
        active.contains("node-a")
            && active.contains("★ active")
            && active.contains("database: failing"),
        "{active}"
    );
    assert!(cell(active_row, "member-ready").contains("Degraded"));
    assert_eq!(count(&dom, "<tr class=\"member\" data-active=\"false\""), 2);
    let b = text(element(
        &dom,
        "<tr class=\"member\" data-active=\"false\" data-member=\"node-b\"",
    ));
    assert!(b.contains("standby") && b.contains("database: ok"), "{b}");
    let c = element(
        &dom,
        "<tr class=\"member\" data-active=\"false\" data-member=\"node-c\"",
    );
    assert_eq!(cell(c, "member-ready"), "—", "no ready verdict yet");

    // The live summary carries the worst tier verdict in words.
    let summary = text(element(&dom, "<p id=\"summary\""));
    assert_eq!(summary, "scadabridge: ✖ Unhealthy");
}

#[test]
fn a_status_level_history_shows_the_tiers_and_nothing_it_does_not_have() {
    let server = serve(fixture("status.json"));
    let dom = browser::dump_dom(&server.url("health/ui"));
    let tag = body_tag(&dom);
    assert!(!tag.contains("data-error"), "{tag}\n{}", body(&dom));
    // No service name: the section still has one.
    assert!(dom.contains("<section class=\"service\" data-service=\"this service\""));
    assert!(dom.contains("<div class=\"tier\" data-tier=\"ready\" data-status=\"Healthy\""));
    let active = text(element(
        &dom,
        "<div class=\"tier\" data-tier=\"active\" data-status=\"none\"",
    ));
    assert!(active.contains("not answered yet"), "{active}");
    assert!(dom.contains("No entries at this disclosure level."));
    for absent in [
        "<tr class=\"entry\"",
        "<li class=\"gate\"",
        "<div class=\"drain\"",
        "<tr class=\"member\"",
    ] {
        assert!(try_element(&dom, absent).is_none(), "{absent}");
    }
}

#[test]
fn at_320_px_wide_nothing_scrolls_sideways() {
    let server = serve(fixture("full.json"));
    let dom = browser::dump_dom_until(&server.url("narrow"), 1200, 900, |dom| {
        dom.contains(browser::LOADED)
    });
    let tag = body_tag(&dom);
    let viewport: u32 = tag
        .split("data-viewport=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no data-viewport: {tag}"));
    // The frame's width less its vertical scrollbar, if it shows one.
    assert!(viewport <= 320, "{tag}");
    assert!(tag.contains("data-overflow=\"false\""), "{tag}");

    // And wide, the table layout fits too.
    let wide = browser::dump_dom(&server.url("health/ui"));
    assert!(body_tag(&wide).contains("data-overflow=\"false\""));
}

#[test]
fn a_history_that_does_not_answer_is_an_error_on_the_body() {
    // No /health/history route: 404.
    let server = FixtureServer::start(vec![(
        "/health/ui",
        "text/html; charset=utf-8",
        PAGE.to_string(),
    )]);
    let dom = browser::dump_dom_until(&server.url("health/ui"), 1200, 900, |dom| {
        body_tag(dom).contains("data-error=")
    });
    let tag = body_tag(&dom);
    assert!(tag.contains("data-error=\"HTTP 404\""), "{tag}");
    assert!(!tag.contains(browser::LOADED));
    assert!(text(element(&dom, "<p id=\"error\"")).contains("/health/history: HTTP 404"));
}
