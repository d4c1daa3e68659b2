//! `RequireActiveNode` over a real socket (ZB-4): a gated scope answers on
//! the active node and refuses with 503 on a standby, and the gate follows
//! the cluster view as it flips.

mod support;

use std::sync::Arc;

use actix_web::{web, App, HttpResponse, HttpServer};
use support::request;
use zb_health::cluster::{
    ClusterActiveNode, ClusterActiveNodeGate, ClusterState, ClusterView, InMemoryClusterView, Member,
    MemberStatus,
};
use zb_health::{ActiveNodeGate, RequireActiveNode, STANDBY_BODY};

fn cluster(self_address: &str, oldest: &str) -> ClusterState {
    let member = |address: &str, age| Member {
        address: address.into(),
        status: MemberStatus::Up,
        roles: vec![],
        age,
        reachable: true,
    };
    let other = if oldest == "a" { "b" } else { "a" };
    ClusterState { self_address: self_address.into(), members: vec![member(oldest, 1), member(other, 2)] }
}

fn serve(gate: impl ActiveNodeGate + Clone) -> (std::net::SocketAddr, actix_web::dev::ServerHandle) {
    let server = HttpServer::new(move || {
        App::new()
            .service(
                web::scope("/admin")
                    .wrap(RequireActiveNode::new(gate.clone()))
                    .route("/deploy", web::post().to(|| async { HttpResponse::Ok().body("deployed") })),
            )
            .route("/public", web::get().to(|| async { HttpResponse::Ok().body("open") }))
    })
    .workers(1)
    .disable_signals()
    .bind(("127.0.0.1", 0))
    .unwrap();
    let addr = server.addrs()[0];
    let server = server.run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    (addr, handle)
}

#[actix_web::test]
async fn the_gate_passes_on_the_active_node_and_refuses_on_a_standby() {
    let view = Arc::new(InMemoryClusterView::new());
    let dyn_view: Arc<dyn ClusterView> = view.clone();
    let gate = Arc::new(ClusterActiveNodeGate::new(dyn_view, ClusterActiveNode::unscoped()));
    let (addr, handle) = serve(gate.clone());

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
    handle.stop(false).await;
}

#[actix_web::test]
async fn any_closure_is_a_gate() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let active = Arc::new(AtomicBool::new(false));
    let flag = active.clone();
    let (addr, handle) = serve(Arc::new(move || flag.load(Ordering::Relaxed)) as Arc<dyn ActiveNodeGate>);
    assert_eq!(request(addr, "POST", "/admin/deploy").await.status, 503);
    active.store(true, Ordering::Relaxed);
    assert_eq!(request(addr, "POST", "/admin/deploy").await.status, 200);
    handle.stop(false).await;
}
