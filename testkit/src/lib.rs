//! Test support shared by the workspace tests (`tests/`), the examples'
//! process tests (`examples/*/tests`) and the bench, so there is one copy
//! of each part:
//!
//! * [`http`]: the one HTTP client, [`request`] over a fresh connection
//!   (or [`request_within`] a deadline) and [`parse_response`] into a
//!   [`Response`] (blocking; [`request_async`] for async tests);
//! * [`schema`](mod@schema): [`assert_canonical`] and [`assert_canonical_body`], the
//!   canonical health answer against `spec/health-response.schema.json`;
//! * [`process`]: a service binary as a child process ([`Launch`],
//!   [`ServiceProcess`]), [`start_cluster`] on loopback, [`free_port`],
//!   [`eventually`] and the [`PATIENCE`] every wait is bounded by;
//! * [`grpc`]: [`grpc_check`], `grpc.health.v1` over a real tonic client;
//! * [`postgres`]: the one throwaway PostgreSQL server harness;
//! * [`promtool`](mod@promtool): `promtool check metrics` on a scrape;
//! * [`fault`]: real processes in a network namespace of the test's own,
//!   with partitions, loss and pauses, and a checker of every node's
//!   `/health/active` answers;
//! * [`browser`]: headless Chromium, the DOM of a page after its scripts
//!   ran ([`browser::dump_dom`]) and screenshots; [`dom`], reading that
//!   DOM by the page's hooks; [`dashboard`], `zb-health dashboard` as a
//!   child process; [`fleet`], 300 synthetic pods' history endpoints for
//!   it.
//!
//! The client is the bottom layer: the schema checks read its [`Response`],
//! the processes answer with it, and nothing here depends on an example
//! crate, so the workspace tests and the examples can both use it.

pub mod browser;
pub mod dashboard;
pub mod dom;
pub mod fault;
pub mod fleet;
pub mod grpc;
pub mod http;
pub mod postgres;
pub mod process;
pub mod promtool;
pub mod schema;

pub use grpc::{GrpcAnswer, GrpcCode, ServingStatus, grpc_check};
pub use http::{Response, parse_response, request, request_async, request_within};
pub use process::{
    LONG_DRAIN_DELAY_MS, Launch, PATIENCE, ServiceProcess, assert_host_binds_every_port,
    eventually, free_port, free_udp_addr, restart_cluster_node, start_cluster, start_cluster_with,
};
pub use schema::{assert_canonical, assert_canonical_body, schema};
