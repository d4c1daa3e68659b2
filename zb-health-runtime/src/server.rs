//! Serving: the one wiring path for everything a manifest declares, and
//! the lower-level functions it is built on.
//!
//! [`ZbHealthServer`] is what a manifest's generated `install` returns in
//! its `server` field: the tiers on the application server, the
//! management server on its port, `grpc.health.v1` when the manifest has a
//! `grpc` section, a route of the application's for metrics on both HTTP
//! ports, and the drain under SIGTERM, every port bound to one `HOST`:
//!
//! ```no_run
//! # use zb_health::HealthRegistry;
//! # use zb_health::lifecycle::Drain;
//! # use zb_health::server::ZbHealthServer;
//! # async fn run(server: ZbHealthServer) -> std::io::Result<()> {
//! // `server` is `Health::install(deps)?.server`.
//! server
//!     .from_env()? // HOST, PORT, MANAGEMENT_PORT, GRPC_PORT, DRAIN_DELAY_MS
//!     .app(|routes| { routes.route("/orders", actix_web::web::get().to(|| async { "[]" })); })
//!     .run()
//!     .await
//! # }
//! ```
//!
//! The alternative, for an application that builds its own `HttpServer`:
//! mount [`ZbHealthServer::endpoints`] (or [`crate::map_zb_health`]) with
//! `App::service`, and run the servers with [`serve`](fn@serve) or
//! [`serve_with_management`], which wire SIGTERM and SIGINT to
//! [`HealthRegistry::begin_drain`].

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use actix_web::{App, web};

use actix_http::{Request, Response};
use actix_service::IntoServiceFactory;
use actix_web::body::MessageBody;
use actix_web::dev::{AppConfig, Service, ServiceFactory};
use actix_web::{Error, HttpServer};

#[cfg(feature = "grpc")]
use crate::grpc::server::GrpcHealth;
use crate::http::ZbHealthEndpoints;
use crate::lifecycle::Drain;
use crate::registry::HealthRegistry;
use crate::token::{BearerToken, TOKEN_FILE_VAR, TOKEN_VAR};

mod close;
pub use close::{CloseWhenDraining, CloseWhenDrainingService};

/// Runs `server` with `registry` wired to SIGTERM and SIGINT (Ctrl-C on
/// non-Unix), replacing actix's own signal handling. On the first signal,
/// in order:
///
/// 1. [`HealthRegistry::begin_drain`]: `ready` and `active` answer 503 at
///    once (entry `shutdown`, `draining`) and the
///    [`on_drain`](HealthRegistry::on_drain) hooks run, e.g. to give up the
///    active role;
/// 2. the server keeps serving, new requests included, for
///    [`Drain::new`]'s delay; a second signal cuts the delay short;
/// 3. a graceful stop lets in-flight requests finish (up to
///    [`Drain::graceful_timeout`]);
/// 4. it returns `Ok(())`, so `main` can exit 0.
///
/// `live` answers 200 throughout (unless a watchdog stalls). Wrap the
/// server's `App` in [`CloseWhenDraining`] so that clients with kept-alive
/// connections move to another pod during the delay. Bind the server
/// before calling. The signal handlers are installed on the first
/// poll, before the server starts, so a signal that arrives once the server
/// is listening is never lost to the default "terminate" action.
///
/// ```no_run
/// use std::time::Duration;
/// use actix_web::{App, HttpServer};
/// use zb_health::lifecycle::Drain;
/// use zb_health::server::serve;
/// use zb_health::{map_zb_health, HealthRegistry};
///
/// #[actix_web::main]
/// async fn main() -> std::io::Result<()> {
///     let registry = HealthRegistry::process();
///     let health = map_zb_health(registry.clone());
///     let server = HttpServer::new(move || App::new().service(health.clone()))
///         .bind(("127.0.0.1", 8080))?;
///     serve(server, registry, Drain::new(Duration::from_secs(5))).await
/// }
/// ```
pub async fn serve(
    server: impl Servable,
    registry: &HealthRegistry,
    drain: Drain,
) -> io::Result<()> {
    serve_all(vec![Box::new(server)], registry, drain).await
}

