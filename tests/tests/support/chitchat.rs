//! Real chitchat nodes on loopback UDP, wired through a switch the test can
//! cut: the harness of `cluster_chitchat.rs`, which includes this file by
//! `#[path]` (it is not part of `support`, so the other test binaries do not
//! build chitchat).
//!
//! Every node gossips with chitchat's own `UdpTransport`, unmodified. Its
//! **advertised** address is a front socket of the [`Lan`]; the node itself
//! listens on a private port behind it. A datagram from node `x` to node
//! `i`'s front is relayed to `i` through a relay socket kept per `(x, i)`,
//! and `i`'s replies to that relay go back to `x`. Each relay hop asks the
//! switch whether `x` and `i` are in the same group, so a partition is one
//! call, both ways, and healing is another. The advertised address is
//! stable across restarts (the listen port may change), as a real node's
//! host:port is.

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chitchat::transport::UdpTransport;
use chitchat::{
    ChitchatConfig, ChitchatHandle, ChitchatId, FailureDetectorConfig, ProtocolVersion,
    spawn_chitchat,
};
use tokio::net::UdpSocket;
use tokio::task::JoinHandle;
use zb_health::cluster::chitchat::{ChitchatClusterView, ChitchatViewConfig, member_key_values};
use zb_health::cluster::{ClusterActiveNode, ClusterView, MemberStatus};

/// Gossip round: fast enough for a test, slow enough for a loaded 2-core box.
pub const GOSSIP_INTERVAL: Duration = Duration::from_millis(100);

/// The phi-accrual detector's threshold: a peer is written off after
/// `PHI_THRESHOLD` mean heartbeat intervals of silence.
pub const PHI_THRESHOLD: f64 = 16.0;

/// The failure detector of every test node: small windows so detection
/// takes about a second, and a grace period longer than any test so a dead
/// node stays an expected peer.
pub fn failure_detector() -> FailureDetectorConfig {
    FailureDetectorConfig {
        phi_threshold: PHI_THRESHOLD,
        sampling_window_size: 64,
        max_interval: Duration::from_secs(2),
        initial_interval: GOSSIP_INTERVAL,
        dead_node_grace_period: Duration::from_secs(300),
    }
}

/// The view settings of every test node.
pub fn view_config() -> ChitchatViewConfig {
    ChitchatViewConfig {
        refresh: Duration::from_millis(200),
        gossip_interval: GOSSIP_INTERVAL,
        join_timeout: Duration::from_secs(20),
        ..ChitchatViewConfig::default()
    }
}

#[derive(Clone, Copy)]
struct Port {
    /// Where the node behind this front listens now; `None` while down.
    listen: Option<SocketAddr>,
    /// Nodes talk only within a group.
    group: u32,
}

struct Switch {
    ports: Mutex<Vec<Port>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl Switch {
    fn ports(&self) -> std::sync::MutexGuard<'_, Vec<Port>> {
        self.ports.lock().unwrap()
    }

    /// The node listening on `addr`.
    fn node_of(&self, addr: SocketAddr) -> Option<usize> {
        self.ports().iter().position(|p| p.listen == Some(addr))
    }

    /// Where a datagram from node `from` to node `to` goes, if the link is up.
    fn route(&self, from: usize, to: usize) -> Option<SocketAddr> {
        let ports = self.ports();
        let (a, b) = (ports[from], ports[to]);
        (a.listen.is_some() && a.group == b.group)
            .then_some(b.listen)
            .flatten()
    }

    fn keep(&self, task: JoinHandle<()>) {
        self.tasks.lock().unwrap().push(task);
    }
}

/// A loopback network of `n` node addresses with cuttable links.
pub struct Lan {
    switch: Arc<Switch>,
    fronts: Vec<SocketAddr>,
}

impl Drop for Lan {
    fn drop(&mut self) {
        for task in self.switch.tasks.lock().unwrap().drain(..) {
            task.abort();
        }
    }
}

