//! The active-node gate (ZB-4): whether this node should accept write or
//! active-role requests, and the middleware that answers 503 when not.
//!
//! In the core so a service without a cluster (MxGateway) can implement
//! the trait itself; the cluster implementation is
//! `cluster::ClusterActiveNodeGate`.
//!
//! [`RequireActiveNode`] also closes once its registry's drain has begun
//! (BE-HLTH-005), whatever the gate says: a node on its way out must not
//! keep taking the writes the gate guards, with or without a cluster to
//! hand over to.

use std::future::{Ready, ready};
use std::rc::Rc;
use std::sync::Arc;

use actix_web::HttpResponse;
use actix_web::body::{BoxBody, EitherBody};
use actix_web::dev::{Service, ServiceRequest, ServiceResponse, Transform};
use actix_web::http::header::{self, HeaderValue};
use futures_util::future::LocalBoxFuture;

use crate::registry::HealthRegistry;

/// Whether this node is the active one: the spec's `IActiveNodeGate`
/// (`bool IsActiveNode { get; }`).
///
/// Implementations must be cheap and must not block: the gate is asked on
/// every gated request. Any `Fn() -> bool` is a gate.
pub trait ActiveNodeGate: Send + Sync + 'static {
    /// `true` on the active node, `false` on a standby and while the node
    /// cannot tell (startup).
    fn is_active_node(&self) -> bool;
}

impl<F: Fn() -> bool + Send + Sync + 'static> ActiveNodeGate for F {
    fn is_active_node(&self) -> bool {
        self()
    }
}

impl<G: ActiveNodeGate + ?Sized> ActiveNodeGate for Arc<G> {
    fn is_active_node(&self) -> bool {
        (**self).is_active_node()
    }
}

/// Middleware that lets requests through only on the active node and
/// answers `503 Service Unavailable` with a small JSON body on a standby:
/// the spec's `RequireActiveNode()`.
///
/// A draining node answers like a standby: once the drain of the
/// middleware's registry has begun ([`Lifecycle::begin_drain`](crate::lifecycle::Lifecycle::begin_drain), which
/// the servers call on SIGTERM), every gated request gets the standby
/// answer, even where the gate itself would still say active (a gate of
/// the app's own, or a cluster that has not yet elected a successor). The
/// registry is [`HealthRegistry::process`] unless
/// [`registry`](Self::registry) names another.
///
/// ```no_run
/// use actix_web::{web, App, HttpResponse};
/// use zb_health::prelude::RequireActiveNode;
///
/// let gate = || true; // e.g. a ClusterActiveNodeGate
/// let app = App::new().service(
///     web::scope("/admin")
///         .wrap(RequireActiveNode::new(gate))
///         .route("/deploy", web::post().to(HttpResponse::Ok)),
/// );
/// ```
#[derive(Clone)]
pub struct RequireActiveNode {
    gate: Arc<dyn ActiveNodeGate>,
    registry: HealthRegistry,
}

impl RequireActiveNode {
    /// Gates on `gate`, closed during the process registry's drain.
    pub fn new(gate: impl ActiveNodeGate) -> Self {
        Self::shared(Arc::new(gate))
    }

    /// Gates on a gate shared with other parts of the app, closed during
    /// the process registry's drain.
    pub fn shared(gate: Arc<dyn ActiveNodeGate>) -> Self {
        Self {
            gate,
            registry: HealthRegistry::process().clone(),
        }
    }

    /// Closes the gate during `registry`'s drain instead of the process
    /// registry's: the registry the node's servers drain (a test's own,
    /// or an app that does not use [`HealthRegistry::process`]).
    pub fn registry(mut self, registry: &HealthRegistry) -> Self {
        self.registry = registry.clone();
        self
    }

    /// Whether a gated request passes now: not draining (one atomic load,
    /// asked first) and active. The one decision: the service asks it too.
    pub fn admits(&self) -> bool {
        !self.registry.lifecycle().is_draining() && self.gate.is_active_node()
    }
}

/// The body of a gated request refused on a standby.
pub const STANDBY_BODY: &str = r#"{"status":"Unhealthy","description":"not the active node"}"#;

impl<S, B> Transform<S, ServiceRequest> for RequireActiveNode
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error> + 'static,
    B: 'static,
{
    type Response = ServiceResponse<EitherBody<B, BoxBody>>;
    type Error = actix_web::Error;
    type Transform = RequireActiveNodeService<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(RequireActiveNodeService {
            service: Rc::new(service),
            gate: self.clone(),
        }))
    }
}

/// The service [`RequireActiveNode`] wraps around a scope or resource.
pub struct RequireActiveNodeService<S> {
    service: Rc<S>,
    gate: RequireActiveNode,
}

impl<S, B> Service<ServiceRequest> for RequireActiveNodeService<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error> + 'static,
    B: 'static,
{
    type Response = ServiceResponse<EitherBody<B, BoxBody>>;
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self::Response, Self::Error>>;

    actix_web::dev::forward_ready!(service);

    fn call(&self, req: ServiceRequest) -> Self::Future {
        if self.gate.admits() {
            let fut = self.service.call(req);
            Box::pin(async move { fut.await.map(ServiceResponse::map_into_left_body) })
        } else {
            let response = HttpResponse::ServiceUnavailable()
                .content_type("application/json")
                .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
                .body(STANDBY_BODY);
            Box::pin(ready(Ok(req.into_response(response).map_into_right_body())))
        }
    }
}
