//! The cluster rules against hand-built views: every status of ZB-2.2 and
//! ZB-2.3b, AT-5's transport rule, and a property test that the gate and
//! the probe never disagree.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use zb_health_spec::{HealthStatus, MajorityGuard, MembershipPolicy};

use super::probes::CLUSTER_NOT_AVAILABLE;
use super::*;
use crate::prelude::{ActiveNodeGate, HealthRegistry, Probe, ProbeRegistration, Tag};
use crate::spec::Rule;

fn member(address: &str, status: MemberStatus, age: u64, roles: &[&str]) -> Member {
    Member::new(address, status, age).with_roles(roles.iter().copied())
}

fn state(self_address: &str, members: Vec<Member>) -> ClusterState {
    ClusterState {
        self_address: self_address.into(),
        members,
    }
}

fn view(s: ClusterState) -> Arc<dyn ClusterView> {
    Arc::new(InMemoryClusterView::with_state(s))
}

async fn status_of(probe: impl Probe) -> (HealthStatus, Option<String>, serde_json::Value) {
    let r = probe.check().await.unwrap();
    (
        r.status,
        r.description.map(|d| d.into_owned()),
        serde_json::Value::Object(r.data.unwrap_or_default()),
    )
}

#[tokio::test]
async fn default_policy_maps_each_status_as_zb_2_2() {
    use MemberStatus::*;
    let expected = [
        (Joining, HealthStatus::Healthy),
        (Up, HealthStatus::Healthy),
        (Leaving, HealthStatus::Degraded),
        (Exiting, HealthStatus::Degraded),
        (WeaklyUp, HealthStatus::Unhealthy),
        (Down, HealthStatus::Unhealthy),
        (Removed, HealthStatus::Unhealthy),
    ];
    for (st, health) in expected {
        let v = view(state("a", vec![member("a", st, 1, &[])]));
        let (got, desc, data) = status_of(ClusterMembershipProbe::new(v)).await;
        assert_eq!(got, health, "{st:?}");
        assert_eq!(desc.unwrap(), format!("Member status: {st:?}"));
        // The own status, for `clusterReady` (AT-8).
        assert_eq!(data, serde_json::json!({ "memberStatus": st.as_str() }));
    }
    assert_eq!(Up.as_str(), crate::report::MEMBER_UP);
    let absent = view(state("a", vec![member("b", Up, 1, &[])]));
    let (status, _, data) = status_of(ClusterMembershipProbe::new(absent)).await;
    assert_eq!(status, HealthStatus::Unhealthy);
    assert_eq!(data, serde_json::json!({}), "no own member, no status");
}

#[tokio::test]
async fn ot_opc_ua_compat_is_healthy_only_when_up_among_reachable_members() {
    use MemberStatus::*;
    for st in MemberStatus::ALL {
        let v = view(state("a", vec![member("a", st, 1, &[])]));
        let probe = ClusterMembershipProbe::new(v).policy(MembershipPolicy::OtOpcUaCompat);
        let want = if st == Up {
            HealthStatus::Healthy
        } else {
            HealthStatus::Degraded
        };
        assert_eq!(status_of(probe).await.0, want, "{st:?}");
    }
    let mut unreachable_self = member("a", Up, 1, &[]);
    unreachable_self.reachable = false;
    let probe = ClusterMembershipProbe::new(view(state("a", vec![unreachable_self])))
        .policy(ClusterStatusPolicy::OtOpcUaCompat);
    assert_eq!(status_of(probe).await.0, HealthStatus::Degraded);
}

#[tokio::test]
async fn a_custom_policy_table_is_used() {
    let policy = ClusterStatusPolicy::custom(|s| match s {
        Some(MemberStatus::WeaklyUp | MemberStatus::Up) => HealthStatus::Healthy,
        _ => HealthStatus::Degraded,
    });
    let v = view(state(
        "a",
        vec![member("a", MemberStatus::WeaklyUp, 1, &[])],
    ));
    assert_eq!(
        status_of(ClusterMembershipProbe::new(v).policy(policy))
            .await
            .0,
        HealthStatus::Healthy
    );
}

/// ZB-2.3b's startup Degraded stays on the ready tier (membership,
/// transport); on the active tier "not yet available" is Unhealthy, like
/// the gate, so a booting node never answers 200 on `/health/active`.
#[tokio::test]
async fn while_unavailable_ready_probes_are_degraded_and_the_active_probe_unhealthy() {
    let v: Arc<dyn ClusterView> = Arc::new(InMemoryClusterView::new());
    let ready = [
        status_of(ClusterMembershipProbe::new(v.clone())).await,
        status_of(ClusterTransportProbe::new(v.clone())).await,
        status_of(ClusterTransportProbe::new(v.clone()).expected_size(3)).await,
    ];
    for (status, desc, _) in ready {
        assert_eq!(status, HealthStatus::Degraded);
        assert_eq!(desc.as_deref(), Some(CLUSTER_NOT_AVAILABLE));
    }
    for rule in [
        ClusterActiveNode::unscoped(),
        ClusterActiveNode::unscoped().expected_size(3),
        ClusterActiveNode::with_roles(["admin"]).unwrap(),
    ] {
        let (status, desc, data) = status_of(ActiveNodeProbe::new(v.clone(), rule.clone())).await;
        assert_eq!(status, HealthStatus::Unhealthy, "{rule:?}");
        assert_eq!(desc.as_deref(), Some(CLUSTER_NOT_AVAILABLE));
        assert_eq!(data, serde_json::json!({}), "no view, no addresses");
        assert!(
            !ClusterActiveNodeGate::new(v.clone(), rule).is_active_node(),
            "the gate agrees: closed"
        );
    }
    // ZB's literal rule survives only as an opt-in that names its risk;
    // the description stays the same fixed text.
    let (status, desc, _) = status_of(
        ActiveNodeProbe::new(v.clone(), ClusterActiveNode::unscoped())
            .degraded_while_unavailable_unsafe(),
    )
    .await;
    assert_eq!(
        (status, desc.as_deref()),
        (HealthStatus::Degraded, Some(CLUSTER_NOT_AVAILABLE))
    );
}

