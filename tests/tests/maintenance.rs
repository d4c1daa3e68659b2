//! Maintenance mode over real sockets on 127.0.0.1 (`spec/lifecycle.md`,
//! maintenance mode): an operator with the bearer token takes a pod out of
//! rotation on the management port, for a bounded time; anyone else gets
//! what an unknown path gets.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use support::{Wire, fixed, request, until_status};
use zb_health::lifecycle::Drain;
use zb_health::prelude::{HealthRegistry, HealthStatus, Tag, TagSet, ZbHealth};
use zb_health::server::ZbHealthServer;
use zb_health::spec::Disclosure;
use zb_health::token::BearerToken;
use zb_health_testkit::http::request_with_headers_and_body;

const TOKEN: &str = "operator-s3cret";
const PATH: &str = "/health/maintenance";

/// A service with a healthy ready probe and a healthy active probe, its
/// application port at `names`, its management port at `full` with the
/// history on, and the bearer token: (application, management) addresses.
fn service() -> (HealthRegistry, SocketAddr, SocketAddr) {
    let registry = HealthRegistry::new();
    registry
        .add(fixed("database", HealthStatus::Healthy))
        .unwrap();
    registry
        .add(fixed("primary", HealthStatus::Healthy).tags(TagSet::of(&[Tag::Active])))
        .unwrap();
    let application = ZbHealth::new(registry.clone())
        .disclosure(Disclosure::Names)
        .build()
        .unwrap();
    let management = ZbHealth::new(registry.clone())
        .history(true)
        .build()
        .unwrap();
    let server = ZbHealthServer::new(registry.clone(), application, Drain::new(Duration::ZERO))
        .management_endpoints(management)
        .bearer_token(BearerToken::new(TOKEN).unwrap());
    let (app, management, _running) = support::serve_both_ports(server);
    (registry, app, management)
}

async fn call(addr: SocketAddr, method: &str, authorization: &str, body: &str) -> Wire {
    let (method, authorization, body) =
        (method.to_owned(), authorization.to_owned(), body.to_owned());
    tokio::task::spawn_blocking(move || {
        let headers: Vec<(&str, &str)> = if authorization.is_empty() {
            Vec::new()
        } else {
            vec![("Authorization", authorization.as_str())]
        };
        request_with_headers_and_body(addr, &method, PATH, &headers, &body).unwrap()
    })
    .await
    .unwrap()
}

fn bearer() -> String {
    format!("Bearer {TOKEN}")
}

/// The status and header names of an answer, without the date: what an
/// unknown path's answer is compared on, with the body.
fn shape(wire: &Wire) -> (u16, Vec<String>, String) {
    let mut names: Vec<String> = wire
        .headers
        .iter()
        .map(|(k, _)| k.to_ascii_lowercase())
        .filter(|k| k != "date")
        .collect();
    names.sort();
    (wire.status, names, wire.text())
}

/// One request on a kept-alive connection (no `Connection: close` asked
/// for): whether the server answered `Connection: close`.
fn closes_kept_alive(addr: SocketAddr, path: &str) -> bool {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    while !raw.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "closed before the head");
        raw.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&raw)
        .to_ascii_lowercase()
        .contains("connection: close")
}

#[actix_web::test]
async fn without_the_token_the_controls_answer_as_an_unknown_path_and_change_nothing() {
    let (registry, app, management) = service();
    let unknown = request(management, "GET", "/health/no-such-path").await;
    assert_eq!(unknown.status, 404);
    let body = r#"{"reason": "kernel patch", "ttl": "10m"}"#;
    for method in ["GET", "POST", "DELETE", "PUT"] {
        for authorization in ["", "Bearer wrong", "Basic b3BlcmF0b3I6czNjcmV0", TOKEN] {
            let case = format!("{method} with {authorization:?}");
            let wire = call(management, method, authorization, body).await;
            assert_eq!(shape(&wire), shape(&unknown), "{case}");
            assert!(!wire.text().contains(TOKEN), "{case}");
        }
        // Never on the application port, not even with the token.
        let wire = call(app, method, &bearer(), body).await;
        assert_eq!(wire.status, 404, "{method} on the application port");
    }
    assert_eq!(registry.lifecycle().maintenance(), None);
    assert_eq!(request(app, "GET", "/health/ready").await.status, 200);
}