/// [`serve`](fn@serve) with a second, **management** server: the tiers on
/// their own `HttpServer`, with its own worker and port, as Spring's
/// `management.server.port` and Akka Management do, so an application
/// whose workers are all busy (or blocked) still answers its health
/// probes.
///
/// Both run under one drain: on the signal `ready` and `active` turn 503
/// on both ports at once (they read one registry), both keep serving for
/// the delay, then the application server stops gracefully, then the
/// management server, so `live` answers until the very end. A manifest's
/// `management.port` says which port (`Health::MANAGEMENT_PORT`).
///
/// ```no_run
/// use actix_web::{App, HttpServer};
/// use zb_health::lifecycle::Drain;
/// use zb_health::server::serve_with_management;
/// use zb_health::{map_zb_health, HealthRegistry};
///
/// #[actix_web::main]
/// async fn main() -> std::io::Result<()> {
///     let registry = HealthRegistry::process();
///     let health = map_zb_health(registry.clone());
///     let app = HttpServer::new(|| App::new(/* the application's routes */))
///         .bind(("127.0.0.1", 8080))?;
///     let management = HttpServer::new(move || App::new().service(health.clone()))
///         .workers(1)
///         .bind(("127.0.0.1", 8081))?;
///     serve_with_management(app, management, registry, Drain::new(std::time::Duration::from_secs(5))).await
/// }
/// ```
pub async fn serve_with_management(
    app: impl Servable,
    management: impl Servable,
    registry: &HealthRegistry,
    drain: Drain,
) -> io::Result<()> {
    serve_all(vec![Box::new(app), Box::new(management)], registry, drain).await
}

/// An actix `HttpServer`, bound and not yet running, that
/// [`serve`](fn@serve) can run under the drain. Implemented for every
/// `HttpServer`.
pub trait Servable: 'static {
    /// Runs the server with actix's signal handling off and the given
    /// graceful-stop timeout.
    #[doc(hidden)]
    fn start(self: Box<Self>, shutdown_timeout_secs: u64) -> actix_web::dev::Server;
}

impl<F, I, S, B> Servable for HttpServer<F, I, S, B>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request> + 'static,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<Error> + 'static,
    S::InitError: fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as Service<Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    fn start(self: Box<Self>, shutdown_timeout_secs: u64) -> actix_web::dev::Server {
        (*self)
            .disable_signals()
            .shutdown_timeout(shutdown_timeout_secs)
            .run()
    }
}

/// The one drain sequence, for one server or several (stopped in order).
async fn serve_all(
    servers: Vec<Box<dyn Servable>>,
    registry: &HealthRegistry,
    drain: Drain,
) -> io::Result<()> {
    // Before any server starts: a signal from now on drains.
    let mut signals = Signals::install()?;
    let timeout_secs = drain.graceful_timeout().as_secs();
    let running: Vec<actix_web::dev::Server> =
        servers.into_iter().map(|s| s.start(timeout_secs)).collect();
    let handles: Vec<_> = running.iter().map(|s| s.handle()).collect();
    let registry = registry.clone();
    let drainer = tokio::spawn(async move {
        let signal = signals.next().await;
        tracing::info!(
            signal,
            delay_ms = drain.delay().as_millis() as u64,
            "drain: ready and active answer 503; serving on until the delay ends"
        );
        registry.begin_drain();
        tokio::select! {
            () = tokio::time::sleep(drain.delay()) => {}
            signal = signals.next() => {
                tracing::info!(signal, "drain: second signal, stopping now");
            }
        }
        tracing::info!("drain: stopping; in-flight requests finish");
        // The application first; the management server (if any) last, so
        // the health answers outlive the application's work.
        for handle in handles {
            handle.stop(true).await;
        }
    });
    // A server starts serving when first polled: poll them all at once.
    let outcomes = futures_util::future::join_all(running).await;
    drainer.abort();
    outcomes.into_iter().collect()
}

/// SIGTERM and SIGINT, registered when built.
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Self {
                term: signal(SignalKind::terminate())?,
                int: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Self {})
        }
    }

    /// The next signal's name.
    async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.int.recv() => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}

/// Routes an application mounts on a server, shared by every worker.
type Routes = Arc<dyn Fn(&mut web::ServiceConfig) + Send + Sync>;

