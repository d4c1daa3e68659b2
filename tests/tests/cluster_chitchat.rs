//! The cluster probes, the rule and the gate over **real** chitchat nodes
//! gossiping on loopback UDP (ZB-2.2, ZB-2.3a-c, ZB-4, AT-5, AT-6).
//!
//! Each test starts its own nodes on a [`Lan`]: chitchat's own UDP transport
//! behind a relay the test can cut (see `support/chitchat.rs`). Node `i` has
//! the `i`-th lowest address, and the tests choose generations (ages)
//! independently of it, so "oldest" and "lowest address" can be told apart.
//! Gossip runs every 100 ms; the phi-accrual detector writes a silent peer
//! off after about a second. Every wait is bounded.

#[path = "support/chitchat.rs"]
mod lan;
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::{HttpResponse, web};
use lan::{Cluster, GOSSIP_INTERVAL, Node, PHI_THRESHOLD, Settle, eventually};
use serde_json::{Value, json};
use support::{Server, request};
use zb_health::cluster::chitchat::ChitchatViewConfig;
use zb_health::cluster::{
    ActiveDecision, ActiveNodeProbe, ClusterActiveNode, ClusterActiveNodeGate,
    ClusterMembershipProbe, ClusterTransportProbe, ClusterView, Handover, MemberStatus,
};
use zb_health::gate::STANDBY_BODY;
use zb_health::prelude::{
    ActiveNodeGate, HealthRegistry, HealthStatus, Probe, ProbeRegistration, ProbeResult,
    RequireActiveNode, TagSet, ZbHealth, map_zb_health,
};

/// Formation of a fresh cluster, on a loaded machine.
const FORM: Duration = Duration::from_secs(20);
/// Failure detection plus a gossip round, with room for a loaded machine.
const DETECT: Duration = Duration::from_secs(15);

async fn run(probe: &impl Probe) -> ProbeResult {
    probe.check().await.expect("cluster probes do not error")
}

fn data(result: &ProbeResult, key: &str) -> Value {
    result
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .cloned()
        .unwrap_or(Value::Null)
}

fn gate(node: &Node, rule: &ClusterActiveNode) -> bool {
    ClusterActiveNodeGate::new(node.dyn_view(), rule.clone()).is_active_node()
}

/// Waits until every node in `indexes` names `expected` as the active node.
async fn agree(
    cluster: &Cluster,
    indexes: &[usize],
    rule: &ClusterActiveNode,
    expected: &str,
    deadline: Duration,
) -> Duration {
    eventually(
        &format!("nodes {indexes:?} to agree on {expected}"),
        deadline,
        || {
            indexes
                .iter()
                .all(|&i| cluster.nodes[i].active(rule).as_deref() == Some(expected))
                .then_some(())
        },
    )
    .await
    .1
}

fn ms(d: Duration) -> u128 {
    d.as_millis()
}

/// Three nodes agree on one active node: the oldest Up member, through the
/// rule, the active-node probe and the gate alike; every ready-tier probe
/// is Healthy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_agree_the_oldest_member_is_active() {
    let cluster = Cluster::start(&[(20, &[]), (10, &[]), (30, &[])]).await;
    let took = cluster.converge(&[0, 1, 2], FORM).await;
    println!("three nodes converged in {} ms", ms(took));
    let rule = ClusterActiveNode::unscoped();
    // Node 1 is the oldest (generation 10), though node 0 has the lowest address.
    let oldest = cluster.nodes[1].address();
    assert!(cluster.nodes[0].address().as_bytes() < oldest.as_bytes());
    agree(&cluster, &[0, 1, 2], &rule, &oldest, FORM).await;

    for node in &cluster.nodes {
        let is_oldest = node.address() == oldest;
        let active = run(&ActiveNodeProbe::new(node.dyn_view(), rule.clone())).await;
        let expected = if is_oldest {
            HealthStatus::Healthy
        } else {
            HealthStatus::Unhealthy
        };
        assert_eq!(
            active.status,
            expected,
            "active-node probe on {}",
            node.address()
        );
        assert_eq!(data(&active, "selfAddress"), json!(node.address()));
        assert_eq!(data(&active, "activeNode"), json!(oldest));
        assert_eq!(
            data(&active, "activeRole"),
            Value::Null,
            "unscoped rules carry no role"
        );
        assert_eq!(gate(node, &rule), is_oldest, "gate on {}", node.address());
        let membership = run(&ClusterMembershipProbe::new(node.dyn_view())).await;
        assert_eq!(membership.status, HealthStatus::Healthy);
        assert_eq!(membership.description.as_deref(), Some("Member status: Up"));
        let transport = run(&ClusterTransportProbe::new(node.dyn_view())).await;
        assert_eq!(transport.status, HealthStatus::Healthy);
        assert_eq!(
            (
                data(&transport, "expectedPeers"),
                data(&transport, "reachablePeers")
            ),
            (json!(2), json!(2))
        );
    }
}

