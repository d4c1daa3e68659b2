//! `zb-health-bench`: throughput of zb-health's endpoints against bare
//! actix-web handlers doing the same work, in one process, measured with
//! wrk.
//!
//! The main comparison (`BENCH=compare`, also what runs without `BENCH`):
//! two servers run side by side with identical `HttpServer` settings:
//! zb-health over the bench's own ready registry of three fast probes
//! (`probes.rs`), and a bare server with a static `/healthz` and a hand-written
//! `/ready3` that joins the same three probes. wrk loads each endpoint in
//! turn, alternating zb-health and bare, for `ROUNDS` rounds; the report is
//! the per-round requests/s, their medians and two ratios with their goals,
//! then the same comparison in worker CPU time per request, which a busy
//! machine disturbs far less than throughput, and the execution-policy
//! table of `BENCH=policy`.
//!
//! Environment: `ROUNDS` (5), `DURATION` (`5s`), `CONNECTIONS` (32),
//! `THREADS` (1), `WARMUP` (`1s`; `0` skips). Exits 0 whatever the ratios
//! are: it is a report, not a test.
//!
//! `BENCH=all` (what `bench/run.sh` runs) runs every mode in turn, then the
//! sweeps of `report.rs` (each server its own child process, peers of
//! other ecosystems included), prints one table of every ratio, and writes
//! `bench/RESULTS.md` with the PNG plots.
//!
//! `BENCH=cluster` starts clusters of 3, 9 and 27 lean nodes
//! (`zb-health-cluster-node`) in a network namespace and writes the cost
//! per node, the failover times and the SIGTERM hand-over into
//! `bench/RESULTS.md` (see
//! `cluster.rs`); it needs root.
//!
//! `BENCH=history` measures no throughput: it prints the RSS of
//! 1,000 probes with the history on, after a warm-up and after 200,000
//! results each (`HISTORY_PROBES`, `HISTORY_RESULTS`), to show it does not
//! grow.

mod client;
mod cluster;
mod disclosure;
mod fleet;
mod grpc;
mod history;
mod hysteresis;
mod limit;
mod management;
mod plot;
mod policy;
mod probes;
mod report;
mod results;
mod servers;
mod summary;
mod watchdog;
mod wrk;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use probes::CACHE_PROBE_NAME;
use servers::{BACKLOG, BARE_READY_PATH, KEEP_ALIVE, WORKERS, WorkerClock};

/// `/healthz` zb-health ÷ bare static handler must reach this: the live
/// tier has no probes, so anything beyond a static answer is overhead.
const LIVE_GOAL: f64 = 0.95;
/// `/health/ready` (3 fast probes) ÷ hand-written `join!` must reach this:
/// zb-health adds deadlines, panic guards and an in-flight bound per probe,
/// which may cost something, but not more than this.
const READY_GOAL: f64 = 0.85;

/// One endpoint under load.
struct Endpoint {
    label: &'static str,
    addr: SocketAddr,
    path: &'static str,
    /// The worker thread of the server behind it.
    clock: WorkerClock,
}

impl Endpoint {
    fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    /// One wrk run, with the server worker's CPU time spent on it. The other
    /// server is idle meanwhile, so the worker's clock is this endpoint's.
    fn measure(&self, load: &wrk::Load) -> Result<Sample, String> {
        let before = self.clock.cpu_time();
        let run = wrk::run(&self.url(), load)?;
        let cpu_us_per_request = match (before, self.clock.cpu_time()) {
            (Some(b), Some(a)) if run.requests > 0 => {
                Some(a.saturating_sub(b).as_secs_f64() * 1e6 / run.requests as f64)
            }
            _ => None,
        };
        Ok(Sample {
            run,
            cpu_us_per_request,
        })
    }
}

/// One endpoint's measurements in one round.
struct Sample {
    run: wrk::Run,
    /// Worker on-CPU microseconds per completed request.
    cpu_us_per_request: Option<f64>,
}

