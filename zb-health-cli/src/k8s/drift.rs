//! `zb-health k8s --check`: every probe setting of a Deployment or
//! StatefulSet that disagrees with the manifest, at its line:column.
//!
//! Missing settings read as Kubernetes reads them: no `timeoutSeconds` is
//! 1 s, no `terminationGracePeriodSeconds` is 30 s, no `httpGet.path` is `/`.

use std::time::Duration;

use zb_health_spec::manifest::{Location, Manifest, ProbeKind};
use zb_health_spec::{Endpoint, Tag};

use super::render::human;
use super::{
    Handler, K8S_DEFAULT_FAILURE_THRESHOLD, K8S_DEFAULT_GRACE_SECONDS, K8S_DEFAULT_PERIOD_SECONDS,
    K8S_DEFAULT_TIMEOUT_SECONDS, Plan, PortSource, ProbePlan, tier_of_grpc_service,
};
use crate::input::Source;
use crate::render::{Diagnostic, plural, render_all};
use crate::yaml::{self, Node, Value};

/// What a drift is about: its code, name and the requirement at stake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// K1: a path the manifest does not serve on that tier.
    Path,
    /// K2: a port the tiers are not served on, or a named port that is not
    /// the container's.
    Port,
    /// K3: a `timeoutSeconds` not above a probe deadline, or not the
    /// manifest's `orchestrator.timeout`.
    Timeout,
    /// K4: no `startupProbe` although the manifest declares startup gates
    /// or watchdogs.
    Startup,
    /// K5: a grace period shorter than the drain, or not the manifest's.
    Grace,
    /// K6: a missing probe, or one that reads no tier.
    Probe,
    /// K7: a StatefulSet whose pods start one at a time (`OrderedReady`)
    /// although a majority guard keeps the first one unready alone.
    PodManagement,
    /// K8: a container that does not set `HOST` to every interface, so the
    /// service binds 127.0.0.1 and the kubelet cannot reach the probes.
    Host,
    /// K9: `replicas` that disagree with the cluster size the majority
    /// guards count against: the manifest's `expected_size`, or the
    /// container's `CLUSTER_EXPECTED_SIZE`, which overrides it.
    ClusterSize,
    /// K10: a readiness `periodSeconds × failureThreshold` other than the
    /// manifest's detection time, which its caches, background results
    /// and failure thresholds fit (R19, R20) and within which the drain's
    /// 503 must be seen.
    Detection,
}

impl Check {
    /// `K1` … `K10`.
    pub const fn code(self) -> &'static str {
        match self {
            Check::Path => "K1",
            Check::Port => "K2",
            Check::Timeout => "K3",
            Check::Startup => "K4",
            Check::Grace => "K5",
            Check::Probe => "K6",
            Check::PodManagement => "K7",
            Check::Host => "K8",
            Check::ClusterSize => "K9",
            Check::Detection => "K10",
        }
    }

    /// The note under the diagnostic.
    pub fn note(self) -> String {
        let (name, what) = match self {
            Check::Path => ("probe-path", "the manifest's endpoints (ZB-1.1, ZB-5)"),
            Check::Port => ("probe-port", "the port the tiers are served on (ZB-5)"),
            Check::Timeout => ("probe-timeout", "the probe deadlines (BE-HLTH-006)"),
            Check::Startup => (
                "startup-probe",
                "the startup gates and watchdogs (BE-HLTH-004, BE-HLTH-002)",
            ),
            Check::Grace => ("grace-period", "the shutdown drain (BE-HLTH-005)"),
            Check::Probe => ("probe-tier", "the tiers (ZB-1.1)"),
            Check::PodManagement => (
                "pod-management",
                "the majority guards of the cluster probes (AT-5)",
            ),
            Check::Host => ("bind-host", "the address the service binds (HOST)"),
            Check::ClusterSize => (
                "cluster-size",
                "the cluster size of the majority guards (AT-5, ZB-2.3a)",
            ),
            Check::Detection => (
                "readiness-detection",
                "the detection time its caches and thresholds fit (BE-HLTH-006)",
            ),
        };
        // K7 and K9 read the workload's own spec, not its pod template.
        let subject = match self {
            Check::PodManagement => "StatefulSet",
            Check::ClusterSize => "workload",
            _ => "pod",
        };
        format!(
            "check {} ({name}) compares the {subject} with {what}",
            self.code()
        )
    }
}

