//! A real chitchat node on UDP 127.0.0.1 and the view the cluster probes
//! and the active-node gate read.
//!
//! A node announces itself `Joining` and turns `Up` when the service calls
//! [`ClusterNode::up`] after its warm-up, so a node that is still starting
//! never becomes the active one. Its age is its start time in Unix
//! milliseconds: the first node started is the oldest, the active one under
//! an unscoped rule (ZB-2.3).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chitchat::transport::UdpTransport;
use chitchat::{
    ChitchatConfig, ChitchatHandle, ChitchatId, FailureDetectorConfig, ProtocolVersion,
    spawn_chitchat,
};
use zb_health::cluster::chitchat::{ChitchatClusterView, ChitchatViewConfig, member_key_values};
use zb_health::cluster::{ClusterView, MemberStatus};
use zb_health::prelude::HealthRegistry;

use crate::settings::ClusterSettings;

/// One gossip round every 200 ms: a peer's change is seen in well under a
/// second on a LAN or loopback.
pub const GOSSIP_INTERVAL: Duration = Duration::from_millis(200);

/// The failure detector of the examples: a silent peer is written off after
/// about `phi_threshold` mean heartbeat intervals, a couple of seconds here
/// (chitchat's defaults, tuned for large clusters, take much longer). A
/// dead node stays known (unreachable, so an expected peer) for an hour.
pub fn failure_detector() -> FailureDetectorConfig {
    FailureDetectorConfig {
        phi_threshold: 8.0,
        sampling_window_size: 100,
        max_interval: Duration::from_secs(2),
        initial_interval: GOSSIP_INTERVAL,
        dead_node_grace_period: Duration::from_secs(3600),
    }
}

/// How the view keeps its snapshot: rebuilt at least every 200 ms; a
/// booting node waits up to 5 s for all its seeds before it decides it is
/// alone (Akka's `seed-node-timeout`). It knows the gossip interval, so its
/// hand-over (`ChitchatViewConfig::handover`) is a 2 s lease and a 1.3 s
/// slack: a cut-off active node is replaced after about 3.3 s.
pub fn view_config() -> ChitchatViewConfig {
    ChitchatViewConfig {
        refresh: Duration::from_millis(200),
        gossip_interval: GOSSIP_INTERVAL,
        join_timeout: Duration::from_secs(5),
        ..ChitchatViewConfig::default()
    }
}

/// A running chitchat node. Keep it alive as long as the service runs:
/// dropping the last clone stops gossip. Clones share the node, e.g. one
/// for the warm-up task that calls [`up`](Self::up).
#[derive(Clone)]
pub struct ClusterNode {
    view: Arc<ChitchatClusterView>,
    roles: Vec<String>,
    address: String,
    generation: u64,
    /// Dropping the last handle ends the chitchat server.
    _handle: Arc<ChitchatHandle>,
}

impl std::fmt::Debug for ClusterNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterNode")
            .field("address", &self.address)
            .field("generation", &self.generation)
            .field("roles", &self.roles)
            .finish_non_exhaustive()
    }
}

impl ClusterNode {
    /// Starts gossip on `settings.addr`, announced `Joining` with its roles.
    /// Call it inside a Tokio runtime (actix's `main` is one).
    ///
    /// # Errors
    ///
    /// The UDP address cannot be bound.
    pub async fn start(settings: &ClusterSettings) -> std::io::Result<Self> {
        let generation = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let id = ChitchatId::new(settings.node_id.clone(), generation, settings.addr);
        let config = ChitchatConfig {
            chitchat_id: id,
            cluster_id: settings.cluster_id.clone(),
            gossip_interval: GOSSIP_INTERVAL,
            listen_addr: settings.addr,
            seed_nodes: settings.seeds.clone(),
            failure_detector_config: failure_detector(),
            marked_for_deletion_grace_period: Duration::from_secs(3600),
            catchup_callback: None,
            extra_liveness_predicate: None,
            protocol_version: ProtocolVersion::V0,
        };
        let initial = member_key_values(MemberStatus::Joining, &settings.roles);
        let handle = spawn_chitchat(config, initial, &UdpTransport)
            .await
            .map_err(|e| std::io::Error::other(format!("gossip on {}: {e}", settings.addr)))?;
        let view = ChitchatClusterView::for_handle(&handle, view_config());
        Ok(Self {
            view,
            roles: settings.roles.clone(),
            address: settings.addr.to_string(),
            generation,
            _handle: Arc::new(handle),
        })
    }

    /// The view, as the generated `HealthDeps::cluster_view` and
    /// `Health::active_node_gate` take it.
    pub fn view(&self) -> Arc<dyn ClusterView> {
        self.view.clone()
    }

    /// The chitchat view itself.
    pub fn chitchat_view(&self) -> &Arc<ChitchatClusterView> {
        &self.view
    }

    /// Announces `Up`: call it once the service is warm.
    pub async fn up(&self) {
        self.view.publish(MemberStatus::Up, &self.roles).await;
    }

    /// Makes the registry's drain leave the cluster (gossip `Leaving`), so
    /// the next-oldest node takes the active role without waiting for
    /// failure detection.
    pub fn leave_on_drain(&self, registry: &HealthRegistry) {
        zb_health::cluster::chitchat::leave_cluster_on_drain(registry, self.view.clone());
    }

    /// This node's gossip address, as peers know it.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// This node's age (its start time in Unix ms): smaller is older.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}
