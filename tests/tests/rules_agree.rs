//! One rule, one place: a violation that both the manifest (compile time)
//! and the runtime builder (programmatic registration) can express is
//! refused by both with the same rule.

use std::time::Duration;

use zb_health::cluster::ClusterActiveNode;
use zb_health::prelude::{
    FailureStatus, HealthRegistry, ProbeRegistration, ProbeResult, RegistryError, Tag, TagSet,
    ZbHealth, from_fn,
};
use zb_health::spec::Rule;
use zb_health_spec::detection;
use zb_health_spec::manifest::parse_manifest;

fn manifest_rules(yaml: &str) -> Vec<Rule> {
    let mut rules: Vec<Rule> = parse_manifest(yaml)
        .unwrap_err()
        .into_iter()
        .map(|v| v.rule)
        .collect();
    rules.dedup();
    rules
}

fn probe(name: &str) -> ProbeRegistration {
    ProbeRegistration::new(name, from_fn(|| async { Ok(ProbeResult::healthy()) }))
}

#[test]
fn r1_live_tag() {
    let m = manifest_rules("service: s\nprobes:\n  - { name: db, kind: database, tags: [live] }\n");
    let r = HealthRegistry::new()
        .add(probe("db").tags(TagSet::of(&[Tag::Live])))
        .unwrap_err()
        .rules();
    assert_eq!((m, r), (vec![Rule::LiveTag], vec![Rule::LiveTag]));
}

#[test]
fn r13_no_tags() {
    let m = manifest_rules("service: s\nprobes:\n  - { name: db, kind: database, tags: [] }\n");
    let r = HealthRegistry::new()
        .add(probe("db").tags(TagSet::EMPTY))
        .unwrap_err()
        .rules();
    assert_eq!((m, r), (vec![Rule::NoTags], vec![Rule::NoTags]));
}

#[test]
fn r2_role_scope_needs_roles() {
    let m = manifest_rules(
        "service: s\nprobes:\n  - { name: a, kind: active-node, scope: role, roles: [] }\n",
    );
    let r = ClusterActiveNode::with_roles(Vec::<String>::new())
        .unwrap_err()
        .rules();
    assert_eq!(
        (m, r),
        (
            vec![Rule::RoleScopeNeedsRoles],
            vec![Rule::RoleScopeNeedsRoles]
        )
    );
}

#[test]
fn r10_active_not_optional() {
    let m = manifest_rules(
        "service: s\ndefaults: { failure_status: degraded }\nprobes:\n  - { name: g, kind: grpc, tags: [active] }\n",
    );
    let r = HealthRegistry::new()
        .add(
            probe("g")
                .tags(TagSet::ACTIVE)
                .failure_status(FailureStatus::Degraded),
        )
        .unwrap_err()
        .rules();
    assert_eq!(
        (m, r),
        (vec![Rule::ActiveNotOptional], vec![Rule::ActiveNotOptional])
    );
}

/// A registration that is gone is not a broken rule: `RegistryError`
/// says which, and `rules()` stays empty.
#[test]
fn a_gone_registration_is_not_a_rule_violation() {
    let registry = HealthRegistry::new();
    let handle = registry.add(probe("db")).unwrap();
    drop(registry);
    let (err, _handle) = handle.replace(probe("db")).unwrap_err();
    assert!(
        matches!(&err, RegistryError::Gone { name } if name == "db"),
        "{err:?}"
    );
    assert!(err.rules().is_empty());
    assert!(err.to_string().contains("no longer registered"), "{err}");
}

#[test]
fn r3_duplicate_name() {
    let m = manifest_rules(
        "service: s\nprobes:\n  - { name: db, kind: database }\n  - { name: db, kind: grpc }\n",
    );
    let r = HealthRegistry::new()
        .add_all([probe("db"), probe("db")])
        .unwrap_err()
        .rules();
    assert_eq!(
        (m, r),
        (vec![Rule::DuplicateName], vec![Rule::DuplicateName])
    );
}

#[test]
fn r5_timeout_not_below_the_orchestrator() {
    let m = manifest_rules(
        "service: s\norchestrator: { timeout: 1s }\nprobes:\n  - { name: db, kind: database, timeout: 1s }\n",
    );
    let r = HealthRegistry::builder()
        .orchestrator_timeout(Duration::from_secs(1))
        .build()
        .add(probe("db").timeout(Duration::from_secs(1)))
        .unwrap_err()
        .rules();
    assert_eq!((m, r), (vec![Rule::Duration], vec![Rule::Duration]));
}

