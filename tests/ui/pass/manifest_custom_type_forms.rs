// R4's other side: a custom `type:` that exists is never reported missing,
// whatever form the source gives it: a `pub use … as …` re-export, a type
// alias named alone, a struct of an inline module named through `self::`,
// a probe a macro writes (which the source scan cannot see).
use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

macro_rules! probe {
    ($ty:ident) => {
        #[zb_health(name = "made", tags = [ready])]
        pub struct $ty;

        impl Probe for $ty {
            async fn check(&self) -> ProbeOutcome {
                Ok(ProbeResult::healthy())
            }
        }
    };
}

pub mod inner {
    use zb_health::prelude::{zb_health, Probe, ProbeOutcome, ProbeResult};

    #[zb_health(name = "inner", tags = [ready])]
    pub struct InnerProbe;

    #[zb_health(name = "aliased", tags = [ready])]
    pub struct AliasedProbe;

    #[zb_health(name = "other", tags = [ready])]
    pub struct OtherProbe;

    impl Probe for InnerProbe {
        async fn check(&self) -> ProbeOutcome {
            Ok(ProbeResult::healthy())
        }
    }

    impl Probe for AliasedProbe {
        async fn check(&self) -> ProbeOutcome {
            Ok(ProbeResult::healthy())
        }
    }

    impl Probe for OtherProbe {
        async fn check(&self) -> ProbeOutcome {
            Ok(ProbeResult::healthy())
        }
    }
}

pub mod made {
    use super::*;

    probe!(MadeProbe);
}

pub use inner::InnerProbe as ReExported;
pub type Alias = inner::AliasedProbe;

zb_health::prelude::manifest!(Health, yaml = r#"
service: forms
probes:
  - { kind: custom, type: crate::ReExported }
  - { kind: custom, type: Alias }
  - { kind: custom, type: self::inner::OtherProbe }
  - { kind: custom, type: crate::made::MadeProbe }
"#);

fn main() {
    let regs = Health::registrations(HealthDeps {
        re_exported: inner::InnerProbe,
        alias: inner::AliasedProbe,
        other_probe: inner::OtherProbe,
        made_probe: made::MadeProbe,
    });
    let names: Vec<&str> = regs.iter().map(|r| r.name()).collect();
    assert_eq!(names, ["inner", "aliased", "other", "made"]);
}
