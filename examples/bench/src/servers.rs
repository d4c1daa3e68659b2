//! The servers under test: zb-health over the bench's own ready registry
//! (`crate::probes`) and bare actix-web handlers doing the same work by
//! hand, plus the servers of the single-table modes.

use std::borrow::Cow;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::web::{self, Bytes};
use actix_web::{App, HttpResponse};
use serde::Serialize;
use serde_json::{Map, Value};
use zb_health::prelude::{HealthStatus, Probe, ProbeOutcome, ProbeRegistration, ProbeResult};

use crate::probes::{CACHE_PROBE_NAME, CacheProbe, DatabaseProbe, DiskSpaceProbe};

/// Worker threads per server. The machine has 2 cores shared by both
/// servers and wrk; one worker each keeps the server under test on one
/// core and wrk on the other, and the idle server costs nothing.
pub const WORKERS: usize = 1;
/// Listen backlog of both servers (actix's default, stated so both match
/// by construction rather than by coincidence).
pub const BACKLOG: u32 = 1024;
/// Keep-alive of both servers (actix's default, stated for the same
/// reason). wrk reuses its connections, so this only has to outlive a gap.
pub const KEEP_ALIVE: Duration = Duration::from_secs(5);
/// Loopback only, port chosen by the OS: the benchmark must not expose
/// anything or collide with a developer's running service.
const LOOPBACK: (&str, u16) = ("127.0.0.1", 0);

/// The bare server's path for the hand-written three-probe handler.
pub const BARE_READY_PATH: &str = "/ready3";
/// Builds and binds an `HttpServer` with the one set of settings both
/// servers share. A macro rather than a function because `HttpServer`'s
/// builder methods carry a page of generic bounds that a helper would have
/// to restate; the macro keeps the settings in one place all the same.
macro_rules! bench_http_server {
    ($factory:expr) => {
        actix_web::HttpServer::new($factory)
            .workers(WORKERS)
            .backlog(BACKLOG)
            .keep_alive(KEEP_ALIVE)
            // As `ZbHealthServer` sets it: a body written in more than one
            // write must not wait on Nagle's algorithm.
            .tcp_nodelay(true)
            // The driver owns the process lifetime; actix's own Ctrl-C
            // handling would only delay the exit with a graceful drain.
            .disable_signals()
            .shutdown_timeout(1)
            .bind(LOOPBACK)
    };
}

/// Where the two servers listen, and their workers' CPU clocks.
pub struct Addresses {
    /// The zb-health server (the bench's three-probe ready registry).
    pub zb: SocketAddr,
    /// The bare actix-web server.
    pub bare: SocketAddr,
    /// The zb-health server's worker thread.
    pub zb_clock: WorkerClock,
    /// The bare server's worker thread.
    pub bare_clock: WorkerClock,
}

/// The on-CPU time of one server's worker thread.
///
/// Requests/s on a shared, busy machine measure how much CPU the scheduler
/// happened to grant as much as the code; CPU time per request does not
/// depend on that, so it is reported beside the throughput.
#[derive(Clone, Default)]
pub struct WorkerClock(Arc<OnceLock<PathBuf>>);

impl WorkerClock {
    /// Remembers the calling thread. Called from the `App` factory, which
    /// actix runs once on each worker thread as the worker starts.
    fn record_current_thread(&self) {
        // `/proc/thread-self` names the calling thread: `<pid>/task/<tid>`.
        if let Ok(task) = std::fs::read_link("/proc/thread-self") {
            let _ = self
                .0
                .set(PathBuf::from("/proc").join(task).join("schedstat"));
        }
    }