#[test]
fn r5_zero_timeout() {
    let m = manifest_rules("service: s\nprobes:\n  - { name: db, kind: database, timeout: 0ms }\n");
    let r = HealthRegistry::new()
        .add(probe("db").timeout(Duration::ZERO))
        .unwrap_err()
        .rules();
    assert_eq!((m, r), (vec![Rule::Duration], vec![Rule::Duration]));
}

#[test]
fn r6_colliding_paths() {
    let m = manifest_rules("service: s\nendpoints: { ready: /health, active: /health }\n");
    let r = ZbHealth::new(HealthRegistry::new())
        .ready_path("/health")
        .active_path("/health")
        .build()
        .err()
        .unwrap()
        .rules();
    assert_eq!((m, r), (vec![Rule::EndpointPath], vec![Rule::EndpointPath]));
}

#[test]
fn r7_authorized_level_shows_more() {
    use zb_health::spec::Disclosure;
    for (yaml, builder, refused) in [
        (
            "{ authorized: full }",
            ZbHealth::new(HealthRegistry::new()).authorized(Disclosure::Full),
            true,
        ),
        (
            "{ disclosure: names, authorized: { live: status } }",
            ZbHealth::new(HealthRegistry::new())
                .disclosure(Disclosure::Names)
                .tier_authorized(Tag::Live, Disclosure::Status),
            true,
        ),
        (
            "{ disclosure: { ready: status }, authorized: full }",
            ZbHealth::new(HealthRegistry::new())
                .tier_disclosure(Tag::Ready, Disclosure::Status)
                .authorized(Disclosure::Full),
            false,
        ),
    ] {
        let yaml_file = format!("service: s\nendpoints: {yaml}\n");
        let m = match parse_manifest(&yaml_file) {
            Ok(_) => Vec::new(),
            Err(_) => manifest_rules(&yaml_file),
        };
        let r = builder.build().err().map(|e| e.rules()).unwrap_or_default();
        let want = if refused {
            vec![Rule::Contradiction]
        } else {
            Vec::new()
        };
        assert_eq!((&m, &r), (&want, &want), "{yaml}");
    }
}

#[test]
fn r9_probe_name() {
    let m = manifest_rules("service: s\nprobes:\n  - { name: \"data base\", kind: database }\n");
    let r = HealthRegistry::new()
        .add(probe("data base"))
        .unwrap_err()
        .rules();
    assert_eq!((m, r), (vec![Rule::ProbeName], vec![Rule::ProbeName]));
}

#[test]
fn r16_refresh_policy() {
    let s = Duration::from_secs;
    for (keys, registration) in [
        (
            "refresh: 1s, max_staleness: 1s",
            probe("db").refresh(s(1)).max_staleness(s(1)),
        ),
        ("max_staleness: 5s", probe("db").max_staleness(s(5))),
        (
            "cache: 1s, refresh: 1s",
            probe("db").cache(s(1)).refresh(s(1)),
        ),
    ] {
        let m = manifest_rules(&format!(
            "service: s\nprobes:\n  - {{ name: db, kind: database, {keys} }}\n"
        ));
        let r = HealthRegistry::new().add(registration).unwrap_err().rules();
        assert_eq!(
            (m, r),
            (vec![Rule::RefreshPolicy], vec![Rule::RefreshPolicy]),
            "{keys}"
        );
    }
}

#[test]
fn r17_live_answer() {
    let m = manifest_rules(
        "service: s\nprobes:\n  - { name: g, kind: grpc, tags: [active], refresh: 1s }\n",
    );
    let r = HealthRegistry::new()
        .add(
            probe("g")
                .tags(TagSet::ACTIVE)
                .refresh(Duration::from_secs(1)),
        )
        .unwrap_err()
        .rules();
    assert_eq!((m, r), (vec![Rule::LiveAnswer], vec![Rule::LiveAnswer]));
}

