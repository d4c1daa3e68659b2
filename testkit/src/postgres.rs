//! A real, throwaway PostgreSQL server per test: its own data directory in
//! a temp dir, its own loopback port, a role with a password and a
//! database, torn down on drop (also when the test panics).
//!
//! Shared by the workspace's `tests/database.rs` and the examples' process
//! tests, so there is one harness.
//!
//! It runs the Debian server binaries (`/usr/lib/postgresql/*/bin`), which
//! `./tests/run.sh` installs. PostgreSQL refuses to run as root, so as root
//! every server-side command runs as the `postgres` OS user.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::free_port;

/// The role the tests connect as.
pub const USER: &str = "zb";
/// Its password: every test asserts it never appears in a response body.
pub const PASSWORD: &str = "s3cr3t-pw";
/// The database the role owns.
pub const DATABASE: &str = "zb";

/// A running PostgreSQL server; stopped and deleted on drop.
pub struct Postgres {
    bin: PathBuf,
    /// The temp dir: data directory, socket and log.
    root: PathBuf,
    data: PathBuf,
    /// The TCP port on 127.0.0.1.
    pub port: u16,
    as_postgres_user: bool,
}

impl Postgres {
    /// Creates, starts and provisions a new server. Panics, telling how to
    /// install PostgreSQL, when its binaries are missing: a test that needs
    /// the server must never pass without one.
    pub fn start() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let bin = server_binaries();
        let root = std::env::temp_dir().join(format!(
            "zb-health-pg-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let as_postgres_user = std::fs::metadata("/proc/self")
            .map(|m| m.uid() == 0)
            .unwrap_or(false);
        // From here on, `Drop` cleans up whatever was created.
        let mut pg = Self {
            bin,
            data: root.join("data"),
            root,
            port: free_port(),
            as_postgres_user,
        };
        if as_postgres_user {
            pg.run(Command::new("chown").arg("postgres:").arg(&pg.root));
        }
        pg.run(pg.server_cmd("initdb").arg("-D").arg(&pg.data).args([
            "-U",
            "postgres",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        ]));
        // `fsync = off` for speed, but `synchronous_commit` stays on: a
        // commit then reaches the kernel before it returns, so it survives
        // `stop` (an immediate shutdown kills the WAL writer; with it off, a
        // table created just before would be gone after `start_again`).
        let conf = format!(
            "\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n\
             max_connections = 20\nfsync = off\nsynchronous_commit = on\nfull_page_writes = off\n",
            pg.root.display()
        );
        let conf_path = pg.data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf_path).unwrap();
        text.push_str(&conf);
        std::fs::write(&conf_path, text).unwrap();
        // The free port may be taken again before the server binds it (by
        // a client socket, say): then try another one.
        let mut attempts = 0;
        while let Err(failure) = pg.try_start() {
            attempts += 1;
            assert!(attempts < 3, "{failure}");
            pg.port = free_port();
        }
        pg.psql(&format!("CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'"));
        pg.psql(&format!("CREATE DATABASE {DATABASE} OWNER {USER}"));
        pg
    }

    /// The connection URL of the test role, password included.
    pub fn url(&self) -> String {
        self.url_for(DATABASE)
    }

    /// The URL of the test role for another database name.
    pub fn url_for(&self, database: &str) -> String {
        format!(
            "postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{database}",
            self.port
        )
    }

    /// Kills the server at once (`pg_ctl stop -m immediate`), like a crash:
    /// open connections are cut, nothing is shut down cleanly.
    pub fn stop(&self) {
        self.run(self.pg_ctl().args(["-m", "immediate", "-w", "stop"]));
    }

    /// Starts the server again on its data directory and port, waiting
    /// until it accepts connections.
    pub fn start_again(&self) {
        if let Err(failure) = self.try_start() {
            panic!("{failure}");
        }
    }

    fn try_start(&self) -> Result<(), String> {
        let log = self.root.join("postgres.log");
        let options = format!("-p {}", self.port);
        let mut cmd = self.pg_ctl();
        cmd.arg("-l")
            .arg(log)
            .args(["-o", &options, "-w", "-t", "60", "start"]);
        self.try_run(&mut cmd).map(drop)
    }

    /// Runs `sql` as the superuser in the `postgres` database, over the
    /// unix socket (trusted locally; TCP needs a password).
    fn psql(&self, sql: &str) {
        self.run(
            self.server_cmd("psql")
                .arg("-h")
                .arg(&self.root)
                .args([
                    "-p",
                    &self.port.to_string(),
                    "-U",
                    "postgres",
                    "-d",
                    "postgres",
                ])
                .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql]),
        );
    }

    fn pg_ctl(&self) -> Command {
        let mut cmd = self.server_cmd("pg_ctl");
        cmd.arg("-D").arg(&self.data);
        cmd
    }

    /// A server binary, run as `postgres` when we are root. The working
    /// directory is the temp dir, which that user can enter.
    fn server_cmd(&self, name: &str) -> Command {
        let program = self.bin.join(name);
        let mut cmd = if self.as_postgres_user {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "postgres", "--"]).arg(program);
            cmd
        } else {
            Command::new(program)
        };
        cmd.current_dir(&self.root);
        cmd
    }

    fn run(&self, cmd: &mut Command) -> Output {
        self.try_run(cmd)
            .unwrap_or_else(|failure| panic!("{failure}"))
    }

    /// Runs `cmd`; on failure, says what failed with its output and the
    /// server log.
    fn try_run(&self, cmd: &mut Command) -> Result<Output, String> {
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
        if out.status.success() {
            return Ok(out);
        }
        let log = std::fs::read_to_string(self.root.join("postgres.log")).unwrap_or_default();
        Err(format!(
            "{cmd:?} failed ({}):\n{}{}\nserver log:\n{log}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.data.join("postmaster.pid").exists() {
            let _ = self
                .pg_ctl()
                .args(["-m", "immediate", "-w", "stop"])
                .output();
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The newest installed `/usr/lib/postgresql/<version>/bin` that has both
/// `initdb` and `pg_ctl`.
fn server_binaries() -> PathBuf {
    let base = Path::new("/usr/lib/postgresql");
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(base)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("pg_ctl").is_file()).then_some((version, bin))
        })
        .collect();
    found.sort();
    match found.pop() {
        Some((_, bin)) => bin,
        None => panic!(
            "PostgreSQL server binaries (initdb, pg_ctl) not found under \
             /usr/lib/postgresql/*/bin; run ./tests/run.sh, which installs them \
             (apt-get install postgresql), then run the tests again"
        ),
    }
}
