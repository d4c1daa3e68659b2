//! `RequireActiveNode` over a real socket (ZB-4): a gated scope answers on
//! the active node and refuses with 503 on a standby, and the gate follows
//! the cluster view as it flips; a drain closes it, whatever the gate's
//! source (BE-HLTH-005).

mod support;

use std::sync::Arc;

use actix_web::{HttpResponse, web};
use support::request;
use zb_health::cluster::{
    ClusterActiveNode, ClusterActiveNodeGate, ClusterState, ClusterView, InMemoryClusterView,
    Member, MemberStatus,
};
use zb_health::gate::STANDBY_BODY;
use zb_health::prelude::{ActiveNodeGate, HealthRegistry, RequireActiveNode};

fn cluster(self_address: &str, oldest: &str) -> ClusterState {
    let member = |address: &str, age| Member::new(address, MemberStatus::Up, age);
    let other = if oldest == "a" { "b" } else { "a" };
    ClusterState {
        self_address: self_address.into(),
        members: vec![member(oldest, 1), member(other, 2)],
    }
}

fn serve(gate: impl ActiveNodeGate + Clone) -> support::Server {
    serve_draining(gate, HealthRegistry::new())
}

/// [`serve`], the gate closing during `registry`'s drain.
fn serve_draining(gate: impl ActiveNodeGate + Clone, registry: HealthRegistry) -> support::Server {
    support::serve_with(move |c| {
        c.service(
            web::scope("/admin")
                .wrap(RequireActiveNode::new(gate.clone()).registry(&registry))
                .route(
                    "/deploy",
                    web::post().to(|| async { HttpResponse::Ok().body("deployed") }),
                ),
        )
        .route(
            "/public",
            web::get().to(|| async { HttpResponse::Ok().body("open") }),
        );
    })
}

#[actix_web::test]
async fn the_gate_passes_on_the_active_node_and_refuses_on_a_standby() {
    let view = Arc::new(InMemoryClusterView::new());
    let dyn_view: Arc<dyn ClusterView> = view.clone();
    let gate = Arc::new(ClusterActiveNodeGate::new(
        dyn_view,
        ClusterActiveNode::unscoped(),
    ));
    let server = serve(gate.clone());
    let addr = server.addr;

    // Startup: no cluster yet, so the node is treated as a standby.
    let r = request(addr, "POST", "/admin/deploy").await;
    assert_eq!(r.status, 503);
    assert_eq!(String::from_utf8(r.body.clone()).unwrap(), STANDBY_BODY);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("cache-control"), Some("no-store"));

    view.set(cluster("a", "a"));
    let r = request(addr, "POST", "/admin/deploy").await;
    assert_eq!((r.status, r.body.as_slice()), (200, b"deployed".as_slice()));

    // "b" becomes the oldest (e.g. "a" restarted): "a" is now a standby.
    view.set(cluster("a", "b"));
    assert_eq!(request(addr, "POST", "/admin/deploy").await.status, 503);
    // Routes outside the gated scope are untouched.
    assert_eq!(request(addr, "GET", "/public").await.status, 200);

    view.set(cluster("a", "a"));
    assert_eq!(request(addr, "POST", "/admin/deploy").await.status, 200);
}

#[actix_web::test]
async fn any_closure_is_a_gate() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let active = Arc::new(AtomicBool::new(false));
    let flag = active.clone();
    let server = serve(Arc::new(move || flag.load(Ordering::Relaxed)) as Arc<dyn ActiveNodeGate>);
    let addr = server.addr;
    assert_eq!(request(addr, "POST", "/admin/deploy").await.status, 503);
    active.store(true, Ordering::Relaxed);
    assert_eq!(request(addr, "POST", "/admin/deploy").await.status, 200);
}

/// Whether `/admin/deploy` is refused with the standby answer.
async fn refused_as_standby(addr: std::net::SocketAddr) -> bool {
    let r = request(addr, "POST", "/admin/deploy").await;
    r.status == 503 && r.body == STANDBY_BODY.as_bytes()
}

#[actix_web::test]
async fn a_drain_closes_a_gate_of_the_apps_own() {
    // No cluster: the gate is the app's switch and stays "active" for good.
    let registry = HealthRegistry::new();
    let server = serve_draining(|| true, registry.clone());
    let addr = server.addr;
    assert_eq!(request(addr, "POST", "/admin/deploy").await.status, 200);
    let gate = RequireActiveNode::new(|| true).registry(&registry);
    assert!(gate.admits());

    assert!(registry.lifecycle().begin_drain());
    assert!(refused_as_standby(addr).await, "the standby answer");
    assert!(!gate.admits());
    // Only the gated routes: the rest still serves during the drain.
    assert_eq!(request(addr, "GET", "/public").await.status, 200);
}

#[actix_web::test]
async fn a_drain_closes_the_cluster_gate_before_the_cluster_has_moved() {
    // The view still says this node is the oldest (gossip has not yet
    // carried its `Leaving`): the drain alone closes the gate.
    let view = Arc::new(InMemoryClusterView::with_state(cluster("a", "a")));
    let dyn_view: Arc<dyn ClusterView> = view.clone();
    let gate = Arc::new(ClusterActiveNodeGate::new(
        dyn_view,
        ClusterActiveNode::unscoped(),
    ));
    let registry = HealthRegistry::new();
    let server = serve_draining(gate.clone(), registry.clone());
    assert_eq!(
        request(server.addr, "POST", "/admin/deploy").await.status,
        200
    );
    registry.lifecycle().begin_drain();
    assert!(gate.is_active_node(), "the gate itself is unchanged");
    assert!(refused_as_standby(server.addr).await);
}

#[actix_web::test]
async fn the_process_registry_drain_is_the_default() {
    // Another registry's drain does not close a gate on the process one.
    let other = HealthRegistry::new();
    other.lifecycle().begin_drain();
    let gate = RequireActiveNode::new(|| true);
    assert!(gate.admits(), "the process registry is not draining");
    assert!(!RequireActiveNode::new(|| true).registry(&other).admits());
}
