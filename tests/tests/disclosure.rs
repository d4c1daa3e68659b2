//! Disclosure levels and response formats over a real socket on 127.0.0.1
//! (BE-HLTH-001, BE-HLTH-007, AT-8): every format × level validates
//! against its schema, keeps the 200/503 mapping and shows exactly what its
//! level allows; `clusterReady` is read from the membership entry of the
//! same report; a custom writer gets the disclosed report; the manifest
//! chooses the same settings.

#[path = "support/formats.rs"]
mod formats;
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use formats::{FORMATS, LEVELS, assert_valid};
use serde_json::{Value, json};
use support::{request, serve, until_status};
use zb_health::cluster::{
    ClusterMembershipProbe, ClusterState, InMemoryClusterView, Member, MemberStatus,
};
use zb_health::prelude::{
    HealthRegistry, HealthStatus, ProbeRegistration, ProbeResult, Tag, TagSet, ZbHealth, from_fn,
};
use zb_health::spec::{Disclosure, ResponseFormat};

use Disclosure::{Full, Names, Status};
use HealthStatus::{Degraded, Healthy, Unhealthy};
use ResponseFormat::{PassFail, Zb};

/// A ready probe answering `status` with a fixed description and `data`.
fn described(name: &'static str, status: HealthStatus) -> ProbeRegistration {
    ProbeRegistration::new(
        name,
        from_fn(move || async move {
            Ok(ProbeResult::new(status)
                .with_description("fixed note")
                .with_data("selfAddress", "127.0.0.1:7000"))
        }),
    )
}

/// `ready` holds `a` (Healthy) and `b` (`worst`); `active` one Healthy probe.
fn registry(worst: HealthStatus) -> HealthRegistry {
    let reg = HealthRegistry::new();
    reg.add(described("a", Healthy)).unwrap();
    reg.add(described("b", worst)).unwrap();
    reg.add(described("node", Healthy).tags(TagSet::ACTIVE))
        .unwrap();
    reg
}

/// The word `format` uses for `status`: the aggregate's (`aggregate`) or
/// an entry's.
fn word(format: ResponseFormat, status: HealthStatus, aggregate: bool) -> &'static str {
    match (format, status) {
        (Zb, s) => s.as_str(),
        (PassFail, Healthy) => "pass",
        (PassFail, Degraded) if aggregate => "pass",
        (PassFail, Degraded) => "warn",
        (PassFail, Unhealthy) => "fail",
    }
}

/// Asserts `entries` shows exactly what `level` allows of the ready
/// probes `a` (Healthy) and `b` (`worst`).
fn assert_entries(format: ResponseFormat, level: Disclosure, worst: HealthStatus, body: &Value) {
    let entries = body["entries"].as_object().unwrap();
    if level == Status {
        assert!(entries.is_empty(), "{body}");
        return;
    }
    let names: Vec<&str> = entries.keys().map(String::as_str).collect();
    assert_eq!(names, ["a", "b"], "{body}");
    for (name, status) in [("a", Healthy), ("b", worst)] {
        let e = &entries[name];
        assert_eq!(e["status"], word(format, status, false), "{body}");
        assert!(e["durationMs"].is_number(), "{body}");
        match level {
            Full => {
                assert_eq!(e["description"], "fixed note", "{body}");
                assert_eq!(
                    e["data"],
                    json!({"selfAddress": "127.0.0.1:7000"}),
                    "{body}"
                );
            }
            _ => {
                assert_eq!(e["description"], Value::Null, "{body}");
                assert!(e.get("data").is_none(), "{body}");
            }
        }
    }
}