impl Lan {
    /// `n` front addresses on 127.0.0.1, indexed in **byte order** of their
    /// `ip:port` strings: index 0 has the lowest address, which is the one
    /// an address-ordered "leader" would pick.
    pub async fn new(n: usize) -> Lan {
        let mut sockets = Vec::new();
        for _ in 0..n {
            sockets.push(UdpSocket::bind("127.0.0.1:0").await.unwrap());
        }
        sockets.sort_by_cached_key(|s| s.local_addr().unwrap().to_string().into_bytes());
        let fronts: Vec<SocketAddr> = sockets.iter().map(|s| s.local_addr().unwrap()).collect();
        let switch = Arc::new(Switch {
            ports: Mutex::new(vec![
                Port {
                    listen: None,
                    group: 0
                };
                n
            ]),
            tasks: Mutex::new(Vec::new()),
        });
        for (i, socket) in sockets.into_iter().enumerate() {
            switch.keep(tokio::spawn(front(switch.clone(), i, socket)));
        }
        Lan { switch, fronts }
    }

    /// Node `i`'s advertised (gossip) address.
    pub fn advertise(&self, i: usize) -> SocketAddr {
        self.fronts[i]
    }

    /// Every advertised address: the seed list of every node.
    pub fn seeds(&self) -> Vec<String> {
        self.fronts.iter().map(ToString::to_string).collect()
    }

    fn plug(&self, i: usize, listen: Option<SocketAddr>) {
        self.switch.ports()[i].listen = listen;
    }

    /// Splits the network: node `i` talks only to nodes of its group.
    pub fn partition(&self, groups: &[&[usize]]) {
        let mut ports = self.switch.ports();
        for (g, members) in groups.iter().enumerate() {
            for &i in *members {
                ports[i].group = g as u32;
            }
        }
    }

    /// Reconnects everyone.
    pub fn heal(&self) {
        for p in self.switch.ports().iter_mut() {
            p.group = 0;
        }
    }
}

/// Node `i`'s advertised socket: relays each sender's datagrams through the
/// relay socket of that (sender, `i`) pair.
async fn front(switch: Arc<Switch>, i: usize, socket: UdpSocket) {
    let mut relays: HashMap<usize, Arc<UdpSocket>> = HashMap::new();
    let mut buf = vec![0u8; 65_536];
    loop {
        let Ok((n, src)) = socket.recv_from(&mut buf).await else {
            tokio::time::sleep(Duration::from_millis(1)).await;
            continue;
        };
        let Some(x) = switch.node_of(src) else {
            continue;
        };
        let relay = match relays.get(&x) {
            Some(r) => r.clone(),
            None => {
                let r = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
                switch.keep(tokio::spawn(relay(switch.clone(), x, i, r.clone())));
                relays.insert(x, r.clone());
                r
            }
        };
        if let Some(to) = switch.route(x, i) {
            let _ = relay.send_to(&buf[..n], to).await;
        }
    }
}

/// The (x, i) relay: `i`'s answers go to `x`, `x`'s follow-ups to `i`.
async fn relay(switch: Arc<Switch>, x: usize, i: usize, socket: Arc<UdpSocket>) {
    let mut buf = vec![0u8; 65_536];
    loop {
        let Ok((n, src)) = socket.recv_from(&mut buf).await else {
            tokio::time::sleep(Duration::from_millis(1)).await;
            continue;
        };
        let hop = match switch.node_of(src) {
            Some(s) if s == i => switch.route(i, x),
            Some(s) if s == x => switch.route(x, i),
            _ => None,
        };
        if let Some(to) = hop {
            let _ = socket.send_to(&buf[..n], to).await;
        }
    }
}

/// One running node: its chitchat server and the view the probes read.
pub struct Node {
    pub index: usize,
    pub id: ChitchatId,
    pub roles: Vec<String>,
    pub view: Arc<ChitchatClusterView>,
    handle: Option<ChitchatHandle>,
}

impl Node {
    /// Starts node `index` of `lan` with `generation` (its age: smaller is
    /// older) and `roles`, announced `Up` from its first gossip round.
    pub async fn start(lan: &Lan, index: usize, generation: u64, roles: &[&str]) -> Node {
        Self::start_with(lan, index, generation, roles, view_config()).await
    }

