//! `grpc.health.v1` `Check` against a service's gRPC port, over a real
//! tonic client.

use crate::process::PATIENCE;

/// What `grpc.health.v1` answers a `Check(service)`: the serving status, or
/// the gRPC error code (`NotFound` for a name the server does not map).
pub type GrpcAnswer = Result<ServingStatus, GrpcCode>;

/// A gRPC status code, for comparing [`grpc_check`]'s errors.
pub use tonic::Code as GrpcCode;
/// A `grpc.health.v1` serving status, for comparing [`grpc_check`]'s answers.
pub use zb_health::grpc::tonic_health::pb::health_check_response::ServingStatus;

/// `grpc.health.v1` `Check(service)` against the service's gRPC port on
/// 127.0.0.1, over a real tonic client on a connection of its own, bounded
/// by [`PATIENCE`]. A refused connect or the deadline is `Unavailable`, so
/// a test can wait on any answer with [`eventually`](crate::eventually).
pub fn grpc_check(port: u16, service: &str) -> GrpcAnswer {
    use zb_health::grpc::tonic_health::pb::HealthCheckRequest;
    use zb_health::grpc::tonic_health::pb::health_client::HealthClient;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime starts");
    runtime.block_on(async {
        let ask = async {
            let channel =
                tonic::transport::Channel::from_shared(format!("http://127.0.0.1:{port}"))
                    .expect("a loopback URI")
                    .connect()
                    .await
                    .map_err(|_| tonic::Code::Unavailable)?;
            let request = HealthCheckRequest {
                service: service.to_owned(),
            };
            HealthClient::new(channel)
                .check(request)
                .await
                .map(|r| r.into_inner().status())
                .map_err(|s| s.code())
        };
        tokio::time::timeout(PATIENCE, ask)
            .await
            .unwrap_or(Err(tonic::Code::Unavailable))
    })
}