/// The exit code of a single-table mode, its error printed.
fn finish(what: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {what}: {e}");
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let rounds: usize = env_or("ROUNDS", 5);
    let load = wrk::Load {
        threads: env_or("THREADS", 1),
        connections: env_or("CONNECTIONS", 32),
        duration: std::env::var("DURATION").unwrap_or_else(|_| "5s".into()),
    };
    let warmup = std::env::var("WARMUP").unwrap_or_else(|_| "1s".into());

    // `BENCH=serve`: one server of the report's sweeps, in this process.
    if std::env::var("BENCH").as_deref() == Ok("serve") {
        return finish("serve", serve_from_env());
    }
    // `BENCH=policy` prints only the execution-policy table, which needs
    // no wrk: its clients are in-process.
    if std::env::var("BENCH").as_deref() == Ok("policy") {
        return finish("execution policy", policy::run());
    }
    // `BENCH=management` prints only the management-port latency; its
    // clients are in-process too.
    if std::env::var("BENCH").as_deref() == Ok("management") {
        return finish("management", management::run());
    }
    // `BENCH=history` prints only the history's memory
    // (`spec/history.md`); no wrk.
    if std::env::var("BENCH").as_deref() == Ok("history") {
        return finish("history", history::run());
    }
    // `BENCH=fleet`: the dashboard over 300 synthetic pods; its section of
    // bench/RESULTS.md.
    if std::env::var("BENCH").as_deref() == Ok("fleet") {
        return finish("fleet", fleet::run());
    }
    // `BENCH=cluster`: clusters of 3, 9 and 27 lean nodes in a network
    // namespace; needs root, no wrk.
    if std::env::var("BENCH").as_deref() == Ok("cluster") {
        return finish("cluster", cluster::run());
    }
    // `BENCH=grpc` prints only the gRPC Watch table; no wrk either.
    if std::env::var("BENCH").as_deref() == Ok("grpc") {
        return finish("grpc", grpc::run());
    }
    if !wrk::available() {
        eprintln!("error: wrk is not installed; run bench/run.sh, or `apt-get install -y wrk`");
        return ExitCode::from(2);
    }
    // `BENCH=watchdog` prints only the watchdog comparison.
    if std::env::var("BENCH").as_deref() == Ok("watchdog") {
        return finish("watchdog", watchdog::run(rounds, &load));
    }
    // `BENCH=limit` prints only the ready tier at the limit (P1–P12).
    if std::env::var("BENCH").as_deref() == Ok("limit") {
        return finish("limit", limit::run(rounds, &load));
    }
    // `BENCH=hysteresis` prints only the threshold comparison.
    if std::env::var("BENCH").as_deref() == Ok("hysteresis") {
        return finish("hysteresis", hysteresis::run(rounds, &load));
    }
    // `BENCH=disclosure` prints only the disclosure comparison.
    if std::env::var("BENCH").as_deref() == Ok("disclosure") {
        return finish("disclosure", disclosure::run(rounds, &load));
    }
    // `BENCH=all`: everything, the one table and bench/RESULTS.md;
    // `BENCH=sweeps`: the same without the per-mode benchmarks.
    match std::env::var("BENCH").as_deref() {
        Ok("all") => return finish("report", all(rounds, &load, &warmup, true)),
        Ok("sweeps") => return finish("report", all(rounds, &load, &warmup, false)),
        // `BENCH=compare`, or no `BENCH`: the main comparison, then the
        // execution-policy table.
        _ => {}
    }
    let result = compare(rounds, &load, &warmup).and_then(|()| policy::run());
    println!("  load average at end: {}", loadavg());
    finish("comparison", result)
}

/// `BENCH=serve`: `SERVE` (`zb` or `bare`), `PROBES` (3) and `CACHE_MS`
/// (empty: no cache) say which server; it serves until killed.
fn serve_from_env() -> Result<(), String> {
    let kind = std::env::var("SERVE").unwrap_or_else(|_| "zb".into());
    let probes = env_or("PROBES", 3);
    let cache = std::env::var("CACHE_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map(Duration::from_millis);
    servers::serve(&kind, probes, cache).map_err(|e| e.to_string())
}

/// A comma-separated list from the environment, or `default`.
fn env_list<T: std::str::FromStr + Clone>(name: &str, default: &[T]) -> Vec<T> {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.split(',')
                .filter_map(|x| x.trim().parse().ok())
                .collect::<Vec<T>>()
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_vec())
}