    /// [`start`](Self::start) with its own view settings, e.g. a shorter
    /// join wait.
    pub async fn start_with(
        lan: &Lan,
        index: usize,
        generation: u64,
        roles: &[&str],
        view_config: ChitchatViewConfig,
    ) -> Node {
        let id = ChitchatId::new(format!("node-{index}"), generation, lan.advertise(index));
        for _ in 0..20 {
            // chitchat binds the port itself, so find a free one first.
            let listen = std::net::UdpSocket::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap();
            lan.plug(index, Some(listen));
            let config = ChitchatConfig {
                chitchat_id: id.clone(),
                cluster_id: "zb-health-tests".into(),
                gossip_interval: GOSSIP_INTERVAL,
                listen_addr: listen,
                seed_nodes: lan.seeds(),
                failure_detector_config: failure_detector(),
                marked_for_deletion_grace_period: Duration::from_secs(3600),
                catchup_callback: None,
                extra_liveness_predicate: None,
                protocol_version: ProtocolVersion::V0,
            };
            let initial = member_key_values(MemberStatus::Up, roles);
            if let Ok(handle) = spawn_chitchat(config, initial, &UdpTransport).await {
                let view = ChitchatClusterView::for_handle(&handle, view_config);
                let roles = roles.iter().map(|r| (*r).to_owned()).collect();
                return Node {
                    index,
                    id,
                    roles,
                    view,
                    handle: Some(handle),
                };
            }
            lan.plug(index, None);
        }
        panic!("no free UDP port for node {index}");
    }

    /// The address the cluster knows it by.
    pub fn address(&self) -> String {
        self.id.gossip_advertise_addr.to_string()
    }

    /// The view, as the probes and the gate take it.
    pub fn dyn_view(&self) -> Arc<dyn ClusterView> {
        self.view.clone()
    }

    /// Stops the node's gossip, as a crash would: no goodbye to the peers.
    pub async fn kill(&mut self, lan: &Lan) {
        if let Some(handle) = self.handle.take() {
            handle.shutdown().await.unwrap();
        }
        lan.plug(self.index, None);
    }

    /// chitchat's current adaptive failure-detection timeout for `peer`.
    pub async fn detection_timeout(&self, peer: &ChitchatId) -> Option<Duration> {
        self.view
            .chitchat()
            .lock()
            .await
            .failure_detection_timeout(peer)
    }

