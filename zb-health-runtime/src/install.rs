//! What `manifest!`'s `install` does, written once for every manifest:
//! [`Settings`] holds every setting of a health manifest, the registry's,
//! the endpoints' and the server's, and [`Settings::install`] puts them
//! into a registry in a fixed order, all or none.
//!
//! The macro generates only data: the manifest's settings as assignments
//! to [`Settings`], the probe registrations, and the typed handles of
//! the declared startup gates and watchdogs. Code that wires a registry
//! without a manifest calls the same function.

#[cfg(feature = "cluster")]
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "cluster")]
use crate::cluster::ClusterView;
#[cfg(feature = "grpc")]
use crate::grpc::server::GrpcHealth;
use crate::http::{EndpointSettings, ZbHealth};
use crate::lifecycle::{Drain, Heartbeat, StartupGate};
use crate::registry::{HealthRegistry, HealthRegistryBuilder, ProbeRegistration, RegistryError};
use crate::server::{Origin, ZbHealthServer};

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

/// Every setting a health manifest states, as plain data: the registry's
/// ([`HealthRegistryBuilder`]), each port's endpoints
/// ([`EndpointSettings`]) and the server's, gathered by the assignments
/// `manifest!` generates (one per setting the manifest states) and put
/// into a registry by [`install`](Self::install), the one function that
/// reads them. Each setting's setter, default and check are written once,
/// on the part that holds it; `HOST`, `PORT` and the other variables of
/// the run time are read by [`ZbHealthServer::from_env`].
///
/// ```
/// use std::time::Duration;
/// use zb_health::install::Settings;
/// use zb_health::lifecycle::Drain;
/// use zb_health::prelude::HealthRegistry;
///
/// let registry = HealthRegistry::new();
/// let mut settings = Settings::new("billing", Drain::new(Duration::from_secs(5)));
/// settings.registry.orchestrator_timeout = Some(Duration::from_secs(1));
/// settings.registry.detection_time = Some(Duration::from_secs(4));
/// let installed =
///     settings.install(&registry, Vec::new(), [("poller", Duration::from_secs(2))], ["warm-up"])?;
/// let [heartbeat] = installed.heartbeats;
/// let [warm_up] = installed.startup_gates;
/// warm_up.ready();
/// heartbeat.retire();
/// # Ok::<(), zb_health::prelude::RegistryError>(())
/// ```
#[must_use = "nothing is installed until `install` is called"]
pub struct Settings {
    /// `service`: names the service in the history and to the webhook.
    pub service: String,
    /// `orchestrator.timeout`, the detection time the drain delay implies
    /// (R19, R20) and `observability.failure_log_interval`: set on the
    /// registry, so probes registered later in code are held to them too.
    pub registry: HealthRegistryBuilder,
    /// Each port's endpoints, indexed by [`Port`]: the paths, the format,
    /// `responses.disclosure` and `management.disclosure`, the levels a
    /// bearer token unlocks (the token itself comes from `HEALTH_TOKEN`
    /// at run time, never from the manifest), the cluster addresses, the
    /// groups and the history.
    pub endpoints: [EndpointSettings; 2],
    /// `lifecycle`: the drain.
    pub drain: Drain,
    /// `orchestrator.termination_grace_period`: the drain must fit in it
    /// (R18); the install refuses a drain that does not.
    pub termination_grace_period: Option<Duration>,
    /// `management.port`, which `MANAGEMENT_PORT` overrides.
    pub management_port: Option<u16>,
    /// `observability.webhook`: POST tier and probe transitions to this URL
    /// ([`WebhookPublisher`](crate::publish::WebhookPublisher), named with
    /// the service). `HEALTH_WEBHOOK_URL`, when set, overrides it at
    /// install: the environment of a deployment wins over the build's.
    pub webhook: Option<String>,
    /// The cluster view every cluster probe reads. The install also makes
    /// it where shared probes compare their verdicts, to fail open in a
    /// shared outage (BE-HLTH-003), where the history reads the cluster
    /// and where the operator's step-down goes; and it reads
    /// `CLUSTER_EXPECTED_SIZE` first, refusing a bad value by name before
    /// anything is registered.
    #[cfg(feature = "cluster")]
    pub cluster_view: Option<Arc<dyn ClusterView>>,
    /// The `grpc` section: builds the `grpc.health.v1` server over the
    /// registry once the probes are in it, and the server serves it.
    #[cfg(feature = "grpc")]
    pub grpc: Option<GrpcOf>,
}

/// Builds the `grpc.health.v1` server over the registry once the probes
/// are in it: the manifest type's generated `grpc` function.
#[cfg(feature = "grpc")]
pub type GrpcOf = fn(&HealthRegistry) -> Result<GrpcHealth, zb_health_spec::SpecError>;

/// What [`Settings::install`] returns: the server of everything the
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

impl Settings {
    /// The settings every manifest has: its `service` name and its drain;
    /// the rest at their defaults.
    pub fn new(service: impl Into<String>, drain: Drain) -> Self {
        Self {
            service: service.into(),
            registry: HealthRegistryBuilder::default(),
            endpoints: Default::default(),
            drain,
            termination_grace_period: None,
            management_port: None,
            webhook: None,
            #[cfg(feature = "cluster")]
            cluster_view: None,
            #[cfg(feature = "grpc")]
            grpc: None,
        }
    }

    /// One port's endpoint settings.
    pub fn port(&mut self, port: Port) -> &mut EndpointSettings {
        &mut self.endpoints[port as usize]
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
        self.registry.apply(registry)?;
        if self.endpoints.iter().any(EndpointSettings::serves_history) {
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
    /// has checked; one given in code is checked here, by the same rule.
    fn manifest_webhook(&self) -> Result<Option<crate::publish::WebhookPublisher>, RegistryError> {
        let Some(url) = &self.webhook else {
            return Ok(None);
        };
        let mut sink = zb_health_spec::Violations::new();
        zb_health_spec::webhook::check_webhook_url(url, (), &mut sink);
        sink.into_result()?;
        // Accepted: the publisher reads the URL by the same function.
        Ok(crate::publish::WebhookPublisher::new(url).ok())
    }

    /// The probes, both ports' endpoints, the drain and the server.
    fn serve(
        &self,
        registry: &HealthRegistry,
        registrations: Vec<ProbeRegistration>,
    ) -> Result<ZbHealthServer, RegistryError> {
        registry.add_all(registrations)?;
        let build = |port: Port| {
            ZbHealth::with_settings(registry.clone(), self.endpoints[port as usize].clone()).build()
        };
        let endpoints = build(Port::Application)?;
        let management = build(Port::Management)?;
        let drain = match self.termination_grace_period {
            Some(grace) => self.drain.within_grace_period(grace)?,
            None => self.drain,
        };
        let server = ZbHealthServer::new(registry.clone(), endpoints, drain)
            .management_port_from(self.management_port, Origin::MANIFEST_MANAGEMENT_PORT)
            .management_endpoints(management);
        // The manifest's `service` names the exported resource.
        #[cfg(feature = "otel")]
        let server = server
            .otel(crate::observe::otel::OtelSettings::new().service_name(self.service.as_str()));
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
}
