//! The database probe (ZB-2.1), over sea-orm.
//!
//! [`DatabaseProbe::new`] answers "can this service use its database": a
//! round trip to a PostgreSQL server, a read of a SQLite file under its
//! shared lock (see [what the default proves](#what-the-default-proves));
//! [`DatabaseProbe::with_query`] runs the caller's own read-only SQL instead,
//! such as reading one row of the table the service cannot work without.
//! Both run on **the probe's own connection**, not on the application's pool.
//!
//! # Why a connection of its own
//!
//! A readiness check must say "down" as soon as the database is down, and it
//! must never wait in the application's request queue (BE-HLTH-006). The
//! application's sqlx pool does neither: when it has to open a connection
//! and the server refuses it, it retries with backoff until its acquire
//! deadline (it takes a refusal for a server still starting), and when all
//! its connections are checked out it queues the caller behind the
//! application's requests. Through the pool, a stopped PostgreSQL would
//! answer `timed out` at the probe's deadline on every readiness request,
//! and so would an exhausted pool although the database is fine.
//!
//! So the probe opens one connection directly with the pool's current
//! connect options (URL, credentials, TLS; read again at every reconnect, so
//! `set_connect_options` is honoured) and keeps it between runs:
//!
//! * a run checks over the kept connection (the default check below, or
//!   the query);
//! * a kept connection whose check fails is dropped; on PostgreSQL one
//!   fresh connection is opened and checked in the same run, so a stale one
//!   (the server restarted, an idle connection was cut, an administrator
//!   terminated it) never shows as an outage. A SQLite connection does not
//!   go stale, so there the failed check is the answer and the next run
//!   opens a fresh one. Only a connection whose check passed is kept;
//! * opening a connection is one attempt: a refused connection is an error
//!   in milliseconds, reported as the probe's error (`Errored`, not
//!   `TimedOut`). Only a server that does not answer at all (a dropped SYN,
//!   a hung host) still runs into the executor's deadline.
//!
//! The cost is one extra server connection per probe while the database is
//! up; count it in the server's `max_connections`. The pool's
//! `after_connect` hooks (and sea-orm's `set_schema_search_path`, which is
//! one) do not run on it, so [`with_query`](DatabaseProbe::with_query) SQL
//! should schema-qualify its tables. A closed application pool (the
//! application is shutting down) answers Unhealthy without connecting.
//!
//! Runs of one probe take turns on its connection: a request that arrives
//! while a run is in flight waits for that run (a round trip, or at worst
//! the deadline), never for the application.
//!
//! PostgreSQL and SQLite pools get this path, each with its feature
//! (`postgres`, `sqlite`; each enables `database` and the sea-orm driver).
//! Any other sea-orm connection (MySQL through a driver the application
//! enables on sea-orm, a mock, a proxy) is pinged, or queried, through its
//! own pool, as sea-orm checks it.
//!
//! # What the default proves
//!
//! **PostgreSQL**: a ping, which is a round trip on the probe's own
//! connection (a `Sync` message answered by `ReadyForQuery`). A stopped
//! server fails it at once with `cannot connect to the database: …
//! Connection refused`; a server that stopped answering fails it at the
//! deadline.
//!
//! **SQLite**, a database file: a read of the file under its shared lock
//! (`SELECT count(*) FROM sqlite_master`, which takes the lock on every
//! run, the schema cached or not; a ping or `SELECT 1` touches no file).
//! A run fails, naming its cause in the logged error, when:
//!
//! * the file's lock keeps readers out for longer than 100 ms: another
//!   connection or process holds it with `BEGIN EXCLUSIVE` in the
//!   rollback-journal mode (`cannot read the database file <path> within
//!   100ms: … database is locked`). The probe's connection waits 100 ms for
//!   a lock (the application's pool keeps its own busy timeout, sqlx's 5 s
//!   by default), so a held lock is reported as itself, well inside the
//!   default deadline of 800 ms, not as `timed out`;
//! * there is no file at the path: never created, or deleted (`cannot open
//!   the database file <path>: …`). The probe's connection never creates
//!   the file, whatever the application's URL says (`mode=rwc`): a probe
//!   that created it would turn a deleted database into an empty one that
//!   passes;
//! * the file at the path is no longer the one the probe's connection
//!   opened: deleted, or replaced, while open (`the database file <path> is
//!   gone`, `… was replaced since the probe opened it`). SQLite keeps
//!   reading an unlinked file, so the probe compares the path's file
//!   (device and inode) with the one it opened before every run; the run
//!   after a replacement opens the new file;
//! * the file is not a database (the read starts at its header).
//!
//! What a lock does to it depends on the journal mode, as it does to the
//! service's own reads:
//!
//! * rollback journal (`delete`, the mode a new file gets from [`connect`]
//!   or sea-orm's `Database::connect`, as neither sets one): `BEGIN
//!   EXCLUSIVE` elsewhere fails the probe. The service's own write
//!   transaction does not, however long it is open: it holds the
//!   `RESERVED` lock, which readers pass. Only while it commits (or once
//!   its changes overflow its page cache) does it hold the file exclusive:
//!   the service's reads wait then too, and the probe fails if that lasts
//!   past its 100 ms;
//! * WAL: a held write lock, even `BEGIN EXCLUSIVE`, blocks writers only;
//!   the default, like the service's reads, still passes. A service that
//!   must write can pass [`with_query`](DatabaseProbe::with_query) `BEGIN
//!   IMMEDIATE; ROLLBACK`, which takes the write lock and writes nothing;
//!   it then fails whenever any write transaction, the service's own
//!   included, holds the lock past the 100 ms lock wait, since WAL cannot
//!   tell one from `BEGIN EXCLUSIVE`.
//!
//! Why not the write lock by default: in either mode it would fail
//! readiness whenever the service's own ordinary write transaction (a
//! batch import, a long migration step) lasts over 100 ms, an outage no
//! user expects from a health check. A connection opened read-only
//! (`mode=ro`) reads, so the default passes there.
//!
//! An in-memory SQLite database has no file to lock or lose, and no other
//! process can reach it: there the default is a ping.
//!
//! [`with_query`](DatabaseProbe::with_query) runs its statement instead of
//! the default, on the same connection: on SQLite, too, the file is never
//! created, a lock is waited for 100 ms and a deleted or replaced file
//! fails the run.
//!
//! [`DatabaseProbe::with_check`] is the general override: the caller's own
//! async function over the caller's own handle. It runs exactly as written,
//! so over the application's pool it waits and retries as that pool does,
//! bounded by the probe's deadline (`TimedOut`). Prefer `with_query` unless
//! the check needs more than SQL text (sea-orm entities, logic between
//! statements).
//!
//! # Deadline and cancellation
//!
//! The probe sets no timeout of its own: the executor runs it under the
//! registration's deadline and drops the future when that passes (AT-4).
//! Dropping is safe: the kept connection is taken out of its slot while a
//! run uses it, so a run dropped mid-round-trip drops that connection
//! (closing its socket) instead of leaving it half-way through the protocol
//! for the next run, which opens a fresh one.
//!
//! # Disclosure
//!
//! A failed check is returned as `Err`, so its text (which may name hosts,
//! databases or users) goes to the log and never into the response body
//! (BE-HLTH-007); the body shows only the executor's fixed description.
//! `Debug` shows neither the connection nor the SQL.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;
// The direct path exists only with a driver feature: sea-orm re-exports
// sqlx (and has pool variants) only with a driver.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use sea_orm::DatabaseConnectionType;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use sea_orm::sqlx::{self, ConnectOptions as _, Connection as _};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use tokio::sync::Mutex;