pub use crate::setting::SettingError;

impl From<SettingError> for io::Error {
    fn from(e: SettingError) -> Self {
        io::Error::new(io::ErrorKind::InvalidInput, e.to_string())
    }
}

/// The default application port, as most actix examples and Kubernetes
/// manifests use it.
pub const DEFAULT_PORT: u16 = 8080;
/// The default `grpc.health.v1` port, gRPC's customary one.
pub const DEFAULT_GRPC_PORT: u16 = 50051;

/// Everything a manifest declares, served: built by the manifest's
/// generated `install` (its `server` field), or by hand with
/// [`new`](Self::new). See the [module](self) for the chain.
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
/// * [`metrics`](Self::metrics) on both HTTP servers;
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
    registry: HealthRegistry,
    endpoints: ZbHealthEndpoints,
    /// The management port's endpoints, when they differ from the
    /// application's (their disclosure).
    management_endpoints: Option<ZbHealthEndpoints>,
    drain: Drain,
    host: IpAddr,
    port: u16,
    management_port: Option<u16>,
    grpc_port: u16,
    #[cfg(feature = "grpc")]
    grpc: Option<GrpcHealth>,
    app: Routes,
    metrics: Routes,
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
            registry,
            endpoints,
            management_endpoints: None,
            drain,
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: DEFAULT_PORT,
            management_port: None,
            grpc_port: DEFAULT_GRPC_PORT,
            #[cfg(feature = "grpc")]
            grpc: None,
            app: Arc::new(|_| {}),
            metrics: Arc::new(|_| {}),
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
        self.from_lookup(|name| std::env::var(name).ok())
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
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        if let Some(host) = setting(
            &var,
            "HOST",
            "an IP address: 127.0.0.1 (this machine only) or 0.0.0.0 (every interface, as a pod needs)",
        )? {
            self.host = host;
        }
        if let Some(port) = setting(&var, "PORT", PORT_REASON)? {
            self.port = port;
        }
        if let Some(port) = setting(&var, "MANAGEMENT_PORT", PORT_REASON)? {
            self.management_port = Some(port);
        }
        if let Some(port) = setting(&var, "GRPC_PORT", PORT_REASON)? {
            self.grpc_port = port;
        }
        if let Some(token) = bearer_token(&lookup)? {
            if !self.offers_authorized() {
                tracing::warn!(
                    "{TOKEN_VAR} is set, but no tier shows more to a request with it (`endpoints.authorized`); every request sees the public levels"
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
    /// and the same status code.
    pub fn bearer_token(mut self, token: BearerToken) -> Self {
        let token = Arc::new(token);
        self.endpoints = self.endpoints.with_bearer_token(token.clone());
        self.management_endpoints = self
            .management_endpoints
            .map(|e| e.with_bearer_token(token));
        self
    }

    /// Whether a tier on either port shows more to a request with the
    /// bearer token.
    fn offers_authorized(&self) -> bool {
        self.endpoints.offers_authorized()
            || self
                .management_endpoints
                .as_ref()
                .is_some_and(ZbHealthEndpoints::offers_authorized)
    }

    /// Binds every port to `host` (see the [type](Self)).
    pub fn host(mut self, host: IpAddr) -> Self {
        self.host = host;
        self
    }

    /// The application port; 0 picks a free one ([`bind`](Self::bind)
    /// tells which).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Serves the tiers on their own server on this port too; `None` turns
    /// it off.
    pub fn management_port(mut self, port: Option<u16>) -> Self {
        self.management_port = port;
        self
    }

    /// The endpoints the management port serves instead of the
    /// application's: the same registry, with bodies of their own (a
    /// manifest's `management.disclosure`, and the cluster addresses the
    /// application port leaves out).
    pub fn management_endpoints(mut self, endpoints: ZbHealthEndpoints) -> Self {
        self.management_endpoints = Some(endpoints);
        self
    }

    /// The `grpc.health.v1` port, when there is a gRPC mapping.
    pub fn grpc_port(mut self, port: u16) -> Self {
        self.grpc_port = port;
        self
    }

    /// Serves `grpc.health.v1` from `grpc` (a manifest's `Health::grpc`).
    #[cfg(feature = "grpc")]
    pub fn grpc(mut self, grpc: GrpcHealth) -> Self {
        self.grpc = Some(grpc);
        self
    }

    /// The application's own routes, on the application port only.
    pub fn app(mut self, routes: impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static) -> Self {
        self.app = Arc::new(routes);
        self
    }

    /// Routes on both HTTP ports, beside the tiers: the place for the
    /// `/metrics` route of the application's exporter, so a scrape works
    /// wherever the probes do.
    pub fn metrics(
        mut self,
        routes: impl Fn(&mut web::ServiceConfig) + Send + Sync + 'static,
    ) -> Self {
        self.metrics = Arc::new(routes);
        self
    }

    /// The application port it will bind (0: a free one).
    pub fn application_port(&self) -> u16 {
        self.port
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
    /// A port cannot be bound.
    pub fn bind(self) -> io::Result<BoundZbHealthServer> {
        let host = self.host;
        // Both servers set TCP_NODELAY, so a large body can go out in
        // slices without waiting on Nagle's algorithm
        // (`ZbHealth::pace_large_bodies`).
        let (endpoints, metrics, app, registry) = (
            self.endpoints.pace_large_bodies(true),
            self.metrics.clone(),
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
        .bind((host, self.port))?;
        let mut addresses = Addresses {
            application: application.addrs(),
            management: Vec::new(),
            grpc: None,
        };
        let mut servers: Vec<Box<dyn Servable>> = vec![Box::new(application)];
        if let Some(port) = self.management_port {
            let (endpoints, metrics, registry) = (
                self.endpoints_for_management().pace_large_bodies(true),
                self.metrics.clone(),
                self.registry.clone(),
            );
            let management = HttpServer::new(move || {
                let metrics = metrics.clone();
                App::new()
                    .wrap(CloseWhenDraining::new(registry.clone()))
                    .service(endpoints.clone())
                    .configure(move |c| metrics(c))
            })
            .workers(1)
            .tcp_nodelay(true)
            .bind((host, port))?;
            addresses.management = management.addrs();
            servers.push(Box::new(management));
        }
        #[cfg(feature = "grpc")]
        let grpc = match self.grpc {
            Some(grpc) => {
                let incoming = tonic::transport::server::TcpIncoming::bind(SocketAddr::new(
                    host,
                    self.grpc_port,
                ))?;
                addresses.grpc = incoming.local_addr().ok();
                Some((grpc, incoming))
            }
            None => None,
        };
        Ok(BoundZbHealthServer {
            registry: self.registry,
            drain: self.drain,
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
    /// A port cannot be bound, or a server fails.
    pub async fn run(self) -> io::Result<()> {
        self.bind()?.run().await
    }
}

const PORT_REASON: &str = "a port number, 0 to 65535";

/// `drain` with a `DRAIN_DELAY_MS` of `ms`, held to the grace period by the
/// same rule R18 as the manifest ([`Drain::with_delay`]); the refusal says
/// which grace period, and where it comes from.
fn drain_override(drain: Drain, ms: u64) -> Result<Drain, String> {
    drain.with_delay(Duration::from_millis(ms)).map_err(|e| {
        let grace = drain.grace_period_or_default();
        let source = if drain.grace_period().is_some() {
            "the manifest's `orchestrator.termination_grace_period`"
        } else {
            "Kubernetes' default; the manifest states no `orchestrator.termination_grace_period`"
        };
        let violations: Vec<String> = e
            .violations()
            .iter()
            .map(|v| format!("{} (rule {}); {}", v.message, v.rule, v.help))
            .collect();
        format!(
            "does not fit the termination grace period of {} ms ({source}): {}",
            grace.as_millis(),
            violations.join("; ")
        )
    })
}

/// The bearer token from `HEALTH_TOKEN` or the file `HEALTH_TOKEN_FILE`
/// names. Unlike the other variables an empty value is refused, not
/// unset: an empty secret is a secret that failed to mount.
fn bearer_token(
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<Option<BearerToken>, SettingError> {
    // The token's own value is never shown.
    let redacted = || "<redacted>".to_owned();
    match (lookup(TOKEN_VAR), lookup(TOKEN_FILE_VAR)) {
        (None, None) => Ok(None),
        (Some(_), Some(path)) => Err(SettingError {
            variable: TOKEN_FILE_VAR,
            value: path,
            reason: format!("{TOKEN_VAR} is set too; set one of them"),
        }),
        (Some(token), None) => BearerToken::new(token).map(Some).map_err(|e| SettingError {
            variable: TOKEN_VAR,
            value: redacted(),
            reason: e.to_string(),
        }),
        (None, Some(path)) => {
            let refused = |reason: String| SettingError {
                variable: TOKEN_FILE_VAR,
                value: path.clone(),
                reason,
            };
            let text = std::fs::read_to_string(path.trim())
                .map_err(|e| refused(format!("the file cannot be read: {e}")))?;
            BearerToken::new(text)
                .map(Some)
                .map_err(|e| refused(format!("the file's content: {e}")))
        }
    }
}

fn setting<T: std::str::FromStr>(
    var: &impl Fn(&str) -> Option<String>,
    variable: &'static str,
    expected: &str,
) -> Result<Option<T>, SettingError>
where
    T::Err: fmt::Display,
{
    var(variable)
        .map(|value| {
            value.trim().parse().map_err(|e| SettingError {
                variable,
                reason: format!("{e}; expected {expected}"),
                value,
            })
        })
        .transpose()
}

/// Where a [`BoundZbHealthServer`] listens.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Addresses {
    /// The application server's addresses.
    pub application: Vec<SocketAddr>,
    /// The management server's; empty without one.
    pub management: Vec<SocketAddr>,
    /// The `grpc.health.v1` server's, if one runs.
    pub grpc: Option<SocketAddr>,
}

/// A [`ZbHealthServer`] whose ports are bound, from
/// [`ZbHealthServer::bind`].
pub struct BoundZbHealthServer {
    registry: HealthRegistry,
    drain: Drain,
    servers: Vec<Box<dyn Servable>>,
    addresses: Addresses,
    #[cfg(feature = "grpc")]
    grpc: Option<(GrpcHealth, tonic::transport::server::TcpIncoming)>,
}

impl fmt::Debug for BoundZbHealthServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundZbHealthServer")
            .field("addresses", &self.addresses)
            .finish_non_exhaustive()
    }
}

impl BoundZbHealthServer {
    /// Where it listens.
    pub fn addresses(&self) -> &Addresses {
        &self.addresses
    }

    /// Serves until the drain ends, then returns `Ok(())`; see
    /// [`ZbHealthServer`].
    ///
    /// # Errors
    ///
    /// A server fails.
    pub async fn run(self) -> io::Result<()> {
        let Self {
            registry,
            drain,
            servers,
            addresses,
            #[cfg(feature = "grpc")]
            grpc,
        } = self;
        tracing::info!(
            application = ?addresses.application,
            management = ?addresses.management,
            grpc = ?addresses.grpc,
            drain_delay_ms = drain.delay().as_millis() as u64,
            "zb-health serving"
        );
        #[cfg(feature = "grpc")]
        let grpc_task = grpc.map(|(health, incoming)| {
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let server = tonic::transport::Server::builder()
                .add_service(health.server())
                .serve_with_incoming_shutdown(incoming, async move {
                    let _ = stopped.await;
                });
            // On this runtime; the HTTP workers have threads of their own.
            (health, stop, tokio::spawn(server))
        });
        #[cfg(feature = "grpc")]
        let graceful = drain.graceful_timeout();
        let served = serve_all(servers, &registry, drain).await;
        #[cfg(feature = "grpc")]
        if let Some((health, stop, mut task)) = grpc_task {
            // gRPC answers for as long as HTTP does (a `live` service stays
            // SERVING through the drain, as `/healthz` stays 200), so it
            // stops only now: Watch streams end, then in-flight calls get
            // the graceful stop's time, as HTTP requests did.
            health.stop();
            let _ = stop.send(());
            if tokio::time::timeout(graceful, &mut task).await.is_err() {
                task.abort();
            }
        }
        served
    }
}

#[cfg(test)]
mod tests;
