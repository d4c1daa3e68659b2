//! `zb-health-bench`: throughput of zb-health's endpoints against bare
//! actix-web handlers doing the same work, in one process, measured with
//! wrk.
//!
//! Two servers run side by side with identical `HttpServer` settings: the
//! plant service (zb-health) with a third fast probe added to its ready
//! tier, and a bare server with a static `/healthz` and a hand-written
//! `/ready3` that joins the same three probes. wrk loads each endpoint in
//! turn, alternating zb-health and bare, for `ROUNDS` rounds; the report is
//! the per-round requests/s, their medians and two ratios with their goals,
//! then the same comparison in worker CPU time per request, which a busy
//! machine disturbs far less than throughput.
//!
//! Environment: `ROUNDS` (5), `DURATION` (`5s`), `CONNECTIONS` (32),
//! `THREADS` (1), `WARMUP` (`1s`; `0` skips). Exits 0 whatever the ratios
//! are: it is a report, not a test.

mod client;
mod disclosure;
mod grpc;
mod management;
mod policy;
mod servers;
mod watchdog;
mod wrk;

use std::net::SocketAddr;
use std::process::ExitCode;

use servers::{BACKLOG, BARE_READY_PATH, CACHE_PROBE_NAME, KEEP_ALIVE, WORKERS, WorkerClock};

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
    // `BENCH=grpc` prints only the gRPC Watch table; no wrk either.
    if std::env::var("BENCH").as_deref() == Ok("grpc") {
        return match grpc::run() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: grpc: {e}");
                ExitCode::from(1)
            }
        };
    }
    if !wrk::available() {
        eprintln!(
            "error: wrk is not installed; run examples/bench/run.sh, or `apt-get install -y wrk`"
        );
        return ExitCode::from(2);
    }
    // `BENCH=watchdog` prints only the watchdog comparison.
    if std::env::var("BENCH").as_deref() == Ok("watchdog") {
        return finish("watchdog", watchdog::run(rounds, &load));
    }
    // `BENCH=disclosure` prints only the disclosure comparison (issue 9).
    if std::env::var("BENCH").as_deref() == Ok("disclosure") {
        return finish("disclosure", disclosure::run(rounds, &load));
    }
    let addrs = match servers::start() {
        Ok(addrs) => addrs,
        Err(e) => {
            eprintln!("error: could not start the servers: {e}");
            return ExitCode::from(2);
        }
    };

    let endpoints = endpoints(&addrs);

    println!("zb-health-bench: zb-health endpoints vs bare actix-web handlers");
    println!("  load average at start: {}", loadavg());
    println!(
        "  both servers: HttpServer .workers({WORKERS}) .backlog({BACKLOG}) .keep_alive({}s), bound to 127.0.0.1:0",
        KEEP_ALIVE.as_secs()
    );
    println!(
        "  zb-health  http://{}  plant_service::PlantHealth::new(false), mounted as in its main.rs;",
        addrs.zb
    );
    println!("             ready tier = the plant service's registry (database, disk-space)");
    println!(
        "             + `{CACHE_PROBE_NAME}` (bench's CacheProbe) added via registry.add(...)"
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
    if let Err(e) = check_endpoints(&endpoints) {
        eprintln!("error: {e}");
        return ExitCode::from(1);
    }
    println!();

    if warmup != "0" {
        // Warms the worker's allocator, connection slabs and CPU caches so
        // round 1 is not systematically slower for whichever side goes first.
        let warm = wrk::Load {
            duration: warmup.clone(),
            ..load.clone()
        };
        for e in &endpoints {
            if let Err(err) = wrk::run(&e.url(), &warm) {
                eprintln!("error: warm-up of {} failed: {err}", e.label);
                return ExitCode::from(1);
            }
        }
    }

    let mut results: Vec<[Sample; 4]> = Vec::with_capacity(rounds);
    for round in 1..=rounds {
        let mut row = Vec::with_capacity(4);
        for e in &endpoints {
            match e.measure(&load) {
                Ok(sample) => {
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
                Err(err) => {
                    eprintln!("error: round {round}, {}: {err}", e.label);
                    return ExitCode::from(1);
                }
            }
        }
        let Ok(row) = <[Sample; 4]>::try_from(row) else {
            unreachable!("one run per endpoint")
        };
        results.push(row);
    }

    report(&endpoints, &results);
    if let Err(e) = policy::run() {
        eprintln!("error: execution policy: {e}");
        return ExitCode::from(1);
    }
    println!("  load average at end: {}", loadavg());
    ExitCode::SUCCESS
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