#[test]
fn r5_zero_execution_policy() {
    let m = manifest_rules("service: s\nprobes:\n  - { name: db, kind: database, cache: 0s }\n");
    let r = HealthRegistry::new()
        .add(probe("db").cache(Duration::ZERO))
        .unwrap_err()
        .rules();
    assert_eq!((m, r), (vec![Rule::Duration], vec![Rule::Duration]));
}

#[test]
fn r18_drain_fits_grace() {
    use zb_health::lifecycle::Drain;
    let s = Duration::from_secs;
    for (lifecycle, drain) in [
        // The delay leaves less than 1 s of the grace period.
        ("drain_delay: 30s", Drain::new(s(30))),
        // Delay plus the stated graceful stop exceed it.
        (
            "drain_delay: 5s, shutdown_timeout: 26s",
            Drain::new(s(5)).shutdown_timeout(s(26)),
        ),
    ] {
        let m = manifest_rules(&format!(
            "service: s\norchestrator: {{ termination_grace_period: 30s }}\nlifecycle: {{ {lifecycle} }}\n"
        ));
        let r = drain.within_grace_period(s(30)).unwrap_err().rules();
        assert_eq!(
            (m, r),
            (vec![Rule::DrainFitsGrace], vec![Rule::DrainFitsGrace]),
            "{lifecycle}"
        );
    }
    // And both accept the drain that fits.
    let fits = "service: s\norchestrator: { termination_grace_period: 30s }\nlifecycle: { drain_delay: 5s, shutdown_timeout: 25s }\n";
    assert!(parse_manifest(fits).is_ok());
    assert!(
        Drain::new(s(5))
            .shutdown_timeout(s(25))
            .within_grace_period(s(30))
            .is_ok()
    );
}

// A drain delay of 10 s: readiness every 5 s, two failures, 10 s to notice.
zb_health::prelude::manifest!(
    Detect,
    yaml = r#"
service: detect
lifecycle: { drain_delay: 10s }
"#
);

#[test]
fn r19_max_age_fits_detection() {
    let s = Duration::from_secs;
    // No `lifecycle`: the default drain delay's detection time, 4 s.
    let detection = detection::detection_time(zb_health_spec::drain::DEFAULT_DRAIN_DELAY);
    for (keys, registration) in [
        ("cache: 5m", probe("db").cache(s(300))),
        ("cache: 4s", probe("db").cache(s(4))),
        // The default maximum age: 2 × 2 s + the 1 s deadline.
        ("refresh: 2s", probe("db").refresh(s(2))),
        (
            "refresh: 1s, max_staleness: 4s",
            probe("db").refresh(s(1)).max_staleness(s(4)),
        ),
    ] {
        let m = manifest_rules(&format!(
            "service: s\nprobes:\n  - {{ name: db, kind: database, {keys} }}\n"
        ));
        let r = HealthRegistry::builder()
            .detection_time(detection)
            .build()
            .add(registration)
            .unwrap_err()
            .rules();
        assert_eq!(
            (m, r),
            (
                vec![Rule::MaxAgeFitsDetection],
                vec![Rule::MaxAgeFitsDetection]
            ),
            "{keys}"
        );
    }
    // The generated install holds the registry to the manifest's own
    // detection time, the one `zb-health k8s` emits for its drain delay.
    assert_eq!(Detect::DETECTION_TIME, detection::detection_time(s(10)));
    let registry = HealthRegistry::new();
    Detect::install_into(&registry, DetectDeps {}).unwrap();
    assert_eq!(registry.detection_time(), Some(s(10)));
    let r = registry.add(probe("db").cache(s(10))).unwrap_err().rules();
    assert_eq!(r, [Rule::MaxAgeFitsDetection]);
    registry.add(probe("db").cache(s(9))).unwrap();
}

