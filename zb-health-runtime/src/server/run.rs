//! Running servers with the lifecycle: SIGTERM and SIGINT start the
//! drain (BE-HLTH-005), the servers keep serving for its delay, then stop
//! gracefully.

use std::fmt;
use std::io;

use actix_http::{Request, Response};
use actix_service::IntoServiceFactory;
use actix_web::body::MessageBody;
use actix_web::dev::{AppConfig, Service, ServiceFactory};
use actix_web::{Error, HttpServer};
#[cfg(unix)]
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::lifecycle::Drain;
use crate::registry::HealthRegistry;

/// Runs `server` with `registry` wired to SIGTERM and SIGINT (Ctrl-C on
/// non-Unix), replacing actix's own signal handling. On the first signal,
/// in order:
///
/// 1. [`Lifecycle::begin_drain`](crate::lifecycle::Lifecycle::begin_drain): `ready` and `active` answer 503 at
///    once (entry `shutdown`, `draining`) and the
///    [`on_drain`](crate::lifecycle::Lifecycle::on_drain) hooks run, e.g. to give up the
///    active role;
/// 2. the server keeps serving, new requests included, for
///    [`Drain::new`]'s delay; a second signal cuts the delay short;
/// 3. a graceful stop lets in-flight requests finish (up to
///    [`Drain::graceful_timeout`]);
/// 4. the transitions gathered before the drain are published at once
///    ([`crate::publish`]; bounded by the graceful-stop timeout), not at
///    their window's end;
/// 5. it returns `Ok(())`, so `main` can exit 0.
///
/// `live` answers 200 throughout (unless a watchdog stalls). Wrap the
/// server's `App` in [`CloseWhenDraining`](super::CloseWhenDraining) so that clients with kept-alive
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
/// use zb_health::prelude::{map_zb_health, HealthRegistry};
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
/// use zb_health::prelude::{map_zb_health, HealthRegistry};
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
/// `HttpServer`, and sealed: how it starts is this module's business.
pub trait Servable: sealed::Start + 'static {}

impl<T: sealed::Start + 'static> Servable for T {}

/// The part of [`Servable`] only this module calls; private, so no type
/// outside the crate implements it or sees the method.
mod sealed {
    /// Starts a bound server.
    pub trait Start {
        /// Runs the server with actix's signal handling off and the given
        /// graceful-stop timeout.
        fn start(self: Box<Self>, shutdown_timeout_secs: u64) -> actix_web::dev::Server;
    }
}

impl<F, I, S, B> sealed::Start for HttpServer<F, I, S, B>
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
pub(super) async fn serve_all(
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
    let draining = registry.clone();
    let drainer = tokio::spawn(async move {
        let signal = signals.next().await;
        tracing::info!(
            signal,
            delay_ms = drain.delay().as_millis() as u64,
            "drain: ready and active answer 503; serving on until the delay ends"
        );
        draining.lifecycle().begin_drain();
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
    // The transitions gathered before the drain go out now, not at their
    // window's end, which the process would not live to see.
    let flushed = registry.flush_transitions();
    if tokio::time::timeout(drain.graceful_timeout(), flushed)
        .await
        .is_err()
    {
        tracing::warn!("drain: the transition publishers did not finish in time");
    }
    outcomes.into_iter().collect()
}

/// SIGTERM and SIGINT, registered when built.
pub(super) struct Signals {
    #[cfg(unix)]
    pub(super) term: Signal,
    #[cfg(unix)]
    pub(super) int: Signal,
}

impl Signals {
    pub(super) fn install() -> io::Result<Self> {
        Ok(Self {
            #[cfg(unix)]
            term: signal(SignalKind::terminate())?,
            #[cfg(unix)]
            int: signal(SignalKind::interrupt())?,
        })
    }

    /// The next signal's name.
    pub(super) async fn next(&mut self) -> &'static str {
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
