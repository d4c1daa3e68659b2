use std::time::Duration;

use super::*;
use crate::Rule;

/// The example of `spec/manifest.md`, every kind and option once.
const FULL: &str = "\
# yaml-language-server: $schema=../spec/health-manifest.schema.json
service: scadabridge
endpoints: { preset: zb, live: /livez }
orchestrator: { timeout: 3s }
defaults: { timeout: 800ms, failure_status: unhealthy }
probes:
  - { name: database, kind: database, tags: [ready], timeout: 2s }
  - { name: akka-cluster, kind: cluster-membership, policy: ot-opc-ua-compat }
  - { name: transport, kind: cluster-transport, expected_size: 3, require_majority: true }
  - name: active-node
    kind: active-node
    scope: role
    roles: [admin, driver]
    no_active_role_status: degraded
  - { name: upstream, kind: grpc, failure_status: degraded }
  - { name: inventory, kind: http, url: \"http://inventory:8080/health\", status: 200-399, body_contains: UP }
  - { name: data-disk, kind: disk, path: /var/lib/scadabridge, degraded_below: 10%, unhealthy_below: 500MiB }
  - { name: sessions, kind: redis, url: \"redis://:s3cret@sessions:6379/1\" }
  - { name: tls-cert, kind: certificate, path: [/etc/tls/tls.crt, /etc/tls/ca.crt], warn_within: 21d }
  - { kind: custom, type: crate::probes::CacheProbe }
";

fn at(line: usize, column: usize) -> Location {
    Location { line, column }
}

fn violations(yaml: &str) -> Vec<Violation<Location>> {
    match parse_manifest(yaml) {
        Ok(m) => panic!("expected violations, parsed {m:#?}"),
        Err(v) => v,
    }
}

/// The single violation of `yaml`, checked for rule and position.
fn only(yaml: &str, rule: Rule, location: Location) -> Violation<Location> {
    let v = violations(yaml);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!((v[0].rule, v[0].location), (rule, location), "{:#?}", v[0]);
    v.into_iter().next().unwrap_or_else(|| unreachable!())
}

fn with_probe(probe: &str) -> String {
    format!("service: s\nprobes:\n  - {probe}\n")
}

#[test]
fn full_manifest_parses() {
    let m = parse_manifest(FULL).unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(m.service, Located::new("scadabridge".to_owned(), at(2, 10)));
    assert_eq!(m.paths.ready, "/health/ready");
    assert_eq!(m.paths.live, "/livez");
    assert_eq!(
        m.orchestrator_timeout.map(|t| t.value),
        Some(Duration::from_secs(3))
    );
    assert_eq!(
        m.default_failure_status.map(|s| s.value),
        Some(FailureStatus::Unhealthy)
    );
    let kinds: Vec<&str> = m.probes.iter().map(|p| p.kind.as_str()).collect();
    assert_eq!(kinds, Kind::NAMES);

    let db = &m.probes[0];
    assert_eq!(db.location, at(7, 5));
    assert_eq!(db.effective_timeout(&m), Duration::from_secs(2));
    assert_eq!(db.effective_tags(), Some(TagSet::READY));
    assert_eq!(
        m.probes[1].kind,
        ProbeKind::ClusterMembership {
            policy: MembershipPolicy::OtOpcUaCompat
        }
    );
    assert_eq!(
        m.probes[1].effective_timeout(&m),
        Duration::from_millis(800)
    );
    assert_eq!(
        m.probes[2].kind,
        ProbeKind::ClusterTransport {
            guard: Some(MajorityGuard {
                expected_size: 3,
                require_majority: true
            })
        }
    );
    match &m.probes[3].kind {
        ProbeKind::ActiveNode {
            scope: ActiveScope::Roles(roles),
            no_active_role_status,
            guard: None,
        } => {
            let names: Vec<&str> = roles.iter().map(|r| r.value.as_str()).collect();
            assert_eq!(names, ["admin", "driver"]);
            assert_eq!(roles[1].location, at(13, 20));
            assert_eq!(*no_active_role_status, HealthStatus::Degraded);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(m.probes[3].effective_tags(), Some(TagSet::ACTIVE));
    assert_eq!(
        m.probes[4].failure_status.map(|s| s.value),
        Some(FailureStatus::Degraded)
    );
    assert_eq!(
        m.probes[5].kind,
        ProbeKind::Http {
            url: Located::new("http://inventory:8080/health".to_owned(), at(16, 41)),
            status: crate::upstream::StatusRange::new(200, 399).unwrap(),
            body_contains: Some(Located::new("UP".to_owned(), at(16, 105))),
        }
    );
    assert_eq!(m.probes[5].effective_tags(), Some(TagSet::READY));
    assert!(
        matches!(&m.probes[6].kind, ProbeKind::Disk { path, .. } if path.value == "/var/lib/scadabridge")
    );
    assert_eq!(m.probes[6].effective_tags(), Some(TagSet::READY));
    assert_eq!(
        m.probes[7].kind,
        ProbeKind::Redis {
            url: Located::new("redis://:s3cret@sessions:6379/1".to_owned(), at(18, 41)),
        }
    );
    assert_eq!(m.probes[7].effective_tags(), Some(TagSet::READY));
    assert!(matches!(
        &m.probes[8].kind,
        ProbeKind::Certificate { source: CertificateSource::Files(paths), warn_within }
            if paths.len() == 2 && *warn_within == Duration::from_secs(21 * 86_400)
    ));
    let custom = &m.probes[9];
    assert_eq!(custom.name, None);
    assert_eq!(custom.effective_tags(), None);
    assert!(
        matches!(&custom.kind, ProbeKind::Custom { type_path, .. } if type_path.value == "crate::probes::CacheProbe")
    );
}

#[test]
fn empty_probe_list_is_valid() {
    for yaml in [
        "service: mxgateway\n",
        "service: mxgateway\nprobes: []\n",
        "service: mxgateway\nprobes:\n",
    ] {
        let m = parse_manifest(yaml).unwrap_or_else(|v| panic!("{yaml}: {v:#?}"));
        assert!(m.probes.is_empty());
        assert_eq!(m.paths, EndpointPaths::zb());
    }
}

#[test]
fn defaults_apply_when_the_probe_sets_nothing() {
    let m = parse_manifest("service: s\nprobes: [{ name: db, kind: database }]\n")
        .unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(
        m.probes[0].effective_timeout(&m),
        Duration::from_millis(800),
        "below Kubernetes' default 1 s timeout"
    );
    assert_eq!(m.probes[0].tags, None);
    assert_eq!(m.probes[0].effective_tags(), Some(TagSet::READY));
}

#[test]
fn be_hlth_009_preset_and_overrides() {
    let m = parse_manifest("service: s\nendpoints: { preset: be-hlth-009, active: /ha }\n")
        .unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(
        (
            m.paths.ready.as_str(),
            m.paths.active.as_str(),
            m.paths.live.as_str()
        ),
        ("/healthz/ready", "/ha", "/healthz/live")
    );
}

#[test]
fn r1_live_tag_points_at_the_tag() {
    let v = only(
        &with_probe("{ name: db, kind: database, tags: [ready, live] }"),
        Rule::LiveTag,
        at(3, 47),
    );
    assert!(v.message.contains("`db`"), "{}", v.message);
}

#[test]
fn r13_empty_tag_list() {
    only(
        &with_probe("{ name: db, kind: database, tags: [] }"),
        Rule::NoTags,
        at(3, 39),
    );
}

#[test]
fn r2_role_scope_without_roles() {
    let v = only(
        &with_probe("{ name: an, kind: active-node, scope: role }"),
        Rule::RoleScopeNeedsRoles,
        at(3, 43),
    );
    assert!(
        v.message.contains("role-scoped but lists no roles"),
        "{}",
        v.message
    );
}

#[test]
fn r2_role_scope_with_empty_roles() {
    only(
        &with_probe("{ name: an, kind: active-node, scope: role, roles: [] }"),
        Rule::RoleScopeNeedsRoles,
        at(3, 56),
    );
}

#[test]
fn r3_duplicate_names_at_the_second() {
    let yaml =
        "service: s\nprobes:\n  - { name: db, kind: database }\n  - { name: db, kind: grpc }\n";
    only(yaml, Rule::DuplicateName, at(4, 13));
}

#[test]
fn r3_one_custom_type_twice_without_names_at_the_second_type() {
    let yaml = "service: s\nprobes:\n  - { kind: custom, type: crate::P }\n  - { kind: custom, type: crate::P }\n";
    let v = only(yaml, Rule::DuplicateName, at(4, 27));
    assert!(
        v.message.contains("`crate::P`") && v.message.contains("3:27"),
        "{}",
        v.message
    );
    assert!(
        v.help.contains("`name:`") && v.help.contains("remove the duplicate"),
        "{}",
        v.help
    );
    // Named apart, they are two probes of one type; other types are others.
    for distinct in [
        "  - { kind: custom, type: crate::P }\n  - { name: p2, kind: custom, type: crate::P }\n",
        "  - { kind: custom, type: crate::P }\n  - { kind: custom, type: crate::Q }\n",
    ] {
        let yaml = format!("service: s\nprobes:\n{distinct}");
        assert!(parse_manifest(&yaml).is_ok(), "{yaml}");
    }
}

#[test]
fn r4_unknown_top_level_key_suggests() {
    let v = only("service: s\nprobs: []\n", Rule::Unknown, at(2, 1));
    assert!(v.message.contains("`probs`"));
    assert!(v.help.contains("did you mean `probes`?"), "{}", v.help);
}

#[test]
fn r4_unknown_kind_tag_policy_scope_preset_status() {
    let yaml = "\
service: s
endpoints: { preset: zbb }
defaults: { failure_status: sick }
probes:
  - { name: a, kind: databse }
  - { name: b, kind: database, tags: [raedy] }
  - { name: c, kind: cluster-membership, policy: defualt }
  - { name: d, kind: active-node, scope: rol }
  - { name: e, kind: active-node, scope: role, roles: [x], no_active_role_status: fine }
";
    let v = violations(yaml);
    let found: Vec<(Rule, Location)> = v.iter().map(|v| (v.rule, v.location)).collect();
    assert_eq!(
        found,
        [
            (Rule::Unknown, at(2, 22)),
            (Rule::Unknown, at(3, 29)),
            (Rule::Unknown, at(5, 22)),
            (Rule::Unknown, at(6, 39)),
            (Rule::Unknown, at(7, 50)),
            (Rule::Unknown, at(8, 42)),
            (Rule::Unknown, at(9, 83)),
        ],
        "{v:#?}"
    );
    assert!(
        v[2].help.contains("did you mean `database`?"),
        "{}",
        v[2].help
    );
    assert!(v[3].help.contains("did you mean `ready`?"), "{}", v[3].help);
    assert!(
        v[4].help.contains("did you mean `default`?"),
        "{}",
        v[4].help
    );
    assert!(v[5].help.contains("did you mean `role`?"), "{}", v[5].help);
}

#[test]
fn r4_option_of_another_kind() {
    let v = only(
        &with_probe("{ name: db, kind: database, policy: default }"),
        Rule::Unknown,
        at(3, 33),
    );
    assert!(v.help.contains("`cluster-membership`"), "{}", v.help);
    only(
        &with_probe("{ name: db, kind: grpc, type: crate::X }"),
        Rule::Unknown,
        at(3, 29),
    );
}

#[test]
fn r11_custom_needs_a_type_r4_a_valid_one() {
    only(&with_probe("{ kind: custom }"), Rule::MissingKey, at(3, 5));
    let v = only(
        &with_probe("{ kind: custom, type: crate::my-probe }"),
        Rule::Unknown,
        at(3, 27),
    );
    assert!(v.message.contains("`crate::my-probe`"));
}

#[test]
fn a_custom_fn_entry_is_read_with_its_form_and_takes_one_of_type_or_fn() {
    let m = parse_manifest(&with_probe("{ kind: custom, fn: crate::probes::ping }"))
        .unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(
        m.probes[0].kind,
        ProbeKind::Custom {
            type_path: Located::new("crate::probes::ping".to_owned(), at(3, 25)),
            function: true,
        }
    );
    let v = only(
        &with_probe("{ kind: custom, type: crate::A, fn: crate::a }"),
        Rule::Unknown,
        at(3, 37),
    );
    assert!(v.message.contains("both `type` and `fn`"), "{v:#?}");
    only(
        &with_probe("{ kind: custom, fn: crate::a-b }"),
        Rule::Unknown,
        at(3, 25),
    );
    only(
        &with_probe("{ name: db, kind: database, fn: crate::a }"),
        Rule::Unknown,
        at(3, 33),
    );
}

#[test]
fn r11_missing_name_kind_service_and_size() {
    only(
        &with_probe("{ kind: database }"),
        Rule::MissingKey,
        at(3, 5),
    );
    only(&with_probe("{ name: db }"), Rule::MissingKey, at(3, 5));
    only("probes: []\n", Rule::MissingKey, at(1, 1));
    only(
        &with_probe("{ name: t, kind: cluster-transport, require_majority: true }"),
        Rule::MissingKey,
        at(3, 41),
    );
}

#[test]
fn r5_malformed_duration() {
    let v = only(
        &with_probe("{ name: db, kind: database, timeout: 1000 }"),
        Rule::Duration,
        at(3, 42),
    );
    assert!(v.message.contains("`1000`"), "{}", v.message);
}

#[test]
fn r5_timeout_not_below_the_orchestrator() {
    let yaml = "service: s\norchestrator: { timeout: 1s }\nprobes:\n  - { name: db, kind: database, timeout: 1s }\n";
    only(yaml, Rule::Duration, at(4, 42));
    let yaml = "service: s\norchestrator: { timeout: 1s }\ndefaults: { timeout: 2s }\nprobes:\n  - { name: db, kind: database }\n";
    only(yaml, Rule::Duration, at(3, 22));
}

#[test]
fn a_stated_orchestrator_timeout_lowers_the_default_deadline_below_it() {
    let yaml =
        "service: s\norchestrator: { timeout: 1s }\nprobes:\n  - { name: db, kind: database }\n";
    let m = parse_manifest(yaml).unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(
        m.probes[0].effective_timeout(&m),
        Duration::from_millis(800)
    );
    let m = parse_manifest(&with_probe("{ name: db, kind: database }"))
        .unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(
        m.probes[0].effective_timeout(&m),
        Duration::from_millis(800),
        "none stated: below Kubernetes' default 1 s"
    );
}

#[test]
fn r19_a_cache_is_younger_than_the_detection_time() {
    // The default drain delay (5 s) gives readiness 2 s × 2: 4 s.
    let v = only(
        &with_probe("{ name: db, kind: database, cache: 5m }"),
        Rule::MaxAgeFitsDetection,
        at(3, 40),
    );
    assert!(v.message.contains("4000 ms"), "{}", v.message);
    only(
        &with_probe("{ name: db, kind: database, cache: 4s }"),
        Rule::MaxAgeFitsDetection,
        at(3, 40),
    );
    assert!(parse_manifest(&with_probe("{ name: db, kind: database, cache: 3s }")).is_ok());
    // A longer drain delay gives the orchestrator (and the cache) longer.
    let yaml = "service: s\nlifecycle: { drain_delay: 20s }\nprobes:\n  - { name: db, kind: database, cache: 15s }\n";
    assert!(parse_manifest(yaml).is_ok());
}

/// `service` and one probe per line of `probes`.
fn with_probes(probes: &[&str]) -> String {
    let items: Vec<String> = probes.iter().map(|p| format!("  - {p}\n")).collect();
    format!("service: s\nprobes:\n{}", items.concat())
}

#[test]
fn r21_a_dependency_names_another_probe_of_the_manifest() {
    let m = parse_manifest(&with_probes(&[
        "{ name: database, kind: database }",
        "{ name: orders, kind: custom, type: crate::Orders, depends_on: [database] }",
    ]))
    .unwrap_or_else(|v| panic!("{v:#?}"));
    let names: Vec<&str> = m.probes[1]
        .depends_on
        .iter()
        .map(|n| n.value.as_str())
        .collect();
    assert_eq!(names, ["database"]);
    assert_eq!(m.probes[1].depends_on[0].location, at(4, 69));
    assert!(m.probes[0].depends_on.is_empty());
    // A typo, at the name, with the near miss.
    let v = only(
        &with_probes(&[
            "{ name: database, kind: database }",
            "{ name: orders, kind: custom, type: crate::Orders, depends_on: [databse] }",
        ]),
        Rule::UnknownDependency,
        at(4, 69),
    );
    assert!(v.message.contains("`databse`"), "{}", v.message);
    assert!(v.help.contains("did you mean `database`?"), "{}", v.help);
    // A custom entry named by its attribute cannot be depended on here.
    let v = only(
        &with_probes(&[
            "{ kind: custom, type: crate::Cache }",
            "{ name: db, kind: database, depends_on: [cache] }",
        ]),
        Rule::UnknownDependency,
        at(4, 46),
    );
    assert!(v.help.contains("`name:`"), "{}", v.help);
    only(
        &with_probe("{ name: db, kind: database, depends_on: database }"),
        Rule::ValueType,
        at(3, 45),
    );
}

#[test]
fn r22_dependencies_form_no_cycle() {
    let v = only(
        &with_probe("{ name: db, kind: database, depends_on: [db] }"),
        Rule::DependencyCycle,
        at(3, 46),
    );
    assert!(v.message.contains("depends on itself"), "{}", v.message);
    // Reported once, at the name that closes it, with its path.
    let v = only(
        &with_probes(&[
            "{ name: a, kind: database, depends_on: [b] }",
            "{ name: b, kind: database, depends_on: [c] }",
            "{ name: c, kind: database, depends_on: [a] }",
        ]),
        Rule::DependencyCycle,
        at(5, 45),
    );
    assert!(v.message.contains("a -> b -> c -> a"), "{}", v.message);
    // A diamond is no cycle.
    parse_manifest(&with_probes(&[
        "{ name: a, kind: database }",
        "{ name: b, kind: database, depends_on: [a] }",
        "{ name: c, kind: database, depends_on: [a] }",
        "{ name: d, kind: database, depends_on: [b, c] }",
    ]))
    .unwrap_or_else(|v| panic!("{v:#?}"));
}

#[test]
fn r20_a_threshold_holds_a_failure_back_no_longer_than_the_detection_time() {
    // Runs 2 s apart (the readiness period): 4 failures hold back 6 s.
    let v = only(
        &with_probe("{ name: db, kind: database, failure_threshold: 4 }"),
        Rule::ThresholdFitsDetection,
        at(3, 52),
    );
    assert!(v.message.contains("6000 ms"), "{}", v.message);
    // `failing_for` is reported at its own key when it stands alone.
    only(
        &with_probe("{ name: db, kind: database, failing_for: 5s }"),
        Rule::ThresholdFitsDetection,
        at(3, 46),
    );
    only(
        &with_probe("{ name: db, kind: database, success_threshold: 0 }"),
        Rule::ThresholdFitsDetection,
        at(3, 52),
    );
    only(
        &with_probe("{ name: db, kind: database, failure_threshold: two }"),
        Rule::ValueType,
        at(3, 52),
    );
    let m = parse_manifest(&with_probe(
        "{ name: db, kind: database, failure_threshold: 3, failing_for: 4s, success_threshold: 2 }",
    ))
    .unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(m.probes[0].failure_threshold.map(|n| n.value), Some(3));
    assert_eq!(m.probes[0].success_threshold.map(|n| n.value), Some(2));
    // A background probe counts in its own `refresh`.
    assert!(
        parse_manifest(&with_probe(
            "{ name: db, kind: database, refresh: 500ms, failure_threshold: 9 }"
        ))
        .is_ok()
    );
}

#[test]
fn r19_a_background_result_is_younger_than_the_detection_time() {
    // Stated max_staleness: reported there.
    only(
        &with_probe("{ name: db, kind: database, refresh: 1s, max_staleness: 12s }"),
        Rule::MaxAgeFitsDetection,
        at(3, 61),
    );
    // Default: 2 × 2 s + the 800 ms default deadline, reported at refresh.
    let v = only(
        &with_probe("{ name: db, kind: database, refresh: 2s }"),
        Rule::MaxAgeFitsDetection,
        at(3, 42),
    );
    assert!(v.message.contains("4800 ms old"), "{}", v.message);
    assert!(parse_manifest(&with_probe("{ name: db, kind: database, refresh: 1s }")).is_ok());
}

#[test]
fn r5_zero_settings_r12_zero_expected_size() {
    let yaml = "service: s\norchestrator: { timeout: 0s }\ndefaults: { timeout: 0ms }\nprobes:\n  - { name: t, kind: cluster-transport, expected_size: 0 }\n";
    let found: Vec<(Rule, Location)> = violations(yaml)
        .iter()
        .map(|v| (v.rule, v.location))
        .collect();
    assert_eq!(
        found,
        [
            (Rule::Duration, at(2, 26)),
            (Rule::Duration, at(3, 22)),
            (Rule::ClusterSize, at(5, 56))
        ]
    );
}

#[test]
fn r6_colliding_paths() {
    let v = only(
        "service: s\nendpoints: { ready: /h, active: /h/ }\n",
        Rule::EndpointPath,
        at(2, 33),
    );
    assert!(v.message.contains("`/h/`"));
    only(
        "service: s\nendpoints: { live: healthz }\n",
        Rule::EndpointPath,
        at(2, 20),
    );
}

#[test]
fn the_startup_path_is_set_under_endpoints_and_checked_with_the_tiers() {
    let m = parse_manifest("service: s\nendpoints: { started: /boot }\n")
        .unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(m.paths.started, "/boot");
    let m = parse_manifest("service: s\nendpoints: { preset: be-hlth-009 }\n")
        .unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(m.paths.started, "/healthz/started");
    // It cannot take a tier's path: a startup probe would read that tier.
    let v = only(
        "service: s\nendpoints: { started: /health/ready }\n",
        Rule::EndpointPath,
        at(2, 23),
    );
    assert!(v.message.contains("`started`"), "{}", v.message);
}

#[test]
fn r7_roles_without_role_scope() {
    let v = only(
        &with_probe("{ name: an, kind: active-node, roles: [admin] }"),
        Rule::Contradiction,
        at(3, 36),
    );
    assert!(v.help.contains("scope: role"));
}

#[test]
fn r8_invalid_yaml_uses_the_parsers_position() {
    let v = only("service: s\nprobes: [\n", Rule::ManifestFile, at(2, 9));
    assert!(
        v.message.starts_with("the manifest is not valid YAML"),
        "{}",
        v.message
    );
}

#[test]
fn r15_wrong_types() {
    only(
        &with_probe("{ name: db, kind: database, tags: ready }"),
        Rule::ValueType,
        at(3, 39),
    );
    only("service: s\nprobes: 3\n", Rule::ValueType, at(2, 9));
    only("- service: s\n", Rule::ValueType, at(1, 1));
}

#[test]
fn r8_empty_document() {
    for yaml in ["", "# only a comment\n", "---\n"] {
        let v = violations(yaml);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].rule, Rule::ManifestFile);
        assert!(v[0].help.contains("service"));
    }
}

#[test]
fn r9_names_are_short_identifiers() {
    only(
        &with_probe("{ name: 'my db', kind: database }"),
        Rule::ProbeName,
        at(3, 13),
    );
    only("service: 'scada bridge'\n", Rule::ProbeName, at(1, 10));
}

#[test]
fn r10_an_active_probe_is_never_optional_located_where_the_status_is_written() {
    // On the probe itself.
    only(
        &with_probe("{ name: a, kind: active-node, failure_status: degraded }"),
        Rule::ActiveNotOptional,
        at(3, 51),
    );
    // Inherited from `defaults`: reported at the default, naming the probe.
    let yaml = "service: s\ndefaults: { failure_status: degraded }\nprobes:\n  - { name: db, kind: database }\n  - { name: a, kind: active-node }\n";
    let v = only(yaml, Rule::ActiveNotOptional, at(2, 29));
    assert!(v.message.contains("`a`"), "{}", v.message);
    // Any probe tagged `active`, not only the active-node kind.
    only(
        &with_probe("{ name: g, kind: grpc, tags: [ready, active], failure_status: degraded }"),
        Rule::ActiveNotOptional,
        at(3, 67),
    );
    only(
        &with_probe("{ kind: custom, type: C, tags: [active], failure_status: degraded }"),
        Rule::ActiveNotOptional,
        at(3, 62),
    );
    // The probe's own `unhealthy` overrides a `degraded` default.
    let yaml = "service: s\ndefaults: { failure_status: degraded }\nprobes:\n  - { name: a, kind: active-node, failure_status: unhealthy }\n";
    assert!(parse_manifest(yaml).is_ok());
    // A custom probe without manifest tags: its attribute decides (and
    // checks R10 itself); the defaults do not apply to it.
    let yaml = "service: s\ndefaults: { failure_status: degraded }\nprobes:\n  - { kind: custom, type: C }\n";
    assert!(parse_manifest(yaml).is_ok());
}

#[test]
fn r14_duplicate_keys_are_their_own_rule() {
    let v = violations("service: s\nservice: t\n");
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!(v[0].rule, Rule::DuplicateKey, "{v:#?}");
    assert_eq!(v[0].location.line, 2, "{v:#?}");
}

#[test]
fn an_expected_size_requires_a_majority_unless_opted_out() {
    let guard = |probe: &str| match parse_manifest(&with_probe(probe)) {
        Ok(m) => match &m.probes[0].kind {
            ProbeKind::ClusterTransport { guard } | ProbeKind::ActiveNode { guard, .. } => *guard,
            other => panic!("{other:?}"),
        },
        Err(v) => panic!("{v:#?}"),
    };
    let on = Some(MajorityGuard {
        expected_size: 3,
        require_majority: true,
    });
    let off = Some(MajorityGuard {
        expected_size: 3,
        require_majority: false,
    });
    assert_eq!(
        guard("{ name: a, kind: active-node, expected_size: 3 }"),
        on
    );
    assert_eq!(
        guard("{ name: t, kind: cluster-transport, expected_size: 3 }"),
        on
    );
    assert_eq!(
        guard("{ name: a, kind: active-node, expected_size: 3, require_majority: false }"),
        off
    );
    assert_eq!(guard("{ name: a, kind: active-node }"), None);
}

#[test]
fn reports_all_violations_at_once() {
    let yaml = "\
service: ''
servce: x
endpoints: { ready: /a, live: /a }
probes:
  - { name: db, kind: database, tags: [live], timeout: soon }
  - { name: db, kind: grpc, colour: red }
  - { kind: active-node, scope: role }
  - { kind: custom }
";
    let v = violations(yaml);
    let mut rules: Vec<&str> = v.iter().map(|v| v.rule.code()).collect();
    rules.sort_unstable();
    rules.dedup();
    assert_eq!(
        rules,
        ["R1", "R11", "R2", "R3", "R4", "R5", "R6", "R9"],
        "{v:#?}"
    );
    assert!(v.len() >= 9, "{v:#?}");
    let positions: Vec<(usize, usize)> = v
        .iter()
        .map(|v| (v.location.line, v.location.column))
        .collect();
    assert!(positions.is_sorted(), "reported in file order: {v:#?}");
}

#[test]
fn error_texts_as_printed() {
    let v = only(
        &with_probe("{ name: db, kind: database, tags: [live] }"),
        Rule::LiveTag,
        at(3, 40),
    );
    assert_eq!(
        format!("{}: {v}", v.location),
        "3:40: probe `db` is registered to the `live` tier\n  = rule R1 (ZB-1.3)\n  = help: the live tier (`/healthz`) carries no probes, so a failing dependency can never restart the pod; tag the probe `ready` (or `active`) instead"
    );
    let v = only(
        &with_probe("{ name: db, kind: databse }"),
        Rule::Unknown,
        at(3, 23),
    );
    assert_eq!(
        format!("{}: {v}", v.location),
        "3:23: unknown value `databse` for `kind` of probe `db`\n  = rule R4\n  = help: use `database`, `cluster-membership`, `cluster-transport`, `active-node`, `grpc`, `http`, `disk`, `redis`, `certificate` or `custom`; did you mean `database`?"
    );
    let v = only(
        &with_probe("{ name: an, kind: active-node, scope: role }"),
        Rule::RoleScopeNeedsRoles,
        at(3, 43),
    );
    assert_eq!(
        format!("{}: {v}", v.location),
        "3:43: active-node probe `an` is role-scoped but lists no roles\n  = rule R2 (ZB-2.3d)\n  = help: list the roles in order of preference, e.g. `[admin, driver]`; a node answers for the first listed role it holds, and a scope with no roles could never pick an active node"
    );
}

#[test]
fn anchors_and_merge_keys_are_followed() {
    let yaml = "\
service: s
probes:
  - &base { name: a, kind: database, timeout: 500ms }
  - { <<: *base, name: b }
";
    let m = parse_manifest(yaml).unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(
        m.probes[1].timeout.as_ref().map(|t| t.value),
        Some(Duration::from_millis(500))
    );
}

#[test]
fn resource_limits_stop_hostile_input_quickly() {
    let mut laughs = String::from("service: s\na: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 0..9 {
        let prev = if i == 0 {
            "a".to_owned()
        } else {
            format!("b{}", i - 1)
        };
        laughs += &format!(
            "b{i}: &b{i} [{}]\n",
            vec![format!("*{prev}"); 10].join(", ")
        );
    }
    let deep = format!(
        "service: s\nx: {}{}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let huge = format!("service: s\nx: '{}'\n", "y".repeat(2 << 20));
    for yaml in [laughs, deep, huge] {
        let started = std::time::Instant::now();
        let v = violations(&yaml);
        assert_eq!(v[0].rule, Rule::ManifestFile, "{v:#?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}

// ---- robustness -------------------------------------------------------------

/// A deterministic xorshift64* generator: reproducible cases, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform enough in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        let n = u64::try_from(n).unwrap_or(u64::MAX);
        if n == 0 {
            0
        } else {
            usize::try_from(self.next() % n).unwrap_or(0)
        }
    }

    fn byte(&mut self) -> u8 {
        self.next().to_le_bytes()[0]
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const SAMPLES: [&str; 5] = [
    FULL,
    LIFECYCLE,
    "service: mxgateway\n",
    "service: otopcua\nendpoints:\n  preset: be-hlth-009\nprobes:\n  - name: db\n    kind: database\n    tags:\n      - ready\n  - name: an\n    kind: active-node\n    scope: role\n    roles:\n      - admin\n",
    "service: s\nprobes:\n  - &p { name: a, kind: grpc, timeout: 200ms }\n  - { <<: *p, name: b }\n  - { kind: custom, type: ::x::Y, tags: [active] }\n",
];

const SPLICES: [&str; 31] = [
    "live",
    ":",
    ": ",
    "- ",
    "&a ",
    "*a",
    "[",
    "]",
    "{",
    "}",
    ",",
    "\n",
    "  ",
    "\t",
    "#",
    "'",
    "\"",
    "? ",
    "<<: *a\n",
    "!!str ",
    "!tag ",
    "~",
    "---\n",
    "...\n",
    "%YAML 1.2\n",
    "\u{feff}",
    "é",
    "\\",
    "kind: custom",
    "scope: role",
    "0ms",
];

fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(8) {
            0 if !bytes.is_empty() => {
                let i = rng.below(bytes.len());
                bytes[i] ^= 1 << rng.below(8);
            }
            1 => bytes.insert(at, rng.byte()),
            2 => {
                let end = (at + rng.below(16)).min(bytes.len());
                bytes.drain(at..end);
            }
            3 => {
                let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
                let line = rng.pick(&lines).to_vec();
                let mut copy = line;
                copy.push(b'\n');
                let start = bytes
                    .iter()
                    .take(at)
                    .rposition(|b| *b == b'\n')
                    .map_or(0, |p| p + 1);
                bytes.splice(start..start, copy);
            }
            4 => {
                let depth = 1 + rng.below(40);
                let (open, close) = if rng.below(2) == 0 {
                    ("[", "]")
                } else {
                    ("{a: ", "}")
                };
                let nest = format!("{}x{}", open.repeat(depth), close.repeat(depth));
                bytes.splice(at..at, nest.into_bytes());
            }
            5 => {
                let indent: String = (0..=rng.below(30))
                    .map(|i| format!("\n{}- ", " ".repeat(i * 2)))
                    .collect();
                bytes.splice(at..at, indent.into_bytes());
            }
            6 => bytes.truncate(at),
            _ => bytes
                .splice(at..at, rng.pick(&SPLICES).bytes())
                .for_each(drop),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn arbitrary(rng: &mut Rng) -> String {
    const ALPHABET: &[u8] = b"ab :-\n[]{},&*!#'\"?|>~%@` \t0123456789";
    let len = rng.below(120);
    let bytes: Vec<u8> = (0..len)
        .map(|_| {
            if rng.below(4) == 0 {
                rng.byte()
            } else {
                *rng.pick(ALPHABET)
            }
        })
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `parse_manifest` answers every input, `Ok` or a non-empty `Err`, and never
/// panics (the proc macro must never crash the compiler).
#[test]
fn manifest_fuzz() {
    const CASES: usize = 12_000;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut rejected = 0;
    for case in 0..CASES {
        let input = if case % 6 == 0 {
            arbitrary(&mut rng)
        } else {
            let sample = *rng.pick(&SAMPLES);
            mutate(&mut rng, sample)
        };
        let outcome = std::panic::catch_unwind(|| parse_manifest(&input));
        match outcome {
            Err(_) => panic!("case {case} panicked on {input:?}"),
            Ok(Err(found)) => {
                rejected += 1;
                assert!(
                    !found.is_empty(),
                    "case {case}: empty violation list for {input:?}"
                );
                let lines = input.lines().count() + 1;
                assert!(
                    found.iter().all(|v| v.location.line <= lines),
                    "case {case}: {found:#?} for {input:?}"
                );
            }
            Ok(Ok(_)) => {}
        }
    }
    // The mutations must actually reach the validator's error paths.
    assert!(
        rejected > CASES / 2,
        "only {rejected} of {CASES} cases were rejected"
    );
}

#[test]
fn execution_policy_keys_are_read_on_built_in_kinds() {
    let m = parse_manifest(&with_probe(
        "{ name: db, kind: database, refresh: 1s, max_staleness: 3s }",
    ))
    .unwrap_or_else(|v| panic!("{v:#?}"));
    let db = &m.probes[0];
    assert_eq!(db.cache, None);
    assert_eq!(
        db.refresh,
        Some(Located::new(Duration::from_secs(1), at(3, 42)))
    );
    assert_eq!(
        db.max_staleness,
        Some(Located::new(Duration::from_secs(3), at(3, 61)))
    );
    let m = parse_manifest(&with_probe("{ name: up, kind: grpc, cache: 1500ms }"))
        .unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(
        m.probes[0].cache,
        Some(Located::new(Duration::from_millis(1500), at(3, 36)))
    );
    assert_eq!(
        (m.probes[0].refresh, m.probes[0].max_staleness),
        (None, None)
    );
}

#[test]
fn r16_max_staleness_not_greater_than_refresh_at_max_staleness() {
    let v = only(
        &with_probe("{ name: db, kind: database, refresh: 1s, max_staleness: 1s }"),
        Rule::RefreshPolicy,
        at(3, 61),
    );
    assert!(v.message.contains("not greater"), "{}", v.message);
    let v = only(
        &with_probe("{ name: db, kind: database, max_staleness: 5s }"),
        Rule::RefreshPolicy,
        at(3, 48),
    );
    assert!(v.message.contains("no `refresh`"), "{}", v.message);
}

#[test]
fn r16_cache_with_refresh_at_cache() {
    let v = only(
        &with_probe("{ name: db, kind: database, cache: 1s, refresh: 1s }"),
        Rule::RefreshPolicy,
        at(3, 40),
    );
    assert!(
        v.message.contains("both `cache` and `refresh`"),
        "{}",
        v.message
    );
}

#[test]
fn r17_active_probes_are_neither_cached_nor_refreshed() {
    // The kind's default tags (`active`) count.
    let v = only(
        &with_probe("{ name: a, kind: active-node, refresh: 1s }"),
        Rule::LiveAnswer,
        at(3, 44),
    );
    assert!(v.message.contains("`refresh`"), "{}", v.message);
    // So do explicit tags on any kind (the whole tier answers one question).
    only(
        &with_probe("{ name: db, kind: database, tags: [ready, active], cache: 1s }"),
        Rule::LiveAnswer,
        at(3, 63),
    );
}

#[test]
fn r5_execution_policy_durations() {
    let v = only(
        &with_probe("{ name: db, kind: database, cache: 0s }"),
        Rule::Duration,
        at(3, 40),
    );
    assert!(v.message.contains("zero `cache`"), "{}", v.message);
    only(
        &with_probe("{ name: db, kind: database, refresh: soon }"),
        Rule::Duration,
        at(3, 42),
    );
}

#[test]
fn a_custom_probe_policy_is_its_attributes() {
    // Stored for the generated R7 check against the attribute, which
    // checked R16 and R17 with its own tags; not judged here.
    let m = parse_manifest(&with_probe(
        "{ kind: custom, type: crate::P, max_staleness: 5s }",
    ))
    .unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(
        m.probes[0].max_staleness.map(|d| d.value),
        Some(Duration::from_secs(5))
    );
    // Its values are still durations (R5).
    only(
        &with_probe("{ kind: custom, type: crate::P, cache: soon }"),
        Rule::Duration,
        at(3, 44),
    );
}

/// Every lifecycle key once.
const LIFECYCLE: &str = "\
service: s
orchestrator: { timeout: 1s, termination_grace_period: 30s }
lifecycle:
  startup_gates: [migrations, warm-cache]
  watchdogs:
    - { name: consumer, deadline: 30s }
    - name: scheduler
      deadline: 2m
  drain_delay: 5s
  shutdown_timeout: 20s
";

#[test]
fn the_lifecycle_section_is_read_with_its_locations() {
    let m = parse_manifest(LIFECYCLE).unwrap_or_else(|v| panic!("{v:#?}"));
    let l = &m.lifecycle;
    let gates: Vec<(&str, Location)> = l
        .startup_gates
        .iter()
        .map(|g| (g.value.as_str(), g.location))
        .collect();
    assert_eq!(
        gates,
        [("migrations", at(4, 19)), ("warm-cache", at(4, 31))]
    );
    let dogs: Vec<(&str, Duration)> = l
        .watchdogs
        .iter()
        .map(|w| (w.name.value.as_str(), w.deadline.value))
        .collect();
    assert_eq!(
        dogs,
        [
            ("consumer", Duration::from_secs(30)),
            ("scheduler", Duration::from_secs(120))
        ]
    );
    assert_eq!(l.drain_delay(), Duration::from_secs(5));
    assert_eq!(
        m.termination_grace_period.map(|g| g.value),
        Some(Duration::from_secs(30))
    );
    assert_eq!(m.graceful_stop(), Duration::from_secs(20));
}

#[test]
fn without_a_lifecycle_the_drain_has_its_defaults() {
    let m = parse_manifest("service: s\n").unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(m.lifecycle, LifecycleDecl::default());
    assert_eq!(m.lifecycle.drain_delay(), crate::drain::DEFAULT_DRAIN_DELAY);
    assert_eq!(m.graceful_stop(), crate::drain::DEFAULT_SHUTDOWN_TIMEOUT);
    // With only a grace period, the graceful stop gets what the default
    // delay leaves of it.
    let m = parse_manifest("service: s\norchestrator: { termination_grace_period: 30s }\n")
        .unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(m.graceful_stop(), Duration::from_secs(25));
}

#[test]
fn the_management_port_is_a_tcp_port() {
    let m = parse_manifest("service: s\nmanagement: { port: 8081 }\n")
        .unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(m.management_port, Some(Located::new(8081, at(2, 21))));
    for port in ["0", "65536", "-1", "\"8081\"", "8081.5"] {
        only(
            &format!("service: s\nmanagement: {{ port: {port} }}\n"),
            Rule::ValueType,
            at(2, 21),
        );
    }
    only(
        "service: s\nmanagement: { host: a }\n",
        Rule::Unknown,
        at(2, 15),
    );
}

#[test]
fn each_port_has_its_own_disclosure_and_the_application_port_hides_addresses() {
    use crate::Disclosure;
    let m = parse_manifest(
        "service: s\nendpoints: { disclosure: names }\nmanagement: { port: 8081, disclosure: { live: status } }\n",
    )
    .unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(m.responses.disclosure(Tag::Ready), Disclosure::Names);
    assert_eq!(
        Tag::ALL.map(|t| m.management_disclosure(t)),
        [Disclosure::Full, Disclosure::Full, Disclosure::Status]
    );
    assert!(!m.responses.cluster_addresses(), "hidden unless asked");
    let m = parse_manifest("service: s\nendpoints: { cluster_addresses: true }\n")
        .unwrap_or_else(|v| panic!("{v:#?}"));
    assert!(m.responses.cluster_addresses());
    // A level for a management port that is not there.
    only(
        "service: s\nmanagement: { disclosure: names }\n",
        Rule::MissingKey,
        at(2, 27),
    );
    let v = only(
        "service: s\nmanagement: { port: 8081, disclosure: { raedy: names } }\n",
        Rule::Unknown,
        at(2, 41),
    );
    assert!(v.message.contains("management.disclosure"), "{}", v.message);
    only(
        "service: s\nendpoints: { cluster_addresses: yes please }\n",
        Rule::ValueType,
        at(2, 33),
    );
}

#[test]
fn r18_the_drain_must_fit_the_grace_period() {
    let grace = |g: &str, lifecycle: &str| {
        format!(
            "service: s\norchestrator: {{ termination_grace_period: {g} }}\nlifecycle: {{ {lifecycle} }}\n"
        )
    };
    // The delay alone leaves under 1 s: reported at the delay.
    only(
        &grace("10s", "drain_delay: 9500ms"),
        Rule::DrainFitsGrace,
        at(3, 27),
    );
    only(
        &grace("10s", "drain_delay: 20s"),
        Rule::DrainFitsGrace,
        at(3, 27),
    );
    // The default delay (5 s) against a short grace period: at the grace
    // period, the only value written.
    only(
        "service: s\norchestrator: { termination_grace_period: 5s }\n",
        Rule::DrainFitsGrace,
        at(2, 43),
    );
    // Delay plus the stated timeout (rounded up to whole seconds): at the
    // timeout.
    let v = only(
        &grace("30s", "drain_delay: 5s, shutdown_timeout: 25001ms"),
        Rule::DrainFitsGrace,
        at(3, 49),
    );
    assert!(v.message.contains("(26 s)"), "{}", v.message);
    assert!(parse_manifest(&grace("30s", "drain_delay: 5s, shutdown_timeout: 25s")).is_ok());
    assert!(parse_manifest(&grace("30s", "drain_delay: 29s")).is_ok());
    // No grace period, nothing to fit.
    assert!(
        parse_manifest("service: s\nlifecycle: { drain_delay: 10m, shutdown_timeout: 10m }\n")
            .is_ok()
    );
    // A zero grace period is R5.
    only(&grace("0s", "drain_delay: 1s"), Rule::Duration, at(2, 43));
}

#[test]
fn lifecycle_names_deadlines_and_types_are_checked_all_at_once() {
    let v = violations(
        "service: s
lifecycle:
  startup_gates: [init, \"in it\", init, startup]
  watchdogs:
    - { name: consumer, deadline: 0ms }
    - { name: consumer, deadline: 5s }
    - { deadline: 5s }
    - { name: poller }
    - { name: p2, deadline: 5, every: 1s }
  drain_delay: soon
  shutdown: 1s
",
    );
    let found: Vec<(Rule, Location)> = v.iter().map(|v| (v.rule, v.location)).collect();
    assert_eq!(
        found,
        [
            (Rule::ProbeName, at(3, 25)),
            (Rule::DuplicateName, at(3, 34)),
            (Rule::ProbeName, at(3, 40)),
            (Rule::Duration, at(5, 35)),
            (Rule::DuplicateName, at(6, 15)),
            (Rule::MissingKey, at(7, 7)),
            (Rule::MissingKey, at(8, 7)),
            (Rule::Duration, at(9, 29)),
            (Rule::Unknown, at(9, 32)),
            (Rule::Duration, at(10, 16)),
            (Rule::Unknown, at(11, 3)),
        ],
        "{v:#?}"
    );
    assert!(
        v[0].message.starts_with("startup gate name `in it`"),
        "{}",
        v[0].message
    );
    assert!(
        v[4].message
            .starts_with("watchdog name `consumer` is used twice"),
        "{}",
        v[4].message
    );
    let types =
        violations("service: s\nlifecycle: { startup_gates: init, watchdogs: { a: 1s } }\n");
    let rules: Vec<Rule> = types.iter().map(|v| v.rule).collect();
    assert_eq!(rules, [Rule::ValueType, Rule::ValueType], "{types:#?}");
}

/// Two probes and the `groups` given.
fn with_groups(groups: &str) -> String {
    format!(
        "service: s\nprobes:\n  - {{ name: database, kind: database }}\n  - {{ name: cache, kind: custom, type: crate::Cache }}\ngroups:\n{groups}"
    )
}

#[test]
fn groups_parse_by_name_and_by_tier() {
    let yaml = with_groups(
        "  canary: { path: /health/canary, probes: [database, cache], disclosure: names }\n  writes: { path: /health/writes, tiers: [active] }\n",
    );
    let m = parse_manifest(&yaml).unwrap_or_else(|v| panic!("{v:#?}"));
    assert_eq!(m.groups.len(), 2);
    let canary = &m.groups[0];
    assert_eq!(canary.name.value, "canary");
    assert_eq!(canary.path.value, "/health/canary");
    let names: Vec<&str> = canary.probes.iter().map(|p| p.value.as_str()).collect();
    assert_eq!(names, ["database", "cache"]);
    assert_eq!(canary.disclosure.map(|d| d.value), Some(Disclosure::Names));
    assert_eq!(m.groups[1].tiers[0].value, Tag::Active);
    assert!(m.groups[1].probes.is_empty());
}

#[test]
fn a_group_naming_an_unknown_probe_is_r22_at_the_name() {
    let v = only(
        &with_groups("  canary: { path: /health/canary, probes: [databse] }\n"),
        Rule::GroupUnknownProbe,
        at(6, 44),
    );
    assert!(v.help.contains("did you mean `database`"), "{v:#?}");
    // Selecting nothing is R23 at the group's name.
    only(
        &with_groups("  canary: { path: /health/canary }\n"),
        Rule::GroupUnknownProbe,
        at(6, 3),
    );
}

#[test]
fn group_paths_collide_with_nothing_r23() {
    for (path, column) in [
        ("/health/ready", 19),
        ("/health/started", 19),
        ("/health/ready/database", 19),
        ("health/canary", 19),
    ] {
        only(
            &with_groups(&format!(
                "  canary: {{ path: {path}, probes: [database] }}\n"
            )),
            Rule::GroupPath,
            at(6, column),
        );
    }
    only(
        &with_groups(
            "  a: { path: /health/canary, probes: [database] }\n  b: { path: /health/canary/, probes: [cache] }\n",
        ),
        Rule::GroupPath,
        at(7, 14),
    );
    // Two segments under a tier is no per-probe path.
    parse_manifest(&with_groups(
        "  canary: { path: /health/ready/groups/canary, probes: [database] }\n",
    ))
    .unwrap_or_else(|v| panic!("{v:#?}"));
}

#[test]
fn a_group_on_live_is_r24_at_the_tier() {
    only(
        &with_groups("  canary: { path: /health/canary, tiers: [ready, live] }\n"),
        Rule::GroupOnLive,
        at(6, 50),
    );
}

#[test]
fn a_group_without_a_path_is_r11() {
    only(
        &with_groups("  canary: { probes: [database] }\n"),
        Rule::MissingKey,
        at(6, 11),
    );
}

#[test]
fn history_without_a_port_is_r26_at_the_key() {
    only(
        "service: s\nhistory: { ui: true }\nprobes:\n  - { name: db, kind: database }\n",
        Rule::HistoryNeedsAPort,
        at(2, 1),
    );
    let m = parse_manifest(
        "service: s\nmanagement: { port: 8081 }\nhistory: { ui: true }\nprobes:\n  - { name: db, kind: database }\n",
    )
    .unwrap_or_else(|v| panic!("{v:#?}"));
    let h = m.history.expect("history");
    assert!(h.ui && !h.application_port);
    assert_eq!(h.path.value, "/health/history");
    assert_eq!(h.ui_path.value, "/health/ui");
    let m = parse_manifest("service: s\nhistory: { application_port: true }\nprobes: []\n")
        .unwrap_or_else(|v| panic!("{v:#?}"));
    assert!(m.history.is_some_and(|h| h.application_port && !h.ui));
}

#[test]
fn r27_restart_after_is_read_and_checked_at_its_value() {
    let m = parse_manifest(&with_probe(
        "{ name: database, kind: database, shared: true, restart_after: 2m }",
    ))
    .unwrap();
    let p = &m.probes[0];
    assert_eq!(
        p.restart_after.map(|d| d.value),
        Some(Duration::from_secs(120))
    );
    assert_eq!(
        p.settings(&m).policy.restart_after,
        Some(Duration::from_secs(120))
    );
    let v = only(
        &with_probe("{ name: database, kind: database, restart_after: 2m }"),
        Rule::RestartAfter,
        at(3, 54),
    );
    assert!(v.message.contains("is not `shared`"), "{}", v.message);
}

#[test]
fn an_http_probe_is_refused_at_its_bad_value() {
    // `with_probe` puts the mapping on line 3, its `{` at column 5.
    let v = only(
        &with_probe("{ name: up, kind: http, url: not a url }"),
        Rule::ValueType,
        at(3, 34),
    );
    assert_eq!(
        format!("{}: {v}", v.location),
        "3:34: `url` of probe `up`, `not a url`, is not a URL: it holds spaces or control characters\n  = rule R15\n  = help: write an `http://host:port/path` URL, e.g. `http://inventory:8080/health`"
    );
    // The password never reaches the message.
    let v = only(
        &with_probe("{ name: up, kind: http, url: \"https://u:s3cret@h/x\" }"),
        Rule::ValueType,
        at(3, 34),
    );
    assert!(
        v.message.contains("`https://u:***@h/x`, is an `https` URL"),
        "{v}"
    );
    assert!(!v.to_string().contains("s3cret"), "{v}");
    for (status, column) in [("300-200", 53), ("2xx", 53), ("600", 53), ("[200]", 53)] {
        let yaml = with_probe(&format!(
            "{{ name: up, kind: http, url: http://h/, status: {status} }}"
        ));
        let v = violations(&yaml);
        assert_eq!(v.len(), 1, "{status}: {v:#?}");
        assert_eq!(
            (v[0].rule, v[0].location),
            (Rule::ValueType, at(3, column)),
            "{status}"
        );
    }
    only(
        &with_probe("{ name: up, kind: http }"),
        Rule::MissingKey,
        at(3, 5),
    );
    // An http option on another kind, and another kind's option here.
    only(
        &with_probe("{ name: g, kind: grpc, url: http://h/ }"),
        Rule::Unknown,
        at(3, 28),
    );
    only(
        &with_probe("{ name: up, kind: http, url: http://h/, policy: default }"),
        Rule::Unknown,
        at(3, 45),
    );
    let m = parse_manifest(&with_probe(
        "{ name: up, kind: http, url: http://h/, status: 204 }",
    ))
    .unwrap_or_else(|v| panic!("{v:#?}"));
    assert!(matches!(
        &m.probes[0].kind,
        ProbeKind::Http { status, body_contains: None, .. }
            if *status == crate::upstream::StatusRange::new(204, 204).unwrap()
    ));
}