#[test]
fn r20_threshold_fits_detection() {
    let ms = Duration::from_millis;
    let detection = detection::detection_time(zb_health_spec::drain::DEFAULT_DRAIN_DELAY);
    let registry = || HealthRegistry::builder().detection_time(detection).build();
    for (keys, registration, rules) in [
        // Three runs 2 s apart hold a failure back 4 s: it fits; four not.
        (
            "failure_threshold: 3",
            probe("db").failure_threshold(3),
            vec![],
        ),
        (
            "failure_threshold: 4",
            probe("db").failure_threshold(4),
            vec![Rule::ThresholdFitsDetection],
        ),
        (
            "failing_for: 4001ms",
            probe("db").failing_for(ms(4001)),
            vec![Rule::ThresholdFitsDetection],
        ),
        (
            "refresh: 500ms, failure_threshold: 10",
            probe("db").refresh(ms(500)).failure_threshold(10),
            vec![Rule::ThresholdFitsDetection],
        ),
        (
            "refresh: 500ms, failure_threshold: 9, success_threshold: 3",
            probe("db")
                .refresh(ms(500))
                .failure_threshold(9)
                .success_threshold(3),
            vec![],
        ),
        (
            "success_threshold: 0",
            probe("db").success_threshold(0),
            vec![Rule::ThresholdFitsDetection],
        ),
    ] {
        let yaml = format!("service: s\nprobes:\n  - {{ name: db, kind: database, {keys} }}\n");
        let m = match parse_manifest(&yaml) {
            Ok(_) => vec![],
            Err(_) => manifest_rules(&yaml),
        };
        let r = match registry().add(registration) {
            Ok(_) => vec![],
            Err(e) => e.rules(),
        };
        assert_eq!((&m, &r), (&rules, &rules), "{keys}");
    }
}

// The tour's orchestrator and lifecycle, and a database probe with no
// deadline of its own: it compiles, because the default fits (R5).
zb_health::prelude::manifest!(
    Tour,
    yaml = r#"
service: orders
orchestrator: { timeout: 1s, termination_grace_period: 30s }
lifecycle: { drain_delay: 5s }
probes:
  - { name: db, kind: database }
"#
);

#[test]
fn r5_a_default_deadline_fits_a_stated_orchestrator_timeout() {
    let ms = Duration::from_millis;
    assert_eq!(Tour::PROBES[0].timeout(), ms(800));
    assert_eq!(detection::default_probe_timeout(Some(ms(1000))), ms(800));
    let tour_with_db = "service: orders\norchestrator: { timeout: 1s }\nprobes:\n  - { name: db, kind: database }\n";
    assert!(parse_manifest(tour_with_db).is_ok());
    let registry = HealthRegistry::builder()
        .orchestrator_timeout(ms(1000))
        .build();
    registry.add(probe("db")).unwrap();
    // Only a deadline the user wrote can break R5.
    r5_timeout_not_below_the_orchestrator();
}

/// A custom probe whose attribute states no deadline, and never answers.
#[zb_health::prelude::zb_health(name = "hung")]
pub struct HungProbe;

impl zb_health::prelude::Probe for HungProbe {
    async fn check(&self) -> zb_health::prelude::ProbeOutcome {
        std::future::pending().await
    }
}

// The attribute cannot see the manifest: its deadline is left to the
// registry, which derives it below the orchestrator's, so this compiles.
zb_health::prelude::manifest!(
    Attributed,
    yaml = r#"
service: attributed
orchestrator: { timeout: 1s }
probes:
  - { kind: custom, type: crate::HungProbe }
"#
);

#[tokio::test]
async fn r5_an_attribute_without_a_deadline_fits_a_stated_orchestrator_timeout() {
    use zb_health::prelude::ZbHealthProbe;
    const { assert!(HungProbe::META.settings.timeout.is_none()) };
    let registry = HealthRegistry::new();
    Attributed::install_into(
        &registry,
        AttributedDeps {
            hung_probe: HungProbe,
        },
    )
    .unwrap();
    let report = registry.check(Tag::Ready).await;
    assert_eq!(
        report.entries[0].description.as_deref(),
        Some("timed out after 800 ms")
    );
}

#[test]
fn watchdog_names_and_deadlines() {
    let registry = HealthRegistry::new();
    let _first = registry
        .lifecycle()
        .watchdog("consumer", Duration::from_secs(1))
        .unwrap();
    for (entries, name, deadline, rule) in [
        (
            "{ name: consumer, deadline: 1s }, { name: consumer, deadline: 1s }",
            "consumer",
            Duration::from_secs(1),
            Rule::DuplicateName,
        ),
        (
            "{ name: \"con sumer\", deadline: 1s }",
            "con sumer",
            Duration::from_secs(1),
            Rule::ProbeName,
        ),
        (
            "{ name: poller, deadline: 0ms }",
            "poller",
            Duration::ZERO,
            Rule::Duration,
        ),
    ] {
        let m = manifest_rules(&format!(
            "service: s\nlifecycle:\n  watchdogs: [{entries}]\n"
        ));
        let r = registry
            .lifecycle()
            .watchdog(name, deadline)
            .unwrap_err()
            .rules();
        assert_eq!((m, r), (vec![rule], vec![rule]), "{entries}");
    }
}

