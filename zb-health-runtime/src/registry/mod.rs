//! The registry (AT-1): one per process, shared by every server that serves
//! health. A façade over the probe table (which validates registrations
//! and hands each new probe to the [executor](crate::executor), starting a
//! background probe's schedule), the executor that runs a tier's probes
//! (asking the [lifecycle](crate::lifecycle) whether a startup gate is
//! pending), and the lifecycle (gates, watchdogs, drain); beside them it
//! keeps each tier's last verdict for the transition log and metrics
//! (BE-HLTH-008) and the registry's part of the [history](crate::history).
//!
//! Answering a tier is the lifecycle applied to the executor's report of
//! the table's probes; it also answers one probe's path, a health group,
//! the startup path and the history document. Every public method of the
//! registry is in this folder, one file per concern (`probes`, `answers`,
//! `history`, `lifecycle`, `publishing` (the transition publishers),
//! `restart` (the `restart_after` escalation's steps), `builder`, over
//! `inner`), except
//! `set_cluster_view` (in `cluster`, whose types it names: `cluster` builds
//! on the registry, not the other way round).

mod answers;
mod builder;
mod history;
mod inner;
mod lifecycle;
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
