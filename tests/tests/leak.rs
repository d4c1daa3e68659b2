//! The leak matrix (BE-HLTH-007): dependencies fail with error text holding
//! a fake password, an internal hostname and a stack-trace-like text,
//! through every failure path (a probe's `Err`, a panic, a timeout, a
//! cached and a background failure, a failed startup gate) and through the
//! real built-in probes (SQLite and PostgreSQL `DatabaseProbe`, a
//! `GrpcDependencyProbe` against a loopback tonic server answering an error
//! status). For every tier × format × disclosure level, over a real socket,
//! none of those strings (nor the real probes' own error text) appears in
//! any body or header.
//!
//! Details for the authorized only (BE-HLTH-007, `spec/disclosure.md`):
//! with a bearer token configured, a request without it or with a wrong one
//! gets the public answer and the same status code, and no secret; the
//! right one sees `full`; the token itself is in no answer and no log line,
//! on either port.
//!
//! No name is ever resolved: the hostname only appears as text, and every
//! socket is on 127.0.0.1.

#[path = "support/formats.rs"]
mod formats;
mod support;

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use formats::{FORMATS, LEVELS, assert_valid};
use serde_json::Value;
use support::{LogText, Wire, request, serve, until_status};
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use zb_health::cluster::{ClusterState, InMemoryClusterView, Member, MemberStatus};
use zb_health::database::DatabaseProbe;
use zb_health::database::sea_orm::{ConnectOptions, Database, DatabaseConnection};
use zb_health::grpc::GrpcDependencyProbe;
use zb_health::grpc::tonic::transport::Endpoint;
use zb_health::grpc::tonic_health::pb::health_server::{Health, HealthServer};
use zb_health::grpc::tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};
use zb_health::prelude::{
    FailureStatus, HealthRegistry, Probe, ProbeError, ProbeRegistration, Tag, TagSet, ZbHealth,
    from_fn,
};
use zb_health::spec::{Disclosure, ResponseFormat};
use zb_health::token::BearerToken;

/// A fake password.
const PASSWORD: &str = "hunter2-Sup3rS3cr3t";
/// An internal hostname, never resolved.
const HOST: &str = "db-primary.corp.internal";
/// Stack-trace-like text.
const STACK: &str = "at zb_app::db::connect (src/db.rs:42:7)";

/// The error text every failing dependency carries.
fn secret_text() -> String {
    format!(
        "connect to postgres://admin:{PASSWORD}@{HOST}:5432/app failed: connection refused\n\
         stack backtrace:\n   0: {STACK}"
    )
}

/// A probe failing with `secret_text()` as its error.
fn erroring() -> impl Probe {
    from_fn(|| async { Err::<zb_health::prelude::ProbeResult, ProbeError>(secret_text().into()) })
}

/// A `grpc.health.v1` server whose `Check` answers an error status with
/// the secrets in its message and metadata.
struct LeakyHealth;

#[tonic::async_trait]
impl Health for LeakyHealth {
    async fn check(
        &self,
        _: tonic::Request<HealthCheckRequest>,
    ) -> Result<tonic::Response<HealthCheckResponse>, tonic::Status> {
        let mut status = tonic::Status::internal(secret_text());
        status
            .metadata_mut()
            .insert("x-upstream-host", HOST.parse().unwrap());
        Err(status)
    }

    type WatchStream = Pin<
        Box<dyn tokio_stream::Stream<Item = Result<HealthCheckResponse, tonic::Status>> + Send>,
    >;

    async fn watch(
        &self,
        _: tonic::Request<HealthCheckRequest>,
    ) -> Result<tonic::Response<Self::WatchStream>, tonic::Status> {
        Err(tonic::Status::unimplemented(secret_text()))
    }
}

/// Serves [`LeakyHealth`] on 127.0.0.1 with an OS-chosen port.
async fn leaky_grpc_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(HealthServer::new(LeakyHealth))
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    addr
}

/// A port on 127.0.0.1 that nothing listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn sqlite() -> DatabaseConnection {
    Database::connect(
        ConnectOptions::new("sqlite::memory:")
            .sqlx_logging(false)
            .clone(),
    )
    .await
    .unwrap()
}

