//! What `manifest!`'s `install` does, written once for every manifest:
//! [`ManifestWiring`] holds the facts of a health manifest that wire a
//! registry and its server, and [`ManifestWiring::install`] puts them into
//! a registry in a fixed order, all or none.
//!
//! The macro generates only data: the manifest's settings as calls on
//! [`ManifestWiring`], the probe registrations, and the typed handles of
//! the declared startup gates and watchdogs. Code that wires a registry
//! without a manifest calls the same function.

#[cfg(feature = "cluster")]
use std::sync::Arc;
use std::time::Duration;

use zb_health_spec::{Disclosure, EndpointPaths, ResponseFormat, Tag};

#[cfg(feature = "cluster")]
use crate::cluster::ClusterView;
#[cfg(feature = "grpc")]
use crate::grpc::server::GrpcHealth;
use crate::http::{HealthGroup, ZbHealth, ZbHealthEndpoints};
use crate::lifecycle::{Drain, Heartbeat, StartupGate};
use crate::registry::{HealthRegistry, ProbeRegistration, RegistryError};
use crate::server::ZbHealthServer;

/// One of the two ports the tiers are served on. Each has its own bodies:
/// the management port is where an operator looks, so the manifest may
/// disclose more there (`management.disclosure`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Port {
    /// The port the application's own routes are on.
    Application,
    /// `management.port`, when the manifest declares one.
    Management,
}

/// How one port renders the tiers: each tier's disclosure level, and the
/// level a bearer token unlocks there.
#[derive(Clone, Debug, Default)]
struct PortStyle {
    disclosure: [Option<Disclosure>; 3],
    authorized: [Option<Disclosure>; 3],
}

/// The manifest's `history` section.
#[derive(Clone, Debug)]
struct HistoryPages {
    path: String,
    ui: bool,
    ui_path: String,
    application_port: bool,
}

/// The facts of a health manifest that wire a registry and its server,
/// gathered by the calls that `manifest!` generates (one per setting the
/// manifest states) and put into a registry by [`install`](Self::install).
///
/// ```
/// use std::time::Duration;
/// use zb_health::install::ManifestWiring;
/// use zb_health::lifecycle::Drain;
/// use zb_health::spec::EndpointPaths;
/// use zb_health::HealthRegistry;
///
/// let registry = HealthRegistry::new();
/// let installed = ManifestWiring::new(
///     "billing",
///     EndpointPaths::default(),
///     Duration::from_secs(4),
///     Drain::new(Duration::from_secs(5)),
/// )
/// .orchestrator_timeout(Some(Duration::from_secs(1)))
/// .install(&registry, Vec::new(), [("poller", Duration::from_secs(2))], ["warm-up"])?;
/// let [heartbeat] = installed.heartbeats;
/// let [warm_up] = installed.startup_gates;
/// warm_up.ready();
/// heartbeat.retire();
/// # Ok::<(), zb_health::RegistryError>(())
/// ```
#[must_use = "nothing is installed until `install` is called"]
pub struct ManifestWiring {
    service: String,
    paths: EndpointPaths,
    detection_time: Duration,
    drain: Drain,
    orchestrator_timeout: Option<Duration>,
    failure_log_interval: Option<Duration>,
    webhook: Option<String>,
    termination_grace_period: Option<Duration>,
    management_port: Option<u16>,
    format: Option<ResponseFormat>,
    ports: [PortStyle; 2],
    application_addresses: bool,
    cluster_ready: Option<String>,
    groups: Vec<HealthGroup>,
    history: Option<HistoryPages>,
    #[cfg(feature = "cluster")]
    cluster_view: Option<Arc<dyn ClusterView>>,
    #[cfg(feature = "grpc")]
    grpc: Option<GrpcOf>,
}

/// Builds the `grpc.health.v1` server over the registry once the probes
/// are in it: the manifest type's generated `grpc` function.
#[cfg(feature = "grpc")]
type GrpcOf = fn(&HealthRegistry) -> Result<GrpcHealth, zb_health_spec::SpecError>;

