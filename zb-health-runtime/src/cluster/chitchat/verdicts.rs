//! The shared probes' verdicts and the ready verdict in gossip
//! (BE-HLTH-003): this node's, written into its key-values on a change,
//! every peer's, read from theirs, and the tally over the members.

use std::collections::{BTreeMap, HashMap};

use ::chitchat::Chitchat;

use zb_health_spec::HealthStatus;

use super::keys::{HISTORY_KEY, READY_VERDICT_KEY, RESTART_CLAIM_KEY, SHARED_VERDICT_PREFIX};
use super::members::newest_nodes;
use crate::cluster::view::{ClusterState, Member, MemberStatus};
use crate::shared::{RestartClaim, Tally};

const FAILING: &str = "failing";
const OK: &str = "ok";

/// What one member gossips of its verdicts: this node's as its probes
/// published them, a peer's as [`peer_verdicts`] reads them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Record {
    /// Its shared-probe verdicts, by probe: `true` failing.
    pub(super) shared: BTreeMap<String, bool>,
    /// Its ready verdict.
    pub(super) ready: Option<HealthStatus>,
    /// Its restart claim (`at_ms`, probe).
    pub(super) restart: Option<(u64, String)>,
    /// Its [`HISTORY_KEY`] value.
    pub(super) history: Option<String>,
}

impl Record {
    /// Its shared-probe verdicts, as the history lists them.
    pub(super) fn verdicts(&self) -> Vec<(String, bool)> {
        self.shared.iter().map(|(p, f)| (p.clone(), *f)).collect()
    }

    /// Its history URL: the gossip host of `address` (the member's) and
    /// its [`HISTORY_KEY`] value.
    pub(super) fn history_url(&self, address: &str) -> Option<String> {
        let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
        Some(format!("http://{host}{}", self.history.as_ref()?))
    }
}

/// The shared probes' verdicts as this view holds them.
#[derive(Default)]
pub(super) struct Verdicts {
    /// This node's latest, as its probes published them.
    own: Record,
    /// What of `own` is in chitchat's state already; `None` before the
    /// first write.
    written: Option<Record>,
    /// Every peer's, by address, as of the last rebuild.
    peers: HashMap<String, Record>,
}

/// Sets `slot` to `value`; whether it changed (and so is to be written).
fn set<T: PartialEq>(slot: &mut T, value: T) -> bool {
    let changed = *slot != value;
    *slot = value;
    changed
}

impl Verdicts {
    /// Notes this node's verdict of `probe`; whether it changed.
    pub(super) fn publish(&mut self, probe: &str, failing: bool) -> bool {
        self.own.shared.insert(probe.to_owned(), failing) != Some(failing)
    }

    /// Notes this node's ready verdict; whether it changed.
    pub(super) fn publish_ready(&mut self, status: HealthStatus) -> bool {
        set(&mut self.own.ready, Some(status))
    }

    /// Notes where this node serves its history (`:<port><path>`); whether
    /// it changed.
    pub(super) fn publish_history(&mut self, value: String) -> bool {
        set(&mut self.own.history, Some(value))
    }

    /// Notes this node's restart claim (or its withdrawal); whether it
    /// changed.
    pub(super) fn claim_restart(&mut self, claim: Option<(u64, String)>) -> bool {
        set(&mut self.own.restart, claim)
    }

    /// The record of the member at `address`, this node's when `own`.
    pub(super) fn member(&self, address: &str, own: bool) -> Option<&Record> {
        if own {
            Some(&self.own)
        } else {
            self.peers.get(address)
        }
    }