#[tokio::test]
async fn the_oldest_up_member_is_active_not_the_lowest_address() {
    use MemberStatus::*;
    // "a" has the lowest address (a leader-based rule would pick it) but
    // rejoined last, so it is the youngest.
    let members = || {
        vec![
            member("10.0.0.1:1", Up, 9, &[]),
            member("10.0.0.2:1", Up, 2, &[]),
            member("10.0.0.3:1", Up, 5, &[]),
            member("10.0.0.0:1", Joining, 0, &[]),
        ]
    };
    let rule = ClusterActiveNode::unscoped();
    let active = rule.decide(&state("10.0.0.2:1", members()));
    assert_eq!(
        active,
        ActiveDecision::Active {
            role: None,
            active: "10.0.0.2:1".into()
        }
    );
    let standby = rule.decide(&state("10.0.0.1:1", members()));
    assert_eq!(
        standby,
        ActiveDecision::Standby {
            role: None,
            active: "10.0.0.2:1".into()
        }
    );
    let (status, _, data) = status_of(ActiveNodeProbe::new(
        view(state("10.0.0.1:1", members())),
        rule,
    ))
    .await;
    assert_eq!(status, HealthStatus::Unhealthy);
    assert_eq!(data["selfAddress"], "10.0.0.1:1");
    assert_eq!(data["activeNode"], "10.0.0.2:1");
    assert!(
        data.get("activeRole").is_none(),
        "unscoped results carry no activeRole"
    );
}

#[test]
fn age_ties_break_by_address_bytes_not_locale() {
    use MemberStatus::*;
    // Byte order puts "B" (0x42) before "a" (0x61); a case-insensitive
    // locale order would not.
    let s = state(
        "a:1",
        vec![member("a:1", Up, 3, &[]), member("B:1", Up, 3, &[])],
    );
    assert_eq!(
        ClusterActiveNode::unscoped().decide(&s).active_node(),
        Some("B:1")
    );
}

#[test]
fn unreachable_members_are_not_candidates() {
    use MemberStatus::*;
    let mut oldest = member("a", Up, 1, &[]);
    oldest.reachable = false;
    let s = state("b", vec![oldest, member("b", Up, 2, &[])]);
    assert!(ClusterActiveNode::unscoped().decide(&s).is_active());
}

#[tokio::test]
async fn role_preference_answers_for_the_first_held_role() {
    use MemberStatus::*;
    let members = || {
        vec![
            member("fused", Up, 3, &["admin", "driver"]),
            member("admin-2", Up, 1, &["admin"]),
            member("driver-1", Up, 2, &["driver"]),
            member("web", Up, 0, &["web"]),
        ]
    };
    let rule = ClusterActiveNode::with_roles(["admin", "driver"]).unwrap();
    let fused = rule.decide(&state("fused", members()));
    assert_eq!(
        fused,
        ActiveDecision::Standby {
            role: Some("admin".into()),
            active: "admin-2".into()
        }
    );
    let admin = rule.decide(&state("admin-2", members()));
    assert_eq!(
        admin,
        ActiveDecision::Active {
            role: Some("admin".into()),
            active: "admin-2".into()
        }
    );
    // The oldest Up driver-holder is driver-1 (age 2) vs fused (age 3).
    let driver = rule.decide(&state("driver-1", members()));
    assert_eq!(
        driver,
        ActiveDecision::Active {
            role: Some("driver".into()),
            active: "driver-1".into()
        }
    );
    assert_eq!(
        rule.decide(&state("web", members())),
        ActiveDecision::NoActiveRole
    );

    let (status, desc, data) = status_of(ActiveNodeProbe::new(
        view(state("web", members())),
        rule.clone(),
    ))
    .await;
    assert_eq!(
        status,
        HealthStatus::Unhealthy,
        "NoActiveRoleStatus defaults to Unhealthy (lmxopcua#494)"
    );
    assert_eq!(
        desc.as_deref(),
        Some("this node holds none of the active roles")
    );
    assert_eq!(data["selfAddress"], "web");
    let relaxed = ActiveNodeProbe::new(view(state("web", members())), rule.clone())
        .no_active_role_status(HealthStatus::Degraded);
    assert_eq!(status_of(relaxed).await.0, HealthStatus::Degraded);
    let (_, _, data) = status_of(ActiveNodeProbe::new(view(state("fused", members())), rule)).await;
    assert_eq!(
        (data["activeRole"].as_str(), data["activeNode"].as_str()),
        (Some("admin"), Some("admin-2"))
    );
}