/// Killing the oldest node hands the active role to the next-oldest on
/// every remaining node within the failure-detection time, which is
/// measured and printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_oldest_makes_the_next_oldest_active_within_the_detection_time() {
    let mut cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], FORM).await;
    let rule = ClusterActiveNode::unscoped();
    agree(
        &cluster,
        &[0, 1, 2],
        &rule,
        &cluster.nodes[0].address(),
        FORM,
    )
    .await;
    // Convergence already means every survivor's detector holds the
    // victim live, which chitchat grants only with two heartbeats sampled;
    // waiting for the adaptive timeout makes that precondition explicit
    // (no fixed "learning" sleep: the measurement is printed, not bounded).
    let victim = cluster.nodes[0].id.clone();
    let adaptive = cluster.nodes[1].learned_heartbeat(&victim, DETECT).await;
    cluster.nodes[2].learned_heartbeat(&victim, DETECT).await;

    let killed = Instant::now();
    let mut first = cluster.nodes.remove(0);
    first.kill(&cluster.lan).await;
    let next = cluster.nodes[0].address();
    // Poll every survivor together, so each time is its own.
    let mut per_node: Vec<Option<Duration>> = vec![None; cluster.nodes.len()];
    while per_node.iter().any(Option::is_none) {
        for (node, seen) in cluster.nodes.iter().zip(&mut per_node) {
            if seen.is_none() && node.active(&rule).as_deref() == Some(next.as_str()) {
                *seen = Some(killed.elapsed());
            }
        }
        assert!(
            killed.elapsed() < DETECT,
            "{next} not active everywhere after {DETECT:?}: {per_node:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let per_node: Vec<Duration> = per_node.into_iter().flatten().collect();
    let worst = *per_node.iter().max().unwrap();
    println!(
        "failure detection: the next-oldest was active on every node {} ms after the kill \
         (per node {:?} ms; chitchat's adaptive timeout at the kill {:?} on node 1; gossip {} ms, phi threshold {PHI_THRESHOLD})",
        ms(worst),
        per_node.iter().map(|d| ms(*d)).collect::<Vec<_>>(),
        adaptive,
        ms(GOSSIP_INTERVAL),
    );
    assert!(gate(&cluster.nodes[0], &rule) && !gate(&cluster.nodes[1], &rule));
    // The dead node stays in the view, written off, so the transport probe
    // still counts it as expected and passes on the remaining peer.
    let state = cluster.nodes[1].view.state().unwrap();
    let dead = state.members.iter().find(|m| m.age == 1).unwrap();
    assert!(!dead.reachable && dead.status == MemberStatus::Up);
    let transport = run(&ClusterTransportProbe::new(cluster.nodes[1].dyn_view())).await;
    assert_eq!(transport.status, HealthStatus::Healthy);
    // The killed node's own view reports it Removed: its probes fail, its gate is shut.
    let own = run(&ClusterMembershipProbe::new(first.dyn_view())).await;
    assert_eq!(own.status, HealthStatus::Unhealthy);
    assert!(!gate(&first, &rule));
}

/// The restart regression behind "oldest, never leader" (ZB §2.3): the
/// oldest node dies and comes back on the **same address**, which sorts
/// before the current active node's, with a new, larger generation. It
/// rejoins as the youngest and must not become active, not even for a
/// moment while it catches up on gossip; an address-ordered leader would
/// be the restarted node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_node_rejoins_as_the_youngest_and_never_becomes_active() {
    let mut cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], FORM).await;
    let rule = ClusterActiveNode::unscoped();
    let active = cluster.nodes[1].address();
    cluster.nodes[0].kill(&cluster.lan).await;
    agree(&cluster, &[1, 2], &rule, &active, DETECT).await;

    let restarted = Node::start(&cluster.lan, 0, 4, &[]).await;
    let restarted_address = restarted.address();
    assert_eq!(
        restarted_address,
        cluster.nodes[0].address(),
        "same address"
    );
    assert!(
        restarted_address.as_bytes() < active.as_bytes(),
        "it holds the lower address"
    );
    cluster.nodes[0] = restarted;

    // Sample the restarted node's gate and probe from its first moment on:
    // while its view is not available yet, both say "not active" (the
    // probe answers 503, not ZB-2.3b's literal Degraded 200).
    let expected = cluster.members(&[0, 1, 2]);
    let mut phase = Settle::new("every node to agree on the current active node", FORM, HOLD);
    let mut samples = 0u32;
    loop {
        let node = &cluster.nodes[0];
        samples += 1;
        assert!(
            !gate(node, &rule),
            "the restarted node's gate opened after {} ms",
            ms(phase.elapsed())
        );
        let probe = run(&ActiveNodeProbe::new(node.dyn_view(), rule.clone())).await;
        assert!(
            !probe.status.is_serving(),
            "the restarted node's active-node probe answered {:?} after {} ms",
            probe.status,
            ms(phase.elapsed())
        );
        if let Some(state) = node.view.state() {
            assert!(
                !rule.decide(&state).is_active(),
                "the restarted node decided it is active: {state:?}"
            );
        }
        let all_agree = cluster
            .nodes
            .iter()
            .all(|n| n.sees_all_up(&expected) && n.active(&rule).as_deref() == Some(&*active));
        if phase.done(all_agree) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    println!(
        "restart: rejoined and agreed in {} ms ({samples} samples, the gate never opened, \
         the active-node probe never answered 200)",
        ms(phase.reached().unwrap())
    );
    let active_probe = run(&ActiveNodeProbe::new(
        cluster.nodes[0].dyn_view(),
        rule.clone(),
    ))
    .await;
    assert_eq!(active_probe.status, HealthStatus::Unhealthy);
    assert_eq!(data(&active_probe, "activeNode"), json!(active));
    for node in &cluster.nodes {
        let state = node.view.state().unwrap();
        // One member per address: the former incarnation is replaced.
        let own_address: Vec<u64> = state
            .members
            .iter()
            .filter(|m| m.address == restarted_address)
            .map(|m| m.age)
            .collect();
        assert_eq!(own_address, [4], "on {}", node.address());
        assert_eq!(gate(node, &rule), node.address() == active);
        // The trap the rule avoids: the lowest address is the restarted node.
        let leader = state
            .members
            .iter()
            .filter(|m| m.status == MemberStatus::Up && m.reachable)
            .min_by(|a, b| a.address.as_bytes().cmp(b.address.as_bytes()))
            .unwrap();
        assert_eq!(leader.address, restarted_address);
    }
}

