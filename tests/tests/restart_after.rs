//! A restart only when the failure is this pod's own (`restart_after`,
//! R27), over **real** chitchat nodes gossiping on loopback UDP, each
//! node's `/healthz` served over a real socket.
//!
//! Every node runs the same shared probe, a switch the test flips per
//! node: one node failing alone is that pod's own failure, every node
//! failing is an outage. A restart is `live` answering 503 with a
//! `restart` entry; the test "restarts" a pod by crashing its node.

#[path = "support/chitchat.rs"]
mod lan;
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use lan::Cluster;
use support::{Server, request, serve};
use zb_health::prelude::{HealthRegistry, ProbeRegistration, ProbeResult, from_fn, map_zb_health};

/// Formation of a fresh cluster, on a loaded machine.
const FORM: Duration = Duration::from_secs(20);
/// The probes' `restart_after`: above the default detection time (4 s).
const RESTART_AFTER: Duration = Duration::from_secs(5);
/// A restart's whole way on a loaded machine: the failure reported and
/// gossiped, `restart_after`, the claim's settle time, a step.
const REQUESTED: Duration = Duration::from_secs(40);

/// One pod: its node's index, its dependency switch, its registry and its
/// tiers, served.
struct Pod {
    failing: Arc<AtomicBool>,
    registry: HealthRegistry,
    server: Server,
}

/// A pod on each node of `cluster`: the shared probe `database` with
/// `restart_after`, run in the background every second (as if a kubelet
/// asked), its verdicts gossiped through the node's view.
fn pods(cluster: &Cluster) -> Vec<Pod> {
    cluster
        .nodes
        .iter()
        .map(|node| {
            let failing = Arc::new(AtomicBool::new(false));
            let flag = failing.clone();
            let probe = from_fn(move || {
                let failing = flag.load(Ordering::Relaxed);
                async move {
                    Ok(if failing {
                        ProbeResult::unhealthy("connection refused")
                    } else {
                        ProbeResult::healthy()
                    })
                }
            });
            let registry = HealthRegistry::new();
            registry
                .add(
                    ProbeRegistration::new("database", probe)
                        .refresh(Duration::from_secs(1))
                        .shared()
                        .restart_after(RESTART_AFTER),
                )
                .unwrap();
            let verdicts = node.dyn_view().shared_verdicts();
            registry.set_shared_verdicts(verdicts.expect("a chitchat view carries verdicts"));
            let server = serve(map_zb_health(registry.clone()));
            Pod {
                failing,
                registry,
                server,
            }
        })
        .collect()
}

/// Which pods ask for a restart now.
fn requested(pods: &[Option<Pod>]) -> Vec<usize> {
    pods.iter()
        .enumerate()
        .filter(|(_, p)| p.as_ref().is_some_and(|p| p.registry.restart_requested()))
        .map(|(i, _)| i)
        .collect()
}

/// What [`watch`] waits for: a condition on the pods that ask.
type Until<'a> = dyn Fn(&[usize]) -> bool + 'a;

