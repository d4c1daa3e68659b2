//! `BENCH=limit`: the ready tier at the limit of its platform. Every row
//! is CPU per request of one server worker, from `/proc`, over `rounds`
//! rounds.
//! The rows whose sides are within a few percent (P1, P2, P2+, P10)
//! alternate their two sides in one-second slices within each round
//! (`close_ratios`), and a ratio is the median of the rounds' own, so a
//! change of the machine's speed falls on both sides alike. With two CPUs or more, every server worker runs on CPU 1
//! and wrk on CPU 0. The rows: P1 (`/healthz` against a bare
//! static handler), P2 (3 uncached probes against a hand-written `join!`),
//! P2+ (`/healthz` against a 1 s cached ready tier), P10 (a cached tier of
//! 3 probes against one of 100), P11 (the marginal cost of a probe from 10
//! to 1,000, against a hand-written `join_all`) and P12 (peak RSS with
//! 1,000 probes under load, minus an empty registry, child processes).

use std::time::Duration;

use crate::servers::{self, Limited};
use crate::{Endpoint, summary, wrk};

/// The probe counts of the marginal-cost curve (P11 reads 10 and 1,000).
const COUNTS: [usize; 3] = [10, 100, 1000];

/// The goals of the table (`BENCH=limit`).
const P1_GOAL: f64 = 1.00;
const P2_GOAL: f64 = 0.95;
const P2_PLUS_GOAL: f64 = 0.95;
const P10_GOAL: f64 = 0.50;
const P11_GOAL: f64 = 1.2;
const P12_GOAL_MIB: f64 = 2.0;

fn endpoint(label: &'static str, server: &Limited, path: &'static str) -> Endpoint {
    Endpoint {
        label,
        addr: server.addr,
        path,
        clock: server.clock.clone(),
    }
}

