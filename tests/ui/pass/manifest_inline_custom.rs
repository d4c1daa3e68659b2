// Inline manifest with custom probes whose metadata lives only on the attribute.
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult, Tag, TagSet};

#[zb_health(name = "queue", tags = [ready, active], timeout = "250ms")]
pub struct QueueProbe {
    depth_limit: usize,
}

impl Probe for QueueProbe {
    async fn check(&self) -> ProbeOutcome {
        Ok(ProbeResult::healthy().with_data("depthLimit", self.depth_limit))
    }
}

zb_health::prelude::manifest!(Health, yaml = r#"
service: ot-opc-ua
orchestrator: { timeout: 1s }
probes:
  - { kind: custom, type: crate::QueueProbe }
"#);

fn main() {
    let regs = Health::registrations(HealthDeps { queue_probe: QueueProbe { depth_limit: 10 } });
    assert_eq!(regs.len(), 1);
    assert_eq!(regs[0].name(), "queue");
    assert_eq!(Health::PROBES[0].settings.tags, TagSet::of(&[Tag::Ready, Tag::Active]));
}
