//! A shared dependency fails open (BE-HLTH-003), over three **real**
//! chitchat nodes gossiping on loopback UDP, one real PostgreSQL server and
//! each node's `/health/ready` over a real socket.
//!
//! Every node checks the same database through a TCP relay of its own,
//! which the test can cut: that is one node's own broken connection, while
//! stopping the server is the outage every node shares. A second test hangs
//! a shared probe on every node (`spec/conflicts.md`, a hung shared
//! dependency) and times how soon each node fails open.

#[path = "support/chitchat.rs"]
mod lan;
mod support;

use std::future::Future;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use lan::Cluster;
use serde_json::Value;
use support::{Server, request, serve};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use zb_health::database::DatabaseProbe;
use zb_health::database::sea_orm::{ConnectOptions, Database};
use zb_health::prelude::{HealthRegistry, ProbeRegistration, map_zb_health};
use zb_health_testkit::postgres::Postgres;

/// Formation of a fresh cluster, on a loaded machine.
const FORM: Duration = Duration::from_secs(20);
/// Gossip of a verdict and a probe run on every node, with room for a
/// loaded machine.
const SPREAD: Duration = Duration::from_secs(20);
/// How long a verdict must hold once reached, in gossip rounds of 100 ms.
const HOLD: Duration = Duration::from_millis(600);

/// A TCP relay to `upstream` that the test can cut: while cut, it closes
/// every connection it holds and every new one at once.
struct Relay {
    addr: SocketAddr,
    cut: watch::Sender<bool>,
}

impl Relay {
    async fn start(upstream: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (cut, cut_rx) = watch::channel(false);
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if *cut_rx.borrow() {
                    continue; // dropped: closed at once
                }
                let mut cut_rx = cut_rx.clone();
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut_rx.wait_for(|cut| *cut) => {}
                    }
                });
            }
        });
        Relay { addr, cut }
    }

    fn set_cut(&self, cut: bool) {
        self.cut.send_replace(cut);
    }
}

/// One node: its relay to the database and its ready tier, served.
struct Pod {
    relay: Relay,
    server: Server,
}

/// The `database` entry of `/health/ready` and the status code, per pod.
async fn ready(pods: &[Pod]) -> Vec<(u16, String, String)> {
    let mut seen = Vec::new();
    for pod in pods {
        let wire = request(pod.server.addr, "GET", "/health/ready").await;
        let body = wire.json();
        let entry = &body["entries"]["database"];
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        seen.push((
            wire.status,
            text(&entry["status"]),
            text(&entry["description"]),
        ));
    }
    seen
}