/// Runs the comparison and records its rows in the run's table.
pub fn run(rounds: usize, load: &wrk::Load) -> Result<(), String> {
    let cached = Some(Duration::from_secs(1));
    let mut zb = vec![(3, None), (3, cached), (100, cached)];
    zb.extend(COUNTS.iter().map(|&n| (n, None)));
    let (zb, bare) = servers::start_limit(zb, 1000)
        .map_err(|e| format!("could not start the limit servers: {e}"))?;
    let paths: [&'static str; 3] = ["/readyn/10", "/readyn/100", "/readyn/1000"];
    let labels: [(&'static str, &'static str); 3] = [
        ("zb ready 10", "bare join_all 10"),
        ("zb ready 100", "bare join_all 100"),
        ("zb ready 1000", "bare join_all 1000"),
    ];
    // Sides alternate within each pair, pairs follow one another.
    let mut endpoints = vec![
        endpoint("zb /healthz", &zb[0], "/healthz"),
        endpoint("bare /healthz", &bare, "/healthz"),
        endpoint("zb ready 3", &zb[0], "/health/ready"),
        endpoint("bare join! 3", &bare, servers::BARE_READY_PATH),
        endpoint("zb ready 3, 1 s cache", &zb[1], "/health/ready"),
        endpoint("zb ready 100, 1 s cache", &zb[2], "/health/ready"),
    ];
    for (i, (zb_label, bare_label)) in labels.into_iter().enumerate() {
        endpoints.push(endpoint(zb_label, &zb[3 + i], "/health/ready"));
        endpoints.push(endpoint(bare_label, &bare, paths[i]));
    }
    println!(
        "limit: CPU per request, one worker per server, {rounds} rounds of {}",
        load.describe()
    );
    // One answer from each first: a worker notes its clock as it starts,
    // and the first request is what certainly started it.
    for e in &endpoints {
        crate::client::status(e.addr, e.path).map_err(|err| format!("{}: {err}", e.label))?;
    }
    let pinned = pin_workers(&endpoints);
    println!(
        "  {}",
        if pinned {
            "server workers pinned to CPU 1, wrk to CPU 0"
        } else {
            "not pinned (one CPU, or no taskset)"
        }
    );
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); endpoints.len()];
    for round in 1..=rounds {
        // The endpoints come in compared pairs; the first of a pair goes
        // first in odd rounds, second in even ones.
        let order = (0..endpoints.len()).map(|k| if round % 2 == 0 { k ^ 1 } else { k });
        for i in order {
            let e = &endpoints[i];
            let sample = e
                .measure(load)
                .map_err(|err| format!("round {round}, {}: {err}", e.label))?;
            if !sample.run.is_clean() {
                return Err(format!("{}: socket errors or non-2xx answers", e.label));
            }
            let us = sample.cpu_us_per_request.ok_or("no worker CPU clock")?;
            eprintln!(
                "  round {round}/{rounds}  {:<24} {:>9.0} req/s  {us:>9.2} us CPU/req",
                e.label, sample.run.requests_per_sec
            );
            cpu[i].push(us);
        }
    }
    // The close rows, in one-second slices that alternate the two sides.
    let close = close_ratios(&endpoints, rounds, load)?;
    wrk::pin(None);
    let m: Vec<f64> = cpu.iter().map(|v| wrk::median(v)).collect();
    println!();
    println!("| endpoint | CPU µs per request (median) |");
    println!("|---|---|");
    for (e, us) in endpoints.iter().zip(&m) {
        println!("| {} | {us:.2} |", e.label);
    }
    println!();
    println!("marginal CPU per probe, µs (CPU per request ÷ probes)");
    println!("| probes | zb-health | hand-written join_all |");
    println!("|---|---|---|");
    for (i, n) in COUNTS.iter().enumerate() {
        let (z, b) = (m[6 + 2 * i], m[7 + 2 * i]);
        println!("| {n} | {:.3} | {:.3} |", z / *n as f64, b / *n as f64);
    }
    println!();

    let ratio = |value: f64, goal: f64, at_least: bool| {
        let met = if at_least {
            value >= goal
        } else {
            value <= goal
        };
        (format!("{value:.3}"), met)
    };
    let rows: [(&str, f64, f64, bool); 5] = [
        (
            "P1 /healthz CPU/req: bare static ÷ zb-health",
            close[0],
            P1_GOAL,
            true,
        ),
        (
            "P2 ready, 3 probes uncached, CPU/req: bare join! ÷ zb-health",
            close[1],
            P2_GOAL,
            true,
        ),
        (
            "P2+ CPU/req: zb-health /healthz ÷ ready with a 1 s cache (3 probes)",
            close[2],
            P2_PLUS_GOAL,
            true,
        ),
        (
            "P10 CPU/req: cached ready 3 probes ÷ cached ready 100 probes",
            close[3],
            P10_GOAL,
            true,
        ),
        (
            "P11 marginal CPU per probe 10 → 1,000, uncached: zb-health ÷ join_all",
            (m[10] - m[6]) / (m[11] - m[7]),
            P11_GOAL,
            false,
        ),
    ];
    for (measure, value, goal, at_least) in rows {
        let (v, met) = ratio(value, goal, at_least);
        let sign = if at_least { "≥" } else { "≤" };
        println!("  {measure}: {v} (goal {sign} {goal})");
        summary::record("limit", measure, v, format!("{sign} {goal:.2}"), Some(met));
    }
    match peak_rss_difference(load) {
        Ok(mib) => {
            println!("  P12 peak RSS, 1,000 probes minus an empty registry: {mib:.2} MiB");
            summary::record(
                "limit",
                "P12 peak RSS under load: 1,000 probes minus an empty registry",
                format!("{mib:.2} MiB"),
                format!("≤ {P12_GOAL_MIB} MiB"),
                Some(mib <= P12_GOAL_MIB),
            );
        }
        Err(e) => summary::record("limit", "P12 peak RSS", "did not complete", e, Some(false)),
    }
    Ok(())
}

/// The rows whose two sides differ by a few percent at most (P1, P2, P2+,
/// P10): `(a, b)` indices into the endpoints, the ratio being `a`'s CPU
/// per request ÷ `b`'s.
const CLOSE: [(usize, usize); 4] = [(1, 0), (3, 2), (0, 4), (4, 5)];

