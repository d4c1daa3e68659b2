//! `BENCH=grpc`: probe executions with 100 gRPC `Watch` streams and 64
//! HTTP clients, against HTTP alone (AT-7; goal: equal).
//!
//! Each run builds a fresh registry with one 20 ms probe that counts its
//! executions, serves `ready` over actix (2 workers) and loads it from 64
//! blocking client threads for the same time. Under that load single-flight
//! runs the probe back to back, so a run's executions are its duration
//! over the probe's time; 20 ms (rather than 5) keeps the gaps between
//! flights, and so the noise of a shared machine, small against that. The gRPC run also serves
//! `grpc.health.v1` from the same registry over tonic and keeps 100 Watch
//! streams open (on `""` and on the probe's own service) for the whole
//! load. The two alternate for 3 rounds; the ratio is their median. A last
//! run has the 100 watchers and no HTTP at all: its executions are the
//! schedule's alone. All on 127.0.0.1.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use actix_web::{App, HttpServer};
use zb_health::grpc::server::{GrpcHealth, GrpcTarget};
use zb_health::grpc::tonic_health::pb::HealthCheckRequest;
use zb_health::grpc::tonic_health::pb::health_client::HealthClient;
use zb_health::prelude::{
    HealthRegistry, Probe, ProbeOutcome, ProbeRegistration, ProbeResult, ZbHealth,
};

const CLIENTS: usize = 64;
const WATCHERS: usize = 100;
/// Watch streams share connections as a load balancer's would: HTTP/2
/// multiplexes them.
const CONNECTIONS: usize = 10;
const PROBE_TIME: Duration = Duration::from_millis(20);
/// How long each run loads the server.
const RUN: Duration = Duration::from_secs(3);
/// The gRPC schedule period: short, so the schedule has many chances to
/// add executions within a run.
const PERIOD: Duration = Duration::from_millis(100);

/// Counts executions.
#[derive(Clone)]
struct CountingProbe(Arc<AtomicUsize>);

impl Probe for CountingProbe {
    async fn check(&self) -> ProbeOutcome {
        self.0.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(PROBE_TIME).await;
        Ok(ProbeResult::healthy())
    }
}

/// What one run measured.
struct Measured {
    executions: usize,
    requests: usize,
    /// Scheduled gRPC evaluations, when gRPC was served.
    ticks: Option<u64>,
    /// Watch messages received (each stream's first, plus any change).
    messages: usize,
}

fn registry(executions: &Arc<AtomicUsize>) -> io::Result<HealthRegistry> {
    let registry = HealthRegistry::new();
    registry
        .add(
            ProbeRegistration::new("dependency", CountingProbe(executions.clone()))
                .timeout(Duration::from_secs(1)),
        )
        .map_err(|e| io::Error::other(e.to_string()))?;
    Ok(registry)
}

/// Serves the tiers of `registry` on its own thread and actix `System`
/// until the process exits.
fn serve_http(registry: HealthRegistry) -> io::Result<SocketAddr> {
    let endpoints = ZbHealth::new(registry)
        .build()
        .map_err(|e| io::Error::other(e.to_string()))?;
    crate::servers::on_server_thread("bench-grpc-http", move || {
        let server = HttpServer::new(move || App::new().service(endpoints.clone()))
            .workers(2)
            .backlog(1024)
            .disable_signals()
            .bind(("127.0.0.1", 0))?;
        Ok((server.addrs()[0], vec![server.run()]))
    })
}

/// GETs `/health/ready` from `CLIENTS` threads until `RUN` has passed;
/// the number of requests.
fn load(addr: SocketAddr) -> Result<usize, String> {
    let end = Instant::now() + RUN;
    let threads: Vec<_> = (0..CLIENTS)
        .map(|_| {
            std::thread::spawn(move || -> io::Result<usize> {
                let mut n = 0;
                while Instant::now() < end {
                    crate::client::get(addr, "/health/ready")?;
                    n += 1;
                }
                Ok(n)
            })
        })
        .collect();
    let mut total = 0;
    for t in threads {
        total += t
            .join()
            .map_err(|_| "a client thread panicked".to_owned())?
            .map_err(|e| format!("request failed: {e}"))?;
    }
    Ok(total)
}

/// The gRPC side of a run: tonic serving `health`, `WATCHERS` streams
/// open, on a runtime of its own; `stop` ends it.
struct Watchers {
    messages: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Result<(), String>>,
}

fn watch(health: GrpcHealth) -> Result<Watchers, String> {
    let messages = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), String>>();
    let (m, s) = (messages.clone(), stop.clone());
    let thread = std::thread::Builder::new()
        .name("bench-grpc".into())
        .spawn(move || -> Result<(), String> {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(async move {
                let started = open(health.clone(), m).await;
                let streams = match started {
                    Ok(streams) => {
                        let _ = ready_tx.send(Ok(()));
                        streams
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.clone()));
                        return Err(e);
                    }
                };
                while !s.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                health.stop();
                for stream in streams {
                    stream.abort();
                }
                Ok(())
            })
        })
        .map_err(|e| e.to_string())?;
    ready_rx
        .recv()
        .map_err(|_| "the gRPC thread died".to_owned())??;
    Ok(Watchers {
        messages,
        stop,
        thread,
    })
}

