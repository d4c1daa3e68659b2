//! The bench's own probes and ready registries, the same shapes as a
//! service's (a database-like switchable probe, a disk-space check, a
//! cache check), so the bench depends on no example service.
//!
//! Every probe is trivially fast and answers healthy with a description:
//! the bench measures what the health machinery costs around the probes,
//! and the peers of other ecosystems (`bench/peers/`) run the same three
//! checks, so the work behind each ready answer is equal on every side.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use zb_health::prelude::{HealthRegistry, Probe, ProbeOutcome, ProbeRegistration, ProbeResult};

/// The name the bench registers its third probe under.
pub const CACHE_PROBE_NAME: &str = "cache";
/// The names of the three probes of the ready tier, in registry order.
pub const READY_PROBES: [&str; 3] = ["database", "disk-space", CACHE_PROBE_NAME];

/// A database-like dependency: healthy until told to fail. The switch is
/// shared, so the zb-health registry and the bare handler can hold the
/// very same instance.
#[derive(Clone, Default)]
pub struct DatabaseProbe {
    failing: Arc<AtomicBool>,
}

impl DatabaseProbe {
    /// Makes the next checks fail (`true`) or pass (`false`); the bench
    /// serves it healthy, its tests check the switch works.
    #[cfg(test)]
    pub fn set_failing(&self, failing: bool) {
        self.failing.store(failing, Ordering::Relaxed);
    }
}

impl Probe for DatabaseProbe {
    async fn check(&self) -> ProbeOutcome {
        if self.failing.load(Ordering::Relaxed) {
            Err("simulated: database connection refused".into())
        } else {
            Ok(ProbeResult::healthy().with_description("database reachable"))
        }
    }
}

/// An always-healthy local check.
pub struct DiskSpaceProbe;

impl Probe for DiskSpaceProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy().with_description("disk space above threshold"))
    }
}

/// A third trivially fast probe, so the ready tier has three like the
/// hand-written `/ready3` handler and the peers.
pub struct CacheProbe;

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy().with_description("cache reachable"))
    }
}

/// The name of the `i`-th probe of a ready tier of any size: the three
/// named probes first, then `probe-0003`, `probe-0004`, ….
pub fn probe_name(i: usize) -> String {
    match READY_PROBES.get(i) {
        Some(name) => (*name).to_owned(),
        None => format!("probe-{i:04}"),
    }
}

/// A ready registry of `probes` probes: `database` (the given instance),
/// `disk-space`, `cache`, then more probes shaped like `cache`. With
/// `cache`, each probe's result is served for that long without running it
/// (BE-HLTH-006).
pub fn ready_registry(
    probes: usize,
    database: &DatabaseProbe,
    cache: Option<Duration>,
) -> io::Result<HealthRegistry> {
    let registry = HealthRegistry::new();
    // Registered in one `add_all`, as a manifest's `install` does: one
    // table built, not one per probe.
    let mut all = Vec::new();
    for i in 0..probes {
        let name = probe_name(i);
        let registration = match i {
            0 => ProbeRegistration::new(name, database.clone()).timeout(Duration::from_millis(800)),
            1 => ProbeRegistration::new(name, DiskSpaceProbe).timeout(Duration::from_millis(300)),
            _ => ProbeRegistration::new(name, CacheProbe).timeout(Duration::from_millis(300)),
        };
        let registration = match cache {
            Some(ttl) => registration.cache(ttl),
            None => registration,
        };
        all.push(registration);
    }
    registry
        .add_all(all)
        .map_err(|e| io::Error::other(e.to_string()))?;
    Ok(registry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_start_with_the_three_named_probes_then_number_the_rest() {
        let names: Vec<String> = (0..5).map(probe_name).collect();
        assert_eq!(
            names,
            [
                "database",
                "disk-space",
                "cache",
                "probe-0003",
                "probe-0004"
            ]
        );
    }

    #[test]
    fn the_database_switch_fails_and_recovers_the_check() {
        let probe = DatabaseProbe::default();
        let shared = probe.clone();
        actix_web::rt::System::new().block_on(async move {
            assert!(probe.check().await.is_ok());
            shared.set_failing(true);
            assert!(probe.check().await.is_err());
            shared.set_failing(false);
            assert!(probe.check().await.is_ok());
        });
    }

    #[test]
    fn a_registry_of_a_thousand_cached_probes_is_accepted() {
        let registry = ready_registry(
            1000,
            &DatabaseProbe::default(),
            Some(Duration::from_secs(1)),
        )
        .expect("1,000 cached probes register");
        assert_eq!(registry.names().len(), 1000);
    }
}
