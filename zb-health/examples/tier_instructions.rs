//! One tier evaluation of `n` trivially fast probes, repeated: a workload
//! to count instructions per request under `valgrind --tool=callgrind`,
//! which a noisy machine cannot disturb (issue 17). Arguments: the probe
//! count, the repetitions, and `cached` or `uncached`.

use std::time::Duration;

use zb_health::writer::BodyStyle;
use zb_health::{HealthRegistry, ProbeRegistration, ProbeResult, Tag, from_fn};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let cached = args.next().as_deref() == Some("cached");
    let registry = HealthRegistry::new();
    for i in 0..n {
        let probe = from_fn(|| async { Ok(ProbeResult::healthy().with_description("ok")) });
        let mut registration = ProbeRegistration::new(format!("probe-{i:04}"), probe);
        if cached {
            registration = registration.cache(Duration::from_secs(3));
        }
        std::mem::forget(registry.add(registration).expect("a valid registration"));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut bytes = 0;
    runtime.block_on(async {
        for _ in 0..reps {
            let report = registry.check(Tag::Ready).await;
            bytes += BodyStyle::CANONICAL.json(&report).len();
        }
    });
    println!("{bytes}");
}