    /// The `Up`, reachable members of `state` with a record, this node's
    /// latest (not yet gossiped, perhaps) included, and whether each is
    /// this node.
    fn counted<'a>(
        &'a self,
        state: &'a ClusterState,
    ) -> impl Iterator<Item = (&'a Member, bool, &'a Record)> {
        state
            .members
            .iter()
            .filter(|m| m.status == MemberStatus::Up && m.reachable)
            .filter_map(|m| {
                let own = m.address == state.self_address;
                Some((m, own, self.member(&m.address, own)?))
            })
    }

    /// The restart claims of the `Up`, reachable members of `state`, this
    /// node's included.
    pub(super) fn restart_claims(&self, state: &ClusterState) -> Vec<RestartClaim> {
        self.counted(state)
            .filter_map(|(m, own, record)| {
                let (at_ms, probe) = record.restart.as_ref()?;
                Some(RestartClaim {
                    address: m.address.clone(),
                    own,
                    probe: probe.clone(),
                    at_ms: *at_ms,
                })
            })
            .collect()
    }

    /// Counts the `Up`, reachable members of `state` that report a verdict
    /// of `probe`, this node's latest (not yet gossiped, perhaps) included.
    pub(super) fn tally(&self, state: &ClusterState, probe: &str) -> Tally {
        let mut tally = Tally {
            failing: 0,
            reporting: 0,
        };
        for (_, _, record) in self.counted(state) {
            if let Some(failing) = record.shared.get(probe) {
                tally.reporting += 1;
                tally.failing += u32::from(*failing);
            }
        }
        tally
    }

    /// Writes this node's changed verdicts into its gossip state (the
    /// restart claim, withdrawn or not, at the first write too).
    pub(super) fn write(&mut self, chitchat: &mut Chitchat) {
        if self.written.as_ref() == Some(&self.own) {
            return;
        }
        let first = self.written.is_none();
        let (own, written) = (&self.own, self.written.get_or_insert_default());
        let state = chitchat.self_node_state();
        if let Some(value) = own
            .history
            .as_ref()
            .filter(|v| written.history.as_ref() != Some(*v))
        {
            state.set(HISTORY_KEY, value.as_str());
        }
        if first || own.restart != written.restart {
            let value = own
                .restart
                .as_ref()
                .map_or_else(String::new, |(at_ms, probe)| format!("{at_ms} {probe}"));
            state.set(RESTART_CLAIM_KEY, value);
        }
        if let Some(ready) = own.ready.filter(|r| written.ready != Some(*r)) {
            state.set(READY_VERDICT_KEY, ready.as_str());
        }
        for (probe, failing) in &own.shared {
            if written.shared.get(probe) != Some(failing) {
                let value = if *failing { FAILING } else { OK };
                state.set(format!("{SHARED_VERDICT_PREFIX}{probe}"), value);
            }
        }
        *written = own.clone();
    }

    /// Keeps `peers`, every peer's record as of this rebuild.
    pub(super) fn note_peers(&mut self, peers: Vec<(String, Record)>) {
        self.peers = peers.into_iter().collect();
    }
}

/// Reads every peer's record from its gossip state, by address.
pub(super) fn peer_verdicts(chitchat: &Chitchat) -> Vec<(String, Record)> {
    let own = chitchat.self_chitchat_id();
    newest_nodes(chitchat)
        .into_values()
        .filter(|(id, _)| *id != own)
        .map(|(id, node)| {
            let shared = node
                .iter_prefix(SHARED_VERDICT_PREFIX)
                .map(|(key, value)| {
                    let probe = &key[SHARED_VERDICT_PREFIX.len()..];
                    (probe.to_owned(), value.value == FAILING)
                })
                .collect();
            let ready = node
                .get(READY_VERDICT_KEY)
                .and_then(|v| HealthStatus::ALL.into_iter().find(|s| s.as_str() == v));
            // `<at_ms> <probe>`; empty once withdrawn.
            let restart = node.get(RESTART_CLAIM_KEY).and_then(|value| {
                let (at_ms, probe) = value.split_once(' ')?;
                Some((at_ms.parse().ok()?, probe.to_owned()))
            });
            // `:<port>/<path>`: anything else is not read as a URL's end.
            let history = node
                .get(HISTORY_KEY)
                .filter(|v| {
                    v.strip_prefix(':')
                        .and_then(|rest| rest.split_once('/'))
                        .is_some_and(|(port, _)| port.parse::<u16>().is_ok())
                })
                .map(str::to_owned);
            let record = Record {
                shared,
                ready,
                restart,
                history,
            };
            (id.gossip_advertise_addr.to_string(), record)
        })
        .collect()
}
