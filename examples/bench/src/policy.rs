//! `BENCH=policy`: the execution-policy figures (BE-HLTH-006), next to a
//! naive per-request executor measured in the same run: the same probe
//! type, called by a bare actix handler once per request under the same
//! deadline. Both sides are real `HttpServer`s with 2 workers on
//! 127.0.0.1:0, loaded by 64 blocking client threads, one request per
//! connection.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use actix_web::{App, HttpResponse, HttpServer, web};
use zb_health::prelude::{
    HealthRegistry, Probe, ProbeOutcome, ProbeRegistration, ProbeResult, ZbHealth,
};

const CLIENTS: usize = 64;
const REQUESTS: usize = 1000;
const PROBE_TIME: Duration = Duration::from_millis(5);
const HUNG_DEADLINE: Duration = Duration::from_millis(200);
/// Requests per client in the hung-probe run: each takes the deadline.
const HUNG_ROUNDS: usize = 5;

/// Starts, peak concurrency of one probe.
#[derive(Default)]
struct Counters {
    started: AtomicUsize,
    now: AtomicUsize,
    peak: AtomicUsize,
}

/// A probe taking `run`, or never returning when `run` is `None`.
#[derive(Clone)]
struct BenchProbe {
    counters: Arc<Counters>,
    run: Option<Duration>,
}

struct Running(Arc<Counters>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Probe for BenchProbe {
    async fn check(&self) -> ProbeOutcome {
        let c = &self.counters;
        c.started.fetch_add(1, Ordering::SeqCst);
        let n = c.now.fetch_add(1, Ordering::SeqCst) + 1;
        c.peak.fetch_max(n, Ordering::SeqCst);
        let _running = Running(c.clone());
        match self.run {
            Some(run) => tokio::time::sleep(run).await,
            None => std::future::pending().await,
        }
        Ok(ProbeResult::healthy())
    }
}

/// One scenario: a zb-health server and a naive one over the same probe.
struct Pair {
    zb: SocketAddr,
    zb_counters: Arc<Counters>,
    naive: SocketAddr,
    naive_counters: Arc<Counters>,
}

fn pair(run: Option<Duration>, deadline: Duration, cache: Option<Duration>) -> io::Result<Pair> {
    let (zb_counters, naive_counters) = (Arc::default(), Arc::default());
    let zb_probe = BenchProbe {
        counters: Arc::clone(&zb_counters),
        run,
    };
    let naive_probe = BenchProbe {
        counters: Arc::clone(&naive_counters),
        run,
    };
    let registry = HealthRegistry::new();
    let mut registration = ProbeRegistration::new("dependency", zb_probe).timeout(deadline);
    if let Some(cache) = cache {
        registration = registration.cache(cache);
    }
    registry
        .add(registration)
        .map_err(|e| io::Error::other(e.to_string()))?;
    let endpoints = ZbHealth::new(registry)
        .build()
        .map_err(|e| io::Error::other(e.to_string()))?;
    let zb = serve(move |c| {
        c.service(endpoints.clone());
    })?;
    let naive = serve(move |c| {
        let probe = naive_probe.clone();
        c.route(
            "/health/ready",
            web::get().to(move || {
                let probe = probe.clone();
                async move {
                    match tokio::time::timeout(deadline, probe.check()).await {
                        Ok(Ok(_)) => HttpResponse::Ok().finish(),
                        _ => HttpResponse::ServiceUnavailable().finish(),
                    }
                }
            }),
        );
    })?;
    Ok(Pair {
        zb,
        zb_counters,
        naive,
        naive_counters,
    })
}

/// Serves on its own thread and actix `System` until the process exits.
fn serve<F>(configure: F) -> io::Result<SocketAddr>
where
    F: Fn(&mut web::ServiceConfig) + Send + Clone + 'static,
{
    crate::servers::on_server_thread("bench-policy", move || {
        let server = HttpServer::new(move || App::new().configure(configure.clone()))
            .workers(2)
            .backlog(1024)
            .disable_signals()
            .bind(("127.0.0.1", 0))?;
        Ok((server.addrs()[0], vec![server.run()]))
    })
}

/// `total` GETs of `/health/ready` from `CLIENTS` threads; the latencies.
fn load(addr: SocketAddr, total: usize) -> Result<Vec<Duration>, String> {
    let issued = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let issued = issued.clone();
            std::thread::spawn(move || -> io::Result<Vec<Duration>> {
                let mut latencies = Vec::new();
                while issued.fetch_add(1, Ordering::SeqCst) < total {
                    let start = Instant::now();
                    crate::client::get(addr, "/health/ready")?;
                    latencies.push(start.elapsed());
                }
                Ok(latencies)
            })
        })
        .collect();
    let mut all = Vec::with_capacity(total);
    for t in threads {
        let part = t
            .join()
            .map_err(|_| "a client thread panicked".to_owned())?;
        all.extend(part.map_err(|e| format!("request failed: {e}"))?);
    }
    Ok(all)
}

