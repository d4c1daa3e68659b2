//! One tier evaluation of `n` trivially fast probes and its canonical
//! body, repeated: a workload to count instructions per request under
//! `valgrind --tool=callgrind`, which a noisy machine cannot disturb.
//! `bare` is the hand-written baseline of `BENCH=limit`'s P11: a
//! `join_all` of the same checks, timed, written with `serde` in the same
//! shape, with no safety net.
//!
//! Arguments: the probe count, the repetitions, and `uncached`, `cached`,
//! `threshold` (uncached, with `failure_threshold(3)` and
//! `success_threshold(2)`, as `BENCH=hysteresis`), `shared` (uncached,
//! every probe shared, its verdict published to an in-memory herd) or
//! `bare`. The difference between two repetition counts is the cost
//! of the extra requests (see `bench/README` in the workspace).

use std::time::{Duration, Instant};

use serde::ser::{SerializeMap, SerializeStruct, Serializer};
use zb_health::prelude::{HealthRegistry, ProbeRegistration, ProbeResult, Tag, from_fn};
use zb_health::probe::Probe;
use zb_health::writer::BodyStyle;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let reps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let mode = args.next().unwrap_or_else(|| "uncached".into());
    let check = || async { Ok(ProbeResult::healthy().with_description("ok")) };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut bytes = 0;
    if mode == "bare" {
        let probes: Vec<_> = (0..n).map(|_| from_fn(check)).collect();
        let names: Vec<String> = (0..n).map(|i| format!("probe-{i:04}")).collect();
        runtime.block_on(async {
            for _ in 0..reps {
                bytes += bare(&probes, &names).await.len();
            }
        });
    } else {
        let registry = HealthRegistry::new();
        if mode == "shared" {
            registry.set_shared_verdicts(std::sync::Arc::new(Herd::default()));
        }
        for i in 0..n {
            let mut registration = ProbeRegistration::new(format!("probe-{i:04}"), from_fn(check));
            match mode.as_str() {
                "cached" => registration = registration.cache(Duration::from_secs(3)),
                // `BENCH=hysteresis`'s registry (BE-HLTH-006).
                "threshold" => {
                    registration = registration.failure_threshold(3).success_threshold(2)
                }
                // A shared probe (BE-HLTH-003): each run publishes its verdict.
                "shared" => registration = registration.shared(),
                _ => {}
            }
            std::mem::forget(registry.add(registration).expect("a valid registration"));
        }
        runtime.block_on(async {
            for _ in 0..reps {
                let report = registry.check(Tag::Ready).await;
                bytes += BodyStyle::CANONICAL.json(&report).len();
            }
        });
    }
    println!("{bytes}");
}

/// The baseline request: every check at once, each timed, one body.
async fn bare<P: Probe>(probes: &[P], names: &[String]) -> Vec<u8> {
    let started = Instant::now();
    let results = futures_util::future::join_all(probes.iter().map(|p| async move {
        let at = Instant::now();
        let outcome = p.check().await;
        (outcome, at.elapsed())
    }))
    .await;
    let mut out = Vec::with_capacity(64 + names.len() * 96);
    let mut s = serde_json::Serializer::new(&mut out);
    let write = |s: &mut serde_json::Serializer<&mut Vec<u8>>| -> serde_json::Result<()> {
        let mut body = s.serialize_map(Some(3))?;
        body.serialize_entry("status", "Healthy")?;
        body.serialize_entry("totalDurationMs", &(started.elapsed().as_millis() as u64))?;
        body.serialize_key("entries")?;
        body.serialize_value(&Entries(names, &results))?;
        SerializeMap::end(body)
    };
    write(&mut s).expect("a Vec takes any JSON");
    out
}

type Outcome = (zb_health::prelude::ProbeOutcome, Duration);

struct Entries<'a>(&'a [String], &'a [Outcome]);

impl serde::Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.1.len()))?;
        for (name, entry) in self.0.iter().zip(self.1) {
            map.serialize_entry(name, &Entry(entry))?;
        }
        SerializeMap::end(map)
    }
}

struct Entry<'a>(&'a Outcome);

impl serde::Serialize for Entry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (outcome, duration) = self.0;
        let description = outcome.as_ref().ok().and_then(|r| r.description.as_deref());
        let mut st = s.serialize_struct("Entry", 3)?;
        st.serialize_field("status", "Healthy")?;
        st.serialize_field("description", &description)?;
        st.serialize_field("durationMs", &(duration.as_micros() as f64 / 1000.0))?;
        SerializeStruct::end(st)
    }
}

/// Verdicts kept in memory, as a cluster view keeps this node's own: the
/// cost of publishing, which every healthy run pays.
#[derive(Default)]
struct Herd(std::sync::Mutex<std::collections::BTreeMap<String, bool>>);

impl zb_health::shared::SharedVerdicts for Herd {
    fn publish(&self, probe: &str, failing: bool) {
        let mut own = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if own.get(probe) != Some(&failing) {
            own.insert(probe.to_owned(), failing);
        }
    }

    fn tally(&self, _probe: &str) -> Option<zb_health::shared::Tally> {
        None
    }
}