    /// Pins the worker thread to `cpu` (through `taskset`), so that its
    /// caches and core stay the same for every endpoint compared
    /// (`BENCH=limit`). `false` when the thread is unknown or `taskset` failed.
    pub fn pin(&self, cpu: usize) -> bool {
        // The path is /proc/<pid>/task/<tid>/schedstat.
        let tid = self
            .0
            .get()
            .and_then(|p| p.parent())
            .and_then(|p| p.file_name())
            .and_then(|t| t.to_str().map(str::to_owned));
        tid.is_some_and(|tid| {
            std::process::Command::new("taskset")
                .args(["-p", "-c", &cpu.to_string(), &tid])
                .stdout(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
    }

    /// The worker's total on-CPU time so far; `None` off Linux or before
    /// the worker started.
    pub fn cpu_time(&self) -> Option<Duration> {
        let stat = std::fs::read_to_string(self.0.get()?).ok()?;
        // The first field of schedstat is the time spent running, in ns.
        let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
        Some(Duration::from_nanos(ns))
    }
}

/// Starts the zb-health server, fetches its `/healthz` bytes, starts the
/// bare server serving them, and returns both addresses.
///
/// The servers run on their own thread under their own actix `System`, so
/// the driver can block on wrk and plain sockets without stalling any
/// runtime. They live until the process exits.
pub fn start() -> io::Result<Addresses> {
    let database = DatabaseProbe::default();
    let registry = crate::probes::ready_registry(3, &database, None)?;
    let zb_endpoints = paced(registry);
    // The same probe *instances* where they have state (the database switch),
    // the same probe *types* otherwise: the bare handler calls the very same
    // `Probe::check` code.
    let probes = Arc::new(BareProbes {
        database,
        disk_space: DiskSpaceProbe,
        cache: CacheProbe,
    });

    let (zb_clock, bare_clock) = (WorkerClock::default(), WorkerClock::default());
    let clocks = (zb_clock.clone(), bare_clock.clone());
    let (tx, rx) = std::sync::mpsc::channel::<io::Result<Addresses>>();
    std::thread::Builder::new()
        .name("bench-servers".into())
        .spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                let zb = match start_zb(zb_endpoints, clocks.0) {
                    Ok(zb) => zb,
                    Err(e) => return drop(tx.send(Err(e))),
                };
                let zb_addr = zb.0;
                actix_web::rt::spawn(zb.1);
                let live = match fetch_live(zb_addr).await {
                    Ok(live) => live,
                    Err(e) => return drop(tx.send(Err(e))),
                };
                let bare = match start_bare(live, probes, Arc::from(Vec::new()), clocks.1) {
                    Ok(bare) => bare,
                    Err(e) => return drop(tx.send(Err(e))),
                };
                let _ = tx.send(Ok(Addresses {
                    zb: zb_addr,
                    bare: bare.0,
                    zb_clock,
                    bare_clock,
                }));
                let _ = bare.1.await;
            });
        })?;
    rx.recv()
        .map_err(|_| io::Error::other("server thread died before binding"))?
}

/// zb-health's `/healthz` bytes, fetched from the running server rather
/// than hard-coded, so the bare baseline serves exactly what zb-health
/// serves today. Off the runtime's thread: the client blocks.
async fn fetch_live(zb: SocketAddr) -> io::Result<Bytes> {
    match web::block(move || crate::client::get(zb, "/healthz")).await {
        Ok(Ok(resp)) => Ok(Bytes::from(resp.body)),
        Ok(Err(e)) => Err(e),
        Err(e) => Err(io::Error::other(e.to_string())),
    }
}

/// The three tiers at their ZB paths over `registry`, with large bodies in
/// slices: the bench's servers set TCP_NODELAY, as `ZbHealthServer` does
/// (P12).
fn paced(registry: zb_health::prelude::HealthRegistry) -> zb_health::http::ZbHealthEndpoints {
    zb_health::prelude::ZbHealth::new(registry)
        .pace_large_bodies(true)
        .build()
        .expect("the ZB paths are valid")
}

/// The zb-health server: the three tiers at their ZB paths over the
/// bench's registry (the clock only notes the worker thread, once, at
/// start).
fn start_zb(
    endpoints: zb_health::http::ZbHealthEndpoints,
    clock: WorkerClock,
) -> io::Result<(SocketAddr, actix_web::dev::Server)> {
    let server = bench_http_server!(move || {
        clock.record_current_thread();
        App::new().service(endpoints.clone())
    })?;
    let addr = server.addrs()[0];
    Ok((addr, server.run()))
}

