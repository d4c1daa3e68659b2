//! The gossip keys a node writes into its chitchat key-values, and how its
//! status and roles are spelled in them.

use ::chitchat::Chitchat;

use crate::cluster::view::MemberStatus;

/// The key-value key holding a node's [`MemberStatus`], spelled by
/// [`MemberStatus::as_str`]. Namespaced so it cannot collide with the
/// application's own keys.
pub const STATUS_KEY: &str = "zb.status";

/// The key-value key holding a node's roles, comma-separated (role names
/// therefore cannot contain commas).
pub const ROLES_KEY: &str = "zb.roles";

/// The prefix of the key-value keys holding this node's verdict of each
/// shared probe (BE-HLTH-003, [`crate::shared`]): `zb.shared.<probe>` =
/// `ok` or `failing`.
/// One key per shared probe, written only when its verdict changes, so
/// gossip carries it only then, as one key-value operation of chitchat's
/// delta: at most `31 + n` bytes for a probe name of `n` bytes (the op
/// tag, the key and the value with their 2-byte lengths, an 8-byte
/// version, a status byte; 41 bytes for `database`), to each peer behind
/// on it, and nothing in a round where no verdict changed.
pub const SHARED_VERDICT_PREFIX: &str = "zb.shared.";

/// The key a node writes at least every `lease / 8` (a counter), so its
/// gossip state keeps advancing and a peer can tell it is heard through a
/// two-way exchange, not only through chitchat's heartbeat, which one-way
/// messages carry too ([`ChitchatViewConfig::lease`](super::ChitchatViewConfig::lease)). One
/// key-value operation of about 30 bytes per beat, to each peer: linear in
/// the cluster's size.
pub const BEAT_KEY: &str = "zb.beat";

/// The key under which a node gossips its ready verdict (`Healthy`,
/// `Degraded`, `Unhealthy`): the status its ready tier last answered, for
/// every member's history. Written on a change only.
pub const READY_VERDICT_KEY: &str = "zb.ready";

/// `1` while this node has stepped down from the active role (an
/// operator's deliberate hand-over), `0` after; absent before the first.
pub const STEP_DOWN_KEY: &str = "zb.stepdown";

/// This node's claim on the cluster's restart budget (a probe's
/// `restart_after`): `<unix ms> <probe>` while it claims, empty after.
/// Written on a change only.
pub const RESTART_CLAIM_KEY: &str = "zb.restart";

/// Where this node serves its history document, without the host:
/// `:<management port><path>`, e.g. `:9101/health/history`. A reader puts
/// the member's gossip host in front, so a node that listens on 0.0.0.0 is
/// still named by the address its peers reach it at. Written once, when
/// the management server is bound; `zb-health dashboard --discover` finds
/// the fleet with it.
pub const HISTORY_KEY: &str = "zb.history";

/// The key-values that announce `status` and `roles`: pass them as the
/// `initial_key_values` of `chitchat::spawn_chitchat`, so the node is known
/// with its status and roles from its very first gossip round.
pub fn member_key_values<I, S>(status: MemberStatus, roles: I) -> Vec<(String, String)>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    vec![
        (STATUS_KEY.to_owned(), status.as_str().to_owned()),
        (ROLES_KEY.to_owned(), join_roles(roles)),
    ]
}

/// Writes this node's status and roles into its gossip state, under a
/// lock the caller holds.
pub(super) fn write_member(
    chitchat: &mut Chitchat,
    status: MemberStatus,
    roles: impl IntoIterator<Item = impl AsRef<str>>,
) {
    write_status(chitchat, status);
    chitchat.self_node_state().set(ROLES_KEY, join_roles(roles));
}

/// Writes this node's status alone (its roles stay), under a lock the
/// caller holds.
pub(super) fn write_status(chitchat: &mut Chitchat, status: MemberStatus) {
    chitchat.self_node_state().set(STATUS_KEY, status.as_str());
}

fn join_roles(roles: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    clean_roles(roles).join(",")
}

/// The roles of a [`ROLES_KEY`] value; none when it is missing.
pub(super) fn parse_roles(value: Option<&str>) -> Vec<String> {
    clean_roles(value.unwrap_or_default().split(','))
}

/// `roles` trimmed, the blank ones left out: how they are written and
/// read alike.
fn clean_roles(roles: impl IntoIterator<Item = impl AsRef<str>>) -> Vec<String> {
    roles
        .into_iter()
        .map(|r| r.as_ref().trim().to_owned())
        .filter(|r| !r.is_empty())
        .collect()
}