fn p99(mut latencies: Vec<Duration>) -> Duration {
    latencies.sort_unstable();
    let i = (latencies.len() * 99).div_ceil(100).saturating_sub(1);
    latencies.get(i).copied().unwrap_or_default()
}

fn per_thousand(executions: usize, requests: usize) -> f64 {
    executions as f64 * 1000.0 / requests as f64
}

/// Runs the three scenarios and prints the table.
pub fn run() -> Result<(), String> {
    let e = |e: io::Error| e.to_string();
    println!(
        "Execution policy (BE-HLTH-006): zb-health vs a naive per-request executor, {CLIENTS} clients, 2 workers each"
    );

    let sf = pair(Some(PROBE_TIME), Duration::from_secs(1), None).map_err(e)?;
    load(sf.zb, REQUESTS)?;
    load(sf.naive, REQUESTS)?;
    let sf_zb = per_thousand(sf.zb_counters.started.load(Ordering::SeqCst), REQUESTS);
    let sf_naive = per_thousand(sf.naive_counters.started.load(Ordering::SeqCst), REQUESTS);

    let cached = pair(
        Some(PROBE_TIME),
        Duration::from_secs(1),
        Some(Duration::from_secs(1)),
    )
    .map_err(e)?;
    let started = Instant::now();
    load(cached.zb, REQUESTS)?;
    let cached_secs = started.elapsed().as_secs_f64();
    load(cached.naive, REQUESTS)?;
    let cache_zb = per_thousand(cached.zb_counters.started.load(Ordering::SeqCst), REQUESTS);
    let cache_naive = per_thousand(
        cached.naive_counters.started.load(Ordering::SeqCst),
        REQUESTS,
    );

    let hung = pair(None, HUNG_DEADLINE, None).map_err(e)?;
    let n = CLIENTS * HUNG_ROUNDS;
    let hung_zb = p99(load(hung.zb, n)?);
    let hung_naive = p99(load(hung.naive, n)?);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let deadline = ms(HUNG_DEADLINE);

    println!("| Measurement | Goal | zb-health | naive | zb-health meets goal |");
    println!("|---|---|---|---|---|");
    println!(
        "| Probe executions per 1,000 ready requests, 5 ms probe, single-flight only | <= 100 | {sf_zb:.0} | {sf_naive:.0} | {} |",
        sf_zb <= 100.0
    );
    println!(
        "| The same with a 1 s cache (zb run took {cached_secs:.2} s) | <= 1 | {cache_zb:.0} | {cache_naive:.0} | {} |",
        cache_zb <= 1.0
    );
    println!(
        "| p99 latency, one hung probe, 200 ms deadline ({n} requests) | <= 1.2 x deadline | {:.0} ms ({:.2} x) | {:.0} ms ({:.2} x) | {} |",
        ms(hung_zb),
        ms(hung_zb) / deadline,
        ms(hung_naive),
        ms(hung_naive) / deadline,
        ms(hung_zb) <= 1.2 * deadline
    );
    let peak_zb = hung.zb_counters.peak.load(Ordering::SeqCst);
    println!(
        "| Max in-flight executions of the hung probe during that run | exactly 1 | {peak_zb} | {} | {} |",
        hung.naive_counters.peak.load(Ordering::SeqCst),
        peak_zb == 1
    );
    println!(
        "| /healthz throughput with 3 watchdogs / none | >= 0.95 | BENCH=watchdog measures it | | |"
    );
    let record = |measure: &str, value: String, goal: &str, met: bool| {
        crate::summary::record("policy", measure.to_owned(), value, goal, Some(met));
    };
    record(
        "probe executions per 1,000 ready requests, single-flight (naive in brackets)",
        format!("{sf_zb:.0} ({sf_naive:.0})"),
        "≤ 100",
        sf_zb <= 100.0,
    );
    record(
        "the same with a 1 s cache",
        format!("{cache_zb:.0} ({cache_naive:.0})"),
        "≤ 1",
        cache_zb <= 1.0,
    );
    record(
        "ready p99 with one hung probe, ÷ its 200 ms deadline (naive in brackets)",
        format!(
            "{:.2} ({:.2})",
            ms(hung_zb) / deadline,
            ms(hung_naive) / deadline
        ),
        "≤ 1.2",
        ms(hung_zb) <= 1.2 * deadline,
    );
    record(
        "max in-flight executions of the hung probe",
        peak_zb.to_string(),
        "exactly 1",
        peak_zb == 1,
    );
    println!();
    Ok(())
}