/// What [`ManifestWiring::install`] returns: the server of everything the
/// manifest declares, and one handle per declared startup gate and
/// watchdog, in manifest order. `manifest!` moves them into the fields of
/// its typed `NAMEInstalled`.
#[must_use = "the service stays not-ready until every startup gate is signalled"]
pub struct Installed<const W: usize, const G: usize> {
    /// The tiers, the management port, `grpc.health.v1` and the drain,
    /// serving the registry.
    pub server: ZbHealthServer,
    /// One heartbeat per watchdog, in the order given.
    pub heartbeats: [Heartbeat; W],
    /// One gate per startup gate, in the order given.
    pub startup_gates: [StartupGate; G],
}

impl ManifestWiring {
    /// The settings every manifest has: its `service` name, its endpoint
    /// paths, the orchestrator's detection time it implies (R19, R20), and
    /// its drain.
    pub fn new(
        service: impl Into<String>,
        paths: EndpointPaths,
        detection_time: Duration,
        drain: Drain,
    ) -> Self {
        Self {
            service: service.into(),
            paths,
            detection_time,
            drain,
            orchestrator_timeout: None,
            failure_log_interval: None,
            webhook: None,
            termination_grace_period: None,
            management_port: None,
            format: None,
            ports: Default::default(),
            application_addresses: false,
            cluster_ready: None,
            groups: Vec::new(),
            history: None,
            #[cfg(feature = "cluster")]
            cluster_view: None,
            #[cfg(feature = "grpc")]
            grpc: None,
        }
    }

