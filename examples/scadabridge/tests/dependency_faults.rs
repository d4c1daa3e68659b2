//! Dependencies that fail slowly as well as fast (BE-HLTH-003,
//! BE-HLTH-006): three `scadabridge-herd` nodes (the database `shared`,
//! `failure_threshold: 2`, the PLC link depending on the database) in a
//! network namespace this test creates, their `/health/ready` polled every
//! 500 ms each, as kubelets would, while their database:
//!
//! * **hangs**: a real PostgreSQL whose port drops every packet
//!   (`iptables`), so queries run into the probe's 800 ms deadline;
//! * **refuses**: the same port answering with a TCP reset;
//! * is **locked** (SQLite, one file per node, `BEGIN EXCLUSIVE` from
//!   another connection, so the probe's read waits out its 100 ms lock
//!   wait and fails, "database is locked");
//! * is **broken** (SQLite, its table dropped, so the read fails at once),
//!
//! each on one node, then on every node. Each node reaches the one
//! PostgreSQL server through a path of its own (`NetNs::tcp_paths`), so one
//! node's path can fail while the others' work.
//!
//! What must hold (`spec/conflicts.md`):
//!
//! * failing everywhere, every node ends at 200 with the database
//!   `Degraded`, `failing on N of 3 nodes`, and no node answers 503 for as
//!   long as the orchestrator's detection time (4 s: a readiness period of
//!   2 s, two failures), so no kubelet takes a pod out;
//! * failing on one node, exactly that node answers 503, the others stay
//!   200 `Healthy` throughout;
//! * the PLC link is skipped the same way on every node: `skipped:
//!   database failing on N of 3 nodes` (Degraded) in a shared outage,
//!   `skipped: database failing` on the odd node;
//! * one failed run is held back (`1 of 2 failures`, still `Healthy`)
//!   before the database fails, on every node.

mod common;

use std::time::{Duration, Instant};

use common::{DEADLINE, SqliteLock};
use zb_health_testkit::fault::{Answer, NetNs, TierPoller, longest_run};
use zb_health_testkit::postgres::Postgres;
use zb_health_testkit::{Launch, ServiceProcess, eventually, free_port, start_cluster_with};

/// The orchestrator's detection time for the herd's 5 s drain delay: a
/// readiness period of 2 s, two failures in a row.
const DETECTION: Duration = Duration::from_secs(4);
/// Every node settles within the hold-back (one period), the detection
/// time and a deadline and a gossip round, with room for a loaded machine.
const SETTLE: Duration = Duration::from_secs(15);
/// How often each node is asked, like a kubelet at a short period.
const POLL: Duration = Duration::from_millis(500);

fn herd() -> Launch {
    Launch::new(env!("CARGO_BIN_EXE_scadabridge-herd"))
}

/// Three herd nodes with `launch`, every one ready.
fn three(launch: &Launch) -> Vec<ServiceProcess> {
    three_with(launch, |_, launch| launch)
}

/// [`three`] with each node's launch adjusted by `each`.
fn three_with(launch: &Launch, each: impl Fn(usize, Launch) -> Launch) -> Vec<ServiceProcess> {
    let nodes = start_cluster_with(launch, 3, each);
    for node in &nodes {
        node.until_status("/health/ready", 200, DEADLINE);
    }
    nodes
}

/// Whether `a` is the herd kept: 200, the database failing open on a
/// majority, the PLC link skipped for it.
fn herd_kept(a: &Answer) -> bool {
    let (db, db_said) = a.entry("database");
    let (plc, plc_said) = a.entry("plc-link");
    a.status == 200
        && db == Some("Degraded")
        && db_said.is_some_and(|d| d.starts_with("failing on ") && d.ends_with(" of 3 nodes"))
        && plc == Some("Degraded")
        && plc_said.is_some_and(|d| d.starts_with("skipped: database failing on "))
}

