//! `BENCH=hysteresis`: `/health/ready` worker CPU per request with a
//! failure and a success threshold on every probe ÷ the same registry
//! without them (issue 18 asks for at most 5 % more). Two servers in this
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
    let n = servers.len();
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); n];
    for round in 0..rounds {
        let mut cells = vec![String::new(); n];
        for k in 0..n {
            let i = (round + k) % n;
            let (label, addr, clock) = &servers[i];
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
                "  {label} {:>8.0} req/s{mark}{}",
                run.requests_per_sec,
                us.map_or(String::new(), |us| format!(" {us:>6.2} µs/req"))
            );
            rates[i].push(run.requests_per_sec);
            cpu[i].extend(us);
        }
        println!("  round {}:{}", round + 1, cells.concat());
    }
    let rate = wrk::median(&rates[0]) / wrk::median(&rates[1]);
    println!("  /health/ready req/s, plain ÷ hysteresis: {rate:.3}");
    if cpu.iter().all(|c| c.len() == rounds) {
        let ratio = wrk::median(&cpu[1]) / wrk::median(&cpu[0]);
        println!(
            "  worker CPU per request, hysteresis ÷ plain: {ratio:.3} (goal ≤ {GOAL:.2}): {}",
            if ratio <= GOAL { "met" } else { "not met" }
        );
        crate::summary::record(
            "issue 18",
            "/health/ready worker CPU per request, thresholds ÷ none".to_owned(),
            format!("{ratio:.3}"),
            format!("≤ {GOAL:.2}"),
            Some(ratio <= GOAL),
        );
    }
    Ok(())
}
