//! The server's settings and its one wiring path, over real sockets.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use crate::http::map_zb_health;
use crate::lifecycle::Drain;
use crate::registry::HealthRegistry;
use crate::server::{DEFAULT_PORT, ZbHealthServer};

fn server() -> ZbHealthServer {
    let registry = HealthRegistry::new();
    let endpoints = map_zb_health(registry.clone());
    ZbHealthServer::new(registry, endpoints, Drain::new(Duration::from_secs(5)))
        .management_port(Some(8081))
}

fn with(vars: &[(&str, &str)]) -> Result<ZbHealthServer, super::SettingError> {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    server().from_lookup(move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
}

#[test]
fn no_variables_keep_loopback_and_the_declared_ports() {
    let s = with(&[]).unwrap();
    assert_eq!(s.host, IpAddr::V4(Ipv4Addr::LOCALHOST));
    assert_eq!((s.port, s.management_port), (DEFAULT_PORT, Some(8081)));
    assert_eq!(s.drain().delay(), Duration::from_secs(5));
}

#[test]
fn host_binds_every_port_and_the_others_override() {
    let s = with(&[
        ("HOST", "0.0.0.0"),
        ("PORT", "9000"),
        ("MANAGEMENT_PORT", "9001"),
        ("GRPC_PORT", "9002"),
        ("DRAIN_DELAY_MS", "250"),
    ])
    .unwrap();
    assert_eq!(s.host, IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    assert_eq!(
        (s.port, s.management_port, s.grpc_port),
        (9000, Some(9001), 9002)
    );
    assert_eq!(s.drain().delay(), Duration::from_millis(250));
}

#[test]
fn a_value_that_cannot_be_used_is_refused_naming_its_variable() {
    for (variable, value) in [
        ("HOST", "localhost"),
        ("PORT", "eighty"),
        ("MANAGEMENT_PORT", "70000"),
        ("GRPC_PORT", "-1"),
        ("DRAIN_DELAY_MS", "5s"),
    ] {
        let e = with(&[(variable, value)]).unwrap_err();
        assert_eq!((e.variable, e.value.as_str()), (variable, value));
        assert!(
            e.to_string()
                .starts_with(&format!("{variable}={value:?}: ")),
            "{e}"
        );
    }
}

#[actix_web::test]
async fn bind_listens_on_host_for_the_application_and_the_management_port() {
    let bound = server()
        .host(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
        .port(0)
        .management_port(Some(0))
        .bind()
        .unwrap();
    let addresses = bound.addresses().clone();
    // Every interface: the kubelet connects to the pod's IP, not loopback.
    for addr in addresses.application.iter().chain(&addresses.management) {
        assert!(addr.ip().is_unspecified(), "{addr}");
    }
    assert_eq!(addresses.application.len(), 1);
    assert_eq!(addresses.management.len(), 1);
    assert_eq!(addresses.grpc, None);
}
