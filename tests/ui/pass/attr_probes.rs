// Every attribute form compiles and yields the declared metadata.
use std::time::Duration;

use zb_health::prelude::{zb_health, FailureStatus, Probe, ProbeOutcome, ProbeResult, Tag, TagSet, ZbHealthProbe};

#[zb_health(name = "cache", tags = [ready], timeout = "750ms", failure_status = degraded)]
struct CacheProbe;

#[zb_health(name = "primary", tags = [active])]
struct PrimaryProbe {
    _role: &'static str,
}

#[zb_health(name = "feed", refresh = "5s", max_staleness = "12s")]
struct FeedProbe;

#[zb_health(name = "disk", cache = "1s")]
struct DiskProbe;

#[zb_health(name = "both", tags = [ready, active], timeout = "2s", crate = "zb_health")]
struct Generic<T: Send + Sync + 'static>(T);

impl Probe for CacheProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}
impl Probe for FeedProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}
impl Probe for DiskProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}
impl Probe for PrimaryProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}
impl<T: Send + Sync + 'static> Probe for Generic<T> {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

const _: () = assert!(matches!(CacheProbe::META.settings.timeout, Some(t) if t.as_millis() == 750));

fn main() {
    assert_eq!(CacheProbe::META.name, "cache");
    let policy = CacheProbe::META.settings.policy;
    assert_eq!((policy.cache, policy.refresh, policy.max_staleness), (None, None, None));
    assert_eq!(FeedProbe::META.settings.policy.refresh, Some(Duration::from_secs(5)));
    assert_eq!(FeedProbe::META.settings.policy.max_staleness, Some(Duration::from_secs(12)));
    assert_eq!(DiskProbe::META.settings.policy.cache, Some(Duration::from_secs(1)));
    assert_eq!(CacheProbe::META.settings.failure_status, FailureStatus::Degraded);
    assert_eq!(PrimaryProbe::META.settings.tags, TagSet::of(&[Tag::Active]));
    // No `timeout`: the default, strictly below Kubernetes' 1 s.
    assert_eq!(PrimaryProbe::META.timeout(), Duration::from_millis(800));
    assert_eq!(<Generic<u8>>::META.settings.tags, TagSet::of(&[Tag::Ready, Tag::Active]));
    let _ = PrimaryProbe { _role: "admin" }.registration();
}
