use super::*;
use zb_health_spec::manifest::parse_manifest;

fn plan_of(yaml: &str) -> Plan {
    let manifest = parse_manifest(yaml).expect("a valid manifest");
    plan(&manifest, &K8sArgs::default()).expect("a plan")
}

#[test]
fn a_derived_timeout_is_strictly_above_the_longest_stated_ready_deadline() {
    let timeout = |probes: &str| plan_of(&format!("service: s\nprobes:\n{probes}")).timeout_seconds;
    assert_eq!(
        timeout("  - { name: d, kind: database, timeout: 800ms }\n"),
        1
    );
    // The 800 ms default, strictly below Kubernetes' 1 s: its default fits.
    assert_eq!(timeout("  - { name: d, kind: database }\n"), 1);
    assert_eq!(
        timeout("  - { name: d, kind: database, timeout: 1500ms }\n"),
        2
    );
    // An active-only probe is no kube probe's business.
    assert_eq!(
        timeout("  - { name: a, kind: active-node, timeout: 5s }\n"),
        1
    );
    assert_eq!(plan_of("service: s\n").timeout_seconds, 1);
}

#[test]
fn a_readiness_group_reads_its_path_and_its_probes_deadlines() {
    let manifest = parse_manifest(
        "service: s\nprobes:\n  - { name: d, kind: database, timeout: 800ms }\n  - { name: a, kind: active-node, timeout: 5s }\ngroups:\n  writes: { path: /health/writes, tiers: [active] }\n  db: { path: /health/db, probes: [d] }\ngrpc: { services: { \"\": ready } }\n",
    )
    .expect("a valid manifest");
    let with = |group: &str| {
        let options = K8sArgs {
            readiness_group: Some(group.into()),
            ..K8sArgs::default()
        };
        plan(&manifest, &options).expect("a plan")
    };
    // Over HTTP although the manifest maps `ready` to gRPC.
    let writes = with("writes");
    assert_eq!(
        writes.readiness.handler,
        Handler::Http {
            path: "/health/writes".into()
        }
    );
    assert_eq!(writes.timeout_seconds, 6);
    assert_eq!(with("db").timeout_seconds, 1);
    let errors = plan(
        &manifest,
        &K8sArgs {
            readiness_group: Some("nope".into()),
            ..K8sArgs::default()
        },
    )
    .expect_err("an unknown group");
    assert_eq!(errors[0].rule, Rule::Unknown);
}

#[test]
fn a_derived_grace_period_covers_the_drain_rounded_up() {
    let plan = plan_of("service: s\nlifecycle: { drain_delay: 5500ms, shutdown_timeout: 20s }\n");
    assert_eq!(plan.grace_seconds, 26);
    assert!(!plan.grace_stated);
    // Neither stated: the 5 s default delay and actix's 30 s stop.
    assert_eq!(plan_of("service: s\n").grace_seconds, 35);
}

fn grpc_plan(yaml: &str) -> Result<Plan, Vec<Violation<Location>>> {
    let manifest = parse_manifest(yaml).expect("a valid manifest");
    let options = K8sArgs {
        grpc_probes: true,
        ..K8sArgs::default()
    };
    plan(&manifest, &options)
}

#[test]
fn without_grpc_probes_every_probe_is_an_http_get_even_with_a_grpc_section() {
    let plan = plan_of("service: s\ngrpc:\n  services: { \"\": ready, x.Live: live }\n");
    assert_eq!(
        (&plan.liveness.handler, &plan.readiness.handler),
        (
            &Handler::Http {
                path: "/healthz".into()
            },
            &Handler::Http {
                path: "/health/ready".into()
            }
        )
    );
    assert_eq!(plan.grpc_port, Some(DEFAULT_GRPC_PORT));
}