/// One-second slices per side of a close pair in each round.
const SLICES: usize = 6;

/// The close rows' ratios. A five-second run of one side then of the
/// other moves by 10–20 % on a shared virtual machine, more than these
/// rows' margins, so each round alternates the two sides in one-second
/// slices, `a b b a a b …`, and compares the CPU per request each side
/// spent over its slices: a change of the machine's speed lasting a few
/// seconds then falls on both sides alike. A ratio is the median over the
/// rounds.
fn close_ratios(
    endpoints: &[Endpoint],
    rounds: usize,
    load: &wrk::Load,
) -> Result<[f64; CLOSE.len()], String> {
    let slice = wrk::Load {
        duration: "1s".into(),
        ..load.clone()
    };
    let mut ratios: [Vec<f64>; CLOSE.len()] = Default::default();
    for round in 1..=rounds {
        for (pair, &(a, b)) in CLOSE.iter().enumerate() {
            // CPU microseconds and requests, per side.
            let mut spent = [(0.0, 0u64); 2];
            for k in 0..2 * SLICES {
                let side = usize::from(matches!(k % 4, 1 | 2));
                let e = &endpoints[[a, b][side]];
                let sample = e
                    .measure(&slice)
                    .map_err(|err| format!("round {round}, {}: {err}", e.label))?;
                if !sample.run.is_clean() {
                    return Err(format!("{}: socket errors or non-2xx answers", e.label));
                }
                let us = sample.cpu_us_per_request.ok_or("no worker CPU clock")?;
                spent[side].0 += us * sample.run.requests as f64;
                spent[side].1 += sample.run.requests;
            }
            let per_request = |(us, n): (f64, u64)| us / n.max(1) as f64;
            let ratio = per_request(spent[0]) / per_request(spent[1]);
            eprintln!(
                "  round {round}/{rounds}  {} ÷ {}, {SLICES} × 1 s slices each: {ratio:.3}",
                endpoints[a].label, endpoints[b].label
            );
            ratios[pair].push(ratio);
        }
    }
    Ok(ratios.map(|r| wrk::median(&r)))
}

/// Pins every server worker to CPU 1 and wrk to CPU 0, on a machine with
/// two CPUs or more; whether it did.
fn pin_workers(endpoints: &[Endpoint]) -> bool {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // A worker notes its thread as it starts: wait for every clock.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while endpoints.iter().any(|e| e.clock.cpu_time().is_none())
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    if cpus < 2 || !endpoints.iter().all(|e| e.clock.pin(1)) {
        return false;
    }
    wrk::pin(Some(0));
    true
}

/// How many fresh pairs of processes P12 measures: a process's own start
/// (its threads, its allocator's arenas) moves `VmHWM` by about 0.2 MiB
/// from one start to the next, so the row is the median of these.
const P12_PAIRS: usize = 3;

/// `VmHWM` of a 1,000-probe server after load minus an empty one's, MiB:
/// the median over [`P12_PAIRS`] pairs of new processes.
fn peak_rss_difference(load: &wrk::Load) -> Result<f64, String> {
    let mut differences = Vec::new();
    for pair in 1..=P12_PAIRS {
        let full = crate::report::Server::spawn(
            "zb 1000",
            "/health/ready",
            crate::report::own("zb", 1000, None),
        )?;
        let empty = crate::report::Server::spawn(
            "zb 0",
            "/health/ready",
            crate::report::own("zb", 0, None),
        )?;
        let mut peaks = Vec::new();
        for server in [&full, &empty] {
            wrk::run(&format!("http://{}/health/ready", server.addr), load)?;
            peaks.push(server.status_kib("VmHWM").ok_or("no VmHWM")? as f64);
        }
        let mib = (peaks[0] - peaks[1]) / 1024.0;
        eprintln!(
            "  P12 pair {pair}/{P12_PAIRS}: VmHWM {:.0} KiB (1,000 probes) - {:.0} KiB (empty) = {mib:.2} MiB",
            peaks[0], peaks[1]
        );
        differences.push(mib);
    }
    Ok(wrk::median(&differences))
}