/// Serves one ready tier of `probes` probes in this process, as one child
/// process of the report (`BENCH=serve`): zb-health's three tiers (each
/// probe cached for `cache` when given), or the bare server with its
/// `/healthz` and `/ready3` (three probes only). Prints
/// `listening <address>` on stdout once bound and serves until killed.
pub fn serve(kind: &str, probes: usize, cache: Option<Duration>) -> io::Result<()> {
    let database = DatabaseProbe::default();
    let registry = crate::probes::ready_registry(probes, &database, cache)?;
    let endpoints = paced(registry);
    let bare = match kind {
        "zb" => false,
        "bare" if probes == 3 && cache.is_none() => true,
        "bare" => {
            return Err(io::Error::other(
                "the bare server joins exactly 3 probes, uncached",
            ));
        }
        other => return Err(io::Error::other(format!("SERVE={other}: not zb or bare"))),
    };
    actix_web::rt::System::new().block_on(async move {
        let (zb_addr, zb_server) = start_zb(endpoints, WorkerClock::default())?;
        let (addr, server) = if bare {
            // The zb server only lends its `/healthz` bytes, then stops, so
            // the process holds one server like the peers do.
            let handle = zb_server.handle();
            actix_web::rt::spawn(zb_server);
            let live = fetch_live(zb_addr).await?;
            handle.stop(false).await;
            let probes = Arc::new(BareProbes {
                database,
                disk_space: DiskSpaceProbe,
                cache: CacheProbe,
            });
            start_bare(live, probes, Arc::from(Vec::new()), WorkerClock::default())?
        } else {
            (zb_addr, zb_server)
        };
        println!("listening {addr}");
        // The driver reads the line through a pipe: flush it now.
        io::Write::flush(&mut io::stdout())?;
        server.await
    })
}

/// The baseline: what a developer would write by hand without zb-health.
/// `/readyn/{n}` joins the first `n` probes named by `names` (`BENCH=limit`'s
/// P11).
fn start_bare(
    live: Bytes,
    probes: Arc<BareProbes>,
    names: Arc<[String]>,
    clock: WorkerClock,
) -> io::Result<(SocketAddr, actix_web::dev::Server)> {
    let server = bench_http_server!(move || {
        clock.record_current_thread();
        let live = live.clone();
        let (probes, many) = (probes.clone(), probes.clone());
        let names = names.clone();
        App::new()
            .route(
                "/healthz",
                // `Bytes` clones by reference count: the cheapest possible
                // static answer, which is what zb-health's live tier is
                // measured against.
                web::get().to(move || {
                    let body = live.clone();
                    async move { json_response(StatusCode::OK, body) }
                }),
            )
            .route(
                BARE_READY_PATH,
                web::get().to(move || {
                    let probes = probes.clone();
                    async move { ready3(&probes).await }
                }),
            )
            .route(
                "/readyn/{n}",
                web::get().to(move |n: web::Path<usize>| {
                    let (probes, names) = (many.clone(), names.clone());
                    async move { ready_n(&probes, &names, n.into_inner()).await }
                }),
            )
    })?;
    let addr = server.addrs()[0];
    Ok((addr, server.run()))
}

/// The three probes the hand-written handler joins.
struct BareProbes {
    database: DatabaseProbe,
    disk_space: DiskSpaceProbe,
    cache: CacheProbe,
}

/// The hand-written ready handler: the three `Probe::check` futures joined
/// on the request's task, timed, and written as the same JSON shape as
/// zb-health's canonical body. It has none of zb-health's safety nets (no
/// deadline, no panic guard, no in-flight bound); their price is what the
/// ratio measures.
async fn ready3(probes: &BareProbes) -> HttpResponse {
    let started = Instant::now();
    let (database, disk_space, cache) = tokio::join!(
        timed(probes.database.check()),
        timed(probes.disk_space.check()),
        timed(probes.cache.check()),
    );
    let (database, disk_space, cache) = (entry(database), entry(disk_space), entry(cache));
    let status = HealthStatus::aggregate([database.0, disk_space.0, cache.0]);
    let body = ReadyBody {
        status: status.as_str(),
        total_duration_ms: started.elapsed().as_millis() as u64,
        entries: ReadyEntries {
            database: database.1,
            disk_space: disk_space.1,
            cache: cache.1,
        },
    };
    ready_response(status, &body)
}

