//! The child process of `tests/drain.rs`: the three tiers under
//! `zb_health::server::serve`, declared by a manifest with a startup
//! gate and a drain, and a slow route the test controls.
//!
//! * stdout, one event a line: `listening <addr>`, `slow started`,
//!   `drain hook ran`, `exited`;
//! * stdin, one command a line: `ready` (the startup gate's `ready()`),
//!   `release` (lets every `/slow` request answer);
//! * env: `DRAIN_DELAY_MS` (overrides the manifest's drain delay),
//!   `START_READY=1` (signal the gate at once), `MANAGEMENT=1` (serve the
//!   tiers on a management server too, under `serve_with_management`; its
//!   address is the second event, `management <addr>`), `SERVER=1` (run
//!   the manifest's own `server`, `ZbHealthServer`, with `from_env` and
//!   its `grpc.health.v1`; the gRPC address is the second event,
//!   `grpc <addr>`).
//!
//! Commands and events make the test's order assertions exact: nothing
//! here depends on how long anything takes.

use std::io::{BufRead, Write};
use std::time::Duration;

use actix_web::{App, HttpResponse, HttpServer, web};
use tokio::sync::watch;
use zb_health::lifecycle::Drain;
use zb_health::prelude::{HealthRegistry, Probe, ProbeOutcome, ProbeResult, zb_health};
use zb_health::server::{serve, serve_with_management};

zb_health::prelude::manifest!(
    Health,
    yaml = r#"
service: drain-service
orchestrator: { timeout: 1s, termination_grace_period: 120s }
lifecycle:
  startup_gates: [init]
  drain_delay: 60s
  shutdown_timeout: 30s
grpc:
  period: 50ms
  services: { "": ready, drain.live: live }
probes:
  - { kind: custom, type: crate::DatabaseProbe }
  - { kind: custom, type: crate::PrimaryProbe }
"#
);

/// Always healthy: the test is about the lifecycle entries.
#[zb_health(name = "database", tags = [ready], timeout = "500ms")]
struct DatabaseProbe;

impl Probe for DatabaseProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

/// This single node is the active one.
#[zb_health(name = "primary", tags = [active], timeout = "500ms")]
struct PrimaryProbe;

impl Probe for PrimaryProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

fn event(line: &str) {
    let mut out = std::io::stdout().lock();
    // The test reads these lines; a closed pipe means the test is gone.
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// `/hello`, and `/slow`, which answers once the test says `release`.
fn app_routes(routes: &mut web::ServiceConfig, released: watch::Receiver<bool>) {
    routes
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
        );
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let drain = match std::env::var("DRAIN_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(ms) => Drain::new(Duration::from_millis(ms)).shutdown_timeout(Duration::from_secs(30)),
        None => Health::DRAIN,
    };
    let registry = HealthRegistry::new();
    let installed = Health::install_into(
        &registry,
        HealthDeps {
            database_probe: DatabaseProbe,
            primary_probe: PrimaryProbe,
        },
    )
    .expect("the manifest installs into a fresh registry");
    registry.lifecycle().on_drain(|| event("drain hook ran"));
    let gate = installed.startup.init;
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

    if std::env::var("SERVER").is_ok_and(|v| v == "1") {
        // The one wiring path, as the examples run it; ports chosen here.
        let bound = installed
            .server
            .from_env()?
            .port(0)
            .grpc_port(0)
            .app(move |routes| app_routes(routes, released.clone()))
            .bind()?;
        let addresses = bound.addresses().clone();
        event(&format!("listening {}", addresses.application[0]));
        if let Some(grpc) = addresses.grpc {
            event(&format!("grpc {grpc}"));
        }
        let result = bound.run().await;
        event("exited");
        return result;
    }

    let health = installed.server.endpoints().clone();
    let management = std::env::var("MANAGEMENT").is_ok_and(|v| v == "1");
    let management = if management {
        let health = health.clone();
        Some(
            HttpServer::new(move || App::new().service(health.clone()))
                .workers(1)
                .bind(("127.0.0.1", 0))?,
        )
    } else {
        None
    };
    let server = HttpServer::new(move || {
        let released = released.clone();
        App::new()
            .service(health.clone())
            .configure(|routes| app_routes(routes, released.clone()))
    })
    .workers(2)
    .bind(("127.0.0.1", 0))?;
    event(&format!("listening {}", server.addrs()[0]));
    let result = match management {
        Some(management) => {
            event(&format!("management {}", management.addrs()[0]));
            serve_with_management(server, management, &registry, drain).await
        }
        None => serve(server, &registry, drain).await,
    };
    event("exited");
    result
}
