//! The README's deployment, done as its `zb-health k8s` output says, with
//! the real tools: kubectl (Debian's `kubernetes-client`, or any on PATH)
//! builds a Deployment and applies the printed patch with a strategic
//! merge (`--local`, no cluster), `kubernetes-validate` (PyPI) checks the
//! result against the Kubernetes schemas in strict mode, and `--check`
//! finds it consistent with the manifest.
//!
//! `tests/run.sh` installs both tools (`scripts/k8s-tools.sh`). Without
//! them this test fails and says so: a skipped acceptance test would hide
//! a missing install step.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{root, text, zb_health};

/// A Kubernetes version whose schemas `kubernetes-validate` bundles; the
/// probes' `grpc` handler needs 1.24 or later.
const KUBERNETES_VERSION: &str = "1.32.0";

const INSTALL: &str = "run tests/run.sh, or scripts/k8s-tools.sh alone, which installs kubectl (Debian's kubernetes-client) and kubernetes-validate (PyPI, in target/venv)";

/// `kubernetes-validate`: `ZB_HEALTH_K8S_VALIDATE`, else the venv that
/// `scripts/k8s-tools.sh` makes.
fn validator() -> PathBuf {
    let path = std::env::var_os("ZB_HEALTH_K8S_VALIDATE").map_or_else(
        || root().join("target/venv/bin/kubernetes-validate"),
        PathBuf::from,
    );
    assert!(
        path.is_file(),
        "no kubernetes-validate at {}: {INSTALL}",
        path.display()
    );
    path
}

fn run(program: &Path, args: &[&str], dir: &Path) -> Output {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{} cannot run ({e}): {INSTALL}", program.display()));
    assert!(
        out.status.success(),
        "{} {args:?} failed: {}{}",
        program.display(),
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// The container the patch targets: its only `- name:` line.
fn container_of(patch: &str) -> String {
    let names: Vec<&str> = patch
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("- name: "))
        .filter(|n| *n != "HOST")
        .collect();
    assert_eq!(names.len(), 1, "one container in the patch: {names:?}");
    names[0].to_string()
}

/// Renders `manifest`'s patch with `flags`, applies it to a fresh
/// Deployment with kubectl, validates the result and checks it against the
/// manifest with the same flags.
fn deploy(manifest: &str, flags: &[&str], scratch: &Path) -> String {
    let kubectl = PathBuf::from("kubectl");
    let validate = validator();
    let mut args = vec!["k8s", manifest];
    args.extend_from_slice(flags);
    let out = zb_health(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let patch = text(&out.stdout);
    std::fs::write(scratch.join("patch.yaml"), &patch).expect("writable");

    // `kubectl create deployment` names the container after the image.
    let container = container_of(&patch);
    let image = format!("example.invalid/{container}:1");
    let deployment = run(
        &kubectl,
        &[
            "create",
            "deployment",
            &container,
            "--image",
            &image,
            "--dry-run=client",
            "-o",
            "yaml",
        ],
        scratch,
    );
    std::fs::write(scratch.join("deploy.yaml"), &deployment.stdout).expect("writable");
    let patched = run(
        &kubectl,
        &[
            "patch",
            "--local",
            "--type",
            "strategic",
            "-f",
            "deploy.yaml",
            "--patch-file",
            "patch.yaml",
            "-o",
            "yaml",
        ],
        scratch,
    );
    let patched_path = scratch.join("patched.yaml");
    std::fs::write(&patched_path, &patched.stdout).expect("writable");

    run(
        &validate,
        &[
            "--kubernetes-version",
            KUBERNETES_VERSION,
            "--strict",
            "--quiet",
            "patched.yaml",
        ],
        scratch,
    );

    let patched_arg = patched_path.to_str().expect("a UTF-8 temp dir");
    let mut args = vec!["k8s", manifest, "--check", patched_arg];
    args.extend_from_slice(flags);
    let out = zb_health(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{manifest}: {}",
        text(&out.stderr)
    );
    assert_eq!(
        text(&out.stdout),
        format!("{patched_arg}: consistent with {manifest}\n")
    );
    text(&patched.stdout)
}

#[test]
fn the_printed_patch_applies_with_kubectl_validates_and_checks_consistent() {
    let scratch = std::env::temp_dir().join(format!("zb-health-kubectl-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("the temp dir is writable");

    // The README's example: no gates or watchdogs, so no startup probe;
    // httpGet, although it serves grpc.health.v1 (that is --grpc-probes).
    let tour = deploy("examples/tour/health.yaml", &[], &scratch);
    assert!(
        !tour.contains("grpc:") && !tour.contains("startupProbe"),
        "{tour}"
    );

    // --grpc-probes: Kubernetes' native gRPC probes, on the names the
    // manifest maps to the tiers.
    let grpc = deploy(
        "zb-health-cli/tests/fixtures/k8s/grpc-probes.yaml",
        &["--grpc-probes", "--grpc-port", "9000"],
        &scratch,
    );
    assert!(
        grpc.contains("service: gateway.v1.Live") && grpc.contains("port: 9000"),
        "{grpc}"
    );

    // Gates and a watchdog: the startup probe reads the startup path, on
    // the management port.
    let full = deploy(
        "zb-health-cli/tests/fixtures/k8s/health.yaml",
        &[],
        &scratch,
    );
    let startup = full.split("startupProbe:").nth(1).expect("a startup probe");
    assert!(startup.contains("path: /health/started"), "{full}");

    std::fs::remove_dir_all(&scratch).expect("the temp dir is removable");
}
