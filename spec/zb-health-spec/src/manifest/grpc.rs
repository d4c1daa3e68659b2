//! The `grpc` section's model: the `grpc.health.v1` service mapping (AT-7).

use std::time::Duration;

use super::{Located, Location};
use crate::Tag;

/// The `grpc` section: which gRPC service names answer from which tier or
/// probe, and the period of the one schedule that feeds every `Watch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcDecl {
    /// The section, for errors about it as a whole.
    pub location: Location,
    /// `period`, when stated; see [`GrpcDecl::period`].
    pub period: Option<Located<Duration>>,
    /// `services`, in the order written. `""` (the whole server) is
    /// `ready` unless listed.
    pub services: Vec<GrpcServiceDecl>,
}

impl GrpcDecl {
    /// The schedule period: the stated one, else
    /// [`crate::grpc::DEFAULT_WATCH_PERIOD`].
    pub fn period(&self) -> Duration {
        self.period
            .map_or(crate::grpc::DEFAULT_WATCH_PERIOD, |p| p.value)
    }
}

/// One entry of `grpc.services`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcServiceDecl {
    /// The gRPC service name (R9: `""` or a dotted name).
    pub name: Located<String>,
    /// What it answers from.
    pub target: GrpcTargetDecl,
}

/// What a gRPC service answers from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrpcTargetDecl {
    /// A tier, written as its name: `plant.v1.Writes: active`.
    Tier(Located<Tag>),
    /// One probe, written `{ probe: database }`; a probe of the manifest
    /// (R4).
    Probe(Located<String>),
}