/// Role scoping over gossip: the fused `[admin, driver]` node answers for
/// `admin` (listed first), single-role nodes for their own role, and a node
/// holding neither role is `NoActiveRole`, Unhealthy. `data` carries
/// `selfAddress`, `activeRole` and `activeNode`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_scope_the_active_node_by_preference() {
    let cluster = Cluster::start(&[
        (1, &["driver"]),
        (2, &["admin", "driver"]),
        (3, &["admin"]),
        (4, &["metrics"]),
    ])
    .await;
    cluster.converge(&[0, 1, 2, 3], FORM).await;
    let rule = ClusterActiveNode::with_roles(["admin", "driver"]).unwrap();
    let [driver, fused, _admin, neither] = [0, 1, 2, 3].map(|i| cluster.nodes[i].address());
    eventually("the roles to gossip", FORM, || {
        cluster
            .nodes
            .iter()
            .all(|n| {
                n.view
                    .state()
                    .is_some_and(|s| s.members.iter().all(|m| !m.roles.is_empty()))
            })
            .then_some(())
    })
    .await;

    let expected = [
        (
            ActiveDecision::Active {
                role: Some("driver".into()),
                active: driver.clone(),
            },
            HealthStatus::Healthy,
        ),
        (
            ActiveDecision::Active {
                role: Some("admin".into()),
                active: fused.clone(),
            },
            HealthStatus::Healthy,
        ),
        (
            ActiveDecision::Standby {
                role: Some("admin".into()),
                active: fused.clone(),
            },
            HealthStatus::Unhealthy,
        ),
        (ActiveDecision::NoActiveRole, HealthStatus::Unhealthy),
    ];
    for (node, (decision, status)) in cluster.nodes.iter().zip(expected) {
        let state = node.view.state().unwrap();
        assert_eq!(
            rule.decide(&state),
            decision,
            "on {} with roles {:?}",
            node.address(),
            node.roles
        );
        let result = run(&ActiveNodeProbe::new(node.dyn_view(), rule.clone())).await;
        assert_eq!(result.status, status, "on {}", node.address());
        assert_eq!(data(&result, "selfAddress"), json!(node.address()));
        assert_eq!(
            data(&result, "activeRole"),
            decision.role().map_or(Value::Null, |r| json!(r))
        );
        assert_eq!(
            data(&result, "activeNode"),
            decision.active_node().map_or(Value::Null, |a| json!(a))
        );
        assert_eq!(gate(node, &rule), decision.is_active());
    }
    let none = run(&ActiveNodeProbe::new(
        cluster.nodes[3].dyn_view(),
        rule.clone(),
    ))
    .await;
    assert_eq!(
        none.description.as_deref(),
        Some("this node holds none of the active roles")
    );
    assert_eq!(
        none.data.unwrap().len(),
        1,
        "only selfAddress for {neither}"
    );
}

/// A partition that isolates one node: its detector writes both peers off
/// and its transport probe fails (AT-5), while the two connected nodes keep
/// passing theirs; after healing, it passes again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_isolated_node_fails_its_transport_probe_and_the_majority_does_not() {
    let cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], FORM).await;
    let [a, b, c] = [0, 1, 2].map(|i| cluster.nodes[i].address());
    let transport = |i: usize| ClusterTransportProbe::new(cluster.nodes[i].dyn_view());

    let cut = Instant::now();
    cluster.lan.partition(&[&[0, 1], &[2]]);
    eventually("the isolated node to write both peers off", DETECT, || {
        cluster.nodes[2]
            .sees_unreachable(&[a.as_str(), b.as_str()])
            .then_some(())
    })
    .await;
    eventually(
        "the majority to write the isolated node off",
        DETECT,
        || {
            (cluster.nodes[0].sees_unreachable(&[c.as_str()])
                && cluster.nodes[1].sees_unreachable(&[c.as_str()]))
            .then_some(())
        },
    )
    .await;
    println!(
        "partition: detected on both sides in {} ms",
        ms(cut.elapsed())
    );

    let isolated = run(&transport(2)).await;
    assert_eq!(isolated.status, HealthStatus::Unhealthy);
    assert_eq!(
        isolated.description.as_deref(),
        Some("isolated from every expected peer")
    );
    assert_eq!(
        (
            data(&isolated, "expectedPeers"),
            data(&isolated, "reachablePeers")
        ),
        (json!(2), json!(0))
    );
    for i in [0, 1] {
        let majority = run(&transport(i)).await;
        assert_eq!(majority.status, HealthStatus::Healthy, "node {i}");
        assert_eq!(data(&majority, "reachablePeers"), json!(1));
    }
    // Membership is self's own status: still Up on the isolated node.
    assert_eq!(
        run(&ClusterMembershipProbe::new(cluster.nodes[2].dyn_view()))
            .await
            .status,
        HealthStatus::Healthy
    );

    let healed = Instant::now();
    cluster.lan.heal();
    cluster.converge(&[0, 1, 2], DETECT).await;
    assert_eq!(run(&transport(2)).await.status, HealthStatus::Healthy);
    println!(
        "partition: healed and reconverged in {} ms",
        ms(healed.elapsed())
    );
}

/// How long a verdict must hold after the condition that produced it, so a
/// flicker right after it would be caught.
const HOLD: Duration = Duration::from_secs(2);

/// Which nodes' gates are open under `rule`.
fn gates(cluster: &Cluster, rule: &ClusterActiveNode) -> Vec<bool> {
    cluster.nodes.iter().map(|n| gate(n, rule)).collect()
}