#[tokio::test]
async fn no_up_member_in_scope_is_unhealthy_once_the_cluster_is_reachable() {
    use MemberStatus::*;
    let s = state(
        "a",
        vec![member("a", Joining, 1, &[]), member("b", Leaving, 0, &[])],
    );
    assert_eq!(
        ClusterActiveNode::unscoped().decide(&s),
        ActiveDecision::NoUpMemberInScope { role: None }
    );
    let (status, desc, _) =
        status_of(ActiveNodeProbe::new(view(s), ClusterActiveNode::unscoped())).await;
    assert_eq!(
        (status, desc.as_deref()),
        (HealthStatus::Unhealthy, Some("no Up member in scope"))
    );
}

#[test]
fn role_scope_without_roles_is_refused_as_r2() {
    let empty: [&str; 0] = [];
    assert_eq!(
        ClusterActiveNode::with_roles(empty).unwrap_err().rules(),
        [Rule::RoleScopeNeedsRoles]
    );
    assert_eq!(
        ClusterActiveNode::with_roles(["admin", ""])
            .unwrap_err()
            .rules(),
        [Rule::RoleScopeNeedsRoles]
    );
}

#[tokio::test]
async fn transport_fails_only_on_total_isolation() {
    use MemberStatus::*;
    let with = |reach: [bool; 2]| {
        let mut b = member("b", Up, 2, &[]);
        let mut c = member("c", Up, 3, &[]);
        b.reachable = reach[0];
        c.reachable = reach[1];
        view(state("a", vec![member("a", Up, 1, &[]), b, c]))
    };
    assert_eq!(
        status_of(ClusterTransportProbe::new(with([true, true])))
            .await
            .0,
        HealthStatus::Healthy
    );
    assert_eq!(
        status_of(ClusterTransportProbe::new(with([true, false])))
            .await
            .0,
        HealthStatus::Healthy
    );
    assert_eq!(
        status_of(ClusterTransportProbe::new(with([false, false])))
            .await
            .0,
        HealthStatus::Unhealthy
    );
    let single = view(state("a", vec![member("a", Up, 1, &[])]));
    let (status, desc, _) = status_of(ClusterTransportProbe::new(single)).await;
    assert_eq!(
        (status, desc.as_deref()),
        (
            HealthStatus::Healthy,
            Some("single node: no peers expected")
        )
    );
    // A peer on its way out is no longer expected.
    let leaving = view(state(
        "a",
        vec![member("a", Up, 1, &[]), {
            let mut b = member("b", Leaving, 2, &[]);
            b.reachable = false;
            b
        }],
    ));
    assert_eq!(
        status_of(ClusterTransportProbe::new(leaving)).await.0,
        HealthStatus::Healthy
    );
    assert_eq!(
        status_of(ClusterTransportProbe::new(with([true, false])).expected_size(3))
            .await
            .0,
        HealthStatus::Healthy
    );
    // The view forgot its dead peers; the configured size still expects them.
    let forgotten = || view(state("a", vec![member("a", Up, 1, &[])]));
    let (status, desc, _) = status_of(
        ClusterTransportProbe::new(forgotten())
            .expected_size(3)
            .allow_minority(),
    )
    .await;
    assert_eq!(
        (status, desc.as_deref()),
        (
            HealthStatus::Unhealthy,
            Some("isolated from every expected peer")
        )
    );
    // The guard as a manifest builds it (a struct literal) acts the same.
    let literal = MajorityGuard {
        expected_size: 3,
        require_majority: false,
    };
    assert_eq!(
        status_of(ClusterTransportProbe::new(forgotten()).with_guard(literal))
            .await
            .0,
        HealthStatus::Unhealthy
    );
}

#[tokio::test]
async fn a_known_size_makes_the_transport_probe_fail_on_the_minority_side_unless_opted_out() {
    use MemberStatus::*;
    // Five expected, this node reaches one peer: 2 of 5, not a majority,
    // but not isolated either.
    let mut members = vec![member("a", Up, 1, &[]), member("b", Up, 2, &[])];
    for (i, name) in ["c", "d", "e"].into_iter().enumerate() {
        let mut m = member(name, Up, 3 + i as u64, &[]);
        m.reachable = false;
        members.push(m);
    }
    let minority = || view(state("a", members.clone()));
    let (status, desc, _) =
        status_of(ClusterTransportProbe::new(minority()).expected_size(5)).await;
    assert_eq!(
        (status, desc.as_deref()),
        (
            HealthStatus::Unhealthy,
            Some("fewer than a majority of the expected members reachable")
        )
    );
    assert_eq!(
        status_of(
            ClusterTransportProbe::new(minority())
                .expected_size(5)
                .allow_minority()
        )
        .await
        .0,
        HealthStatus::Healthy
    );
}