/// Samples every 50 ms for `period`, asserting at every sample that no
/// two pods ask for a restart at once and that `allowed` holds of the
/// pods that ask; returns when `until` holds of them (`None`: the whole
/// period).
async fn watch(
    pods: &[Option<Pod>],
    what: &str,
    period: Duration,
    allowed: impl Fn(&[usize]) -> bool,
    until: Option<&Until<'_>>,
) -> Duration {
    let start = Instant::now();
    loop {
        let now = requested(pods);
        assert!(now.len() <= 1, "{what}: two pods restart at once: {now:?}");
        assert!(allowed(&now), "{what}: pods {now:?} ask for a restart");
        if until.is_some_and(|until| until(&now)) {
            return start.elapsed();
        }
        if start.elapsed() >= period {
            assert!(until.is_none(), "{what}: not reached within {period:?}");
            return start.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `/healthz` of `pod`: its status and its `restart` entry's status and
/// description, if any.
async fn live(pod: &Pod) -> (u16, Option<(String, String)>) {
    let wire = request(pod.server.addr, "GET", "/healthz").await;
    let body = wire.json();
    let entry = &body["entries"]["restart"];
    let restart = entry.is_object().then(|| {
        let text = |k: &str| entry[k].as_str().unwrap_or_default().to_owned();
        (text("status"), text("description"))
    });
    (wire.status, restart)
}

/// Three nodes. The dependency fails on node 2 alone: after its
/// `restart_after` node 2's `/healthz` answers 503 with a `restart` entry
/// saying why, and nodes 0 and 1 never ask; when the dependency recovers
/// the request is withdrawn. Then it fails on every node (an outage): no
/// node asks for a restart, for three times the time a lone failure took.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_failure_restarts_only_its_pod_and_an_outage_restarts_none() {
    let cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], FORM).await;
    let pods: Vec<Option<Pod>> = pods(&cluster).into_iter().map(Some).collect();
    let pod = |i: usize| pods[i].as_ref().unwrap();
    for i in 0..3 {
        assert_eq!(live(pod(i)).await, (200, None), "node {i} before");
    }

    pod(2).failing.store(true, Ordering::Relaxed);
    let since = Instant::now();
    watch(
        &pods,
        "node 2 failing alone",
        REQUESTED,
        |now| now.iter().all(|&i| i == 2),
        Some(&|now: &[usize]| now == [2]),
    )
    .await;
    let took = since.elapsed();
    assert!(took >= RESTART_AFTER, "requested after {took:?}");
    let (code, restart) = live(pod(2)).await;
    let (status, description) = restart.expect("a restart entry on node 2");
    assert_eq!((code, status.as_str()), (503, "Unhealthy"));
    assert!(
        description.starts_with("database failing here for ")
            && description.ends_with(" while healthy on 2 of 2 peers"),
        "{description}"
    );
    for i in 0..2 {
        assert_eq!(live(pod(i)).await, (200, None), "node {i}");
    }
    println!("node 2 asked for a restart {took:?} after its failure began");

    // It recovers before the orchestrator acted: withdrawn.
    pod(2).failing.store(false, Ordering::Relaxed);
    watch(
        &pods,
        "node 2 recovered",
        REQUESTED,
        |now| now.iter().all(|&i| i == 2),
        Some(&|now: &[usize]| now.is_empty()),
    )
    .await;
    assert_eq!(live(pod(2)).await, (200, None));

    // An outage: every node fails it. Restarts would only add load.
    for i in 0..3 {
        pod(i).failing.store(true, Ordering::Relaxed);
    }
    watch(&pods, "an outage", took * 3, |now| now.is_empty(), None).await;
    for i in 0..3 {
        assert_eq!(live(pod(i)).await, (200, None), "node {i} in the outage");
        let ready = request(pod(i).server.addr, "GET", "/health/ready").await;
        assert_eq!(ready.status, 200, "node {i}: the outage fails open");
    }
}

/// Five nodes; the dependency fails on nodes 3 and 4 alone (each sees it
/// healthy on 3 of its 4 peers). The cluster's restart budget lets one of
/// them ask at a time, never both, sampled throughout; when that pod is
/// restarted (its node crashes and its pod goes), the other one asks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_zombie_pods_of_five_restart_one_at_a_time() {
    let mut cluster = Cluster::unscoped(5).await;
    cluster.converge(&[0, 1, 2, 3, 4], FORM).await;
    let mut pods: Vec<Option<Pod>> = pods(&cluster).into_iter().map(Some).collect();

    for i in [3, 4] {
        pods[i]
            .as_ref()
            .unwrap()
            .failing
            .store(true, Ordering::Relaxed);
    }
    watch(
        &pods,
        "nodes 3 and 4 failing alone",
        REQUESTED,
        |now| now.iter().all(|&i| i == 3 || i == 4),
        Some(&|now: &[usize]| now.len() == 1),
    )
    .await;
    // The other waits while one holds the budget: never both, however
    // long (a loaded machine may make the holder lose sight of its peers
    // and withdraw; the budget may then pass, but never to two at once).
    let zombies = |now: &[usize]| now.iter().all(|&i| i == 3 || i == 4);
    watch(
        &pods,
        "one restart in progress",
        Duration::from_secs(10),
        zombies,
        None,
    )
    .await;
    watch(
        &pods,
        "one asking",
        REQUESTED,
        zombies,
        Some(&|now: &[usize]| now.len() == 1),
    )
    .await;
    let first = requested(&pods)[0];
    let second = 7 - first;
    println!("node {first} asks; node {second} waits");

    // The orchestrator restarts the first: its process (node and pod) ends.
    pods[first] = None;
    cluster.nodes[first].kill(&cluster.lan).await;
    let took = watch(
        &pods,
        "after the first restart",
        REQUESTED,
        |now| now.iter().all(|&i| i == second),
        Some(&|now: &[usize]| now == [second]),
    )
    .await;
    println!("node {second} asked {took:?} after node {first} went");
    let (code, restart) = live(pods[second].as_ref().unwrap()).await;
    assert_eq!(code, 503);
    let (_, description) = restart.expect("a restart entry");
    assert!(
        description.ends_with(" while healthy on 3 of 3 peers"),
        "{description}"
    );
}

