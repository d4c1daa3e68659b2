//! `BENCH=disclosure`: `/health/ready` throughput at `names` and `status`
//! disclosure ÷ `full` (issue 9 asks for ≥ 1.0 each). The built-in writer
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
use zb_health::Disclosure;

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
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); n];
    for round in 0..rounds {
        let mut cells = vec![String::new(); n];
        for k in 0..n {
            let i = (round + k) % n;
            let (level, addr, clock) = &servers.servers[i];
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
    }
    Ok(())
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
