//! Chitchat's node states read as the model's members: one per address,
//! the newest generation winning.

use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;

use ::chitchat::{Chitchat, ChitchatId, NodeState};

use std::time::Instant;

use super::keys::{ROLES_KEY, STATUS_KEY, STEP_DOWN_KEY, parse_roles};
use crate::cluster::view::{ClusterState, Member, MemberStatus};

/// The cluster as `chitchat` sees it right now, one [`Member`] per address
/// (the newest generation wins; self always wins its own address).
///
/// For callers that already hold chitchat's lock; everyone else reads the
/// cheap snapshot of [`ChitchatClusterView`](super::ChitchatClusterView).
///
/// It does not track heartbeats, so every `last_heard` is `None`;
/// [`ChitchatClusterView`](super::ChitchatClusterView) fills them in.
pub fn cluster_state(chitchat: &Chitchat) -> ClusterState {
    let own = chitchat.self_chitchat_id();
    let live: HashSet<&ChitchatId> = chitchat.live_nodes().collect();
    let newest = newest_nodes(chitchat);
    let self_address = own.gossip_advertise_addr.to_string();
    let members = newest
        .into_values()
        .map(|(id, node)| Member {
            address: id.gossip_advertise_addr.to_string(),
            status: node
                .get(STATUS_KEY)
                .and_then(MemberStatus::parse)
                .unwrap_or(MemberStatus::Joining),
            roles: parse_roles(node.get(ROLES_KEY)),
            age: id.generation_id,
            reachable: id == own || live.contains(id),
            last_heard: None,
            reachable_since: None,
            // Whether it stepped down; the view notes since when.
            stepped_down_since: (node.get(STEP_DOWN_KEY) == Some("1")).then(Instant::now),
        })
        .collect();
    ClusterState {
        self_address,
        members,
    }
}

/// Every node of `chitchat` by address, the newest generation of each
/// (self always wins its own address).
pub(super) fn newest_nodes(chitchat: &Chitchat) -> BTreeMap<SocketAddr, (&ChitchatId, &NodeState)> {
    let own = chitchat.self_chitchat_id();
    let mut newest: BTreeMap<SocketAddr, (&ChitchatId, &NodeState)> = BTreeMap::new();
    for (id, node) in chitchat.node_states() {
        let addr = id.gossip_advertise_addr;
        let replace = match newest.get(&addr) {
            None => true,
            Some((kept, _)) => *kept != own && (id == own || id.generation_id > kept.generation_id),
        };
        if replace {
            newest.insert(addr, (id, node));
        }
    }
    newest
}
