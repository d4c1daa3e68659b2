//! Shared dependencies fail open: take out the odd node, keep the herd.
//! This is how BE-HLTH-003 ("a failed dependency fails readiness") meets
//! an outage no pod can fix; R7 keeps `shared` on `ready`.
//!
//! When the one database every replica uses goes down, every replica's
//! `ready` would answer 503, Kubernetes would remove every endpoint, and
//! clients would get "connection refused" instead of the application's own
//! answer. A ready-tier probe marked `shared` (the dependency is the same
//! for every node) therefore compares its verdict with the other nodes':
//!
//! * each node publishes its verdict of each shared probe (gossip, with
//!   [`ChitchatClusterView`](crate::cluster::chitchat::ChitchatClusterView));
//! * when the probe fails here **and** on a majority of the `Up`,
//!   reachable members that report it (this node included), its entry is
//!   `Degraded`, described `failing on 3 of 3 nodes`, and the tier stays
//!   200: an outage no pod can fix takes no pod out;
//! * when it fails here alone or on a minority, the entry keeps the
//!   probe's failure status: this node is the problem, take it out;
//! * without a view of the other nodes ([`SharedVerdicts`] not set, or
//!   [`tally`](SharedVerdicts::tally) `None` while the cluster view is
//!   unavailable), the probe is an ordinary probe.
//!
//! The comparison applies to the reported entry, after the probe's
//! hysteresis: a failure the threshold holds back is neither published as
//! a failure nor compared. See `spec/probes.md` and `spec/conflicts.md`.
//!
//! A dependency that fails open is still failing here: its dependents
//! (`depends_on`) are skipped as whenever it fails here, and their skipped
//! entries are `Degraded` too, described
//! [`skipped: database failing on 3 of 3 nodes`](skipped_in_shared_outage_description),
//! so skipping does not undo the fail-open.

use std::borrow::Cow;

use zb_health_spec::HealthStatus;

use crate::report::HealthEntry;

/// The verdicts of the shared probes across the cluster: where a node
/// publishes its own and counts everyone's. Implemented by
/// [`ChitchatClusterView`](crate::cluster::chitchat::ChitchatClusterView) (with the
/// `chitchat` feature); set on a registry with
/// [`HealthRegistry::set_shared_verdicts`](crate::registry::HealthRegistry::set_shared_verdicts).
pub trait SharedVerdicts: Send + Sync + 'static {
    /// Publishes this node's verdict of the shared probe `probe`: whether
    /// its latest reported entry is its failure. Called at the probe's
    /// first run after this was set, then whenever the verdict changes;
    /// must not block (a gossip write may happen later).
    fn publish(&self, probe: &str, failing: bool);

    /// The verdicts of `probe` among the `Up`, reachable members that
    /// report one, this node's latest published one included; `None`
    /// while the cluster view is unavailable.
    fn tally(&self, probe: &str) -> Option<Tally>;

    /// The verdicts the member at `address` reports, by probe (`true`:
    /// failing), this node's own included, for the history.
    /// Empty by default: a source that cannot tell members apart.
    fn member_verdicts(&self, address: &str) -> Vec<(String, bool)> {
        let _ = address;
        Vec::new()
    }

    /// Publishes this node's ready verdict: the status its ready tier last
    /// answered, for every member's history. Called when it
    /// changes, while the history is enabled; must not block. Ignored by
    /// default.
    fn publish_ready(&self, status: HealthStatus) {
        let _ = status;
    }

    /// The ready verdict the member at `address` last published (this
    /// node's own included); `None` by default, or before its first.
    fn member_ready(&self, address: &str) -> Option<HealthStatus> {
        let _ = address;
        None
    }

    /// Publishes where this node serves its history document: the
    /// management server's `port` and the document's `path`, for every
    /// member's history (`cluster.members[].history`), which is how
    /// `zb-health dashboard --discover` finds the fleet from one pod.
    /// Called once the management server is bound; must not block.
    /// Ignored by default.
    fn publish_history(&self, port: u16, path: &str) {
        let _ = (port, path);
    }

    /// The history URL the member at `address` published (this node's
    /// own included): its address's host, the port and the path; `None`
    /// by default, or before it published one.
    fn member_history(&self, address: &str) -> Option<String> {
        let _ = address;
        None
    }

    /// Announces this node's claim on the cluster's restart budget
    /// (`Some`), or withdraws it (`None`): a probe with `restart_after`
    /// is about to fail `live` (see the module docs). Must not block.
    /// `false` (the default) when the source carries no budget: without
    /// one no node ever asks for a restart, since two could at once.
    fn claim_restart(&self, claim: Option<&RestartClaim>) -> bool {
        let _ = claim;
        false
    }

    /// The restart claims of the `Up`, reachable members, this node's own
    /// (marked [`RestartClaim::own`]) included. Empty by default.
    fn restart_claims(&self) -> Vec<RestartClaim> {
        Vec::new()
    }

    /// How long a claim must stand before it is acted on: longer than a
    /// claim takes to reach every reachable member, so that of two nodes
    /// claiming at once both see both and the earlier keeps it.
    /// [`ChitchatClusterView`](crate::cluster::chitchat::ChitchatClusterView)
    /// gives its hand-over margin; 5 s by default.
    fn claim_settle(&self) -> std::time::Duration {
        std::time::Duration::from_secs(5)
    }
}