use crate::probe::{Probe, ProbeError, ProbeOutcome, ProbeResult};

/// The sea-orm this crate was built with, so applications and generated code
/// name the same `DatabaseConnection` type the probe accepts.
pub use sea_orm;

/// Opens a connection for the probe (sea-orm's `Database::connect`) with
/// the error a service's `main` returns: an `std::io::Error` that names
/// the URL without its password, so `?` works in a `main` that returns
/// [`StartError`](crate::prelude::StartError), as the server's own errors do, or
/// `std::io::Result`.
///
/// sqlx's statement log is off on it: sqlx logs every statement at `info`,
/// so a probe's query every few seconds would fill an application's log.
/// The application's own pool, opened with sea-orm, keeps its setting.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// use zb_health::database::{DatabaseProbe, connect};
///
/// let conn = connect("sqlite://orders.db?mode=rwc").await?;
/// let probe = DatabaseProbe::new(conn);
/// # let _ = probe; Ok(()) }
/// ```
///
/// # Errors
///
/// The database cannot be opened (or the URL names no driver this build
/// has: the features `sqlite` and `postgres` add them).
pub async fn connect(url: &str) -> std::io::Result<DatabaseConnection> {
    let mut options = sea_orm::ConnectOptions::new(url);
    options.sqlx_logging(false);
    sea_orm::Database::connect(options).await.map_err(|e| {
        std::io::Error::other(format!(
            "cannot open the database at {}: {e}",
            zb_health_spec::upstream::without_password(url)
        ))
    })
}

