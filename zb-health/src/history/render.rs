//! The history document (`spec/health-history.schema.json`), rendered at
//! a disclosure level. Not a hot path: built with `serde_json`.

use std::sync::Arc;

use serde_json::{Value, json};
use zb_health_spec::{Disclosure, HealthStatus, Tag, TagSet};

use super::{EVENTS, Event, FLAP_WINDOW, ProbeView, SAMPLES, TRANSITIONS, outcome_word};

/// A startup gate's state.
pub(crate) struct GateView {
    pub(crate) name: Arc<str>,
    /// `pending`, `ready` or `failed`.
    pub(crate) state: &'static str,
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
}

/// The cluster as this node sees it, addresses included (the render
/// leaves them out where the port does not show them).
#[cfg_attr(not(feature = "cluster"), allow(dead_code))]
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
pub(crate) fn render(doc: &Document, level: Disclosure, addresses: bool) -> String {
    let described = level == Disclosure::Full;
    let shown = level != Disclosure::Status;
    let tier = |t: Tag| match doc.tiers[t as usize] {
        Some((status, code, at)) => json!({"status": status.as_str(), "code": code, "atMs": at}),
        None => Value::Null,
    };
    let text = |d: &Option<String>| match (described, d) {
        (true, Some(d)) => Value::from(d.as_str()),
        _ => Value::Null,
    };
    let probes: Vec<Value> = if !shown {
        Vec::new()
    } else {
        doc.probes
            .iter()
            .map(|(name, tags, v)| {
                let tags: Vec<&str> = tags.iter().map(Tag::as_str).collect();
                json!({
                    "name": &**name,
                    "tiers": tags,
                    "status": v.status.map(HealthStatus::as_str),
                    "description": text(&v.description),
                    "durationMs": v.duration_ms,
                    "outcome": v.outcome.map(outcome_word),
                    "sinceMs": v.since_ms,
                    "flaps": v.flaps,
                    "runs": v.runs,
                    "samples": v.samples.iter().map(|(at, s, d, o)| json!({
                        "atMs": at, "status": s.as_str(), "durationMs": d, "outcome": outcome_word(*o),
                    })).collect::<Vec<_>>(),
                    "transitions": v.transitions.iter().map(|(at, from, to, o, d)| json!({
                        "atMs": at, "from": from.as_str(), "to": to.as_str(),
                        "outcome": outcome_word(*o), "description": text(d),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect()
    };
    let lifecycle = if shown {
        let l = &doc.lifecycle;
        json!({
            "gates": l.gates.iter().map(|g| json!({"name": &*g.name, "state": g.state, "atMs": g.at_ms})).collect::<Vec<_>>(),
            "watchdogs": l.watchdogs.iter().map(|w| json!({
                "name": &*w.name, "deadlineMs": w.deadline_ms, "sinceBeatMs": w.since_beat_ms, "stalled": w.stalled,
            })).collect::<Vec<_>>(),
            "drain": {"draining": l.drain_since_ms.is_some(), "sinceMs": l.drain_since_ms},
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
    let cluster = match (&doc.cluster, shown) {
        (Some(c), true) => cluster(c, addresses),
        _ => Value::Null,
    };
    json!({
        "service": doc.service.as_deref(),
        "nowMs": doc.now_ms,
        "startedMs": doc.started_ms,
        "flapWindowMs": FLAP_WINDOW.as_millis() as u64,
        "tiers": {"ready": tier(Tag::Ready), "active": tier(Tag::Active), "live": tier(Tag::Live)},
        "probes": probes,
        "lifecycle": lifecycle,
        "events": events,
        "cluster": cluster,
        "capacity": {"samples": SAMPLES, "transitions": TRANSITIONS, "events": EVENTS},
    })
    .to_string()
}

/// Without addresses a member is named by its place in the view's list
/// (`member-1`…), which says nothing of where it runs.
fn cluster(c: &ClusterDoc, addresses: bool) -> Value {
    let address = |a: &Option<String>| match (addresses, a) {
        (true, Some(a)) => Value::from(a.as_str()),
        _ => Value::Null,
    };
    let members: Vec<Value> = c
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let shared: serde_json::Map<String, Value> = m
                .shared
                .iter()
                .map(|(p, failing)| {
                    (
                        p.clone(),
                        Value::from(if *failing { "failing" } else { "ok" }),
                    )
                })
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
            })
        })
        .collect();
    json!({
        "self": address(&c.self_address),
        "active": address(&c.active),
        "members": members,
    })
}
