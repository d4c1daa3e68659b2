//! The shared probes' verdicts and the ready verdict in gossip
//! (BE-HLTH-003): this node's, written into its key-values on a change,
//! every peer's, read from theirs, and the tally over the members.

use std::collections::{BTreeMap, HashMap};

use ::chitchat::Chitchat;

use zb_health_spec::HealthStatus;

use super::keys::{HISTORY_KEY, READY_VERDICT_KEY, RESTART_CLAIM_KEY, SHARED_VERDICT_PREFIX};
use super::members::newest_nodes;
use crate::cluster::view::{ClusterState, MemberStatus};
use crate::shared::Tally;

const FAILING: &str = "failing";
const OK: &str = "ok";

/// Every peer's shared-probe verdicts, ready verdict and restart claim
/// (`at_ms`, probe), by address, as [`peer_verdicts`] reads them.
pub(super) type PeerVerdicts = Vec<(String, PeerRecord)>;

/// What one peer gossips of its verdicts.
pub(super) struct PeerRecord {
    shared: BTreeMap<String, bool>,
    ready: Option<HealthStatus>,
    restart: Option<(u64, String)>,
    /// Its [`HISTORY_KEY`] value.
    history: Option<String>,
}

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
    /// This node's restart claim (`at_ms`, probe), and what of it is
    /// written (`Some(None)`: its withdrawal).
    own_restart: Option<(u64, String)>,
    written_restart: Option<Option<(u64, String)>>,
    /// Every peer's restart claim, by address.
    peers_restart: HashMap<String, (u64, String)>,
    /// This node's [`HISTORY_KEY`] value, and whether it is written.
    own_history: Option<String>,
    history_written: bool,
    /// Every peer's, by address.
    peers_history: HashMap<String, String>,
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

    /// Notes where this node serves its history (`:<port><path>`); whether
    /// it changed.
    pub(super) fn publish_history(&mut self, value: String) -> bool {
        let changed = self.own_history.as_ref() != Some(&value);
        if changed {
            self.own_history = Some(value);
            self.history_written = false;
        }
        changed
    }

    /// The history URL of the member at `address`, this node's when `own`:
    /// its gossip host and its [`HISTORY_KEY`] value.
    pub(super) fn member_history(&self, address: &str, own: bool) -> Option<String> {
        let value = if own {
            self.own_history.as_ref()
        } else {
            self.peers_history.get(address)
        }?;
        let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
        Some(format!("http://{host}{value}"))
    }

    /// Notes this node's restart claim (or its withdrawal); whether it
    /// changed.
    pub(super) fn claim_restart(&mut self, claim: Option<(u64, String)>) -> bool {
        let changed = self.own_restart != claim;
        self.own_restart = claim;
        changed
    }

    /// The restart claims of the `Up`, reachable members of `state`, this
    /// node's included.
    pub(super) fn restart_claims(&self, state: &ClusterState) -> Vec<crate::shared::RestartClaim> {
        state
            .members
            .iter()
            .filter(|m| m.status == MemberStatus::Up && m.reachable)
            .filter_map(|m| {
                let own = m.address == state.self_address;
                let claim = if own {
                    self.own_restart.as_ref()
                } else {
                    self.peers_restart.get(&m.address)
                };
                claim.map(|(at_ms, probe)| crate::shared::RestartClaim {
                    address: m.address.clone(),
                    own,
                    probe: probe.clone(),
                    at_ms: *at_ms,
                })
            })
            .collect()
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
            own_restart,
            written_restart,
            own_history,
            history_written,
            ..
        } = self;
        let restart_written = written_restart.as_ref() == Some(&*own_restart);
        let history_current = *history_written || own_history.is_none();
        if own == written && own_ready == written_ready && restart_written && history_current {
            return;
        }
        let state = chitchat.self_node_state();
        if let (Some(value), false) = (own_history.as_ref(), history_current) {
            state.set(HISTORY_KEY, value.as_str());
            *history_written = true;
        }
        if !restart_written {
            let value = own_restart
                .as_ref()
                .map_or_else(String::new, |(at_ms, probe)| format!("{at_ms} {probe}"));
            state.set(RESTART_CLAIM_KEY, value);
            *written_restart = Some(own_restart.clone());
        }
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
            .filter_map(|(address, p)| p.ready.map(|r| (address.clone(), r)))
            .collect();
        self.peers_restart = peers
            .iter()
            .filter_map(|(address, p)| p.restart.clone().map(|c| (address.clone(), c)))
            .collect();
        self.peers_history = peers
            .iter()
            .filter_map(|(address, p)| p.history.clone().map(|h| (address.clone(), h)))
            .collect();
        self.peers = peers
            .into_iter()
            .map(|(address, p)| (address, p.shared))
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
            let record = PeerRecord {
                shared: verdicts,
                ready,
                restart,
                history,
            };
            (id.gossip_advertise_addr.to_string(), record)
        })
        .collect()
}
