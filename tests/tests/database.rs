//! The database probe (ZB-2.1) against real databases: embedded SQLite and
//! a PostgreSQL server each test starts for itself on 127.0.0.1, always
//! through a `HealthRegistry` and its executor, as an application runs it.
//!
//! Fail fast: the built-in probe checks over a connection of its own, so a
//! stopped server is `Errored` (the refused connect), not `TimedOut` at the
//! deadline, and an exhausted application pool does not hold it up
//! (BE-HLTH-006). What the default proves: on SQLite, a read of the file
//! under its shared lock (a file held with `BEGIN EXCLUSIVE` in the
//! rollback-journal mode fails it, naming "database is locked", while the
//! service's own write transaction does not; in WAL mode it passes, as the
//! service's reads do; a missing, deleted or replaced file fails it, and the
//! probe never creates one); on PostgreSQL, a round trip, whose failure
//! names the refused connect. `with_check` runs the caller's check as
//! written and stays bounded by the deadline (AT-4). Disclosure (BE-HLTH-007): the URL, the
//! password and the database's error text stay out of the body. No test
//! asserts a wall-clock margin; the kill-to-first-503 times are printed
//! (`--nocapture`), not asserted.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use support::{Wire, request, serve};
use zb_health::database::DatabaseProbe;
use zb_health::database::sea_orm::sqlx::sqlite::{SqliteConnection, SqliteJournalMode};
use zb_health::database::sea_orm::sqlx::{self, Connection as _};
use zb_health::database::sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, Statement, TransactionTrait,
};
use zb_health::prelude::{
    HealthRegistry, HealthStatus, Probe, ProbeRegistration, Tag, map_zb_health,
};
use zb_health::report::{EntryOutcome, HealthEntry};
use zb_health_testkit::postgres::{PASSWORD, Postgres, USER};

/// The probe deadline every test registers.
const TIMEOUT: Duration = Duration::from_secs(1);
/// How long a test waits for a condition before it fails.
const PATIENCE: Duration = Duration::from_secs(30);
/// A failed check's fixed description (BE-HLTH-007, `spec/probes.md`).
const ERRORED_DESCRIPTION: &str = "check failed";

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

/// Asserts the entry is a failed check reported at once: the probe's own
/// error, not the executor's deadline.
fn assert_errored(entry: &HealthEntry) {
    assert_eq!(
        (entry.status, entry.outcome, entry.description.as_deref()),
        (
            HealthStatus::Unhealthy,
            EntryOutcome::Errored,
            Some(ERRORED_DESCRIPTION)
        ),
        "{entry:?}"
    );
}

/// The SQL of the custom-query probes: one row of the table the service needs.
const DEPLOYMENTS_SQL: &str = "SELECT id FROM deployments LIMIT 1";

/// The same query through `with_check`, over the application's handle.
fn deployments_check_probe(conn: DatabaseConnection) -> DatabaseProbe {
    DatabaseProbe::with_check(conn, |conn: DatabaseConnection| async move {
        let stmt = Statement::from_string(conn.get_database_backend(), DEPLOYMENTS_SQL);
        conn.query_one_raw(stmt).await.map(drop)
    })
}

/// A ping through the application's pool, which waits and retries as the
/// pool does: what the built-in probe's own connection is compared with.
fn pool_ping_probe(conn: DatabaseConnection) -> DatabaseProbe {
    DatabaseProbe::with_check(
        conn,
        |conn: DatabaseConnection| async move { conn.ping().await },
    )
}