/// A hand-written ready answer: the tier's code and `body` as JSON.
fn ready_response(status: HealthStatus, body: &impl Serialize) -> HttpResponse {
    let code = if status.is_serving() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    // Serialising strings, numbers and a JSON map cannot fail.
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    json_response(code, Bytes::from(bytes))
}

/// Both servers answer with the same headers, so wrk reads the same bytes
/// apart from the body.
fn json_response(code: StatusCode, body: Bytes) -> HttpResponse {
    HttpResponse::build(code)
        .insert_header((
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        ))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .body(body)
}

/// Runs `check` and measures it, as the body reports per-probe durations.
async fn timed(check: impl Future<Output = ProbeOutcome>) -> (ProbeOutcome, Duration) {
    let started = Instant::now();
    let outcome = check.await;
    (outcome, started.elapsed())
}

/// One probe's line; an error becomes a fixed text like zb-health's, so the
/// bodies stay comparable in the failing case too.
fn entry((outcome, duration): (ProbeOutcome, Duration)) -> (HealthStatus, EntryBody) {
    let (status, description, data) = match outcome {
        Ok(r) => (r.status, r.description, r.data),
        Err(_) => (
            HealthStatus::Unhealthy,
            Some(Cow::Borrowed("check failed")),
            None,
        ),
    };
    let body = EntryBody {
        status: status.as_str(),
        description,
        duration_ms: duration.as_micros() as f64 / 1000.0,
        data,
    };
    (status, body)
}

/// `{"status","totalDurationMs","entries":{…}}`, the canonical shape.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReadyBody {
    status: &'static str,
    total_duration_ms: u64,
    entries: ReadyEntries,
}

/// The entries as a JSON object keyed by probe name, in the same order as
/// the zb-health registry holds them.
#[derive(Serialize)]
struct ReadyEntries {
    database: EntryBody,
    #[serde(rename = "disk-space")]
    disk_space: EntryBody,
    cache: EntryBody,
}

/// `{"status","description","durationMs","data"?}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EntryBody {
    status: &'static str,
    description: Option<Cow<'static, str>>,
    duration_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Map<String, Value>>,
}

/// The watchdog comparison's two servers, with the settings every bench
/// server shares: `/healthz` over a registry without watchdogs, and over
/// one with [`WATCHDOGS`] heartbeating loops.
pub struct WatchdogPair {
    /// The server whose registry has no watchdogs.
    pub plain: SocketAddr,
    /// The server whose registry has the watchdogs.
    pub watched: SocketAddr,
}

/// How many loops the watched server's registry watches (`BENCH=watchdog`
/// asks for three).
pub const WATCHDOGS: usize = 3;

/// Starts the watchdog pair. The heartbeats come from a plain thread every
/// 100 ms against a 60 s deadline, so the watched `/healthz` stays on its
/// healthy path for the whole run, as in a service whose loops are alive.
pub fn start_watchdog_pair() -> io::Result<WatchdogPair> {
    let plain = zb_health::prelude::HealthRegistry::new();
    let watched = zb_health::prelude::HealthRegistry::new();
    let mut beats = Vec::new();
    for i in 0..WATCHDOGS {
        let beat = watched
            .lifecycle()
            .watchdog(&format!("loop-{i}"), Duration::from_secs(60))
            .map_err(|e| io::Error::other(e.to_string()))?;
        beat.beat();
        beats.push(beat);
    }
    std::thread::Builder::new()
        .name("bench-heartbeats".into())
        .spawn(move || {
            loop {
                for beat in &beats {
                    beat.beat();
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })?;
    on_server_thread("bench-watchdog-servers", move || {
        let mut started = Vec::new();
        for registry in [plain, watched] {
            let endpoints = zb_health::prelude::map_zb_health(registry);
            let server = bench_http_server!(move || App::new().service(endpoints.clone()))?;
            started.push((server.addrs()[0], server.run()));
        }
        let pair = WatchdogPair {
            plain: started[0].0,
            watched: started[1].0,
        };
        Ok((pair, started.into_iter().map(|(_, s)| s).collect()))
    })
}

/// Runs `start` on a thread of its own under an actix `System`: it binds
/// and starts servers and returns what the caller needs (their
/// addresses) with the running servers, which then serve until the
/// process exits. The driver's own thread stays free to block on wrk and
/// plain sockets.
pub fn on_server_thread<T: Send + 'static>(
    name: &str,
    start: impl FnOnce() -> io::Result<(T, Vec<actix_web::dev::Server>)> + Send + 'static,
) -> io::Result<T> {
    let (tx, rx) = std::sync::mpsc::channel::<io::Result<T>>();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                match start() {
                    Ok((value, servers)) => {
                        let _ = tx.send(Ok(value));
                        for server in servers {
                            actix_web::rt::spawn(server);
                        }
                        std::future::pending::<()>().await;
                    }
                    Err(e) => drop(tx.send(Err(e))),
                }
            });
        })?;
    rx.recv()
        .map_err(|_| io::Error::other("the server thread died before binding"))?
}

