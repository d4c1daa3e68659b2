//! One pod's history document as the dashboard keeps it: typed, so 300
//! pods' samples cost bytes, not JSON trees; merged with each delta
//! (`?since=`, `spec/history.md`); and summed up in one row for the fleet
//! page.
//!
//! Only the parts the merge or the summary reads are typed (the probes,
//! the events, the capacity and the cluster's member URLs); `tiers`,
//! `lifecycle` and `cluster` are kept as the JSON they came as and passed
//! on verbatim.

use std::collections::{HashMap, VecDeque};

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The members [`check_shape`] requires: three of those
/// `spec/health-history.schema.json` requires, enough to tell a history
/// document from another JSON answer and to say which is missing.
const HISTORY_MEMBERS: [&str; 3] = ["nowMs", "tiers", "probes"];

/// A status, as the document spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Status {
    Healthy,
    Degraded,
    Unhealthy,
}

/// How a result came about, as the document spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    Completed,
    Errored,
    Panicked,
    TimedOut,
    Skipped,
}

/// One result: 24 bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sample {
    at_ms: u64,
    status: Status,
    duration_ms: f64,
    outcome: Outcome,
}

/// One status change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Transition {
    at_ms: u64,
    from: Option<Status>,
    to: Status,
    outcome: Outcome,
    description: Option<String>,
}

/// One probe's record.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Probe {
    pub name: String,
    tiers: Vec<String>,
    pub status: Option<Status>,
    pub description: Option<String>,
    duration_ms: Option<f64>,
    outcome: Option<Outcome>,
    since_ms: Option<u64>,
    pub flaps: u32,
    runs: u64,
    samples: VecDeque<Sample>,
    transitions: VecDeque<Transition>,
}

/// One lifecycle event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Event {
    at_ms: u64,
    kind: String,
    name: String,
}

/// The rings' sizes, as the document states them.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capacity {
    samples: usize,
    transitions: usize,
    events: usize,
}

/// What a delta says of itself.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Delta {
    #[allow(dead_code)] // Read for the contract: the reader's own since.
    since_ms: u64,
    names: Vec<String>,
    cluster_unchanged: bool,
}

/// A history document, or a delta of one.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct History {
    pub service: Option<String>,
    pub now_ms: u64,
    started_ms: u64,
    flap_window_ms: u64,
    pub tiers: Box<RawValue>,
    pub probes: Vec<Probe>,
    pub lifecycle: Box<RawValue>,
    events: VecDeque<Event>,
    cluster: Box<RawValue>,
    capacity: Capacity,
    #[serde(skip_serializing, default)]
    delta: Option<Delta>,
}

/// What the summary reads of `tiers` and `lifecycle`.
#[derive(Deserialize)]
struct TierPeek {
    status: Option<Status>,
}

/// No lifecycle, or one that is not read, is all `false` on the page.
#[derive(Default, Deserialize)]
#[serde(default)]
struct LifecyclePeek {
    drain: Option<DrainPeek>,
    gates: Vec<GatePeek>,
    maintenance: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct DrainPeek {
    draining: bool,
}

#[derive(Deserialize)]
struct GatePeek {
    state: String,
}

#[derive(Deserialize)]
struct ClusterPeek {
    members: Vec<MemberPeek>,
}

#[derive(Deserialize)]
struct MemberPeek {
    status: String,
    reachable: bool,
    #[serde(default)]
    history: Option<String>,
}

/// `text` as a history document or a delta, or why it is none: first the
/// shape (a JSON object with every member of [`HISTORY_MEMBERS`]), then
/// the typed read.
pub fn parse(text: &str) -> Result<History, String> {
    // The typed read first: a good document is read once. Only a bad one
    // is read again, for the shape, which names the mistake better.
    serde_json::from_str(text).or_else(|e| {
        check_shape(text)?;
        Err(format!("not a history document: {e}"))
    })
}

/// Whether `text` is one JSON object with every member of
/// [`HISTORY_MEMBERS`]; the values are skipped, not read. A body that is
/// no object at all (an HTML page) is named so, not by where its JSON
/// breaks.
pub fn check_shape(text: &str) -> Result<(), String> {
    if !text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{')
    {
        return Err("not a history document: not a JSON object".into());
    }
    let members: HashMap<String, IgnoredAny> = serde_json::from_str(text)
        .map_err(|e| format!("not a history document: invalid JSON: {e}"))?;
    match HISTORY_MEMBERS.iter().find(|m| !members.contains_key(**m)) {
        Some(missing) => Err(format!("not a history document: no `{missing}`")),
        None => Ok(()),
    }
}

/// What one row of the fleet page shows of a pod.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary<'a> {
    pub service: Option<&'a str>,
    /// The worst status its tiers last answered; `None` before any.
    pub status: Option<Status>,
    pub tiers: &'a RawValue,
    /// The probes that are not `Healthy`, worst first.
    pub failing: Vec<FailingProbe<'a>>,
    /// Status changes within the flap window, over every probe.
    pub flaps: u32,
    pub draining: bool,
    /// A startup gate still pending.
    pub starting: bool,
    pub maintenance: bool,
}

/// A probe that is not `Healthy`.
#[derive(Debug, Serialize)]
pub struct FailingProbe<'a> {
    pub name: &'a str,
    pub status: Status,
    pub description: Option<&'a str>,
}

impl History {
    /// Whether the document is a delta (an answer to `?since=`).
    pub fn is_delta(&self) -> bool {
        self.delta.is_some()
    }

