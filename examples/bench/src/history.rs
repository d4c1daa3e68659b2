//! `BENCH=history`: the history's memory does not grow
//! (`spec/history.md`). One registry with `HISTORY_PROBES` (1,000) probes
//! and the history on; the ready tier is evaluated until every probe has
//! `HISTORY_RESULTS` (200,000) results, every probe changing status now
//! and then, so every ring wraps many times and the flap buckets turn
//! over. The process's RSS (`VmRSS`) and its peak (`VmHWM`) are printed
//! after a warm-up (every ring full) and at the end: equal up to allocator
//! noise, whatever the number of results.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use zb_health::prelude::{HealthRegistry, ProbeRegistration, ProbeResult, Tag, from_fn};
use zb_health::spec::Disclosure;

/// Results per probe before the first reading.
const WARM_UP: u64 = 5_000;

/// A `kB` field of `/proc/self/status`.
fn status_kb(field: &str) -> u64 {
    crate::results::proc_status_kb("self", field)
}

fn memory() -> String {
    format!(
        "VmRSS {} kB, VmHWM {} kB",
        status_kb("VmRSS:"),
        status_kb("VmHWM:")
    )
}

/// Runs the measurement and prints it.
pub fn run() -> Result<(), String> {
    let probes: usize = crate::env_or("HISTORY_PROBES", 1_000);
    let results: u64 = crate::env_or("HISTORY_RESULTS", 200_000);
    let registry = HealthRegistry::new();
    // One clock for every probe: each run advances it, and every 97th run
    // of a probe is a degraded one, so each probe flips twice per 97 runs.
    let tick = Arc::new(AtomicU64::new(0));
    let registrations: Vec<ProbeRegistration> = (0..probes)
        .map(|i| {
            let tick = tick.clone();
            let probe = from_fn(move || {
                let n = tick.fetch_add(1, Ordering::Relaxed) / probes as u64;
                let degraded = (n + i as u64).is_multiple_of(97);
                async move {
                    Ok(if degraded {
                        ProbeResult::degraded("slow")
                    } else {
                        ProbeResult::healthy()
                    })
                }
            });
            ProbeRegistration::new(format!("probe-{i}"), probe)
        })
        .collect();
    registry.add_all(registrations).map_err(|e| e.to_string())?;
    // `HISTORY_OFF=1`: the same workload with no history, the control.
    let off = std::env::var("HISTORY_OFF").is_ok_and(|v| v == "1");
    if !off {
        registry.enable_history();
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    println!(
        "history{}: {probes} probes, {results} results each, {} bytes of history per probe",
        if off { " off (the control)" } else { "" },
        zb_health::history::PROBE_HISTORY_BYTES
    );
    let started = Instant::now();
    runtime.block_on(async {
        // Warm-up: every ring full and wrapped many times, the allocator's
        // arenas at their working size, the document rendered.
        for _ in 0..WARM_UP {
            registry.check(Tag::Ready).await;
        }
        let _ = registry.history_json(Disclosure::Full, true);
        println!("  after warm-up ({WARM_UP} results each): {}", memory());
        let warm = status_kb("VmRSS:");
        for round in WARM_UP..results {
            registry.check(Tag::Ready).await;
            if round.is_multiple_of((results / 4).max(1)) {
                let _ = registry.history_json(Disclosure::Full, true);
                println!("  after {round} results each: {}", memory());
            }
        }
        let _ = registry.history_json(Disclosure::Full, true);
        let end = status_kb("VmRSS:");
        println!(
            "  at the end ({results} results each): {} (RSS change since warm-up: {} kB)",
            memory(),
            end as i64 - warm as i64
        );
    });
    println!(
        "  {:.1} s, load average at end: {}",
        started.elapsed().as_secs_f64(),
        crate::loadavg()
    );
    Ok(())
}
