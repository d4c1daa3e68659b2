//! [`ZbHealthServer`]: the application port, the management port, the
//! `grpc.health.v1` port and the drain, in one builder.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use actix_web::{App, HttpServer, web};

#[cfg(feature = "grpc")]
use crate::grpc::server::GrpcHealth;
use crate::http::{OperatorControls, ZbHealthEndpoints};
use crate::lifecycle::Drain;
use crate::registry::HealthRegistry;
use crate::token::{BearerToken, TOKEN_VAR};

use super::bound::{Addresses, BoundZbHealthServer, Routes};
use super::close::CloseWhenDraining;
use super::env::{PORT_REASON, bearer_token, drain_override, setting};
use super::origin::{BindError, GRPC_PORT, HOST, MANAGEMENT_PORT, Origin, Origins, PORT};
use super::run::Servable;
use crate::setting::{SettingError, setters};
use crate::start::StartError;

/// The default application port, as most actix examples and Kubernetes
/// manifests use it.
pub const DEFAULT_PORT: u16 = 8080;
/// The default `grpc.health.v1` port, gRPC's customary one.
pub const DEFAULT_GRPC_PORT: u16 = 50051;

/// Everything a manifest declares, served: built by the manifest's
/// generated `install` (its `server` field), or by hand with
/// [`new`](Self::new). See the [module](crate::server) for the chain.
///
/// * the three tiers and the application's routes ([`app`](Self::app)) on
///   `HOST:PORT`, on actix's default workers;
/// * with a management port (the manifest's `management.port`, or
///   `MANAGEMENT_PORT`), the tiers again on their own server with one
///   worker, which busy application workers cannot hold up, with
///   [`management_endpoints`](Self::management_endpoints) when given (a
///   disclosure of its own), else the same endpoints;
/// * with a gRPC mapping (the manifest's `grpc` section), `grpc.health.v1`
///   on `HOST:GRPC_PORT`;
/// * `GET /metrics`: the application's [`metrics`](Self::metrics) routes
///   on both HTTP servers; without them, with the `prometheus` feature,
///   the library's exporter (`observe::prometheus`) on the management
///   server, and on the application server too when asked
///   (`metrics_on_app_port`) or when there is no management server;
/// * the drain: on SIGTERM or SIGINT, `ready` and `active` answer 503 on
///   every port and gRPC reports `NOT_SERVING` (but for a service mapped
///   to `live`, which stays `SERVING` as `live` stays 200), every HTTP
///   response says `Connection: close` ([`CloseWhenDraining`]) so
///   kept-alive clients reconnect to a ready pod, everything keeps serving
///   for the drain delay, then in-flight requests finish, the gRPC server
///   stops last, and [`run`](Self::run) returns `Ok(())`.
///
/// `HOST` is one address for every port: 127.0.0.1 by default, for a
/// laptop; `HOST=0.0.0.0` in a pod, whose kubelet connects to the pod's IP.
pub struct ZbHealthServer {
    pub(super) registry: HealthRegistry,
    pub(super) endpoints: ZbHealthEndpoints,
    /// The management port's endpoints, when they differ from the
    /// application's (their disclosure).
    pub(super) management_endpoints: Option<ZbHealthEndpoints>,
    pub(super) drain: Drain,
    pub(super) host: IpAddr,
    pub(super) port: u16,
    pub(super) management_port: Option<u16>,
    pub(super) grpc_port: u16,
    /// Where the host and the ports came from, for the bind's errors.
    pub(super) origins: Origins,
    #[cfg(feature = "grpc")]
    pub(super) grpc: Option<GrpcHealth>,
    pub(super) app: Routes,
    /// The application's metrics routes, if it gave any.
    pub(super) metrics: Option<Routes>,
    /// Whether the library's exporter is on the application port too.
    #[cfg(feature = "prometheus")]
    pub(super) metrics_on_app_port: bool,
    /// The management port's operator controls, given its bearer token
    /// at bind.
    pub(super) controls: OperatorControls,
    /// The OpenTelemetry export's settings from code, under the `OTEL_*`
    /// variables read at bind.
    #[cfg(feature = "otel")]
    pub(super) otel: crate::observe::otel::OtelSettings,
}