/// Split-brain safety is the default once the cluster's size is known
/// (ZB-2.3a with no downing; `spec/conflicts.md`). A 2|1 partition cuts a
/// **standby** off alone. With `ClusterActiveNode::unscoped().expected_size(3)`
/// and nothing else, the isolated node's gate and active-node probe are
/// sampled from the cut, through both sides' failure detection, and for
/// [`HOLD`] after: it never answers active, and at every sample the
/// majority side has exactly one active node, the oldest. The plain rule
/// (size unknown) makes the isolated node active once it has written its
/// peers off, so the guard is what keeps it out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_known_size_the_minority_never_answers_active_and_the_majority_keeps_one() {
    let cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], FORM).await;
    let [a, b, c] = [0, 1, 2].map(|i| cluster.nodes[i].address());
    let rule = ClusterActiveNode::unscoped().expected_size(3);
    agree(&cluster, &[0, 1, 2], &rule, &a, FORM).await;

    let mut phase = Settle::new("both sides to detect the partition", DETECT, HOLD);
    cluster.lan.partition(&[&[0, 1], &[2]]);
    let mut samples = 0u32;
    loop {
        samples += 1;
        let at = ms(phase.elapsed());
        let mut statuses = Vec::new();
        for node in &cluster.nodes {
            statuses.push(
                run(&ActiveNodeProbe::new(node.dyn_view(), rule.clone()))
                    .await
                    .status,
            );
        }
        assert_eq!(
            statuses,
            [
                HealthStatus::Healthy,
                HealthStatus::Unhealthy,
                HealthStatus::Unhealthy
            ],
            "active-node probes {at} ms after the cut"
        );
        assert_eq!(
            gates(&cluster, &rule),
            [true, false, false],
            "gates {at} ms after the cut: the minority must stay shut, the majority keep one"
        );
        let detected = cluster.nodes[2].sees_unreachable(&[a.as_str(), b.as_str()])
            && cluster.nodes[0].sees_unreachable(&[c.as_str()])
            && cluster.nodes[1].sees_unreachable(&[c.as_str()]);
        if phase.done(detected) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    println!(
        "partition with a known size: detected on both sides {} ms after the cut; \
         {samples} samples, the isolated standby never answered active",
        ms(phase.reached().unwrap())
    );
    let minority = cluster.nodes[2].view.state().unwrap();
    assert_eq!(
        rule.decide(&minority),
        ActiveDecision::Minority {
            reachable: 1,
            needed: 2
        }
    );
    assert!(
        gate(&cluster.nodes[2], &ClusterActiveNode::unscoped()),
        "without the size, the isolated node would call itself active"
    );
    assert_eq!(
        run(&ClusterTransportProbe::new(cluster.nodes[2].dyn_view()).expected_size(3))
            .await
            .status,
        HealthStatus::Unhealthy
    );

    cluster.lan.heal();
    cluster.converge(&[0, 1, 2], DETECT).await;
    agree(&cluster, &[0, 1, 2], &rule, &a, DETECT).await;
    assert_eq!(gates(&cluster, &rule), [true, false, false]);
}

/// Which nodes' active-node probes answer 200 (Healthy or Degraded) under `rule`.
async fn active_probes(cluster: &Cluster, rule: &ClusterActiveNode) -> Vec<bool> {
    let mut serving = Vec::new();
    for node in &cluster.nodes {
        let probe = run(&ActiveNodeProbe::new(node.dyn_view(), rule.clone())).await;
        serving.push(probe.status.is_serving());
    }
    serving
}

