//! `BENCH=disclosure`: `/health/ready` throughput at `names` and `status`
//! disclosure ÷ `full` (the goal: ≥ 1.0 each). The built-in writer
//! serialises straight from the report and skips what a level hides, so a
//! stricter level should cost no more than `full`.
//!
//! Three servers over one registry of three fast probes, in this process
//! with the bench's shared settings, loaded in turn by wrk `ROUNDS` times
//! (the order rotates every round, so no level always runs first); each
//! ratio is of the medians, measured in the same run. Beside req/s, the
//! worker's on-CPU time per request, which a busy machine disturbs less.

use crate::servers::{self, DISCLOSED_PROBES};
use crate::{client, wrk};
use zb_health::spec::Disclosure;

/// The goal of both ratios.
const GOAL: f64 = 1.0;

/// Runs the comparison and prints its table.
pub fn run(rounds: usize, load: &wrk::Load) -> Result<(), String> {
    let servers = servers::start_disclosure_servers().map_err(|e| e.to_string())?;
    check(&servers)?;
    println!(
        "disclosure: /health/ready ({DISCLOSED_PROBES} probes) at full, names, status ({})",
        load.describe()
    );
    let n = servers.servers.len();
    let (rates, cpu) = load_in_turn(&servers.servers, rounds, load)?;
    let full_rate = wrk::median(&rates[0]);
    let full_cpu = (cpu[0].len() == rounds).then(|| wrk::median(&cpu[0]));
    for i in 1..n {
        let level = servers.servers[i].0;
        let ratio = wrk::median(&rates[i]) / full_rate;
        let cpu_ratio = full_cpu
            .filter(|_| cpu[i].len() == rounds)
            .map(|full| full / wrk::median(&cpu[i]));
        println!(
            "  /health/ready at {level} ÷ full: req/s {ratio:.3}{}  (goal ≥ {GOAL:.1}): {}",
            cpu_ratio.map_or(String::new(), |r| format!(
                ", CPU per request (full ÷ {level}) {r:.3}"
            )),
            if ratio >= GOAL { "met" } else { "not met" }
        );
        crate::summary::record(
            "disclosure",
            format!("/health/ready req/s at {level} ÷ full disclosure"),
            format!("{ratio:.3}"),
            format!("≥ {GOAL:.1}"),
            Some(ratio >= GOAL),
        );
        if let Some(cpu) = cpu_ratio {
            crate::summary::record(
                "disclosure",
                format!("/health/ready worker CPU per request, full ÷ {level}"),
                format!("{cpu:.3}"),
                format!("≥ {GOAL:.1}"),
                Some(cpu >= GOAL),
            );
        }
    }
    body_cost();
    Ok(())
}

/// One list of samples per server.
type Samples = Vec<Vec<f64>>;

/// Loads each server's `/health/ready` with wrk in turn, `rounds` times,
/// the order rotating every round so no server always runs first; prints
/// each round and returns each server's req/s and worker CPU µs per
/// request. Shared with the hysteresis comparison.
pub fn load_in_turn<L: std::fmt::Display>(
    servers: &[(L, std::net::SocketAddr, servers::WorkerClock)],
    rounds: usize,
    load: &wrk::Load,
) -> Result<(Samples, Samples), String> {
    let n = servers.len();
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); n];
    // A worker notes its thread when it builds its app, which may be after
    // `run` returns: wait for every clock, or the first load of the first
    // round has no CPU time and the CPU ratio is never reported.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while servers
        .iter()
        .any(|(_, _, clock)| clock.cpu_time().is_none())
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    for round in 0..rounds {
        let mut cells = vec![String::new(); n];
        for k in 0..n {
            let i = (round + k) % n;
            let (level, addr, clock) = &servers[i];
            let before = clock.cpu_time();
            let run = wrk::run(&format!("http://{addr}/health/ready"), load)?;
            let us = match (before, clock.cpu_time()) {
                (Some(b), Some(a)) if run.requests > 0 => {
                    Some(a.saturating_sub(b).as_secs_f64() * 1e6 / run.requests as f64)
                }
                _ => None,
            };
            let mark = if run.is_clean() { " " } else { "!" };
            cells[i] = format!(
                "  {level} {:>8.0} req/s{mark}{}",
                run.requests_per_sec,
                us.map_or(String::new(), |us| format!(" {us:>6.2} µs/req"))
            );
            rates[i].push(run.requests_per_sec);
            cpu[i].extend(us);
        }
        println!("  round {}:{}", round + 1, cells.concat());
    }
    Ok((rates, cpu))
}

/// The writer alone, in process: nanoseconds to serialise the same
/// three-entry ready report at each level, the levels interleaved over
/// several rounds (median). It isolates the part of a request the level
/// changes, which wrk's req/s on a busy machine cannot resolve.
fn body_cost() {
    use std::time::{Duration, Instant};
    use zb_health::prelude::{HealthStatus, Tag};
    use zb_health::report::{EntryOutcome, HealthEntry, HealthReport};
    use zb_health::writer::BodyStyle;

    let entries = ["database", "disk-space", crate::probes::CACHE_PROBE_NAME]
        .map(|name| HealthEntry {
            name: name.into(),
            status: HealthStatus::Healthy,
            description: Some("dependency reachable".into()),
            duration: Duration::from_micros(125),
            data: serde_json::json!({"selfAddress": "127.0.0.1:7000"})
                .as_object()
                .cloned()
                .map(Box::new),
            outcome: EntryOutcome::Completed,
        })
        .to_vec();
    let report = HealthReport::new(Tag::Ready, entries, Duration::from_micros(400));
    let levels = [Disclosure::Full, Disclosure::Names, Disclosure::Status];
    const BODIES: u32 = 100_000;
    let mut ns: Vec<Vec<f64>> = vec![Vec::new(); levels.len()];
    for _ in 0..7 {
        for (level, ns) in levels.iter().zip(&mut ns) {
            let style = BodyStyle::default().disclosure(*level);
            let started = Instant::now();
            for _ in 0..BODIES {
                std::hint::black_box(style.json(std::hint::black_box(&report)));
            }
            ns.push(started.elapsed().as_nanos() as f64 / f64::from(BODIES));
        }
    }
    let medians: Vec<f64> = ns.iter().map(|v| wrk::median(v)).collect();
    println!(
        "  body only (in process, median of 7 × {BODIES}): full {:.0} ns, names {:.0} ns, status {:.0} ns",
        medians[0], medians[1], medians[2]
    );
}

/// Every server answers 200 with what its level shows, so the run
/// measures what it names.
pub fn check(servers: &servers::DisclosureServers) -> Result<(), String> {
    for (level, addr, _) in &servers.servers {
        let response = client::get(*addr, "/health/ready").map_err(|e| e.to_string())?;
        let body: serde_json::Value =
            serde_json::from_slice(&response.body).map_err(|e| e.to_string())?;
        let entries = body["entries"].as_object().map_or(0, |e| e.len());
        let described = body["entries"]["database"]["description"].is_string();
        let expected = match level {
            Disclosure::Full => (DISCLOSED_PROBES, true),
            Disclosure::Names => (DISCLOSED_PROBES, false),
            Disclosure::Status => (0, false),
        };
        if response.status != 200 || (entries, described) != expected {
            return Err(format!(
                "{addr}/health/ready at {level} answered {} with {entries} entries (described: {described}), expected 200 with {expected:?}",
                response.status
            ));
        }
    }
    Ok(())
}