/// A query on a missing table whose name carries the secrets, so SQLite's
/// own error (`no such table: …`) holds them.
fn leaky_sql() -> String {
    format!("SELECT 1 FROM \"{PASSWORD}@{HOST} {STACK}\"")
}

/// A PostgreSQL URL with the password, to a closed loopback port.
fn leaky_postgres_url() -> String {
    format!(
        "postgres://admin:{PASSWORD}@127.0.0.1:{}/app",
        closed_port()
    )
}

async fn postgres_refused() -> DatabaseConnection {
    let mut options = ConnectOptions::new(leaky_postgres_url());
    options.sqlx_logging(false).connect_lazy(true);
    Database::connect(options).await.unwrap()
}

/// Every probe of the matrix and the error text the real ones produce.
async fn leaky_registry() -> (HealthRegistry, Vec<String>) {
    let grpc = Endpoint::from_shared(format!("http://{}", leaky_grpc_server().await)).unwrap();
    let both = TagSet::READY.with(Tag::Active);
    // What the real built-in probes say when run directly: their own error
    // text (the premise of the test) is forbidden in the body too.
    let mut real_errors = Vec::new();
    for probe in [
        &DatabaseProbe::with_query(sqlite().await, leaky_sql()) as &dyn ErasedCheck,
        &DatabaseProbe::new(postgres_refused().await),
        &GrpcDependencyProbe::grpc_health(grpc.clone(), ""),
    ] {
        real_errors.push(probe.error().await);
    }
    assert!(
        real_errors[0].contains(PASSWORD) && real_errors[0].contains(HOST),
        "SQLite's error names the table: {}",
        real_errors[0]
    );
    assert!(
        real_errors[2].contains(PASSWORD) && real_errors[2].contains(STACK),
        "tonic's error carries the status message: {}",
        real_errors[2]
    );

    let reg = HealthRegistry::new();
    let timeout = Duration::from_millis(200);
    reg.add_all([
        ProbeRegistration::new("errors", erroring()).tags(both),
        ProbeRegistration::new(
            "panics",
            from_fn(|| async {
                if true {
                    panic!("{}", secret_text());
                }
                Ok(zb_health::prelude::ProbeResult::healthy())
            }),
        )
        .tags(both),
        ProbeRegistration::new(
            "hangs",
            from_fn(|| async {
                // The secret is in the future's state when it is cancelled.
                let _held = secret_text();
                std::future::pending::<zb_health::prelude::ProbeOutcome>().await
            }),
        )
        .timeout(Duration::from_millis(50))
        .tags(both),
        ProbeRegistration::new("optional", erroring()).failure_status(FailureStatus::Degraded),
        ProbeRegistration::new("cached", erroring()).cache(Duration::from_secs(2)),
        ProbeRegistration::new("background", erroring()).refresh(Duration::from_millis(20)),
        ProbeRegistration::new(
            "sqlite",
            DatabaseProbe::with_query(sqlite().await, leaky_sql()),
        )
        .timeout(timeout)
        .tags(both),
        ProbeRegistration::new("postgres", DatabaseProbe::new(postgres_refused().await))
            .timeout(timeout)
            .tags(both),
        ProbeRegistration::new("grpc", GrpcDependencyProbe::grpc_health(grpc, ""))
            .timeout(Duration::from_secs(2))
            .tags(both),
    ])
    .unwrap();
    reg.lifecycle().startup_gate().failed(secret_text());
    // A stalled loop (its deadline runs from its first beat) makes `live`
    // 503 with an entry of its own.
    let heartbeat = reg
        .lifecycle()
        .watchdog("consumer", Duration::from_millis(1))
        .unwrap();
    heartbeat.beat();
    std::mem::forget(heartbeat);
    (reg, real_errors)
}

/// A probe run directly, for its error text.
trait ErasedCheck {
    fn error(&self) -> Pin<Box<dyn Future<Output = String> + '_>>;
}

impl<P: Probe> ErasedCheck for P {
    fn error(&self) -> Pin<Box<dyn Future<Output = String> + '_>> {
        Box::pin(async move {
            match self.check().await {
                Ok(result) => panic!("expected a failure, got {result:?}"),
                Err(e) => e.to_string(),
            }
        })
    }
}

