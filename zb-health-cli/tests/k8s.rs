//! `zb-health k8s` as a binary: the probes it prints for every manifest are
//! valid YAML, deterministic and snapshot-tested; it refuses what
//! Kubernetes cannot express; `--check` reports drift at line:column.
//!
//! `SNAPSHOTS=overwrite cargo test -p zb-health-cli --test k8s` rewrites
//! `tests/snapshots/k8s/` (review the diff).

mod common;

use common::{cli, example_manifests, manifests, snapshot, text, zb_health};
use serde::Deserialize;

const FIXTURES: &str = "zb-health-cli/tests/fixtures/k8s";

/// The printed patch, typed: parsing into it proves the output is YAML of
/// the shape Kubernetes reads, with nothing unknown in it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Patch {
    spec: PatchSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchSpec {
    template: Template,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Template {
    spec: PodSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PodSpec {
    termination_grace_period_seconds: u64,
    containers: Vec<Container>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Container {
    name: String,
    env: Vec<EnvVar>,
    liveness_probe: Probe,
    readiness_probe: Probe,
    startup_probe: Option<Probe>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvVar {
    name: String,
    value: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Probe {
    http_get: Option<HttpGet>,
    grpc: Option<Grpc>,
    timeout_seconds: u64,
    period_seconds: u64,
    failure_threshold: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpGet {
    path: String,
    port: u16,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Grpc {
    port: u16,
    service: String,
}

/// `patch`, a printed patch, as a Deployment in a fresh scratch folder
/// named after `tag`: the folder (to remove) and the file.
fn as_deployment(patch: &str, tag: &str) -> (std::path::PathBuf, String) {
    let scratch = std::env::temp_dir().join(format!("zb-health-k8s-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("the temp dir is writable");
    let deployment = scratch.join("deployment.yaml");
    std::fs::write(
        &deployment,
        format!("apiVersion: apps/v1\nkind: Deployment\n{patch}"),
    )
    .expect("the temp dir is writable");
    let deployment = deployment.to_str().expect("a UTF-8 temp dir").to_owned();
    (scratch, deployment)
}

/// `k8s MANIFEST --check DEPLOYMENT` with `flags` exits 0.
fn assert_consistent(manifest: &str, deployment: &str, flags: &[&str]) {
    let mut args = vec!["k8s", manifest, "--check", deployment];
    args.extend_from_slice(flags);
    let out = zb_health(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{flags:?}: {}",
        text(&out.stderr)
    );
}

/// The manifests that render; `field_names.yaml` has ready custom probes
/// whose deadlines only their attributes know and no orchestrator timeout,
/// so it is refused (tested below).
fn renderable() -> Vec<String> {
    let mut files = example_manifests();
    files.extend(
        manifests("tests/ui/pass/manifests")
            .into_iter()
            .filter(|f| !f.ends_with("/field_names.yaml")),
    );
    files.extend(
        ["health", "derived", "grpc", "stall-exit"]
            .iter()
            .map(|f| format!("{FIXTURES}/{f}.yaml")),
    );
    files
}

#[test]
fn every_manifest_renders_valid_deterministic_yaml_that_its_own_check_accepts() {
    let scratch = std::env::temp_dir().join(format!("zb-health-k8s-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("the temp dir is writable");
    for file in renderable() {
        let out = zb_health(&["k8s", &file]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", text(&out.stderr));
        assert_eq!(text(&out.stderr), "", "{file}");
        let yaml = text(&out.stdout);
        assert_eq!(
            zb_health(&["k8s", &file]).stdout,
            out.stdout,
            "{file}: not deterministic"
        );

        let patch: Patch = serde_saphyr::from_str(&yaml)
            .unwrap_or_else(|e| panic!("{file}: the output is not the expected YAML: {e}\n{yaml}"));
        let pod = &patch.spec.template.spec;
        assert_eq!(pod.containers.len(), 1, "{file}");
        let c = &pod.containers[0];
        assert!(!c.name.is_empty());
        // The kubelet connects to the pod IP: the service binds every interface.
        assert_eq!(c.env.len(), 1, "{file}");
        assert_eq!(
            (c.env[0].name.as_str(), c.env[0].value.as_str()),
            ("HOST", "0.0.0.0")
        );
        for probe in [
            Some(&c.liveness_probe),
            Some(&c.readiness_probe),
            c.startup_probe.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            // Exactly one handler; Kubernetes' minimums hold.
            assert!(probe.http_get.is_some() != probe.grpc.is_some(), "{file}");
            assert!(
                probe.timeout_seconds >= 1 && probe.period_seconds >= 1,
                "{file}"
            );
            assert!(probe.failure_threshold >= 1, "{file}");
            if let Some(http) = &probe.http_get {
                assert!(http.path.starts_with('/') && http.port > 0, "{file}");
            }
            if let Some(grpc) = &probe.grpc {
                assert!(grpc.port > 0 && !grpc.service.contains(' '), "{file}");
            }
        }
        // Liveness never reads the ready tier's dependencies.
        let live = c
            .liveness_probe
            .http_get
            .as_ref()
            .expect("liveness is HTTP");
        assert!(!live.path.contains("ready"), "{file}: {}", live.path);
        // Nor does the startup probe: it holds liveness back, and failing
        // its budget restarts the pod.
        if let Some(startup) = &c.startup_probe {
            let http = startup.http_get.as_ref().expect("the startup path is HTTP");
            assert!(http.path.ends_with("/started"), "{file}: {}", http.path);
        }
        assert!(pod.termination_grace_period_seconds >= 1, "{file}");

        // As a Deployment, the printed patch is consistent with its manifest,
        // with as many replicas as the cluster size its guards count (K9;
        // the patch leaves the scale to the workload).
        let deployment = scratch.join("deployment.yaml");
        let source = std::fs::read_to_string(common::root().join(&file)).expect("readable");
        let size = source
            .split("expected_size:")
            .skip(1)
            .filter_map(|rest| {
                let digits: String = rest
                    .trim_start()
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits.parse::<u32>().ok()
            })
            .max();
        let yaml = match size {
            Some(n) => yaml.replacen("spec:\n", &format!("spec:\n  replicas: {n}\n"), 1),
            None => yaml,
        };
        std::fs::write(
            &deployment,
            format!("apiVersion: apps/v1\nkind: Deployment\n{yaml}"),
        )
        .expect("the temp dir is writable");
        let deployment = deployment.to_str().expect("a UTF-8 temp dir");
        let out = zb_health(&["k8s", &file, "--check", deployment]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", text(&out.stderr));
        assert_eq!(
            text(&out.stdout),
            format!("{deployment}: consistent with {file}\n")
        );
    }
    std::fs::remove_dir_all(&scratch).expect("the temp dir is removable");
}

#[test]
fn the_printed_probes_match_their_snapshots() {
    let cases: [(&str, &str, &[&str]); 10] = [
        ("health", &format!("{FIXTURES}/health.yaml"), &[]),
        (
            "derived",
            &format!("{FIXTURES}/derived.yaml"),
            &["--port", "3000", "--container", "app"],
        ),
        (
            "grpc",
            &format!("{FIXTURES}/grpc.yaml"),
            &["--grpc-port", "9000"],
        ),
        (
            "grpc-probes",
            &format!("{FIXTURES}/grpc-probes.yaml"),
            &["--grpc-probes", "--grpc-port", "9000"],
        ),
        ("stall-exit", &format!("{FIXTURES}/stall-exit.yaml"), &[]),
        ("full", "tests/ui/pass/manifests/full.yaml", &[]),
        (
            "scadabridge",
            "tests/ui/pass/manifests/scadabridge.yaml",
            &[],
        ),
        ("mxgateway", "tests/ui/pass/manifests/mxgateway.yaml", &[]),
        ("disclosure", "tests/ui/pass/manifests/disclosure.yaml", &[]),
        // The README tour's step 8 shows this one.
        ("tour", "examples/tour/health.yaml", &[]),
    ];
    for (name, file, flags) in cases {
        let mut args = vec!["k8s", file];
        args.extend_from_slice(flags);
        cli(&args)
            .assert()
            .code(0)
            .stdout_eq(snapshot(&format!("k8s/{name}.yaml")));
    }
}

#[test]
fn what_kubernetes_cannot_express_is_refused_at_the_manifests_line_and_column() {
    for name in ["subsecond", "unknown_deadline"] {
        let file = format!("{FIXTURES}/{name}.yaml");
        cli(&["k8s", "--color", "never", &file])
            .assert()
            .code(1)
            .stdout_eq("")
            .stderr_eq(snapshot(&format!("k8s/{name}.stderr")));
    }
    let out = zb_health(&["k8s", "tests/ui/pass/manifests/field_names.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("crate::HTTPProbe"));
}

#[test]
fn grpc_probes_ask_the_names_mapped_to_the_tiers_and_check_accepts_them() {
    let manifest = format!("{FIXTURES}/grpc-probes.yaml");
    let out = zb_health(&["k8s", &manifest, "--grpc-probes", "--grpc-port", "9000"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let yaml = text(&out.stdout);
    let patch: Patch = serde_saphyr::from_str(&yaml).expect("the expected YAML");
    let c = &patch.spec.template.spec.containers[0];
    let grpc = |p: &Probe| {
        let g = p.grpc.as_ref().expect("a grpc probe");
        (g.port, g.service.clone())
    };
    assert_eq!(grpc(&c.liveness_probe), (9000, "gateway.v1.Live".into()));
    assert_eq!(grpc(&c.readiness_probe), (9000, String::new()));
    let startup = c.startup_probe.as_ref().expect("a startup probe");
    assert_eq!(
        startup.http_get.as_ref().map(|h| h.path.as_str()),
        Some("/health/started")
    );

    // As a Deployment it is consistent, with the port checked when given
    // and without the flag too (either form reads the same tier).
    let (scratch, deployment) = as_deployment(&yaml, "grpc");
    let deployment = deployment.as_str();
    for flags in [
        &["--grpc-probes", "--grpc-port", "9000"][..],
        &["--grpc-port", "9000"],
        &[],
    ] {
        assert_consistent(&manifest, deployment, flags);
    }
    std::fs::remove_dir_all(&scratch).expect("the temp dir is removable");
}

#[test]
fn grpc_probes_without_a_name_for_a_probed_tier_are_refused_at_the_grpc_section() {
    cli(&[
        "k8s",
        "--color",
        "never",
        &format!("{FIXTURES}/grpc.yaml"),
        "--grpc-probes",
    ])
    .assert()
    .code(1)
    .stdout_eq("")
    .stderr_eq(snapshot("k8s/grpc-probes-no-live.stderr"));
}

#[test]
fn an_http2_probe_is_drift_at_its_protocol_as_the_service_answers_http1_only() {
    let manifest = format!("{FIXTURES}/health.yaml");
    let consistent = std::fs::read_to_string(common::root().join(FIXTURES).join("consistent.yaml"))
        .expect("the fixture is readable");
    let http2 = consistent.replace(
        "httpGet: { path: /ready, port: 9090 }",
        "httpGet: { path: /ready, port: 9090, protocol: HTTP2 }",
    );
    assert_ne!(http2, consistent);
    let (scratch, deployment) = as_deployment("", "http2");
    std::fs::write(&deployment, http2).expect("writable");
    let out = zb_health(&["k8s", "--color=never", &manifest, "--check", &deployment]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("error[K6]: the readinessProbe asks HTTP/2 cleartext"),
        "{stderr}"
    );
    assert!(
        stderr.contains("deployment.yaml:33:60\n"),
        "at `HTTP2`: {stderr}"
    );
    assert!(stderr.contains("in 1 place"), "{stderr}");
    std::fs::remove_dir_all(&scratch).expect("the temp dir is removable");
}

#[test]
fn a_container_that_never_restarts_after_a_stall_exit_is_drift_unless_a_rule_restarts_it() {
    let manifest = format!("{FIXTURES}/stall-exit.yaml");
    let out = zb_health(&["k8s", &manifest]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let patch = text(&out.stdout);
    let container = "        - name: poller\n";
    assert!(patch.contains(container), "{patch}");
    let check = |insert: &str| {
        let with = patch.replacen(container, &format!("{container}{insert}"), 1);
        let (scratch, deployment) = as_deployment(&with, "stall");
        let out = zb_health(&["k8s", "--color=never", &manifest, "--check", &deployment]);
        std::fs::remove_dir_all(&scratch).expect("the temp dir is removable");
        (out.status.code(), text(&out.stderr))
    };
    // `Never` alone: stopped for good after the exit, K11 at the value.
    let (code, stderr) = check("          restartPolicy: Never\n");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("error[K11]: the container's restartPolicy is Never")
            && stderr.contains("deployment.yaml:15:26\n")
            && stderr.contains("values: [75]"),
        "{stderr}"
    );
    // A rule that restarts on 75 (In, or NotIn without it), or the pod's
    // own `Always`: consistent.
    for insert in [
        "          restartPolicy: Never\n          restartPolicyRules:\n            - { action: Restart, exitCodes: { operator: In, values: [1, 75] } }\n",
        "          restartPolicy: Never\n          restartPolicyRules:\n            - { action: Restart, exitCodes: { operator: NotIn, values: [0] } }\n",
        "",
    ] {
        let (code, stderr) = check(insert);
        assert_eq!(code, Some(0), "{insert}: {stderr}");
    }
    // A rule on another code is no help.
    let (code, stderr) = check(
        "          restartPolicy: Never\n          restartPolicyRules:\n            - { action: Restart, exitCodes: { operator: In, values: [1] } }\n",
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("error[K11]"), "{stderr}");
}

#[test]
fn a_manifest_that_check_rejects_is_rejected_with_checks_diagnostics() {
    let file = "tests/ui/fail/manifests/live_tag.yaml";
    let k8s = zb_health(&["k8s", "--color=never", file]);
    let check = zb_health(&["check", "--color=never", file]);
    assert_eq!(k8s.status.code(), Some(1));
    assert_eq!(text(&k8s.stdout), "");
    assert_eq!(k8s.stderr, check.stderr);
}

#[test]
fn a_consistent_deployment_exits_0_and_says_so() {
    let manifest = format!("{FIXTURES}/health.yaml");
    let deployment = format!("{FIXTURES}/consistent.yaml");
    let out = zb_health(&["k8s", &manifest, "--check", &deployment]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{deployment}: consistent with {manifest}\n")
    );
    assert_eq!(text(&out.stderr), "");
}

#[test]
fn every_drift_is_reported_at_its_line_and_column_in_the_deployment() {
    let cases: [(&str, &str, &str, &[&str]); 4] = [
        ("drift", "health", "drift", &[]),
        (
            "drift-statefulset",
            "health",
            "drift-statefulset",
            &["--container", "historian"],
        ),
        (
            "drift-grpc",
            "grpc",
            "grpc-deployment",
            &["--grpc-port", "50051"],
        ),
        (
            "drift-grpc-probes",
            "grpc-probes",
            "grpc-probes-deployment",
            &["--grpc-probes", "--grpc-port", "9000"],
        ),
    ];
    for (name, manifest, deployment, flags) in cases {
        let manifest = format!("{FIXTURES}/{manifest}.yaml");
        let deployment = format!("{FIXTURES}/{deployment}.yaml");
        let mut args = vec!["k8s", "--color", "never", &manifest, "--check", &deployment];
        args.extend_from_slice(flags);
        cli(&args)
            .assert()
            .code(1)
            .stdout_eq("")
            .stderr_eq(snapshot(&format!("k8s/{name}.stderr")));
    }
}

#[test]
fn a_statefulset_that_starts_pods_in_order_under_a_majority_guard_drifts() {
    // Absent (at the StatefulSet's `spec`) and explicit `OrderedReady`.
    let manifest = format!("{FIXTURES}/cluster.yaml");
    let statefulset = format!("{FIXTURES}/cluster-statefulset.yaml");
    for (container, name) in [
        ("ledger", "cluster-statefulset"),
        ("ledger-ordered", "cluster-statefulset-ordered"),
    ] {
        cli(&[
            "k8s",
            "--color",
            "never",
            &manifest,
            "--check",
            &statefulset,
            "--container",
            container,
        ])
        .assert()
        .code(1)
        .stdout_eq("")
        .stderr_eq(snapshot(&format!("k8s/{name}.stderr")));
    }
    // `Parallel`, or a Deployment (its pods start at once), is consistent.
    let dir = std::env::temp_dir().join(format!("zb-health-k8s-sts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("the temp dir is writable");
    let text_of = std::fs::read_to_string(common::root().join(&statefulset)).expect("readable");
    let first = text_of.split("\n---\n").next().expect("a first document");
    for (file, yaml) in [
        (
            "parallel.yaml",
            first.replace(
                "  replicas: 3\n",
                "  replicas: 3\n  podManagementPolicy: Parallel\n",
            ),
        ),
        (
            "deployment.yaml",
            first.replace("kind: StatefulSet", "kind: Deployment"),
        ),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, yaml).expect("writable");
        let path = path.to_str().expect("UTF-8");
        let out = zb_health(&["k8s", &manifest, "--check", path]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", text(&out.stderr));
    }
    std::fs::remove_dir_all(&dir).expect("removable");
}

#[test]
fn each_kind_of_drift_is_found() {
    let manifest = format!("{FIXTURES}/health.yaml");
    let deployment = format!("{FIXTURES}/drift.yaml");
    let stderr = text(&zb_health(&["k8s", &manifest, "--check", &deployment]).stderr);
    for code in ["K1", "K2", "K3", "K4", "K5", "K8"] {
        assert!(
            stderr.contains(&format!("error[{code}]")),
            "{code} missing:\n{stderr}"
        );
    }
    let deployment = format!("{FIXTURES}/drift-statefulset.yaml");
    let args = [
        "k8s",
        &manifest,
        "--check",
        &deployment,
        "--container",
        "historian",
    ];
    let stderr = text(&zb_health(&args).stderr);
    assert!(stderr.contains("error[K6]"), "{stderr}");
    // Kubernetes' defaults are what a missing setting means.
    assert!(stderr.contains("grace period is 30 s (no terminationGracePeriodSeconds"));
    assert!(stderr.contains("times out after 1 s (no timeoutSeconds"));
    // No HOST at all: the service would bind 127.0.0.1.
    assert!(stderr.contains("does not set HOST"), "{stderr}");
}

#[test]
fn a_liveness_or_startup_probe_on_the_ready_or_active_tier_is_drift() {
    let manifest = format!("{FIXTURES}/health.yaml");
    let consistent = std::fs::read_to_string(common::root().join(FIXTURES).join("consistent.yaml"))
        .expect("the fixture is readable");
    let scratch =
        std::env::temp_dir().join(format!("zb-health-k8s-restart-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("the temp dir is writable");
    for (from, to, key, why) in [
        // The mapping `zb-health k8s` printed before the startup path: a
        // database outage at boot longer than the budget restarted the pod.
        (
            "9090/health/started",
            "9090/ready",
            "startupProbe",
            "the ready tier: a failing dependency would restart the pod",
        ),
        (
            "9090/health/started",
            "9090/health/active",
            "startupProbe",
            "the active tier: a standby (503 there by design) or a failing dependency would restart the pod",
        ),
        (
            "path: /live,",
            "path: /ready,",
            "livenessProbe",
            "the ready tier: a failing dependency would restart the pod",
        ),
        (
            "path: /live,",
            "path: /health/active,",
            "livenessProbe",
            "the active tier: a standby",
        ),
    ] {
        assert!(consistent.contains(from), "{from}");
        let deployment = scratch.join("deployment.yaml");
        std::fs::write(&deployment, consistent.replace(from, to)).expect("writable");
        let out = zb_health(&["k8s", &manifest, "--check", deployment.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{to}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!("error[K1]: the {key} checks `")) && stderr.contains(why),
            "{to}:\n{stderr}"
        );
        assert!(stderr.contains("in 1 place"), "{to}:\n{stderr}");
    }
    std::fs::remove_dir_all(&scratch).expect("the temp dir is removable");
}

#[test]
fn the_container_is_the_named_one_else_the_first_with_probes() {
    let manifest = format!("{FIXTURES}/health.yaml");
    let deployment = format!("{FIXTURES}/drift-statefulset.yaml");
    // Unnamed: the sidecar comes first and has a probe, so it is checked.
    let out = zb_health(&["k8s", &manifest, "--check", &deployment]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("port: 15000"),
        "{}",
        text(&out.stderr)
    );
    let out = zb_health(&[
        "k8s",
        &manifest,
        "--check",
        &deployment,
        "--container",
        "nope",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no container named `nope`"));
}

#[test]
fn unreadable_input_exits_2_and_says_why() {
    let manifest = format!("{FIXTURES}/health.yaml");
    let dir = std::env::temp_dir().join(format!("zb-health-k8s-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("the temp dir is writable");
    let service_only = dir.join("service.yaml");
    std::fs::write(
        &service_only,
        "apiVersion: v1\nkind: Service\nmetadata: { name: x }\n",
    )
    .expect("writable");
    let broken = dir.join("broken.yaml");
    std::fs::write(&broken, "kind: Deployment\nspec: [unclosed\n").expect("writable");
    let cases: [(Vec<&str>, &str); 4] = [
        (
            vec!["k8s", "no/such/health.yaml"],
            "cannot read `no/such/health.yaml`",
        ),
        (
            vec!["k8s", &manifest, "--check", "no/such/deployment.yaml"],
            "cannot read `no/such/deployment.yaml`",
        ),
        (
            vec![
                "k8s",
                &manifest,
                "--check",
                service_only.to_str().expect("UTF-8"),
            ],
            "no Deployment or StatefulSet",
        ),
        (
            vec!["k8s", &manifest, "--check", broken.to_str().expect("UTF-8")],
            "not valid YAML",
        ),
    ];
    for (args, says) in cases {
        let out = zb_health(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.starts_with("error: ") && stderr.contains(says),
            "{args:?}: {stderr}"
        );
    }
    std::fs::remove_dir_all(&dir).expect("removable");
}

/// `--readiness-group`: the readiness probe of a canary reads one health
/// group's path (over HTTP), and `--check` holds a Deployment to it.
#[test]
fn a_readiness_group_points_the_readiness_probe_at_its_path() {
    let file = "tests/ui/pass/manifests/groups.yaml";
    cli(&["k8s", file, "--readiness-group", "canary"])
        .assert()
        .code(0)
        .stdout_eq(snapshot("k8s/groups-canary.yaml"));
    let out = zb_health(&["k8s", file, "--readiness-group", "canary"]);
    let yaml = text(&out.stdout);
    let patch: Patch = serde_saphyr::from_str(&yaml).expect("the expected YAML");
    let readiness = &patch.spec.template.spec.containers[0].readiness_probe;
    assert_eq!(
        readiness.http_get.as_ref().map(|h| h.path.as_str()),
        Some("/health/canary")
    );

    // The printed Deployment is consistent with the same flag, and drifts
    // from the plain plan (whose readiness reads the ready tier).
    let (scratch, deployment) = as_deployment(&yaml, "group");
    let deployment = deployment.as_str();
    let out = zb_health(&[
        "k8s",
        file,
        "--readiness-group",
        "canary",
        "--check",
        deployment,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = zb_health(&["k8s", "--color=never", file, "--check", deployment]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("set `path: /health/ready`"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&scratch).expect("the temp dir is removable");

    // An unknown group is refused, with the groups there are.
    let out = zb_health(&["k8s", "--color=never", file, "--readiness-group", "canery"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("`--readiness-group canery` names no health group"),
        "{stderr}"
    );
    assert!(stderr.contains("did you mean `canary`?"), "{stderr}");
}

#[test]
fn replicas_that_disagree_with_the_cluster_size_drift_at_their_line() {
    // ledger's manifest counts majorities of 3 (`expected_size: 3`); its
    // StatefulSet, made Parallel so K7 stays quiet, runs 3 replicas.
    let manifest = format!("{FIXTURES}/cluster.yaml");
    let statefulset = format!("{FIXTURES}/cluster-statefulset.yaml");
    let dir = std::env::temp_dir().join(format!("zb-health-k8s-size-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("the temp dir is writable");
    let text_of = std::fs::read_to_string(common::root().join(&statefulset)).expect("readable");
    let first = text_of
        .split("\n---\n")
        .next()
        .expect("a first document")
        .replace(
            "  replicas: 3\n",
            "  replicas: 3\n  podManagementPolicy: Parallel\n",
        );
    let env_from = "            - { name: HOST, value: 0.0.0.0 }\n";
    let line_of = |yaml: &str, needle: &str| {
        yaml.lines()
            .position(|l| l.contains(needle))
            .expect("the line is there")
            + 1
    };
    for (file, yaml, drift) in [
        // 5 replicas against 3: each side of a partition can count 2 of 3.
        (
            "five.yaml",
            first.replace("replicas: 3", "replicas: 5"),
            Some("both sides of a partition"),
        ),
        // The run time's size agrees with the replicas: it overrides the
        // manifest's 3.
        (
            "five-env.yaml",
            first.replace("replicas: 3", "replicas: 5").replace(
                env_from,
                &format!(
                    "{env_from}            - {{ name: CLUSTER_EXPECTED_SIZE, value: \"5\" }}\n"
                ),
            ),
            None,
        ),
        // The run time says 5, the StatefulSet runs 3.
        (
            "three-env.yaml",
            first.replace(
                env_from,
                &format!(
                    "{env_from}            - {{ name: CLUSTER_EXPECTED_SIZE, value: \"5\" }}\n"
                ),
            ),
            Some("the container's CLUSTER_EXPECTED_SIZE is 5"),
        ),
        // One replica never reaches a majority of 3.
        (
            "one.yaml",
            first.replace("replicas: 3", "replicas: 1"),
            Some("never reach a majority"),
        ),
    ] {
        let drift = drift.map(|said| ("K9", said, line_of(&yaml, "replicas:")));
        check_drifts(&dir.join(file), &yaml, &manifest, drift);
    }
    std::fs::remove_dir_all(&dir).expect("removable");
}

#[test]
fn a_readiness_detection_time_other_than_the_manifests_drifts_at_its_line() {
    // historian's manifest drains for 10 s: readiness every 5 s, 2
    // failures, a 10 s detection time its caches and thresholds fit.
    let manifest = format!("{FIXTURES}/health.yaml");
    let consistent =
        std::fs::read_to_string(common::root().join(format!("{FIXTURES}/consistent.yaml")))
            .expect("readable");
    let ready = "            periodSeconds: 5\n            failureThreshold: 2\n";
    assert!(
        consistent.contains(ready),
        "the fixture's readiness settings"
    );
    let dir = std::env::temp_dir().join(format!("zb-health-k8s-detection-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("the temp dir is writable");
    for (file, settings, drift) in [
        // The same product another way is the same detection time.
        (
            "same.yaml",
            "            periodSeconds: 10\n            failureThreshold: 1\n",
            None,
        ),
        (
            "longer.yaml",
            "            periodSeconds: 10\n            failureThreshold: 2\n",
            Some("= 20 s, but the manifest's detection time is 10 s: longer"),
        ),
        (
            "shorter.yaml",
            "            periodSeconds: 1\n            failureThreshold: 2\n",
            Some("= 2 s, but the manifest's detection time is 10 s: shorter"),
        ),
        // Absent, they are Kubernetes' 10 s × 3.
        (
            "defaults.yaml",
            "",
            Some(
                "periodSeconds 10 (Kubernetes' default) × failureThreshold 3 (Kubernetes' default) = 30 s",
            ),
        ),
    ] {
        let yaml = consistent.replace(ready, settings);
        let drift = drift.map(|said| {
            // At periodSeconds, or at the probe when it states none.
            let needle = if settings.is_empty() {
                "readinessProbe:"
            } else {
                "periodSeconds: "
            };
            let probe = yaml
                .lines()
                .position(|l| l.contains("readinessProbe:"))
                .expect("a readiness probe");
            let at = yaml
                .lines()
                .skip(probe)
                .position(|l| l.contains(needle))
                .expect("the line is there");
            ("K10", said, probe + at + 1)
        });
        check_drifts(&dir.join(file), &yaml, &manifest, drift);
    }
    std::fs::remove_dir_all(&dir).expect("removable");
}

/// Writes `yaml` to `path` and checks it against `manifest`: consistent
/// when `drift` is `None`, else the drift `(code, text, line)` reported
/// with that text at that line of the file.
fn check_drifts(
    path: &std::path::Path,
    yaml: &str,
    manifest: &str,
    drift: Option<(&str, &str, usize)>,
) {
    std::fs::write(path, yaml).expect("writable");
    let path = path.to_str().expect("UTF-8");
    let out = zb_health(&["k8s", "--color", "never", manifest, "--check", path]);
    let stderr = text(&out.stderr);
    match drift {
        None => assert_eq!(out.status.code(), Some(0), "{path}: {stderr}"),
        Some((code, said, line)) => {
            assert_eq!(out.status.code(), Some(1), "{path}: {stderr}");
            assert!(
                stderr.contains(&format!("error[{code}]")),
                "{path}: {stderr}"
            );
            assert!(stderr.contains(said), "{path}: {stderr}");
            assert!(
                stderr.contains(&format!("{path}:{line}:")),
                "{path}: {code} at line {line}: {stderr}"
            );
        }
    }
}

/// `--readiness-exclude`: the readiness probe's path leaves named ready
/// probes out of the verdict (`?exclude=`, kube-apiserver's query), for an
/// emergency; `--check` accepts a Deployment whose readiness path excludes
/// checks of the ready tier, and reports one that names none.
#[test]
fn a_readiness_path_may_exclude_probes_of_the_ready_tier() {
    let file = "tests/ui/pass/manifests/groups.yaml";
    let out = zb_health(&["k8s", file, "--readiness-exclude", "database"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let yaml = text(&out.stdout);
    let patch: Patch = serde_saphyr::from_str(&yaml).expect("the expected YAML");
    let readiness = &patch.spec.template.spec.containers[0].readiness_probe;
    assert_eq!(
        readiness.http_get.as_ref().map(|h| h.path.as_str()),
        Some("/health/ready?exclude=database")
    );

    let scratch =
        std::env::temp_dir().join(format!("zb-health-k8s-exclude-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("the temp dir is writable");
    let write = |name: &str, yaml: &str| {
        let path = scratch.join(name);
        std::fs::write(
            &path,
            format!("apiVersion: apps/v1\nkind: Deployment\n{yaml}"),
        )
        .expect("the temp dir is writable");
        path.to_str().expect("a UTF-8 temp dir").to_owned()
    };
    // The printed Deployment is consistent with and without the flag: a
    // path that excludes a ready probe is accepted.
    let excluded = write("excluded.yaml", &yaml);
    for flags in [&["--readiness-exclude", "database"][..], &[]] {
        assert_consistent(file, &excluded, flags);
    }
    // One that names no check of the ready tier drifts at the path.
    let wrong = write(
        "wrong.yaml",
        &yaml.replace(
            "/health/ready?exclude=database",
            "/health/ready?exclude=node",
        ),
    );
    let out = zb_health(&["k8s", "--color=never", file, "--check", &wrong]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("excludes `node`, which is no check of the ready tier"),
        "{stderr}"
    );
    assert!(
        stderr.contains("remove `exclude=node` from the path"),
        "{stderr}"
    );
    // With the flag, a path that excludes nothing drifts too.
    let plain = write(
        "plain.yaml",
        &yaml.replace("/health/ready?exclude=database", "/health/ready"),
    );
    let out = zb_health(&[
        "k8s",
        "--color=never",
        file,
        "--readiness-exclude",
        "database",
        "--check",
        &plain,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("not what `--readiness-exclude` asks"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&scratch).expect("the temp dir is removable");

    // A name that is no ready probe is refused, with the ones there are;
    // a group's path takes no query.
    let out = zb_health(&[
        "k8s",
        "--color=never",
        file,
        "--readiness-exclude",
        "databse",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("`--readiness-exclude databse` names no probe of the ready tier"),
        "{stderr}"
    );
    assert!(stderr.contains("did you mean `database`?"), "{stderr}");
    let out = zb_health(&[
        "k8s",
        "--color=never",
        file,
        "--readiness-group",
        "canary",
        "--readiness-exclude",
        "database",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("`--readiness-exclude` with `--readiness-group`"));
}