    /// Whether the document carries a cluster to take: a whole document
    /// does, a delta only when the cluster changed.
    pub fn carries_cluster(&self) -> bool {
        self.delta.as_ref().is_none_or(|d| !d.cluster_unchanged)
    }

    /// The exact JSON of `cluster`, whose digest the next delta request
    /// sends (`null` when there is none).
    pub fn cluster_json(&self) -> &str {
        self.cluster.get()
    }

    /// The history URLs of the members its cluster lists, but those that
    /// departed: `removed`, or leaving (`leaving`, `exiting`, `down`) and
    /// no longer reached. These are the pods a `--discover` dashboard
    /// polls. A pod that crashed stays `up` and unreachable, and listed:
    /// its peers still expect it, and so does the page.
    pub fn member_urls(&self) -> Vec<String> {
        let Ok(Some(cluster)) = serde_json::from_str::<Option<ClusterPeek>>(self.cluster.get())
        else {
            return Vec::new();
        };
        cluster
            .members
            .into_iter()
            .filter(|m| match m.status.as_str() {
                "removed" => false,
                "leaving" | "exiting" | "down" => m.reachable,
                _ => true,
            })
            .filter_map(|m| m.history)
            .collect()
    }

    /// Merges `delta` (an answer to `?since=` of this document's `nowMs`)
    /// into this document. `Err` when it cannot be merged (another
    /// process started, or it is no delta): the caller keeps `delta` as it
    /// is and reads the whole document next.
    pub fn merge(&mut self, delta: History) -> Result<(), Box<History>> {
        let same_process = delta.started_ms == self.started_ms;
        let Some(meta) = delta.delta.clone().filter(|_| same_process) else {
            return Err(Box::new(delta));
        };
        let cap = delta.capacity;
        let by_name = |probes: Vec<Probe>| -> HashMap<String, Probe> {
            probes.into_iter().map(|p| (p.name.clone(), p)).collect()
        };
        let mut changed = by_name(delta.probes);
        let mut kept = by_name(std::mem::take(&mut self.probes));
        // The delta's names decide which probes there are, and in what
        // order; one that changed and was not known comes in as it is.
        self.probes = meta
            .names
            .iter()
            .filter_map(|name| match (kept.remove(name), changed.remove(name)) {
                (Some(old), Some(new)) => Some(old.merged(new, cap)),
                (None, Some(new)) => Some(new),
                (Some(old), None) => Some(old),
                (None, None) => None,
            })
            .collect();
        add_new(&mut self.events, delta.events, cap.events);
        self.service = delta.service;
        self.now_ms = delta.now_ms;
        self.flap_window_ms = delta.flap_window_ms;
        self.tiers = delta.tiers;
        self.lifecycle = delta.lifecycle;
        self.capacity = cap;
        if !meta.cluster_unchanged {
            self.cluster = delta.cluster;
        }
        Ok(())
    }

    /// One row of the fleet page.
    pub fn summary(&self) -> Summary<'_> {
        let tiers: HashMap<String, Option<TierPeek>> =
            serde_json::from_str(self.tiers.get()).unwrap_or_default();
        let status = tiers
            .values()
            .filter_map(|t| t.as_ref().and_then(|t| t.status))
            .max();
        let lifecycle: LifecyclePeek = serde_json::from_str::<Option<_>>(self.lifecycle.get())
            .unwrap_or(None)
            .unwrap_or_default();
        let mut failing: Vec<FailingProbe<'_>> = self
            .probes
            .iter()
            .filter_map(|p| {
                Some(FailingProbe {
                    name: &p.name,
                    status: p.status.filter(|s| *s != Status::Healthy)?,
                    description: p.description.as_deref(),
                })
            })
            .collect();
        failing.sort_by_key(|f| std::cmp::Reverse(f.status));
        Summary {
            service: self.service.as_deref(),
            status,
            tiers: &self.tiers,
            failing,
            flaps: self.probes.iter().map(|p| p.flaps).sum(),
            draining: lifecycle.drain.is_some_and(|d| d.draining),
            starting: lifecycle.gates.iter().any(|g| g.state == "pending"),
            maintenance: lifecycle.maintenance.is_some(),
        }
    }
}

impl Probe {
    /// This record with `new`'s (from a delta) merged in: the head is
    /// `new`'s; of its samples, the last `runs` counts as new are added
    /// (a delta may repeat the sample of its first millisecond); of its
    /// transitions, those not held yet.
    fn merged(mut self, new: Probe, cap: Capacity) -> Probe {
        if new.runs < self.runs {
            // Its history started again: nothing of the old one holds.
            return new;
        }
        let fresh = usize::try_from(new.runs - self.runs).unwrap_or(usize::MAX);
        let skip = new.samples.len().saturating_sub(fresh);
        self.samples.extend(new.samples.into_iter().skip(skip));
        trim(&mut self.samples, cap.samples);
        add_new(&mut self.transitions, new.transitions, cap.transitions);
        Probe {
            samples: self.samples,
            transitions: self.transitions,
            ..new
        }
    }
}

/// Adds to `ring` those of `new` it does not hold yet, then keeps the
/// newest `cap`.
fn add_new<T: PartialEq>(ring: &mut VecDeque<T>, new: VecDeque<T>, cap: usize) {
    for item in new {
        if !ring.contains(&item) {
            ring.push_back(item);
        }
    }
    trim(ring, cap);
}

/// Drops the oldest of `ring` beyond `cap`.
fn trim<T>(ring: &mut VecDeque<T>, cap: usize) {
    while ring.len() > cap {
        ring.pop_front();
    }
}

#[cfg(test)]
mod tests;