/// Whether `a` is every dependency healthy again.
fn recovered(a: &Answer) -> bool {
    a.status == 200
        && a.entry("database").0 == Some("Healthy")
        && a.entry("plc-link").0 == Some("Healthy")
}

/// Waits until the latest answer of every node meets `ok`; returns how
/// long after `from`.
fn until_all(
    poller: &TierPoller,
    from: Instant,
    what: &str,
    ok: impl Fn(&Answer) -> bool,
) -> Duration {
    eventually(what, DEADLINE, || {
        let latest = poller.latest(3, from)?;
        latest.iter().all(&ok).then(|| from.elapsed())
    })
}

/// A fault on node 2 alone at `at`: node 2 is out within [`SETTLE`] (503,
/// the database failing, the PLC link skipped for it) and nodes 0 and 1
/// answer 200 `Healthy` to every request throughout. Returns what it saw.
fn odd_node_out(poller: &TierPoller, at: Instant, label: &str) -> String {
    let out = until_all(poller, at, "node 2 out, nodes 0 and 1 ready", |a| {
        if a.node == 2 {
            a.status == 503
                && a.entry("database").0 == Some("Unhealthy")
                && a.entry("plc-link") == (Some("Degraded"), Some("skipped: database failing"))
        } else {
            recovered(a)
        }
    });
    assert!(
        out <= SETTLE,
        "{label}: the odd node out only after {out:?}"
    );
    std::thread::sleep(Duration::from_secs(2));
    let answers = poller.answers();
    for node in [0, 1] {
        let disturbed: Vec<&Answer> = answers
            .iter()
            .filter(|a| a.node == node && a.sent >= at && !recovered(a))
            .collect();
        assert!(
            disturbed.is_empty(),
            "{label}: node {node} was disturbed by node 2's database: {disturbed:#?}"
        );
    }
    format!("{label}: node 2 alone out after {} ms", out.as_millis())
}

/// A fault on every node at `at`: every node settles into the kept herd
/// within [`SETTLE`], and none answered 503 for the detection time. Holds
/// the fault for two more seconds to see it stay. Returns what it saw.
fn everywhere(poller: &TierPoller, at: Instant, label: &str) -> String {
    let settled = until_all(
        poller,
        at,
        "every node 200, the database failing open",
        herd_kept,
    );
    assert!(
        settled <= SETTLE,
        "{label}: the herd kept only after {settled:?}"
    );
    std::thread::sleep(Duration::from_secs(2));
    let answers = poller.answers();
    let mut seen = Vec::new();
    for node in 0..3 {
        let down = longest_run(&answers, node, 503, at);
        assert!(
            down < DETECTION,
            "{label}: node {node} answered 503 for {down:?}, long enough for a kubelet to take it out: {:#?}",
            answers
                .iter()
                .filter(|a| a.node == node && a.sent >= at)
                .map(|a| (a.status, a.entry("database")))
                .collect::<Vec<_>>()
        );
        // The first failed run is held back: `1 of 2 failures`, Healthy.
        let held = answers
            .iter()
            .filter(|a| a.node == node && a.sent >= at)
            .any(|a| {
                a.status == 200 && a.entry("database") == (Some("Healthy"), Some("1 of 2 failures"))
            });
        assert!(held, "{label}: node {node} never held a failed run back");
        let last = answers
            .iter()
            .rev()
            .find(|a| a.node == node)
            .expect("an answer");
        assert!(
            herd_kept(last),
            "{label}: node {node} left the herd: {last:?}"
        );
        seen.push(format!("node {node} down at most {} ms", down.as_millis()));
    }
    format!(
        "{label}: every node kept after {} ms ({})",
        settled.as_millis(),
        seen.join(", ")
    )
}