/// Split brain, 2|1, with the oldest (**active**) node cut off alone: the
/// case the majority guard alone cannot close (`spec/conflicts.md`).
///
/// One partition, four rules read from the same three views at every
/// sample (every 5 ms), from the cut through both sides' detection, the
/// hand-over and [`HOLD`] after it, then through the heal:
///
/// * **The default for a known size, `expected_size(3)`**: at every sample
///   at most one gate is open and at most one active-node probe answers
///   200; the majority side's next-oldest node becomes the single active
///   node once the old one has been silent for the hand-over margin; after
///   the heal the oldest node is the single active node again, never
///   beside the successor.
/// * **`expected_size(3).handover(Handover::immediate_unsafe())`**: the
///   successor takes over as soon as its detector writes the old node off;
///   whether the old node's detector was first is a race, so the overlap
///   is measured and printed, not asserted.
/// * **No guard** (`unscoped()`, or `expected_size(3).allow_minority()`):
///   both sides keep an active node after detection.
///
/// The failover times with and without the margin are printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cutting_the_active_node_off_alone_never_leaves_two_actives_by_default() {
    let cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], FORM).await;
    let [a, b, c] = [0, 1, 2].map(|i| cluster.nodes[i].address());
    let plain = ClusterActiveNode::unscoped();
    let opted_out = ClusterActiveNode::unscoped()
        .expected_size(3)
        .allow_minority();
    let guarded = ClusterActiveNode::unscoped().expected_size(3);
    let racy = guarded.clone().handover(Handover::immediate_unsafe());
    assert_eq!(guarded.effective_handover(), Handover::DEFAULT);
    agree(&cluster, &[0, 1, 2], &guarded, &a, FORM).await;
    agree(&cluster, &[0, 1, 2], &racy, &a, FORM).await;

    let mut phase = Settle::new(
        "the hand-over to the majority side's next-oldest node",
        DETECT,
        HOLD,
    );
    cluster.lan.partition(&[&[0], &[1, 2]]);
    let mut samples = 0u32;
    let (mut racy_overlap, mut last) = (Duration::ZERO, Duration::ZERO);
    let (mut safe_failover, mut racy_failover, mut detected_at) = (None, None, None);
    loop {
        samples += 1;
        let gates_now = gates(&cluster, &guarded);
        let probes_now = active_probes(&cluster, &guarded).await;
        let racy_now = gates(&cluster, &racy);
        let now = phase.elapsed();
        assert!(
            gates_now.iter().filter(|&&g| g).count() <= 1,
            "{} ms after the cut, gates {gates_now:?}: two nodes active with the default hand-over",
            ms(now)
        );
        assert!(
            probes_now.iter().filter(|&&p| p).count() <= 1,
            "{} ms after the cut, active-node probes serving {probes_now:?}",
            ms(now)
        );
        if racy_now.iter().filter(|&&g| g).count() > 1 {
            racy_overlap += now - last;
        }
        last = now;
        if racy_failover.is_none() && racy_now[1] {
            racy_failover = Some(now);
        }
        let handed_over = gates_now == [false, true, false] && probes_now == [false, true, false];
        if safe_failover.is_none() && handed_over {
            safe_failover = Some(now);
        }
        let detected = cluster.nodes[0].sees_unreachable(&[b.as_str(), c.as_str()])
            && cluster.nodes[1].sees_unreachable(&[a.as_str()])
            && cluster.nodes[2].sees_unreachable(&[a.as_str()]);
        if detected_at.is_none() && detected {
            detected_at = Some(now);
        }
        if phase.done(handed_over && detected && racy_failover.is_some()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The probe and the gate take the view's hand-over (its timing).
    let timing = cluster.nodes[0]
        .view
        .handover()
        .expect("the view states its hand-over");
    println!(
        "active node cut off alone ({samples} samples): detected on both sides after {} ms; \
         failover with the view's hand-over (lease {} ms, margin {} ms) {} ms, never two \
         active; with Handover::immediate_unsafe() {} ms, two gates open together for about \
         {} ms (the detectors' race)",
        ms(detected_at.unwrap()),
        ms(timing.lease_duration().unwrap()),
        ms(timing.margin().unwrap()),
        ms(safe_failover.unwrap()),
        ms(racy_failover.unwrap()),
        ms(racy_overlap),
    );

    // No guard: two active nodes, one per side.
    for rule in [&plain, &opted_out] {
        assert_eq!(
            gates(&cluster, rule),
            [true, true, false],
            "{rule:?}: minority and majority each have an active node"
        );
        assert_eq!(cluster.nodes[0].active(rule), Some(a.clone()));
        assert_eq!(cluster.nodes[2].active(rule), Some(b.clone()));
        for i in [0, 1] {
            let probe = run(&ActiveNodeProbe::new(
                cluster.nodes[i].dyn_view(),
                rule.clone(),
            ))
            .await;
            assert_eq!(probe.status, HealthStatus::Healthy, "node {i}, {rule:?}");
        }
    }
    // The racy opt-out still keeps a majority: once both detectors have
    // spoken, one active node.
    assert_eq!(gates(&cluster, &racy), [false, true, false]);

    // The default: the minority stepped down, the majority has exactly one.
    let minority = cluster.nodes[0].view.state().unwrap();
    assert_eq!(
        guarded.decide(&minority),
        ActiveDecision::Minority {
            reachable: 1,
            needed: 2
        }
    );
    let probe = run(&ActiveNodeProbe::new(
        cluster.nodes[0].dyn_view(),
        guarded.clone(),
    ))
    .await;
    assert_eq!(probe.status, HealthStatus::Unhealthy);
    assert_eq!(
        probe.description.as_deref(),
        Some("fewer than a majority of the expected members reachable")
    );
    assert_eq!(cluster.nodes[2].active(&guarded), Some(b.clone()));
    let transport =
        run(&ClusterTransportProbe::new(cluster.nodes[0].dyn_view()).expected_size(3)).await;
    assert_eq!(transport.status, HealthStatus::Unhealthy);

    // Heal: the oldest node comes back and is the single active node again;
    // the successor steps down on the first heartbeat it hears from it.
    let mut phase = Settle::new("the oldest node to be active again", DETECT, HOLD);
    cluster.lan.heal();
    let expected = cluster.members(&[0, 1, 2]);
    let mut back = None;
    loop {
        let gates_now = gates(&cluster, &guarded);
        let probes_now = active_probes(&cluster, &guarded).await;
        assert!(
            gates_now.iter().filter(|&&g| g).count() <= 1
                && probes_now.iter().filter(|&&p| p).count() <= 1,
            "{} ms after the heal: gates {gates_now:?}, probes serving {probes_now:?}",
            ms(phase.elapsed())
        );
        let healed = gates_now == [true, false, false]
            && cluster
                .nodes
                .iter()
                .all(|n| n.sees_all_up(&expected) && n.active(&guarded).as_deref() == Some(&*a));
        if back.is_none() && healed {
            back = Some(phase.elapsed());
        }
        if phase.done(healed) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    println!(
        "heal: the oldest node was the single active node again after {} ms, never beside \
         the successor",
        ms(back.unwrap())
    );
}

/// One node's app: `/admin/*` behind `RequireActiveNode` with the cluster
/// gate, and the three health tiers, on 127.0.0.1 with an OS-chosen port.
fn serve(node: &Node, rule: &ClusterActiveNode) -> Server {
    let (view, rule) = (node.dyn_view(), rule.clone());
    let registry = HealthRegistry::new();
    registry
        .add(ProbeRegistration::new(
            "cluster-membership",
            ClusterMembershipProbe::new(view.clone()),
        ))
        .unwrap();
    registry
        .add(ProbeRegistration::new(
            "cluster-transport",
            ClusterTransportProbe::new(view.clone()),
        ))
        .unwrap();
    registry
        .add(
            ProbeRegistration::new(
                "active-node",
                ActiveNodeProbe::new(view.clone(), rule.clone()),
            )
            .tags(TagSet::ACTIVE),
        )
        .unwrap();
    let gate = Arc::new(ClusterActiveNodeGate::new(view, rule));
    let endpoints = map_zb_health(registry);
    support::serve_with(move |c| {
        c.service(endpoints.clone()).service(
            web::scope("/admin")
                .wrap(RequireActiveNode::shared(gate.clone()))
                .route(
                    "/x",
                    web::get().to(|| async { HttpResponse::Ok().body("active") }),
                ),
        );
    })
}

/// `RequireActiveNode` with the chitchat cluster behind it, over HTTP: only
/// the active node answers 200 on `/admin/x` (and on `/health/active`);
/// standbys answer 503 with the standby body. When the active node's gossip
/// dies, the next-oldest starts answering 200, and the dead node's own
/// server answers 503 (its view reports it `Removed`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_active_node_serves_gated_routes_and_the_next_takes_over() {
    let mut cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], FORM).await;
    let rule = ClusterActiveNode::unscoped();
    let servers: Vec<Server> = cluster.nodes.iter().map(|n| serve(n, &rule)).collect();

    async fn codes(servers: &[Server], path: &str) -> Vec<u16> {
        let mut out = Vec::new();
        for s in servers {
            out.push(request(s.addr, "GET", path).await.status);
        }
        out
    }
    async fn wait_codes(servers: &[Server], path: &str, expected: [u16; 3]) -> Duration {
        let start = Instant::now();
        loop {
            let now = codes(servers, path).await;
            if now == expected {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < DETECT,
                "{path}: {now:?}, expected {expected:?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    wait_codes(&servers, "/admin/x", [200, 503, 503]).await;
    let standby = request(servers[1].addr, "GET", "/admin/x").await;
    assert_eq!(standby.header("content-type"), Some("application/json"));
    assert_eq!(
        standby.json(),
        serde_json::from_str::<Value>(STANDBY_BODY).unwrap()
    );
    let active = request(servers[0].addr, "GET", "/admin/x").await;
    assert_eq!(active.body, b"active");
    assert_eq!(codes(&servers, "/health/active").await, [200, 503, 503]);
    let body = request(servers[2].addr, "GET", "/health/active")
        .await
        .json();
    assert_eq!(
        body["entries"]["active-node"]["data"]["activeNode"],
        json!(cluster.nodes[0].address())
    );
    assert_eq!(codes(&servers, "/health/ready").await, [200, 200, 200]);

    let killed = Instant::now();
    cluster.nodes[0].kill(&cluster.lan).await;
    // The dead node's own server shuts its gate at once; the survivors
    // follow within the detection time.
    let took = wait_codes(&servers, "/admin/x", [503, 200, 503]).await;
    println!(
        "http: node 1 served /admin/x {} ms after node 0's gossip died",
        ms(killed.elapsed().max(took))
    );
    assert_eq!(codes(&servers, "/health/active").await, [503, 200, 503]);
    assert_eq!(
        codes(&servers, "/health/ready").await,
        [503, 200, 200],
        "the dead node is Removed: not ready (AT-6)"
    );
}

/// ZB-2.3b vs ZB-4 over HTTP, three real nodes: node 2 (a standby) goes
/// down and stays down; then node 1 restarts. Its view waits for every
/// seed, so with node 2 down it stays "not yet available" until the join
/// timeout (the production default, 5 s). Every server's `/health/active`
/// is sampled from the restart until the cluster has converged and for
/// [`HOLD`] after: in no round does more than one node answer 200. While
/// the restarted node's view is unavailable its `/health/active` answers
/// 503 (so it agrees with its gate) and its `/health/ready` answers 200:
/// the ready tier keeps ZB's startup Degraded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_restarted_while_a_peer_is_down_never_answers_200_on_the_active_tier() {
    let mut cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], FORM).await;
    let rule = ClusterActiveNode::unscoped();
    let active = cluster.nodes[0].address();
    agree(&cluster, &[0, 1, 2], &rule, &active, FORM).await;
    let mut servers: Vec<Server> = cluster.nodes.iter().map(|n| serve(n, &rule)).collect();

    let [b, c] = [1, 2].map(|i| cluster.nodes[i].address());
    cluster.nodes[2].kill(&cluster.lan).await;
    eventually("nodes 0 and 1 to write node 2 off", DETECT, || {
        (cluster.nodes[0].sees_unreachable(&[c.as_str()])
            && cluster.nodes[1].sees_unreachable(&[c.as_str()]))
        .then_some(())
    })
    .await;

    cluster.nodes[1].kill(&cluster.lan).await;
    let config = ChitchatViewConfig {
        join_timeout: ChitchatViewConfig::default().join_timeout,
        ..lan::view_config()
    };
    let restarted = Node::start_with(&cluster.lan, 1, 4, &[], config).await;
    let mut phase = Settle::new("the cluster to converge after the restart", FORM, HOLD);
    servers[1] = serve(&restarted, &rule);
    cluster.nodes[1] = restarted;

    let mut rounds = 0u32;
    let mut unavailable_rounds = 0u32;
    let mut available_after = None;
    loop {
        let mut answers = Vec::new();
        for s in &servers {
            answers.push(request(s.addr, "GET", "/health/active").await);
        }
        let ready = request(servers[1].addr, "GET", "/health/ready").await;
        rounds += 1;
        let codes: Vec<u16> = answers.iter().map(|w| w.status).collect();
        assert!(
            codes.iter().filter(|&&code| code == 200).count() <= 1,
            "round {rounds}, {} ms after the restart: /health/active answered {codes:?}",
            ms(phase.elapsed())
        );
        // A view never goes back to "unavailable", so one that still is
        // after the round was unavailable throughout it.
        if cluster.nodes[1].view.state().is_none() {
            unavailable_rounds += 1;
            let entry = &answers[1].json()["entries"]["active-node"];
            assert_eq!(
                (codes[1], entry["status"].as_str()),
                (503, Some("Unhealthy")),
                "while unavailable, the active tier answers 503"
            );
            assert_eq!(entry["description"], json!("cluster not yet available"));
            assert_eq!(
                (ready.status, ready.json()["status"].as_str()),
                (200, Some("Degraded")),
                "while unavailable, the ready tier keeps ZB's startup Degraded"
            );
        } else if available_after.is_none() {
            available_after = Some(phase.elapsed());
        }
        let node0_sees_the_restart = cluster.nodes[0].view.state().is_some_and(|s| {
            s.members
                .iter()
                .any(|m| m.address == b && m.age == 4 && m.reachable)
        });
        let converged = available_after.is_some()
            && node0_sees_the_restart
            && [0, 1]
                .iter()
                .all(|&i| cluster.nodes[i].active(&rule).as_deref() == Some(active.as_str()));
        if phase.done(converged) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        unavailable_rounds > 0,
        "precondition: no round saw the restarted node's view unavailable"
    );
    println!(
        "restart while a peer is down: the restarted node was unavailable for about {} ms \
         ({unavailable_rounds} of {rounds} rounds, each answering 503 on /health/active there); \
         converged after {} ms; never more than one 200",
        ms(available_after.unwrap()),
        ms(phase.reached().unwrap())
    );
    let mut last = Vec::new();
    for s in &servers {
        last.push(request(s.addr, "GET", "/health/active").await.status);
    }
    assert_eq!(last, [200, 503, 503]);
}

