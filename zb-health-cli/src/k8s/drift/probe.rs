//! One probe of the container against the manifest: its path (K1), port
//! (K2), timeout (K3) and detection time (K10).

use std::time::Duration;

use zb_health_spec::manifest::{Location, Manifest};
use zb_health_spec::{Endpoint, Tag};

use super::super::render::human;
use super::super::{
    DEFAULT_GRPC_PORT, Handler, K8S_DEFAULT_FAILURE_THRESHOLD, K8S_DEFAULT_PERIOD_SECONDS,
    K8S_DEFAULT_TIMEOUT_SECONDS, Plan, PortSource, ProbePlan, grpc_service, tier_of_grpc_service,
};
use super::{Check, Drift, Target};
use crate::yaml::{Node, Value, items};

/// One probe of the chosen container, with what it is compared against;
/// its drifts go to `drifts`.
pub(super) struct ProbeCheck<'a> {
    /// The manifest.
    pub manifest: &'a Manifest,
    /// What it resolves to.
    pub plan: &'a Plan,
    /// The container the probe is in.
    pub target: &'a Target<'a>,
    /// `livenessProbe`, `readinessProbe` or `startupProbe`.
    pub key: &'a str,
    /// Where `key` is, for a setting the probe lacks.
    pub key_loc: Location,
    /// The probe as the Deployment writes it.
    pub probe: &'a Node,
    /// The probe as the plan wants it.
    pub wanted: &'a ProbePlan,
    /// `--grpc-port`.
    pub grpc_port_flag: Option<u16>,
    /// Where its drifts go.
    pub drifts: &'a mut Vec<Drift>,
}