#[actix_web::test]
async fn every_format_and_level_keeps_the_status_code_and_validates_against_its_schema() {
    for worst in [Healthy, Degraded, Unhealthy] {
        let ready_code = if worst == Unhealthy { 503 } else { 200 };
        for format in FORMATS {
            for level in LEVELS {
                let endpoints = ZbHealth::new(registry(worst))
                    .format(format)
                    .disclosure(level)
                    .build()
                    .unwrap();
                let server = serve(endpoints);
                let case = format!("{worst:?} {format} {level}");
                for (path, code, aggregate) in [
                    ("/health/ready", ready_code, worst),
                    ("/health/active", 200, Healthy),
                    ("/healthz", 200, Healthy),
                ] {
                    let r = request(server.addr, "GET", path).await;
                    assert_eq!(r.status, code, "{case} {path}");
                    assert_eq!(r.header("content-type"), Some("application/json"), "{case}");
                    assert_eq!(r.header("cache-control"), Some("no-store"), "{case}");
                    let body = r.json();
                    assert_valid(format, &body);
                    assert_eq!(
                        body["status"],
                        word(format, aggregate, true),
                        "{case} {path}"
                    );
                    assert!(body["totalDurationMs"].is_u64(), "{case} {body}");
                    assert!(body.get("clusterReady").is_none(), "{case}: not asked for");
                    if path == "/health/ready" {
                        assert_entries(format, level, worst, &body);
                    }
                }
            }
        }
    }
}

#[actix_web::test]
async fn pass_fail_is_the_http_verdict_on_every_tier_including_a_stalled_live() {
    let reg = registry(Unhealthy);
    let stalls = reg
        .lifecycle()
        .watchdog("consumer", Duration::from_millis(1))
        .unwrap();
    // Its deadline runs from its first beat.
    stalls.beat();
    let server = serve(ZbHealth::new(reg).format(PassFail).build().unwrap());
    for path in ["/health/ready", "/healthz"] {
        let r = until_status(server.addr, path, 503).await;
        let body = r.json();
        assert_valid(PassFail, &body);
        assert_eq!(body["status"], "fail", "{path}: {body}");
    }
    let r = request(server.addr, "GET", "/healthz").await;
    assert_eq!(r.json()["entries"]["consumer"]["status"], "fail");
    let r = request(server.addr, "GET", "/health/active").await;
    assert_eq!((r.status, r.json()["status"].clone()), (200, json!("pass")));
}

#[actix_web::test]
async fn disclosure_is_chosen_per_tier() {
    let reg = registry(Degraded);
    let _beats = reg
        .lifecycle()
        .watchdog("consumer", Duration::from_secs(3600))
        .unwrap();
    let endpoints = ZbHealth::new(reg)
        .tier_disclosure(Tag::Ready, Names)
        .tier_disclosure(Tag::Live, Status)
        .build()
        .unwrap();
    let server = serve(endpoints);
    let ready = request(server.addr, "GET", "/health/ready").await.json();
    assert_entries(Zb, Names, Degraded, &ready);
    let active = request(server.addr, "GET", "/health/active").await.json();
    assert_eq!(active["entries"]["node"]["description"], "fixed note");
    let live = request(server.addr, "GET", "/healthz").await.json();
    assert_eq!(
        live,
        json!({"status": "Healthy", "totalDurationMs": 0, "entries": {}})
    );
}

#[actix_web::test]
async fn a_custom_writer_gets_the_report_as_its_tier_discloses_it() {
    for (level, expected) in [
        (
            Full,
            json!([["a", "fixed note", true], ["b", "fixed note", true]]),
        ),
        (Names, json!([["a", null, false], ["b", null, false]])),
        (Status, json!([])),
    ] {
        let endpoints = ZbHealth::new(registry(Degraded))
            .disclosure(level)
            .writer(
                |report: &zb_health::report::HealthReport,
                 mut response: actix_web::HttpResponseBuilder| {
                    let seen: Vec<Value> = report
                        .entries
                        .iter()
                        .map(|e| json!([&*e.name, e.description.as_deref(), e.data.is_some()]))
                        .collect();
                    response.json(json!({"status": report.status.as_str(), "seen": seen}))
                },
            )
            .build()
            .unwrap();
        let server = serve(endpoints);
        let body = request(server.addr, "GET", "/health/ready").await.json();
        assert_eq!(body["seen"], expected, "{level}");
        assert_eq!(body["status"], "Degraded", "{level}: the aggregate is kept");
    }
}

/// A one-node cluster whose self member has `status`.
fn cluster(status: MemberStatus) -> ClusterState {
    let address = "10.0.0.1:7000".to_owned();
    ClusterState {
        self_address: address.clone(),
        members: vec![Member::new(address, status, 1)],
    }
}

