//! The cluster a probe counts: R2, the roles of a role-scoped active-node
//! check (ZB-2.3d), and R12, an expected cluster size of at least one node
//! (AT-5).

use super::rule::Rule;
use super::sink::Violations;

/// R2 (ZB-2.3d): a role-scoped active-node check lists its roles in order
/// of preference: at least one, none empty, none twice.
///
/// `roles` is `None` when no list was given at all, else the list with its
/// own location and each role's. Returns whether the list is usable.
pub fn check_role_preference<L: Clone>(
    probe: &str,
    roles: Option<(&[(&str, L)], L)>,
    scope_location: L,
    sink: &mut Violations<L>,
) -> bool {
    const HELP: &str = "list the roles in order of preference, e.g. `[admin, driver]`; a node answers for the first listed role it holds, and a scope with no roles could never pick an active node";
    let Some((list, list_location)) = roles else {
        sink.push(
            Rule::RoleScopeNeedsRoles,
            scope_location,
            format!("active-node probe `{probe}` is role-scoped but lists no roles"),
            HELP,
        );
        return false;
    };
    if list.is_empty() {
        sink.push(
            Rule::RoleScopeNeedsRoles,
            list_location,
            format!("active-node probe `{probe}` is role-scoped with an empty role list"),
            HELP,
        );
        return false;
    }
    let mut ok = true;
    for (i, (role, loc)) in list.iter().enumerate() {
        if role.is_empty() {
            sink.push(
                Rule::RoleScopeNeedsRoles,
                loc.clone(),
                format!("active-node probe `{probe}` lists an empty role name"),
                "write the cluster role's name, e.g. `admin`",
            );
            ok = false;
        } else if list[..i].iter().any(|(r, _)| r == role) {
            sink.push(
                Rule::RoleScopeNeedsRoles,
                loc.clone(),
                format!("active-node probe `{probe}` lists role `{role}` twice"),
                "each role appears once in the preference order; remove the repeat",
            );
            ok = false;
        }
    }
    ok
}

/// R12: an expected cluster size counts nodes, so it is at least one
/// (AT-5: a single-node cluster is legal; ZB-2.3a: the majority guard
/// divides it). Returns the size when legal.
pub fn check_cluster_size<L>(
    what: &str,
    size: i128,
    location: L,
    sink: &mut Violations<L>,
) -> Option<u32> {
    let fits = u32::try_from(size).ok().filter(|n| *n >= 1);
    if fits.is_none() {
        let why = if size < 1 {
            "but a cluster has at least one node"
        } else {
            "more nodes than any cluster has"
        };
        sink.push(
            Rule::ClusterSize,
            location,
            format!("{what} is `{size}`, {why}"),
            "set it to the number of nodes the cluster is meant to have, e.g. `3`",
        );
    }
    fits
}
