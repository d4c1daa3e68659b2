//! `Connection: close` once the drain has begun or while in maintenance,
//! so kept-alive clients move to another pod while this one still serves.

use std::future::{Ready, ready};

use actix_http::ConnectionType;
use actix_web::Error;
use actix_web::dev::{Service, ServiceRequest, ServiceResponse, Transform, forward_ready};
use futures_util::future::LocalBoxFuture;

use crate::registry::HealthRegistry;

/// Middleware that marks every response `Connection: close` once
/// [`Lifecycle::begin_drain`](crate::lifecycle::Lifecycle::begin_drain) has run (BE-HLTH-005), and while the
/// pod is in maintenance ([`Lifecycle::begin_maintenance`](crate::lifecycle::Lifecycle::begin_maintenance)).
///
/// A drain takes the pod out of the Service's endpoints, but that only
/// steers *new* connections: a client that keeps its connection alive (an
/// HTTP client's pool, kube-proxy's conntrack entry) stays on this pod
/// until the server stops under it, and a request sent at that moment is
/// lost. With every response of the drain saying `Connection: close`, each
/// client reconnects after its next answer, through the Service, to a
/// ready pod, while this one still serves.
///
/// [`ZbHealthServer`](crate::server::ZbHealthServer) wraps every port it
/// serves with it; an application that builds its own `HttpServer` for
/// [`serve`](fn@crate::server::serve) wraps its `App`:
///
/// ```no_run
/// use actix_web::{App, HttpServer};
/// use zb_health::server::CloseWhenDraining;
/// use zb_health::prelude::HealthRegistry;
///
/// let registry = HealthRegistry::process().clone();
/// let server = HttpServer::new(move || App::new().wrap(CloseWhenDraining::new(registry.clone())));
/// ```
///
/// HTTP/1.1 only: actix's HTTP/2 (prior knowledge, without TLS) sends no
/// GOAWAY for it.
#[derive(Debug, Clone)]
pub struct CloseWhenDraining {
    registry: HealthRegistry,
}

impl CloseWhenDraining {
    /// Closes connections once `registry`'s drain has begun.
    pub fn new(registry: HealthRegistry) -> Self {
        Self { registry }
    }
}

impl<S, B> Transform<S, ServiceRequest> for CloseWhenDraining
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    B: 'static,
{
    type Response = ServiceResponse<B>;
    type Error = Error;
    type Transform = CloseWhenDrainingService<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(CloseWhenDrainingService {
            service,
            registry: self.registry.clone(),
        }))
    }
}

/// The service [`CloseWhenDraining`] wraps an application in.
#[derive(Debug)]
pub struct CloseWhenDrainingService<S> {
    service: S,
    registry: HealthRegistry,
}

impl<S, B> Service<ServiceRequest> for CloseWhenDrainingService<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    B: 'static,
{
    type Response = ServiceResponse<B>;
    type Error = Error;
    type Future = LocalBoxFuture<'static, Result<Self::Response, Self::Error>>;

    forward_ready!(service);

    fn call(&self, request: ServiceRequest) -> Self::Future {
        let answer = self.service.call(request);
        let registry = self.registry.clone();
        Box::pin(async move {
            let mut response = answer.await?;
            // Read when the answer is ready: a request that began before
            // the signal and ends after it closes its connection too.
            if registry.lifecycle().is_out_of_rotation() {
                response
                    .response_mut()
                    .head_mut()
                    .set_connection_type(ConnectionType::Close);
            }
            Ok(response)
        })
    }
}