/// Waits (within [`SPREAD`]) until `condition` holds of every pod's
/// answer, then checks that it keeps holding for [`HOLD`].
async fn settle(
    pods: &[Pod],
    what: &str,
    condition: impl Fn(usize, &(u16, String, String)) -> bool,
) -> Vec<(u16, String, String)> {
    let holds =
        |seen: &[(u16, String, String)]| seen.iter().enumerate().all(|(i, s)| condition(i, s));
    let (seen, took) = eventually_async(what, || async {
        let seen = ready(pods).await;
        holds(&seen).then_some(seen)
    })
    .await;
    println!("{what}: {seen:?} after {took:?}");
    let since = Instant::now();
    while since.elapsed() < HOLD {
        let now = ready(pods).await;
        assert!(holds(&now), "{what} did not hold: {now:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    seen
}

/// Polls `check` until it answers `Some`, for at most [`SPREAD`].
async fn eventually_async<T, F: Future<Output = Option<T>>>(
    what: &str,
    mut check: impl FnMut() -> F,
) -> (T, Duration) {
    let start = Instant::now();
    loop {
        if let Some(value) = check().await {
            return (value, start.elapsed());
        }
        assert!(
            start.elapsed() < SPREAD,
            "timed out after {SPREAD:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_outage_keeps_every_node_ready_and_a_lone_failure_takes_out_only_its_node() {
    let pg = Postgres::start();
    let upstream: SocketAddr = ([127, 0, 0, 1], pg.port).into();
    let cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], FORM).await;

    let mut pods = Vec::new();
    for node in &cluster.nodes {
        let relay = Relay::start(upstream).await;
        let url = pg
            .url()
            .replace(&format!("127.0.0.1:{}", pg.port), &relay.addr.to_string());
        let conn = Database::connect(ConnectOptions::new(url).sqlx_logging(false).clone())
            .await
            .unwrap();
        let registry = HealthRegistry::new();
        registry
            .add(ProbeRegistration::new("database", DatabaseProbe::new(conn)).shared())
            .unwrap();
        let verdicts = node.dyn_view().shared_verdicts();
        registry.set_shared_verdicts(verdicts.expect("a chitchat view carries verdicts"));
        let server = serve(map_zb_health(registry));
        pods.push(Pod { relay, server });
    }
    let healthy =
        |_: usize, (code, status, _): &(u16, String, String)| *code == 200 && status == "Healthy";
    settle(&pods, "every node healthy", healthy).await;

    // The database every node uses goes down: every node still answers
    // 200, the entry Degraded and saying why.
    pg.stop();
    let seen = settle(
        &pods,
        "every node degraded, still ready",
        |_, (code, status, d)| {
            *code == 200 && status == "Degraded" && d == "failing on 3 of 3 nodes"
        },
    )
    .await;
    assert_eq!(seen.len(), 3);

    pg.start_again();
    settle(&pods, "every node healthy after the restart", healthy).await;

    // Only node 2 loses its connection: it is the odd one, taken out; the
    // others stay in.
    pods[2].relay.set_cut(true);
    settle(
        &pods,
        "node 2 alone unready",
        |i, (code, status, _)| match i {
            2 => *code == 503 && status == "Unhealthy",
            _ => *code == 200 && status == "Healthy",
        },
    )
    .await;

    pods[2].relay.set_cut(false);
    settle(&pods, "every node healthy again", healthy).await;

    // Without a cluster view the same probe is an ordinary one.
    let alone = HealthRegistry::new();
    let conn = Database::connect(ConnectOptions::new(pg.url()).sqlx_logging(false).clone())
        .await
        .unwrap();
    alone
        .add(ProbeRegistration::new("database", DatabaseProbe::new(conn)).shared())
        .unwrap();
    let server = serve(map_zb_health(alone));
    pg.stop();
    let (wire, _) = eventually_async("the lone node to fail", || async {
        let wire = request(server.addr, "GET", "/health/ready").await;
        (wire.status == 503).then_some(wire)
    })
    .await;
    assert_eq!(wire.json()["entries"]["database"]["status"], "Unhealthy");
}

/// The shared database hangs on every node (each run times out after
/// 800 ms, as a locked SQLite file does). Every node, its ready tier asked
/// every second (the kubelet, or gRPC's period), reaches 200 `Degraded`
/// "failing on 3 of 3 nodes" within the detection time (4 s for a 5 s
/// drain: readiness period 2 s × 2) and stays there: a run at its deadline
/// is ended once, whoever notices first, so no request answers a raw 503
/// `timed out` or cancels the run before it is published
/// (`spec/conflicts.md`, a hung shared dependency; BE-HLTH-003).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_shared_dependency_fails_open_on_every_node_within_the_detection_time() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use zb_health::prelude::{ProbeResult, from_fn};

    const DETECTION: Duration = Duration::from_secs(4);
    const WATCHED: Duration = Duration::from_secs(8);
    let cluster = Cluster::unscoped(3).await;
    cluster.converge(&[0, 1, 2], FORM).await;
    let hang = Arc::new(AtomicBool::new(false));
    let mut servers = Vec::new();
    for node in &cluster.nodes {
        let h = hang.clone();
        let probe = from_fn(move || {
            let hang = h.load(Ordering::SeqCst);
            async move {
                if hang {
                    std::future::pending::<()>().await;
                }
                Ok(ProbeResult::healthy())
            }
        });
        let registry = HealthRegistry::builder().detection_time(DETECTION).build();
        registry
            .add(
                ProbeRegistration::new("database", probe)
                    .timeout(Duration::from_millis(800))
                    .shared(),
            )
            .unwrap();
        let verdicts = node.dyn_view().shared_verdicts();
        registry.set_shared_verdicts(verdicts.expect("a chitchat view carries verdicts"));
        servers.push(serve(map_zb_health(registry)));
    }
    for server in &servers {
        assert_eq!(
            request(server.addr, "GET", "/health/ready").await.status,
            200
        );
    }

    hang.store(true, Ordering::SeqCst);
    let start = Instant::now();
    let watchers: Vec<_> = servers
        .iter()
        .map(|server| {
            let addr = server.addr;
            tokio::spawn(async move {
                let mut answers = Vec::new();
                let mut next = start;
                while next.duration_since(start) < WATCHED {
                    tokio::time::sleep_until(next.into()).await;
                    let wire = request(addr, "GET", "/health/ready").await;
                    let entry = &wire.json()["entries"]["database"];
                    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
                    answers.push((
                        start.elapsed(),
                        wire.status,
                        text(&entry["status"]),
                        text(&entry["description"]),
                    ));
                    next += Duration::from_secs(1);
                }
                answers
            })
        })
        .collect();
    let mut watched = Vec::new();
    for watcher in watchers {
        watched.push(watcher.await.unwrap());
    }
    hang.store(false, Ordering::SeqCst);
    for (node, answers) in watched.iter().enumerate() {
        let open = |(_, code, status, d): &(Duration, u16, String, String)| {
            *code == 200 && status == "Degraded" && d == "failing on 3 of 3 nodes"
        };
        // From the first answer on which every later one is open.
        let first_open = answers
            .iter()
            .rposition(|a| !open(a))
            .map_or(0, |last_closed| last_closed + 1);
        println!("node {node}: {answers:?}");
        let reached = answers.get(first_open).map(|a| a.0);
        assert!(
            reached.is_some_and(|at| at <= DETECTION),
            "node {node} reached 200 Degraded at {reached:?}, not within {DETECTION:?}: {answers:?}"
        );
    }
}
