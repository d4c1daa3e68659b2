//! `zb-health k8s --check`: every probe setting of a Deployment or
//! StatefulSet that disagrees with the manifest, at its line:column.
//!
//! Missing settings read as Kubernetes reads them: no `timeoutSeconds` is
//! 1 s, no `terminationGracePeriodSeconds` is 30 s, no `httpGet.path` is `/`.

use zb_health_spec::manifest::{Location, Manifest};

use super::Plan;
use crate::args::K8sArgs;
use crate::input::{Failure, Source};
use crate::render::{Diagnostic, plural, render_all};
use crate::yaml::{self, Node};

mod pod;
mod probe;

use pod::{cluster_size, grace, host, pod_management, stall_restart};
use probe::ProbeCheck;

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
    /// K11: a container whose own `restartPolicy` is `Never`, with no
    /// restart rule on the stall exit's code, although the manifest ends
    /// the process on a stalled watchdog (`lifecycle.exit_on_stall`).
    StallRestart,
}

impl Check {
    /// Its code (`K1` … `K11`), its name, and what the manifest says that
    /// it is compared with.
    const fn parts(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Check::Path => (
                "K1",
                "probe-path",
                "the manifest's endpoints (ZB-1.1, ZB-5)",
            ),
            Check::Port => (
                "K2",
                "probe-port",
                "the port the tiers are served on (ZB-5)",
            ),
            Check::Timeout => ("K3", "probe-timeout", "the probe deadlines (BE-HLTH-006)"),
            Check::Startup => (
                "K4",
                "startup-probe",
                "the startup gates and watchdogs (BE-HLTH-004, BE-HLTH-002)",
            ),
            Check::Grace => ("K5", "grace-period", "the shutdown drain (BE-HLTH-005)"),
            Check::Probe => ("K6", "probe-tier", "the tiers (ZB-1.1)"),
            Check::PodManagement => (
                "K7",
                "pod-management",
                "the majority guards of the cluster probes (AT-5)",
            ),
            Check::Host => ("K8", "bind-host", "the address the service binds (HOST)"),
            Check::ClusterSize => (
                "K9",
                "cluster-size",
                "the cluster size of the majority guards (AT-5, ZB-2.3a)",
            ),
            Check::Detection => (
                "K10",
                "readiness-detection",
                "the detection time its caches and thresholds fit (BE-HLTH-006)",
            ),
            Check::StallRestart => (
                "K11",
                "stall-restart",
                "the exit of a stalled watchdog (BE-HLTH-002, KEP-5307)",
            ),
        }
    }

    /// The note under the diagnostic.
    pub fn note(self) -> String {
        let (code, name, what) = self.parts();
        // K7 and K9 read the workload's own spec, not its pod template.
        let subject = match self {
            Check::PodManagement => "StatefulSet",
            Check::ClusterSize => "workload",
            _ => "pod",
        };
        format!("check {code} ({name}) compares the {subject} with {what}")
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
            id: self.check.parts().0,
            message: &self.message,
            location: self.location,
            note: self.check.note(),
            help: &self.help,
        }
    }
}

/// Renders every drift found in `deployment`, then a summary naming the
/// manifest it disagrees with, on stderr (exit 1).
pub fn report(drifts: &[Drift], deployment: &Source, manifest: &str, styled: bool) -> Failure {
    let diagnostics: Vec<Diagnostic<'_>> = drifts.iter().map(Drift::diagnostic).collect();
    let count = drifts.len();
    let summary = format!(
        "`{}` disagrees with `{manifest}` in {count} place{}",
        deployment.shown,
        plural(count)
    );
    render_all(deployment, &diagnostics, &summary, styled)
}

/// A container's probe keys, in the order they are compared.
const PROBES: [&str; 3] = ["livenessProbe", "readinessProbe", "startupProbe"];

/// The container chosen, with its pod spec and where they are.
struct Target<'a> {
    /// The Deployment or StatefulSet document it is in.
    workload: &'a Node,
    pod: &'a Node,
    /// The pod spec's `spec` key, for settings it lacks.
    pod_loc: Location,
    container: &'a Node,
}

impl Target<'_> {
    /// The workload's `spec` key, for settings it lacks.
    fn workload_spec_loc(&self) -> Location {
        self.workload.key_loc("spec").unwrap_or(self.workload.loc)
    }
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
    options: &K8sArgs,
) -> Result<Vec<Drift>, String> {
    let docs = yaml::load_all(text)?;
    let pods: Vec<_> = docs
        .iter()
        .filter(|doc| {
            let kind = doc.get("kind").and_then(Node::as_str);
            matches!(kind, Some("Deployment" | "StatefulSet"))
        })
        .filter_map(|doc| {
            let template = doc.get("spec")?.get("template")?;
            Some((doc, template.get("spec")?, template.key_loc("spec")?))
        })
        .collect();
    if pods.is_empty() {
        return Err("no Deployment or StatefulSet with a pod template in it".into());
    }
    let all: Vec<Target<'_>> = pods
        .iter()
        .flat_map(|&(workload, pod, pod_loc)| {
            yaml::items(pod, "containers").iter().map(move |c| Target {
                workload,
                pod,
                pod_loc,
                container: c,
            })
        })
        .collect();
    let target = match options.container.as_deref() {
        Some(wanted) => all
            .iter()
            .find(|t| t.container.get("name").and_then(Node::as_str).unwrap_or("") == wanted)
            .ok_or_else(|| {
                format!("no container named `{wanted}` in a Deployment or StatefulSet")
            })?,
        None if all.len() == 1 => &all[0],
        None => all
            .iter()
            .find(|t| PROBES.iter().any(|k| t.container.get(k).is_some()))
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
    stall_restart(plan, target, &mut drifts);
    let expected = [
        Some(&plan.liveness),
        Some(&plan.readiness),
        plan.startup.as_ref(),
    ];
    for (key, wanted) in PROBES.into_iter().zip(expected) {
        match (target.container.get(key), wanted) {
            (Some(probe), Some(wanted)) => {
                let key_loc = target.container.key_loc(key).unwrap_or(probe.loc);
                ProbeCheck {
                    manifest,
                    plan,
                    target,
                    key,
                    key_loc,
                    probe,
                    wanted,
                    grpc_port_flag: options.grpc_port,
                    drifts: &mut drifts,
                }
                .run();
            }
            (None, Some(_)) if key == "startupProbe" => drifts.push(Drift {
                check: Check::Startup,
                location: at,
                message: format!(
                    "the container has no startupProbe, but the manifest declares {}",
                    plan.startup_waits()
                        .map(|(what, _, names)| format!("{what} ({names})"))
                        .collect::<Vec<_>>()
                        .join(" and ")
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
            _ => {}
        }
    }
    drifts.sort_by_key(|d| (d.location.line, d.location.column));
    Ok(drifts)
}
