//! scadabridge's `grpc.health.v1` server, from the manifest's `grpc`
//! section, over a real tonic client: `""` (ready), `scadabridge.v1.Writes`
//! (active) and `scadabridge.db` (the database probe) are `SERVING` on the
//! warm single node, an unknown service is `NOT_FOUND`, and SIGTERM turns
//! the server `NOT_SERVING` during the drain.

mod common;

use std::time::{Duration, Instant};

use common::{DEADLINE, launch, start_warm};
use tonic::Code;
use tonic::transport::Channel;
use zb_health::grpc::tonic_health::pb::HealthCheckRequest;
use zb_health::grpc::tonic_health::pb::health_check_response::ServingStatus;
use zb_health::grpc::tonic_health::pb::health_client::HealthClient;

async fn check(client: &mut HealthClient<Channel>, service: &str) -> Result<ServingStatus, Code> {
    let request = HealthCheckRequest {
        service: service.to_owned(),
    };
    client
        .check(request)
        .await
        .map(|r| r.into_inner().status())
        .map_err(|s| s.code())
}

#[test]
fn grpc_health_serves_the_manifests_services_and_turns_not_serving_on_sigterm() {
    let node = start_warm(&launch().env("DRAIN_DELAY_MS", "10000"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let channel = Channel::from_shared(format!("http://127.0.0.1:{}", node.grpc_port))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut client = HealthClient::new(channel);
        for service in ["", "scadabridge.v1.Writes", "scadabridge.db"] {
            assert_eq!(
                check(&mut client, service).await,
                Ok(ServingStatus::Serving),
                "{service:?}"
            );
        }
        assert_eq!(
            check(&mut client, "plant.v1.Writes").await,
            Err(Code::NotFound)
        );

        node.sigterm();
        let start = Instant::now();
        while check(&mut client, "").await != Ok(ServingStatus::NotServing) {
            assert!(
                start.elapsed() < DEADLINE,
                "still serving after {DEADLINE:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            check(&mut client, "scadabridge.v1.Writes").await,
            Ok(ServingStatus::NotServing)
        );
    });
}
