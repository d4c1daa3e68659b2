//! `BENCH=hysteresis`: `/health/ready` worker CPU per request with a
//! failure and a success threshold on every probe ÷ the same registry
//! without them (the goal: at most 5 % more). Two servers in this
//! process, loaded in turn by wrk `ROUNDS` times, the order alternating
//! every round; the ratio is of the medians, measured in the same run.

use crate::{servers, wrk};

/// The most CPU per request the thresholds may add.
const GOAL: f64 = 1.05;

/// Runs the comparison and prints its table.
pub fn run(rounds: usize, load: &wrk::Load) -> Result<(), String> {
    let servers = servers::start_hysteresis_servers().map_err(|e| e.to_string())?;
    println!(
        "hysteresis: /health/ready ({} probes) without and with thresholds ({})",
        servers::DISCLOSED_PROBES,
        load.describe()
    );
    let (rates, cpu) = crate::disclosure::load_in_turn(&servers, rounds, load)?;
    let rate = wrk::median(&rates[0]) / wrk::median(&rates[1]);
    println!("  /health/ready req/s, plain ÷ hysteresis: {rate:.3}");
    if cpu.iter().all(|c| c.len() == rounds) {
        let ratio = wrk::median(&cpu[1]) / wrk::median(&cpu[0]);
        println!(
            "  worker CPU per request, hysteresis ÷ plain: {ratio:.3} (goal ≤ {GOAL:.2}): {}",
            if ratio <= GOAL { "met" } else { "not met" }
        );
        crate::summary::record(
            "hysteresis",
            "/health/ready worker CPU per request, thresholds ÷ none".to_owned(),
            format!("{ratio:.3}"),
            format!("≤ {GOAL:.2}"),
            Some(ratio <= GOAL),
        );
    }
    Ok(())
}
