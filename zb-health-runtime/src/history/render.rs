//! The history document (`spec/health-history.schema.json`), rendered at
//! a disclosure level. Not a hot path: built with `serde_json`.

use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::{Value, json};
use zb_health_spec::history::{Since, cluster_digest};
use zb_health_spec::{Disclosure, HealthStatus, Tag, TagSet};

use super::{EVENTS, Event, FLAP_WINDOW, ProbeView, SAMPLES, TRANSITIONS};
use crate::report::EntryOutcome;

/// A named startup gate's state.
#[derive(Clone)]
pub(crate) struct GateView {
    pub(crate) name: Arc<str>,
    /// `pending`, `ready` or `failed`.
    pub(crate) state: &'static str,
    /// When it was signalled (Unix ms).
    pub(crate) at_ms: Option<u64>,
}

/// A watchdog's state at the read.
pub(crate) struct WatchdogView {
    pub(crate) name: Arc<str>,
    pub(crate) deadline_ms: u64,
    pub(crate) since_beat_ms: Option<f64>,
    pub(crate) stalled: bool,
}

/// The lifecycle at the read.
pub(crate) struct LifecycleView {
    pub(crate) gates: Vec<GateView>,
    pub(crate) watchdogs: Vec<WatchdogView>,
    pub(crate) drain_since_ms: Option<u64>,
    pub(crate) maintenance: Option<MaintenanceView>,
}

/// An open maintenance window.
pub(crate) struct MaintenanceView {
    pub(crate) reason: Arc<str>,
    pub(crate) since_ms: u64,
    pub(crate) until_ms: u64,
}

/// The cluster as this node sees it, addresses included (the render
/// leaves them out where the port does not show them).
#[cfg_attr(not(feature = "cluster"), allow(dead_code))]
#[derive(Default)]
pub(crate) struct ClusterDoc {
    pub(crate) self_address: Option<String>,
    pub(crate) active: Option<String>,
    pub(crate) members: Vec<MemberDoc>,
}

/// One member.
#[cfg_attr(not(feature = "cluster"), allow(dead_code))]
pub(crate) struct MemberDoc {
    pub(crate) address: String,
    pub(crate) status: &'static str,
    pub(crate) reachable: bool,
    pub(crate) active: bool,
    pub(crate) is_self: bool,
    /// Its shared-probe verdicts, by probe: `true` failing.
    pub(crate) shared: Vec<(String, bool)>,
    /// The verdict its ready tier last gave, as it gossips it; `None`
    /// without the gossip or before its first answer.
    pub(crate) ready: Option<HealthStatus>,
    /// Its history document's URL, as it gossips it; `None` without.
    pub(crate) history: Option<String>,
}

/// Everything one answer shows, copied at the read.
pub(crate) struct Document {
    pub(crate) service: Option<Arc<str>>,
    pub(crate) now_ms: u64,
    pub(crate) started_ms: u64,
    pub(crate) tiers: [Option<(HealthStatus, u16, u64)>; 3],
    pub(crate) probes: Vec<(Arc<str>, TagSet, ProbeView)>,
    pub(crate) lifecycle: LifecycleView,
    pub(crate) events: Vec<Event>,
    pub(crate) cluster: Option<ClusterDoc>,
}