/// One setting that disagrees with the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// Which check.
    pub check: Check,
    /// Where in the Kubernetes file.
    pub location: Location,
    /// What disagrees.
    pub message: String,
    /// What to write instead.
    pub help: String,
}

impl Drift {
    /// The drift as a rustc-style diagnostic: `error[K1]: …` at its place.
    fn diagnostic(&self) -> Diagnostic<'_> {
        Diagnostic {
            id: self.check.code(),
            message: &self.message,
            location: self.location,
            note: self.check.note(),
            help: &self.help,
        }
    }
}

/// Renders every drift found in `deployment`, then a summary naming the
/// manifest it disagrees with.
pub fn report(drifts: &[Drift], deployment: &Source, manifest: &str, styled: bool) -> String {
    let diagnostics: Vec<Diagnostic<'_>> = drifts.iter().map(Drift::diagnostic).collect();
    let count = drifts.len();
    let summary = format!(
        "`{}` disagrees with `{manifest}` in {count} place{}",
        deployment.shown,
        plural(count)
    );
    render_all(deployment, &diagnostics, &summary, styled)
}

/// The container chosen, with its pod spec and where they are.
struct Target<'a> {
    /// The Deployment or StatefulSet document it is in.
    workload: &'a Node,
    pod: &'a Node,
    /// The pod spec's `spec` key, for settings it lacks.
    pod_loc: Location,
    container: &'a Node,
}