#[actix_web::test]
async fn a_bad_request_gets_a_400_naming_its_field_and_changes_nothing() {
    let (registry, app, management) = service();
    let long = format!(r#"{{"reason": "{}", "ttl": "10m"}}"#, "x".repeat(81));
    let huge = format!(
        r#"{{"reason": "patch", "ttl": "10m", "pad": "{}"}}"#,
        "x".repeat(5000)
    );
    let cases = [
        ("{}", "reason"),
        (r#"{"reason": "kernel patch"}"#, "ttl"),
        (r#"{"ttl": "10m"}"#, "reason"),
        (r#"{"reason": "   ", "ttl": "10m"}"#, "reason"),
        (long.as_str(), "reason"),
        (r#"{"reason": "a\nb", "ttl": "10m"}"#, "reason"),
        (r#"{"reason": 7, "ttl": "10m"}"#, "reason"),
        (r#"{"reason": "patch", "ttl": "0s"}"#, "ttl"),
        (r#"{"reason": "patch", "ttl": "1441m"}"#, "ttl"),
        (r#"{"reason": "patch", "ttl": "600"}"#, "ttl"),
        (r#"{"reason": "patch", "ttl": "soon"}"#, "ttl"),
        ("not json", "body"),
        ("[]", "body"),
        (huge.as_str(), "body"),
    ];
    for (body, field) in cases {
        let wire = call(management, "POST", &bearer(), body).await;
        let case = format!("{body:.60}");
        assert_eq!(wire.status, 400, "{case}: {}", wire.text());
        assert_eq!(wire.json()["error"]["field"], field, "{case}");
        assert!(wire.json()["error"]["message"].is_string(), "{case}");
        assert_eq!(wire.header("cache-control"), Some("no-store"), "{case}");
        assert_eq!(registry.lifecycle().maintenance(), None, "{case}");
    }
    assert_eq!(request(app, "GET", "/health/ready").await.status, 200);
    assert!(!closes_kept_alive(app, "/health/ready"));
}

#[actix_web::test]
async fn maintenance_takes_ready_out_until_ended_and_leaves_live_and_active() {
    let (registry, app, management) = service();
    let wire = call(
        management,
        "POST",
        &bearer(),
        r#"{"reason": "kernel patch", "ttl": "10m"}"#,
    )
    .await;
    assert_eq!(wire.status, 200, "{}", wire.text());
    let window = wire.json()["maintenance"].clone();
    assert_eq!(window["reason"], "kernel patch");
    let until = window["until"].as_str().unwrap().to_owned();
    assert!(until.ends_with('Z'), "{until}");
    assert!(registry.lifecycle().maintenance().is_some());

    // Ready is out, with the entry first; the description where the level
    // shows descriptions (management: full), the name alone at `names`.
    let ready = request(management, "GET", "/health/ready").await;
    assert_eq!(ready.status, 503);
    let body = ready.json();
    assert_eq!(support::entry_names(&body), ["maintenance", "database"]);
    assert_eq!(
        body["entries"]["maintenance"]["description"],
        format!("maintenance: kernel patch, until {until}")
    );
    let public = request(app, "GET", "/health/ready").await;
    assert_eq!(public.status, 503);
    assert!(public.json()["entries"]["maintenance"]["description"].is_null());
    assert!(!public.text().contains("kernel patch"));
    // Live and active are untouched.
    assert_eq!(request(app, "GET", "/healthz").await.status, 200);
    assert_eq!(request(app, "GET", "/health/active").await.status, 200);
    // Kept-alive clients are sent elsewhere, as in the drain.
    assert!(closes_kept_alive(app, "/health/active"));
    // GET reads it back; the history shows it and its start.
    let read = call(management, "GET", &bearer(), "").await;
    assert_eq!(read.json()["maintenance"], window);
    let history = request(management, "GET", "/health/history").await.json();
    assert_eq!(
        history["lifecycle"]["maintenance"]["reason"],
        "kernel patch"
    );
    let kinds = |h: &serde_json::Value| -> Vec<String> {
        h["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(kinds(&history).contains(&"maintenance-started".to_owned()));

    // Ended: ready answers from the probes again, connections stay.
    let ended = call(management, "DELETE", &bearer(), "").await;
    assert_eq!(ended.status, 200);
    assert_eq!(ended.json()["ended"], window);
    assert!(ended.json()["maintenance"].is_null());
    assert_eq!(request(app, "GET", "/health/ready").await.status, 200);
    assert!(!closes_kept_alive(app, "/health/ready"));
    let history = request(management, "GET", "/health/history").await.json();
    assert!(history["lifecycle"]["maintenance"].is_null());
    assert!(kinds(&history).contains(&"maintenance-ended".to_owned()));
    // Ending again is no error and ends nothing.
    let again = call(management, "DELETE", &bearer(), "").await;
    assert_eq!(
        (again.status, again.json()["ended"].clone()),
        (200, serde_json::Value::Null)
    );
}

#[actix_web::test]
async fn maintenance_ends_by_itself_at_its_ttl() {
    let (registry, app, management) = service();
    let wire = call(
        management,
        "POST",
        &bearer(),
        r#"{"reason": "reboot", "ttl": "1s"}"#,
    )
    .await;
    assert_eq!(wire.status, 200, "{}", wire.text());
    assert_eq!(request(app, "GET", "/health/ready").await.status, 503);
    // Back without anyone ending it (the poll has its own deadline).
    until_status(app, "/health/ready", 200).await;
    assert_eq!(registry.lifecycle().maintenance(), None);
    let read = call(management, "GET", &bearer(), "").await;
    assert!(read.json()["maintenance"].is_null());
}

/// `/health/step-down` (with a cluster view): the same requests, limits and
/// refusals as maintenance; a step-down makes the next node in line the
/// active one in this node's view, and ending it restores this one.
#[actix_web::test]
async fn the_step_down_control_hands_the_active_role_over_with_the_token_only() {
    use std::sync::Arc;
    use zb_health::cluster::{
        ClusterActiveNode, ClusterState, ClusterView, InMemoryClusterView, Member, MemberStatus,
        StepDown,
    };
    let member = |address: &str, age| Member::new(address, MemberStatus::Up, age);
    let view = Arc::new(InMemoryClusterView::with_state(ClusterState {
        self_address: "10.0.0.1:7000".into(),
        members: vec![member("10.0.0.1:7000", 1), member("10.0.0.2:7000", 2)],
    }));
    let rule = ClusterActiveNode::unscoped();
    let active = || {
        rule.decide(&view.state().unwrap())
            .active_node()
            .map(str::to_owned)
    };
    let registry = HealthRegistry::new();
    registry
        .add(fixed("database", HealthStatus::Healthy))
        .unwrap();
    let server = ZbHealthServer::new(
        registry.clone(),
        zb_health::prelude::map_zb_health(registry.clone()),
        Drain::new(Duration::ZERO),
    )
    .bearer_token(BearerToken::new(TOKEN).unwrap())
    .step_down(StepDown::new(view.clone()));
    let (_app, management, _running) = support::serve_both_ports(server);
    let step_down = |method: &'static str, authorization: String, body: &'static str| {
        tokio::task::spawn_blocking(move || {
            let headers = [("Authorization", authorization.as_str())];
            request_with_headers_and_body(management, method, "/health/step-down", &headers, body)
                .unwrap()
        })
    };
    let unknown = request(management, "GET", "/health/no-such-path").await;
    let wrong = step_down(
        "POST",
        "Bearer wrong".into(),
        r#"{"reason": "patch", "ttl": "10m"}"#,
    )
    .await
    .unwrap();
    assert_eq!(shape(&wrong), shape(&unknown));
    let bad = step_down("POST", bearer(), r#"{"reason": "patch", "ttl": "0s"}"#)
        .await
        .unwrap();
    assert_eq!(
        (bad.status, bad.json()["error"]["field"].clone()),
        (400, "ttl".into())
    );
    assert_eq!(active().as_deref(), Some("10.0.0.1:7000"));

    let on = step_down(
        "POST",
        bearer(),
        r#"{"reason": "kernel patch", "ttl": "10m"}"#,
    )
    .await
    .unwrap();
    assert_eq!(on.status, 200, "{}", on.text());
    assert_eq!(on.json()["stepDown"]["reason"], "kernel patch");
    assert_eq!(active().as_deref(), Some("10.0.0.2:7000"));
    let read = step_down("GET", bearer(), "").await.unwrap();
    assert_eq!(read.json()["stepDown"], on.json()["stepDown"]);
    let off = step_down("DELETE", bearer(), "").await.unwrap();
    assert_eq!(off.json()["ended"], on.json()["stepDown"]);
    assert_eq!(active().as_deref(), Some("10.0.0.1:7000"));
}