/// Asserts no forbidden string is in `wire`'s body or any header.
fn assert_no_leak(case: &str, wire: &Wire, forbidden: &[String]) {
    let body = String::from_utf8_lossy(&wire.body);
    for secret in forbidden {
        assert!(
            !body.contains(secret.as_str()),
            "{case}: {secret:?} leaked into {body}"
        );
        for (name, value) in &wire.headers {
            assert!(
                !name.contains(secret.as_str()) && !value.contains(secret.as_str()),
                "{case}: {secret:?} leaked into header {name}: {value}"
            );
        }
    }
}

/// The forbidden strings: each secret, its parts an error would show, and
/// the real probes' own error text.
fn forbidden(real_errors: Vec<String>) -> Vec<String> {
    let mut all: Vec<String> = [
        PASSWORD,
        HOST,
        STACK,
        "corp.internal",
        "Sup3rS3cr3t",
        "src/db.rs",
        "stack backtrace",
        "postgres://",
        "admin:",
        "no such table",
        "connection refused",
        "Connection refused",
        "panicked at",
    ]
    .map(str::to_owned)
    .into();
    all.push(secret_text());
    all.extend(real_errors.into_iter().filter(|e| !e.is_empty()));
    all
}

#[actix_web::test]
async fn no_secret_reaches_any_body_or_header_for_every_tier_format_and_level() {
    let (reg, real_errors) = leaky_registry().await;
    let forbidden = forbidden(real_errors);
    // The background probe has failed at least once before the matrix.
    every_failure_reported(&reg).await;

    let mut checked = 0;
    for format in FORMATS {
        for level in LEVELS {
            let server = serve(
                ZbHealth::new(reg.clone())
                    .format(format)
                    .disclosure(level)
                    .cluster_ready("grpc")
                    .build()
                    .unwrap(),
            );
            for path in ["/health/ready", "/health/active", "/healthz"] {
                let case = format!("{format} {level} GET {path}");
                let wire = request(server.addr, "GET", path).await;
                assert_eq!(wire.status, 503, "{case}");
                let body = wire.json();
                assert_valid(format, &body);
                assert_shows_the_failures(format, level, path, &body);
                assert_no_leak(&case, &wire, &forbidden);
                let head = request(server.addr, "HEAD", path).await;
                assert_no_leak(&format!("{format} {level} HEAD {path}"), &head, &forbidden);
                checked += 1;
            }
            // The startup path (a failed gate: 503) shows no secret either.
            let started = request(server.addr, "GET", "/health/started").await;
            assert_eq!(started.status, 503, "{format} {level}");
            assert_valid(format, &started.json());
            assert_no_leak(
                &format!("{format} {level} GET /health/started"),
                &started,
                &forbidden,
            );
            // A method the endpoint refuses answers without a body worth leaking.
            let refused = request(server.addr, "POST", "/health/ready").await;
            assert_eq!(refused.status, 405);
            assert_no_leak(&format!("{format} {level} POST"), &refused, &forbidden);
        }
    }
    assert_eq!(checked, 2 * 3 * 3, "tiers × formats × levels");
}

/// Waits until the background probe has failed once and the watchdog has
/// stalled, so every failure path is in the answers that follow.
async fn every_failure_reported(reg: &HealthRegistry) {
    let full = serve(ZbHealth::new(reg.clone()).build().unwrap());
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let body = request(full.addr, "GET", "/health/ready").await.json();
            if body["entries"]["background"]["description"] == "check failed" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the background probe reports its failure");
    until_status(full.addr, "/healthz", 503).await;
}

/// The bearer token of the authorized cases. It must be in no answer and
/// no log line.
const TOKEN: &str = "tok-7c1e9a2f4b-SecretBearer";

/// `Authorization` values that are not the token: a wrong one, one of the
/// same length, the token with a byte more and a byte less, the token
/// under another scheme, the scheme alone. With no header at all, these
/// all get the public answer.
fn not_the_token() -> Vec<String> {
    let same_length = format!("{}x", &TOKEN[..TOKEN.len() - 1]);
    vec![
        "Bearer wrong".to_owned(),
        format!("Bearer {same_length}"),
        format!("Bearer {TOKEN}2"),
        format!("Bearer {}", &TOKEN[..TOKEN.len() - 1]),
        format!("Basic {TOKEN}"),
        "Bearer".to_owned(),
    ]
}

