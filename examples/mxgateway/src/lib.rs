//! MxGateway converged on zb-health: the three ZB tiers, an empty `ready`,
//! and an `active` tier that follows its own gate.
//!
//! Before, MxGateway served only a custom `/health/live`
//! (`GatewayHealthReply`) and registered no probe. Converged (ZB §6):
//!
//! * `health.yaml` says `service: mxgateway` and lists no dependency
//!   probe: no cluster, no database, no gRPC dependency (its worker IPC is
//!   named pipes, ZB §2.4). An empty tier is `Healthy` (AT-2), so `ready`
//!   and `live` answer 200 with `entries: {}` while the process runs.
//! * [`GatewayRole`] is its own [`ActiveNodeGate`] (ZB-4, §7 (e)): a
//!   gateway pair behind a virtual IP has no cluster to ask, so the
//!   failover manager that moves the IP (keepalived's `notify_master` /
//!   `notify_backup` scripts, or an operator) tells each gateway its role
//!   with `POST /admin/active` / `POST /admin/standby`. [`RequireActiveNode`] over it guards the forwarding route
//!   `POST /tags/{name}`: on a standby a write that still arrives (an old
//!   connection after the IP moved) is refused with 503 instead of being
//!   forwarded twice. Reads (`GET /tags/{name}`) are not gated.
//! * The same [`GatewayRole`] is the manifest's one `active` probe,
//!   `gateway-role`: `/health/active` answers 200 on the active gateway
//!   and 503 on the standby (ZB §1: the active tier fails on a standby).
//!   Tier and gate read one flag, so they cannot disagree.
//! * During the shutdown drain `ready` and `active` answer 503 and the
//!   gate refuses writes with the standby answer, even on the active
//!   gateway: a gateway on its way out takes no more writes.
//! * The old `/health/live` answers `308 Permanent Redirect` to `/healthz`
//!   (see [`LEGACY_LIVE_PATH`]).
//!
//! The library half exists so the process test and `main` share one
//! definition of the routes.

#![warn(missing_docs)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use actix_web::http::header;
use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use zb_health::prelude::*;

manifest!(pub Health = "health.yaml");

/// The path of MxGateway's former custom liveness endpoint.
///
/// It now answers `308 Permanent Redirect` with `Location: /healthz` on
/// `GET` and `HEAD`, on the application port where it always was, rather
/// than 404: a Deployment still probing `/health/live` during the rollout
/// keeps passing (the kubelet counts a 3xx as success and follows a
/// same-host redirect), so the upgrade cannot turn into a liveness restart
/// loop, while the `Location` tells every client the canonical path. The
/// old `GatewayHealthReply` body is gone: the answer behind the redirect is
/// the canonical ZB body. The path is not a tier: `zb-health k8s --check`
/// reports a probe still pointing at it, so the alias can be dropped once
/// no manifest of a deployment uses it.
pub const LEGACY_LIVE_PATH: &str = "/health/live";

/// This gateway's role in its pair: the [`ActiveNodeGate`] of MxGateway,
/// and the probe `gateway-role` of its active tier, so `/health/active` and
/// the gated route read the same flag.
///
/// Cheap to clone (one shared flag); reading it is one atomic load, as a
/// gate asked on every gated request must be.
#[zb_health(name = "gateway-role", tags = [active], timeout = "100ms")]
#[derive(Clone, Debug)]
pub struct GatewayRole {
    active: Arc<AtomicBool>,
}

impl GatewayRole {
    /// A role starting `active` or standby.
    pub fn new(active: bool) -> Self {
        Self {
            active: Arc::new(AtomicBool::new(active)),
        }
    }

    /// The role named by `MXGATEWAY_ROLE` (`active` or `standby`), else
    /// active: a single gateway with no failover manager takes writes.
    ///
    /// # Errors
    ///
    /// Any other value, so a typo cannot start a second active gateway.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var("MXGATEWAY_ROLE").as_deref() {
            Err(_) | Ok("active") => Ok(Self::new(true)),
            Ok("standby") => Ok(Self::new(false)),
            Ok(other) => Err(format!(
                "MXGATEWAY_ROLE must be `active` or `standby`, not `{other}`"
            )),
        }
    }

    /// Makes this gateway the active one (`true`) or a standby.
    pub fn set_active(&self, active: bool) {
        self.active.store(active, Ordering::Relaxed);
    }

    /// The role's name, as `GET /admin/role` shows it.
    pub fn name(&self) -> &'static str {
        if self.is_active_node() {
            "active"
        } else {
            "standby"
        }
    }
}

impl ActiveNodeGate for GatewayRole {
    fn is_active_node(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }
}