/// The description of a passing database probe. Fixed text: it is served to
/// anyone who can reach the endpoint, so it never carries a URL or an error.
pub(crate) const REACHABLE_DESCRIPTION: &str = "database reachable";

/// The check a probe runs: given a clone of the connection, it resolves to
/// `Ok(())` when the database is usable.
type Check<C> = Box<dyn Fn(C) -> BoxFuture<'static, Result<(), ProbeError>> + Send + Sync>;

/// The database probe (ZB-2.1): tag `ready`, healthy when its check passes.
///
/// Generic over the connection `C`, so [`with_check`](Self::with_check)
/// serves any handle a caller's check knows how to use: a wrapper type, a
/// restricted connection, an `Arc` around one. [`new`](Self::new) and
/// [`with_query`](Self::with_query) take a plain [`DatabaseConnection`] and
/// check over a connection of the probe's own (see the [module
/// docs](self)).
///
/// On success the entry is `Healthy` with the fixed description
/// `"database reachable"`; on failure the check's error is returned as the
/// probe's error, which the executor logs and reports as `"check failed"`.
///
/// ```no_run
/// # async fn demo() -> Result<(), zb_health::database::sea_orm::DbErr> {
/// use zb_health::database::{sea_orm, DatabaseProbe};
/// use zb_health::prelude::{HealthRegistry, ProbeRegistration};
///
/// let conn = sea_orm::Database::connect("postgres://app@db/app").await?;
/// let registry = HealthRegistry::new();
/// registry.add(ProbeRegistration::new("database", DatabaseProbe::new(conn))).unwrap();
/// # Ok(()) }
/// ```
pub struct DatabaseProbe<C = DatabaseConnection> {
    conn: C,
    check: Check<C>,
}

impl DatabaseProbe {
    /// A probe that proves the database usable (the ZB-2.1 default, "can
    /// connect") over a connection of its own, opened with `conn`'s connect
    /// options and kept between runs: a round trip to a PostgreSQL server;
    /// on a SQLite file, a read under the file's shared lock, so a file held
    /// with `BEGIN EXCLUSIVE` (in the rollback-journal mode, not in WAL
    /// mode), a missing file or a deleted one fails it (the [module
    /// docs](self#what-the-default-proves) say exactly what). It never takes a connection from `conn`'s pool, so it neither
    /// waits behind the application nor retries a refused connect: with the
    /// server down it fails at once.
    ///
    /// No connection is opened here; the first run opens it.
    pub fn new(conn: DatabaseConnection) -> Self {
        Self::direct(conn, None)
    }

    /// A probe that runs `sql` (the ZB-2.1 custom-query override) over the
    /// probe's own connection, instead of [`new`](Self::new)'s default
    /// check: healthy when the statement runs without error, whatever rows
    /// it returns.
    ///
    /// Use it to catch what the default misses, such as a missing table or
    /// a revoked permission, or, on a SQLite file in WAL mode, `BEGIN
    /// IMMEDIATE; ROLLBACK` to take the write lock the default does not
    /// (the [module docs](self#what-the-default-proves) say what that
    /// costs). Keep it read-only and cheap (BE-HLTH-006): it runs on every
    /// readiness request. It is sent as a simple query with no
    /// parameters, so it must be a constant of the application, never user
    /// input. The pool's `after_connect` hooks (e.g. a search path) do not
    /// run on the probe's connection: schema-qualify the tables.
    ///
    /// ```no_run
    /// use zb_health::database::sea_orm::DatabaseConnection;
    /// use zb_health::database::DatabaseProbe;
    ///
    /// fn probe(conn: DatabaseConnection) -> DatabaseProbe {
    ///     DatabaseProbe::with_query(conn, "SELECT 1 FROM public.deployments LIMIT 1")
    /// }
    /// ```
    pub fn with_query(conn: DatabaseConnection, sql: impl Into<Cow<'static, str>>) -> Self {
        Self::direct(conn, Some(Arc::from(&*sql.into())))
    }

