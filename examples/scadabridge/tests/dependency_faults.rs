//! Dependencies that fail slowly as well as fast (issue 27 §2): three
//! `scadabridge-herd` nodes (the database `shared`, `failure_threshold: 2`,
//! the PLC link depending on the database) in a network namespace this
//! test creates, their `/health/ready` polled every 500 ms each, as
//! kubelets would, while their database:
//!
//! * **hangs** everywhere: a real PostgreSQL whose port drops every packet
//!   (`iptables`), so queries run into the probe's 800 ms deadline;
//! * **refuses** everywhere: the same port answering with a TCP reset;
//! * is **locked** (SQLite, one file per node, `BEGIN EXCLUSIVE` from
//!   another connection, so the probe's read waits into its deadline) on
//!   one node, then on every node.
//!
//! What must hold (`spec/conflicts.md`, issue 27):
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
use zb_health_testkit::{Launch, ServiceProcess, eventually, start_cluster};

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
    let nodes = start_cluster(launch, 3);
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
fn a_shared_postgres_that_hangs_or_refuses_everywhere_keeps_the_herd() {
    let ns = NetNs::new();
    ns.enter();
    let pg = Postgres::start();
    let nodes = three(&herd().env("DATABASE_URL", pg.url()));
    let refs: Vec<&ServiceProcess> = nodes.iter().collect();
    let poller = TierPoller::start(&ns, &refs, "/health/ready", POLL);
    let mut report = Vec::new();
    for (label, fault) in [
        ("hang", NetNs::hang_tcp as fn(&NetNs, u16)),
        ("refuse", NetNs::refuse_tcp),
    ] {
        let at = Instant::now();
        fault(&ns, pg.port);
        report.push(everywhere(&poller, at, label));
        let healed = Instant::now();
        ns.heal();
        let back = until_all(&poller, healed, "every node healthy again", recovered);
        report.push(format!(
            "{label} healed: healthy after {} ms",
            back.as_millis()
        ));
    }
    eprintln!("{}", report.join("; "));
}

#[test]
fn a_sqlite_lock_on_one_node_takes_out_that_node_and_on_every_node_keeps_the_herd() {
    let ns = NetNs::new();
    ns.enter();
    let nodes = three(&herd());
    let file = |n: &ServiceProcess| n.data_dir.join("scadabridge-herd.db");
    let refs: Vec<&ServiceProcess> = nodes.iter().collect();
    let poller = TierPoller::start(&ns, &refs, "/health/ready", POLL);

    // One node: that node alone is out, the others never notice.
    let at = Instant::now();
    let lock = SqliteLock::hold_file(&file(&nodes[2]));
    let out = until_all(&poller, at, "node 2 out, nodes 0 and 1 ready", |a| {
        if a.node == 2 {
            a.status == 503
                && a.entry("database").0 == Some("Unhealthy")
                && a.entry("plc-link") == (Some("Degraded"), Some("skipped: database failing"))
        } else {
            recovered(a)
        }
    });
    assert!(out <= SETTLE, "the odd node out only after {out:?}");
    std::thread::sleep(Duration::from_secs(2));
    let answers = poller.answers();
    for node in [0, 1] {
        assert!(
            answers
                .iter()
                .filter(|a| a.node == node && a.sent >= at)
                .all(recovered),
            "node {node} was disturbed by node 2's database"
        );
    }
    let healed = Instant::now();
    lock.release();
    until_all(&poller, healed, "node 2 back", recovered);

    // Every node: the herd is kept.
    let at = Instant::now();
    let locks: Vec<SqliteLock> = nodes
        .iter()
        .map(|n| SqliteLock::hold_file(&file(n)))
        .collect();
    let kept = everywhere(&poller, at, "locked everywhere");
    let healed = Instant::now();
    for lock in locks {
        lock.release();
    }
    let back = until_all(&poller, healed, "every node healthy again", recovered);
    eprintln!(
        "odd node out after {} ms; {kept}; healed after {} ms",
        out.as_millis(),
        back.as_millis()
    );
}
