//! The plan as YAML: a strategic-merge patch for a Deployment or
//! StatefulSet, with comments saying where every number comes from.
//!
//! Written by hand, not serialized: the comments are half the value, and a
//! fixed key order keeps the output deterministic.

use std::fmt::Write;
use std::time::Duration;

use super::{Handler, Plan, PortSource, ProbePlan};

/// `s` as a YAML scalar: plain when it is a simple word or path, else
/// double-quoted with escapes.
pub fn scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'))
        && !s.starts_with('-')
        && !matches!(
            s,
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
        )
        && s.parse::<f64>().is_err();
    if plain {
        return s.to_string();
    }
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A duration as a person reads it: `800ms`, `5s`, `1500ms`.
pub fn human(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// Writes each of `texts` on its own line, indented by `indent` spaces.
fn lines(o: &mut String, indent: usize, texts: &[String]) {
    for text in texts {
        let _ = writeln!(o, "{:indent$}{text}", "");
    }
}

/// The YAML that `zb-health k8s` prints for `plan`. `manifest_path` is
/// named in the header comment.
pub fn yaml(plan: &Plan, manifest_path: &str) -> String {
    let service = &plan.service;
    let head = [
        format!("# Kubernetes probes for `{service}`, from {manifest_path} (zb-health k8s)."),
        "# A strategic-merge patch for its Deployment or StatefulSet, e.g.".into(),
        format!("#   kubectl patch deployment {service} --patch-file probes.yaml"),
        "# `zb-health k8s --check deployment.yaml` compares an existing one with this.".into(),
        "spec:".into(),
        "  template:".into(),
        "    spec:".into(),
    ];
    // The pod spec's keys, at 6 spaces.
    let drain = format!(
        "drain_delay {} + shutdown {}",
        human(plan.drain_delay),
        human(plan.graceful_stop)
    );
    let mut pod = if plan.grace_stated {
        vec![format!(
            "# orchestrator.termination_grace_period; the drain ({drain}) fits in it (R18)."
        )]
    } else {
        vec![
            format!("# The drain ({drain}), rounded up: the service exits before SIGKILL."),
            "# Kubernetes' default of 30 s applies if this line is left out.".into(),
        ]
    };
    pod.extend([
        format!("terminationGracePeriodSeconds: {}", plan.grace_seconds),
        "containers:".into(),
        format!("  - name: {}", scalar(&plan.container)),
    ]);
    // The container's keys, at 10 spaces.
    let port = plan.port;
    let mut c = vec![
        "# No `lifecycle.preStop` sleep: on SIGTERM the service keeps serving for".into(),
        format!(
            "# drain_delay ({}) with readiness at 503, so the endpoints drop the pod while",
            human(plan.drain_delay)
        ),
        "# requests still succeed; a preStop sleep would only add to the grace period.".into(),
        format!(
            "# The active tier ({}) gets no probe: it is for routing (503 on a",
            plan.paths.active
        ),
        "# healthy standby), and a kubelet probe on it would restart or unready standbys.".into(),
        "# HOST: the service binds its ports to it (default 127.0.0.1), and the kubelet".into(),
        "# connects to the pod IP, so a pod binds every interface. Strategic merge merges".into(),
        "# `env` by name: this adds HOST and keeps the container's other variables.".into(),
        "env:".into(),
        "  - name: HOST".into(),
        "    value: \"0.0.0.0\"".into(),
        match plan.port_source {
            PortSource::Management => format!(
                "# Port {port}: the manifest's management port, so a busy app cannot delay the probes."
            ),
            PortSource::Flag => {
                format!("# Port {port}: --port (the app port is not in the manifest).")
            }
            PortSource::Default => format!(
                "# Port {port}: the default; the app port is not in the manifest (pass --port)."
            ),
        },
    ];
    if plan.timeout_stated {
        c.push(format!(
            "# timeoutSeconds {}: orchestrator.timeout, above every probe deadline (R5, BE-HLTH-006).",
            plan.timeout_seconds
        ));
    } else {
        let longest = match &plan.readiness.group {
            Some(g) => format!("health group `{}`", g.name),
            None => "ready-tier".to_string(),
        };
        c.extend([
            format!(
                "# timeoutSeconds {}: above the longest {longest} deadline ({}); state",
                plan.timeout_seconds,
                human(plan.readiness.deadline)
            ),
            "# orchestrator.timeout in the manifest to have the compiler prove it (BE-HLTH-006)."
                .into(),
        ]);
    }
    let live_note = liveness_note(plan);
    probe(&mut c, "livenessProbe", &plan.liveness, plan, live_note);
    // A group answers as the ready tier does, over its probes only, with
    // the drain's and the startup gates' 503 all the same.
    let mut ready_note: Vec<String> = plan.readiness.group.iter().map(|g| format!(
        "health group `{}` (--readiness-group): the ready tier's answer over its probes only.",
        g.name
    )).collect();
    let (period, threshold) = (plan.readiness.period, plan.readiness.failure_threshold);
    ready_note.push(if Duration::from_secs(period * threshold) <= plan.drain_delay {
        format!(
            "ready tier: its dependencies; {period}s × {threshold} ≤ drain_delay, so the drain's 503 is seen in time."
        )
    } else {
        format!(
            "ready tier: its dependencies; drain_delay ({}) is under {period}s × {threshold}: the endpoints drop the pod on termination anyway.",
            human(plan.drain_delay)
        )
    });
    probe(&mut c, "readinessProbe", &plan.readiness, plan, ready_note);
    if let Some(startup) = &plan.startup {
        let budget = startup.period * startup.failure_threshold;
        // One condition a line, so no comment runs long.
        let mut note: Vec<String> = plan
            .startup_waits()
            .enumerate()
            .map(|(i, (what, until, names))| {
                let lead = if i == 0 {
                    "startup path: 503 until"
                } else {
                    "and"
                };
                format!("{lead} the {what} ({names}) {until}")
            })
            .collect();
        if let Some(last) = note.last_mut() {
            last.push('.');
        }
        note.extend([
            "It reads no dependency: a database down at boot keeps the pod unready, never".to_string(),
            format!(
                "restarts it. Liveness waits for it; {}s × {} = {budget}s before the kubelet restarts.",
                startup.period, startup.failure_threshold
            ),
        ]);
        probe(&mut c, "startupProbe", startup, plan, note);
    }
    let mut o = String::new();
    lines(&mut o, 0, &head);
    lines(&mut o, 6, &pod);
    lines(&mut o, 10, &c);
    o
}

fn liveness_note(plan: &Plan) -> Vec<String> {
    let watchdogs = if plan.watchdogs.is_empty() {
        "no watchdogs".to_string()
    } else {
        format!("watchdogs: {}", plan.watchdogs.join(", "))
    };
    let mut note = vec![format!(
        "live tier: no dependency, never cached ({watchdogs}); a restart is the cure."
    )];
    if plan.exit_on_stall {
        note.extend([
            format!(
                "lifecycle.exit_on_stall: a stall ends the process (exit code {}) sooner;",
                zb_health_spec::drain::WATCHDOG_STALL_EXIT_CODE
            ),
            "the pod's restartPolicy Always restarts it, so no restart rule is needed.".into(),
        ]);
    }
    note
}

/// One probe of the container, under its `key`, with its `notes` as
/// comments.
fn probe(c: &mut Vec<String>, key: &str, p: &ProbePlan, plan: &Plan, notes: Vec<String>) {
    c.push(format!("{key}:"));
    c.extend(notes.iter().map(|note| format!("  # {note}")));
    match &p.handler {
        Handler::Http { path } => c.extend([
            "  httpGet:".into(),
            format!("    path: {}", scalar(path)),
            format!("    port: {}", plan.port),
        ]),
        Handler::Grpc { service } => {
            let tier = p.endpoint.as_str();
            let port = plan.grpc_port.unwrap_or(super::DEFAULT_GRPC_PORT);
            let source = if plan.grpc_port_stated {
                "--grpc-port"
            } else {
                "the gRPC default, an assumption (pass --grpc-port)"
            };
            c.extend([
                format!(
                    "  # --grpc-probes: grpc.health.v1 service {} answers from the {tier} tier (grpc.services);",
                    scalar(service)
                ),
                format!(
                    "  # port {port}: {source}. Over HTTP: httpGet {} on port {}.",
                    plan.paths.endpoint(p.endpoint),
                    plan.port
                ),
                "  grpc:".into(),
                format!("    port: {port}"),
                format!("    service: {}", scalar(service)),
            ]);
        }
    }
    c.extend([
        format!("  timeoutSeconds: {}", plan.timeout_seconds),
        format!("  periodSeconds: {}", p.period),
        format!("  failureThreshold: {}", p.failure_threshold),
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_are_plain_only_when_yaml_reads_them_back_as_the_same_string() {
        assert_eq!(scalar("/health/ready"), "/health/ready");
        assert_eq!(scalar(""), "\"\"");
        assert_eq!(scalar("plant.v1.Writes"), "plant.v1.Writes");
        assert_eq!(scalar("on"), "\"on\"");
        assert_eq!(scalar("8080"), "\"8080\"");
        assert_eq!(scalar("a b: \"c\""), "\"a b: \\\"c\\\"\"");
        assert_eq!(scalar("-x"), "\"-x\"");
    }
}
