//! The shared probes' verdicts and the ready verdict in gossip
//! (BE-HLTH-003): this node's, written into its key-values on a change,
//! every peer's, read from theirs, and the tally over the members.

use std::collections::{BTreeMap, HashMap};

use ::chitchat::Chitchat;

use zb_health_spec::HealthStatus;

use super::keys::{READY_VERDICT_KEY, SHARED_VERDICT_PREFIX};
use super::members::newest_nodes;
use crate::cluster::view::{ClusterState, MemberStatus};
use crate::shared::Tally;

const FAILING: &str = "failing";
const OK: &str = "ok";

/// Every peer's shared-probe verdicts and ready verdict, by address, as
/// [`peer_verdicts`] reads them.
pub(super) type PeerVerdicts = Vec<(String, (BTreeMap<String, bool>, Option<HealthStatus>))>;

/// The shared probes' verdicts as this view holds them.
#[derive(Default)]
pub(super) struct Verdicts {
    /// This node's latest, as its probes published them.
    own: BTreeMap<String, bool>,
    /// What of `own` is in chitchat's state already.
    written: BTreeMap<String, bool>,
    /// Every peer's, by address, as of the last rebuild.
    peers: HashMap<String, BTreeMap<String, bool>>,
    /// This node's ready verdict, and what of it is written.
    own_ready: Option<HealthStatus>,
    written_ready: Option<HealthStatus>,
    /// Every peer's ready verdict, by address.
    peers_ready: HashMap<String, HealthStatus>,
}

impl Verdicts {
    /// Notes this node's verdict of `probe`; whether it changed (and so
    /// is to be written).
    pub(super) fn publish(&mut self, probe: &str, failing: bool) -> bool {
        let changed = self.own.get(probe) != Some(&failing);
        if changed {
            self.own.insert(probe.to_owned(), failing);
        }
        changed
    }

    /// Notes this node's ready verdict; whether it changed.
    pub(super) fn publish_ready(&mut self, status: HealthStatus) -> bool {
        let changed = self.own_ready != Some(status);
        if changed {
            self.own_ready = Some(status);
        }
        changed
    }

    /// The ready verdict of the member at `address`, this node's when
    /// `own`.
    pub(super) fn member_ready(&self, address: &str, own: bool) -> Option<HealthStatus> {
        if own {
            self.own_ready
        } else {
            self.peers_ready.get(address).copied()
        }
    }

    /// The shared-probe verdicts of the member at `address`, this node's
    /// when `own`.
    pub(super) fn member_verdicts(&self, address: &str, own: bool) -> Vec<(String, bool)> {
        let of = if own {
            Some(&self.own)
        } else {
            self.peers.get(address)
        };
        of.map(|v| v.iter().map(|(p, f)| (p.clone(), *f)).collect())
            .unwrap_or_default()
    }

    /// Counts the `Up`, reachable members of `state` that report a verdict
    /// of `probe`, this node's latest (not yet gossiped, perhaps) included.
    pub(super) fn tally(&self, state: &ClusterState, probe: &str) -> Tally {
        let mut tally = Tally {
            failing: 0,
            reporting: 0,
        };
        let counted = state
            .members
            .iter()
            .filter(|m| m.status == MemberStatus::Up && m.reachable);
        for member in counted {
            let verdict = if member.address == state.self_address {
                self.own.get(probe)
            } else {
                self.peers.get(&member.address).and_then(|v| v.get(probe))
            };
            if let Some(failing) = verdict {
                tally.reporting += 1;
                tally.failing += u32::from(*failing);
            }
        }
        tally
    }

    /// Writes this node's changed verdicts into its gossip state.
    pub(super) fn write(&mut self, chitchat: &mut Chitchat) {
        let Verdicts {
            own,
            written,
            own_ready,
            written_ready,
            ..
        } = self;
        if own == written && own_ready == written_ready {
            return;
        }
        let state = chitchat.self_node_state();
        if let (Some(ready), true) = (*own_ready, own_ready != written_ready) {
            state.set(READY_VERDICT_KEY, ready.as_str());
            *written_ready = Some(ready);
        }
        for (probe, failing) in own.iter() {
            if written.get(probe) != Some(failing) {
                let value = if *failing { FAILING } else { OK };
                state.set(format!("{SHARED_VERDICT_PREFIX}{probe}"), value);
                written.insert(probe.clone(), *failing);
            }
        }
    }

    /// Keeps `peers`, every peer's verdicts as of this rebuild.
    pub(super) fn note_peers(&mut self, peers: PeerVerdicts) {
        self.peers_ready = peers
            .iter()
            .filter_map(|(address, (_, ready))| ready.map(|r| (address.clone(), r)))
            .collect();
        self.peers = peers
            .into_iter()
            .map(|(address, (shared, _))| (address, shared))
            .collect();
    }
}

/// Reads every peer's shared-probe verdicts from its gossip state.
pub(super) fn peer_verdicts(chitchat: &Chitchat) -> PeerVerdicts {
    let own = chitchat.self_chitchat_id();
    newest_nodes(chitchat)
        .into_values()
        .filter(|(id, _)| *id != own)
        .map(|(id, node)| {
            let verdicts = node
                .iter_prefix(SHARED_VERDICT_PREFIX)
                .map(|(key, value)| {
                    let probe = &key[SHARED_VERDICT_PREFIX.len()..];
                    (probe.to_owned(), value.value == FAILING)
                })
                .collect();
            let ready = node
                .iter_prefix(READY_VERDICT_KEY)
                .find(|(key, _)| *key == READY_VERDICT_KEY)
                .and_then(|(_, value)| {
                    HealthStatus::ALL
                        .into_iter()
                        .find(|s| s.as_str() == value.value)
                });
            (id.gossip_advertise_addr.to_string(), (verdicts, ready))
        })
        .collect()
}