#[tokio::test]
async fn the_majority_guard_keeps_a_minority_side_from_answering_active() {
    use MemberStatus::*;
    // A 2|1 partition as seen from the lone node "a" (the oldest).
    let mut b = member("b", Up, 2, &[]);
    let mut c = member("c", Up, 3, &[]);
    b.reachable = false;
    c.reachable = false;
    let minority = state("a", vec![member("a", Up, 1, &[]), b, c]);
    assert!(
        ClusterActiveNode::unscoped().decide(&minority).is_active(),
        "without the guard both sides can be active"
    );
    // Knowing the size is enough: a majority is required by default.
    let rule = ClusterActiveNode::unscoped().expected_size(3);
    assert_eq!(
        rule.guard(),
        Some(MajorityGuard {
            expected_size: 3,
            require_majority: true
        })
    );
    assert!(
        rule.clone().allow_minority().decide(&minority).is_active(),
        "the explicit opt-out brings split brain back"
    );
    assert_eq!(
        rule.decide(&minority),
        ActiveDecision::Minority {
            reachable: 1,
            needed: 2
        }
    );
    assert!(!ClusterActiveNodeGate::new(view(minority.clone()), rule.clone()).is_active_node());
    assert_eq!(
        status_of(ActiveNodeProbe::new(view(minority), rule.clone()))
            .await
            .0,
        HealthStatus::Unhealthy
    );
    // The majority side {b, c} elects b.
    let mut a = member("a", Up, 1, &[]);
    a.reachable = false;
    let majority = state(
        "b",
        vec![a, member("b", Up, 2, &[]), member("c", Up, 3, &[])],
    );
    assert!(rule.decide(&majority).is_active());
}

/// AT-6 with the view's own leave (actor-ts's `cluster.leave()`): both
/// ready-tier checks stay registered and fail from the call on, under
/// every policy, and keep failing for the rest of the incarnation, even
/// when its table later says `Up` again; the node is never chosen active
/// after it. A re-join (`RejoinableView::rejoin`) replaces the incarnation,
/// and with it the latch.
#[tokio::test(start_paused = true)]
async fn an_own_leave_keeps_the_checks_registered_and_failing_and_a_rejoin_replaces_them() {
    use MemberStatus::*;
    let registry = HealthRegistry::builder().probes_on_caller_runtime().build();
    let up = || state("a", vec![member("a", Up, 1, &[]), member("b", Up, 2, &[])]);
    let first = Arc::new(InMemoryClusterView::with_state(up()));
    let rejoinable = RejoinableView::new(first.clone());
    let v: Arc<dyn ClusterView> = rejoinable.clone();
    let compat = ClusterMembershipProbe::new(v.clone()).policy(ClusterStatusPolicy::OtOpcUaCompat);
    let lenient = ClusterMembershipProbe::new(v.clone())
        .policy(ClusterStatusPolicy::custom(|_| HealthStatus::Healthy));
    registry
        .add_all([
            ProbeRegistration::new("cluster-membership", ClusterMembershipProbe::new(v.clone())),
            ProbeRegistration::new("compat-membership", compat),
            ProbeRegistration::new("lenient-membership", lenient),
            ProbeRegistration::new("cluster-transport", ClusterTransportProbe::new(v.clone())),
        ])
        .unwrap();
    let rule = ClusterActiveNode::unscoped();
    let gate = ClusterActiveNodeGate::new(v.clone(), rule.clone());
    assert_eq!(
        registry.check(Tag::Ready).await.status,
        HealthStatus::Healthy
    );
    assert!(gate.is_active_node());

    assert!(!v.has_left());
    assert!(v.leave(), "an in-memory view can leave");
    assert!(v.has_left() && first.has_left());
    for _ in 0..2 {
        let report = registry.check(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Unhealthy, "{report:?}");
        assert_eq!(report.entries.len(), 4, "still registered: {report:?}");
        assert!(
            report
                .entries
                .iter()
                .all(|e| e.status == HealthStatus::Unhealthy),
            "every cluster check fails, whatever its policy: {report:?}"
        );
        assert_eq!(
            v.state().unwrap().self_member().unwrap().status,
            Leaving,
            "the view shows its own leave"
        );
        assert!(!gate.is_active_node(), "a node that left is never active");
        // Its table says Up again: the leave holds for the incarnation.
        first.set(up());
        tokio::time::advance(Duration::from_secs(3600)).await;
    }

    // A re-join on the same system replaces the incarnation, and the
    // same registrations pass again.
    rejoinable.rejoin(view(state("a", vec![member("a", Up, 7, &[])])));
    assert!(!v.has_left());
    let report = registry.check(Tag::Ready).await;
    assert_eq!(
        (report.status, report.entries.len()),
        (HealthStatus::Healthy, 4),
        "{report:?}"
    );
    assert!(gate.is_active_node());
}

/// Only this node's own leave latches: a peer seen `Leaving` (or this
/// node's own status read as `Leaving`, e.g. a leave an operator started
/// elsewhere) is the policy's to map, ZB-2.2's Degraded (200), and a
/// leaving peer is passed over for the active role at once.
#[tokio::test]
async fn a_leaving_status_is_the_policys_and_a_leaving_peer_fails_nothing_here() {
    use MemberStatus::*;
    let peer_leaving = view(state(
        "b",
        vec![member("a", Leaving, 1, &[]), member("b", Up, 2, &[])],
    ));
    assert!(!peer_leaving.has_left());
    let (membership, ..) = status_of(ClusterMembershipProbe::new(peer_leaving.clone())).await;
    let (transport, ..) = status_of(ClusterTransportProbe::new(peer_leaving.clone())).await;
    assert_eq!(
        (membership, transport),
        (HealthStatus::Healthy, HealthStatus::Healthy)
    );
    assert!(
        ClusterActiveNode::unscoped()
            .decide(&peer_leaving.state().unwrap())
            .is_active(),
        "the oldest member is leaving: the next-oldest is active"
    );
    let own_status_leaving = view(state("a", vec![member("a", Leaving, 1, &[])]));
    assert!(!own_status_leaving.has_left());
    assert_eq!(
        status_of(ClusterMembershipProbe::new(own_status_leaving))
            .await
            .0,
        HealthStatus::Degraded
    );
}

