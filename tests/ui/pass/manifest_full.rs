// A manifest using every top-level key; the manifest repeats one probe's
// metadata, which agrees with its attribute (R7 holds).
mod probes {
    use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

    #[zb_health(name = "cache", tags = [ready], timeout = "750ms", failure_status = degraded)]
    pub struct CacheProbe;

    #[zb_health(name = "primary", tags = [active], timeout = "500ms")]
    pub struct PrimaryProbe;

    #[zb_health(name = "search", timeout = "1500ms")]
    pub struct SearchProbe;

    macro_rules! healthy {
        ($($t:ty),*) => {$(
            impl Probe for $t {
                async fn check(&self) -> ProbeOutcome {
                    Ok(ProbeResult::healthy())
                }
            }
        )*};
    }
    healthy!(CacheProbe, PrimaryProbe, SearchProbe);
}

zb_health::prelude::manifest!(Health = "manifests/full.yaml");

fn main() {
    assert_eq!(Health::SERVICE, "scadabridge");
    let paths = Health::paths();
    assert_eq!((paths.ready.as_str(), paths.active.as_str(), paths.live.as_str()), ("/healthz/ready", "/healthz/primary", "/healthz/live"));
    let names: Vec<&str> = Health::PROBES.iter().map(|p| p.name).collect();
    assert_eq!(names, ["cache", "primary", "search"]);
    // A registry of its own, as a test would use (AT-9).
    let registry = zb_health::prelude::HealthRegistry::new();
    let deps = HealthDeps { cache: probes::CacheProbe, primary_probe: probes::PrimaryProbe, search_probe: probes::SearchProbe };
    let installed = Health::install_into(&registry, deps).unwrap();
    assert_eq!(installed.server.endpoints().path(zb_health::prelude::Tag::Active), "/healthz/primary");
    assert_eq!(registry.names().len(), 3);
    // The lifecycle: typed handles named after the manifest's names.
    assert_eq!(installed.watchdogs.tag_poller.name(), "tag-poller");
    assert!(!registry.lifecycle().is_started());
    installed.startup.migrations.ready();
    assert!(registry.lifecycle().is_started());
    assert_eq!(Health::DRAIN.delay(), std::time::Duration::from_secs(10));
    assert_eq!(Health::DRAIN.graceful_timeout(), std::time::Duration::from_secs(30));
    assert_eq!(Health::TERMINATION_GRACE_PERIOD, Some(std::time::Duration::from_secs(45)));
}