async fn request_as(addr: SocketAddr, method: &str, path: &str, authorization: &str) -> Wire {
    zb_health_testkit::http::request_with_headers_async(
        addr,
        method,
        path,
        &[("Authorization", authorization)],
    )
    .await
    .unwrap()
}

/// Every `tracing` event of the process, as text, from the first call on:
/// the check that the token is never logged (the servers log on their own
/// threads, so only a global subscriber sees them).
fn logged() -> &'static Mutex<Vec<String>> {
    static LINES: OnceLock<Arc<Mutex<Vec<String>>>> = OnceLock::new();
    LINES.get_or_init(|| {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let _ = tracing::subscriber::set_global_default(LogText(lines.clone()));
        lines
    })
}

fn assert_token_never_logged() {
    let lines = logged().lock().unwrap();
    assert!(!lines.is_empty(), "the capture sees the servers' logs");
    for line in lines.iter() {
        assert!(!line.contains(TOKEN), "the token was logged: {line}");
    }
}

#[actix_web::test]
async fn a_wrong_bearer_token_gets_the_public_answer_and_no_secret_the_right_one_full() {
    logged();
    let (reg, real_errors) = leaky_registry().await;
    let mut forbidden = forbidden(real_errors);
    forbidden.push(TOKEN.to_owned());
    every_failure_reported(&reg).await;
    let mut checked = 0;
    for format in FORMATS {
        for public in [Disclosure::Names, Disclosure::Status] {
            let server = serve(
                ZbHealth::new(reg.clone())
                    .format(format)
                    .disclosure(public)
                    .authorized(Disclosure::Full)
                    .cluster_ready("grpc")
                    .build()
                    .unwrap()
                    .with_bearer_token(BearerToken::new(TOKEN).unwrap()),
            );
            for path in ["/health/ready", "/health/active", "/healthz"] {
                let case = format!("{format} {public}+token {path}");
                let anonymous = request(server.addr, "GET", path).await;
                assert_eq!(anonymous.status, 503, "{case}");
                assert_valid(format, &anonymous.json());
                assert_shows_the_failures(format, public, path, &anonymous.json());
                assert_no_leak(&case, &anonymous, &forbidden);
                // A cache between must key on the header it depends on.
                assert_eq!(anonymous.header("vary"), Some("authorization"), "{case}");
                assert_eq!(
                    anonymous.header("cache-control"),
                    Some("no-store"),
                    "{case}"
                );
                for wrong in not_the_token() {
                    let case = format!("{case} with {wrong:?}");
                    let wire = request_as(server.addr, "GET", path, &wrong).await;
                    // Not a 401: the kubelet's verdict is the same.
                    assert_eq!(wire.status, anonymous.status, "{case}");
                    assert_valid(format, &wire.json());
                    assert_shows_the_failures(format, public, path, &wire.json());
                    assert_no_leak(&case, &wire, &forbidden);
                    let head = request_as(server.addr, "HEAD", path, &wrong).await;
                    assert_no_leak(&format!("HEAD {case}"), &head, &forbidden);
                }
                let bearer = format!("Bearer {TOKEN}");
                let wire = request_as(server.addr, "GET", path, &bearer).await;
                assert_eq!(wire.status, anonymous.status, "{case} authorized");
                assert_valid(format, &wire.json());
                assert_shows_the_failures(format, Disclosure::Full, path, &wire.json());
                // Full details are still fixed descriptions: no secret.
                assert_no_leak(&format!("{case} authorized"), &wire, &forbidden);
                let head = request_as(server.addr, "HEAD", path, &bearer).await;
                assert_no_leak(&format!("HEAD {case} authorized"), &head, &forbidden);
                checked += 1;
            }
            // The startup path takes the live tier's view.
            let started = request_as(server.addr, "GET", "/health/started", "Bearer x").await;
            assert_eq!(started.status, 503);
            assert_no_leak("started, wrong token", &started, &forbidden);
            let authorized = format!("Bearer {TOKEN}");
            let started = request_as(server.addr, "GET", "/health/started", &authorized).await;
            assert_eq!(
                started.json()["entries"]["startup"]["description"],
                "startup failed"
            );
            assert_no_leak("started, authorized", &started, &forbidden);
        }
    }
    assert_eq!(checked, 2 * 2 * 3, "formats × public levels × tiers");
    assert_token_never_logged();
}

