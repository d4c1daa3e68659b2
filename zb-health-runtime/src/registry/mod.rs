//! The registry (AT-1): one per process, shared by every server that serves
//! health. It holds the probe table (which validates registrations and
//! hands each new probe to the executor, starting a
//! background probe's schedule), the executor that runs a tier's probes
//! (asking the [lifecycle](crate::lifecycle) whether a startup gate is
//! pending), and the lifecycle (gates, watchdogs, drain, maintenance),
//! which it hands out as it is ([`HealthRegistry::lifecycle`]); beside them
//! it keeps each tier's last verdict for the transition log and metrics
//! (BE-HLTH-008) and the registry's part of the [history](crate::history).
//!
//! [`HealthRegistry::answer`] answers a [`Selection`]: a tier (the
//! lifecycle applied to the executor's report of the table's probes), a
//! tier with exclusions, one probe, a health group. Every public method of
//! the registry is in this folder, one file per concern (`probes`,
//! `answers`, `history`, `publishing` (the transition publishers),
//! `restart` (the `restart_after` escalation's steps), `builder`, over
//! `inner`, which also hands out the lifecycle), except
//! `set_cluster_view` (in `cluster`, whose types it names: `cluster` builds
//! on the registry, not the other way round).

mod answers;
mod builder;
mod history;
mod inner;
mod probes;
mod publishing;
mod restart;
#[cfg(test)]
mod tests;

pub use crate::registration::{ProbeRegistration, RegistryError};
pub use crate::table::RegistrationHandle;
pub use answers::{Answer, Exclusion, Selection};
pub use builder::HealthRegistryBuilder;
pub use inner::HealthRegistry;
pub use probes::InFlight;