#[test]
fn r23_r24_r25_health_groups() {
    use zb_health::prelude::HealthGroup;
    let group = || HealthGroup::new("canary", "/health/canary");
    for (yaml, built, rules) in [
        (
            "{ path: /health/canary, probes: [db] }",
            group().probes(["db"]),
            vec![],
        ),
        (
            "{ path: /health/canary, tiers: [ready, active] }",
            group().tiers([Tag::Ready, Tag::Active]),
            vec![],
        ),
        (
            "{ path: /health/canary, probes: [dbb] }",
            group().probes(["dbb"]),
            vec![Rule::GroupUnknownProbe],
        ),
        (
            "{ path: /health/canary }",
            group(),
            vec![Rule::GroupUnknownProbe],
        ),
        (
            "{ path: /health/ready, probes: [db] }",
            HealthGroup::new("canary", "/health/ready").probes(["db"]),
            vec![Rule::GroupPath],
        ),
        (
            "{ path: /health/active/db, probes: [db] }",
            HealthGroup::new("canary", "/health/active/db").probes(["db"]),
            vec![Rule::GroupPath],
        ),
        (
            "{ path: /health/canary, tiers: [live] }",
            group().tiers([Tag::Live]),
            vec![Rule::GroupOnLive],
        ),
    ] {
        let yaml = format!(
            "service: s\nprobes:\n  - {{ name: db, kind: database }}\ngroups:\n  canary: {yaml}\n"
        );
        let m = match parse_manifest(&yaml) {
            Ok(_) => vec![],
            Err(_) => manifest_rules(&yaml),
        };
        let registry = HealthRegistry::new();
        registry.add(probe("db")).unwrap();
        let r = match ZbHealth::new(registry).group(built).build() {
            Ok(_) => vec![],
            Err(e) => e.rules(),
        };
        assert_eq!((&m, &r), (&rules, &rules), "{yaml}");
    }
}

#[test]
fn r21_r22_dependencies() {
    for (probes, registrations, rules) in [
        (
            "{ name: db, kind: database }\n  - { name: orders, kind: database, depends_on: [db] }",
            vec![probe("db"), probe("orders").depends_on(["db"])],
            vec![],
        ),
        (
            "{ name: db, kind: database }\n  - { name: orders, kind: database, depends_on: [bd] }",
            vec![probe("db"), probe("orders").depends_on(["bd"])],
            vec![Rule::UnknownDependency],
        ),
        (
            "{ name: db, kind: database, depends_on: [db] }",
            vec![probe("db").depends_on(["db"])],
            vec![Rule::DependencyCycle],
        ),
        (
            "{ name: a, kind: database, depends_on: [b] }\n  - { name: b, kind: database, depends_on: [a] }",
            vec![probe("a").depends_on(["b"]), probe("b").depends_on(["a"])],
            vec![Rule::DependencyCycle],
        ),
    ] {
        let yaml = format!("service: s\nprobes:\n  - {probes}\n");
        let m = match parse_manifest(&yaml) {
            Ok(_) => vec![],
            Err(_) => manifest_rules(&yaml),
        };
        let r = match HealthRegistry::new().add_all(registrations) {
            Ok(_) => vec![],
            Err(e) => e.rules(),
        };
        assert_eq!((&m, &r), (&rules, &rules), "{probes}");
    }
}

/// R7 for `shared` (BE-HLTH-003): the manifest reader and the registry
/// refuse a shared probe on `active` or off `ready`, and accept one on
/// `ready` alone.
#[test]
fn r7_shared_only_on_ready() {
    for (tags, tagset, rules) in [
        ("[ready]", TagSet::READY, vec![]),
        (
            "[ready, active]",
            TagSet::of(&[Tag::Ready, Tag::Active]),
            vec![Rule::Contradiction],
        ),
        (
            "[active]",
            TagSet::of(&[Tag::Active]),
            vec![Rule::Contradiction],
        ),
    ] {
        let yaml = format!(
            "service: s\nprobes:\n  - {{ name: db, kind: database, tags: {tags}, shared: true }}\n"
        );
        let m = match parse_manifest(&yaml) {
            Ok(_) => vec![],
            Err(_) => manifest_rules(&yaml),
        };
        let r = match HealthRegistry::new().add(probe("db").tags(tagset).shared()) {
            Ok(_) => vec![],
            Err(e) => e.rules(),
        };
        assert_eq!((&m, &r), (&rules, &rules), "{tags}");
    }
}