/// Compares the Deployment or StatefulSet in `text` with `plan`.
///
/// # Errors
///
/// A message (exit 2) when the text is not YAML, holds no Deployment or
/// StatefulSet, or the container cannot be chosen.
pub fn check(
    manifest: &Manifest,
    plan: &Plan,
    text: &str,
    container: Option<&str>,
    grpc_port_flag: Option<u16>,
) -> Result<Vec<Drift>, String> {
    let docs = yaml::load_all(text)?;
    let mut pods = Vec::new();
    for doc in &docs {
        let kind = doc.get("kind").and_then(Node::as_str);
        if !matches!(kind, Some("Deployment" | "StatefulSet")) {
            continue;
        }
        let Some(template) = doc.get("spec").and_then(|s| s.get("template")) else {
            continue;
        };
        let (Some(pod), Some(pod_loc)) = (template.get("spec"), template.key_loc("spec")) else {
            continue;
        };
        pods.push((doc, pod, pod_loc));
    }
    if pods.is_empty() {
        return Err("no Deployment or StatefulSet with a pod template in it".into());
    }
    let all: Vec<Target<'_>> = pods
        .iter()
        .flat_map(|&(workload, pod, pod_loc)| {
            pod.get("containers")
                .map(Node::items)
                .unwrap_or_default()
                .iter()
                .map(move |c| Target {
                    workload,
                    pod,
                    pod_loc,
                    container: c,
                })
        })
        .collect();
    fn name_of<'a>(t: &Target<'a>) -> &'a str {
        t.container.get("name").and_then(Node::as_str).unwrap_or("")
    }
    let has_probes = |t: &Target<'_>| {
        ["livenessProbe", "readinessProbe", "startupProbe"]
            .iter()
            .any(|k| t.container.get(k).is_some())
    };
    let target = match container {
        Some(wanted) => all.iter().find(|t| name_of(t) == wanted).ok_or_else(|| {
            format!("no container named `{wanted}` in a Deployment or StatefulSet")
        })?,
        None if all.len() == 1 => &all[0],
        None => all
            .iter()
            .find(|t| has_probes(t))
            .ok_or("several containers and none with probes: name one with --container")?,
    };

    let mut drifts = Vec::new();
    let at = target
        .container
        .get("name")
        .map_or(target.container.loc, |n| n.loc);
    grace(plan, target, &mut drifts);
    pod_management(manifest, target, &mut drifts);
    cluster_size(manifest, target, &mut drifts);
    host(target, at, &mut drifts);
    let expected: [(&str, Option<&ProbePlan>); 3] = [
        ("livenessProbe", Some(&plan.liveness)),
        ("readinessProbe", Some(&plan.readiness)),
        ("startupProbe", plan.startup.as_ref()),
    ];
    for (key, wanted) in expected {
        match (target.container.get(key), wanted) {
            (Some(probe), Some(wanted)) => {
                let key_loc = target.container.key_loc(key).unwrap_or(probe.loc);
                one_probe(manifest, plan, target, key, key_loc, probe, wanted, grpc_port_flag, &mut drifts);
            }
            (Some(_), None) => {}
            (None, Some(_)) if key == "startupProbe" => drifts.push(Drift {
                check: Check::Startup,
                location: at,
                message: format!(
                    "the container has no startupProbe, but the manifest declares {}",
                    startup_waits(plan)
                ),
                help: format!(
                    "add a startupProbe on the startup path ({}) so the liveness probe waits for the start; `zb-health k8s` prints one",
                    plan.paths.started
                ),
            }),
            (None, Some(_)) if key == "readinessProbe" => drifts.push(Drift {
                check: Check::Probe,
                location: at,
                message: "the container has no readinessProbe, so its dependencies and the drain's 503 are never seen".into(),
                help: format!("add a readinessProbe on {}", plan.paths.ready),
            }),
            (None, Some(_)) if !plan.watchdogs.is_empty() => drifts.push(Drift {
                check: Check::Probe,
                location: at,
                message: format!(
                    "the container has no livenessProbe, so the watchdogs ({}) can never restart it",
                    plan.watchdogs.join(", ")
                ),
                help: format!("add a livenessProbe on {}", plan.paths.live),
            }),
            (None, _) => {}
        }
    }
    drifts.sort_by_key(|d| (d.location.line, d.location.column));
    Ok(drifts)
}

/// What the startup probe waits for, for the K4 message.
fn startup_waits(plan: &Plan) -> String {
    let mut waits = Vec::new();
    if !plan.startup_gates.is_empty() {
        waits.push(format!("startup gates ({})", plan.startup_gates.join(", ")));
    }
    if !plan.watchdogs.is_empty() {
        waits.push(format!("watchdogs ({})", plan.watchdogs.join(", ")));
    }
    waits.join(" and ")
}