    /// The probe over its own connection to `conn`'s database, running
    /// `sql` or, without it, the backend's default check.
    fn direct(conn: DatabaseConnection, sql: Option<Arc<str>>) -> Self {
        match &conn.inner {
            #[cfg(feature = "postgres")]
            DatabaseConnectionType::SqlxPostgresPoolConnection(_) => {
                Direct::<PgOwn>::probe(conn.get_postgres_connection_pool().clone(), conn, sql)
            }
            #[cfg(feature = "sqlite")]
            DatabaseConnectionType::SqlxSqlitePoolConnection(_) => {
                Direct::<SqliteOwn>::probe(conn.get_sqlite_connection_pool().clone(), conn, sql)
            }
            // No direct path for this backend: pinged (or queried) through
            // its own pool, as `DatabaseConnection` itself checks it.
            _ => Self::with_check(conn, move |conn: DatabaseConnection| {
                let sql = sql.clone();
                async move {
                    match sql {
                        None => conn.ping().await,
                        Some(sql) => conn.execute_unprepared(&sql).await.map(drop),
                    }
                }
            }),
        }
    }
}

impl<C> DatabaseProbe<C>
where
    C: Clone + Send + Sync + 'static,
{
    /// A probe whose check is the caller's own async function over the
    /// caller's own handle (the general ZB-2.1 override), for a check that
    /// needs more than [`with_query`](DatabaseProbe::with_query)'s one
    /// statement, or a handle that is not a plain `DatabaseConnection`.
    ///
    /// `check` gets a clone of `conn` on every run, so its future owns what
    /// it uses and can be dropped at the deadline at any point. It runs as
    /// written: over the application's pool it waits for a free connection
    /// and retries a refused connect as that pool does, until the probe's
    /// deadline (`TimedOut`). To fail fast, give it a handle of its own
    /// (e.g. a one-connection pool) or use `with_query`. Keep it read-only
    /// and cheap (BE-HLTH-006): it runs on every readiness request.
    ///
    /// ```no_run
    /// use zb_health::database::sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
    /// use zb_health::database::DatabaseProbe;
    ///
    /// fn probe(conn: DatabaseConnection) -> DatabaseProbe {
    ///     DatabaseProbe::with_check(conn, |conn: DatabaseConnection| async move {
    ///         let sql = "SELECT 1 FROM deployments LIMIT 1";
    ///         let stmt = Statement::from_string(conn.get_database_backend(), sql);
    ///         conn.query_one_raw(stmt).await.map(drop)
    ///     })
    /// }
    /// ```
    pub fn with_check<F, Fut>(conn: C, check: F) -> Self
    where
        F: Fn(C) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), DbErr>> + Send + 'static,
    {
        Self {
            conn,
            check: Box::new(move |conn| {
                let run = check(conn);
                Box::pin(async move { run.await.map_err(ProbeError::from) })
            }),
        }
    }
}

impl<C> Probe for DatabaseProbe<C>
where
    C: Clone + Send + Sync + 'static,
{
    fn check(&self) -> impl Future<Output = ProbeOutcome> + Send {
        // Started before the `async` block, so the future borrows nothing
        // from `self` and holds only what the check owns.
        let run = (self.check)(self.conn.clone());
        async move {
            run.await?;
            Ok(ProbeResult::healthy().with_description(REACHABLE_DESCRIPTION))
        }
    }
}

/// `conn.into()` where a `DatabaseProbe` is expected, e.g. the field a
/// manifest's `kind: database` entry adds to `HealthDeps`.
impl From<DatabaseConnection> for DatabaseProbe {
    fn from(conn: DatabaseConnection) -> Self {
        Self::new(conn)
    }
}

/// Shows no connection and no SQL: a connection's `Debug` may print its URL
/// and password, and probes end up in logs.
impl<C> fmt::Debug for DatabaseProbe<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatabaseProbe").finish_non_exhaustive()
    }
}

/// A connection of the probe's own, by backend: how it is opened from the
/// application pool's options and what one check runs on it.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
trait OwnConnection: Sized + Send + 'static {
    type Db: sqlx::Database;
    /// Whether a kept connection whose check failed is replaced and checked
    /// again in the same run: a server connection goes stale (a restart, a
    /// cut socket) and must not read as an outage; a SQLite connection does
    /// not, and a second try at a lock would only wait for it twice.
    const RECHECK_FRESH: bool;

    /// One attempt, no retry, with the pool's current connect options.
    fn open(pool: &sqlx::Pool<Self::Db>) -> impl Future<Output = Result<Self, ProbeError>> + Send;

    /// One check: `sql` when given, else the backend's default.
    fn check(
        &mut self,
        sql: Option<&Arc<str>>,
    ) -> impl Future<Output = Result<(), ProbeError>> + Send;
}

