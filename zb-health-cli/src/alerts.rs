//! `zb-health alerts health.yaml`: the Prometheus alerting rules of one
//! service, built from what its manifest declares, every threshold from
//! the manifest's own timings.
//!
//! Each rule reads the metrics zb-health records (`spec/observability.md`)
//! through a selector of the service's series (`job="<service>"` unless
//! `--selector` says otherwise). The alerts on `ready` leave out a pod
//! that is starting, draining or in maintenance (`zb_health_starting`,
//! `zb_health_draining`, `zb_health_maintenance`), so a rolling update or
//! an operator's window pages no one. Every rule holds (`for:`) for what
//! the orchestrator takes to act on its condition plus two scrape
//! intervals ([`alert_hold`]), so a blip the kubelet never acts
//! on, a single bad scrape among them, fires none. The runbook of every
//! alert is in `spec/alerts.md`.

use std::fmt::Write as _;
use std::time::Duration;

use zb_health_spec::detection::alert_hold;
use zb_health_spec::manifest::{Manifest, ProbeKind};
use zb_health_spec::{Tag, drain};

use crate::args::AlertsArgs;
use crate::input::{self, Failure};
use crate::k8s;

/// One alerting rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    /// `alert:`, e.g. `ZbHealthNotReady`.
    pub name: &'static str,
    /// `expr:`.
    pub expr: String,
    /// `for:`.
    pub hold: Duration,
    /// `labels.severity`: `critical` pages, `warning` tickets.
    pub severity: &'static str,
    /// `annotations.summary`.
    pub summary: String,
    /// `annotations.description`.
    pub description: String,
    /// `annotations.runbook`: what to do, in a sentence or two; the longer
    /// runbook is the alert's section of `spec/alerts.md`.
    pub runbook: &'static str,
}

/// `zb-health alerts`: the manifest must pass `check`; the rules go to
/// stdout.
pub fn run(args: &AlertsArgs) -> Result<(), Failure> {
    let styled = args.color.color.styled();
    let source = input::read(&args.manifest)?;
    let manifest = crate::check::manifest(&source, styled)?;
    let selector = args
        .selector
        .clone()
        .unwrap_or_else(|| format!("job=\"{}\"", manifest.service.value));
    let alerts = alerts(&manifest, &selector, args.scrape_interval);
    print!("{}", yaml(&manifest, &alerts, &source.shown));
    Ok(())
}

/// How many status changes within the flap window make a flap: one bad
/// scrape between good ones is two, so a blip never is one.
const FLAP_CHANGES: u32 = 4;

