//! What every scadabridge process test shares: the binary, the deadline,
//! and the waits for a node to be warm.

#![allow(dead_code)]

use std::time::Duration;

use zb_health_testkit::{Launch, ServiceProcess, assert_canonical};

/// How long any condition may take: generous, since the machine may be
/// busy compiling; every wait ends as soon as its condition holds.
pub const DEADLINE: Duration = Duration::from_secs(90);

/// The scadabridge binary Cargo built for these tests.
pub fn launch() -> Launch {
    Launch::new(env!("CARGO_BIN_EXE_scadabridge"))
}

/// Starts one node with `launch` and waits until its ready tier answers
/// 200 (warm-up done, schema in place, node `Up`).
pub fn start_warm(launch: &Launch) -> ServiceProcess {
    let mut node = launch.start();
    node.wait_listening();
    let ready = node.until_status("/health/ready", 200, DEADLINE);
    assert_canonical(&ready);
    node
}

/// `POST /api/tags/{name}` with `{"value": value}`.
pub fn write_tag(node: &ServiceProcess, name: &str, value: i64) -> zb_health_testkit::Response {
    node.post(
        &format!("/api/tags/{name}"),
        &format!("{{\"value\": {value}}}"),
    )
}

/// Another connection holding the node's SQLite file's exclusive lock, so
/// the database probe's read cannot proceed until
/// [`release`](Self::release).
pub struct SqliteLock {
    runtime: tokio::runtime::Runtime,
    connection: zb_health::database::sea_orm::sqlx::SqliteConnection,
}

impl SqliteLock {
    /// `BEGIN EXCLUSIVE` on `node`'s `scadabridge.db`.
    pub fn hold(node: &ServiceProcess) -> Self {
        Self::hold_file(&node.data_dir.join("scadabridge.db"))
    }

    /// `BEGIN EXCLUSIVE` on the SQLite file at `path`.
    pub fn hold_file(path: &std::path::Path) -> Self {
        use zb_health::database::sea_orm::sqlx::{self, Connection as _, SqliteConnection};
        let url = format!("sqlite://{}", path.display());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut connection = runtime.block_on(SqliteConnection::connect(&url)).unwrap();
        runtime
            .block_on(sqlx::raw_sql("BEGIN EXCLUSIVE").execute(&mut connection))
            .unwrap();
        Self {
            runtime,
            connection,
        }
    }

    /// `ROLLBACK`, and the connection closed.
    pub fn release(mut self) {
        use zb_health::database::sea_orm::sqlx::{self, Connection as _};
        self.runtime
            .block_on(sqlx::raw_sql("ROLLBACK").execute(&mut self.connection))
            .unwrap();
        self.runtime.block_on(self.connection.close()).unwrap();
    }
}
