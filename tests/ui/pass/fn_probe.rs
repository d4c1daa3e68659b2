// `#[zb_health]` on an `async fn` is one probe: the manifest names it with
// one `fn:` line and `HealthDeps` gets no field for it; code registers it
// with `ping {}.registration()`. The attribute's settings are its `META`.
use std::time::Duration;

use zb_health::prelude::*;

#[zb_health(name = "ping", tags = [ready], timeout = "200ms")]
async fn ping() -> ProbeOutcome {
    Ok(ProbeResult::healthy().with_description("pong"))
}

mod probes {
    use zb_health::prelude::*;

    /// Named by a path through a module, with `fn:` and a `name:` that
    /// repeats the attribute's.
    #[zb_health(name = "queue", tags = [ready, active], failure_status = unhealthy)]
    pub async fn queue() -> ProbeOutcome {
        Ok(ProbeResult::healthy())
    }
}

zb_health::prelude::manifest!(Health, yaml = r#"
service: orders
orchestrator: { timeout: 1s }
probes:
  - { kind: custom, fn: crate::ping }
  - { name: queue, kind: custom, fn: crate::probes::queue, tags: [ready, active] }
"#);

fn main() {
    // The fn stays callable.
    let _future = ping();
    let regs = Health::registrations(HealthDeps {});
    assert_eq!(regs.len(), 2);
    assert_eq!(regs[0].name(), "ping");
    assert_eq!(Health::PROBES[0].settings.timeout, Some(Duration::from_millis(200)));
    assert_eq!(Health::PROBES[1].settings.tags, TagSet::of(&[Tag::Ready, Tag::Active]));
    // In code, without a manifest line.
    let registry = HealthRegistry::new();
    registry.add(ping {}.registration()).unwrap();
    assert_eq!(registry.names().len(), 1);
}