/// The alerts that fit `m`, in a fixed order; `sel` selects the service's
/// series (`job="orders"`), which Prometheus scrapes every `scrape`.
pub fn alerts(m: &Manifest, sel: &str, scrape: Duration) -> Vec<Alert> {
    let service = &m.service.value;
    let detection = m.detection_time();
    // How long the kubelet takes to act on a failing liveness probe: the
    // one `zb-health k8s` prints, on Kubernetes' default period and
    // threshold.
    let liveness =
        Duration::from_secs(k8s::K8S_DEFAULT_PERIOD_SECONDS * k8s::K8S_DEFAULT_FAILURE_THRESHOLD);
    let grace = m
        .termination_grace_period
        .map_or(drain::KUBERNETES_DEFAULT_GRACE_PERIOD, |g| g.value);
    // Each alert holds for what the orchestrator takes to act, plus two
    // scrapes: one bad scrape, or a condition it never acts on, is silent.
    let hold = |acts_after: Duration| alert_hold(acts_after, detection, scrape);
    let ready_hold = hold(detection);
    let live_hold = hold(liveness);
    let drain_hold = hold(grace);
    // A hand-over (lease plus slack, or the detection time) is allowed
    // five detection times before no active node, or two, is an outage.
    let cluster_hold = hold(detection * 5);
    // Four changes must be visible: at least ten scrapes.
    let flap_window = (detection * 15).max(scrape * 10);
    let out_of_rotation = format!(
        "(zb_health_starting{{{sel}}} == 1 or zb_health_draining{{{sel}}} == 1 or zb_health_maintenance{{{sel}}} == 1)"
    );
    let mut alerts = vec![
        Alert {
            name: "ZbHealthNotReady",
            expr: format!(
                "zb_health_tier_status{{tier=\"ready\",{sel}}} == 0 unless on (instance) {out_of_rotation}"
            ),
            hold: ready_hold,
            severity: "warning",
            summary: format!("{service}: {{{{ $labels.instance }}}} is not ready"),
            description: format!(
                "/health/ready of {{{{ $labels.instance }}}} has answered 503 for at least {}, longer than the detection time ({}) and two scrapes, while neither starting, draining nor in maintenance: the kubelet has taken it out of the Service's endpoints.",
                seconds(ready_hold),
                seconds(detection)
            ),
            runbook: "Read the pod's /health/ready?verbose (or its history page): the failing entry names the dependency. Fix that dependency or the pod's connection to it; if only this pod fails it, restart the pod.",
        },
        Alert {
            name: "ZbHealthProbeFlapping",
            expr: format!(
                "changes(zb_health_probe_status{{{sel}}}[{}]) >= {FLAP_CHANGES}",
                seconds(flap_window)
            ),
            hold: ready_hold,
            severity: "warning",
            summary: format!("{service}: probe {{{{ $labels.probe }}}} is flapping"),
            description: format!(
                "Probe {{{{ $labels.probe }}}} on {{{{ $labels.instance }}}} has changed status at least {FLAP_CHANGES} times in every {} window for {} ({{{{ $value }}}} in the last).",
                seconds(flap_window),
                seconds(ready_hold)
            ),
            runbook: "Look at the probe's history for the pattern. Give it hysteresis (failure_threshold, failing_for) within the detection time, or fix the dependency that comes and goes.",
        },
        Alert {
            name: "ZbHealthDrainOutlivesGrace",
            expr: format!("zb_health_draining{{{sel}}} == 1"),
            hold: drain_hold,
            severity: "warning",
            summary: format!("{service}: {{{{ $labels.instance }}}} drains past its grace period"),
            description: format!(
                "{{{{ $labels.instance }}}} began draining at least {} ago, more than the termination grace period ({}) and two scrapes, and is still scraped: the orchestrator has not stopped it.",
                seconds(drain_hold),
                seconds(grace)
            ),
            runbook: "Something keeps the process alive after its drain: check that the orchestrator sends SIGKILL after terminationGracePeriodSeconds and that no hook blocks shutdown; compare `zb-health k8s --check`.",
        },
    ];
    if !m.lifecycle.watchdogs.is_empty() {
        alerts.push(Alert {
            name: "ZbHealthWatchdogStalled",
            expr: format!(
                "zb_health_tier_status{{tier=\"live\",{sel}}} == 0 unless on (instance) zb_health_restart_requested{{{sel}}} == 1"
            ),
            hold: live_hold,
            severity: "critical",
            summary: format!("{service}: a loop of {{{{ $labels.instance }}}} has stalled"),
            description: format!(
                "/healthz of {{{{ $labels.instance }}}} has answered 503 (a watchdog missed its deadline) for at least {}, longer than the liveness probe takes to restart it ({}) and two scrapes.",
                seconds(live_hold),
                seconds(liveness)
            ),
            runbook: "A loop of the process has stopped beating. Check that the pod has the livenessProbe `zb-health k8s` prints; read the logs for the stalled watchdog's name and the loop's last work.",
        });
    }
    if m.probes.iter().any(|p| p.restart_after.is_some()) {
        alerts.push(Alert {
            name: "ZbHealthRestartRequested",
            expr: format!("zb_health_restart_requested{{{sel}}} == 1"),
            hold: live_hold,
            severity: "warning",
            summary: format!("{service}: {{{{ $labels.instance }}}} asks for a restart that does not come"),
            description: format!(
                "{{{{ $labels.instance }}}} fails a shared dependency that its peers reach (restart_after) and has asked for a restart for at least {}, longer than the liveness probe takes ({}) and two scrapes.",
                seconds(live_hold),
                seconds(liveness)
            ),
            runbook: "The pod's connection to a shared dependency is broken while its peers reach it. Check that the livenessProbe is in place (`zb-health k8s --check`); restart the pod by hand if it is not.",
        });
    }
    if m.probes.iter().any(|p| p.shared.is_some_and(|s| s.value)) {
        alerts.push(Alert {
            name: "ZbHealthSharedDependencyDown",
            expr: format!(
                "sum by (probe) (zb_health_shared_failing{{{sel}}}) * 2 > count by (probe) (zb_health_shared_failing{{{sel}}})"
            ),
            hold: ready_hold,
            severity: "critical",
            summary: format!("{service}: shared dependency {{{{ $labels.probe }}}} is down"),
            description: format!(
                "{{{{ $labels.probe }}}} fails on a majority of the nodes for at least {}, longer than the detection time ({}) and two scrapes: an outage no pod can fix. The nodes stay ready (it fails open); fix the dependency.",
                seconds(ready_hold),
                seconds(detection)
            ),
            runbook: "The dependency itself is down (most nodes fail it): restore it. The pods stay in rotation on purpose; do not restart them.",
        });
    }
    if m.probes.iter().any(|p| {
        matches!(p.kind, ProbeKind::ActiveNode { .. })
            && p.effective_tags().is_some_and(|t| t.contains(Tag::Active))
    }) {
        alerts.push(Alert {
            name: "ZbHealthNoActiveNode",
            expr: format!("sum(zb_health_cluster_active{{{sel}}}) == 0"),
            hold: cluster_hold,
            severity: "critical",
            summary: format!("{service}: no active node"),
            description: format!(
                "No node of {service} has been the active node for {}: the work that needs one is not done.",
                seconds(cluster_hold)
            ),
            runbook: "Read /health/active?verbose on each pod: a minority partition, a step-down or a hand-over in progress says which. Restore the majority of the cluster, or end the step-down (`zb-health step-down URL --off`).",
        });
        alerts.push(Alert {
            name: "ZbHealthSeveralActiveNodes",
            expr: format!("sum(zb_health_cluster_active{{{sel}}}) > 1"),
            hold: cluster_hold,
            severity: "critical",
            summary: format!("{service}: {{{{ $value }}}} active nodes"),
            description: format!(
                "{{{{ $value }}}} nodes of {service} have called themselves active for {}: split brain; the writes may diverge.",
                seconds(cluster_hold)
            ),
            runbook: "Split brain: route writes to one node only (the oldest Up member), find the partition between the others, and check that every node has the same expected cluster size (CLUSTER_EXPECTED_SIZE).",
        });
    }
    alerts
}