/// The disclosure comparison's three servers: `/health/ready` over one
/// registry at `full`, `names` and `status` disclosure, with the settings
/// every bench server shares.
pub struct DisclosureServers {
    /// `(level, address, worker clock)`, `full` first.
    pub servers: Vec<(zb_health::spec::Disclosure, SocketAddr, WorkerClock)>,
}

/// How many probes the disclosure comparison's ready tier runs, each with
/// a description and `data`, so `full` has something to show.
pub const DISCLOSED_PROBES: usize = 3;

/// Starts the three disclosure servers over one registry of
/// [`DISCLOSED_PROBES`] fast probes.
pub fn start_disclosure_servers() -> io::Result<DisclosureServers> {
    use zb_health::spec::Disclosure;
    let registry = zb_health::prelude::HealthRegistry::new();
    for name in ["database", "disk-space", CACHE_PROBE_NAME] {
        registry
            .add(ProbeRegistration::new(
                name,
                zb_health::prelude::from_fn(|| async {
                    Ok(ProbeResult::healthy()
                        .with_description("dependency reachable")
                        .with_data("selfAddress", "127.0.0.1:7000"))
                }),
            ))
            .map_err(|e| io::Error::other(e.to_string()))?;
    }
    on_server_thread("bench-disclosure-servers", move || {
        let mut started = Vec::new();
        for level in [Disclosure::Full, Disclosure::Names, Disclosure::Status] {
            let clock = WorkerClock::default();
            let worker = clock.clone();
            let endpoints = zb_health::prelude::ZbHealth::new(registry.clone())
                .disclosure(level)
                .build()
                .map_err(|e| io::Error::other(e.to_string()))?;
            let server = bench_http_server!(move || {
                worker.record_current_thread();
                App::new().service(endpoints.clone())
            })?;
            started.push((level, server.addrs()[0], clock, server.run()));
        }
        let servers = DisclosureServers {
            servers: started
                .iter()
                .map(|(l, a, c, _)| (*l, *a, c.clone()))
                .collect(),
        };
        Ok((servers, started.into_iter().map(|(.., s)| s).collect()))
    })
}

/// One server of the `BENCH=limit` comparison: where it listens and its
/// worker.
pub struct Limited {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its worker thread.
    pub clock: WorkerClock,
}

/// The `BENCH=limit` servers, each with one worker of its own so each one's CPU
/// per request is its own: zb-health with `n` probes for each `(n, cache)`
/// of `zb`, and one bare server (static `/healthz`, `/ready3`, and
/// `/readyn/{n}`, a hand-written `join_all` of `n` probes).
pub fn start_limit(
    zb: Vec<(usize, Option<Duration>)>,
    bare_max: usize,
) -> io::Result<(Vec<Limited>, Limited)> {
    on_server_thread("bench-limit", move || {
        let database = DatabaseProbe::default();
        let mut servers = Vec::new();
        let mut zb_out = Vec::new();
        for (n, cache) in zb {
            let registry = crate::probes::ready_registry(n, &database, cache)?;
            let clock = WorkerClock::default();
            let (addr, server) = start_zb(paced(registry), clock.clone())?;
            servers.push(server);
            zb_out.push(Limited { addr, clock });
        }
        // zb-health's `/healthz` bytes, as `start` serves them: the live
        // body of every registry without watchdogs.
        let live = Bytes::from(zb_health::writer::canonical_json(
            &zb_health::report::HealthReport::new(
                zb_health::prelude::Tag::Live,
                Vec::new(),
                Duration::ZERO,
            ),
        ));
        let probes = Arc::new(BareProbes {
            database,
            disk_space: DiskSpaceProbe,
            cache: CacheProbe,
        });
        let names: Arc<[String]> = (0..bare_max).map(crate::probes::probe_name).collect();
        let clock = WorkerClock::default();
        let (addr, server) = start_bare(live, probes, names, clock.clone())?;
        servers.push(server);
        Ok(((zb_out, Limited { addr, clock }), servers))
    })
}

