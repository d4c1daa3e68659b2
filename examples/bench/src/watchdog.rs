//! `BENCH=watchdog`: `/healthz` throughput with three watchdogs ÷ with
//! none (the goal: ≥ 0.95). With watchdogs, the live tier reads one
//! atomic per loop and serves a precomputed healthy body; this measures
//! what that costs against the fixed body of a registry without them.
//!
//! Both servers run in this process with the bench's shared settings and
//! are loaded alternately by wrk, `ROUNDS` times; the ratio is of the
//! medians, measured in the same run.

use crate::servers::{self, WATCHDOGS};
use crate::{client, wrk};

/// The goal of the ratio.
const GOAL: f64 = 0.95;

/// Runs the comparison and prints its table.
pub fn run(rounds: usize, load: &wrk::Load) -> Result<(), String> {
    let pair = servers::start_watchdog_pair().map_err(|e| e.to_string())?;
    check(&pair)?;
    println!(
        "watchdog: /healthz with {WATCHDOGS} watchdogs vs none ({})",
        load.describe()
    );
    let (mut plain, mut watched) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let a = wrk::run(&format!("http://{}/healthz", pair.plain), load)?;
        let b = wrk::run(&format!("http://{}/healthz", pair.watched), load)?;
        println!(
            "  round {round}: none {:>10.0} req/s   {WATCHDOGS} watchdogs {:>10.0} req/s",
            a.requests_per_sec, b.requests_per_sec
        );
        plain.push(a.requests_per_sec);
        watched.push(b.requests_per_sec);
    }
    let ratio = wrk::median(&watched) / wrk::median(&plain);
    println!(
        "  /healthz with {WATCHDOGS} watchdogs ÷ with none = {ratio:.3}  (goal ≥ {GOAL:.2}): {}",
        if ratio >= GOAL { "met" } else { "not met" }
    );
    crate::summary::record(
        "watchdog",
        format!("/healthz req/s, {WATCHDOGS} watchdogs ÷ none"),
        format!("{ratio:.3}"),
        format!("≥ {GOAL:.2}"),
        Some(ratio >= GOAL),
    );
    Ok(())
}

/// Both servers answer 200: the plain one with no entries, the watched one
/// with one Healthy entry per watchdog, so the run measures what it names.
pub fn check(pair: &servers::WatchdogPair) -> Result<(), String> {
    for (addr, entries) in [(pair.plain, 0), (pair.watched, WATCHDOGS)] {
        let response = client::get(addr, "/healthz").map_err(|e| e.to_string())?;
        let body: serde_json::Value =
            serde_json::from_slice(&response.body).map_err(|e| e.to_string())?;
        let found = body["entries"].as_object().map_or(0, |e| e.len());
        if response.status != 200 || body["status"] != "Healthy" || found != entries {
            return Err(format!(
                "{addr}/healthz answered {} with {found} entries, expected 200 Healthy with {entries}",
                response.status
            ));
        }
    }
    Ok(())
}
