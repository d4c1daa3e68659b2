//! The startup path (`/health/started`): 200 once every startup gate is
//! open and every watchdog has beaten once; it runs no probe.

use std::sync::Arc;

use actix_web::{HttpRequest, HttpResponse};

use super::respond::{Authorized, no_store, status_code, write_body};
use crate::registry::HealthRegistry;
use crate::writer::{BodyStyle, ResponseWriter};

/// The startup path: 200 once the process has started
/// ([`Lifecycle::started`](crate::lifecycle::Lifecycle::started)), 503 before. It runs no probe.
#[derive(Clone)]
pub(super) struct StartedEndpoint {
    pub(super) path: String,
    pub(super) registry: HealthRegistry,
    /// The live tier's body style.
    pub(super) style: BodyStyle,
    pub(super) writer: Option<Arc<dyn ResponseWriter>>,
    /// The live tier's authorized view.
    pub(super) authorized: Authorized,
}

impl StartedEndpoint {
    pub(super) async fn respond(self: Arc<Self>, request: HttpRequest) -> HttpResponse {
        let report = self.registry.lifecycle().started();
        // `Healthy` or `Unhealthy`: its entries are never `Degraded`.
        let mut response = HttpResponse::build(status_code(report.status));
        response.insert_header(no_store());
        self.authorized.mark(&mut response);
        let style = self.authorized.style_for(&request).unwrap_or(&self.style);
        write_body(style, self.writer.as_deref(), &report, response)
    }
}
