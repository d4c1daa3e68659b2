//! `zb-health probe` as a binary, against real sockets on 127.0.0.1: an
//! actix server answering 200, 308, 503 and a chunked 200; a closed port; a
//! server that accepts and never answers; one that trickles its body; bad
//! URLs.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use actix_web::{App, HttpResponse, HttpServer, web};
use common::{text, zb_health};

/// Starts an actix server on an ephemeral port of 127.0.0.1 in a thread of
/// its own and returns its address once it is bound. It lives as long as
/// the test process.
fn server() -> SocketAddr {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            let server = HttpServer::new(|| {
                App::new()
                    .route(
                        "/healthz",
                        web::get().to(|| async { HttpResponse::Ok().body("ok") }),
                    )
                    .route(
                        "/moved",
                        web::get().to(|| async {
                            HttpResponse::PermanentRedirect()
                                .insert_header(("Location", "/healthz"))
                                .finish()
                        }),
                    )
                    .route(
                        "/health/ready",
                        web::get().to(|| async { HttpResponse::ServiceUnavailable().body("down") }),
                    )
                    .route(
                        "/chunked",
                        web::get().to(|| async {
                            let parts = ["{\"status\":", "\"Healthy\"}"]
                                .map(|p| Ok::<_, actix_web::Error>(web::Bytes::from(p)));
                            HttpResponse::Ok().streaming(futures_util::stream::iter(parts))
                        }),
                    )
            })
            .workers(1)
            .bind(("127.0.0.1", 0))
            .expect("127.0.0.1 has a free port");
            tx.send(server.addrs()[0])
                .expect("the test waits for the address");
            server.run().await
        })
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the server binds within 30 s")
}

fn probe(url: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["probe", url];
    args.extend_from_slice(extra);
    zb_health(&args)
}

#[test]
fn a_2xx_exits_0_and_a_503_exits_1_saying_unhealthy() {
    let addr = server();
    let out = probe(&format!("http://{addr}/healthz"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("http://{addr}/healthz: HTTP 200\n")
    );

    let out = probe(&format!("http://{addr}/chunked"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let url = format!("http://{addr}/health/ready");
    let out = probe(&url, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("{url}: unhealthy: HTTP 503 Service Unavailable\n")
    );
    assert_eq!(text(&out.stdout), "");

    // 200–399 is healthy, as the kubelet and `curl -f` judge it; the
    // redirect is not followed.
    let out = probe(&format!("http://{addr}/moved"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("http://{addr}/moved: HTTP 308\n")
    );

    // A path the server does not know is not healthy either.
    let out = probe(&format!("http://{addr}/nope"), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("HTTP 404"));
}

#[test]
fn a_closed_port_exits_1_saying_unreachable() {
    // Bound then closed: nothing listens there any more.
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("an address")
        .port();
    let url = format!("http://127.0.0.1:{port}/healthz");
    let out = probe(&url, &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!("{url}: unreachable: ")),
        "{stderr}"
    );
}

#[test]
fn a_server_that_never_answers_exits_1_saying_timed_out() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let addr = listener.local_addr().expect("an address");
    // Accept and hold every connection, never writing a byte.
    std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let url = format!("http://{addr}/healthz");
    let out = probe(&url, &["--timeout", "300ms"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("{url}: timed out: no answer within the timeout\n")
    );
}

#[test]
fn a_body_trickled_past_the_deadline_ends_the_probe_as_timed_out() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let addr = listener.local_addr().expect("an address");
    // A 200 head at once, then a long body one byte per 200 ms: each read
    // returns in time, only the whole body does not.
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut request = [0u8; 1024];
                let _ = stream.read(&mut request);
                let head = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
                if stream.write_all(head.as_bytes()).is_err() {
                    return;
                }
                for _ in 0..1000 {
                    std::thread::sleep(Duration::from_millis(200));
                    if stream.write_all(b"x").is_err() {
                        return;
                    }
                }
            });
        }
    });
    let url = format!("http://{addr}/healthz");
    let limit = Duration::from_millis(500);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_zb-health"))
        .args(["probe", &url, "--timeout", "500ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the zb-health binary runs");
    // Generous: the run must end, not end on a margin.
    let started = Instant::now();
    while child
        .try_wait()
        .expect("the child can be waited for")
        .is_none()
    {
        if started.elapsed() > limit * 10 {
            let _ = child.kill();
            panic!("the probe still runs after 10 × its --timeout");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("its output");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("{url}: timed out: the body did not finish within the timeout\n")
    );
}

#[test]
fn a_bad_url_exits_2_and_https_is_refused_with_the_reason() {
    for url in [
        "127.0.0.1:8080/healthz",
        "ftp://127.0.0.1/",
        "http://127.0.0.1:0/",
        "http:///x",
    ] {
        let out = probe(url, &[]);
        assert_eq!(out.status.code(), Some(2), "{url}");
        assert!(text(&out.stderr).starts_with("error: "), "{url}");
    }
    let out = probe("https://127.0.0.1:8443/healthz", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("https is not supported"));
    // A usage error is 2 as well.
    assert_eq!(zb_health(&["probe"]).status.code(), Some(2));
}