zb_health::prelude::manifest!(Authorized = "../ui/pass/manifests/authorized.yaml");

#[actix_web::test]
async fn each_port_shows_its_public_level_to_a_wrong_token_and_full_to_the_token_from_health_token()
{
    logged();
    let address = "10.0.0.1:7000".to_owned();
    let view = Arc::new(InMemoryClusterView::with_state(ClusterState {
        self_address: address.clone(),
        members: vec![Member::new(address, MemberStatus::Up, 1)],
    }));
    let registry = HealthRegistry::new();
    let installed =
        Authorized::install_into(&registry, AuthorizedDeps { cluster_view: view }).unwrap();
    registry
        .add(ProbeRegistration::new("errors", erroring()).tags(TagSet::READY.with(Tag::Active)))
        .unwrap();
    // The token from the environment, as a pod gets it from a Secret.
    let server = installed
        .server
        .from_lookup(|name| (name == "HEALTH_TOKEN").then(|| TOKEN.to_owned()))
        .unwrap();
    assert!(!format!("{server:?}").contains(TOKEN));
    let (app, management, running) = support::serve_both_ports(server);
    let mut forbidden = forbidden(Vec::new());
    forbidden.push(TOKEN.to_owned());
    let bearer = format!("Bearer {TOKEN}");
    for (port, addr, public) in [
        ("application", app, Disclosure::Status),
        ("management", management, Disclosure::Names),
    ] {
        for (path, status) in [
            ("/health/ready", 503),
            ("/health/active", 503),
            ("/healthz", 200),
        ] {
            let case = format!("{port} {path}");
            let anonymous = request(addr, "GET", path).await;
            let mut answers = vec![("no token".to_owned(), anonymous)];
            for wrong in not_the_token() {
                answers.push((wrong.clone(), request_as(addr, "GET", path, &wrong).await));
            }
            for (who, wire) in &answers {
                let case = format!("{case} ({who})");
                assert_eq!(wire.status, status, "{case}");
                assert_eq!(wire.header("vary"), Some("authorization"), "{case}");
                assert_no_leak(&case, wire, &forbidden);
                let body = wire.json();
                let entries = body["entries"].as_object().unwrap();
                match public {
                    Disclosure::Status => assert!(entries.is_empty(), "{case}: {body}"),
                    _ => assert!(
                        entries.values().all(|e| e["description"].is_null()),
                        "{case}: {body}"
                    ),
                }
                assert!(!wire.text().contains("10.0.0.1"), "{case}: {body}");
            }
            let wire = request_as(addr, "GET", path, &bearer).await;
            let case = format!("{case} (the token)");
            assert_eq!(wire.status, status, "{case}");
            assert_no_leak(&case, &wire, &forbidden);
            let body = wire.json();
            if path != "/healthz" {
                assert_eq!(
                    body["entries"]["errors"]["description"], "check failed",
                    "{case}"
                );
            }
            if path == "/health/active" {
                // The token holder is an operator: the cluster addresses too.
                assert_eq!(
                    body["entries"]["node"]["data"]["selfAddress"], "10.0.0.1:7000",
                    "{case}: {body}"
                );
            }
        }
    }
    running.abort();
    assert_token_never_logged();
}