/// The JSON of `doc` at `level`; `addresses`: whether cluster addresses
/// are shown (the port's rule, as for the tier bodies).
///
/// With `delta` (what the reader holds, and every probe's name), the
/// document is a delta: `doc` holds only what was recorded since, and the
/// cluster is left out while its digest is the reader's.
pub(crate) fn render(
    doc: &Document,
    level: Disclosure,
    addresses: bool,
    delta: Option<(&Since, Vec<Arc<str>>)>,
) -> String {
    let described = level == Disclosure::Full;
    let shown = level != Disclosure::Status;
    let tier = |t: Tag| match doc.tiers[t as usize] {
        Some((status, code, at)) => json!({"status": status.as_str(), "code": code, "atMs": at}),
        None => Value::Null,
    };
    // Serialised as it is written, with no `Value` tree: the samples of
    // 1,000 probes as `Value`s were a 145 MB peak for an 8 MB document.
    let probes = each(
        if shown { &doc.probes[..] } else { &[] },
        |(name, tags, v)| ProbeOut {
            name,
            tiers: tags.iter().map(Tag::as_str).collect(),
            status: v.status.map(HealthStatus::as_str),
            description: v.description.as_deref().filter(|_| described),
            duration_ms: v.duration_ms,
            outcome: v.outcome.map(EntryOutcome::as_str),
            since_ms: v.since_ms,
            flaps: v.flaps,
            runs: v.runs,
            samples: each(&v.samples, |&(at_ms, status, duration_ms, outcome)| {
                SampleOut {
                    at_ms,
                    status: status.as_str(),
                    duration_ms,
                    outcome: outcome.as_str(),
                }
            }),
            transitions: each(&v.transitions, move |(at_ms, from, to, outcome, d)| {
                TransitionOut {
                    at_ms: *at_ms,
                    from: from.as_str(),
                    to: to.as_str(),
                    outcome: outcome.as_str(),
                    description: d.as_deref().filter(|_| described),
                }
            }),
        },
    );
    let lifecycle = if shown {
        let l = &doc.lifecycle;
        json!({
            "gates": l.gates.iter().map(|g| json!({"name": &*g.name, "state": g.state, "atMs": g.at_ms})).collect::<Vec<_>>(),
            "watchdogs": l.watchdogs.iter().map(|w| json!({
                "name": &*w.name, "deadlineMs": w.deadline_ms, "sinceBeatMs": w.since_beat_ms, "stalled": w.stalled,
            })).collect::<Vec<_>>(),
            "drain": {"draining": l.drain_since_ms.is_some(), "sinceMs": l.drain_since_ms},
            // The reason is the operator's words: shown where descriptions are.
            "maintenance": l.maintenance.as_ref().map(|m| json!({
                "reason": described.then_some(&*m.reason), "sinceMs": m.since_ms, "untilMs": m.until_ms,
            })),
        })
    } else {
        Value::Null
    };
    let events: Vec<Value> = if shown {
        doc.events
            .iter()
            .map(|e| json!({"atMs": e.at_ms, "kind": e.kind.as_str(), "name": &*e.name}))
            .collect()
    } else {
        Vec::new()
    };
    let mut cluster = match (&doc.cluster, shown) {
        (Some(c), true) => cluster(c, addresses),
        _ => Value::Null,
    };
    let delta = delta.as_ref().map(|(since, names)| {
        // The digest of the very bytes the full document would carry.
        let unchanged = !cluster.is_null()
            && since.cluster.as_deref() == Some(&*cluster_digest(&cluster.to_string()));
        if unchanged {
            cluster = Value::Null;
        }
        DeltaOut {
            since_ms: since.since_ms,
            names: each(if shown { &names[..] } else { &[] }, |n| &**n),
            cluster_unchanged: unchanged,
        }
    });
    let out = Out {
        service: doc.service.as_deref(),
        now_ms: doc.now_ms,
        started_ms: doc.started_ms,
        flap_window_ms: FLAP_WINDOW.as_millis() as u64,
        tiers: json!({"ready": tier(Tag::Ready), "active": tier(Tag::Active), "live": tier(Tag::Live)}),
        probes,
        lifecycle,
        events,
        cluster,
        capacity: json!({"samples": SAMPLES, "transitions": TRANSITIONS, "events": EVENTS}),
        delta,
    };
    // Plain data and strings: serialising it cannot fail.
    serde_json::to_string(&out).unwrap_or_default()
}

/// The document, in the contract's key order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Out<'a, P, D> {
    service: Option<&'a str>,
    now_ms: u64,
    started_ms: u64,
    flap_window_ms: u64,
    tiers: Value,
    probes: P,
    lifecycle: Value,
    events: Vec<Value>,
    cluster: Value,
    capacity: Value,
    /// Only in a delta.
    #[serde(skip_serializing_if = "Option::is_none")]
    delta: Option<D>,
}

/// `delta`: what the reader asked for, every probe's name in order (so a
/// probe that went is seen to go), and whether `cluster` is `null`
/// because the reader's is still the one.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeltaOut<N> {
    since_ms: u64,
    names: N,
    cluster_unchanged: bool,
}

/// `items` as a sequence of what `f` makes of each, written straight out:
/// no `Value` tree, no copy.
fn each<'a, T, O: Serialize>(items: &'a [T], f: impl Fn(&'a T) -> O) -> impl Serialize {
    Each(items, f)
}

struct Each<'a, T, F>(&'a [T], F);

impl<'a, T, O: Serialize, F: Fn(&'a T) -> O> Serialize for Each<'a, T, F> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(&self.1))
    }
}

/// A probe's record; its samples and transitions oldest first, the
/// transitions with their descriptions when the level shows them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProbeOut<'a, S, T> {
    name: &'a str,
    tiers: Vec<&'static str>,
    status: Option<&'static str>,
    description: Option<&'a str>,
    duration_ms: Option<f64>,
    outcome: Option<&'static str>,
    since_ms: Option<u64>,
    flaps: u32,
    runs: u64,
    samples: S,
    transitions: T,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SampleOut {
    at_ms: u64,
    status: &'static str,
    duration_ms: f64,
    outcome: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TransitionOut<'a> {
    at_ms: u64,
    from: &'static str,
    to: &'static str,
    outcome: &'static str,
    description: Option<&'a str>,
}

/// Without addresses a member is named by its place in the view's list
/// (`member-1`…), which says nothing of where it runs.
fn cluster(c: &ClusterDoc, addresses: bool) -> Value {
    let address = |a: &Option<String>| a.clone().filter(|_| addresses);
    let members: Vec<Value> = c
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let verdict = |failing: bool| if failing { "failing" } else { "ok" };
            let shared: serde_json::Map<String, Value> = m
                .shared
                .iter()
                .map(|(p, f)| (p.clone(), verdict(*f).into()))
                .collect();
            json!({
                "id": if addresses { m.address.clone() } else { format!("member-{}", i + 1) },
                "address": if addresses { Value::from(m.address.as_str()) } else { Value::Null },
                "status": m.status,
                "reachable": m.reachable,
                "active": m.active,
                "self": m.is_self,
                "shared": shared,
                "ready": m.ready.map(HealthStatus::as_str),
                // A URL holds the address: shown where addresses are.
                "history": if addresses { m.history.as_deref().map(Value::from) } else { None },
            })
        })
        .collect();
    json!({
        "self": address(&c.self_address),
        "active": address(&c.active),
        "members": members,
    })
}