    /// `orchestrator.timeout`: every probe of the registry must answer
    /// within it (R5), also those registered later in code.
    pub fn orchestrator_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.orchestrator_timeout = timeout;
        self
    }

    /// `orchestrator.termination_grace_period`: the drain must fit in it
    /// (R18); the install refuses a drain that does not.
    pub fn termination_grace_period(mut self, grace: Option<Duration>) -> Self {
        self.termination_grace_period = grace;
        self
    }

    /// `observability.failure_log_interval` (BE-HLTH-008): a registry-wide
    /// setting, like the orchestrator timeout.
    pub fn failure_log_interval(mut self, interval: Duration) -> Self {
        self.failure_log_interval = Some(interval);
        self
    }

    /// `observability.webhook`: POST tier and probe transitions to `url`
    /// ([`WebhookPublisher`](crate::publish::WebhookPublisher), named with
    /// the service). `HEALTH_WEBHOOK_URL`, when set, overrides it at
    /// install: the environment of a deployment wins over the build's.
    pub fn webhook(mut self, url: impl Into<String>) -> Self {
        self.webhook = Some(url.into());
        self
    }

    /// `management.port`: the server serves the tiers on their own server
    /// there too.
    pub fn management_port(mut self, port: Option<u16>) -> Self {
        self.management_port = port;
        self
    }

    /// `endpoints.format`, on both ports.
    pub fn format(mut self, format: ResponseFormat) -> Self {
        self.format = Some(format);
        self
    }

    /// A tier's disclosure level on one port (`responses.disclosure`,
    /// `management.disclosure`).
    pub fn disclosure(mut self, port: Port, tier: Tag, level: Disclosure) -> Self {
        self.ports[port as usize].disclosure[tier as usize] = Some(level);
        self
    }

    /// The level a bearer token unlocks for a tier on one port; the token
    /// itself comes from `HEALTH_TOKEN` at run time, never from the
    /// manifest.
    pub fn authorized(mut self, port: Port, tier: Tag, level: Disclosure) -> Self {
        self.ports[port as usize].authorized[tier as usize] = Some(level);
        self
    }

    /// Whether the application port's bodies show cluster members'
    /// addresses; the management port's always do.
    pub fn application_cluster_addresses(mut self, shown: bool) -> Self {
        self.application_addresses = shown;
        self
    }

    /// `responses.cluster_ready`: the membership entry whose answer the
    /// ready body reports for the cluster.
    pub fn cluster_ready(mut self, membership_entry: impl Into<String>) -> Self {
        self.cluster_ready = Some(membership_entry.into());
        self
    }

    /// A health group, served on both ports (a group is served wherever
    /// the tiers are).
    pub fn group(mut self, group: HealthGroup) -> Self {
        self.groups.push(group);
        self
    }

    /// The `history` section: the pages are on the management port, and
    /// on the application port too with `application_port` (R26). The
    /// history names the service by the manifest's `service`.
    pub fn history(
        mut self,
        path: impl Into<String>,
        ui: bool,
        ui_path: impl Into<String>,
        application_port: bool,
    ) -> Self {
        self.history = Some(HistoryPages {
            path: path.into(),
            ui,
            ui_path: ui_path.into(),
            application_port,
        });
        self
    }

    /// The cluster view every cluster probe reads. The install also makes
    /// it where shared probes compare their verdicts, to fail open in a
    /// shared outage (BE-HLTH-003), and where the history reads the
    /// cluster; and it reads `CLUSTER_EXPECTED_SIZE` first, refusing a bad
    /// value by name before anything is registered.
    #[cfg(feature = "cluster")]
    pub fn cluster_view(mut self, view: Arc<dyn ClusterView>) -> Self {
        self.cluster_view = Some(view);
        self
    }

    /// The `grpc` section: `grpc` builds the `grpc.health.v1` server over
    /// the registry once the probes are in it, and the server serves it.
    #[cfg(feature = "grpc")]
    pub fn grpc(mut self, grpc: GrpcOf) -> Self {
        self.grpc = Some(grpc);
        self
    }

    /// Puts the manifest into `registry`, and returns its server with the
    /// lifecycle handles.
    ///
    /// In this order: reads `CLUSTER_EXPECTED_SIZE` (with a cluster view)
    /// and `HEALTH_WEBHOOK_URL` (a transition webhook, see
    /// [`crate::publish`]; else the manifest's `observability.webhook`);
    /// sets the orchestrator timeout and the detection time, so probes
    /// registered later in code are held to them too, and the failure log
    /// interval; registers the `watchdogs`, all or none; adds every probe
    /// of `registrations`, all or none; builds both ports' endpoints, the
    /// drain and the server; and last declares the `startup_gates`.
    ///
    /// Errors if the registry already holds a probe or watchdog of the
    /// same name (R3), a probe whose deadline does not fit the timeout or
    /// another orchestrator timeout (R5), a probe whose cached or
    /// background result would reach the detection time (R19), or a
    /// setting of the environment it reads is bad: facts only the running
    /// process knows. A failed install may leave the registry-wide
    /// settings set, but adds no probe, watchdog or gate.
    pub fn install<const W: usize, const G: usize>(
        self,
        registry: &HealthRegistry,
        registrations: Vec<ProbeRegistration>,
        watchdogs: [(&str, Duration); W],
        startup_gates: [&str; G],
    ) -> Result<Installed<W, G>, RegistryError> {
        #[cfg(feature = "cluster")]
        if let Some(view) = &self.cluster_view {
            crate::cluster::expected_size_from_env().map_err(RegistryError::Setting)?;
            if let Some(verdicts) = ClusterView::shared_verdicts(Arc::clone(view)) {
                registry.set_shared_verdicts(verdicts);
            }
        }
        // Read before anything changes, so a bad URL stops the install.
        let webhook =
            match crate::publish::WebhookPublisher::from_env().map_err(RegistryError::Setting)? {
                Some(from_env) => Some(from_env),
                None => self.manifest_webhook()?,
            };
        if let Some(timeout) = self.orchestrator_timeout {
            registry.set_orchestrator_timeout(timeout)?;
        }
        registry.set_detection_time(self.detection_time)?;
        if let Some(interval) = self.failure_log_interval {
            registry.set_failure_log_interval(interval);
        }
        if self.history.is_some() {
            registry.set_service_name(self.service.as_str());
            #[cfg(feature = "cluster")]
            if let Some(view) = &self.cluster_view {
                registry.set_cluster_view(Arc::clone(view));
            }
        }
        // Fallible steps first: the watchdogs, all or none, then the probes
        // and the server; a failure retires the heartbeats, so nothing is
        // left behind (a heartbeat dropped unretired is a dead loop).
        let heartbeats = registry.lifecycle().watchdogs(watchdogs)?;
        let server = match self.serve(registry, registrations) {
            Ok(server) => server,
            Err(error) => {
                heartbeats.into_iter().for_each(Heartbeat::retire);
                return Err(error);
            }
        };
        if let Some(webhook) = webhook {
            registry.add_transition_publisher(webhook.service(self.service.as_str()));
        }
        // Named, so the startup path can say which gate it waits for.
        let startup_gates = startup_gates.map(|name| registry.lifecycle().startup_gate_named(name));
        Ok(Installed {
            server,
            heartbeats,
            startup_gates,
        })
    }

    /// The manifest's `observability.webhook`, which the manifest reader
    /// has checked; one given in code is checked here.
    fn manifest_webhook(&self) -> Result<Option<crate::publish::WebhookPublisher>, RegistryError> {
        let Some(url) = &self.webhook else {
            return Ok(None);
        };
        crate::publish::WebhookPublisher::new(url)
            .map(Some)
            .map_err(|reason| {
                let violation = zb_health_spec::Violation {
                    rule: zb_health_spec::Rule::ValueType,
                    location: (),
                    message: format!("`observability.webhook`: {reason}"),
                    help: "write the receiver's URL as `http://host:port/path`".into(),
                };
                RegistryError::Rules(vec![violation].into())
            })
    }

    /// The probes, both ports' endpoints, the drain and the server.
    fn serve(
        &self,
        registry: &HealthRegistry,
        registrations: Vec<ProbeRegistration>,
    ) -> Result<ZbHealthServer, RegistryError> {
        registry.add_all(registrations)?;
        let endpoints = self.endpoints(registry, Port::Application)?;
        let management = self.endpoints(registry, Port::Management)?;
        let drain = match self.termination_grace_period {
            Some(grace) => self.drain.within_grace_period(grace)?,
            None => self.drain,
        };
        let server = ZbHealthServer::new(registry.clone(), endpoints, drain)
            .manifest_management_port(self.management_port)
            .management_endpoints(management);
        // The operator's step-down goes through the manifest's view.
        #[cfg(feature = "cluster")]
        let server = match &self.cluster_view {
            Some(view) => server.step_down(crate::cluster::StepDown::new(Arc::clone(view))),
            None => server,
        };
        #[cfg(feature = "grpc")]
        let server = match self.grpc {
            Some(grpc) => server.grpc(grpc(registry)?),
            None => server,
        };
        Ok(server)
    }

    /// One port's endpoints: its own bodies (its disclosure), the cluster
    /// addresses only where the manifest shows them, the groups, and the
    /// history where it is served.
    fn endpoints(
        &self,
        registry: &HealthRegistry,
        port: Port,
    ) -> Result<ZbHealthEndpoints, RegistryError> {
        let style = &self.ports[port as usize];
        let mut health = ZbHealth::new(registry.clone()).paths(self.paths.clone());
        if let Some(format) = self.format {
            health = health.format(format);
        }
        for tier in Tag::ALL {
            if let Some(level) = style.disclosure[tier as usize] {
                health = health.tier_disclosure(tier, level);
            }
            if let Some(level) = style.authorized[tier as usize] {
                health = health.tier_authorized(tier, level);
            }
        }
        if let Some(entry) = &self.cluster_ready {
            health = health.cluster_ready(entry.as_str());
        }
        health = health.cluster_addresses(match port {
            Port::Application => self.application_addresses,
            Port::Management => true,
        });
        for group in &self.groups {
            health = health.group(group.clone());
        }
        if let Some(h) = &self.history
            && (port == Port::Management || h.application_port)
        {
            health = health
                .history(true)
                .history_path(h.path.as_str())
                .history_ui(h.ui)
                .history_ui_path(h.ui_path.as_str());
        }
        Ok(health.build()?)
    }
}