/// `clusterReady` over a real chitchat node (AT-8): `false` while the node
/// is `Joining`, though the Default policy already calls it Healthy (ready
/// 200), `true` once it is `Up`, `false` again while it leaves; a registry
/// with no membership probe, a system that never joined a cluster, says
/// `true`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_ready_is_false_until_the_node_is_up_and_true_without_a_cluster() {
    let cluster = Cluster::unscoped(1).await;
    cluster.converge(&[0], FORM).await;
    let node = &cluster.nodes[0];
    let registry = HealthRegistry::new();
    registry
        .add(ProbeRegistration::new(
            "cluster-membership",
            ClusterMembershipProbe::new(node.dyn_view()),
        ))
        .unwrap();
    let with_cluster = |registry| {
        ZbHealth::new(registry)
            .cluster_ready("cluster-membership")
            .build()
            .unwrap()
    };
    let server = support::serve(with_cluster(registry));
    let never_joined = support::serve(with_cluster(HealthRegistry::new()));

    // (published status, ready code, membership entry, clusterReady)
    let cases = [
        (MemberStatus::Joining, 200, "Healthy", false),
        (MemberStatus::Up, 200, "Healthy", true),
        (MemberStatus::Joining, 200, "Healthy", false),
        (MemberStatus::Leaving, 200, "Degraded", false),
    ];
    for (status, code, entry, ready) in cases {
        node.view.publish(status, Vec::<String>::new()).await;
        eventually(&format!("{status} in the view"), DETECT, || {
            let state = node.view.state()?;
            (state.self_member()?.status == status).then_some(())
        })
        .await;
        let r = request(server.addr, "GET", "/health/ready").await;
        let body = r.json();
        assert_eq!(
            (
                r.status,
                body["entries"]["cluster-membership"]["status"].clone(),
                body["entries"]["cluster-membership"]["data"]["memberStatus"].clone(),
                body["clusterReady"].clone(),
            ),
            (code, json!(entry), json!(status.as_str()), json!(ready)),
            "{status}: {body}"
        );
        let alone = request(never_joined.addr, "GET", "/health/ready")
            .await
            .json();
        assert_eq!(alone["clusterReady"], true, "{alone}");
    }
}