fn grace(plan: &Plan, target: &Target<'_>, drifts: &mut Vec<Drift>) {
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
    let need_secs = super::ceil_seconds(needed);
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

/// The largest `expected_size` of a ready-tier probe whose majority guard
/// is on: alone, a node of such a cluster answers 503 on ready.
fn majority_guard_on_ready(manifest: &Manifest) -> Option<(String, u32)> {
    manifest
        .probes
        .iter()
        .filter(|p| p.effective_tags().is_none_or(|t| t.contains(Tag::Ready)))
        .filter_map(|p| {
            let guard = match &p.kind {
                ProbeKind::ClusterTransport { guard } | ProbeKind::ActiveNode { guard, .. } => {
                    guard.as_ref()?
                }
                _ => return None,
            };
            // One node is a majority of one.
            (guard.require_majority && guard.expected_size >= 2).then(|| {
                let name = p
                    .name
                    .as_ref()
                    .map_or_else(String::new, |n| n.value.clone());
                (name, guard.expected_size)
            })
        })
        .max_by_key(|(_, size)| *size)
}

/// K7: `OrderedReady` (the default) creates pod-1 only once pod-0 is ready,
/// and a majority guard keeps pod-0 unready until it sees a majority: the
/// StatefulSet would never grow past one pod.
fn pod_management(manifest: &Manifest, target: &Target<'_>, drifts: &mut Vec<Drift>) {
    if target.workload.get("kind").and_then(Node::as_str) != Some("StatefulSet") {
        return;
    }
    let Some((probe, size)) = majority_guard_on_ready(manifest) else {
        return;
    };
    let spec = target.workload.get("spec");
    let policy = spec.and_then(|s| s.get("podManagementPolicy"));
    let (location, said) = match policy {
        Some(n) if n.as_str() == Some("Parallel") => return,
        Some(n) => (n.loc, format!("`{}`", n.as_str().unwrap_or("?"))),
        None => (
            target
                .workload
                .key_loc("spec")
                .unwrap_or(target.workload.loc),
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

/// The largest `expected_size` of any cluster probe's guard, with the
/// probe's name: the cluster size the manifest counts majorities of.
fn stated_cluster_size(manifest: &Manifest) -> Option<(String, u32)> {
    manifest
        .probes
        .iter()
        .filter_map(|p| {
            let guard = match &p.kind {
                ProbeKind::ClusterTransport { guard } | ProbeKind::ActiveNode { guard, .. } => {
                    guard.as_ref()?
                }
                _ => return None,
            };
            let name = p
                .name
                .as_ref()
                .map_or_else(String::new, |n| n.value.clone());
            Some((name, guard.expected_size))
        })
        .max_by_key(|(_, size)| *size)
}

/// K9: the cluster size that the majority guards count against, the
/// container's `CLUSTER_EXPECTED_SIZE` (a literal `value`; it overrides the
/// manifest's) or else the manifest's `expected_size`, is not the
/// workload's `replicas` (Kubernetes' default 1 when absent). Fewer
/// replicas than a majority of it never elect an active node; more than
/// it, and both sides of a partition can count a majority: split brain.
fn cluster_size(manifest: &Manifest, target: &Target<'_>, drifts: &mut Vec<Drift>) {
    const VAR: &str = "CLUSTER_EXPECTED_SIZE";
    let env = target
        .container
        .get("env")
        .map(Node::items)
        .unwrap_or_default();
    let from_env = env
        .iter()
        .find(|e| e.get("name").and_then(Node::as_str) == Some(VAR))
        .and_then(|e| e.get("value"))
        .and_then(|v| {
            v.as_int()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        })
        .and_then(|n| u32::try_from(n).ok());
    let (size, source) = match (from_env, stated_cluster_size(manifest)) {
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
            target
                .workload
                .key_loc("spec")
                .unwrap_or(target.workload.loc),
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
fn host(target: &Target<'_>, at: Location, drifts: &mut Vec<Drift>) {
    let env = target
        .container
        .get("env")
        .map(Node::items)
        .unwrap_or_default();
    let Some(var) = env
        .iter()
        .find(|e| e.get("name").and_then(Node::as_str) == Some("HOST"))
    else {
        drifts.push(Drift {
            check: Check::Host,
            location: at,
            message: "the container does not set HOST, so the service binds 127.0.0.1 and the kubelet, which connects to the pod IP, never reaches its probes".into(),
            help: "add `env: [{ name: HOST, value: \"0.0.0.0\" }]`".into(),
        });
        return;
    };
    if var.get("valueFrom").is_some() {
        return;
    }
    let value = var.get("value");
    let text = value.and_then(Node::as_str).unwrap_or("");
    if text
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_unspecified())
    {
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

#[allow(clippy::too_many_arguments)]
fn one_probe(
    manifest: &Manifest,
    plan: &Plan,
    target: &Target<'_>,
    key: &str,
    key_loc: Location,
    probe: &Node,
    wanted: &ProbePlan,
    grpc_port_flag: Option<u16>,
    drifts: &mut Vec<Drift>,
) {
    let endpoint = wanted.endpoint;
    let want_path = wanted.http_path(&plan.paths);
    if let Some(http) = probe.get("httpGet") {
        let path_node = http.get("path");
        let path = path_node.and_then(Node::as_str).unwrap_or("/");
        let loc = path_node.map_or(http.loc, |n| n.loc);
        path_drift(plan, key, wanted, path, loc, drifts);
        match http.get("port") {
            Some(port) => port_drift(plan, target, key, port, drifts),
            None => drifts.push(Drift {
                check: Check::Port,
                location: http.loc,
                message: format!("the {key} has no port"),
                help: format!("set `port: {}`", plan.port),
            }),
        }
    } else if let Some(grpc) = probe.get("grpc") {
        let service_node = grpc.get("service");
        let service = service_node.and_then(Node::as_str).unwrap_or("");
        let loc = service_node.map_or(grpc.loc, |n| n.loc);
        if manifest.grpc.is_none() {
            drifts.push(Drift {
                check: Check::Probe,
                location: grpc.loc,
                message: format!(
                    "the {key} asks grpc.health.v1, but the manifest has no grpc section"
                ),
                help: format!("use httpGet on {want_path}, port {}", plan.port),
            });
        } else if let Some(group) = &wanted.group {
            drifts.push(Drift {
                check: Check::Path,
                location: grpc.loc,
                message: format!(
                    "the {key} asks grpc.health.v1, which does not serve health group `{}` (--readiness-group)",
                    group.name
                ),
                help: format!("use httpGet on {want_path}, port {}", plan.port),
            });
        } else if let Endpoint::Started = endpoint {
            drifts.push(Drift {
                check: Check::Path,
                location: grpc.loc,
                message: format!(
                    "the {key} asks grpc.health.v1, whose services answer from the tiers, not the startup path: a dependency could restart the pod"
                ),
                help: format!("use httpGet on {want_path}, port {}", plan.port),
            });
        } else if tier_of_grpc_service(manifest, service).map(Endpoint::Tier) != Some(endpoint) {
            let want = match &wanted.handler {
                Handler::Grpc { service } => {
                    format!("set `service: {}`", super::render::scalar(service))
                }
                Handler::Http { path } => format!("use httpGet on {path}"),
            };
            drifts.push(Drift {
                check: Check::Path,
                location: loc,
                message: format!(
                    "the {key} asks gRPC service `{service}`, which the manifest does not map to the {endpoint} tier"
                ),
                help: want,
            });
        }
        if let (Some(want), Some(port)) = (grpc_port_flag, grpc.get("port"))
            && port.as_int() != Some(i128::from(want))
        {
            drifts.push(Drift {
                check: Check::Port,
                location: port.loc,
                message: format!("the {key} asks gRPC on a port other than --grpc-port {want}"),
                help: format!("set `port: {want}`"),
            });
        }
    } else if let Some(tcp) = probe.get("tcpSocket") {
        drifts.push(Drift {
            check: Check::Probe,
            location: tcp.loc,
            message: format!("the {key} only opens a TCP connection, so it reads no tier"),
            help: format!("use httpGet on {want_path}, port {}", plan.port),
        });
    } else if let Some(exec) = probe.get("exec") {
        // `zb-health probe URL` is checked like an httpGet; other commands
        // are the app's business.
        let command = exec.get("command").map(Node::items).unwrap_or_default();
        let is_probe = command.iter().any(|n| n.as_str() == Some("probe"));
        let url = command
            .iter()
            .find(|n| n.as_str().is_some_and(|s| s.contains("://")));
        if let (true, Some(url_node)) = (is_probe, url) {
            let text = url_node.as_str().unwrap_or_default();
            if let Ok(url) = crate::probe::parse_url(text) {
                let path = url.target.split('?').next().unwrap_or("/");
                path_drift(plan, key, wanted, path, url_node.loc, drifts);
                if plan.port_source != PortSource::Default && url.port != plan.port {
                    drifts.push(Drift {
                        check: Check::Port,
                        location: url_node.loc,
                        message: format!(
                            "the {key} probes port {}, not {}",
                            url.port,
                            port_why(plan)
                        ),
                        help: format!("probe port {}", plan.port),
                    });
                }
            }
        }
    }
    timeout_drift(plan, key, key_loc, probe, wanted, drifts);
    if key == "readinessProbe" {
        detection_drift(key, key_loc, probe, wanted, drifts);
    }
}

/// K10: the kubelet notices a changed readiness answer within
/// `periodSeconds × failureThreshold`. The manifest sized its caches,
/// background results and failure thresholds for its own detection time
/// (R19, R20), and its drain for being seen within it: a longer one lets
/// the drain end unseen, a shorter one lets a cache hide a change longer
/// than the kubelet takes to act.
fn detection_drift(
    key: &str,
    key_loc: Location,
    probe: &Node,
    wanted: &ProbePlan,
    drifts: &mut Vec<Drift>,
) {
    let read = |name: &str, default: u64| match probe.get(name) {
        Some(n) => (n.as_int().unwrap_or(0), Some(n.loc), ""),
        None => (i128::from(default), None, " (Kubernetes' default)"),
    };
    let (period, period_loc, period_said) = read("periodSeconds", K8S_DEFAULT_PERIOD_SECONDS);
    let (failures, failures_loc, failures_said) =
        read("failureThreshold", K8S_DEFAULT_FAILURE_THRESHOLD);
    let seen = period.saturating_mul(failures);
    let want = i128::from(wanted.period * wanted.failure_threshold);
    if seen == want {
        return;
    }
    let why = if seen > want {
        "longer: the drain's 503 can end unseen, and the kubelet is slower than the manifest's caches and failure thresholds assume"
    } else {
        "shorter: a cached or background result, or a failure threshold, sized for the manifest's can hide a change longer than the kubelet takes to act"
    };
    drifts.push(Drift {
        check: Check::Detection,
        location: period_loc.or(failures_loc).unwrap_or(key_loc),
        message: format!(
            "the {key} notices a change within periodSeconds {period}{period_said} × failureThreshold {failures}{failures_said} = {seen} s, but the manifest's detection time is {want} s: {why}"
        ),
        help: format!(
            "set `periodSeconds: {}` and `failureThreshold: {}` (from `lifecycle.drain_delay`), or change the drain delay",
            wanted.period, wanted.failure_threshold
        ),
    });
}

fn port_why(plan: &Plan) -> String {
    match plan.port_source {
        PortSource::Management => format!("the manifest's management port {}", plan.port),
        _ => format!("--port {}", plan.port),
    }
}

/// The endpoint a probe reads, for a message: `the live tier`, `the
/// startup path`.
fn shown(endpoint: Endpoint) -> String {
    match endpoint {
        Endpoint::Tier(tag) => format!("the {tag} tier"),
        Endpoint::Started => "the startup path".to_string(),
    }
}

/// K1 on a path: the probe reads `path`, and `wanted` is what it should
/// read. A liveness or startup probe on the ready or active tier is the
/// worst case: the kubelet restarts the pod over a dependency.
fn path_drift(
    plan: &Plan,
    key: &str,
    probe: &ProbePlan,
    path: &str,
    loc: Location,
    drifts: &mut Vec<Drift>,
) {
    let (wanted, want) = (probe.endpoint, probe.http_path(&plan.paths));
    if path == want {
        return;
    }
    let restarts = matches!(wanted, Endpoint::Tier(Tag::Live) | Endpoint::Started);
    let why = match plan.paths.endpoint_of(path) {
        Some(Endpoint::Tier(Tag::Active)) if restarts => {
            "the active tier: a standby (503 there by design) or a failing dependency would restart the pod".to_string()
        }
        Some(Endpoint::Tier(Tag::Active)) => {
            "the active tier, which is for routing: it answers 503 on a healthy standby".to_string()
        }
        Some(Endpoint::Tier(Tag::Ready)) if restarts => {
            "the ready tier: a failing dependency would restart the pod (ZB-1.3)".to_string()
        }
        Some(Endpoint::Tier(Tag::Live)) => {
            "the live tier, which never sees the dependencies or the drain".to_string()
        }
        Some(Endpoint::Started) => {
            "the startup path, which turns 200 once and then never sees the dependencies, the drain or a stall".to_string()
        }
        Some(other) => shown(other),
        None => "a path the manifest does not serve".to_string(),
    };
    drifts.push(Drift {
        check: Check::Path,
        location: loc,
        message: format!("the {key} checks `{path}`, {why}"),
        help: match &probe.group {
            Some(g) => format!("set `path: {want}` (health group `{}`)", g.name),
            None => format!("set `path: {want}` ({})", shown(wanted)),
        },
    });
}

fn port_drift(plan: &Plan, target: &Target<'_>, key: &str, port: &Node, drifts: &mut Vec<Drift>) {
    let resolved = match &port.value {
        Value::Int(n) => Some(*n),
        Value::Str(name) => {
            let found = target
                .container
                .get("ports")
                .map(Node::items)
                .unwrap_or_default()
                .iter()
                .find(|p| p.get("name").and_then(Node::as_str) == Some(name.as_str()))
                .and_then(|p| p.get("containerPort"))
                .and_then(Node::as_int);
            if found.is_none() {
                drifts.push(Drift {
                    check: Check::Port,
                    location: port.loc,
                    message: format!(
                        "the {key} names port `{name}`, which the container does not declare"
                    ),
                    help: format!(
                        "set `port: {}`, or a name from the container's `ports`",
                        plan.port
                    ),
                });
                return;
            }
            found
        }
        _ => None,
    };
    if plan.port_source == PortSource::Default {
        // The app port is not in the manifest, and none was given.
        return;
    }
    if resolved != Some(i128::from(plan.port)) {
        let shown = resolved.map_or_else(|| "an unknown port".to_string(), |p| format!("port {p}"));
        drifts.push(Drift {
            check: Check::Port,
            location: port.loc,
            message: format!("the {key} asks {shown}, not {}", port_why(plan)),
            help: format!("set `port: {}`", plan.port),
        });
    }
}

fn timeout_drift(
    plan: &Plan,
    key: &str,
    key_loc: Location,
    probe: &Node,
    wanted: &ProbePlan,
    drifts: &mut Vec<Drift>,
) {
    let node = probe.get("timeoutSeconds");
    let (seconds, location, said) = match node {
        Some(n) => (n.as_int().unwrap_or(0), n.loc, String::new()),
        None => (
            i128::from(K8S_DEFAULT_TIMEOUT_SECONDS),
            key_loc,
            " (no timeoutSeconds: Kubernetes' default)".to_string(),
        ),
    };
    let help = format!("timeoutSeconds: {}", plan.timeout_seconds);
    let as_duration = u64::try_from(seconds).map_or(Duration::ZERO, Duration::from_secs);
    if as_duration <= wanted.deadline {
        drifts.push(Drift {
            check: Check::Timeout,
            location,
            message: format!(
                "the {key} times out after {seconds} s{said}, not above the longest probe deadline of {} ({})",
                shown(wanted.endpoint),
                human(wanted.deadline)
            ),
            help: format!("set `{help}`, so the kubelet waits for the tier's answer"),
        });
    } else if plan.timeout_stated && seconds != i128::from(plan.timeout_seconds) {
        drifts.push(Drift {
            check: Check::Timeout,
            location,
            message: format!(
                "the {key} times out after {seconds} s{said}, but the manifest's orchestrator.timeout is {} s",
                plan.timeout_seconds
            ),
            help: format!("set `{help}`, or change the manifest: the compiler proves every deadline below it"),
        });
    }
}
