//! Micro-benchmarks of the ready tier without a load generator:
//! one tier evaluation (`HealthRegistry::check`) of trivially fast probes,
//! uncached and cached, and the canonical body writer over its report. A
//! regression of the hot path shows up here first; CI only builds them.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use zb_health::prelude::{HealthRegistry, ProbeRegistration, ProbeResult, Tag, from_fn};
use zb_health::writer::BodyStyle;

/// A registry of `n` probes that answer healthy at their first poll.
fn registry(n: usize, cache: Option<Duration>) -> HealthRegistry {
    let registry = HealthRegistry::new();
    for i in 0..n {
        let probe = from_fn(|| async { Ok(ProbeResult::healthy().with_description("ok")) });
        let registration = ProbeRegistration::new(format!("probe-{i:04}"), probe);
        let registration = match cache {
            Some(ttl) => registration.cache(ttl),
            None => registration,
        };
        // Distinct names, a default deadline: always accepted.
        std::mem::forget(registry.add(registration).expect("a valid registration"));
    }
    registry
}

fn tier_evaluation(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    for (label, n, cache) in [
        ("check ready, 3 probes", 3, None),
        ("check ready, 100 probes", 100, None),
        (
            "check ready, 3 probes, cached",
            3,
            Some(Duration::from_secs(3600)),
        ),
        (
            "check ready, 100 probes, cached",
            100,
            Some(Duration::from_secs(3600)),
        ),
    ] {
        let registry = registry(n, cache);
        c.bench_function(label, |b| {
            b.iter(|| runtime.block_on(registry.check(black_box(Tag::Ready))))
        });
    }
}

fn body_writer(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    for n in [3, 100] {
        let report = runtime.block_on(registry(n, None).check(Tag::Ready));
        c.bench_function(&format!("canonical body, {n} entries"), |b| {
            b.iter(|| BodyStyle::CANONICAL.json(black_box(&report)))
        });
    }
}

criterion_group!(benches, tier_evaluation, body_writer);
criterion_main!(benches);
