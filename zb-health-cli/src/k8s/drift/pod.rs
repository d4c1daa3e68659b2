//! The pod's own settings against the manifest: the grace period (K5),
//! the StatefulSet's pod management (K7), `HOST` (K8), `replicas` (K9) and
//! the restart after a stall exit (K11).

use zb_health_spec::drain::{WATCHDOG_STALL_EXIT_CODE, whole_seconds};
use zb_health_spec::manifest::{Location, Manifest, ProbeDecl, ProbeKind};
use zb_health_spec::{MajorityGuard, Tag};

use super::super::render::human;
use super::super::{K8S_DEFAULT_GRACE_SECONDS, Plan};
use super::{Check, Drift, Target};
use crate::yaml::{Node, items};

pub(super) fn grace(plan: &Plan, target: &Target<'_>, drifts: &mut Vec<Drift>) {
    let node = target.pod.get("terminationGracePeriodSeconds");
    let (seconds, location, said) = match node {
        Some(n) => (n.as_int(), n.loc, String::new()),
        None => (
            Some(i128::from(K8S_DEFAULT_GRACE_SECONDS)),
            target.pod_loc,
            " (no terminationGracePeriodSeconds: Kubernetes' default)".to_string(),
        ),
    };
    let needed = plan.drain_delay + plan.graceful_stop;
    let need_secs = whole_seconds(needed).as_secs();
    let help = format!("terminationGracePeriodSeconds: {}", plan.grace_seconds);
    match seconds {
        Some(s) if s < i128::from(need_secs) => drifts.push(Drift {
            check: Check::Grace,
            location,
            message: format!(
                "the grace period is {s} s{said}, shorter than the drain: drain_delay {} + shutdown {} = {}",
                human(plan.drain_delay),
                human(plan.graceful_stop),
                human(needed)
            ),
            help: format!("set `{help}`; the kubelet would SIGKILL the service while requests are in flight"),
        }),
        Some(s) if plan.grace_stated && s != i128::from(plan.grace_seconds) => drifts.push(Drift {
            check: Check::Grace,
            location,
            message: format!(
                "the grace period is {s} s{said}, but the manifest's orchestrator.termination_grace_period is {} s",
                plan.grace_seconds
            ),
            help: format!("set `{help}`, or change the manifest: the service sizes its graceful stop from it"),
        }),
        Some(_) => {}
        None => drifts.push(Drift {
            check: Check::Grace,
            location,
            message: "terminationGracePeriodSeconds is not a whole number".into(),
            help: format!("set `{help}`"),
        }),
    }
}

/// The largest `expected_size` of a cluster probe's majority guard that
/// `keep` accepts, with the probe's name.
fn largest_guard(
    manifest: &Manifest,
    keep: impl Fn(&ProbeDecl, &MajorityGuard) -> bool,
) -> Option<(String, u32)> {
    manifest
        .probes
        .iter()
        .filter_map(|p| {
            let (ProbeKind::ClusterTransport { guard } | ProbeKind::ActiveNode { guard, .. }) =
                &p.kind
            else {
                return None;
            };
            let guard = guard.as_ref().filter(|g| keep(p, g))?;
            let name = p
                .name
                .as_ref()
                .map_or_else(String::new, |n| n.value.clone());
            Some((name, guard.expected_size))
        })
        .max_by_key(|(_, size)| *size)
}

/// K7: `OrderedReady` (the default) creates pod-1 only once pod-0 is ready,
/// and a majority guard keeps pod-0 unready until it sees a majority: the
/// StatefulSet would never grow past one pod.
pub(super) fn pod_management(manifest: &Manifest, target: &Target<'_>, drifts: &mut Vec<Drift>) {
    if target.workload.get("kind").and_then(Node::as_str) != Some("StatefulSet") {
        return;
    }
    // A ready-tier probe whose majority guard is on: alone, a node of such
    // a cluster answers 503 on ready (one node is a majority of one).
    let Some((probe, size)) = largest_guard(manifest, |p, guard| {
        super::super::may_be_on(p, Tag::Ready) && guard.require_majority && guard.expected_size >= 2
    }) else {
        return;
    };
    let policy = target
        .workload
        .get("spec")
        .and_then(|s| s.get("podManagementPolicy"));
    let (location, said) = match policy {
        Some(n) if n.as_str() == Some("Parallel") => return,
        Some(n) => (n.loc, format!("`{}`", n.as_str().unwrap_or("?"))),
        None => (
            target.workload_spec_loc(),
            "no podManagementPolicy: Kubernetes' default `OrderedReady`".to_string(),
        ),
    };
    let majority = size / 2 + 1;
    drifts.push(Drift {
        check: Check::PodManagement,
        location,
        message: format!(
            "the StatefulSet starts its pods one at a time ({said}), but probe `{probe}` keeps a pod unready until it sees {majority} of {size} members, so pod-0 never becomes ready and pod-1 is never created"
        ),
        help: "set `podManagementPolicy: Parallel`, so every pod starts at once and the majority can form".into(),
    });
}