/// The probe's own connection to the database behind an application pool.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
struct Direct<C: OwnConnection> {
    /// The application's pool: only its connect options are used, and
    /// whether it is closed; never its connections.
    pool: sqlx::Pool<C::Db>,
    /// The kept connection, `None` before the first run and after a failed
    /// or cancelled one. The lock makes runs take turns on it.
    kept: Mutex<Option<C>>,
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl<C: OwnConnection> Direct<C> {
    /// The probe over `conn` (the application's, whose `pool` it is) that
    /// checks on a connection of its own.
    fn probe(
        pool: sqlx::Pool<C::Db>,
        conn: DatabaseConnection,
        sql: Option<Arc<str>>,
    ) -> DatabaseProbe {
        let direct = Arc::new(Self {
            pool,
            kept: Mutex::new(None),
        });
        let check: Check<DatabaseConnection> = Box::new(move |_| {
            let (direct, sql) = (Arc::clone(&direct), sql.clone());
            Box::pin(async move { direct.check(sql).await })
        });
        DatabaseProbe { conn, check }
    }

    async fn check(&self, sql: Option<Arc<str>>) -> Result<(), ProbeError> {
        let mut kept = self.kept.lock().await;
        if self.pool.is_closed() {
            // The application is shutting down: so does the probe's
            // connection, rather than outlive the pool it shadows.
            *kept = None;
            return Err(sqlx::Error::PoolClosed.into());
        }
        // Out of the slot while in use: if this run is dropped at the
        // deadline, the connection goes with it, mid-protocol or not.
        if let Some(mut conn) = kept.take() {
            match conn.check(sql.as_ref()).await {
                Ok(()) => {
                    *kept = Some(conn);
                    return Ok(());
                }
                Err(e) if !C::RECHECK_FRESH => return Err(e),
                // Whatever failed (a restarted server, a cut socket, or the
                // server's own "terminating connection" error), one fresh
                // connection decides, so a stale one never reads as an
                // outage.
                Err(_) => {}
            }
        }
        let mut conn = C::open(&self.pool).await?;
        conn.check(sql.as_ref()).await?;
        *kept = Some(conn);
        Ok(())
    }
}

/// Runs `sql` (the caller's `with_query`) as a simple query on `conn`.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
async fn run_query<DB>(conn: &mut DB::Connection, sql: &Arc<str>) -> Result<(), ProbeError>
where
    DB: sqlx::Database,
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
{
    sqlx::raw_sql(sqlx::AssertSqlSafe(Arc::clone(sql)))
        .execute(conn)
        .await
        .map(drop)
        .map_err(|e| format!("the probe's query failed: {e}").into())
}

/// PostgreSQL: by default a ping, which is a round trip on the probe's own
/// connection (a `Sync` message answered by `ReadyForQuery`).
#[cfg(feature = "postgres")]
struct PgOwn(sqlx::PgConnection);

#[cfg(feature = "postgres")]
impl OwnConnection for PgOwn {
    type Db = sqlx::Postgres;
    const RECHECK_FRESH: bool = true;

    async fn open(pool: &sqlx::Pool<Self::Db>) -> Result<Self, ProbeError> {
        let conn = pool.connect_options().connect().await;
        conn.map(Self)
            .map_err(|e| format!("cannot connect to the database: {e}").into())
    }