/// One member's claim on the cluster's restart budget: at most one
/// member at a time fails its `live` for a `restart_after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartClaim {
    /// The claiming member's address.
    pub address: String,
    /// Whether it is this node's.
    pub own: bool,
    /// The probe it restarts for.
    pub probe: String,
    /// When it claimed, Unix milliseconds by its own clock: with the
    /// address, the order in which two claims made at once are settled
    /// (the earlier keeps the budget). Every member compares the same
    /// published values, so they agree, however their clocks differ.
    pub at_ms: u64,
}

impl RestartClaim {
    /// Whether this claim comes before `other`: earlier, or as early and
    /// with the lower address.
    pub fn precedes(&self, other: &RestartClaim) -> bool {
        (self.at_ms, &self.address) < (other.at_ms, &other.address)
    }
}

/// How many reporting members a shared probe fails on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Members whose latest verdict is a failure.
    pub failing: u32,
    /// Members that report a verdict at all.
    pub reporting: u32,
}

impl Tally {
    /// Whether the failure is the herd's: more than half of the reporting
    /// members fail (3 of 3, 2 of 3; not 1 of 3, not 1 of 2).
    pub fn is_shared_outage(&self) -> bool {
        self.failing > 0 && u64::from(self.failing) * 2 > u64::from(self.reporting)
    }
}

/// The description of a shared probe's entry in a shared outage, e.g.
/// `failing on 3 of 3 nodes`.
pub fn shared_outage_description(tally: Tally) -> String {
    format!("failing on {} of {} nodes", tally.failing, tally.reporting)
}

/// The description of an entry skipped because its dependency is failing
/// here in a shared outage, e.g. `skipped: database failing
/// on 3 of 3 nodes`: `Degraded` like its dependency, so skipping it does
/// not undo the fail-open.
pub fn skipped_in_shared_outage_description(dependency: &str, tally: Tally) -> String {
    format!("skipped: {dependency} {}", shared_outage_description(tally))
}

/// A shared probe's reported entry after the comparison: published when
/// `changed` says the verdict differs from the last one published, and
/// `Degraded` in a shared outage (see the module docs), with the tally
/// it was opened by. `failed` is the probe's failure status.
pub(crate) fn compare(
    verdicts: &dyn SharedVerdicts,
    mut entry: HealthEntry,
    failed: HealthStatus,
    changed: impl FnOnce(bool) -> bool,
) -> (HealthEntry, Option<Tally>) {
    let failing = entry.status == failed && failed != HealthStatus::Healthy;
    if changed(failing) {
        verdicts.publish(&entry.name, failing);
        let probe = entry.name.to_string();
        metrics::gauge!(crate::observe::SHARED_FAILING, "probe" => probe)
            .set(f64::from(u8::from(failing)));
    }
    // An optional dependency already fails as Degraded: nothing to open.
    if !failing || failed != HealthStatus::Unhealthy {
        return (entry, None);
    }
    match verdicts.tally(&entry.name) {
        Some(tally) if tally.is_shared_outage() => {
            entry.status = HealthStatus::Degraded;
            entry.description = Some(Cow::Owned(shared_outage_description(tally)));
            (entry, Some(tally))
        }
        _ => (entry, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_majority_of_the_reporting_members_is_a_shared_outage() {
        let t = |failing, reporting| Tally { failing, reporting };
        assert!(t(3, 3).is_shared_outage());
        assert!(t(2, 3).is_shared_outage());
        assert!(t(1, 1).is_shared_outage(), "a herd of one");
        assert!(!t(1, 3).is_shared_outage());
        assert!(!t(1, 2).is_shared_outage(), "half is no majority");
        assert!(!t(0, 0).is_shared_outage());
        assert_eq!(
            shared_outage_description(t(3, 3)),
            "failing on 3 of 3 nodes"
        );
        assert_eq!(
            skipped_in_shared_outage_description("database", t(2, 3)),
            "skipped: database failing on 2 of 3 nodes"
        );
    }
}
