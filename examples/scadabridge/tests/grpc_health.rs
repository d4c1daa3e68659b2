//! scadabridge's `grpc.health.v1` server, from the manifest's `grpc`
//! section, over a real tonic client: `""` (ready), `scadabridge.v1.Writes`
//! (active) and `scadabridge.db` (the database probe) are `SERVING` on the
//! warm single node, an unknown service is `NOT_FOUND`, and SIGTERM turns
//! the server `NOT_SERVING` during the drain.

mod common;

use common::{DEADLINE, launch, start_warm};
use zb_health_testkit::{GrpcCode, ServingStatus, eventually, grpc_check};

#[test]
fn grpc_health_serves_the_manifests_services_and_turns_not_serving_on_sigterm() {
    let node = start_warm(&launch().env("DRAIN_DELAY_MS", "10000"));
    let port = node.grpc_port;
    for service in ["", "scadabridge.v1.Writes", "scadabridge.db"] {
        assert_eq!(
            grpc_check(port, service),
            Ok(ServingStatus::Serving),
            "{service:?}"
        );
    }
    // The name plant-service used before the convergence is not mapped.
    assert_eq!(grpc_check(port, "plant.v1.Writes"), Err(GrpcCode::NotFound));

    node.sigterm();
    eventually("\"\" NOT_SERVING during the drain", DEADLINE, || {
        (grpc_check(port, "") == Ok(ServingStatus::NotServing)).then_some(())
    });
    assert_eq!(
        grpc_check(port, "scadabridge.v1.Writes"),
        Ok(ServingStatus::NotServing)
    );
}
