//! The registry façade: the orchestrator timeout (R5 at registration).

mod orchestrator {
    use std::sync::Arc;
    use std::time::Duration;

    use zb_health_spec::Rule;

    use crate::probe::{ProbeResult, from_fn};
    use crate::registry::{HealthRegistry, ProbeRegistration};

    fn probe(name: &'static str, ms: u64) -> ProbeRegistration {
        ProbeRegistration::new(name, from_fn(|| async { Ok(ProbeResult::healthy()) }))
            .timeout(Duration::from_millis(ms))
    }

    #[test]
    fn a_timeout_set_later_holds_every_later_add_to_r5() {
        let registry = HealthRegistry::new();
        registry.add(probe("early", 900)).unwrap();
        registry
            .set_orchestrator_timeout(Duration::from_secs(1))
            .unwrap();
        assert_eq!(
            registry.orchestrator_timeout(),
            Some(Duration::from_secs(1))
        );
        let refused = registry.add(probe("slow", 1000)).unwrap_err();
        assert_eq!(refused.rules(), [Rule::Duration]);
        assert!(registry.add(probe("quick", 999)).is_ok());
        assert_eq!(&*registry.names(), ["early", "quick"].map(Arc::from));
    }

    #[test]
    fn a_timeout_that_a_registered_deadline_does_not_fit_is_refused() {
        let registry = HealthRegistry::new();
        registry.add(probe("a", 800)).unwrap();
        registry.add(probe("b", 1500)).unwrap();
        let refused = registry
            .set_orchestrator_timeout(Duration::from_secs(1))
            .unwrap_err();
        assert_eq!(refused.rules(), [Rule::Duration]);
        assert!(refused.to_string().contains("probe `b`"), "{refused}");
        assert_eq!(registry.orchestrator_timeout(), None, "nothing changed");
    }

    #[test]
    fn the_same_timeout_again_is_a_no_op_and_another_is_refused() {
        let registry = HealthRegistry::new();
        let one = Duration::from_secs(1);
        registry.set_orchestrator_timeout(one).unwrap();
        registry.set_orchestrator_timeout(one).unwrap();
        let refused = registry
            .set_orchestrator_timeout(Duration::from_secs(2))
            .unwrap_err();
        assert_eq!(refused.rules(), [Rule::Duration]);
        assert_eq!(registry.orchestrator_timeout(), Some(one));
    }
}