/// The cases where a restart never comes, on one in-process registry and
/// a cluster of words (a hand-written [`SharedVerdicts`]): two peers that
/// find the dependency healthy, and a restart budget the test can occupy.
/// Short timings (a 200 ms detection time, a 300 ms `restart_after`, no
/// settle time) keep it quick; each "never" is watched for 2 s, several
/// times a restart's whole way.
mod in_process {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use zb_health::prelude::{HealthRegistry, ProbeRegistration, ProbeResult, from_fn};
    use zb_health::shared::{RestartClaim, SharedVerdicts, Tally};

    const WATCHED: Duration = Duration::from_secs(2);

    /// This node fails the dependency; its two peers do not.
    #[derive(Default)]
    struct Herd {
        budget: bool,
        claims: Mutex<Vec<RestartClaim>>,
    }

    impl SharedVerdicts for Herd {
        fn publish(&self, _probe: &str, _failing: bool) {}

        fn tally(&self, _probe: &str) -> Option<Tally> {
            Some(Tally {
                failing: 1,
                reporting: 3,
            })
        }

        fn claim_restart(&self, claim: Option<&RestartClaim>) -> bool {
            let mut claims = self.claims.lock().unwrap();
            claims.retain(|c| !c.own);
            claims.extend(claim.cloned().map(|c| RestartClaim {
                address: "127.0.0.1:7000".into(),
                ..c
            }));
            self.budget
        }

        fn restart_claims(&self) -> Vec<RestartClaim> {
            self.claims.lock().unwrap().clone()
        }

        fn claim_settle(&self) -> Duration {
            Duration::ZERO
        }
    }

    /// A registry whose probe `database` fails, with `restart_after`.
    fn registry() -> HealthRegistry {
        let registry = HealthRegistry::builder()
            .detection_time(Duration::from_millis(200))
            .build();
        let probe = from_fn(|| async { Ok(ProbeResult::unhealthy("connection refused")) });
        registry
            .add(
                ProbeRegistration::new("database", probe)
                    .timeout(Duration::from_millis(50))
                    .refresh(Duration::from_millis(50))
                    .shared()
                    .restart_after(Duration::from_millis(300)),
            )
            .unwrap();
        registry
    }

    fn herd(budget: bool) -> Arc<Herd> {
        Arc::new(Herd {
            budget,
            ..Herd::default()
        })
    }