/// A small deterministic generator, so the property test needs no crate.
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[tokio::test]
async fn property_one_active_node_and_the_gate_never_disagrees_with_the_probe() {
    let mut rng = XorShift(0x5eed_cafe_f00d_d00d);
    let role_names = ["admin", "driver", "web"];
    let scoped = ClusterActiveNode::with_roles(["admin", "driver"]).unwrap();
    for case in 0..3_000 {
        let n = 1 + rng.below(6) as usize;
        let mut members: Vec<Member> = (0..n)
            .map(|i| {
                let roles: Vec<&str> = role_names
                    .iter()
                    .copied()
                    .filter(|_| rng.below(2) == 0)
                    .collect();
                let status = MemberStatus::ALL[rng.below(7) as usize];
                // Small age range so ties (broken by address) happen often.
                member(&format!("10.0.0.{i}:7000"), status, rng.below(3), &roles)
            })
            .collect();
        // Views agree: every node sees the same members (shuffled).
        for rule in [ClusterActiveNode::unscoped(), scoped.clone()] {
            let mut active_per_role = std::collections::HashMap::<Option<String>, usize>::new();
            for i in 0..n {
                let shift = rng.below(n as u64) as usize;
                members.rotate_left(shift);
                let s = state(&format!("10.0.0.{i}:7000"), members.clone());
                let decision = rule.decide(&s);
                let gate =
                    ClusterActiveNodeGate::new(view(s.clone()), rule.clone()).is_active_node();
                let (status, _, _) = status_of(ActiveNodeProbe::new(view(s), rule.clone())).await;
                // A view that is not available yet: both say "not active".
                let booting: Arc<dyn ClusterView> = Arc::new(InMemoryClusterView::new());
                let booting_gate =
                    ClusterActiveNodeGate::new(booting.clone(), rule.clone()).is_active_node();
                let (booting_status, _, _) =
                    status_of(ActiveNodeProbe::new(booting, rule.clone())).await;
                assert_eq!(
                    booting_gate,
                    booting_status.is_serving(),
                    "case {case}: gate and probe disagree while booting"
                );
                assert!(!booting_gate);
                // "Agree" as the router reads it: 200 on /health/active
                // exactly when the gate is open.
                assert_eq!(
                    gate,
                    status.is_serving(),
                    "case {case}: gate and probe disagree"
                );
                assert_eq!(gate, decision.is_active());
                if decision.is_active() {
                    *active_per_role
                        .entry(decision.role().map(str::to_owned))
                        .or_default() += 1;
                }
            }
            assert!(
                active_per_role.values().all(|&c| c == 1),
                "case {case}: {active_per_role:?}"
            );
            if !rule.is_scoped() {
                let any_up = members.iter().any(|m| m.status == MemberStatus::Up);
                assert_eq!(
                    active_per_role.values().sum::<usize>(),
                    usize::from(any_up),
                    "case {case}"
                );
            }
        }
    }
}

/// A member last heard `ago` before `now`, reachable or written off.
fn heard(address: &str, age: u64, now: Instant, ago: Duration, reachable: bool) -> Member {
    Member {
        last_heard: Some(now - ago),
        reachable,
        ..member(address, MemberStatus::Up, age, &[])
    }
}

#[test]
fn the_active_node_steps_down_when_no_majority_was_heard_within_the_lease() {
    let now = Instant::now();
    let rule = ClusterActiveNode::unscoped().expected_size(3);
    let lease = Handover::DEFAULT_LEASE;
    // "a", the oldest, cut off alone: its detector still holds b and c
    // live, but their heartbeats stopped `silence` ago.
    let a_sees = |silence: Duration| {
        state(
            "a",
            vec![
                member("a", MemberStatus::Up, 1, &[]),
                heard("b", 2, now, silence, true),
                heard("c", 3, now, silence, true),
            ],
        )
    };
    let just_inside = a_sees(lease - Duration::from_millis(1));
    assert!(rule.decide_at(&just_inside, now).is_active());
    assert_eq!(
        rule.decide_at(&a_sees(lease), now),
        ActiveDecision::Minority {
            reachable: 1,
            needed: 2
        },
        "the lease has run out: step down whatever the detector says"
    );
    // One peer heard recently is a majority with self.
    let mut one = a_sees(lease * 3);
    one.members[1].last_heard = Some(now - Duration::from_millis(100));
    assert!(rule.decide_at(&one, now).is_active());
    // The opt-out keeps only the detector: still active (the race).
    let racy = rule.clone().handover(Handover::immediate_unsafe());
    assert!(racy.decide_at(&a_sees(lease * 3), now).is_active());
    // The gate and the probe read the same rule.
    let (status, description, _) = futures_lite_block(status_of(ActiveNodeProbe::new(
        view(a_sees(lease * 3)),
        rule.clone(),
    )));
    assert_eq!(status, HealthStatus::Unhealthy);
    assert_eq!(
        description.as_deref(),
        Some("fewer than a majority of the expected members reachable")
    );
}