/// The matrix is not vacuous: the failing entries are in the body, with
/// the fixed descriptions at `full`.
fn assert_shows_the_failures(format: ResponseFormat, level: Disclosure, path: &str, body: &Value) {
    let entries = body["entries"].as_object().unwrap();
    if level == Disclosure::Status {
        assert!(entries.is_empty(), "{body}");
        return;
    }
    let expected: &[(&str, &str)] = match path {
        "/health/ready" => &[
            ("startup", "startup failed"),
            ("errors", "check failed"),
            ("panics", "check panicked"),
            ("hangs", "timed out after 50 ms"),
            ("optional", "check failed"),
            ("cached", "check failed"),
            ("background", "check failed"),
            ("sqlite", "check failed"),
            ("postgres", "check failed"),
            ("grpc", "check failed"),
        ],
        "/health/active" => &[
            ("startup", "startup failed"),
            ("errors", "check failed"),
            ("panics", "check panicked"),
            ("hangs", "timed out after 50 ms"),
            ("sqlite", "check failed"),
            ("postgres", "check failed"),
            ("grpc", "check failed"),
        ],
        _ => &[("consumer", "no heartbeat within 1 ms")],
    };
    let names: Vec<&str> = entries.keys().map(String::as_str).collect();
    let want: Vec<&str> = expected.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, want, "{format} {level} {path}");
    for (name, description) in expected {
        let shown = &entries[*name]["description"];
        match level {
            Disclosure::Full => assert_eq!(shown, description, "{name}: {body}"),
            _ => assert!(shown.is_null(), "{name}: {body}"),
        }
    }
}

#[actix_web::test]
async fn names_and_status_hide_what_a_probe_itself_describes() {
    // ZB-2.3c puts `selfAddress` in `data` and a probe may describe itself
    // with an address: `full` shows the probe's own words, the stricter
    // levels never do.
    let reg = HealthRegistry::new();
    reg.add(ProbeRegistration::new(
        "node",
        from_fn(|| async {
            Ok(zb_health::prelude::ProbeResult::healthy()
                .with_description(format!("member {HOST}"))
                .with_data("selfAddress", format!("{HOST}:7000")))
        }),
    ))
    .unwrap();
    for format in FORMATS {
        for level in LEVELS {
            let server = serve(
                ZbHealth::new(reg.clone())
                    .format(format)
                    .disclosure(level)
                    .build()
                    .unwrap(),
            );
            let wire = request(server.addr, "GET", "/health/ready").await;
            assert_valid(format, &wire.json());
            let shown = String::from_utf8_lossy(&wire.body).contains(HOST);
            assert_eq!(shown, level == Disclosure::Full, "{format} {level}");
        }
    }
}

#[actix_web::test]
async fn an_application_port_without_cluster_addresses_shows_none_at_any_format_level_or_writer() {
    // The addresses are `data`, the probe's description is not an address:
    // hiding them leaves the rest of the entry as the level shows it.
    let reg = HealthRegistry::new();
    reg.add(ProbeRegistration::new(
        "node",
        from_fn(|| async {
            Ok(zb_health::prelude::ProbeResult::healthy()
                .with_description("this node is active")
                .with_data("selfAddress", format!("{HOST}:7000"))
                .with_data("activeNode", format!("{HOST}:7001"))
                .with_data("activeRole", "admin"))
        }),
    ))
    .unwrap();
    for format in FORMATS {
        for level in LEVELS {
            for shown in [false, true] {
                let server = serve(
                    ZbHealth::new(reg.clone())
                        .format(format)
                        .disclosure(level)
                        .cluster_addresses(shown)
                        .build()
                        .unwrap(),
                );
                let wire = request(server.addr, "GET", "/health/ready").await;
                let body = wire.json();
                assert_valid(format, &body);
                let has_host = String::from_utf8_lossy(&wire.body).contains(HOST);
                let case = format!("{format} {level} cluster_addresses({shown})");
                assert_eq!(
                    has_host,
                    shown && level == Disclosure::Full,
                    "{case}: {body}"
                );
                if level == Disclosure::Full {
                    // What is not an address stays.
                    assert_eq!(
                        body["entries"]["node"]["data"]["activeRole"], "admin",
                        "{case}"
                    );
                }
            }
        }
    }
    // A custom writer gets the report without them, too.
    let server = serve(
        ZbHealth::new(reg.clone())
            .writer(zb_health::writer::write_json)
            .cluster_addresses(false)
            .build()
            .unwrap(),
    );
    let wire = request(server.addr, "GET", "/health/ready").await;
    assert!(
        !String::from_utf8_lossy(&wire.body).contains(HOST),
        "{:?}",
        wire.json()
    );
}