    /// Waits until this node's failure detector has sampled `peer`'s
    /// heartbeat intervals (it needs two heartbeats before it can time the
    /// peer out), for at most `deadline`; returns the adaptive timeout.
    pub async fn learned_heartbeat(&self, peer: &ChitchatId, deadline: Duration) -> Duration {
        let start = Instant::now();
        loop {
            if let Some(timeout) = self.detection_timeout(peer).await {
                return timeout;
            }
            assert!(
                start.elapsed() < deadline,
                "node {} learned no heartbeat of {peer:?} in {deadline:?}",
                self.index
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The active node by `rule` in this node's view, if it has one.
    pub fn active(&self, rule: &ClusterActiveNode) -> Option<String> {
        let state = self.view.state()?;
        rule.decide(&state).active_node().map(str::to_owned)
    }

    /// Whether this node sees exactly `expected` (address, age) members, all
    /// reachable and `Up`.
    pub fn sees_all_up(&self, expected: &[(String, u64)]) -> bool {
        let Some(state) = self.view.state() else {
            return false;
        };
        let mut seen: Vec<(String, u64)> = state
            .members
            .iter()
            .filter(|m| m.reachable && m.status == MemberStatus::Up)
            .map(|m| (m.address.clone(), m.age))
            .collect();
        seen.sort();
        let mut expected = expected.to_vec();
        expected.sort();
        state.members.len() == expected.len() && seen == expected
    }

    /// Whether this node's detector has written off every node in `peers`.
    pub fn sees_unreachable(&self, peers: &[&str]) -> bool {
        let Some(state) = self.view.state() else {
            return false;
        };
        peers.iter().all(|p| {
            state
                .members
                .iter()
                .any(|m| m.address == *p && !m.reachable)
        })
    }
}

/// A cluster of nodes on one [`Lan`].
pub struct Cluster {
    pub lan: Lan,
    pub nodes: Vec<Node>,
}

impl Cluster {
    /// One node per `(generation, roles)`, node `i` on the `i`-th lowest
    /// address, started together.
    pub async fn start(specs: &[(u64, &[&str])]) -> Cluster {
        let lan = Lan::new(specs.len()).await;
        let mut nodes = Vec::new();
        for (i, (generation, roles)) in specs.iter().enumerate() {
            nodes.push(Node::start(&lan, i, *generation, roles).await);
        }
        Cluster { lan, nodes }
    }

    /// `n` role-less nodes, node `i` with generation `i + 1`: node 0 is
    /// both the oldest and the lowest address.
    pub async fn unscoped(n: usize) -> Cluster {
        let specs: Vec<(u64, &[&str])> = (0..n).map(|i| (i as u64 + 1, &[][..])).collect();
        Self::start(&specs).await
    }

    /// (address, age) of the nodes in `indexes`.
    pub fn members(&self, indexes: &[usize]) -> Vec<(String, u64)> {
        indexes
            .iter()
            .map(|&i| (self.nodes[i].address(), self.nodes[i].id.generation_id))
            .collect()
    }

    /// Waits until every node in `indexes` sees exactly those nodes, all
    /// reachable and `Up`.
    pub async fn converge(&self, indexes: &[usize], deadline: Duration) -> Duration {
        let expected = self.members(indexes);
        eventually("the cluster to converge", deadline, || {
            indexes
                .iter()
                .all(|&i| self.nodes[i].sees_all_up(&expected))
                .then_some(())
        })
        .await
        .1
    }
}

impl Cluster {
    /// How long after `since` each node first saw `next` as the active
    /// node under `rule`, in node order; every node is polled together so
    /// each time is its own. Panics after `deadline`.
    pub async fn until_active_everywhere(
        &self,
        rule: &ClusterActiveNode,
        next: &str,
        since: Instant,
        deadline: Duration,
    ) -> Vec<Duration> {
        let mut per_node: Vec<Option<Duration>> = vec![None; self.nodes.len()];
        while per_node.iter().any(Option::is_none) {
            for (node, seen) in self.nodes.iter().zip(&mut per_node) {
                if seen.is_none() && node.active(rule).as_deref() == Some(next) {
                    *seen = Some(since.elapsed());
                }
            }
            assert!(
                since.elapsed() < deadline,
                "{next} not active everywhere after {deadline:?}: {per_node:?}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        per_node.into_iter().flatten().collect()
    }
}

/// Polls `check` every 5 ms until it answers `Some`, for at most
/// `deadline`; returns the answer and how long it took.
pub async fn eventually<T>(
    what: &str,
    deadline: Duration,
    mut check: impl FnMut() -> Option<T>,
) -> (T, Duration) {
    let start = Instant::now();
    loop {
        if let Some(value) = check() {
            return (value, start.elapsed());
        }
        assert!(
            start.elapsed() < deadline,
            "timed out after {deadline:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A sampling loop's end: "until a condition holds, then for `hold` more",
/// with a deadline on the condition. Tests sample an invariant every round
/// and stop once a verdict has been reached and has held, so a flicker
/// right after it would be caught.
pub struct Settle {
    what: String,
    start: Instant,
    deadline: Duration,
    hold: Duration,
    reached: Option<Duration>,
}

impl Settle {
    /// Starts the clock now.
    pub fn new(what: impl Into<String>, deadline: Duration, hold: Duration) -> Settle {
        Settle {
            what: what.into(),
            start: Instant::now(),
            deadline,
            hold,
            reached: None,
        }
    }

    /// Time since [`new`](Self::new).
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Records this round's `condition`; `true` once it has held for
    /// `hold` since it was first seen. Panics when it is not seen within
    /// the deadline.
    pub fn done(&mut self, condition: bool) -> bool {
        let now = self.start.elapsed();
        match self.reached {
            None if condition => self.reached = Some(now),
            None => assert!(
                now < self.deadline,
                "timed out after {:?} waiting for {}",
                self.deadline,
                self.what
            ),
            Some(at) => return now > at + self.hold,
        }
        false
    }

    /// When the condition was first seen, measured from [`new`](Self::new).
    pub fn reached(&self) -> Option<Duration> {
        self.reached
    }
}