/// Runs one benchmark of the report; a failure is printed and recorded in
/// the table under `bench` (the mode that runs it on its own), and the
/// report goes on with the next one.
fn step(bench: &'static str, what: &str, result: Result<(), String>) {
    if let Err(e) = result {
        eprintln!("error: {bench} ({what}): {e}");
        summary::record(
            bench,
            format!("{what}: did not complete"),
            e,
            "-",
            Some(false),
        );
    }
}

/// `BENCH=all`: every benchmark in one run, the one table, the plots and
/// `bench/RESULTS.md`.
fn all(rounds: usize, load: &wrk::Load, warmup: &str, per_mode: bool) -> Result<(), String> {
    let started = Instant::now();
    let machine = results::Machine::describe();
    let load_start = loadavg();
    println!("zb-health benchmark report: every benchmark in one run");
    println!(
        "  {} | {} cores | {:.1} GiB | kernel {} | {} | node {} | {}",
        machine.cpu,
        machine.cores,
        machine.memory_gib,
        machine.kernel,
        machine.rustc,
        machine.node,
        machine.wrk
    );
    println!("  {}", machine.date);
    println!();
    if per_mode {
        step(
            "compare",
            "live and ready vs bare",
            compare(rounds, load, warmup),
        );
        step("policy", "execution policy", policy::run());
        step("watchdog", "watchdogs", watchdog::run(rounds, load));
        step("management", "management port", management::run());
        step("disclosure", "disclosure", disclosure::run(rounds, load));
        step("hysteresis", "hysteresis", hysteresis::run(rounds, load));
        step("grpc", "gRPC Watch", grpc::run());
        step("limit", "at the limit", limit::run(rounds, load));
        step("fleet", "the dashboard at 300 pods", fleet::run());
    }

    let settings = report::Settings {
        rounds: env_or("SWEEP_ROUNDS", 2),
        duration: std::env::var("SWEEP_DURATION").unwrap_or_else(|_| "3s".into()),
        concurrency: env_list("SWEEP_CONNECTIONS", &[1, 4, 16, 64, 256]),
        probe_counts: env_list("SWEEP_PROBES", &[1, 10, 100, 1000]),
        connections: load.connections,
        peers_dir: std::env::var_os("PEERS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join("target/bench-peers")),
    };
    println!(
        "sweeps: each server its own process, {} round(s) of wrk -t1 -d{} per point",
        settings.rounds, settings.duration
    );
    let curves = report::concurrency_sweep(&settings).unwrap_or_else(|e| {
        step("sweep", "concurrency", Err(e));
        Vec::new()
    });
    println!("{}", report::curves_markdown(&curves));
    let probes = report::probe_sweep(&settings)
        .map_err(|e| step("sweep", "probe count", Err(e)))
        .ok();
    if let Some(sweep) = &probes {
        println!("{}", report::probes_markdown(sweep, settings.connections));
    }
    report::record_summary(&curves, probes.as_ref());

    let out_dir = std::env::var_os("BENCH_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("bench"));
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let (plots, plot_error) = match draw_plots(&out_dir, &curves, probes.as_ref()) {
        Ok(plots) => (plots, None),
        Err(e) => {
            eprintln!("warning: no plots: {e}");
            (Vec::new(), Some(e))
        }
    };

    let load_end = loadavg();
    println!("all ratios of the run");
    println!("{}", summary::markdown(&summary::rows()));
    println!("  load average at start: {load_start}, at end: {load_end}");
    let results_path = out_dir.join("RESULTS.md");
    results::write(
        &results_path,
        &results::Inputs {
            machine: &machine,
            load: (&load_start, &load_end),
            main_settings: format!(
                "{} rounds of `{}` per endpoint (warm-up {warmup})",
                rounds,
                load.describe()
            ),
            sweep: &settings,
            curves: &curves,
            probes: probes.as_ref(),
            plots: &plots,
            plot_error,
            elapsed_secs: started.elapsed().as_secs(),
        },
    )?;
    println!("  wrote {}", results_path.display());
    for (file, _) in &plots {
        println!("  wrote {}", out_dir.join(file).display());
    }
    Ok(())
}

/// The two PNGs; returns `(file name, title)` of each drawn.
fn draw_plots(
    out_dir: &std::path::Path,
    curves: &[report::Curve],
    probes: Option<&report::ProbeSweep>,
) -> Result<Vec<(String, String)>, String> {
    plot::load_font()?;
    let mut drawn = Vec::new();
    if !curves.is_empty() {
        let series: Vec<plot::Series> = curves
            .iter()
            .map(|c| plot::Series {
                label: c.label.clone(),
                points: c
                    .points
                    .iter()
                    .map(|&(n, _, p99)| (f64::from(n), p99))
                    .collect(),
            })
            .collect();
        let file = "ready-p99-vs-concurrency.png".to_owned();
        let title = "Ready tier p99 latency against concurrency (wrk -t1, one server worker)";
        plot::draw(
            &out_dir.join(&file),
            &plot::Chart {
                title,
                x_label: "open connections (log)",
                y_label: "p99 latency, ms (log)",
                series: &series,
                // Latency rises to the right.
                legend: plotters::chart::SeriesLabelPosition::UpperLeft,
            },
        )?;
        drawn.push((file, title.to_owned()));
    }
    if let Some(sweep) = probes {
        let series = [
            plot::Series {
                label: "zb-health, uncached".into(),
                points: sweep
                    .points
                    .iter()
                    .map(|&(n, rps, _)| (n as f64, rps))
                    .collect(),
            },
            plot::Series {
                label: "zb-health, 1 s cache".into(),
                points: sweep
                    .points
                    .iter()
                    .map(|&(n, _, rps)| (n as f64, rps))
                    .collect(),
            },
        ];
        let file = "ready-throughput-vs-probes.png".to_owned();
        let title = "Ready tier throughput against the number of probes";
        plot::draw(
            &out_dir.join(&file),
            &plot::Chart {
                title,
                x_label: "probes in the ready tier (log)",
                y_label: "requests/s (log)",
                series: &series,
                // Throughput falls to the right.
                legend: plotters::chart::SeriesLabelPosition::LowerLeft,
            },
        )?;
        drawn.push((file, title.to_owned()));
    }
    Ok(drawn)
}

/// The workspace root, from this crate's manifest directory at build time.
fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The main comparison (`BENCH=compare`): zb-health's `/healthz` and
/// `/health/ready` against bare handlers, `rounds` alternating rounds.
fn compare(rounds: usize, load: &wrk::Load, warmup: &str) -> Result<(), String> {
    let addrs = servers::start().map_err(|e| format!("could not start the servers: {e}"))?;

    let endpoints = endpoints(&addrs);

    println!("zb-health-bench: zb-health endpoints vs bare actix-web handlers");
    println!("  load average at start: {}", loadavg());
    println!(
        "  both servers: HttpServer .workers({WORKERS}) .backlog({BACKLOG}) .keep_alive({}s) .tcp_nodelay(true), bound to 127.0.0.1:0",
        KEEP_ALIVE.as_secs()
    );
    println!(
        "  zb-health  http://{}  zb_health::prelude::map_zb_health over the bench's registry:",
        addrs.zb
    );
    println!(
        "             ready tier = database, disk-space, `{CACHE_PROBE_NAME}` (src/probes.rs)"
    );
    println!(
        "  bare       http://{}  /healthz: the bytes fetched from zb-health's /healthz at startup;",
        addrs.bare
    );
    println!(
        "             {BARE_READY_PATH}: tokio::join! of DatabaseProbe, DiskSpaceProbe, CacheProbe ::check, serde_json body"
    );
    println!(
        "  load: {} per run, {rounds} rounds, each round: zb, bare, zb, bare (columns left to right)",
        load.describe()
    );
    println!();

    // Checked before loading: a throughput of error answers means nothing,
    // and the bodies show the reader the two sides do comparable work.
    check_endpoints(&endpoints)?;
    println!();

    if warmup != "0" {
        // Warms the worker's allocator, connection slabs and CPU caches so
        // round 1 is not systematically slower for whichever side goes first.
        let warm = wrk::Load {
            duration: warmup.to_owned(),
            ..load.clone()
        };
        for e in &endpoints {
            wrk::run(&e.url(), &warm).map_err(|err| format!("warm-up of {}: {err}", e.label))?;
        }
    }

    let mut results: Vec<[Sample; 4]> = Vec::with_capacity(rounds);
    for round in 1..=rounds {
        let mut row = Vec::with_capacity(4);
        for e in &endpoints {
            let sample = e
                .measure(load)
                .map_err(|err| format!("round {round}, {}: {err}", e.label))?;
            eprintln!(
                "  round {round}/{rounds}  {:<17} {:>10.0} req/s  {:>7} us CPU/req",
                e.label,
                sample.run.requests_per_sec,
                sample
                    .cpu_us_per_request
                    .map_or("n/a".into(), |us| format!("{us:.2}")),
            );
            row.push(sample);
        }
        let Ok(row) = <[Sample; 4]>::try_from(row) else {
            unreachable!("one run per endpoint")
        };
        results.push(row);
    }

    report(&endpoints, &results);
    Ok(())
}

/// The four benchmarked endpoints. Order matters only as the column order;
/// rounds alternate zb, bare.
fn endpoints(addrs: &servers::Addresses) -> [Endpoint; 4] {
    let (zb, bare) = (addrs.zb_clock.clone(), addrs.bare_clock.clone());
    [
        Endpoint {
            label: "zb /healthz",
            addr: addrs.zb,
            path: "/healthz",
            clock: zb.clone(),
        },
        Endpoint {
            label: "bare /healthz",
            addr: addrs.bare,
            path: "/healthz",
            clock: bare.clone(),
        },
        Endpoint {
            label: "zb /health/ready",
            addr: addrs.zb,
            path: "/health/ready",
            clock: zb,
        },
        Endpoint {
            label: "bare /ready3",
            addr: addrs.bare,
            path: BARE_READY_PATH,
            clock: bare,
        },
    ]
}

/// Fetches every endpoint once, prints its answer, and insists on 200s and
/// on the bare `/healthz` matching zb-health's byte for byte.
fn check_endpoints(endpoints: &[Endpoint; 4]) -> Result<(), String> {
    let mut answers = Vec::new();
    for e in endpoints {
        let r = client::get(e.addr, e.path).map_err(|err| format!("GET {}: {err}", e.url()))?;
        println!(
            "  {:<17} {} | content-type: {} | cache-control: {}\n  {:<17} {}",
            e.label,
            r.status,
            r.header("content-type").unwrap_or("-"),
            r.header("cache-control").unwrap_or("-"),
            "",
            r.text()
        );
        if r.status != 200 {
            return Err(format!("{} answered {}, not 200", e.url(), r.status));
        }
        answers.push(r);
    }
    let (zb, bare) = (&answers[0], &answers[1]);
    let same = zb.body == bare.body
        && zb.header("content-type") == bare.header("content-type")
        && zb.header("cache-control") == bare.header("cache-control");
    if !same {
        return Err("the bare /healthz does not answer what zb-health's /healthz answers".into());
    }
    Ok(())
}

/// The per-round tables, the medians and the two ratios with their goals.
fn report(endpoints: &[Endpoint; 4], results: &[[Sample; 4]]) {
    let rps = |i: usize| {
        results
            .iter()
            .map(|r| r[i].run.requests_per_sec)
            .collect::<Vec<_>>()
    };
    let medians: Vec<f64> = (0..4).map(|i| wrk::median(&rps(i))).collect();
    // Paired per-round ratios are shown too: each pair ran back to back, so
    // background load (a concurrent build) hits both sides of a pair alike.
    let paired = |a: usize, b: usize| {
        results
            .iter()
            .map(|r| r[a].run.requests_per_sec / r[b].run.requests_per_sec)
            .collect::<Vec<_>>()
    };
    let (live_pairs, ready_pairs) = (paired(0, 1), paired(2, 3));

    println!("requests/s per round (wrk \"Requests/sec:\"); ratios are zb ÷ bare of that round");
    let rule = header(endpoints, "live ratio", "ready ratio");
    for (i, row) in results.iter().enumerate() {
        print!("  {:<7}", i + 1);
        for sample in row {
            let flag = if sample.run.is_clean() { ' ' } else { '!' };
            print!(" | {:>16.0}{flag}", sample.run.requests_per_sec);
        }
        println!(" | {:>10.3} | {:>11.3}", live_pairs[i], ready_pairs[i]);
    }
    println!("{rule}");
    print!("  {:<7}", "median");
    for m in &medians {
        print!(" | {m:>17.0}");
    }
    println!(
        " | {:>10.3} | {:>11.3}",
        wrk::median(&live_pairs),
        wrk::median(&ready_pairs)
    );
    if results.iter().flatten().any(|s| !s.run.is_clean()) {
        println!("  ! = wrk saw non-2xx answers or socket errors in that run:");
        for (i, row) in results.iter().enumerate() {
            for (e, sample) in endpoints.iter().zip(row) {
                if !sample.run.is_clean() {
                    println!(
                        "    round {} {}: non-2xx {}, socket errors {}",
                        i + 1,
                        e.label,
                        sample.run.non_2xx,
                        sample.run.socket_errors.as_deref().unwrap_or("none")
                    );
                }
            }
        }
    }
    println!();

    let live = medians[0] / medians[1];
    let ready = medians[2] / medians[3];
    println!("ratios of the req/s medians (the goals are judged on these)");
    println!(
        "  1. /healthz        zb-health ÷ bare static handler         = {live:.3}  (goal ≥ {LIVE_GOAL:.2}): {}",
        verdict(live, LIVE_GOAL)
    );
    println!(
        "  2. /health/ready   zb-health 3 probes ÷ hand-written join! = {ready:.3}  (goal ≥ {READY_GOAL:.2}): {}",
        verdict(ready, READY_GOAL)
    );
    summary::record(
        "compare",
        "/healthz req/s, zb-health ÷ bare static handler",
        format!("{live:.3}"),
        format!("≥ {LIVE_GOAL:.2}"),
        Some(live >= LIVE_GOAL),
    );
    summary::record(
        "compare",
        "/health/ready req/s, zb-health 3 probes ÷ hand-written join!",
        format!("{ready:.3}"),
        format!("≥ {READY_GOAL:.2}"),
        Some(ready >= READY_GOAL),
    );
    println!();
    report_cpu(endpoints, results);
}

/// The same comparison in worker CPU time per request. Throughput on a
/// machine shared with other work mostly measures the scheduler; CPU per
/// request measures the code. Its ratio is bare ÷ zb, so it reads like the
/// throughput ratio: the throughput zb-health would reach relative to bare
/// if each had a core to itself.
fn report_cpu(endpoints: &[Endpoint; 4], results: &[[Sample; 4]]) {
    let cpu = |i: usize| {
        results
            .iter()
            .filter_map(|r| r[i].cpu_us_per_request)
            .collect::<Vec<_>>()
    };
    if (0..4).any(|i| cpu(i).len() != results.len()) {
        println!(
            "worker CPU per request: not available (needs Linux /proc/<pid>/task/<tid>/schedstat)"
        );
        return;
    }
    let medians: Vec<f64> = (0..4).map(|i| wrk::median(&cpu(i))).collect();
    println!(
        "server worker CPU µs per request (lower is better); ratios are bare ÷ zb of that round"
    );
    let rule = header(endpoints, "live ratio", "ready ratio");
    let mut pairs = (Vec::new(), Vec::new());
    for (i, row) in results.iter().enumerate() {
        let us: Vec<f64> = row.iter().filter_map(|s| s.cpu_us_per_request).collect();
        print!("  {:<7}", i + 1);
        for v in &us {
            print!(" | {v:>17.2}");
        }
        pairs.0.push(us[1] / us[0]);
        pairs.1.push(us[3] / us[2]);
        println!(" | {:>10.3} | {:>11.3}", us[1] / us[0], us[3] / us[2]);
    }
    println!("{rule}");
    print!("  {:<7}", "median");
    for m in &medians {
        print!(" | {m:>17.2}");
    }
    println!(
        " | {:>10.3} | {:>11.3}",
        wrk::median(&pairs.0),
        wrk::median(&pairs.1)
    );
    let (live, ready) = (medians[1] / medians[0], medians[3] / medians[2]);
    summary::record(
        "compare",
        "/healthz worker CPU per request, bare ÷ zb-health",
        format!("{live:.3}"),
        format!("≥ {LIVE_GOAL:.2}"),
        Some(live >= LIVE_GOAL),
    );
    summary::record(
        "compare",
        "/health/ready worker CPU per request, bare ÷ zb-health",
        format!("{ready:.3}"),
        format!("≥ {READY_GOAL:.2}"),
        Some(ready >= READY_GOAL),
    );
    println!(
        "  CPU-based ratios of medians: /healthz {live:.3} ({} the {LIVE_GOAL:.2} goal), /health/ready {ready:.3} ({} the {READY_GOAL:.2} goal)",
        if live >= LIVE_GOAL { "within" } else { "below" },
        if ready >= READY_GOAL {
            "within"
        } else {
            "below"
        },
    );
}

/// Prints a table header with the four endpoint columns and two ratio
/// columns, and returns the rule line to close the table with.
fn header(endpoints: &[Endpoint; 4], ratio1: &str, ratio2: &str) -> String {
    print!("  {:<7}", "round");
    for e in endpoints {
        print!(" | {:>17}", e.label);
    }
    println!(" | {ratio1:>10} | {ratio2:>11}");
    let rule = format!("  {}", "-".repeat(7 + 4 * 20 + 13 + 14));
    println!("{rule}");
    rule
}

fn verdict(ratio: f64, goal: f64) -> &'static str {
    if ratio >= goal { "MET" } else { "NOT MET" }
}

/// The 1-, 5- and 15-minute load averages: a reader needs them to judge
/// how much a concurrent build disturbed the numbers.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// A numeric setting from the environment, falling back to `default` when
/// unset or unparsable (a report should still run with a typo'd knob).
fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[cfg(test)]
mod smoke {
    /// The benchmark's servers start and answer every endpoint it loads,
    /// so a change to the example or the runtime cannot silently break the
    /// benchmark between runs (it is not run in CI; this is).
    #[test]
    fn both_servers_start_and_answer_every_benchmarked_endpoint() {
        let addrs = super::servers::start().expect("the benchmark servers start");
        super::check_endpoints(&super::endpoints(&addrs))
            .expect("every endpoint answers 200 alike");
    }

    /// The watchdog comparison's servers start, and `/healthz` answers as
    /// each one should: no entries without watchdogs, one Healthy entry
    /// per watchdog with them.
    #[test]
    fn the_watchdog_servers_start_and_answer_healthz() {
        let pair = super::servers::start_watchdog_pair().expect("the watchdog servers start");
        super::watchdog::check(&pair).expect("both /healthz answers are as expected");
    }

    /// The disclosure comparison's servers start, and each answers
    /// `/health/ready` with what its level shows.
    #[test]
    fn the_disclosure_servers_start_and_answer_ready() {
        let servers =
            super::servers::start_disclosure_servers().expect("the disclosure servers start");
        super::disclosure::check(&servers).expect("every level answers as expected");
    }
}
