//! `BENCH=disclosure`: `/health/ready` throughput at `names` and `status`
//! disclosure ÷ `full` (issue 9 asks for ≥ 1.0 each). The built-in writer
//! serialises straight from the report and skips what a level hides, so a
//! stricter level should cost no more than `full`.
//!
//! Three servers over one registry of three fast probes, in this process
//! with the bench's shared settings, loaded in turn by wrk `ROUNDS` times;
//! each ratio is of the medians, measured in the same run.

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
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); servers.servers.len()];
    for round in 1..=rounds {
        let mut line = format!("  round {round}:");
        for ((level, addr), rates) in servers.servers.iter().zip(&mut rates) {
            let run = wrk::run(&format!("http://{addr}/health/ready"), load)?;
            let mark = if run.is_clean() { " " } else { "!" };
            line.push_str(&format!(
                "  {level} {:>10.0} req/s{mark}",
                run.requests_per_sec
            ));
            rates.push(run.requests_per_sec);
        }
        println!("{line}");
    }
    let full = wrk::median(&rates[0]);
    for ((level, _), rates) in servers.servers.iter().zip(&rates).skip(1) {
        let ratio = wrk::median(rates) / full;
        println!(
            "  /health/ready at {level} ÷ full = {ratio:.3}  (goal ≥ {GOAL:.1}): {}",
            if ratio >= GOAL { "met" } else { "not met" }
        );
    }
    Ok(())
}

/// Every server answers 200 with what its level shows, so the run
/// measures what it names.
pub fn check(servers: &servers::DisclosureServers) -> Result<(), String> {
    for (level, addr) in &servers.servers {
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