/// Runs a probe future to completion on a fresh current-thread runtime.
fn futures_lite_block<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn a_successor_waits_until_the_old_active_node_was_silent_for_the_margin() {
    let now = Instant::now();
    let rule = ClusterActiveNode::unscoped().expected_size(3);
    let margin = Handover::DEFAULT.margin().unwrap();
    assert_eq!(margin, Handover::DEFAULT_LEASE + Handover::DEFAULT_SLACK);
    // The majority side {b, c}: the detector has written "a" off already.
    let seen_from = |me: &str, silence: Duration| {
        state(
            me,
            vec![
                heard("a", 1, now, silence, false),
                Member {
                    last_heard: (me != "b").then_some(now),
                    ..member("b", MemberStatus::Up, 2, &[])
                },
                Member {
                    last_heard: (me != "c").then_some(now),
                    ..member("c", MemberStatus::Up, 3, &[])
                },
            ],
        )
    };
    let early = seen_from("b", Duration::from_millis(1300));
    assert_eq!(
        rule.decide_at(&early, now),
        ActiveDecision::HandingOver {
            role: None,
            from: "a".into(),
            silent_for: Duration::from_millis(1300)
        }
    );
    assert!(!ClusterActiveNodeGate::new(view(early.clone()), rule.clone()).is_active_node());
    let (status, _, data) = futures_lite_block(status_of(ActiveNodeProbe::new(
        view(early.clone()),
        rule.clone(),
    )));
    assert_eq!(status, HealthStatus::Unhealthy);
    assert_eq!(data["handingOverFrom"], serde_json::json!("a"));
    let almost = seen_from("b", margin - Duration::from_millis(1));
    assert!(matches!(
        rule.decide_at(&almost, now),
        ActiveDecision::HandingOver { .. }
    ));
    assert!(rule.decide_at(&seen_from("b", margin), now).is_active());
    assert_eq!(
        rule.decide_at(&seen_from("c", margin), now),
        ActiveDecision::Standby {
            role: None,
            active: "b".into()
        }
    );
    // Still held live by the detector (its digests reach b, its state does
    // not): silent past the lease, the rule is handing over; past the
    // margin, b takes over. The silence decides, not the detector: "a"
    // stepped down at its lease, whatever anyone's detector says.
    let held_live = |silence: Duration| {
        let mut s = seen_from("b", silence);
        s.members[0].reachable = true;
        s
    };
    let lease = Handover::DEFAULT_LEASE;
    assert!(matches!(
        rule.decide_at(&held_live(lease - Duration::from_millis(1)), now),
        ActiveDecision::Standby { .. }
    ));
    assert!(matches!(
        rule.decide_at(&held_live(lease), now),
        ActiveDecision::HandingOver { .. }
    ));
    assert!(
        rule.decide_at(&held_live(margin), now).is_active(),
        "the margin of silence decides, not the detector"
    );
    // The opt-out takes over as soon as the detector writes "a" off.
    let racy = rule.clone().handover(Handover::immediate_unsafe());
    assert!(racy.decide_at(&early, now).is_active());
    // A source without heartbeats (last_heard None) falls back on the
    // detector alone.
    let mut untracked = early.clone();
    untracked.members[0].last_heard = None;
    assert!(rule.decide_at(&untracked, now).is_active());
}

#[test]
fn a_guard_that_requires_a_majority_gets_the_safe_handover_by_default() {
    let guarded = ClusterActiveNode::unscoped().with_guard(MajorityGuard {
        expected_size: 3,
        require_majority: true,
    });
    assert_eq!(guarded.effective_handover(), Handover::DEFAULT);
    assert_eq!(
        ClusterActiveNode::unscoped()
            .expected_size(3)
            .effective_handover(),
        Handover::DEFAULT
    );
    let scoped = ClusterActiveNode::with_roles(["admin"])
        .unwrap()
        .with_guard(MajorityGuard::new(5));
    assert_eq!(scoped.effective_handover(), Handover::DEFAULT);
    for immediate in [
        ClusterActiveNode::unscoped(),
        ClusterActiveNode::unscoped()
            .expected_size(3)
            .allow_minority(),
        ClusterActiveNode::unscoped().with_guard(MajorityGuard {
            expected_size: 3,
            require_majority: false,
        }),
        guarded.clone().handover(Handover::immediate_unsafe()),
    ] {
        assert!(
            immediate.effective_handover().is_immediate(),
            "{immediate:?}"
        );
    }
    let custom = Handover::lease(Duration::from_millis(500), Duration::ZERO);
    assert!(custom.margin().unwrap() > custom.lease_duration().unwrap());
    assert_eq!(
        guarded.handover(custom).effective_handover(),
        custom,
        "an explicit hand-over wins"
    );
}