/// Whole seconds, rounded up, as Prometheus writes a duration.
fn seconds(d: Duration) -> String {
    format!("{}s", drain::whole_seconds(d).as_secs())
}

/// The rule file: one group named after the service.
pub fn yaml(m: &Manifest, alerts: &[Alert], shown: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Prometheus alerting rules for `{}`, generated by `zb-health alerts {shown}`.\n# Regenerate when the manifest changes; the runbooks are in zb-health's spec/alerts.md.",
        m.service.value
    );
    out.push_str("groups:\n");
    let _ = writeln!(out, "  - name: zb-health-{}", m.service.value);
    out.push_str("    rules:\n");
    for a in alerts {
        let _ = writeln!(out, "      - alert: {}", a.name);
        let _ = writeln!(out, "        expr: {}", quoted(&a.expr));
        let _ = writeln!(out, "        for: {}", seconds(a.hold));
        out.push_str("        labels:\n");
        let _ = writeln!(out, "          severity: {}", a.severity);
        let _ = writeln!(out, "          service: {}", m.service.value);
        out.push_str("        annotations:\n");
        let _ = writeln!(out, "          summary: {}", quoted(&a.summary));
        let _ = writeln!(out, "          description: {}", quoted(&a.description));
        let _ = writeln!(out, "          runbook: {}", quoted(a.runbook));
    }
    out
}

/// A YAML double-quoted scalar.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}