/// Serves `health` on 127.0.0.1:0 and opens the watchers; returns once
/// every stream has its first message.
async fn open(
    health: GrpcHealth,
    messages: Arc<AtomicUsize>,
) -> Result<Vec<tokio::task::JoinHandle<()>>, String> {
    let incoming = tonic::transport::server::TcpIncoming::bind(([127, 0, 0, 1], 0).into())
        .map_err(|e| e.to_string())?;
    let addr = incoming
        .local_addr()
        .map_err(|e: io::Error| e.to_string())?;
    let service = health.server();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(incoming),
    );
    let mut channels = Vec::new();
    for _ in 0..CONNECTIONS {
        let channel = tonic::transport::Channel::from_shared(format!("http://{addr}"))
            .map_err(|e| e.to_string())?
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        channels.push(channel);
    }
    let first = Arc::new(AtomicUsize::new(0));
    let mut streams = Vec::new();
    for i in 0..WATCHERS {
        let mut client = HealthClient::new(channels[i % CONNECTIONS].clone());
        let service = if i % 2 == 0 { "" } else { "bench.dependency" };
        let mut stream = client
            .watch(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .map_err(|e| e.to_string())?
            .into_inner();
        let (messages, first) = (messages.clone(), first.clone());
        streams.push(tokio::spawn(async move {
            let mut seen = 0;
            while let Ok(Some(_)) = stream.message().await {
                messages.fetch_add(1, Ordering::SeqCst);
                seen += 1;
                if seen == 1 {
                    first.fetch_add(1, Ordering::SeqCst);
                }
            }
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while first.load(Ordering::SeqCst) < WATCHERS {
        if Instant::now() > deadline {
            return Err("the watchers got no first message within 10 s".into());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(streams)
}

/// One run: HTTP load, with or without the watchers.
fn measure(http: bool, grpc: bool) -> Result<Measured, String> {
    let executions = Arc::new(AtomicUsize::new(0));
    let registry = registry(&executions).map_err(|e| e.to_string())?;
    let health = if grpc {
        Some(
            GrpcHealth::builder(registry.clone())
                .service("bench.dependency", GrpcTarget::probe("dependency"))
                .period(PERIOD)
                .build()
                .map_err(|e| e.to_string())?,
        )
    } else {
        None
    };
    let watchers = health.clone().map(watch).transpose()?;
    let addr = serve_http(registry).map_err(|e| e.to_string())?;
    // Counted from here: what the load period costs.
    let (base, base_ticks) = (
        executions.load(Ordering::SeqCst),
        health.as_ref().map(|h| h.scheduled_evaluations()),
    );
    let requests = if http {
        load(addr)?
    } else {
        std::thread::sleep(RUN);
        0
    };
    let measured = Measured {
        executions: executions.load(Ordering::SeqCst) - base,
        requests,
        ticks: health
            .as_ref()
            .zip(base_ticks)
            .map(|(h, b)| h.scheduled_evaluations() - b),
        messages: watchers
            .as_ref()
            .map_or(0, |w| w.messages.load(Ordering::SeqCst)),
    };
    if let Some(w) = watchers {
        w.stop.store(true, Ordering::SeqCst);
        w.thread
            .join()
            .map_err(|_| "the gRPC thread panicked".to_owned())??;
    }
    Ok(measured)
}

/// Rounds of the two HTTP runs, alternated so that a drift of the
/// machine's load hits both alike.
const ROUNDS: usize = 3;

/// Runs the cases and prints the table.
pub fn run() -> Result<(), String> {
    println!(
        "gRPC Watch vs HTTP (AT-7): probe executions over {} s, one {} ms probe, {CLIENTS} HTTP clients (2 workers), {WATCHERS} Watch streams on {CONNECTIONS} connections, schedule period {} ms, {ROUNDS} rounds",
        RUN.as_secs(),
        PROBE_TIME.as_millis(),
        PERIOD.as_millis()
    );
    println!("| Run | HTTP requests | Probe executions | Schedule ticks | Watch messages |");
    println!("|---|---|---|---|---|");
    let row = |label: &str, m: &Measured| {
        println!(
            "| {label} | {} | {} | {} | {} |",
            m.requests,
            m.executions,
            m.ticks.map_or("-".into(), |t| t.to_string()),
            m.messages
        );
    };
    let mut ratios = Vec::new();
    for round in 1..=ROUNDS {
        let http = measure(true, false)?;
        let both = measure(true, true)?;
        row(&format!("round {round}: HTTP alone"), &http);
        row(&format!("round {round}: HTTP + {WATCHERS} watchers"), &both);
        ratios.push(both.executions as f64 / http.executions.max(1) as f64);
    }
    let watch_only = measure(false, true)?;
    row(&format!("{WATCHERS} watchers, no HTTP"), &watch_only);
    let mut sorted = ratios.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    println!(
        "| Executions with {WATCHERS} watchers and {CLIENTS} HTTP clients ÷ HTTP alone, median of {ROUNDS} | goal: equal (1.00) | {median:.2} | | |"
    );
    crate::summary::record(
        "grpc",
        format!("probe executions, {WATCHERS} Watch streams + HTTP ÷ HTTP alone"),
        format!("{median:.2}"),
        // "Equal" within a tenth: the schedule's own ticks add a few.
        "1.00 ± 0.10",
        Some((median - 1.0).abs() <= 0.1),
    );
    println!(
        "  per round: {}; the schedule alone costs one execution per tick whatever the number of watchers ({} executions for {} ticks): under HTTP load a tick mostly joins the flight in progress, so the difference stays within the tick count",
        ratios
            .iter()
            .map(|r| format!("{r:.2}"))
            .collect::<Vec<_>>()
            .join(", "),
        watch_only.executions,
        watch_only.ticks.unwrap_or(0)
    );
    println!();
    Ok(())
}