/// Asserts that `by_query` (a `with_query` probe over `conn`) and the same
/// query through `with_check` are Errored while `deployments` is missing
/// and Healthy once `conn` creates it. Returns `by_query`'s registry.
async fn custom_queries_follow_the_table(
    conn: &DatabaseConnection,
    by_query: DatabaseProbe,
) -> HealthRegistry {
    let by_query = registry(by_query);
    let by_check = registry(deployments_check_probe(conn.clone()));
    for reg in [&by_query, &by_check] {
        assert_errored(&check(reg).await.0);
    }
    create_deployments(conn).await;
    for reg in [&by_query, &by_check] {
        assert_healthy(&check(reg).await.0);
    }
    by_query
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
    // A shared in-memory database: the probe's own connection and the
    // application's pool see the same tables.
    let conn = connect(&mut ConnectOptions::new("sqlite::memory:")).await;
    custom_queries_follow_the_table(
        &conn,
        DatabaseProbe::with_query(conn.clone(), DEPLOYMENTS_SQL),
    )
    .await;
}

#[tokio::test]
async fn sqlite_exhausted_pool_does_not_hold_up_the_probe() {
    // sea-orm's SQLite pool has one connection; an open transaction holds it.
    let conn = connect(&mut ConnectOptions::new("sqlite::memory:")).await;
    let pinging = registry(DatabaseProbe::new(conn.clone()));
    let querying = registry(DatabaseProbe::with_query(conn.clone(), "SELECT 1"));
    let through_pool = registry(pool_ping_probe(conn.clone()));
    let held = conn.begin().await.unwrap();
    held.execute_unprepared("SELECT 1").await.unwrap();

    assert_healthy(&check(&pinging).await.0);
    assert_healthy(&check(&querying).await.0);
    // `with_check` over the application's pool queues as documented, and
    // the deadline still bounds it.
    let (entry, _) = check(&through_pool).await;
    assert_eq!(
        (entry.status, entry.outcome),
        (HealthStatus::Unhealthy, EntryOutcome::TimedOut)
    );
    held.rollback().await.unwrap();
    assert_healthy(&check(&through_pool).await.0);
}

#[tokio::test]
async fn sqlite_closed_application_pool_is_errored() {
    // The application closing its pool is shutting down: not ready, though
    // the probe's own connection could still reach the database.
    let conn = connect(&mut ConnectOptions::new("sqlite::memory:")).await;
    let reg = registry(DatabaseProbe::new(conn.clone()));
    assert_healthy(&check(&reg).await.0);
    conn.close_by_ref().await.unwrap();
    assert_errored(&check(&reg).await.0);
}