#[test]
fn grpc_probes_use_the_name_mapped_to_their_tier() {
    let plan = grpc_plan(
        "service: s\ngrpc:\n  services: { \"\": active, x.Ready: ready, x.Live: live }\n",
    )
    .expect("a plan");
    assert_eq!(
        plan.readiness.handler,
        Handler::Grpc {
            service: "x.Ready".into()
        }
    );
    assert_eq!(
        plan.liveness.handler,
        Handler::Grpc {
            service: "x.Live".into()
        }
    );
    // `""` answers from `ready` unless mapped elsewhere.
    let plan = grpc_plan("service: s\ngrpc: { services: { x.Writes: active, s.live: live } }\n")
        .expect("a plan");
    assert_eq!(
        plan.readiness.handler,
        Handler::Grpc {
            service: String::new()
        }
    );
    assert!(!plan.grpc_port_stated);
}

#[test]
fn grpc_probes_refuse_a_probed_tier_without_a_name_and_name_the_line_to_add() {
    // No name for `live`: refused at the `grpc` section, not left on httpGet.
    let errors = grpc_plan("service: s\ngrpc: { services: { x.Writes: active } }\n")
        .expect_err("live has no name");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].message.contains("the live tier"), "{errors:?}");
    assert!(errors[0].help.contains("`s.live: live`"), "{errors:?}");
    assert_eq!(errors[0].location.line, 2);
    // `""` mapped away from `ready`, and nothing else on it: both tiers.
    let errors = grpc_plan("service: s\ngrpc: { services: { \"\": active } }\n")
        .expect_err("neither tier has a name");
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[1].help.contains("`s.ready: ready`"), "{errors:?}");
    // No section at all.
    let errors = grpc_plan("service: s\n").expect_err("no grpc section");
    assert!(errors[0].help.contains("grpc: { services:"), "{errors:?}");
    // grpc.health.v1 has no `?exclude=` and no health groups.
    let manifest = parse_manifest(
        "service: s\nprobes:\n  - { name: d, kind: database }\ngroups:\n  db: { path: /health/db, probes: [d] }\ngrpc: { services: { \"\": ready, s.live: live } }\n",
    )
    .expect("a valid manifest");
    for options in [
        K8sArgs {
            grpc_probes: true,
            readiness_exclude: vec!["d".into()],
            ..K8sArgs::default()
        },
        K8sArgs {
            grpc_probes: true,
            readiness_group: Some("db".into()),
            ..K8sArgs::default()
        },
    ] {
        let errors = plan(&manifest, &options).expect_err("refused");
        assert!(errors[0].message.contains("--grpc-probes"), "{errors:?}");
    }
}

#[test]
fn the_management_port_wins_over_the_flag() {
    let manifest = parse_manifest("service: s\nmanagement: { port: 8081 }\n").expect("valid");
    let options = K8sArgs {
        port: Some(9000),
        ..K8sArgs::default()
    };
    let plan = plan(&manifest, &options).expect("a plan");
    assert_eq!(
        (plan.port, plan.port_source),
        (8081, PortSource::Management)
    );
}

#[test]
fn the_startup_probe_reads_the_startup_path_for_gates_or_watchdogs_only() {
    let started = Handler::Http {
        path: "/health/started".into(),
    };
    assert_eq!(plan_of("service: s\n").startup, None);
    for lifecycle in [
        "lifecycle: { startup_gates: [migrations] }\n",
        "lifecycle: { watchdogs: [{ name: poller, deadline: 3s }] }\n",
    ] {
        let startup = plan_of(&format!("service: s\n{lifecycle}"))
            .startup
            .expect("a startup probe");
        assert_eq!(
            (startup.endpoint, &startup.handler, startup.deadline),
            (Endpoint::Started, &started, Duration::ZERO),
            "{lifecycle}"
        );
    }
    // Over HTTP even with `--grpc-probes`.
    let plan = grpc_plan(
        "service: s\nendpoints: { started: /boot }\ngrpc: { services: { \"\": ready, s.live: live } }\nlifecycle: { startup_gates: [m] }\n",
    )
    .expect("a plan");
    assert_eq!(
        plan.startup.map(|s| s.handler),
        Some(Handler::Http {
            path: "/boot".into()
        })
    );
}