#[test]
fn r27_restart_after() {
    let minutes = Duration::from_secs(120);
    for (keys, tags, shared, after, rules) in [
        (
            "shared: true, restart_after: 2m",
            TagSet::READY,
            true,
            minutes,
            vec![],
        ),
        (
            "restart_after: 2m",
            TagSet::READY,
            false,
            minutes,
            vec![Rule::RestartAfter],
        ),
        (
            "tags: [active], restart_after: 2m",
            TagSet::of(&[Tag::Active]),
            false,
            minutes,
            vec![Rule::RestartAfter],
        ),
        // Not longer than the default detection time, 4 s.
        (
            "shared: true, restart_after: 4s",
            TagSet::READY,
            true,
            Duration::from_secs(4),
            vec![Rule::RestartAfter],
        ),
    ] {
        let yaml = format!("service: s\nprobes:\n  - {{ name: db, kind: database, {keys} }}\n");
        let m = match parse_manifest(&yaml) {
            Ok(_) => vec![],
            Err(_) => manifest_rules(&yaml),
        };
        let mut registration = probe("db").tags(tags).restart_after(after);
        if shared {
            registration = registration.shared();
        }
        let mut r = match HealthRegistry::new().add(registration) {
            Ok(_) => vec![],
            Err(e) => e.rules(),
        };
        r.dedup();
        assert_eq!((&m, &r), (&rules, &rules), "{keys}");
    }
}

#[test]
fn r26_history_needs_a_port() {
    use zb_health::spec::{Violations, rules::check_history_port};
    for (yaml, management, application, rules) in [
        (
            "history: { ui: true }\n",
            false,
            false,
            vec![Rule::HistoryNeedsAPort],
        ),
        ("history:\n", false, false, vec![Rule::HistoryNeedsAPort]),
        ("history: { application_port: true }\n", false, true, vec![]),
        (
            "management: { port: 8081 }\nhistory: { ui: true }\n",
            true,
            false,
            vec![],
        ),
    ] {
        let yaml = format!("service: s\n{yaml}probes:\n  - {{ name: db, kind: database }}\n");
        let m = match parse_manifest(&yaml) {
            Ok(_) => vec![],
            Err(_) => manifest_rules(&yaml),
        };
        let mut sink = Violations::new();
        check_history_port(management, application, (), &mut sink);
        let f = match sink.into_result() {
            Ok(()) => vec![],
            Err(e) => e.into_iter().map(|v| v.rule).collect(),
        };
        assert_eq!((&m, &f), (&rules, &rules), "{yaml}");
    }
}

#[test]
fn r6_history_paths() {
    for (history, ui, rules) in [
        ("/health/history", "/health/ui", vec![]),
        ("/health/ready", "/health/ui", vec![Rule::EndpointPath]),
        (
            "/health/history",
            "/health/history",
            vec![Rule::EndpointPath],
        ),
        ("/health/ready/x", "/health/ui", vec![Rule::EndpointPath]),
        ("health/history", "/health/ui", vec![Rule::EndpointPath]),
    ] {
        let yaml = format!(
            "service: s\nmanagement: {{ port: 8081 }}\nhistory: {{ ui: true, path: \"{history}\", ui_path: \"{ui}\" }}\nprobes:\n  - {{ name: db, kind: database }}\n"
        );
        let m = match parse_manifest(&yaml) {
            Ok(_) => vec![],
            Err(_) => manifest_rules(&yaml),
        };
        let r = match ZbHealth::new(HealthRegistry::new())
            .history(true)
            .history_path(history)
            .history_ui(true)
            .history_ui_path(ui)
            .build()
        {
            Ok(_) => vec![],
            Err(e) => e.rules(),
        };
        assert_eq!((&m, &r), (&rules, &rules), "{history} {ui}");
    }
}