/// A fresh directory for one test's SQLite file, removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("zb-health-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    /// The `sqlite://` URL of `file` in it, created on first connect.
    fn url(&self, file: &str) -> String {
        format!("sqlite://{}?mode=rwc", self.0.join(file).display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The probe's error: the text the executor logs (never served).
async fn error_of(probe: &DatabaseProbe) -> String {
    match probe.check().await {
        Ok(result) => panic!("expected a failed check, got {result:?}"),
        Err(e) => e.to_string(),
    }
}

/// Another connection, not the application's, holding `BEGIN EXCLUSIVE`
/// on the SQLite file at `url` (as another process would).
async fn hold_exclusive(url: &str) -> SqliteConnection {
    let mut holder = SqliteConnection::connect(url).await.unwrap();
    sqlx::raw_sql("BEGIN EXCLUSIVE")
        .execute(&mut holder)
        .await
        .unwrap();
    holder
}

/// The journal mode `conn`'s database is in.
async fn journal_mode(conn: &DatabaseConnection) -> String {
    let stmt = Statement::from_string(conn.get_database_backend(), "PRAGMA journal_mode");
    let row = conn.query_one_raw(stmt).await.unwrap().unwrap();
    row.try_get_by_index(0).unwrap()
}

/// A new file through `connect`, in the journal mode it leaves a new file
/// in (`delete`, asserted), with its `deployments` table; a registry of
/// `DatabaseProbe::new` over it, and a second such probe to run directly.
async fn new_file(dir: &TempDir) -> (DatabaseConnection, HealthRegistry, DatabaseProbe) {
    let conn = zb_health::database::connect(&dir.url("app.db"))
        .await
        .unwrap();
    assert_eq!(journal_mode(&conn).await, "delete");
    create_deployments(&conn).await;
    let reg = registry(DatabaseProbe::new(conn.clone()));
    let probe = DatabaseProbe::new(conn.clone());
    (conn, reg, probe)
}

/// `DatabaseProbe::new` on SQLite fails while another connection holds the
/// file with `BEGIN EXCLUSIVE`, at once (`Errored` with SQLite's "database
/// is locked", not the deadline), and passes again once it is released, in
/// the journal mode `zb_health::database::connect` leaves a new file in
/// (`delete`). The first failing run is on the probe's kept connection,
/// whose schema is cached: its read still takes the shared lock.
#[tokio::test]
async fn sqlite_new_fails_while_the_file_is_held_exclusive_and_recovers() {
    let dir = TempDir::new("sqlite-locked");
    let (_conn, reg, probe) = new_file(&dir).await;
    for _ in 0..2 {
        assert_healthy(&check(&reg).await.0);
        assert!(probe.check().await.is_ok());
    }

    let mut holder = hold_exclusive(&dir.url("app.db")).await;
    for _ in 0..2 {
        assert_errored(&check(&reg).await.0);
        let error = error_of(&probe).await;
        println!("delete mode, held exclusive -> {error}");
        assert!(
            error.contains("database is locked")
                && error.contains("cannot read the database file")
                && error.contains("app.db"),
            "{error}"
        );
    }
    // The service's own reads are refused too (here with no lock wait).
    let read = connect(
        ConnectOptions::new(dir.url("app.db"))
            .map_sqlx_sqlite_opts(|o| o.busy_timeout(Duration::ZERO)),
    )
    .await;
    assert!(read.execute_unprepared(DEPLOYMENTS_SQL).await.is_err());

    sqlx::raw_sql("ROLLBACK")
        .execute(&mut holder)
        .await
        .unwrap();
    assert_healthy(&check(&reg).await.0);
    assert!(probe.check().await.is_ok());
}

/// In WAL mode a held write lock, even `BEGIN EXCLUSIVE`, blocks writers
/// only: `DatabaseProbe::new`'s read passes, as the service's own reads do.
/// A service that must write passes `with_query` `BEGIN IMMEDIATE;
/// ROLLBACK`, which fails while the lock is held, and also while the
/// service's own write transaction is open (WAL cannot tell the two apart),
/// as the docs say.
#[tokio::test]
async fn sqlite_new_passes_in_wal_mode_while_the_file_is_held_exclusive() {
    let dir = TempDir::new("sqlite-wal");
    let conn = connect(
        ConnectOptions::new(dir.url("app.db"))
            .map_sqlx_sqlite_opts(|o| o.journal_mode(SqliteJournalMode::Wal)),
    )
    .await;
    assert_eq!(journal_mode(&conn).await, "wal");
    create_deployments(&conn).await;
    let default = registry(DatabaseProbe::new(conn.clone()));
    let reading = registry(DatabaseProbe::with_query(conn.clone(), DEPLOYMENTS_SQL));
    let writing = DatabaseProbe::with_query(conn.clone(), WRITE_LOCK_SQL);
    assert!(writing.check().await.is_ok());

    let mut holder = hold_exclusive(&dir.url("app.db")).await;
    assert_healthy(&check(&default).await.0);
    assert_healthy(&check(&reading).await.0);
    conn.execute_unprepared(DEPLOYMENTS_SQL).await.unwrap();
    let error = error_of(&writing).await;
    println!("wal mode, held exclusive -> with_query({WRITE_LOCK_SQL:?}): {error}");
    assert!(error.contains("database is locked"), "{error}");
    sqlx::raw_sql("ROLLBACK")
        .execute(&mut holder)
        .await
        .unwrap();
    assert!(writing.check().await.is_ok());

    // The write-lock query's price: the service's own write transaction.
    let own = conn.begin().await.unwrap();
    own.execute_unprepared("INSERT INTO deployments (id) VALUES (2)")
        .await
        .unwrap();
    assert!(error_of(&writing).await.contains("database is locked"));
    assert_healthy(&check(&default).await.0);
    own.commit().await.unwrap();
    assert!(writing.check().await.is_ok());
}

/// The `with_query` statement that takes the write lock and writes nothing.
const WRITE_LOCK_SQL: &str = "BEGIN IMMEDIATE; ROLLBACK";

/// A file that was never created fails the probe, which never creates it
/// (the application's `mode=rwc` is not the probe's), and passes once the
/// application has created it; a file deleted under the running service
/// fails it although every open connection still reads the deleted file.
#[tokio::test]
async fn sqlite_new_fails_on_a_missing_file_never_creating_it() {
    let dir = TempDir::new("sqlite-missing");
    let path = dir.0.join("app.db");
    // Lazy: the application has not opened the file yet.
    let conn = connect(ConnectOptions::new(dir.url("app.db")).connect_lazy(true)).await;
    let reg = registry(DatabaseProbe::new(conn.clone()));
    let probe = DatabaseProbe::new(conn.clone());
    assert_errored(&check(&reg).await.0);
    let error = error_of(&probe).await;
    assert!(
        error.contains("cannot open the database file") && error.contains("app.db"),
        "{error}"
    );
    assert!(!path.exists(), "the probe created the file");

    // The application's first statement creates it.
    create_deployments(&conn).await;
    assert_healthy(&check(&reg).await.0);
    assert!(probe.check().await.is_ok());

    // Deleted while open: the application's connection still works on the
    // unlinked file; the probe's kept connection notices, and so does every
    // run after it.
    std::fs::remove_file(&path).unwrap();
    conn.execute_unprepared("SELECT id FROM deployments")
        .await
        .unwrap();
    assert_errored(&check(&reg).await.0);
    let error = error_of(&probe).await;
    assert!(
        error.contains("app.db") && error.contains("is gone"),
        "{error}"
    );
    assert_errored(&check(&reg).await.0);
    let error = error_of(&probe).await;
    assert!(error.contains("cannot open the database file"), "{error}");
    assert!(!path.exists(), "the probe created the file");
}

/// A file replaced under the running service (a restore moved into place)
/// fails the run that notices it, and the next run checks the new file.
#[tokio::test]
async fn sqlite_new_fails_once_on_a_replaced_file_then_checks_the_new_one() {
    let dir = TempDir::new("sqlite-replaced");
    let conn = connect(&mut ConnectOptions::new(dir.url("app.db"))).await;
    create_deployments(&conn).await;
    let probe = DatabaseProbe::new(conn.clone());
    assert!(probe.check().await.is_ok());

    let restored = connect(&mut ConnectOptions::new(dir.url("restored.db"))).await;
    create_deployments(&restored).await;
    restored.close().await.unwrap();
    std::fs::rename(dir.0.join("restored.db"), dir.0.join("app.db")).unwrap();
    let error = error_of(&probe).await;
    assert!(
        error.contains("app.db") && error.contains("was replaced"),
        "{error}"
    );
    assert!(probe.check().await.is_ok());
}

/// The service's own write transaction, open longer than the probe's
/// 100 ms lock wait, does not fail `DatabaseProbe::new` in the
/// rollback-journal mode: it holds the `RESERVED` lock, which the probe's
/// read (a `SHARED` lock) passes.
#[tokio::test]
async fn sqlite_new_passes_while_the_services_own_write_transaction_is_open() {
    let dir = TempDir::new("sqlite-writing");
    let (conn, reg, probe) = new_file(&dir).await;
    let writing = conn.begin().await.unwrap();
    writing
        .execute_unprepared("INSERT INTO deployments (id) VALUES (2)")
        .await
        .unwrap();
    // Open past the lock wait before the first run, and through every run.
    tokio::time::sleep(Duration::from_millis(200)).await;
    for _ in 0..3 {
        assert_healthy(&check(&reg).await.0);
        assert!(probe.check().await.is_ok());
    }
    writing.commit().await.unwrap();
    assert_healthy(&check(&reg).await.0);
}

/// A service that opens its file read-only passes: the default only reads.
#[tokio::test]
async fn sqlite_new_passes_on_a_read_only_connection() {
    let dir = TempDir::new("sqlite-read-only");
    create_deployments(&connect(&mut ConnectOptions::new(dir.url("app.db"))).await).await;
    let url = format!("sqlite://{}?mode=ro", dir.0.join("app.db").display());
    let conn = connect(&mut ConnectOptions::new(url)).await;
    assert_healthy(&check(&registry(DatabaseProbe::new(conn))).await.0);
}

#[tokio::test]
async fn sqlite_unopenable_file_is_errored_and_healthy_once_it_can_be_opened() {
    // SQLite has no server to stop; its outage is a file it cannot open.
    let root = std::env::temp_dir().join(format!("zb-health-sqlite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let url = format!("sqlite://{}?mode=rwc", root.join("app.db").display());
    let conn = connect(ConnectOptions::new(url).connect_lazy(true)).await;
    let reg = registry(DatabaseProbe::new(conn.clone()));
    assert_errored(&check(&reg).await.0);

    // The directory is back and the application opens (creates) the file.
    std::fs::create_dir_all(&root).unwrap();
    conn.execute_unprepared("SELECT 1").await.unwrap();
    assert_healthy(&check(&reg).await.0);
    std::fs::remove_dir_all(&root).unwrap();
}

// --- PostgreSQL --------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_ping_is_healthy() {
    let pg = Postgres::start();
    let conn = connect(&mut ConnectOptions::new(pg.url())).await;
    let (entry, _) = check(&registry(DatabaseProbe::new(conn))).await;
    assert_healthy(&entry);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_is_errored_at_once_not_timed_out() {
    let pg = Postgres::start();
    let conn = connect(&mut ConnectOptions::new(pg.url())).await;
    let pinging = registry(DatabaseProbe::new(conn.clone()));
    let querying = registry(DatabaseProbe::with_query(conn.clone(), "SELECT 1"));
    // Beside them, one whose error is read: it names the cause.
    let probe = DatabaseProbe::new(conn);
    for reg in [&pinging, &querying] {
        assert_healthy(&check(reg).await.0);
    }
    assert!(probe.check().await.is_ok());

    pg.stop();
    for run in 0..2 {
        let error = error_of(&probe).await;
        println!("postgres stopped -> the probe's error, run {run}: {error}");
        assert!(
            error.starts_with("cannot connect to the database: ") && error.contains("refused"),
            "{error}"
        );
    }
    // Three runs each: the first finds its kept connection cut and connects
    // afresh, the later ones start with none; every one is the refused
    // connect, reported as the probe's error.
    for (name, reg) in [("new", &pinging), ("with_query", &querying)] {
        for run in 0..3 {
            let (entry, took) = check(reg).await;
            assert_errored(&entry);
            println!("postgres stopped -> {name} run {run}: Errored in {took:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restarted_makes_the_same_probe_healthy_again() {
    let pg = Postgres::start();
    let conn = connect(&mut ConnectOptions::new(pg.url())).await;
    let reg = registry(DatabaseProbe::new(conn));
    assert_healthy(&check(&reg).await.0);

    pg.stop();
    assert_errored(&check(&reg).await.0);

    // Same registry, probe, pool: nothing is rebuilt, the server comes back.
    pg.start_again();
    let restarted = Instant::now();
    let mut last = None;
    while restarted.elapsed() < PATIENCE {
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
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("still not Healthy {PATIENCE:?} after the restart: {last:?}");
}

/// The backend pids of the test role other than the caller's own.
async fn other_backends(conn: &DatabaseConnection) -> Vec<i32> {
    let sql = format!(
        "SELECT pid FROM pg_stat_activity WHERE usename = '{USER}' \
         AND pid <> pg_backend_pid() ORDER BY pid"
    );
    let stmt = Statement::from_string(conn.get_database_backend(), sql);
    let rows = conn.query_all_raw(stmt).await.unwrap();
    rows.iter()
        .map(|row| row.try_get("", "pid").unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_probe_keeps_its_connection_and_replaces_a_cut_one_in_the_same_run() {
    let pg = Postgres::start();
    // One application connection, so every other backend of the role is
    // the probe's.
    let conn = connect(ConnectOptions::new(pg.url()).max_connections(1)).await;
    let reg = registry(DatabaseProbe::new(conn.clone()));
    assert!(other_backends(&conn).await.is_empty());

    assert_healthy(&check(&reg).await.0);
    let first = other_backends(&conn).await;
    assert_eq!(first.len(), 1, "the probe's own connection: {first:?}");
    for _ in 0..3 {
        assert_healthy(&check(&reg).await.0);
    }
    // Concurrent runs take turns on it rather than opening more.
    let runs = tokio::join!(check(&reg), check(&reg), check(&reg), check(&reg));
    for (entry, _) in [runs.0, runs.1, runs.2, runs.3] {
        assert_healthy(&entry);
    }
    assert_eq!(other_backends(&conn).await, first, "kept between runs");

    // An administrator cuts it (the server says "terminating connection"
    // on it): the next run reconnects and passes, no false outage.
    let sql = format!("SELECT pg_terminate_backend({}, 10000)", first[0]);
    conn.execute_unprepared(&sql).await.unwrap();
    assert_healthy(&check(&reg).await.0);
    let second = other_backends(&conn).await;
    assert_eq!(second.len(), 1, "{second:?}");
    assert_ne!(second, first, "a new connection replaced the cut one");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_run_dropped_at_the_deadline_leaves_the_probe_usable() {
    let pg = Postgres::start();
    let conn = connect(&mut ConnectOptions::new(pg.url())).await;
    conn.execute_unprepared("CREATE TABLE slow (x INT)")
        .await
        .unwrap();
    // Sleeps past the deadline while `slow` has a row: the executor drops
    // the run mid-query, with the probe's connection in use.
    let sql = "SELECT pg_sleep(CASE WHEN EXISTS (SELECT 1 FROM public.slow) THEN 10 ELSE 0 END)";
    let reg = registry(DatabaseProbe::with_query(conn.clone(), sql));
    assert_healthy(&check(&reg).await.0);

    conn.execute_unprepared("INSERT INTO slow VALUES (1)")
        .await
        .unwrap();
    let (entry, _) = check(&reg).await;
    assert_eq!(
        (entry.status, entry.outcome),
        (HealthStatus::Unhealthy, EntryOutcome::TimedOut)
    );

    // Nothing was left locked or half-read: the same probe passes at once.
    conn.execute_unprepared("DELETE FROM slow").await.unwrap();
    assert_healthy(&check(&reg).await.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_exhausted_pool_does_not_hold_up_the_probe() {
    let pg = Postgres::start();
    // sqlx would wait 30 s for a pooled connection.
    let conn = connect(
        ConnectOptions::new(pg.url())
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(30)),
    )
    .await;
    let pinging = registry(DatabaseProbe::new(conn.clone()));
    let querying = registry(DatabaseProbe::with_query(conn.clone(), "SELECT 1"));
    let through_pool = registry(pool_ping_probe(conn.clone()));
    assert_healthy(&check(&through_pool).await.0);

    // The pool's one connection, held by an open transaction.
    let held = conn.begin().await.unwrap();
    held.execute_unprepared("SELECT 1").await.unwrap();
    assert_healthy(&check(&pinging).await.0);
    assert_healthy(&check(&querying).await.0);
    // `with_check` over the application's pool waits in its queue, as
    // documented; the probe's deadline, not `acquire_timeout`, ends it.
    let (entry, took) = check(&through_pool).await;
    println!("exhausted pool -> with_check over the pool: {entry:?} after {took:?}");
    assert_eq!(
        (entry.status, entry.outcome),
        (HealthStatus::Unhealthy, EntryOutcome::TimedOut)
    );

    // The cancelled wait left nothing behind: once the connection is back,
    // the same probe passes.
    held.rollback().await.unwrap();
    assert_healthy(&check(&through_pool).await.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_custom_query_fails_on_a_missing_table_and_passes_once_it_exists() {
    let pg = Postgres::start();
    let conn = connect(&mut ConnectOptions::new(pg.url())).await;
    // An owned string, schema-qualified: the probe's connection runs no
    // `after_connect` hook that could set a search path.
    let sql = String::from("SELECT id FROM public.deployments LIMIT 1");
    let by_query =
        custom_queries_follow_the_table(&conn, DatabaseProbe::with_query(conn.clone(), sql)).await;
    // The query runs on the probe's own connection, so it fails fast too.
    pg.stop();
    assert_errored(&check(&by_query).await.0);
}

/// Polls `GET /health/ready` on `addr` as an orchestrator would (a request,
/// a short pause, again) until it answers 503: the answer and when it came,
/// counted from `killed`.
async fn first_503(addr: std::net::SocketAddr, killed: Instant) -> (Duration, Wire) {
    loop {
        let r = request(addr, "GET", "/health/ready").await;
        if r.status == 503 {
            return (killed.elapsed(), r);
        }
        assert_eq!(r.status, 200);
        assert!(killed.elapsed() < PATIENCE, "no 503 within {PATIENCE:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[actix_web::test]
async fn postgres_kill_to_first_503_is_the_refused_connect_not_the_deadline() {
    let pg = Arc::new(Postgres::start());
    let conn = connect(&mut ConnectOptions::new(pg.url())).await;
    // The built-in probe, and beside it a ping through the application's
    // pool (`pool_ping_probe`) for comparison.
    let built_in = serve(map_zb_health(registry(DatabaseProbe::new(conn.clone()))));
    let pooled = serve(map_zb_health(registry(pool_ping_probe(conn))));
    for server in [&built_in, &pooled] {
        assert_eq!(
            request(server.addr, "GET", "/health/ready").await.status,
            200
        );
    }

    // The kill runs on its own thread while both are polled.
    let killed = Instant::now();
    let stopper = {
        let pg = Arc::clone(&pg);
        std::thread::spawn(move || {
            pg.stop();
            killed.elapsed()
        })
    };
    let ((new_at, new_r), (old_at, old_r)) = tokio::join!(
        first_503(built_in.addr, killed),
        first_503(pooled.addr, killed)
    );
    let stop_took = stopper.join().unwrap();

    println!(
        "kill -> first 503: built-in probe {new_at:?} ({}), ping through the app pool \
         {old_at:?} ({}); `pg_ctl stop -m immediate -w` itself returned after {stop_took:?}",
        new_r.json()["entries"]["database"]["description"],
        old_r.json()["entries"]["database"]["description"],
    );
    // The built-in probe's 503 is its own error, not the deadline's.
    assert_eq!(
        new_r.json()["entries"]["database"]["description"],
        ERRORED_DESCRIPTION
    );
    // And so is every later one during the outage. Each one's round trip
    // is printed beside the pooled ping's, which after its first answer
    // waits out the deadline on every request.
    for (name, server) in [
        ("built-in probe", &built_in),
        ("ping through the pool", &pooled),
    ] {
        let mut answers = Vec::new();
        for _ in 0..3 {
            let sent = Instant::now();
            let r = request(server.addr, "GET", "/health/ready").await;
            assert_eq!(r.status, 503);
            let description = r.json()["entries"]["database"]["description"].clone();
            if name == "built-in probe" {
                assert_eq!(description, ERRORED_DESCRIPTION);
            }
            answers.push(format!("{description} in {:?}", sent.elapsed()));
        }
        println!("outage, later requests -> {name}: {answers:?}");
    }
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
    assert_eq!(format!("{probe:?}"), "DatabaseProbe { .. }");
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
