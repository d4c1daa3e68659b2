//! The child process of `tests/drain.rs`: the three tiers under
//! `zb_health::lifecycle::serve`, with a startup gate and a slow route the
//! test controls.
//!
//! * stdout, one event a line: `listening <addr>`, `slow started`,
//!   `drain hook ran`, `exited`;
//! * stdin, one command a line: `ready` (the startup gate's `ready()`),
//!   `release` (lets every `/slow` request answer);
//! * env: `DRAIN_DELAY_MS` (the drain delay), `START_READY=1` (signal the
//!   gate at once).
//!
//! Commands and events make the test's order assertions exact: nothing
//! here depends on how long anything takes.

use std::io::{BufRead, Write};
use std::time::Duration;

use actix_web::{App, HttpResponse, HttpServer, web};
use tokio::sync::watch;
use zb_health::lifecycle::{Drain, serve};
use zb_health::{HealthRegistry, ProbeRegistration, ProbeResult, TagSet, from_fn, map_zb_health};

fn event(line: &str) {
    let mut out = std::io::stdout().lock();
    // The test reads these lines; a closed pipe means the test is gone.
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let delay_ms: u64 = std::env::var("DRAIN_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60_000);
    let registry = HealthRegistry::new();
    registry
        .add(ProbeRegistration::new(
            "database",
            from_fn(|| async { Ok(ProbeResult::healthy()) }),
        ))
        .expect("valid probe");
    registry
        .add(
            ProbeRegistration::new("primary", from_fn(|| async { Ok(ProbeResult::healthy()) }))
                .tags(TagSet::ACTIVE),
        )
        .expect("valid probe");
    registry.on_drain(|| event("drain hook ran"));
    let gate = registry.startup_gate();
    let mut gate = if std::env::var("START_READY").is_ok_and(|v| v == "1") {
        gate.ready();
        None
    } else {
        Some(gate)
    };
    let (release, released) = watch::channel(false);
    // One reader for every command, started before `listening` is printed,
    // so no command the test sends after that line is missed.
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            match line.trim() {
                "ready" => {
                    if let Some(gate) = gate.take() {
                        gate.ready();
                    }
                }
                "release" => {
                    let _ = release.send(true);
                }
                _ => {}
            }
        }
        // stdin closed: the test is gone; leave the gate as it is.
        std::mem::forget(gate);
    });

    let health = map_zb_health(registry.clone());
    let server = HttpServer::new(move || {
        let released = released.clone();
        App::new()
            .service(health.clone())
            .route("/hello", web::get().to(|| async { "hello" }))
            .route(
                "/slow",
                web::get().to(move || {
                    let mut released = released.clone();
                    async move {
                        event("slow started");
                        let _ = released.wait_for(|r| *r).await;
                        HttpResponse::Ok().body("slow done")
                    }
                }),
            )
    })
    .workers(2)
    .bind(("127.0.0.1", 0))?;
    event(&format!("listening {}", server.addrs()[0]));
    let result = serve(
        server,
        &registry,
        Drain::new(Duration::from_millis(delay_ms)).shutdown_timeout(Duration::from_secs(30)),
    )
    .await;
    event("exited");
    result
}