    async fn check(&mut self, sql: Option<&Arc<str>>) -> Result<(), ProbeError> {
        match sql {
            Some(sql) => run_query::<Self::Db>(&mut self.0, sql).await,
            None => self.0.ping().await.map_err(|e| {
                format!("the database did not answer a round trip on the probe's connection: {e}")
                    .into()
            }),
        }
    }
}

/// How long the probe's SQLite connection waits for a lock that another
/// connection holds before it reports `database is locked`. Long enough to
/// ride out an ordinary commit, well below the default deadline (800 ms),
/// so a held lock is reported as itself and not as the deadline. (sqlx's
/// default, which the application's pool keeps, is 5 s.)
#[cfg(feature = "sqlite")]
const SQLITE_LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// SQLite: a connection opened from the pool's options, except that it
/// never creates the file and waits [`SQLITE_LOCK_WAIT`] for a lock; by
/// default it reads the file under its shared lock.
#[cfg(feature = "sqlite")]
struct SqliteOwn {
    conn: sqlx::SqliteConnection,
    /// The file it opened, `None` for an in-memory database.
    file: Option<SqliteFile>,
}

/// A database file and which file it was when the probe opened it.
#[cfg(feature = "sqlite")]
struct SqliteFile {
    path: String,
    id: FileId,
}

/// The error of a read of the database file at `path` that failed, e.g.
/// on a lock held past [`SQLITE_LOCK_WAIT`].
#[cfg(feature = "sqlite")]
fn unreadable(path: impl fmt::Display, e: &sqlx::Error) -> ProbeError {
    format!("cannot read the database file {path} within {SQLITE_LOCK_WAIT:?}: {e}").into()
}

/// What tells one file from another at the same path: device and inode.
#[cfg(all(feature = "sqlite", unix))]
type FileId = (u64, u64);
/// Elsewhere only whether a file is there.
#[cfg(all(feature = "sqlite", not(unix)))]
type FileId = ();

/// The file now at `path` (a local `stat`, so not worth a blocking task).
#[cfg(feature = "sqlite")]
fn file_id(path: &str) -> std::io::Result<FileId> {
    let meta = std::fs::metadata(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Ok((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        Ok(())
    }
}

#[cfg(feature = "sqlite")]
impl OwnConnection for SqliteOwn {
    type Db = sqlx::Sqlite;
    const RECHECK_FRESH: bool = false;

    async fn open(pool: &sqlx::Pool<Self::Db>) -> Result<Self, ProbeError> {
        // Never `mode=rwc` here: a probe that created the file would turn
        // a deleted database into an empty one that reads healthy.
        let options = (*pool.connect_options())
            .clone()
            .create_if_missing(false)
            .busy_timeout(SQLITE_LOCK_WAIT);
        let mut conn = options.connect().await.map_err(|e| {
            format!(
                "cannot open the database file {}: {e}",
                options.get_filename().display()
            )
        })?;
        // The absolute path SQLite resolved; empty for an in-memory one.
        // Loading the schema for it reads the file, under its lock.
        let path: String =
            sqlx::query_scalar("SELECT file FROM pragma_database_list WHERE name = 'main'")
                .fetch_one(&mut conn)
                .await
                .map_err(|e| unreadable(options.get_filename().display(), &e))?;
        let file = if path.is_empty() {
            None
        } else {
            let id = file_id(&path).map_err(|e| format!("cannot stat {path}: {e}"))?;
            Some(SqliteFile { path, id })
        };
        Ok(Self { conn, file })
    }

    async fn check(&mut self, sql: Option<&Arc<str>>) -> Result<(), ProbeError> {
        if let Some(file) = &self.file {
            // The connection keeps reading a deleted file; the path is
            // what the next start (and every new connection) opens.
            match file_id(&file.path) {
                Ok(id) if id == file.id => {}
                Ok(_) => {
                    return Err(format!(
                        "the database file {} was replaced since the probe opened it",
                        file.path
                    )
                    .into());
                }
                Err(e) => {
                    return Err(format!("the database file {} is gone: {e}", file.path).into());
                }
            }
        }
        match (sql, &self.file) {
            (Some(sql), _) => run_query::<Self::Db>(&mut self.conn, sql).await,
            // No file to lock or lose, and no other process can hold it.
            (None, None) => self.conn.ping().await.map_err(Into::into),
            (None, Some(file)) => {
                // A read of the file, so it needs the shared lock on every
                // run (`SELECT 1` would touch no file); not the write lock,
                // which the service's own long write transactions hold. It
                // reads the header, so a file that is not a database fails.
                sqlx::raw_sql("SELECT count(*) FROM sqlite_master")
                    .execute(&mut self.conn)
                    .await
                    .map(drop)
                    .map_err(|e| unreadable(&file.path, &e))
            }
        }
    }
}

#[cfg(test)]
mod connect_tests {
    #[cfg(feature = "sqlite")]
    #[tokio::test]
    async fn a_database_that_cannot_open_is_an_io_error_naming_it() {
        let dir = std::env::temp_dir().join(format!("zb-health-no-dir-{}", std::process::id()));
        let url = format!("sqlite://{}/missing.db", dir.display());
        let err = super::connect(&url).await.expect_err("no such directory");
        assert_eq!(err.kind(), std::io::ErrorKind::Other);
        assert!(
            err.to_string()
                .starts_with(&format!("cannot open the database at {url}: ")),
            "{err}"
        );
    }
}