/// The hand-written ready handler over `n` probes shaped like the
/// registry's (`database`, `disk-space`, then `cache`s): `join_all` of the
/// checks, timed, the same JSON shape; no safety net.
async fn ready_n(probes: &BareProbes, names: &[String], n: usize) -> HttpResponse {
    let started = Instant::now();
    let n = n.min(names.len());
    let results = futures_util::future::join_all((0..n).map(|i| {
        timed(async move {
            match i {
                0 => probes.database.check().await,
                1 => probes.disk_space.check().await,
                _ => probes.cache.check().await,
            }
        })
    }))
    .await;
    let entries: Vec<(HealthStatus, EntryBody)> = results.into_iter().map(entry).collect();
    let status = HealthStatus::aggregate(entries.iter().map(|e| e.0));
    let body = ManyBody {
        status: status.as_str(),
        total_duration_ms: started.elapsed().as_millis() as u64,
        entries: ManyEntries(names, &entries),
    };
    ready_response(status, &body)
}

/// [`ReadyBody`] over any number of entries.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ManyBody<'a> {
    status: &'static str,
    total_duration_ms: u64,
    entries: ManyEntries<'a>,
}

/// The entries keyed by name, in order.
struct ManyEntries<'a>(&'a [String], &'a [(HealthStatus, EntryBody)]);

impl Serialize for ManyEntries<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.1.len()))?;
        for (name, (_, body)) in self.0.iter().zip(self.1) {
            map.serialize_entry(name, body)?;
        }
        map.end()
    }
}

/// The hysteresis comparison's servers (`BENCH=hysteresis`, BE-HLTH-006):
/// one registry of [`DISCLOSED_PROBES`] fast probes without thresholds,
/// one the same with `failure_threshold(3)` and `success_threshold(2)` on
/// every probe, each on its own server: `(label, address, worker clock)`, the plain first.
pub fn start_hysteresis_servers() -> io::Result<Vec<(&'static str, SocketAddr, WorkerClock)>> {
    let registry = |threshold: bool| -> io::Result<zb_health::prelude::HealthRegistry> {
        let registry = zb_health::prelude::HealthRegistry::new();
        for name in ["database", "disk-space", CACHE_PROBE_NAME] {
            let r = ProbeRegistration::new(
                name,
                zb_health::prelude::from_fn(|| async {
                    Ok(ProbeResult::healthy().with_description("dependency reachable"))
                }),
            );
            let r = if threshold {
                r.failure_threshold(3).success_threshold(2)
            } else {
                r
            };
            registry
                .add(r)
                .map_err(|e| io::Error::other(e.to_string()))?;
        }
        Ok(registry)
    };
    let registries = [("plain", registry(false)?), ("hysteresis", registry(true)?)];
    on_server_thread("bench-hysteresis-servers", move || {
        let mut started = Vec::new();
        for (label, registry) in registries {
            let clock = WorkerClock::default();
            let worker = clock.clone();
            let endpoints = zb_health::prelude::map_zb_health(registry);
            let server = bench_http_server!(move || {
                worker.record_current_thread();
                App::new().service(endpoints.clone())
            })?;
            started.push((label, server.addrs()[0], clock, server.run()));
        }
        let servers = started
            .iter()
            .map(|(l, a, c, _)| (*l, *a, c.clone()))
            .collect();
        Ok((servers, started.into_iter().map(|(.., s)| s).collect()))
    })
}
