//! The server's settings and its one wiring path, over real sockets.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use crate::http::map_zb_health;
use crate::lifecycle::Drain;
use crate::registry::HealthRegistry;
use crate::server::{DEFAULT_PORT, Origin, ZbHealthServer};

fn server() -> ZbHealthServer {
    let registry = HealthRegistry::new();
    let endpoints = map_zb_health(registry.clone());
    ZbHealthServer::new(registry, endpoints, Drain::new(Duration::from_secs(5)))
        .management_port(Some(8081))
}

fn with(vars: &[(&str, &str)]) -> Result<ZbHealthServer, super::SettingError> {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    server().from_lookup(move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
}

#[test]
fn no_variables_keep_loopback_and_the_declared_ports() {
    let s = with(&[]).unwrap();
    assert_eq!(s.host, IpAddr::V4(Ipv4Addr::LOCALHOST));
    assert_eq!((s.port, s.management_port), (DEFAULT_PORT, Some(8081)));
    assert_eq!(s.drain().delay(), Duration::from_secs(5));
}

#[test]
fn host_binds_every_port_and_the_others_override() {
    let s = with(&[
        ("HOST", "0.0.0.0"),
        ("PORT", "9000"),
        ("MANAGEMENT_PORT", "9001"),
        ("GRPC_PORT", "9002"),
        ("DRAIN_DELAY_MS", "250"),
    ])
    .unwrap();
    assert_eq!(s.host, IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    assert_eq!(
        (s.port, s.management_port, s.grpc_port),
        (9000, Some(9001), 9002)
    );
    assert_eq!(s.drain().delay(), Duration::from_millis(250));
}

#[test]
fn a_value_that_cannot_be_used_is_refused_naming_its_variable() {
    for (variable, value) in [
        ("HOST", "localhost"),
        ("PORT", "eighty"),
        ("MANAGEMENT_PORT", "70000"),
        ("GRPC_PORT", "-1"),
        ("DRAIN_DELAY_MS", "5s"),
    ] {
        let e = with(&[(variable, value)]).unwrap_err();
        assert_eq!((e.variable, e.value.as_str()), (variable, value));
        assert!(
            e.to_string()
                .starts_with(&format!("{variable}={value:?}: ")),
            "{e}"
        );
    }
}

#[actix_web::test]
async fn bind_listens_on_host_for_the_application_and_the_management_port() {
    let bound = server()
        .host(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
        .port(0)
        .management_port(Some(0))
        .bind()
        .unwrap();
    let addresses = bound.addresses().clone();
    // Every interface: the kubelet connects to the pod's IP, not loopback.
    for addr in addresses.application.iter().chain(&addresses.management) {
        assert!(addr.ip().is_unspecified(), "{addr}");
    }
    assert_eq!(addresses.application.len(), 1);
    assert_eq!(addresses.management.len(), 1);
    assert_eq!(addresses.grpc, None);
}

fn fitted(drain: Drain, vars: &[(&str, &str)]) -> Result<ZbHealthServer, super::SettingError> {
    let registry = HealthRegistry::new();
    let endpoints = map_zb_health(registry.clone());
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    ZbHealthServer::new(registry, endpoints, drain)
        .from_lookup(move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
}

#[test]
fn a_drain_delay_that_fits_the_grace_period_takes_what_remains_for_the_stop() {
    let s = Duration::from_secs;
    let manifest = Drain::new(s(5)).within_grace_period(s(30)).unwrap();
    let server = fitted(manifest, &[("DRAIN_DELAY_MS", "20000")]).unwrap();
    assert_eq!(server.drain().delay(), s(20));
    assert_eq!(server.drain().graceful_timeout(), s(10));
    assert_eq!(server.drain().grace_period(), Some(s(30)));
}

#[test]
fn a_drain_delay_that_does_not_fit_is_refused_naming_the_variable_and_the_grace_period() {
    let s = Duration::from_secs;
    // The manifest's grace period, with the stop left to what remains.
    let manifest = Drain::new(s(5)).within_grace_period(s(30)).unwrap();
    let e = fitted(manifest, &[("DRAIN_DELAY_MS", "30000")]).unwrap_err();
    assert_eq!((e.variable, e.value.as_str()), ("DRAIN_DELAY_MS", "30000"));
    let text = e.to_string();
    assert!(text.starts_with("DRAIN_DELAY_MS=\"30000\": "), "{text}");
    assert!(text.contains("grace period of 30000 ms"), "{text}");
    assert!(
        text.contains("orchestrator.termination_grace_period"),
        "{text}"
    );
    assert!(text.contains("R18"), "{text}");

    // A stated shutdown timeout keeps its length: 6 s + 25 s > 30 s.
    let stated = Drain::new(s(5))
        .shutdown_timeout(s(25))
        .within_grace_period(s(30))
        .unwrap();
    assert!(fitted(stated, &[("DRAIN_DELAY_MS", "5000")]).is_ok());
    let e = fitted(stated, &[("DRAIN_DELAY_MS", "6000")]).unwrap_err();
    assert!(e.reason.contains("shutdown timeout (25 s)"), "{e}");

    // No grace period stated: Kubernetes' default 30 s holds, and the
    // refusal says so.
    let e = fitted(Drain::new(s(5)), &[("DRAIN_DELAY_MS", "30000")]).unwrap_err();
    assert!(e.reason.contains("Kubernetes' default"), "{e}");
    assert!(e.reason.contains("30000 ms"), "{e}");
}

/// One HTTP/1.1 keep-alive request on `stream`: the status line and the
/// `connection` header, lower-cased, if any. Blocking: the servers answer
/// on worker threads of their own.
fn keep_alive_get(stream: &mut std::net::TcpStream, path: &str) -> (String, Option<String>) {
    use std::io::{Read, Write};
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "the connection closed before an answer");
        raw.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&raw).into_owned();
        let Some(end) = text.find("\r\n\r\n") else {
            continue;
        };
        let head = text[..end].to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map_or(0, |v| v.trim().parse().unwrap());
        if raw.len() < end + 4 + length {
            continue;
        }
        let status = head.lines().next().unwrap_or_default().to_owned();
        let connection = head
            .lines()
            .find_map(|l| l.strip_prefix("connection:"))
            .map(|v| v.trim().to_owned());
        return (status, connection);
    }
}

#[actix_web::test]
async fn once_the_drain_begins_every_port_answers_connection_close() {
    use std::io::Read;
    let registry = HealthRegistry::new();
    let endpoints = map_zb_health(registry.clone());
    let bound = ZbHealthServer::new(
        registry.clone(),
        endpoints,
        Drain::new(Duration::from_secs(5)),
    )
    .port(0)
    .management_port(Some(0))
    .app(|routes| {
        routes.route("/hello", actix_web::web::get().to(|| async { "hello" }));
    })
    .bind()
    .unwrap();
    let addresses = bound.addresses().clone();
    let server = actix_web::rt::spawn(bound.run());
    // Let the spawned run start the servers (they listen once polled).
    actix_web::rt::task::yield_now().await;
    let ports = [
        (addresses.application[0], "/hello"),
        (addresses.application[0], "/healthz"),
        (addresses.management[0], "/healthz"),
    ];
    let mut streams = Vec::new();
    for (addr, path) in ports {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let (status, connection) = keep_alive_get(&mut stream, path);
        assert!(status.ends_with("200 ok"), "{path}: {status}");
        assert_eq!(connection, None, "{path}: kept alive before the drain");
        streams.push((stream, path));
    }
    // The drain's first step, as SIGTERM runs it.
    registry.lifecycle().begin_drain();
    for (stream, path) in &mut streams {
        let (status, connection) = keep_alive_get(stream, path);
        assert!(status.ends_with("200 ok"), "{path}: still served: {status}");
        assert_eq!(connection.as_deref(), Some("close"), "{path}");
        // And the server closes it after that answer.
        let mut rest = Vec::new();
        assert_eq!(stream.read_to_end(&mut rest).unwrap(), 0, "{path}: closed");
    }
    server.abort();
}

/// A token that must appear nowhere but in the requests that carry it.
const TOKEN: &str = "tok-9f2c1d7e-secret";

#[test]
fn the_token_comes_from_health_token_or_its_file() {
    let s = with(&[("HEALTH_TOKEN", TOKEN)]).unwrap();
    let shown = format!("{s:?}");
    assert!(!shown.contains(TOKEN), "{shown}");
    let dir = std::env::temp_dir().join(format!("zb-health-token-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    with(&[("HEALTH_TOKEN_FILE", file.to_str().unwrap())]).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_token_that_cannot_be_used_is_refused_naming_its_variable_never_its_value() {
    let dir = std::env::temp_dir().join(format!("zb-health-tokens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let missing = dir.join("missing");
    let (empty, missing) = (empty.to_str().unwrap(), missing.to_str().unwrap());
    let spaced = format!("{TOKEN} {TOKEN}");
    for (vars, variable) in [
        (vec![("HEALTH_TOKEN", "")], "HEALTH_TOKEN"),
        (vec![("HEALTH_TOKEN", "  ")], "HEALTH_TOKEN"),
        (vec![("HEALTH_TOKEN", spaced.as_str())], "HEALTH_TOKEN"),
        (vec![("HEALTH_TOKEN_FILE", empty)], "HEALTH_TOKEN_FILE"),
        (vec![("HEALTH_TOKEN_FILE", missing)], "HEALTH_TOKEN_FILE"),
        (
            vec![("HEALTH_TOKEN", TOKEN), ("HEALTH_TOKEN_FILE", empty)],
            "HEALTH_TOKEN_FILE",
        ),
    ] {
        let e = with(&vars).unwrap_err();
        assert_eq!(e.variable, variable, "{e}");
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains(TOKEN), "the token is never shown: {shown}");
        assert!(shown.starts_with(&format!("{variable}=")), "{shown}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A listener on a free port of 127.0.0.1, held by the test, and its port.
fn held_port() -> (std::net::TcpListener, u16) {
    let held = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = held.local_addr().unwrap().port();
    (held, port)
}

#[actix_web::test]
async fn a_taken_management_port_names_its_variable_the_address_and_the_cause() {
    let (_held, port) = held_port();
    let e = with(&[("PORT", "0"), ("MANAGEMENT_PORT", &port.to_string())])
        .unwrap()
        .bind()
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse);
    let printed = format!("{e:?}");
    let expected = format!("MANAGEMENT_PORT={port}: 127.0.0.1:{port} is already in use");
    assert!(printed.starts_with(&expected), "{printed}");
    assert!(!printed.contains("Os {"), "{printed}");
}

#[actix_web::test]
async fn a_taken_port_set_in_code_or_the_manifest_names_that_setting() {
    let (_held, port) = held_port();
    let e = server().port(port).bind().unwrap_err();
    let expected = format!("`ZbHealthServer::port` ({port}): 127.0.0.1:{port} is already in use");
    assert_eq!(e.to_string(), expected);
    let e = server()
        .port(0)
        .management_port_from(Some(port), Origin::MANIFEST_MANAGEMENT_PORT)
        .bind()
        .unwrap_err();
    let expected = format!(
        "the manifest's `management.port: {port}` (MANAGEMENT_PORT overrides it): 127.0.0.1:{port} is already in use"
    );
    assert_eq!(e.to_string(), expected);
}

#[actix_web::test]
async fn a_host_that_is_not_this_machines_is_named() {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): no machine's own address.
    let e = with(&[("HOST", "192.0.2.1"), ("PORT", "9000")])
        .unwrap()
        .bind()
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AddrNotAvailable);
    assert!(
        e.to_string().starts_with(
            "HOST=192.0.2.1: 192.0.2.1 is not an address of this machine, so 192.0.2.1:9000 (PORT=9000) cannot be bound"
        ),
        "{e}"
    );
}

#[cfg(feature = "grpc")]
#[actix_web::test]
async fn a_taken_grpc_port_names_its_variable() {
    use crate::grpc::server::{GrpcHealth, GrpcTarget};
    let (_held, port) = held_port();
    let s = with(&[
        ("PORT", "0"),
        ("MANAGEMENT_PORT", "0"),
        ("GRPC_PORT", &port.to_string()),
    ])
    .unwrap();
    let grpc = GrpcHealth::builder(s.registry().clone())
        .service("", GrpcTarget::Tier(crate::spec::Tag::Ready))
        .build()
        .unwrap();
    let e = s.grpc(grpc).bind().unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("GRPC_PORT={port}: 127.0.0.1:{port} is already in use")
    );
}

/// The status line of a `GET path` with an optional bearer token, on a
/// connection of its own.
fn status_of(addr: std::net::SocketAddr, path: &str, token: Option<&str>) -> String {
    use std::io::{BufRead, BufReader, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line).unwrap();
    line.trim_end().to_owned()
}

/// The management port's operator controls accept the one token the
/// endpoints hold, wherever it was given: `HEALTH_TOKEN`, or the built
/// endpoints in code. Without it they are an unknown path.
#[actix_web::test]
async fn the_controls_take_the_token_of_the_management_endpoints_from_any_place_in_any_order() {
    use crate::http::MAINTENANCE_PATH;
    use crate::http::ZbHealth;
    use crate::token::BearerToken;
    let from_env = |registry: HealthRegistry| {
        let endpoints = map_zb_health(registry.clone());
        ZbHealthServer::new(registry, endpoints, Drain::new(Duration::from_secs(5)))
            .from_lookup(|name| (name == "HEALTH_TOKEN").then(|| TOKEN.to_owned()))
            .unwrap()
    };
    let in_code = |registry: HealthRegistry| {
        let endpoints = ZbHealth::new(registry.clone())
            .build()
            .unwrap()
            .with_bearer_token(BearerToken::new(TOKEN).unwrap());
        ZbHealthServer::new(registry, endpoints, Drain::new(Duration::from_secs(5)))
    };
    // The token first, the management port's own endpoints after it.
    let endpoints_after = |registry: HealthRegistry| {
        let management = map_zb_health(registry.clone());
        from_env(registry).management_endpoints(management)
    };
    for (how, make) in [
        (
            "HEALTH_TOKEN",
            &from_env as &dyn Fn(HealthRegistry) -> ZbHealthServer,
        ),
        ("ZbHealthEndpoints::with_bearer_token", &in_code),
        ("HEALTH_TOKEN, then management_endpoints", &endpoints_after),
    ] {
        let bound = make(HealthRegistry::new())
            .port(0)
            .management_port(Some(0))
            .bind()
            .unwrap();
        let management = bound.addresses().management[0];
        let server = actix_web::rt::spawn(bound.run());
        actix_web::rt::task::yield_now().await;
        let (with, without) = actix_web::rt::task::spawn_blocking(move || {
            (
                status_of(management, MAINTENANCE_PATH, Some(TOKEN)),
                status_of(management, MAINTENANCE_PATH, None),
            )
        })
        .await
        .unwrap();
        assert!(with.ends_with("200 OK"), "{how}: {with}");
        assert!(without.ends_with("404 Not Found"), "{how}: {without}");
        server.abort();
    }
}