#[actix_web::test]
async fn cluster_ready_follows_the_real_membership_probe_at_every_level() {
    let view = Arc::new(InMemoryClusterView::new());
    let reg = HealthRegistry::new();
    reg.add(ProbeRegistration::new(
        "akka-cluster",
        ClusterMembershipProbe::new(view.clone()),
    ))
    .unwrap();
    let servers: Vec<_> = FORMATS
        .iter()
        .flat_map(|f| LEVELS.map(|l| (*f, l)))
        .map(|(format, level)| {
            let endpoints = ZbHealth::new(reg.clone())
                .format(format)
                .disclosure(level)
                .cluster_ready("akka-cluster")
                .build()
                .unwrap();
            (format, level, serve(endpoints))
        })
        .collect();
    // (membership, ready code, clusterReady): no cluster yet is Degraded
    // (startup safety), a 200 whose cluster is not ready; Joining is
    // Healthy under the Default policy, but not yet Up: not ready.
    let cases = [
        (None, 200, false),
        (Some(MemberStatus::Up), 200, true),
        (Some(MemberStatus::Joining), 200, false),
        (Some(MemberStatus::Leaving), 200, false),
        (Some(MemberStatus::Down), 503, false),
    ];
    for (member, code, ready) in cases {
        match member {
            None => view.clear(),
            Some(status) => view.set(cluster(status)),
        }
        for (format, level, server) in &servers {
            let r = request(server.addr, "GET", "/health/ready").await;
            let body = r.json();
            assert_valid(*format, &body);
            assert_eq!(
                (r.status, body["clusterReady"].clone()),
                (code, json!(ready)),
                "{member:?} {format} {level}: {body}"
            );
            for path in ["/health/active", "/healthz"] {
                let other = request(server.addr, "GET", path).await.json();
                assert!(other.get("clusterReady").is_none(), "ready tier only");
            }
        }
    }
}

#[actix_web::test]
async fn cluster_ready_is_read_from_the_same_report_never_recomputed() {
    // A membership probe that flips on every run: each body's clusterReady
    // must agree with the entry in that very body.
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let reg = HealthRegistry::new();
    reg.add(ProbeRegistration::new(
        "membership",
        from_fn(move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move {
                Ok(ProbeResult::new(if n.is_multiple_of(2) {
                    Healthy
                } else {
                    Degraded
                }))
            }
        }),
    ))
    .unwrap();
    let server = serve(
        ZbHealth::new(reg)
            .cluster_ready("membership")
            .build()
            .unwrap(),
    );
    let mut seen = [false; 2];
    for _ in 0..20 {
        let body = request(server.addr, "GET", "/health/ready").await.json();
        let healthy = body["entries"]["membership"]["status"] == "Healthy";
        assert_eq!(body["clusterReady"], json!(healthy), "{body}");
        seen[usize::from(healthy)] = true;
    }
    assert_eq!(seen, [true, true], "both states were served");
    assert!(runs.load(Ordering::SeqCst) >= 20);
}

#[actix_web::test]
async fn cluster_ready_without_its_entry_is_true_a_system_that_never_joined() {
    // No membership probe: this system never joined a cluster (AT-8),
    // whatever else holds the tier back.
    for status in [Healthy, Unhealthy] {
        let server = serve(
            ZbHealth::new(registry(status))
                .cluster_ready("akka-cluster")
                .build()
                .unwrap(),
        );
        let body = request(server.addr, "GET", "/health/ready").await.json();
        assert_eq!(body["clusterReady"], true, "{body}");
    }
}

zb_health::prelude::manifest!(Health = "../ui/pass/manifests/disclosure.yaml");