/// One simulated 2|1 partition that cuts the active node "a" off alone,
/// under the contract a source must keep (`Member::last_heard` noted at
/// the first snapshot refresh after the heartbeat arrived). Heartbeats
/// arrive at most `gossip` apart, refreshes happen at most `refresh`
/// apart, and each node's detector writes a silent peer off after its own
/// random delay (the race). Returns, per 5 ms step from the cut, the
/// nodes that decided active.
fn simulate_cut(
    rng: &mut XorShift,
    rule: &ClusterActiveNode,
    gossip: u64,
    refresh: u64,
    base: Instant,
) -> Vec<Vec<usize>> {
    const CUT: u64 = 10_000;
    const END: u64 = 30_000;
    let names = ["a", "b", "c"];
    let cut_link = |x: usize, y: usize| x == 0 || y == 0;
    let ms = |t: u64| base + Duration::from_millis(t);
    // receipts[x][y]: when x received y's heartbeats.
    let mut receipts = vec![vec![Vec::new(); 3]; 3];
    let mut refreshes = vec![Vec::new(); 3];
    let mut detect = [[0u64; 3]; 3];
    for x in 0..3 {
        for y in 0..3 {
            // A detector never writes off a peer that keeps to its gossip.
            detect[x][y] = gossip + 100 + rng.below(3_000);
            if x == y {
                continue;
            }
            let mut t = rng.below(gossip);
            while t < END {
                if cut_link(x, y) && t >= CUT {
                    break;
                }
                receipts[x][y].push(t);
                t += 1 + rng.below(gossip);
            }
        }
        let mut t = rng.below(refresh);
        while t < END {
            refreshes[x].push(t);
            t += 1 + rng.below(refresh);
        }
    }
    let mut actives = Vec::new();
    for now in (CUT..END).step_by(5) {
        let mut active = Vec::new();
        for x in 0..3 {
            // Sorted times: the last one at or before `t`, the first at or after.
            let before =
                |times: &[u64], t: u64| times[..times.partition_point(|&r| r <= t)].last().copied();
            let last_refresh = before(&refreshes[x], now).unwrap();
            let members: Vec<Member> = (0..3)
                .map(|y| {
                    if x == y {
                        return member(names[y], MemberStatus::Up, y as u64 + 1, &[]);
                    }
                    // Noted at the first refresh at or after the receipt.
                    let noted = before(&receipts[x][y], last_refresh)
                        .map(|r| refreshes[x][refreshes[x].partition_point(|&f| f < r)]);
                    let reachable =
                        before(&receipts[x][y], now).is_some_and(|r| now < r + detect[x][y]);
                    Member {
                        reachable,
                        last_heard: noted.map(ms),
                        ..member(names[y], MemberStatus::Up, y as u64 + 1, &[])
                    }
                })
                .collect();
            if rule
                .decide_at(&state(names[x], members), ms(now))
                .is_active()
            {
                active.push(x);
            }
        }
        actives.push(active);
    }
    actives
}

#[test]
fn property_the_handover_never_lets_two_nodes_answer_active_across_a_cut() {
    let mut rng = XorShift(0x0dd_ba11_5eed);
    let base = Instant::now();
    let mut racy_overlaps = 0;
    for case in 0..100 {
        let gossip = 20 + rng.below(1_000);
        let refresh = 10 + rng.below(500);
        // Any slack above gossip + refresh will do.
        let slack = Duration::from_millis(gossip + refresh + 1 + rng.below(200));
        let lease = Duration::from_millis(gossip + refresh + rng.below(2_000));
        let safe = ClusterActiveNode::unscoped()
            .expected_size(3)
            .handover(Handover::lease(lease, slack));
        let steps = simulate_cut(&mut rng, &safe, gossip, refresh, base);
        for (i, active) in steps.iter().enumerate() {
            assert!(
                active.len() <= 1,
                "case {case} (gossip {gossip} ms, refresh {refresh} ms, lease {lease:?}, \
                 slack {slack:?}): {active:?} active {} ms after the cut",
                i * 5
            );
        }
        assert_eq!(
            steps.last().unwrap(),
            &[1],
            "case {case}: the next-oldest takes over"
        );
        let racy = safe.clone().handover(Handover::immediate_unsafe());
        let steps = simulate_cut(&mut rng, &racy, gossip, refresh, base);
        racy_overlaps += steps.iter().filter(|a| a.len() > 1).count();
    }
    assert!(
        racy_overlaps > 0,
        "the simulation has teeth: the detector race does overlap"
    );
}

#[test]
fn a_node_coming_back_counts_a_peer_only_once_it_was_reachable_for_the_slack() {
    let now = Instant::now();
    let rule = ClusterActiveNode::unscoped().expected_size(3);
    let slack = Handover::DEFAULT_SLACK;
    // "a", the oldest, just healed: b and c are heard again, reachable
    // since `ago`.
    let a_sees = |ago: Duration| {
        let back = |address: &str, age| Member {
            reachable_since: Some(now - ago),
            stepped_down_since: None,
            ..heard(address, age, now, Duration::ZERO, true)
        };
        state(
            "a",
            vec![
                member("a", MemberStatus::Up, 1, &[]),
                back("b", 2),
                back("c", 3),
            ],
        )
    };
    assert_eq!(
        rule.decide_at(&a_sees(Duration::from_millis(300)), now),
        ActiveDecision::Minority {
            reachable: 1,
            needed: 2
        },
        "not before the successor has had the slack to hear it and step down"
    );
    assert!(rule.decide_at(&a_sees(slack), now).is_active());
    // Meanwhile the successor "b" yields as soon as it hears "a" again,
    // even before its detector holds "a" live.
    let b_sees = state(
        "b",
        vec![
            heard("a", 1, now, Duration::ZERO, false),
            member("b", MemberStatus::Up, 2, &[]),
            heard("c", 3, now, Duration::ZERO, true),
        ],
    );
    assert!(!rule.decide_at(&b_sees, now).is_active());
    // The opt-out does not wait.
    let racy = rule.handover(Handover::immediate_unsafe());
    assert!(
        racy.decide_at(&a_sees(Duration::from_millis(300)), now)
            .is_active()
    );
}

