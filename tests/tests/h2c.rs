//! HTTP/2 cleartext with prior knowledge, as the kubelet would send it for
//! `httpGet.protocol: HTTP2` (KEP-5999, alpha in 1.37), from a real hyper 1
//! client over a plain `TcpStream` to a real `ZbHealthServer` on
//! 127.0.0.1. The server answers HTTP/1.1 only (actix-web without its
//! `http2` feature, bound with `bind`, not `bind_auto_h2c`), so `zb-health
//! k8s` emits no HTTP/2 probe: `spec/conflicts.md`, "KEP-5999 HTTP/2
//! probes: the server answers HTTP/1.1 only".

mod support;

use std::time::Duration;

use http_body_util::Empty;
use hyper::body::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo};
use support::{request, until_status};
use zb_health::lifecycle::Drain;
use zb_health::prelude::{HealthRegistry, map_zb_health};
use zb_health::server::ZbHealthServer;

/// Only a hung connection gets near it.
const DEADLINE: Duration = Duration::from_secs(10);

/// What an HTTP/2 prior-knowledge `GET path` on `addr` gets: the status,
/// or the client's error.
async fn h2_prior_knowledge(addr: std::net::SocketAddr, path: &str) -> Result<u16, String> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
    let driver = tokio::spawn(connection);
    let request = hyper::Request::get(format!("http://{addr}{path}"))
        .body(Empty::<Bytes>::new())
        .expect("a valid request");
    let answer = sender
        .send_request(request)
        .await
        .map(|r| r.status().as_u16())
        .map_err(|e| format!("request: {e:?}"));
    driver.abort();
    answer
}

#[actix_web::test]
async fn the_server_answers_http1_but_not_http2_with_prior_knowledge() {
    let registry = HealthRegistry::new();
    let endpoints = map_zb_health(registry.clone());
    let bound = ZbHealthServer::new(registry, endpoints, Drain::new(Duration::from_secs(1)))
        .port(0)
        .management_port(None)
        .bind()
        .expect("binds 127.0.0.1:0");
    let addr = bound.addresses().application[0];
    let running = actix_web::rt::spawn(bound.run());
    // HTTP/1.1 on the same port: 200.
    until_status(addr, "/healthz", 200).await;
    assert_eq!(request(addr, "GET", "/healthz").await.status, 200);
    // HTTP/2 with prior knowledge: no answer, an error, within the deadline.
    let h2 = tokio::time::timeout(DEADLINE, h2_prior_knowledge(addr, "/healthz"))
        .await
        .expect("the HTTP/2 attempt ends before the deadline");
    assert!(h2.is_err(), "an HTTP/2 answer: {h2:?}");
    running.abort();
}

/// The control: the same client gets an HTTP/2 answer from a server that
/// speaks h2c (tonic's, with grpc.health.v1), so the failure above is the
/// server's, not the client's.
#[tokio::test]
async fn the_same_client_gets_an_answer_from_an_h2c_server() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (_reporter, health) = tonic_health::server::health_reporter();
    let serving = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(health)
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    let h2 = tokio::time::timeout(
        DEADLINE,
        h2_prior_knowledge(addr, "/grpc.health.v1.Health/Check"),
    )
    .await
    .expect("the HTTP/2 request ends before the deadline");
    // gRPC answers HTTP 200 and puts its own status in the trailers.
    assert_eq!(h2, Ok(200));
    serving.abort();
}