impl ProbeCheck<'_> {
    /// Every check of the probe: its handler's path and port, its timeout,
    /// and for readiness its detection time.
    pub(super) fn run(mut self) {
        let (manifest, plan, key, wanted) = (self.manifest, self.plan, self.key, self.wanted);
        let probe = self.probe;
        let endpoint = wanted.endpoint;
        let want_path = wanted.http_path(&plan.paths);
        let use_http = || format!("use httpGet on {want_path}, port {}", plan.port);
        if let Some(http) = probe.get("httpGet") {
            let path_node = http.get("path");
            let path = path_node.and_then(Node::as_str).unwrap_or("/");
            let loc = path_node.map_or(http.loc, |n| n.loc);
            self.path(path, loc);
            if let Some(protocol) = http.get("protocol")
                && protocol.as_str() == Some("HTTP2")
            {
                // KEP-5999: the kubelet would speak HTTP/2 with prior
                // knowledge, which the service's actix server does not answer
                // (tests/tests/h2c.rs; spec/conflicts.md).
                self.drifts.push(Drift {
                    check: Check::Probe,
                    location: protocol.loc,
                    message: format!(
                        "the {key} asks HTTP/2 cleartext (`protocol: HTTP2`), which the service does not answer (HTTP/1.1 only), so it always fails"
                    ),
                    help: "remove `protocol: HTTP2` (HTTP/1.1 is the kubelet's default)".into(),
                });
            }
            match http.get("port") {
                Some(port) => self.port(port),
                None => self.drifts.push(Drift {
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
            let unserved = match (&manifest.grpc, &wanted.group, endpoint) {
                (None, ..) => Some((Check::Probe, "but the manifest has no grpc section".into())),
                (_, Some(group), _) => Some((
                    Check::Path,
                    format!(
                        "which does not serve health group `{}` (--readiness-group)",
                        group.name
                    ),
                )),
                (_, None, Endpoint::Started) => {
                    let why = "whose services answer from the tiers, not the startup path: a dependency could restart the pod";
                    Some((Check::Path, why.into()))
                }
                _ => None,
            };
            if let Some((check, why)) = unserved {
                self.drifts.push(Drift {
                    check,
                    location: grpc.loc,
                    message: format!("the {key} asks grpc.health.v1, {why}"),
                    help: use_http(),
                });
            } else if tier_of_grpc_service(manifest, service).map(Endpoint::Tier) != Some(endpoint)
            {
                // The name the manifest maps to the tier, whichever form the
                // plan prints (a matching gRPC probe is consistent without
                // `--grpc-probes` too).
                let mapped = match endpoint {
                    Endpoint::Tier(tier) => grpc_service(manifest, tier),
                    Endpoint::Started => None,
                };
                let want = match (mapped, &wanted.handler) {
                    (Some(service), _) => {
                        format!("set `service: {}`", super::super::render::scalar(&service))
                    }
                    (None, Handler::Http { path }) => format!("use httpGet on {path}"),
                    (None, Handler::Grpc { .. }) => use_http(),
                };
                self.drifts.push(Drift {
                    check: Check::Path,
                    location: loc,
                    message: format!(
                        "the {key} asks gRPC service `{service}`, which the manifest does not map to the {endpoint} tier"
                    ),
                    help: want,
                });
            }
            let flag = self.grpc_port_flag;
            match (grpc.get("port"), flag) {
                // Kubernetes requires it: the API server refuses the pod.
                (None, _) => self.drifts.push(Drift {
                    check: Check::Port,
                    location: grpc.loc,
                    message: format!("the {key} asks gRPC on no port"),
                    help: format!("set `port: {}`", flag.unwrap_or(DEFAULT_GRPC_PORT)),
                }),
                (Some(port), Some(want)) if port.as_int() != Some(i128::from(want)) => {
                    self.drifts.push(Drift {
                        check: Check::Port,
                        location: port.loc,
                        message: format!(
                            "the {key} asks gRPC on a port other than --grpc-port {want}"
                        ),
                        help: format!("set `port: {want}`"),
                    });
                }
                _ => {}
            }
        } else if let Some(tcp) = probe.get("tcpSocket") {
            self.drifts.push(Drift {
                check: Check::Probe,
                location: tcp.loc,
                message: format!("the {key} only opens a TCP connection, so it reads no tier"),
                help: use_http(),
            });
        } else if let Some(exec) = probe.get("exec") {
            // `zb-health probe URL` is checked like an httpGet; other commands
            // are the app's business.
            let command = items(exec, "command");
            let is_probe = command.iter().any(|n| n.as_str() == Some("probe"));
            let url = command
                .iter()
                .find_map(|n| Some((n, n.as_str().filter(|s| s.contains("://"))?)));
            if let Some((url_node, text)) = url.filter(|_| is_probe)
                && let Ok(url) = crate::probe::parse_url(text)
            {
                self.path(&url.target, url_node.loc);
                if plan.port_source != PortSource::Default && url.port != plan.port {
                    self.drifts.push(Drift {
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
        self.timeout();
        if key == "readinessProbe" {
            self.detection();
        }
    }

    /// K10: the kubelet notices a changed readiness answer within
    /// `periodSeconds × failureThreshold`. The manifest sized its caches,
    /// background results and failure thresholds for its own detection time
    /// (R19, R20), and its drain for being seen within it: a longer one lets
    /// the drain end unseen, a shorter one lets a cache hide a change longer
    /// than the kubelet takes to act.
    fn detection(&mut self) {
        let (key, wanted, probe) = (self.key, self.wanted, self.probe);
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
        self.drifts.push(Drift {
            check: Check::Detection,
            location: period_loc.or(failures_loc).unwrap_or(self.key_loc),
            message: format!(
                "the {key} notices a change within periodSeconds {period}{period_said} × failureThreshold {failures}{failures_said} = {seen} s, but the manifest's detection time is {want} s: {why}"
            ),
            help: format!(
                "set `periodSeconds: {}` and `failureThreshold: {}` (from `lifecycle.drain_delay`), or change the drain delay",
                wanted.period, wanted.failure_threshold
            ),
        });
    }

    /// K1 on a path: the probe reads `path`, and `wanted` is what it should
    /// read. A liveness or startup probe on the ready or active tier is the
    /// worst case: the kubelet restarts the pod over a dependency.
    fn path(&mut self, path: &str, loc: Location) {
        let (plan, key, probe) = (self.plan, self.key, self.wanted);
        let (wanted, want) = (probe.endpoint, probe.http_path(&plan.paths));
        // A query of `?exclude=` (an emergency) is accepted when it names
        // checks of the endpoint; the path itself must be the endpoint's.
        let (base, query) = path.split_once('?').unwrap_or((path, ""));
        if base == probe.base_path(&plan.paths) {
            self.exclude(query, loc);
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
        self.drifts.push(Drift {
            check: Check::Path,
            location: loc,
            message: format!("the {key} checks `{path}`, {why}"),
            help: match &probe.group {
                Some(g) => format!("set `path: {want}` (health group `{}`)", g.name),
                None => format!("set `path: {want}` ({})", shown(wanted)),
            },
        });
    }

    /// K1 on a path's `?exclude=`: every name a check of the endpoint (a
    /// probe of the ready tier, a watchdog of `live`), and the names
    /// `--readiness-exclude` asks for, when it does.
    fn exclude(&mut self, query: &str, loc: Location) {
        let (plan, key, probe) = (self.plan, self.key, self.wanted);
        let asked = zb_health_spec::query::TierQuery::parse(query).exclude;
        let known: &[String] = match probe.endpoint {
            Endpoint::Tier(Tag::Ready) if probe.group.is_none() => &plan.ready_probes,
            Endpoint::Tier(Tag::Live) => &plan.watchdogs,
            _ => &[],
        };
        for name in asked.iter().filter(|n| !known.contains(n)) {
            self.drifts.push(Drift {
                check: Check::Path,
                location: loc,
                message: format!(
                    "the {key} excludes `{name}`, which is no check of {}",
                    shown(probe.endpoint)
                ),
                help: format!("remove `exclude={name}` from the path"),
            });
        }
        let mut asked_sorted = asked.clone();
        asked_sorted.sort();
        let mut wanted = probe.exclude.clone();
        wanted.sort();
        if !probe.exclude.is_empty() && asked_sorted != wanted {
            self.drifts.push(Drift {
                check: Check::Path,
                location: loc,
                message: format!(
                    "the {key} excludes [{}], not what `--readiness-exclude` asks",
                    asked.join(", ")
                ),
                help: format!("set `path: {}`", probe.http_path(&plan.paths)),
            });
        }
    }

    fn port(&mut self, port: &Node) {
        let (plan, key) = (self.plan, self.key);
        let resolved = match &port.value {
            Value::Int(n) => Some(*n),
            Value::Str(name) => {
                let found = items(self.target.container, "ports")
                    .iter()
                    .find(|p| p.get("name").and_then(Node::as_str) == Some(name.as_str()))
                    .and_then(|p| p.get("containerPort"))
                    .and_then(Node::as_int);
                if found.is_none() {
                    self.drifts.push(Drift {
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
            let shown =
                resolved.map_or_else(|| "an unknown port".to_string(), |p| format!("port {p}"));
            self.drifts.push(Drift {
                check: Check::Port,
                location: port.loc,
                message: format!("the {key} asks {shown}, not {}", port_why(plan)),
                help: format!("set `port: {}`", plan.port),
            });
        }
    }

    fn timeout(&mut self) {
        let (plan, key, wanted) = (self.plan, self.key, self.wanted);
        let node = self.probe.get("timeoutSeconds");
        let (seconds, location, said) = match node {
            Some(n) => (n.as_int().unwrap_or(0), n.loc, String::new()),
            None => (
                i128::from(K8S_DEFAULT_TIMEOUT_SECONDS),
                self.key_loc,
                " (no timeoutSeconds: Kubernetes' default)".to_string(),
            ),
        };
        let help = format!("timeoutSeconds: {}", plan.timeout_seconds);
        let as_duration = u64::try_from(seconds).map_or(Duration::ZERO, Duration::from_secs);
        if as_duration <= wanted.deadline {
            self.drifts.push(Drift {
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
            self.drifts.push(Drift {
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