/// A view that states the hand-over its timing supports.
struct TimedView {
    state: Arc<ClusterState>,
    timing: Handover,
}

impl ClusterView for TimedView {
    fn state(&self) -> Option<Arc<ClusterState>> {
        Some(self.state.clone())
    }

    fn handover(&self) -> Option<Handover> {
        Some(self.timing)
    }
}

#[test]
fn the_probe_and_the_gate_take_the_views_hand_over_unless_the_rule_sets_one() {
    let now = Instant::now();
    // "b" on the majority side; "a", the oldest, written off and silent
    // for 3 s: past a 1 s + 1 s margin, inside the default 5 s one.
    let silent = state(
        "b",
        vec![
            heard("a", 1, now, Duration::from_secs(3), false),
            heard("b", 2, now, Duration::ZERO, true),
            heard("c", 3, now, Duration::from_millis(100), true),
        ],
    );
    let timing = Handover::lease(Duration::from_secs(1), Duration::from_secs(1));
    let timed: Arc<dyn ClusterView> = Arc::new(TimedView {
        state: Arc::new(silent.clone()),
        timing,
    });
    let rule = ClusterActiveNode::unscoped().expected_size(3);
    // On its own the rule keeps the default: still handing over.
    assert_eq!(rule.effective_handover(), Handover::DEFAULT);
    assert!(matches!(
        rule.decide_at(&silent, now),
        ActiveDecision::HandingOver { .. }
    ));
    // The probe and the gate read the view's timing: "b" took over.
    let (status, _, _) =
        futures_lite_block(status_of(ActiveNodeProbe::new(timed.clone(), rule.clone())));
    assert_eq!(status, HealthStatus::Healthy);
    assert!(ClusterActiveNodeGate::new(timed.clone(), rule.clone()).is_active_node());
    // A hand-over the rule sets wins over the view's.
    let set = rule.handover(Handover::DEFAULT);
    let (status, description, _) =
        futures_lite_block(status_of(ActiveNodeProbe::new(timed.clone(), set.clone())));
    assert_eq!(status, HealthStatus::Unhealthy);
    assert_eq!(
        description.as_deref(),
        Some("handing over: the active node went silent, waiting out its lease")
    );
    assert!(!ClusterActiveNodeGate::new(timed, set).is_active_node());
    // A view that states nothing leaves the default.
    let (status, _, _) = futures_lite_block(status_of(ActiveNodeProbe::new(
        view(silent),
        ClusterActiveNode::unscoped().expected_size(3),
    )));
    assert_eq!(status, HealthStatus::Unhealthy);
}

/// A stepped-down member is treated as a silent active node: the choice
/// (no one active) for the hand-over margin after this node learnt of it,
/// passed over after, unless it is the only candidate left; without a
/// lease (no guard) it is passed over at once.
#[test]
fn a_stepped_down_member_holds_the_role_for_the_margin_then_is_passed_over() {
    let now = Instant::now();
    let margin = Duration::from_secs(3);
    let guarded = ClusterActiveNode::unscoped()
        .expected_size(2)
        .handover(Handover::lease(
            Duration::from_secs(2),
            Duration::from_secs(1),
        ));
    assert_eq!(guarded.effective_handover().margin(), Some(margin));
    let stepped = |ago: Duration| {
        let mut a = member("a", MemberStatus::Up, 1, &[]);
        a.stepped_down_since = Some(now - ago);
        a
    };
    let pair = |me: &str, ago: Duration| {
        state(
            me,
            vec![stepped(ago), member("b", MemberStatus::Up, 2, &[])],
        )
    };
    let handing = |d: ActiveDecision| matches!(d, ActiveDecision::HandingOver { ref from, .. } if from == "a");
    // Within the margin: nobody is active, on either node.
    for me in ["a", "b"] {
        assert!(
            handing(guarded.decide_at(&pair(me, Duration::from_secs(1)), now)),
            "{me}"
        );
    }
    // After it: the next in line.
    let later = Duration::from_secs(4);
    assert!(guarded.decide_at(&pair("b", later), now).is_active());
    assert_eq!(
        guarded.decide_at(&pair("a", later), now).active_node(),
        Some("b")
    );
    // The only candidate left keeps the role.
    let alone = state(
        "a",
        vec![stepped(later), {
            let mut b = member("b", MemberStatus::Up, 2, &[]);
            b.status = MemberStatus::Leaving;
            b
        }],
    );
    let lone = ClusterActiveNode::unscoped();
    assert!(lone.decide_at(&alone, now).is_active());
    // No guard, no lease: passed over at once.
    assert!(lone.decide_at(&pair("b", Duration::ZERO), now).is_active());
}

#[test]
fn an_in_memory_view_steps_its_own_node_down_and_up() {
    let v = InMemoryClusterView::new();
    assert!(!v.step_down(true), "no cluster yet: nothing to announce");
    v.set(state(
        "a",
        vec![
            member("a", MemberStatus::Up, 1, &[]),
            member("b", MemberStatus::Up, 2, &[]),
        ],
    ));
    let rule = ClusterActiveNode::unscoped();
    assert!(rule.decide(&v.state().unwrap()).is_active());
    assert!(v.step_down(true));
    assert_eq!(rule.decide(&v.state().unwrap()).active_node(), Some("b"));
    assert!(v.step_down(false));
    assert!(rule.decide(&v.state().unwrap()).is_active());
}
