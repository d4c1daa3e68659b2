//! The service's database through sea-orm: a SQLite file by default,
//! PostgreSQL when `DATABASE_URL` says so.

use std::time::Duration;

use zb_health::database::sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbErr,
};

/// Opens the application's pool for `url` **lazily**: no connection is made
/// here, so a service whose database is down still starts, answers `live`
/// and reports the outage on `ready` (the `database` probe) instead of
/// crashing in a restart loop. sqlx's per-statement logging is off; the
/// probe logs its own failures.
///
/// For a `sqlite://` URL the file's directory is created first (with
/// `?mode=rwc` SQLite creates the file, not its directory).
///
/// # Errors
///
/// The URL is not one sea-orm understands.
pub async fn connect_database(url: &str) -> Result<DatabaseConnection, DbErr> {
    if let Some(path) = sqlite_path(url)
        && let Some(dir) = std::path::Path::new(path).parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)
            .map_err(|e| DbErr::Custom(format!("cannot create {}: {e}", dir.display())))?;
    }
    let mut options = ConnectOptions::new(url.to_owned());
    options
        .sqlx_logging(false)
        .connect_lazy(true)
        // A request that needs the database fails within this, instead of
        // queueing for sqlx's default 30 s.
        .acquire_timeout(Duration::from_secs(3))
        .connect_timeout(Duration::from_secs(3));
    Database::connect(options).await
}

/// The file path of a `sqlite://PATH?…` URL, `None` for anything else
/// (in-memory SQLite included).
pub fn sqlite_path(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("sqlite://")?;
    let path = rest.split('?').next().unwrap_or(rest);
    (!path.is_empty() && path != ":memory:").then_some(path)
}

/// Runs `statements` in order, each an idempotent DDL statement written so
/// that SQLite and PostgreSQL both accept it (`CREATE TABLE IF NOT EXISTS`
/// with `TEXT`, `BIGINT`, `PRIMARY KEY`). Run it at every start, before the
/// startup gate opens.
///
/// # Errors
///
/// The first statement that failed (the database is down, say).
pub async fn bootstrap_schema(conn: &DatabaseConnection, statements: &[&str]) -> Result<(), DbErr> {
    for statement in statements {
        conn.execute_unprepared(statement).await?;
    }
    Ok(())
}

/// [`bootstrap_schema`] until it succeeds, logging each failure and waiting
/// `retry` between attempts: a service started before its database waits
/// for it (with `ready` at 503 "starting") rather than exit.
pub async fn bootstrap_until_done(conn: &DatabaseConnection, statements: &[&str], retry: Duration) {
    loop {
        match bootstrap_schema(conn, statements).await {
            Ok(()) => return,
            Err(e) => {
                tracing::warn!(error = %e, "schema bootstrap failed; retrying");
                tokio::time::sleep(retry).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_paths() {
        assert_eq!(
            sqlite_path("sqlite:///tmp/a/b.db?mode=rwc"),
            Some("/tmp/a/b.db")
        );
        assert_eq!(sqlite_path("sqlite::memory:"), None);
        assert_eq!(sqlite_path("postgres://u@h/d"), None);
    }

    #[tokio::test]
    async fn bootstrap_is_idempotent_on_a_real_file() {
        let dir = std::env::temp_dir().join(format!("service-kit-db-{}", std::process::id()));
        let url = format!("sqlite://{}?mode=rwc", dir.join("sub/kit.db").display());
        let conn = connect_database(&url).await.unwrap();
        let ddl = ["CREATE TABLE IF NOT EXISTS t (name TEXT PRIMARY KEY, at BIGINT NOT NULL)"];
        bootstrap_schema(&conn, &ddl).await.unwrap();
        bootstrap_schema(&conn, &ddl).await.unwrap();
        assert!(dir.join("sub/kit.db").is_file());
        conn.close().await.unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