#[test]
fn a_shared_postgres_that_hangs_or_refuses_on_one_node_or_everywhere() {
    let ns = NetNs::new();
    ns.enter();
    let pg = Postgres::start();
    // Each node's own path to the one server.
    let paths: Vec<u16> = (0..3).map(|_| free_port()).collect();
    ns.tcp_paths(pg.port, &paths);
    let url = pg.url();
    let nodes = three_with(&herd(), |i, launch| {
        launch.env(
            "DATABASE_URL",
            url.replace(&format!(":{}/", pg.port), &format!(":{}/", paths[i])),
        )
    });
    let refs: Vec<&ServiceProcess> = nodes.iter().collect();
    let poller = TierPoller::start(&ns, &refs, "/health/ready", POLL);
    let mut report = Vec::new();
    for (label, odd, hang) in [
        ("hang on node 2", true, true),
        ("refuse on node 2", true, false),
        ("hang everywhere", false, true),
        ("refuse everywhere", false, false),
    ] {
        let at = Instant::now();
        match (odd, hang) {
            (true, true) => ns.hang_path(paths[2]),
            (true, false) => ns.refuse_path(paths[2]),
            (false, true) => ns.hang_tcp(pg.port),
            (false, false) => ns.refuse_tcp(pg.port),
        }
        report.push(if odd {
            odd_node_out(&poller, at, label)
        } else {
            everywhere(&poller, at, label)
        });
        let healed = Instant::now();
        ns.heal();
        let back = until_all(&poller, healed, "every node healthy again", recovered);
        report.push(format!("healed after {} ms", back.as_millis()));
    }
    eprintln!("{}", report.join("; "));
}

#[test]
fn a_sqlite_file_locked_or_broken_on_one_node_or_everywhere() {
    let ns = NetNs::new();
    ns.enter();
    let nodes = three(&herd());
    let file = |n: &ServiceProcess| n.data_dir.join("scadabridge-herd.db");
    let refs: Vec<&ServiceProcess> = nodes.iter().collect();
    let poller = TierPoller::start(&ns, &refs, "/health/ready", POLL);
    let mut report = Vec::new();

    // Locked: the read waits out the probe's lock wait, then fails.
    let at = Instant::now();
    let lock = SqliteLock::hold_file(&file(&nodes[2]));
    report.push(odd_node_out(&poller, at, "locked on node 2"));
    let healed = Instant::now();
    lock.release();
    until_all(&poller, healed, "node 2 back", recovered);
    let at = Instant::now();
    let locks: Vec<SqliteLock> = nodes
        .iter()
        .map(|n| SqliteLock::hold_file(&file(n)))
        .collect();
    report.push(everywhere(&poller, at, "locked everywhere"));
    let healed = Instant::now();
    for lock in locks {
        lock.release();
    }
    until_all(&poller, healed, "every node healthy again", recovered);

    // Fast: the table gone, so the read fails at once.
    let at = Instant::now();
    sqlite(&file(&nodes[2]), "DROP TABLE tags");
    report.push(odd_node_out(&poller, at, "broken on node 2"));
    let healed = Instant::now();
    sqlite(&file(&nodes[2]), scadabridge::SCHEMA[0]);
    until_all(&poller, healed, "node 2 back", recovered);
    let at = Instant::now();
    for node in &nodes {
        sqlite(&file(node), "DROP TABLE tags");
    }
    report.push(everywhere(&poller, at, "broken everywhere"));
    let healed = Instant::now();
    for node in &nodes {
        sqlite(&file(node), scadabridge::SCHEMA[0]);
    }
    let back = until_all(&poller, healed, "every node healthy again", recovered);
    report.push(format!("healed after {} ms", back.as_millis()));
    eprintln!("{}", report.join("; "));
}

/// Runs `sql` on the SQLite file at `path` from a connection of its own.
fn sqlite(path: &std::path::Path, sql: &'static str) {
    use zb_health::database::sea_orm::sqlx::{self, Connection as _, SqliteConnection};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let url = format!("sqlite://{}", path.display());
        let mut c = SqliteConnection::connect(&url).await.unwrap();
        sqlx::raw_sql(sql).execute(&mut c).await.unwrap();
        c.close().await.unwrap();
    });
}