#[actix_web::test]
async fn the_manifest_chooses_format_disclosure_and_cluster_ready() {
    let view = Arc::new(InMemoryClusterView::with_state(cluster(MemberStatus::Up)));
    let installed = Health::install_into(
        &HealthRegistry::new(),
        HealthDeps {
            cluster_view: view.clone(),
        },
    )
    .unwrap();
    let server = serve(installed.server.endpoints().clone());
    let ready = request(server.addr, "GET", "/health/ready").await;
    let body = ready.json();
    assert_valid(PassFail, &body);
    assert_eq!(
        body,
        json!({
            "status": "pass",
            "totalDurationMs": body["totalDurationMs"],
            "clusterReady": true,
            "entries": {
                "akka-cluster": {
                    "status": "pass",
                    "description": null,
                    "durationMs": body["entries"]["akka-cluster"]["durationMs"],
                }
            }
        })
    );
    let active = request(server.addr, "GET", "/health/active").await.json();
    assert_valid(PassFail, &active);
    assert_eq!(
        active["entries"]["node"]["data"]["selfAddress"],
        "10.0.0.1:7000"
    );
    let live = request(server.addr, "GET", "/healthz").await.json();
    assert_eq!(
        live,
        json!({"status": "pass", "totalDurationMs": 0, "entries": {}})
    );
    view.set(cluster(MemberStatus::Leaving));
    let body = request(server.addr, "GET", "/health/ready").await.json();
    assert_eq!(
        (
            &body["status"],
            &body["clusterReady"],
            &body["entries"]["akka-cluster"]["status"]
        ),
        (&json!("pass"), &json!(false), &json!("warn"))
    );
}

zb_health::prelude::manifest!(Ports = "../ui/pass/manifests/disclosure_ports.yaml");

#[actix_web::test]
async fn each_port_has_its_own_disclosure_and_only_management_shows_cluster_addresses() {
    let view = Arc::new(InMemoryClusterView::with_state(cluster(MemberStatus::Up)));
    let registry = HealthRegistry::new();
    let installed = Ports::install_into(
        &registry,
        PortsDeps {
            cluster_view: view.clone(),
        },
    )
    .unwrap();
    // The same registry behind both real ports.
    let (app, management, running) = support::serve_both_ports(installed.server);

    // ready: `names` on the application port, `full` on the management one.
    let public = request(app, "GET", "/health/ready").await.json();
    let internal = request(management, "GET", "/health/ready").await.json();
    assert_eq!(
        public["entries"]["akka-cluster"]["description"],
        Value::Null
    );
    assert_eq!(
        internal["entries"]["akka-cluster"]["description"],
        "Member status: Up"
    );
    // active: `full` on both, but the cluster addresses only on management.
    let public = request(app, "GET", "/health/active").await.json();
    let internal = request(management, "GET", "/health/active").await.json();
    assert_eq!(public["status"], internal["status"]);
    assert_eq!(
        public["entries"]["node"]["description"],
        internal["entries"]["node"]["description"]
    );
    for key in zb_health::spec::vocab::CLUSTER_ADDRESS_KEYS {
        assert_eq!(
            internal["entries"]["node"]["data"][key], "10.0.0.1:7000",
            "{key}: {internal}"
        );
        assert!(
            !public.to_string().contains("10.0.0.1"),
            "{key} on the application port: {public}"
        );
    }
    running.abort();
}

#[test]
fn a_cluster_ready_name_no_probe_could_have_is_refused() {
    for name in ["", "has space", "startup"] {
        let err = ZbHealth::new(HealthRegistry::new())
            .cluster_ready(name)
            .build()
            .err()
            .unwrap_or_else(|| panic!("{name:?} accepted"));
        assert!(err.to_string().contains("R9"), "{name:?}: {err}");
    }
}

#[test]
fn an_authorized_level_that_shows_no_more_is_refused_as_in_the_manifest() {
    // R7, the rule `zb-health check` and the macro apply to
    // `endpoints.authorized`.
    let err = ZbHealth::new(HealthRegistry::new())
        .authorized(Full)
        .build()
        .err()
        .expect("full over full unlocks nothing");
    assert!(err.to_string().contains("R7"), "{err}");
    let err = ZbHealth::new(HealthRegistry::new())
        .disclosure(Names)
        .tier_authorized(Tag::Live, Status)
        .build()
        .err()
        .expect("status under names");
    assert!(err.to_string().contains("`live`"), "{err}");
    ZbHealth::new(HealthRegistry::new())
        .tier_disclosure(Tag::Ready, Status)
        .authorized(Full)
        .build()
        .expect("full over the ready tier's status");
}