impl fmt::Debug for ZbHealthServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ZbHealthServer");
        d.field("host", &self.host)
            .field("port", &self.port)
            .field("management_port", &self.management_port)
            .field("drain", &self.drain);
        #[cfg(feature = "grpc")]
        d.field("grpc_port", &self.grpc.as_ref().map(|_| self.grpc_port));
        d.finish_non_exhaustive()
    }
}

impl ZbHealthServer {
    /// The tiers of `endpoints` (which serve `registry`) on
    /// 127.0.0.1:[`DEFAULT_PORT`], under `drain`, with no management
    /// server and no gRPC.
    pub fn new(registry: HealthRegistry, endpoints: ZbHealthEndpoints, drain: Drain) -> Self {
        Self {
            controls: OperatorControls::new(registry.clone()),
            registry,
            endpoints,
            management_endpoints: None,
            drain,
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: DEFAULT_PORT,
            management_port: None,
            grpc_port: DEFAULT_GRPC_PORT,
            origins: Origins::default(),
            #[cfg(feature = "grpc")]
            grpc: None,
            app: Arc::new(|_| {}),
            metrics: None,
            #[cfg(feature = "prometheus")]
            metrics_on_app_port: false,
            #[cfg(feature = "otel")]
            otel: crate::observe::otel::OtelSettings::new(),
        }
    }

    /// Applies the environment, each variable optional, each refused with
    /// a [`SettingError`] naming it when it cannot be used:
    ///
    /// | Variable | Sets | Default |
    /// |---|---|---|
    /// | `HOST` | the address every port binds | `127.0.0.1` |
    /// | `PORT` | the application port | [`DEFAULT_PORT`] |
    /// | `MANAGEMENT_PORT` | the management port (and turns it on) | the manifest's `management.port` |
    /// | `GRPC_PORT` | the `grpc.health.v1` port | [`DEFAULT_GRPC_PORT`] |
    /// | `DRAIN_DELAY_MS` | the drain delay | the manifest's `lifecycle.drain_delay` |
    /// | `HEALTH_TOKEN` | the bearer token that unlocks the authorized levels ([`bearer_token`](Self::bearer_token)) | none: every request sees the public levels |
    /// | `HEALTH_TOKEN_FILE` | a file holding that token (a mounted Secret); not with `HEALTH_TOKEN` | none |
    ///
    /// The token is never logged and never in a [`SettingError`] (its
    /// value reads `<redacted>`); an empty token, one a header cannot
    /// carry, an unreadable file, or both variables set are refused. The
    /// token comes only from here or from code, never from the manifest,
    /// which is in the repository.
    ///
    /// `DRAIN_DELAY_MS` replaces the delay and is held to the termination
    /// grace period by rule R18, as the manifest's own delay is at compile
    /// time ([`Drain::with_delay`]): the manifest's
    /// `orchestrator.termination_grace_period`, else Kubernetes' default
    /// 30 s. A stated `shutdown_timeout` keeps its length; without one the
    /// graceful stop gets what the grace period leaves. A delay that does
    /// not fit is refused here, never applied.
    ///
    /// # Errors
    ///
    /// The first variable that cannot be used.
    pub fn from_env(self) -> Result<Self, SettingError> {
        self.from_lookup(crate::setting::process_env)
    }