/// How long a node that left is watched after its leave: 30 gossip
/// rounds, long past the hand-over, so a ready tier that came back would
/// be caught.
const LEFT_WATCH: Duration = Duration::from_secs(3);

/// AT-6, an explicit leave and a re-join by the library, on three real
/// chitchat nodes. Node 0, the active one, has its membership, transport
/// and active-node checks registered once, over a `RejoinableView`. It
/// leaves (`ClusterView::leave`, as actor-ts's `cluster.leave()`; its
/// gossip runs on, nothing is killed): from the call on its ready tier
/// answers Unhealthy (503) and its gate is shut, and so they stay for
/// [`LEFT_WATCH`], through a late `publish(Up)` too; its peers see it
/// `Leaving` while still reachable, and node 1 takes the role without
/// failure detection, at most one gate open at every sample. Then it
/// joins again as a new incarnation on its old address: one `rejoin`
/// call and the same registrations read the new membership, where it is
/// the youngest, a standby.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_leaves_stays_unready_hands_the_role_over_and_a_rejoin_swaps_its_checks() {
    use zb_health::cluster::RejoinableView;
    use zb_health::prelude::Tag;

    let mut cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], FORM).await;
    let rule = ClusterActiveNode::unscoped().expected_size(3);
    let (a, b) = (cluster.nodes[0].address(), cluster.nodes[1].address());
    agree(&cluster, &[0, 1, 2], &rule, &a, FORM).await;
    let view = RejoinableView::new(cluster.nodes[0].dyn_view());
    let dyn_view: Arc<dyn ClusterView> = view.clone();
    let registry = HealthRegistry::new();
    registry
        .add_all([
            ProbeRegistration::new(
                "cluster-membership",
                ClusterMembershipProbe::new(dyn_view.clone()),
            ),
            ProbeRegistration::new(
                "cluster-transport",
                ClusterTransportProbe::new(dyn_view.clone()).expected_size(3),
            ),
            ProbeRegistration::new(
                "active-node",
                ActiveNodeProbe::new(dyn_view.clone(), rule.clone()),
            )
            .tags(TagSet::ACTIVE),
        ])
        .unwrap();
    let gate = ClusterActiveNodeGate::new(dyn_view.clone(), rule.clone());
    // Until the ready tier answers Healthy, every answer with the same two
    // registrations.
    let until_healthy = |registry: &HealthRegistry| {
        let registry = registry.clone();
        async move {
            let start = Instant::now();
            loop {
                let report = registry.check(Tag::Ready).await;
                assert_eq!(report.entries.len(), 2, "the same registrations");
                if report.status == HealthStatus::Healthy {
                    return;
                }
                assert!(start.elapsed() < FORM, "not Healthy: {report:?}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    until_healthy(&registry).await;
    assert!(gate.is_active_node());
    // How node `i` sees node 0: (status, reachable).
    let seen_by = |cluster: &Cluster, i: usize| {
        cluster.nodes[i].view.state().and_then(|s| {
            s.members
                .iter()
                .find(|m| m.address == a)
                .map(|m| (m.status, m.reachable))
        })
    };

    // Leave: ready fails and the gate shuts at once, on this node's own
    // word, before any gossip.
    let left = Instant::now();
    assert!(dyn_view.leave(), "a chitchat view can leave");
    assert!(dyn_view.has_left());
    assert!(!gate.is_active_node(), "the gate shuts at the leave");
    let (mut handed_over, mut samples, mut published_up) = (None, 0u32, false);
    loop {
        samples += 1;
        let now = left.elapsed();
        let report = registry.check(Tag::Ready).await;
        assert_eq!(
            (report.status, report.entries.len()),
            (HealthStatus::Unhealthy, 2),
            "{} ms after the leave: {report:?}",
            ms(now)
        );
        let open = gates(&cluster, &rule);
        assert!(
            !open[0] && open.iter().filter(|&&g| g).count() <= 1,
            "{} ms after the leave, gates {open:?}",
            ms(now)
        );
        if handed_over.is_none() && open == [false, true, false] {
            handed_over = Some(now);
            // The successor passed it over on its gossip, not on failure
            // detection: it still reaches it, and sees it leaving. Node 2
            // may hear the gossip a round later; it is checked after the
            // watch below.
            assert_eq!(
                seen_by(&cluster, 1),
                Some((MemberStatus::Leaving, true)),
                "node 1 at the hand-over"
            );
            // A late `Up` (e.g. a start-up task finishing) changes nothing.
            cluster.nodes[0]
                .view
                .publish(MemberStatus::Up, Vec::<String>::new())
                .await;
            published_up = true;
        }
        if handed_over.is_some() && now > LEFT_WATCH {
            break;
        }
        assert!(
            now < DETECT,
            "no hand-over within {DETECT:?} of the leave: gates {open:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(published_up);
    for i in [1, 2] {
        assert_eq!(
            seen_by(&cluster, i),
            Some((MemberStatus::Leaving, true)),
            "node {i} after the late publish"
        );
        assert_eq!(cluster.nodes[i].active(&rule).as_deref(), Some(&*b));
    }
    let active = registry.check(Tag::Active).await;
    assert_eq!(active.status, HealthStatus::Unhealthy, "{active:?}");
    let handed_over = handed_over.unwrap();
    println!(
        "leave ({samples} samples): node 1 active {} ms after the leave, node 0 not ready for {} ms, never two active",
        ms(handed_over),
        ms(left.elapsed())
    );

    // Join again, a new incarnation on the same address (its old gossip
    // stopped first): one call.
    let first = cluster.nodes[0].id.clone();
    cluster.nodes[0].kill(&cluster.lan).await;
    let again = Node::start(&cluster.lan, 0, first.generation_id + 10, &[]).await;
    assert_eq!(again.address(), a);
    view.rejoin(again.dyn_view());
    assert!(!dyn_view.has_left(), "the new incarnation has not left");
    cluster.nodes[0] = again;
    cluster.converge(&[0, 1, 2], FORM).await;
    until_healthy(&registry).await;
    // The new incarnation is the youngest: a standby naming node 1.
    agree(&cluster, &[0, 1, 2], &rule, &b, FORM).await;
    let active = registry.check(Tag::Active).await;
    assert_eq!(active.status, HealthStatus::Unhealthy, "{active:?}");
    assert_eq!(
        active.entries[0]
            .data
            .as_deref()
            .and_then(|d| d.get("activeNode")),
        Some(&json!(b)),
        "{active:?}"
    );
    assert!(!gate.is_active_node());
}

/// A deliberate hand-over (the operator's step-down, `cluster::StepDown`)
/// on three real chitchat nodes, under the default guard and the view's
/// hand-over: the active node's gate closes at once; the next-oldest takes
/// the role only after the margin; the stepped-down node does not take it
/// back during its TTL; after the TTL it does, the other standing down
/// first. At every sample at most one gate is open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_down_hands_the_role_over_and_back_without_two_active_nodes() {
    let cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], FORM).await;
    let timing = cluster.nodes[0]
        .view
        .handover()
        .expect("the view states its hand-over");
    let rule = ClusterActiveNode::unscoped()
        .expected_size(3)
        .handover(timing);
    let a = cluster.nodes[0].address();
    agree(&cluster, &[0, 1, 2], &rule, &a, FORM).await;
    let margin = timing.margin().expect("a lease hand-over has a margin");
    let ttl = margin * 3;

    let step_down = zb_health::cluster::StepDown::new(cluster.nodes[0].dyn_view());
    let started = Instant::now();
    let window = step_down
        .begin("kernel patch", ttl)
        .expect("a chitchat view can step down");
    assert_eq!(&*window.reason, "kernel patch");
    assert_eq!(step_down.current(), Some(window));
    assert!(
        !gate(&cluster.nodes[0], &rule),
        "the stepped-down node's gate closes at once"
    );

    let (mut handed_over, mut back, mut samples) = (None, None, 0u32);
    loop {
        samples += 1;
        let open = gates(&cluster, &rule);
        let now = started.elapsed();
        assert!(
            open.iter().filter(|&&g| g).count() <= 1,
            "{} ms after the step-down, gates {open:?}: two nodes active",
            ms(now)
        );
        if now < ttl {
            assert!(
                !open[0],
                "{} ms: the node took the role back within its TTL",
                ms(now)
            );
        }
        if handed_over.is_none() && open == [false, true, false] {
            handed_over = Some(now);
        }
        if handed_over.is_some() && back.is_none() && open == [true, false, false] {
            back = Some(now);
        }
        if back.is_some_and(|b| now > b + HOLD) {
            break;
        }
        assert!(
            now < ttl + DETECT,
            "no hand-over and back within {:?}: {open:?}",
            ttl + DETECT
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (handed_over, back) = (handed_over.unwrap(), back.unwrap());
    assert!(
        handed_over >= margin,
        "the successor took over {} ms after the step-down, before the margin",
        ms(handed_over)
    );
    assert!(back >= ttl, "the node took the role back before its TTL");
    assert_eq!(step_down.current(), None, "the window ended at its TTL");
    println!(
        "step-down ({samples} samples): handed over after {} ms (margin {} ms), back after {} ms (TTL {} ms), never two active",
        ms(handed_over),
        ms(margin),
        ms(back),
        ms(ttl),
    );
}

/// `zb_health_cluster_members_up`: each node's view sets how many members
/// it sees `Up` and reachable, itself included: 3 once three nodes have
/// converged, 2 after one crashes and the other two write it off. (The
/// three views of this process share the one gauge; each sets it on a
/// change.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_members_up_gauge_follows_what_the_view_sees() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder
        .install()
        .expect("the only recorder of this test binary");
    let members_up = move || {
        snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .find(|(key, ..)| key.key().name() == zb_health::observe::CLUSTER_MEMBERS_UP)
            .and_then(|(_, _, _, value)| match value {
                DebugValue::Gauge(v) => Some(v.into_inner()),
                _ => None,
            })
    };
    let mut cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], Duration::from_secs(20)).await;
    let mut last = None;
    eventually("the gauge to read 3", Duration::from_secs(20), || {
        last = members_up().or(last);
        (last == Some(3.0)).then_some(())
    })
    .await;
    cluster.nodes[2].kill(&cluster.lan).await;
    eventually("the gauge to read 2", Duration::from_secs(20), || {
        last = members_up().or(last);
        (last == Some(2.0)).then_some(())
    })
    .await;
}
