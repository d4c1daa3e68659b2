//! Unit tests of the chitchat view: members, hearings and pauses, the
//! hand-over its timing supports, the join wait and the frozen snapshot.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ::chitchat::{
    Chitchat, ChitchatConfig, ChitchatId, DeletionStatus, FailureDetectorConfig, ProtocolVersion,
    VersionedValue,
};
use tokio::sync::{Mutex, oneshot, watch};
use tokio::time::Instant;

use super::hearing::Heartbeats;
use super::{
    ChitchatClusterView, ChitchatViewConfig, ROLES_KEY, STATUS_KEY, cluster_state,
    member_key_values,
};
use crate::cluster::handover::Handover;
use crate::cluster::view::{ClusterState, ClusterView, Member, MemberStatus};

fn id(name: &str, generation: u64, port: u16) -> ChitchatId {
    ChitchatId::new(name, generation, SocketAddr::from(([127, 0, 0, 1], port)))
}

fn chitchat(own: ChitchatId, seeds: &[u16]) -> Chitchat {
    let seeds: HashSet<SocketAddr> = seeds
        .iter()
        .map(|p| SocketAddr::from(([127, 0, 0, 1], *p)))
        .collect();
    let (_tx, rx) = watch::channel(seeds);
    let config = ChitchatConfig {
        listen_addr: own.gossip_advertise_addr,
        chitchat_id: own,
        cluster_id: "unit".into(),
        gossip_interval: Duration::from_millis(100),
        seed_nodes: Vec::new(),
        failure_detector_config: FailureDetectorConfig::default(),
        marked_for_deletion_grace_period: Duration::from_secs(60),
        catchup_callback: None,
        extra_liveness_predicate: None,
        protocol_version: ProtocolVersion::V0,
    };
    Chitchat::with_chitchat_id_and_seeds(
        config,
        rx,
        member_key_values(MemberStatus::Up, ["admin", "driver"]),
    )
}

/// Adds a peer's state the way a catch-up would (it is not live: the
/// failure detector has heard no heartbeat from it).
fn add_peer(c: &mut Chitchat, peer: &ChitchatId, kvs: &[(&str, &str)]) {
    let kvs: Vec<(String, VersionedValue)> = kvs
        .iter()
        .enumerate()
        .map(|(i, (k, v))| {
            (
                (*k).to_owned(),
                VersionedValue {
                    value: (*v).to_owned(),
                    version: i as u64 + 1,
                    status: DeletionStatus::Set,
                },
            )
        })
        .collect();
    let max = kvs.len() as u64;
    c.reset_node_state_if_update(peer, kvs.into_iter(), max, 0);
}

#[test]
fn the_views_hand_over_covers_twice_its_hearing_delay() {
    let default = ChitchatViewConfig::default();
    // A beat (250 ms), a 1 s gossip round and a 500 ms refresh.
    assert_eq!(default.hearing_delay(), Duration::from_millis(1_750));
    let handover = default.handover();
    assert_eq!(handover.lease_duration(), Some(default.lease));
    assert_eq!(handover.slack(), Duration::from_millis(3_500));
    // The examples' 200 ms gossip and refresh: a 3.3 s margin.
    let examples = ChitchatViewConfig {
        refresh: Duration::from_millis(200),
        gossip_interval: Duration::from_millis(200),
        ..default
    };
    assert_eq!(
        examples.handover().margin(),
        Some(Duration::from_millis(3_300))
    );
}

/// Three members, self `a` and peers `b`, `c`, every one reachable
/// and `Up` (what the detector says; the hearings are noted apart).
fn three_up() -> ClusterState {
    let member =
        |port: u16, age: u64| Member::new(format!("127.0.0.1:{port}"), MemberStatus::Up, age);
    ClusterState {
        self_address: "127.0.0.1:7001".into(),
        members: vec![member(7001, 1), member(7002, 2), member(7003, 3)],
    }
}

/// Notes `marks` of `b` and `c` at `at` (both live) and returns how
/// many members count towards a majority under the default hand-over.
fn counted(h: &mut Heartbeats, marks: [u64; 2], at: std::time::Instant) -> u32 {
    let (b, c) = (id("b", 2, 7002), id("c", 3, 7003));
    let live: HashSet<ChitchatId> = [b.clone(), c.clone()].into();
    let mut state = three_up();
    let handover = Handover::DEFAULT;
    let lease = handover.lease_duration().unwrap();
    h.note_marks(
        vec![(b, marks[0]), (c, marks[1])],
        &live,
        &mut state,
        at,
        lease,
    );
    state.heard_count(lease, handover.slack(), at)
}

/// Notes every 500 ms from `from` to `to` (ms after `t0`), `b`'s mark
/// advancing only while `b_heard`, `c`'s always; returns the count at
/// `to`.
fn hear(h: &mut Heartbeats, t0: std::time::Instant, from: u64, to: u64, b_heard: bool) -> u32 {
    let mut n = 0;
    let mut at = from;
    while at <= to {
        let b = if b_heard { at } else { 0 };
        n = counted(h, [b, at], t0 + Duration::from_millis(at));
        at += 500;
    }
    n
}

