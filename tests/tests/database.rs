//! The database probe (ZB-2.1) against real databases: embedded SQLite and
//! a PostgreSQL server each test starts for itself on 127.0.0.1, always
//! through a `HealthRegistry` and its executor, as an application runs it.
//!
//! Deadlines (AT-4, BE-HLTH-006): a stopped server or an exhausted pool
//! must make the probe Unhealthy within its registered timeout, which the
//! executor enforces by dropping the check. Disclosure (BE-HLTH-007): the
//! URL, the password and the database's error text stay out of the body.

#[path = "support/postgres.rs"]
mod postgres;
mod support;

use std::time::{Duration, Instant};

use postgres::{PASSWORD, Postgres};
use support::{request, serve};
use zb_health::database::DatabaseProbe;
use zb_health::database::sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, Statement, TransactionTrait,
};
use zb_health::report::ERRORED_DESCRIPTION;
use zb_health::{
    EntryOutcome, HealthEntry, HealthRegistry, HealthStatus, Probe, ProbeRegistration, Tag,
    map_zb_health,
};

/// The probe deadline every test registers.
const TIMEOUT: Duration = Duration::from_secs(1);
/// How late past its deadline a check may return on a busy 2-core machine.
const SLACK: Duration = Duration::from_millis(750);

/// A registry holding `probe` as `database` on the ready tier.
fn registry(probe: impl Probe) -> HealthRegistry {
    let reg = HealthRegistry::new();
    reg.add(ProbeRegistration::new("database", probe).timeout(TIMEOUT))
        .unwrap();
    reg
}

/// Runs the ready tier once: its only entry and how long the check took.
async fn check(reg: &HealthRegistry) -> (HealthEntry, Duration) {
    let started = Instant::now();
    let mut report = reg.check(Tag::Ready).await;
    let took = started.elapsed();
    assert_eq!(report.entries.len(), 1);
    assert_eq!(report.status, report.entries[0].status);
    (report.entries.remove(0), took)
}

/// Asserts the entry is the passing one, with its fixed description.
fn assert_healthy(entry: &HealthEntry) {
    assert_eq!(
        (entry.status, entry.outcome, entry.description.as_deref()),
        (
            HealthStatus::Healthy,
            EntryOutcome::Completed,
            Some("database reachable")
        ),
        "{entry:?}"
    );
}

/// A probe that reads one row of `deployments`, the table the service
/// needs: the caller-supplied override of ZB-2.1.
fn deployments_probe(conn: DatabaseConnection) -> DatabaseProbe {
    DatabaseProbe::with_check(conn, |conn: DatabaseConnection| async move {
        let sql = "SELECT id FROM deployments LIMIT 1";
        let stmt = Statement::from_string(conn.get_database_backend(), sql);
        conn.query_one_raw(stmt).await.map(drop)
    })
}

async fn create_deployments(conn: &DatabaseConnection) {
    conn.execute_unprepared("CREATE TABLE deployments (id BIGINT PRIMARY KEY)")
        .await
        .unwrap();
    conn.execute_unprepared("INSERT INTO deployments (id) VALUES (1)")
        .await
        .unwrap();
}

/// Connects to the test server, quietly (sqlx logs every statement otherwise).
async fn connect(options: &mut ConnectOptions) -> DatabaseConnection {
    Database::connect(options.sqlx_logging(false).clone())
        .await
        .unwrap()
}

// --- SQLite ----------------------------------------------------------------

#[tokio::test]
async fn sqlite_ping_is_healthy() {
    let conn = connect(&mut ConnectOptions::new("sqlite::memory:")).await;
    let (entry, _) = check(&registry(DatabaseProbe::new(conn))).await;
    assert_healthy(&entry);
}

#[tokio::test]
async fn sqlite_custom_query_fails_on_a_missing_table_and_passes_once_it_exists() {
    // One connection (sea-orm's default for SQLite), so the in-memory
    // database the test changes is the one the probe reads.
    let conn = connect(&mut ConnectOptions::new("sqlite::memory:")).await;
    let reg = registry(deployments_probe(conn.clone()));
    let (entry, _) = check(&reg).await;
    assert_eq!(
        (entry.status, entry.outcome),
        (HealthStatus::Unhealthy, EntryOutcome::Errored)
    );
    assert_eq!(entry.description.as_deref(), Some(ERRORED_DESCRIPTION));
    create_deployments(&conn).await;
    assert_healthy(&check(&reg).await.0);
}