    /// Whether `registry` asks for a restart within `within` (`true`), or
    /// never does for all of it.
    async fn asks(registry: &HealthRegistry, within: Duration) -> bool {
        let start = std::time::Instant::now();
        while start.elapsed() < within {
            if registry.restart_requested() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    /// R27 at registration, as at compile time: `shared`, `ready` alone,
    /// longer than the registry's detection time (4 s by default).
    #[tokio::test]
    async fn the_registry_refuses_a_restart_the_rule_forbids() {
        use zb_health::prelude::{Tag, TagSet};
        use zb_health::spec::Rule;
        let probe = || from_fn(|| async { Ok(ProbeResult::healthy()) });
        let refused = |r: ProbeRegistration| match HealthRegistry::new().add(r) {
            Err(e) => e.rules(),
            Ok(_) => panic!("expected R27"),
        };
        let minutes = Duration::from_secs(120);
        let r27 = vec![Rule::RestartAfter];
        let not_shared = ProbeRegistration::new("db", probe()).restart_after(minutes);
        assert_eq!(refused(not_shared), r27);
        let too_soon = ProbeRegistration::new("db", probe())
            .shared()
            .restart_after(Duration::from_secs(4));
        assert_eq!(refused(too_soon), r27);
        let active = ProbeRegistration::new("lease", probe())
            .tags(TagSet::of(&[Tag::Active]))
            .restart_after(minutes);
        assert_eq!(refused(active), vec![Rule::RestartAfter; 2]);
        let fine = ProbeRegistration::new("db", probe())
            .shared()
            .restart_after(minutes);
        HealthRegistry::new().add(fine).unwrap();
    }

    #[tokio::test]
    async fn it_asks_once_the_failure_is_its_own_and_the_budget_is_free() {
        let registry = registry();
        registry.set_shared_verdicts(herd(true));
        assert!(asks(&registry, Duration::from_secs(20)).await);
        let live = registry.answer(zb_health::prelude::Tag::Live).await;
        let entry = live.entries.iter().find(|e| &*e.name == "restart").unwrap();
        assert_eq!(entry.status, zb_health::prelude::HealthStatus::Unhealthy);
    }

    #[tokio::test]
    async fn never_without_a_cluster_view_or_a_restart_budget() {
        let registry = registry();
        assert!(!asks(&registry, WATCHED).await, "no view");
        // A view that carries verdicts but no budget: two could ask at once.
        registry.set_shared_verdicts(herd(false));
        assert!(!asks(&registry, WATCHED).await, "no budget");
    }

    #[tokio::test]
    async fn never_while_starting_and_once_started_it_asks() {
        let registry = registry();
        let gate = registry.lifecycle().startup_gate();
        registry.set_shared_verdicts(herd(true));
        assert!(!asks(&registry, WATCHED).await, "starting");
        gate.ready();
        assert!(asks(&registry, Duration::from_secs(20)).await);
    }

    #[tokio::test]
    async fn maintenance_and_the_drain_withdraw_it() {
        let registry = registry();
        registry.set_shared_verdicts(herd(true));
        assert!(asks(&registry, Duration::from_secs(20)).await);
        registry
            .lifecycle()
            .begin_maintenance("patching", Duration::from_secs(60))
            .unwrap();
        assert!(
            !asks_still(&registry).await,
            "maintenance withdraws the request"
        );
        registry.lifecycle().end_maintenance();
        assert!(asks(&registry, Duration::from_secs(20)).await);
        registry.lifecycle().begin_drain();
        assert!(!asks_still(&registry).await, "the drain withdraws it");
    }

    /// Whether `registry` still asks after a step or two and for
    /// [`WATCHED`] after: `false` once it stopped asking and never asked
    /// again.
    async fn asks_still(registry: &HealthRegistry) -> bool {
        let start = std::time::Instant::now();
        while registry.restart_requested() {
            if start.elapsed() > Duration::from_secs(20) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        asks(registry, WATCHED).await
    }

    #[tokio::test]
    async fn it_waits_while_another_member_restarts() {
        let registry = registry();
        let herd = herd(true);
        herd.claims.lock().unwrap().push(RestartClaim {
            address: "127.0.0.1:7001".into(),
            own: false,
            probe: "database".into(),
            at_ms: 1,
        });
        registry.set_shared_verdicts(herd.clone());
        assert!(
            !asks(&registry, WATCHED).await,
            "another restart in progress"
        );
        // That pod restarted: its claim left gossip with it.
        herd.claims.lock().unwrap().clear();
        assert!(asks(&registry, Duration::from_secs(20)).await);
    }
}
