//! What every answer is made of before it is written: a [`HealthReport`]
//! (a tier's, one probe's path, a health group's, the startup path's, or
//! `live`'s from its watchdogs), its [`HealthEntry`]s and how each run
//! ended ([`EntryOutcome`]). It is the value every response writer
//! consumes, and it applies the disclosure levels for them
//! ([`HealthReport::disclosed`], [`HealthReport::without_cluster_addresses`];
//! BE-HLTH-007).
//!
//! Also here: the fixed descriptions of a probe that errored, panicked or
//! timed out, which replace the real text in every body (BE-HLTH-007;
//! the executor's others, such as a stale result's, are in its
//! module), and the `data` key `clusterReady` reads (AT-8).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use zb_health_spec::{Disclosure, vocab::CLUSTER_ADDRESS_KEYS};
use zb_health_spec::{HealthStatus, Tag};

/// The fixed description of a probe that returned `Err`. The error itself
/// goes to the log only (BE-HLTH-007).
pub(crate) const ERRORED_DESCRIPTION: &str = "check failed";
/// The fixed description of a probe that panicked. The panic message goes
/// to the log only (BE-HLTH-007).
pub(crate) const PANICKED_DESCRIPTION: &str = "check panicked";

/// The fixed description of an entry whose run missed its deadline:
/// `timed out after N ms`, with the probe's deadline. Made when a run
/// times out, not kept per probe: a timeout allocates its entry's
/// description anyway, so no probe keeps a copy it may never need.
pub fn timeout_description(timeout: Duration) -> String {
    format!("timed out after {} ms", timeout.as_millis())
}

/// The `data` key in which a cluster-membership probe reports this node's
/// own member status, in lower case (`joining`, `up`, `leaving`, …):
/// besides the entry's status, what `clusterReady` reads (AT-8), since a
/// policy may call a node Healthy before it is `Up` (`Default`: Joining).
pub const MEMBER_STATUS_KEY: &str = "memberStatus";
/// The [`MEMBER_STATUS_KEY`] value of a member that is `Up`.
pub const MEMBER_UP: &str = "up";

/// One answer (ZB-3): the aggregate and its entries, one per probe in
/// registration order (one per watchdog on `live`), after the lifecycle's
/// `startup` or `shutdown` entry when one was added.
#[derive(Debug, Clone, PartialEq)]
pub struct HealthReport {
    /// The tier that ran.
    pub tier: Tag,
    /// The worst entry's status; `Healthy` when there are none (AT-2).
    pub status: HealthStatus,
    /// Wall-clock time of the whole tier.
    pub total_duration: Duration,
    /// The entries, in the order above.
    pub entries: Vec<HealthEntry>,
}

impl HealthReport {
    /// Builds a report; the aggregate is derived, never passed in, so it
    /// cannot disagree with the entries.
    pub fn new(tier: Tag, entries: Vec<HealthEntry>, total_duration: Duration) -> Self {
        let status = HealthStatus::aggregate(entries.iter().map(|e| e.status));
        Self {
            tier,
            status,
            total_duration,
            entries,
        }
    }

    /// The entry named `name`, if any.
    pub fn entry(&self, name: &str) -> Option<&HealthEntry> {
        self.entries.iter().find(|e| &*e.name == name)
    }

    /// The report as `level` shows it (BE-HLTH-007), for a custom writer:
    /// `Full` is the report itself; `Names` drops every description and
    /// `data`; `Status` drops the entries. The aggregate status and the
    /// total duration are kept as they are (with `Status`, `status` is no
    /// longer derivable from `entries`).
    pub fn disclosed(&self, level: Disclosure) -> Cow<'_, HealthReport> {
        let entries = match level {
            Disclosure::Full => return Cow::Borrowed(self),
            Disclosure::Status => Vec::new(),
            Disclosure::Names => self
                .entries
                .iter()
                .map(|e| HealthEntry {
                    description: None,
                    data: None,
                    ..e.clone()
                })
                .collect(),
        };
        Cow::Owned(HealthReport {
            tier: self.tier,
            status: self.status,
            total_duration: self.total_duration,
            entries,
        })
    }
}

impl HealthReport {
    /// The report without the cluster addresses
    /// ([`CLUSTER_ADDRESS_KEYS`]) in any entry's `data`, as an application
    /// port shows it by default; unchanged (borrowed) when no entry has one.
    pub fn without_cluster_addresses(&self) -> Cow<'_, HealthReport> {
        let has = |e: &HealthEntry| {
            e.data
                .as_ref()
                .is_some_and(|d| CLUSTER_ADDRESS_KEYS.iter().any(|k| d.contains_key(*k)))
        };
        if !self.entries.iter().any(has) {
            return Cow::Borrowed(self);
        }
        let entries = self
            .entries
            .iter()
            .map(|e| {
                let data = e.data.as_ref().and_then(|d| {
                    let kept: Map<String, Value> = d
                        .iter()
                        .filter(|(k, _)| !CLUSTER_ADDRESS_KEYS.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    (!kept.is_empty()).then(|| Box::new(kept))
                });
                HealthEntry { data, ..e.clone() }
            })
            .collect();
        Cow::Owned(HealthReport {
            entries,
            ..self.clone()
        })
    }
}

/// One probe's line in a report.
#[derive(Debug, Clone, PartialEq)]
pub struct HealthEntry {
    /// The probe's registered name: the real one even when it panicked or
    /// hung (improving on AT-3's `unknown`).
    pub name: Arc<str>,
    /// The entry's status after the failure-status mapping.
    pub status: HealthStatus,
    /// The probe's own fixed description, or the executor's fixed text for
    /// an error, panic or timeout. Never raw error text.
    pub description: Option<Cow<'static, str>>,
    /// How long the probe ran.
    pub duration: Duration,
    /// The probe's structured `data`, if it gave any. Boxed: most entries
    /// have none, so each carries one pointer, not a whole map.
    pub data: Option<Box<Map<String, Value>>>,
    /// How the run ended.
    pub outcome: EntryOutcome,
}

impl HealthEntry {
    /// An entry no probe run made (a lifecycle entry, a watchdog's line):
    /// no duration, no data, `Completed`.
    pub(crate) fn fixed(
        name: impl Into<Arc<str>>,
        status: HealthStatus,
        description: Option<Cow<'static, str>>,
    ) -> Self {
        Self {
            name: name.into(),
            status,
            description,
            duration: Duration::ZERO,
            data: None,
            outcome: EntryOutcome::Completed,
        }
    }
}

/// How a probe's run ended; lets logs, metrics and writers tell a verdict
/// from a failure of the probe itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryOutcome {
    /// The probe returned a result.
    Completed,
    /// The probe returned `Err`.
    Errored,
    /// The probe panicked.
    Panicked,
    /// The probe missed its deadline and was cancelled.
    TimedOut,
    /// The probe did not run: a probe it depends on is failing
    /// (`depends_on`).
    Skipped,
}

impl EntryOutcome {
    /// The one spelling of an outcome, in the history document and the
    /// logs alike: `completed`, `errored`, `panicked`, `timedOut`,
    /// `skipped`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Errored => "errored",
            Self::Panicked => "panicked",
            Self::TimedOut => "timedOut",
            Self::Skipped => "skipped",
        }
    }
}