/// The description of `gateway-role` on the active gateway.
pub const ACTIVE_DESCRIPTION: &str = "the active gateway of the pair";
/// The description of `gateway-role` on a standby.
pub const STANDBY_DESCRIPTION: &str = "standby: the failover manager made the other gateway active";

impl Probe for GatewayRole {
    async fn check(&self) -> ProbeOutcome {
        // The gate's own answer: the tier cannot disagree with the route.
        Ok(if self.is_active_node() {
            ProbeResult::healthy().with_description(ACTIVE_DESCRIPTION)
        } else {
            ProbeResult::unhealthy(STANDBY_DESCRIPTION)
        })
    }
}

/// The gateway: its role and its (simulated) MxAccess worker session.
#[derive(Clone, Debug)]
pub struct Gateway {
    /// The gate of the forwarding route.
    pub role: GatewayRole,
    /// Tag values the worker holds; stands in for the x86 worker process
    /// a real gateway forwards to over a named pipe.
    worker: Arc<Mutex<HashMap<String, serde_json::Value>>>,
}

/// A tag value, as written and read.
#[derive(Debug, Serialize, Deserialize)]
pub struct TagValue {
    /// The tag's name.
    #[serde(default)]
    pub tag: String,
    /// Its value.
    pub value: serde_json::Value,
}

impl Gateway {
    /// A gateway with `role` and an empty worker session.
    pub fn new(role: GatewayRole) -> Self {
        Self {
            role,
            worker: Arc::default(),
        }
    }

    /// The application routes: the gated write, the read, the role
    /// toggles and the legacy `/health/live` redirect. The tiers are
    /// mounted beside them by the caller.
    pub fn configure_app(&self, config: &mut web::ServiceConfig) {
        let worker = web::Data::new(self.worker.clone());
        config.app_data(worker).service(
            web::resource("/tags/{name}")
                .route(web::get().to(read_tag))
                // Only the write is gated: reading from a standby is safe.
                .route(
                    web::post()
                        .to(write_tag)
                        .wrap(RequireActiveNode::new(self.role.clone())),
                ),
        );
        config.service(
            web::resource(LEGACY_LIVE_PATH)
                .route(web::get().to(legacy_live))
                .route(web::head().to(legacy_live)),
        );
        self.configure_admin(config);
    }

    /// The role toggles, for the failover manager: `POST /admin/active`,
    /// `POST /admin/standby`, `GET /admin/role`. On the application port,
    /// where the failover manager's notify scripts reach them; a real
    /// deployment restricts `/admin` to the manager's host.
    fn configure_admin(&self, config: &mut web::ServiceConfig) {
        let role = web::Data::new(self.role.clone());
        config
            .app_data(role)
            .route("/admin/active", web::post().to(make_active))
            .route("/admin/standby", web::post().to(make_standby))
            .route("/admin/role", web::get().to(show_role));
    }
}

type Worker = web::Data<Arc<Mutex<HashMap<String, serde_json::Value>>>>;

/// `POST /tags/{name}`: forwards a write to the worker (active only).
async fn write_tag(
    name: web::Path<String>,
    worker: Worker,
    body: web::Json<serde_json::Value>,
) -> HttpResponse {
    let name = name.into_inner();
    let value = body.into_inner();
    lock(&worker).insert(name.clone(), value.clone());
    HttpResponse::Ok().json(TagValue { tag: name, value })
}

/// `GET /tags/{name}`: the worker's last value of a tag, 404 if none.
async fn read_tag(name: web::Path<String>, worker: Worker) -> HttpResponse {
    let name = name.into_inner();
    let value = lock(&worker).get(&name).cloned();
    match value {
        Some(value) => HttpResponse::Ok().json(TagValue { tag: name, value }),
        None => HttpResponse::NotFound().finish(),
    }
}

/// The worker map; a panic in another request cannot leave it half
/// written (every change is one insert), so poisoning is ignored.
fn lock(
    worker: &Mutex<HashMap<String, serde_json::Value>>,
) -> std::sync::MutexGuard<'_, HashMap<String, serde_json::Value>> {
    worker.lock().unwrap_or_else(|e| e.into_inner())
}

async fn legacy_live() -> HttpResponse {
    HttpResponse::PermanentRedirect()
        .insert_header((header::LOCATION, Health::paths().live))
        .finish()
}

async fn make_active(role: web::Data<GatewayRole>) -> HttpResponse {
    role.set_active(true);
    role_body(&role)
}

async fn make_standby(role: web::Data<GatewayRole>) -> HttpResponse {
    role.set_active(false);
    role_body(&role)
}

async fn show_role(role: web::Data<GatewayRole>) -> HttpResponse {
    role_body(&role)
}

fn role_body(role: &GatewayRole) -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "role": role.name() }))
}
