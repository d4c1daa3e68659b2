//! The database probe (ZB-2.1), over sea-orm.
//!
//! [`DatabaseProbe::new`] answers "can this service reach its database": a
//! ping through the connection's pool. [`DatabaseProbe::with_check`] swaps
//! in the caller's own async check, such as reading one row of the table
//! the service cannot work without.
//!
//! The probe sets no timeout of its own: the executor runs it under the
//! registration's deadline and drops the future when that passes (AT-4).
//! That bounds everything the check waits on, including the wait for a free
//! pool connection, whatever `acquire_timeout` the pool was built with.
//! Dropping is safe here: sqlx releases a pending acquire, and a pooled
//! connection interrupted mid-query, through `Drop`.
//!
//! A failed check is returned as `Err`, so its text (which may name hosts,
//! databases or users) goes to the log and never into the response body
//! (BE-HLTH-007); the body shows only the executor's fixed description.
//!
//! Readiness should not queue behind the application's own requests
//! (BE-HLTH-006): when the application's pool can be exhausted, give the
//! probe a connection of its own, e.g. a separate one-connection pool.

use std::fmt;
use std::future::Future;

use futures_util::future::BoxFuture;
use sea_orm::{DatabaseConnection, DbErr};

use crate::probe::{Probe, ProbeOutcome, ProbeResult};

/// The sea-orm this crate was built with, so applications and generated code
/// name the same `DatabaseConnection` type the probe accepts.
pub use sea_orm;

/// The description of a passing database probe. Fixed text: it is served to
/// anyone who can reach the endpoint, so it never carries a URL or an error.
pub const REACHABLE_DESCRIPTION: &str = "database reachable";

/// The check a probe runs: given a clone of the connection, it resolves to
/// `Ok(())` when the database is usable.
type Check<C> = Box<dyn Fn(C) -> BoxFuture<'static, Result<(), DbErr>> + Send + Sync>;

/// The database probe (ZB-2.1): tag `ready`, healthy when its check passes.
///
/// Generic over the connection `C`, so it serves a plain
/// [`DatabaseConnection`] (the default, checked with a ping) as well as any
/// other handle a caller's check knows how to use: a wrapper type, a
/// restricted connection, an `Arc` around one.
///
/// On success the entry is `Healthy` with the fixed description
/// `"database reachable"`; on failure the check's `DbErr` is returned as the
/// probe's error, which the executor logs and reports as `"check failed"`.
///
/// ```no_run
/// # async fn demo() -> Result<(), zb_health::database::sea_orm::DbErr> {
/// use zb_health::database::{sea_orm, DatabaseProbe};
/// use zb_health::{HealthRegistry, ProbeRegistration};
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
    /// A probe whose check is [`DatabaseConnection::ping`]: "can connect",
    /// the ZB-2.1 default. For a pooled connection it takes a connection
    /// from the pool (opening one if needed) and pings the server over it.
    pub fn new(conn: DatabaseConnection) -> Self {
        Self::with_check(
            conn,
            |conn: DatabaseConnection| async move { conn.ping().await },
        )
    }
}

impl<C> DatabaseProbe<C>
where
    C: Clone + Send + Sync + 'static,
{
    /// A probe whose check is the caller's own async function (the ZB-2.1
    /// override), e.g. selecting one row from the table the service needs,
    /// which catches a missing schema or permission that a ping misses.
    ///
    /// `check` gets a clone of `conn` on every run, so its future owns what
    /// it uses and can be dropped at the deadline at any point. Keep it
    /// read-only and cheap (BE-HLTH-006): it runs on every readiness request.
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
            check: Box::new(move |conn| Box::pin(check(conn))),
        }
    }

    /// The connection the probe checks.
    pub fn connection(&self) -> &C {
        &self.conn
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

/// Shows no connection: a connection's `Debug` may print its URL and
/// password, and probes end up in logs.
/// `conn.into()` where a `DatabaseProbe` is expected, e.g. the field a
/// manifest's `kind: database` entry adds to `HealthDeps`.
impl From<DatabaseConnection> for DatabaseProbe {
    fn from(conn: DatabaseConnection) -> Self {
        Self::new(conn)
    }
}

impl<C> fmt::Debug for DatabaseProbe<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DatabaseProbe").finish_non_exhaustive()
    }
}