/// K9: the cluster size that the majority guards count against, the
/// container's `CLUSTER_EXPECTED_SIZE` (a literal `value`; it overrides the
/// manifest's) or else the manifest's `expected_size`, is not the
/// workload's `replicas` (Kubernetes' default 1 when absent). Fewer
/// replicas than a majority of it never elect an active node; more than
/// it, and both sides of a partition can count a majority: split brain.
pub(super) fn cluster_size(manifest: &Manifest, target: &Target<'_>, drifts: &mut Vec<Drift>) {
    const VAR: &str = "CLUSTER_EXPECTED_SIZE";
    let from_env = env_var(target, VAR)
        .and_then(|e| e.get("value"))
        .and_then(|v| {
            v.as_int()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        })
        .and_then(|n| u32::try_from(n).ok());
    let (size, source) = match (from_env, largest_guard(manifest, |_, _| true)) {
        (Some(size), _) => (size, format!("the container's {VAR}")),
        (None, Some((probe, size))) => (
            size,
            format!("the manifest's `expected_size` (probe `{probe}`)"),
        ),
        (None, None) => return,
    };
    let spec = target.workload.get("spec");
    let node = spec.and_then(|s| s.get("replicas"));
    let (replicas, location, said) = match node {
        Some(n) => (n.as_int(), n.loc, String::new()),
        None => (
            Some(1),
            target.workload_spec_loc(),
            " (no replicas: Kubernetes' default)".to_string(),
        ),
    };
    let Some(replicas) = replicas else {
        return;
    };
    if replicas == i128::from(size) {
        return;
    }
    let majority = size / 2 + 1;
    let effect = if replicas < i128::from(majority) {
        format!(
            "{replicas} pods never reach a majority of {size} ({majority}), so no pod ever answers active"
        )
    } else if replicas < i128::from(size) {
        format!(
            "a majority of {size} is {majority}, so losing {} of the {replicas} pods leaves no active node",
            replicas - i128::from(majority) + 1
        )
    } else {
        format!(
            "a majority of {size} is {majority}, so both sides of a partition of {replicas} pods can count one and each answer active"
        )
    };
    drifts.push(Drift {
        check: Check::ClusterSize,
        location,
        message: format!(
            "the workload runs {replicas} replicas{said}, but {source} is {size}: {effect}"
        ),
        help: format!(
            "set `replicas: {size}`, or set {VAR} in the container's env to the replica count (it overrides the manifest's `expected_size`)"
        ),
    });
}

/// K8: the services bind `HOST` (default 127.0.0.1), and the kubelet
/// connects to the pod IP, so a pod must bind every interface. A `HOST`
/// from `valueFrom` is not known here and not judged.
pub(super) fn host(target: &Target<'_>, at: Location, drifts: &mut Vec<Drift>) {
    let Some(var) = env_var(target, "HOST") else {
        drifts.push(Drift {
            check: Check::Host,
            location: at,
            message: "the container does not set HOST, so the service binds 127.0.0.1 and the kubelet, which connects to the pod IP, never reaches its probes".into(),
            help: "add `env: [{ name: HOST, value: \"0.0.0.0\" }]`".into(),
        });
        return;
    };
    let value = var.get("value");
    let text = value.and_then(Node::as_str).unwrap_or("");
    let every = text
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_unspecified());
    if every || var.get("valueFrom").is_some() {
        return;
    }
    let message = if text.trim().is_empty() {
        "HOST is empty, so the service binds its default, 127.0.0.1, and the kubelet, which connects to the pod IP, never reaches its probes".to_string()
    } else {
        format!(
            "HOST is `{text}`, not every interface, so the kubelet, which connects to the pod IP, cannot count on reaching the probes"
        )
    };
    drifts.push(Drift {
        check: Check::Host,
        location: value.map_or(var.loc, |n| n.loc),
        message,
        help: "set `value: \"0.0.0.0\"` (or `\"::\"`), every interface".into(),
    });
}

/// K11: with `lifecycle.exit_on_stall`, a stalled watchdog ends the process
/// with [`WATCHDOG_STALL_EXIT_CODE`]. The pod's `restartPolicy` is `Always`
/// in a Deployment or StatefulSet, so that restarts it; a container's own
/// `restartPolicy: Never` (KEP-5307) would leave it stopped, unless one of
/// its `restartPolicyRules` restarts it on that code.
pub(super) fn stall_restart(plan: &Plan, target: &Target<'_>, drifts: &mut Vec<Drift>) {
    let never = target.container.get("restartPolicy");
    let Some(policy) = never.filter(|p| plan.exit_on_stall && p.as_str() == Some("Never")) else {
        return;
    };
    let code = i128::from(WATCHDOG_STALL_EXIT_CODE);
    let restarts = items(target.container, "restartPolicyRules")
        .iter()
        .any(|rule| {
            let Some(codes) = rule.get("exitCodes") else {
                return false;
            };
            let listed = items(codes, "values")
                .iter()
                .any(|v| v.as_int() == Some(code));
            rule.get("action").and_then(Node::as_str) == Some("Restart")
                && match codes.get("operator").and_then(Node::as_str) {
                    Some("In") => listed,
                    Some("NotIn") => !listed,
                    _ => false,
                }
        });
    if restarts {
        return;
    }
    drifts.push(Drift {
        check: Check::StallRestart,
        location: policy.loc,
        message: format!(
            "the container's restartPolicy is Never, so when a stalled watchdog ends the process with exit code {code} (lifecycle.exit_on_stall) it stays stopped"
        ),
        help: format!(
            "add `restartPolicyRules: [{{ action: Restart, exitCodes: {{ operator: In, values: [{code}] }} }}]` (KEP-5307), or leave out `restartPolicy: Never`"
        ),
    });
}

/// The container's `env` entry named `name`.
fn env_var<'a>(target: &Target<'a>, name: &str) -> Option<&'a Node> {
    items(target.container, "env")
        .iter()
        .find(|e| e.get("name").and_then(Node::as_str) == Some(name))
}