    /// [`from_env`](Self::from_env) over any lookup, e.g. a test's table.
    ///
    /// # Errors
    ///
    /// The first variable that cannot be used.
    pub fn from_lookup(
        mut self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, SettingError> {
        let var = |name: &str| crate::setting::non_blank(&lookup, name);
        if let Some(host) = setting(
            &var,
            HOST,
            "an IP address: 127.0.0.1 (this machine only) or 0.0.0.0 (every interface, as a pod needs)",
        )? {
            self.host = host;
            self.origins.host = Origin::Variable(HOST);
        }
        if let Some(port) = setting(&var, PORT, PORT_REASON)? {
            self.port = port;
            self.origins.port = Origin::Variable(PORT);
        }
        if let Some(port) = setting(&var, MANAGEMENT_PORT, PORT_REASON)? {
            self = self.management_port_from(Some(port), Origin::Variable(MANAGEMENT_PORT));
        }
        if let Some(port) = setting(&var, GRPC_PORT, PORT_REASON)? {
            self.grpc_port = port;
            self.origins.grpc_port = Origin::Variable(GRPC_PORT);
        }
        if let Some(token) = bearer_token(&lookup)? {
            // Whether a tier on either port shows more with the token.
            let shown = std::iter::once(&self.endpoints)
                .chain(&self.management_endpoints)
                .any(ZbHealthEndpoints::offers_authorized);
            if !shown && self.management_port.is_none() {
                tracing::warn!(
                    "{TOKEN_VAR} is set, but no tier shows more to a request with it (`endpoints.authorized`) and there is no management port for the operator controls; every request sees the public levels"
                );
            }
            self = self.bearer_token(token);
        }
        if let Some(ms) = setting::<u64>(&var, "DRAIN_DELAY_MS", "whole milliseconds, e.g. 5000")? {
            self.drain = drain_override(self.drain, ms).map_err(|reason| SettingError {
                variable: "DRAIN_DELAY_MS",
                value: var("DRAIN_DELAY_MS").unwrap_or_default(),
                reason,
            })?;
        }
        Ok(self)
    }

    /// The bearer token that unlocks the authorized levels
    /// (`endpoints.authorized`, `management.authorized`) on both HTTP
    /// ports; `HEALTH_TOKEN` sets it through [`from_env`](Self::from_env).
    /// A request without it, or with a wrong one, gets the public answer
    /// and the same status code. On the management port it also unlocks
    /// the operator controls ([`OperatorControls`]: maintenance mode),
    /// which answer anyone else as an unknown path.
    pub fn bearer_token(mut self, token: BearerToken) -> Self {
        let token = Arc::new(token);
        // The one setter of the token is the endpoints'; this gives it to
        // both ports.
        self.endpoints = self.endpoints.with_bearer_token(token.clone());
        self.management_endpoints = self
            .management_endpoints
            .map(|e| e.with_bearer_token(token));
        self
    }

    /// Serves the tiers on their own server on this port too; `None` turns
    /// it off.
    pub fn management_port(self, port: Option<u16>) -> Self {
        self.management_port_from(port, Origin::Code("management_port"))
    }

    /// The management port and where it came from (the variable, the
    /// manifest's key or this builder), which a bind error names: the one
    /// place it is set.
    pub(crate) fn management_port_from(mut self, port: Option<u16>, origin: Origin) -> Self {
        self.management_port = port;
        self.origins.management_port = origin;
        self
    }

    /// The endpoints the management port serves instead of the
    /// application's: the same registry, with bodies of their own (a
    /// manifest's `management.disclosure`, and the cluster addresses the
    /// application port leaves out).
    /// A token already given to the server (or to its application
    /// endpoints) reaches these too, so the setters' order does not matter.
    pub fn management_endpoints(mut self, endpoints: ZbHealthEndpoints) -> Self {
        let endpoints = match (endpoints.token(), self.endpoints.token()) {
            (None, Some(token)) => endpoints.with_bearer_token(token.clone()),
            _ => endpoints,
        };
        self.management_endpoints = Some(endpoints);
        self
    }

    /// The `/metrics` routes of the application port and of the
    /// management port, in that order (see the [type](Self)). With the
    /// library's exporter, installs its recorder now, before any worker
    /// starts.
    fn metrics_routes(&self) -> (Routes, Routes) {
        if let Some(routes) = &self.metrics {
            return (routes.clone(), routes.clone());
        }
        let none: Routes = Arc::new(|_| {});
        #[cfg(feature = "prometheus")]
        if crate::observe::prometheus::install() {
            let library: Routes = Arc::new(crate::observe::prometheus::configure);
            let on_app = self.metrics_on_app_port || self.management_port.is_none();
            return (if on_app { library.clone() } else { none }, library);
        }
        (none.clone(), none)
    }

    /// The registry every port answers from.
    pub fn registry(&self) -> &HealthRegistry {
        &self.registry
    }

    /// The tier endpoints of the application port, to mount on a server
    /// of your own.
    pub fn endpoints(&self) -> &ZbHealthEndpoints {
        &self.endpoints
    }

    /// The tier endpoints of the management port: its own, else the
    /// application's.
    pub fn endpoints_for_management(&self) -> &ZbHealthEndpoints {
        self.management_endpoints
            .as_ref()
            .unwrap_or(&self.endpoints)
    }

    /// The drain, with any `DRAIN_DELAY_MS` applied.
    pub fn drain(&self) -> Drain {
        self.drain
    }

    /// Binds every port now, so a caller knows the addresses (and a port
    /// taken by another process fails here, before anything serves).
    ///
    /// # Errors
    ///
    /// A port cannot be bound: the error names the setting that chose it
    /// (`MANAGEMENT_PORT=8081`, or the builder method or the manifest key
    /// when it did not come from the environment), the address and the
    /// cause in words, e.g. `MANAGEMENT_PORT=8081: 127.0.0.1:8081 is
    /// already in use`; `HOST` when the host is not this machine's. With
    /// the `otel` feature, an `OTEL_*` variable (or an
    /// [`otel`](Self::otel) endpoint) it cannot use, by name.
    pub fn bind(self) -> Result<BoundZbHealthServer, StartError> {
        // Read first, so a bad variable stops the start before any port.
        #[cfg(feature = "otel")]
        let otel = self.otel.clone().from_lookup(crate::setting::process_env)?;
        let host = self.host;
        let origins = self.origins;
        let refused = |port: Origin, number: u16| {
            move |cause| {
                BindError::start_error(origins.host, port, SocketAddr::new(host, number), cause)
            }
        };
        // Both servers set TCP_NODELAY, so a large body can go out in
        // slices without waiting on Nagle's algorithm
        // (`ZbHealth::pace_large_bodies`).
        let (metrics, management_metrics) = self.metrics_routes();
        let (endpoints, app, registry) = (
            self.endpoints.on_nodelay_server(),
            self.app.clone(),
            self.registry.clone(),
        );
        let application = HttpServer::new(move || {
            let (metrics, app) = (metrics.clone(), app.clone());
            App::new()
                .wrap(CloseWhenDraining::new(registry.clone()))
                .service(endpoints.clone())
                .configure(move |c| metrics(c))
                .configure(move |c| app(c))
        })
        .tcp_nodelay(true)
        .bind((host, self.port))
        .map_err(refused(origins.port, self.port))?;
        let mut addresses = Addresses {
            application: application.addrs(),
            management: Vec::new(),
            grpc: None,
        };
        let mut servers: Vec<Box<dyn Servable>> = vec![Box::new(application)];
        if let Some(port) = self.management_port {
            let endpoints = self.endpoints_for_management().on_nodelay_server();
            let history_path = endpoints.history_path().map(str::to_owned);
            let (metrics, registry) = (management_metrics, self.registry.clone());
            // The operator controls: on this port only, and only with a
            // token (without one they would refuse every request anyway).
            let token = endpoints.token().cloned();
            let controls = token.map(|token| self.controls.clone().bearer_token(token));
            let management = HttpServer::new(move || {
                let metrics = metrics.clone();
                let mut app = App::new()
                    .wrap(CloseWhenDraining::new(registry.clone()))
                    .service(endpoints.clone());
                if let Some(controls) = &controls {
                    app = app.service(controls.clone());
                }
                app.configure(move |c| metrics(c))
            })
            .workers(1)
            .tcp_nodelay(true)
            .bind((host, port))
            .map_err(refused(origins.management_port, port))?;
            addresses.management = management.addrs();
            // The members find this node's history by it (a dashboard's
            // discovery): the bound port, so port 0 works too.
            if let (Some(path), Some(bound)) = (&history_path, addresses.management.first()) {
                self.registry.announce_history(bound.port(), path);
            }
            servers.push(Box::new(management));
        }
        #[cfg(feature = "grpc")]
        let grpc = match self.grpc {
            Some(grpc) => {
                let incoming = tonic::transport::server::TcpIncoming::bind(SocketAddr::new(
                    host,
                    self.grpc_port,
                ))
                .map_err(refused(origins.grpc_port, self.grpc_port))?;
                addresses.grpc = incoming.local_addr().ok();
                Some((grpc, incoming))
            }
            None => None,
        };
        // Last, once every port is bound: nothing starts for a failed bind.
        #[cfg(feature = "otel")]
        let otel =
            crate::observe::otel::install(otel, crate::executor::Runs::ProbeThread.handle())?;
        #[cfg(feature = "otel")]
        if let Some(publisher) = otel.as_ref().and_then(|o| o.publisher()) {
            self.registry.add_transition_publisher(publisher);
        }
        Ok(BoundZbHealthServer {
            registry: self.registry,
            drain: self.drain,
            #[cfg(feature = "otel")]
            otel,
            servers,
            addresses,
            #[cfg(feature = "grpc")]
            grpc,
        })
    }

    /// Binds every port and serves until the drain ends; see the
    /// [type](Self).
    ///
    /// # Errors
    ///
    /// A port cannot be bound (see [`bind`](Self::bind)), or a server
    /// fails.
    pub async fn run(self) -> Result<(), StartError> {
        Ok(self.bind()?.run().await?)
    }
}

setters!(ZbHealthServer {
    /// Binds every port to `host` (see the [type](Self)).
    fn host(host: IpAddr) |s| {
        s.host = host;
        s.origins.host = Origin::Code("host");
    };

    /// The application port; 0 picks a free one ([`bind`](Self::bind)
    /// tells which).
    fn port(port: u16) |s| {
        s.port = port;
        s.origins.port = Origin::Code("port");
    };

    /// The `grpc.health.v1` port, when there is a gRPC mapping.
    fn grpc_port(port: u16) |s| {
        s.grpc_port = port;
        s.origins.grpc_port = Origin::Code("grpc_port");
    };

    /// The application's own routes, on the application port only.
    fn app(routes: impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static)
        => app = Arc::new(routes);

    /// Routes on both HTTP ports, beside the tiers: the place for the
    /// `/metrics` route of the application's own exporter, so a scrape
    /// works wherever the probes do. They replace the library's exporter
    /// of the `prometheus` feature, which then installs no recorder (the
    /// application's routes may install theirs when the server starts).
    fn metrics(routes: impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static)
        => metrics = Some(Arc::new(routes));

    /// Exports to OpenTelemetry (`observe::otel`, the `otel` feature) as
    /// `settings` say: each probe's and tier's status and duration as
    /// metrics, each transition as a log event, over OTLP/gRPC. What
    /// `settings` leaves unset keeps what was set before (a manifest's
    /// install sets its `service` as the service name). At
    /// [`bind`](Self::bind) the standard `OTEL_*` variables
    /// ([`OtelSettings::from_lookup`](crate::observe::otel::OtelSettings::from_lookup))
    /// win over them; with no endpoint from either, nothing is exported.
    #[cfg(feature = "otel")]
    fn otel(settings: crate::observe::otel::OtelSettings) |s| {
        s.otel = std::mem::take(&mut s.otel).or(settings);
    };

    /// Serves the step-down ([`StepDown`](crate::cluster::StepDown),
    /// `/health/step-down`) among the management port's operator controls;
    /// a manifest with a cluster view gets it from its install.
    #[cfg(feature = "cluster")]
    fn step_down(step_down: Arc<crate::cluster::StepDown>) => controls.step_down = Some(step_down);

    /// Serves `grpc.health.v1` from `grpc` (a manifest's `Health::grpc`).
    #[cfg(feature = "grpc")]
    fn grpc(grpc: GrpcHealth) => grpc = Some(grpc);

    /// Serves the library's `GET /metrics` (`observe::prometheus`) on the
    /// application port too, not only on the management port (where the
    /// metrics are safe from busy application workers, as the tiers are).
    /// Without a management port it is on the application port anyway.
    /// No effect on the application's own [`metrics`](Self::metrics)
    /// routes, which are on both.
    #[cfg(feature = "prometheus")]
    fn metrics_on_app_port(on: bool) => metrics_on_app_port = on;
});