#[test]
fn a_pause_longer_than_the_lease_restarts_every_peers_stretch() {
    let t0 = std::time::Instant::now();
    let mut h = Heartbeats::default();
    // Heard every 500 ms for 4 s: both peers count (3 of 3).
    assert_eq!(hear(&mut h, t0, 0, 4_000, true), 3);
    // Frozen for 8 s; at the resume the queued gossip has advanced
    // both marks, as if just heard. A peer counts again only after the
    // slack (3 s) of hearing: the node is a minority of one until then.
    assert_eq!(hear(&mut h, t0, 12_000, 12_000, true), 1);
    assert_eq!(hear(&mut h, t0, 12_500, 14_500, true), 1);
    assert_eq!(hear(&mut h, t0, 15_000, 15_000, true), 3);
    // A gap just under the lease is no pause.
    assert_eq!(hear(&mut h, t0, 16_900, 16_900, true), 3);
}

#[test]
fn a_peer_whose_state_stops_advancing_is_not_heard_though_the_detector_holds_it_live() {
    let t0 = std::time::Instant::now();
    let mut h = Heartbeats::default();
    assert_eq!(hear(&mut h, t0, 0, 4_000, true), 3);
    // From 4 s on `b`'s state no longer reaches us (one-way loss; its
    // heartbeat still does, in digests, so the detector holds it
    // live): after the lease it no longer counts.
    assert_eq!(hear(&mut h, t0, 4_500, 5_500, false), 3);
    assert_eq!(hear(&mut h, t0, 6_000, 6_000, false), 2);
    // Healed at 7 s: it counts again only after the slack of hearing.
    assert_eq!(hear(&mut h, t0, 7_000, 9_500, true), 2);
    assert_eq!(hear(&mut h, t0, 10_000, 10_000, true), 3);
}

#[test]
fn members_carry_generation_status_roles_and_liveness() {
    let own = id("a", 20, 7001);
    let mut c = chitchat(own.clone(), &[]);
    add_peer(
        &mut c,
        &id("b", 10, 7002),
        &[(STATUS_KEY, "leaving"), (ROLES_KEY, " driver ,, x")],
    );
    add_peer(&mut c, &id("c", 30, 7003), &[("app.key", "1")]);
    let state = cluster_state(&c);
    assert_eq!(state.self_address, "127.0.0.1:7001");
    let me = state.self_member().unwrap();
    assert_eq!(
        (me.status, me.age, me.reachable),
        (MemberStatus::Up, 20, true)
    );
    assert_eq!(me.roles, ["admin", "driver"]);
    let b = &state.members[1];
    assert_eq!(
        (b.address.as_str(), b.status, b.age, b.reachable),
        ("127.0.0.1:7002", MemberStatus::Leaving, 10, false)
    );
    assert_eq!(b.roles, ["driver", "x"]);
    let c3 = &state.members[2];
    assert_eq!(
        (c3.status, c3.roles.len()),
        (MemberStatus::Joining, 0),
        "no status key reads as Joining"
    );
}

#[test]
fn a_restarted_node_replaces_its_former_incarnation() {
    let own = id("a", 50, 7001);
    let mut c = chitchat(own, &[]);
    add_peer(&mut c, &id("b", 10, 7002), &[(STATUS_KEY, "up")]);
    add_peer(&mut c, &id("b", 40, 7002), &[(STATUS_KEY, "up")]);
    // A stale, higher-generation claim on our own address never hides self.
    add_peer(&mut c, &id("a", 90, 7001), &[(STATUS_KEY, "down")]);
    let state = cluster_state(&c);
    let ages: Vec<(&str, u64)> = state
        .members
        .iter()
        .map(|m| (m.address.as_str(), m.age))
        .collect();
    assert_eq!(ages, [("127.0.0.1:7001", 50), ("127.0.0.1:7002", 40)]);
    assert_eq!(state.self_member().unwrap().status, MemberStatus::Up);
}

#[tokio::test]
async fn no_state_until_the_seeds_are_live_and_removed_after_gossip_stops() {
    let own = id("a", 1, 7001);
    let c = Arc::new(Mutex::new(chitchat(own, &[7001, 7002])));
    let config = ChitchatViewConfig {
        refresh: Duration::from_millis(10),
        join_timeout: Duration::from_secs(3600),
        ..ChitchatViewConfig::default()
    };
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let view = ChitchatClusterView::start(
        c.clone(),
        config,
        Some(Box::pin(async move {
            let _ = stop_rx.await;
        })),
    );
    // A rebuild of our own (the task's first one may not have run yet)
    // decides the same way the task would: no state while a seed is down.
    view.refresh().await;
    assert_eq!(view.state(), None, "seed 7002 is not live yet");

    // A lone node (no other seed) has joined at once.
    let lone = ChitchatClusterView::spawn(
        Arc::new(Mutex::new(chitchat(id("z", 1, 7009), &[7009]))),
        config,
    );
    lone.refresh().await;
    assert_eq!(lone.state().unwrap().members.len(), 1);

    drop(stop_tx);
    // The background task freezes the final snapshot: wait for it with
    // a deadline rather than for a fixed time.
    let deadline = Instant::now() + Duration::from_secs(10);
    let state = loop {
        if let Some(state) = view.state() {
            break state;
        }
        assert!(
            Instant::now() < deadline,
            "no final snapshot 10 s after gossip stopped"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert_eq!(state.self_member().unwrap().status, MemberStatus::Removed);
    view.publish(MemberStatus::Up, ["admin"]).await;
    assert_eq!(
        view.state().unwrap().self_member().unwrap().status,
        MemberStatus::Removed,
        "frozen"
    );
}

#[tokio::test]
async fn state_does_not_wait_for_the_chitchat_lock() {
    let c = Arc::new(Mutex::new(chitchat(id("a", 1, 7001), &[])));
    let view = ChitchatClusterView::spawn(c.clone(), ChitchatViewConfig::default());
    view.refresh().await;
    let _held = c.lock().await;
    assert!(view.state().is_some());
}