// --- PostgreSQL --------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_ping_is_healthy() {
    let pg = Postgres::start();
    let conn = connect(&mut ConnectOptions::new(pg.url())).await;
    let (entry, took) = check(&registry(DatabaseProbe::new(conn))).await;
    assert_healthy(&entry);
    assert!(took < TIMEOUT, "a ping on loopback took {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_is_unhealthy_within_the_probe_timeout() {
    let pg = Postgres::start();
    let conn = connect(&mut ConnectOptions::new(pg.url())).await;
    let reg = registry(DatabaseProbe::new(conn));
    assert_healthy(&check(&reg).await.0);

    pg.stop();
    let stopped = Instant::now();
    // Two checks: the first finds the pooled connection dead, the second
    // starts with none; both must answer Unhealthy in time.
    for _ in 0..2 {
        let (entry, took) = check(&reg).await;
        assert_eq!(entry.status, HealthStatus::Unhealthy, "{entry:?}");
        assert_ne!(entry.outcome, EntryOutcome::Completed, "{entry:?}");
        assert!(
            took <= TIMEOUT + SLACK,
            "the check took {took:?}, its deadline is {TIMEOUT:?}"
        );
    }
    let first = stopped.elapsed();
    println!("postgres stopped -> two Unhealthy reports in {first:?} (probe timeout {TIMEOUT:?})");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restarted_makes_the_same_probe_healthy_again() {
    let pg = Postgres::start();
    let conn = connect(&mut ConnectOptions::new(pg.url())).await;
    let reg = registry(DatabaseProbe::new(conn));
    assert_healthy(&check(&reg).await.0);

    pg.stop();
    let stopped = Instant::now();
    let (entry, _) = check(&reg).await;
    assert_eq!(entry.status, HealthStatus::Unhealthy, "{entry:?}");
    println!(
        "postgres stopped -> first Unhealthy report after {:?}",
        stopped.elapsed()
    );

    // Same registry, probe, pool: nothing is rebuilt, the server comes back.
    pg.start_again();
    let restarted = Instant::now();
    let mut last = None;
    while restarted.elapsed() < Duration::from_secs(20) {
        let (entry, _) = check(&reg).await;
        if entry.status == HealthStatus::Healthy {
            assert_healthy(&entry);
            println!(
                "postgres restarted -> Healthy again after {:?}",
                restarted.elapsed()
            );
            return;
        }
        last = Some(entry);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("still not Healthy 20 s after the restart: {last:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_exhausted_pool_is_unhealthy_at_the_probe_deadline_not_hung() {
    let pg = Postgres::start();
    // sqlx would wait 30 s for a pooled connection; the probe's deadline,
    // not this setting, must bound the wait.
    let conn = connect(
        ConnectOptions::new(pg.url())
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(30)),
    )
    .await;
    let reg = registry(DatabaseProbe::new(conn.clone()));
    assert_healthy(&check(&reg).await.0);

    // The pool's one connection, held by an open transaction.
    let held = conn.begin().await.unwrap();
    held.execute_unprepared("SELECT 1").await.unwrap();
    let (entry, took) = check(&reg).await;
    println!(
        "exhausted pool -> {:?} after {took:?} (probe timeout {TIMEOUT:?})",
        entry.outcome
    );
    assert_eq!(
        (entry.status, entry.outcome),
        (HealthStatus::Unhealthy, EntryOutcome::TimedOut)
    );
    assert!(
        took >= TIMEOUT && took <= TIMEOUT + SLACK,
        "the check took {took:?}"
    );

    // The cancelled wait left nothing behind: once the connection is back,
    // the same probe passes.
    held.rollback().await.unwrap();
    assert_healthy(&check(&reg).await.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_custom_query_fails_on_a_missing_table_and_passes_once_it_exists() {
    let pg = Postgres::start();
    let conn = connect(&mut ConnectOptions::new(pg.url())).await;
    let reg = registry(deployments_probe(conn.clone()));
    let (entry, _) = check(&reg).await;
    assert_eq!(
        (entry.status, entry.outcome),
        (HealthStatus::Unhealthy, EntryOutcome::Errored)
    );
    assert_eq!(entry.description.as_deref(), Some(ERRORED_DESCRIPTION));
    create_deployments(&conn).await;
    assert_healthy(&check(&reg).await.0);
}

#[actix_web::test]
async fn postgres_errors_never_reach_the_http_body() {
    let pg = Postgres::start();
    let port_text = format!("127.0.0.1:{}", pg.port);
    // What must never be served: the URL and its parts, and the error.
    let mut secrets = vec![
        PASSWORD.to_owned(),
        "postgres://".to_owned(),
        port_text.clone(),
    ];

    // A wrong database name: the server answers at once with an error that
    // names it. Lazy, so the pool exists although no connection can.
    let wrong = pg.url_for("no_such_db");
    let conn = connect(ConnectOptions::new(&wrong).connect_lazy(true)).await;
    let probe = DatabaseProbe::new(conn);
    let error = probe
        .check()
        .await
        .expect_err("connecting to a missing database")
        .to_string();
    assert!(
        error.contains("no_such_db"),
        "the error is the server's own: {error}"
    );
    secrets.extend([error, "no_such_db".to_owned(), "does not exist".to_owned()]);
    let server = serve(map_zb_health(registry(probe)));
    let r = request(server.addr, "GET", "/health/ready").await;
    let body = String::from_utf8(r.body.clone()).unwrap();
    assert_eq!(r.status, 503, "{body}");
    assert_eq!(
        r.json()["entries"]["database"]["description"],
        ERRORED_DESCRIPTION
    );
    for secret in &secrets {
        assert!(
            !body.contains(secret.as_str()),
            "{secret:?} leaked into {body}"
        );
    }

    // The right URL: 200 while the server runs, 503 once it is stopped.
    let conn = connect(&mut ConnectOptions::new(pg.url())).await;
    let server = serve(map_zb_health(registry(DatabaseProbe::new(conn))));
    let r = request(server.addr, "GET", "/health/ready").await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json()["entries"]["database"]["description"],
        "database reachable"
    );
    pg.stop();
    let r = request(server.addr, "GET", "/health/ready").await;
    let body = String::from_utf8(r.body.clone()).unwrap();
    assert_eq!(r.status, 503, "{body}");
    assert_eq!(r.json()["entries"]["database"]["status"], "Unhealthy");
    for secret in &secrets {
        assert!(
            !body.contains(secret.as_str()),
            "{secret:?} leaked into {body}"
        );
    }
}
