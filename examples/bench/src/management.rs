//! `BENCH=management`: `/healthz` latency on the management port while
//! every worker of the application's server is blocked (the goal: a p99
//! ≤ 5 ms), and, for contrast, whether the application port answers
//! `/healthz` at all meanwhile.
//!
//! The application server has the bench's usual settings and a `/work`
//! handler that blocks its worker thread for good, as a synchronous call
//! made on an actix worker would; the management server serves the same
//! tiers with one worker of its own. Latencies are measured by in-process
//! clients, one request per connection, so each sample is a whole request.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use actix_web::{App, HttpResponse, HttpServer, web};

use crate::client;
use crate::servers::{WORKERS, on_server_thread};

/// The goal for the management port's p99.
const GOAL: Duration = Duration::from_millis(5);
/// Concurrent clients of the management port.
const CLIENTS: usize = 8;
/// Requests per client.
const REQUESTS: usize = 500;

struct Ports {
    app: SocketAddr,
    management: SocketAddr,
}

/// Runs the measurement and prints its lines.
pub fn run() -> Result<(), String> {
    let blocked = Arc::new(AtomicUsize::new(0));
    let ports = start(blocked.clone()).map_err(|e| e.to_string())?;
    // Saturate: one `/work` request per application worker; each blocks
    // its worker thread until the process exits.
    for _ in 0..WORKERS {
        let app = ports.app;
        std::thread::spawn(move || client::get(app, "/work"));
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while blocked.load(Ordering::SeqCst) < WORKERS {
        if Instant::now() > deadline {
            return Err("the application's workers never blocked".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let app_answered = client::get(ports.app, "/healthz").is_ok();

    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let management = ports.management;
            std::thread::spawn(move || {
                let mut samples = Vec::with_capacity(REQUESTS);
                for _ in 0..REQUESTS {
                    let start = Instant::now();
                    let response = client::get(management, "/healthz")
                        .map_err(|e| format!("management /healthz: {e}"))?;
                    if response.status != 200 {
                        return Err(format!("management /healthz answered {}", response.status));
                    }
                    samples.push(start.elapsed());
                }
                Ok::<_, String>(samples)
            })
        })
        .collect();
    let mut samples = Vec::new();
    for client in clients {
        samples.extend(client.join().map_err(|_| "a client panicked")??);
    }
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 * q).ceil() as usize).saturating_sub(1)];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let p99 = at(0.99);
    println!(
        "management: /healthz on the management port (1 worker) while the application's {WORKERS} worker(s) are blocked, {CLIENTS} clients × {REQUESTS} requests"
    );
    println!(
        "  p50 {:.2} ms   p99 {:.2} ms   max {:.2} ms   (goal p99 ≤ {} ms): {}",
        ms(at(0.5)),
        ms(p99),
        ms(at(1.0)),
        GOAL.as_millis(),
        if p99 <= GOAL { "met" } else { "not met" }
    );
    crate::summary::record(
        "management",
        "management port /healthz p99, application saturated",
        format!("{:.2} ms", ms(p99)),
        format!("≤ {} ms", GOAL.as_millis()),
        Some(p99 <= GOAL),
    );
    println!(
        "  the same /healthz on the application port: {}",
        if app_answered {
            "answered (the saturation did not hold)"
        } else {
            "no answer within the client's 5 s timeout"
        }
    );
    Ok(())
}

/// Starts both servers over one registry with a healthy ready probe.
fn start(blocked: Arc<AtomicUsize>) -> std::io::Result<Ports> {
    on_server_thread("bench-management-servers", move || {
        let registry = zb_health::prelude::HealthRegistry::new();
        let endpoints = zb_health::prelude::map_zb_health(registry);
        let app = {
            let endpoints = endpoints.clone();
            HttpServer::new(move || {
                let blocked = blocked.clone();
                App::new().service(endpoints.clone()).route(
                    "/work",
                    web::get().to(move || {
                        blocked.fetch_add(1, Ordering::SeqCst);
                        // Blocks this worker thread for good (`park`
                        // may return spuriously; nothing ever sets the
                        // flag).
                        static NEVER: AtomicBool = AtomicBool::new(false);
                        while !NEVER.load(Ordering::Relaxed) {
                            std::thread::park();
                        }
                        async { HttpResponse::Ok().finish() }
                    }),
                )
            })
            .workers(WORKERS)
            .disable_signals()
            .shutdown_timeout(1)
            .bind(("127.0.0.1", 0))?
        };
        let management = HttpServer::new(move || App::new().service(endpoints.clone()))
            .workers(1)
            .disable_signals()
            .shutdown_timeout(1)
            .bind(("127.0.0.1", 0))?;
        let ports = Ports {
            app: app.addrs()[0],
            management: management.addrs()[0],
        };
        Ok((ports, vec![app.run(), management.run()]))
    })
}
