//! `kind: redis` against a real `redis-server` (Debian's, which
//! `tests/run.sh` installs): each test starts its own on a free 127.0.0.1
//! port, never the system service, then kills it, pauses it with
//! `SIGSTOP` and resumes it, or sets a password, and checks what the
//! probe answers, and that no error carries the password.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use std::io::{Read, Write};
use zb_health::prelude::{
    FailureStatus, HealthRegistry, HealthStatus, Probe, ProbeRegistration, Tag,
};
use zb_health::probes::redis::{PONG_DESCRIPTION, RedisProbe};
use zb_health::report::EntryOutcome;
use zb_health_testkit::{PATIENCE, free_port};

/// The deadline of the probes that must not reach it: a refused
/// connection fails long before.
const LONG: Duration = Duration::from_secs(10);
/// The deadline of the probes that do reach it (a paused server).
const SHORT: Duration = Duration::from_millis(400);
/// The password of the `requirepass` server.
const PASSWORD: &str = "s3cr3t-redis-pw";

/// A `redis-server` child on 127.0.0.1, in the foreground, saving nothing;
/// killed on drop (also when the test panics).
struct RedisServer {
    child: Child,
    port: u16,
    /// Its working directory, removed on drop.
    dir: PathBuf,
}

impl RedisServer {
    /// Starts a server with `extra` arguments and waits until it answers
    /// `PING` (or, with a password, `NOAUTH`).
    fn start(extra: &[&str]) -> Self {
        let port = free_port();
        let dir =
            std::env::temp_dir().join(format!("zb-health-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let program = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        let child = Command::new(&program)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--dir", dir.to_str().unwrap()])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run `{program}` ({e}): install Debian's `redis-server` (tests/run.sh does), or set REDIS_SERVER"
                )
            });
        let server = Self { child, port, dir };
        zb_health_testkit::eventually("redis-server to answer PING", PATIENCE, || {
            let reply = server.raw_ping()?;
            (reply.starts_with("+PONG") || reply.starts_with("-NOAUTH")).then_some(())
        });
        server
    }

    /// The server's URL, with `user_info` (`":pw@"`) if any.
    fn url(&self, user_info: &str) -> String {
        format!("redis://{user_info}127.0.0.1:{}", self.port)
    }

    /// `PING` on a plain socket: the first reply line, or `None` when
    /// nothing answered within a second. The test's own view, not the
    /// probe's.
    fn raw_ping(&self) -> Option<String> {
        let mut socket = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        socket.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
        socket.write_all(b"PING\r\n").ok()?;
        let mut reply = [0u8; 64];
        let n = socket.read(&mut reply).ok()?;
        Some(String::from_utf8_lossy(&reply[..n]).into_owned())
    }

    /// Sends `signal` (`STOP`, `CONT`) with `kill(1)`: the workspace
    /// forbids `unsafe`, so no libc call.
    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success(), "kill -{signal} failed: {status}");
    }

    /// Kills the server (`SIGKILL`, like a crash) and reaps it, so its
    /// port is closed when this returns.
    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        // A stopped process dies of SIGKILL as well.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What one run of `probe` in a registry of its own reported: status,
/// description, outcome.
type Seen = (HealthStatus, Option<String>, EntryOutcome);

async fn run(registration: ProbeRegistration) -> Seen {
    let reg = HealthRegistry::new();
    reg.add(registration).unwrap();
    seen(&reg).await
}

/// What the ready tier of `reg` reported of its one probe.
async fn seen(reg: &HealthRegistry) -> Seen {
    let report = reg.check(Tag::Ready).await;
    let e = &report.entries[0];
    (
        e.status,
        e.description.as_deref().map(str::to_owned),
        e.outcome,
    )
}

/// Asserts that the probe of `url` fails as an error (not a timeout: its
/// deadline is long) with `Unhealthy`, and returns the error's text, which
/// goes to the log.
async fn failure_of(url: &str) -> String {
    assert_eq!(
        run(probe(url, LONG)).await,
        failed(HealthStatus::Unhealthy),
        "{url}"
    );
    let probe = RedisProbe::new(url).unwrap();
    probe.check().await.unwrap_err().to_string()
}

/// A registration of the probe of `url` with `deadline`.
fn probe(url: &str, deadline: Duration) -> ProbeRegistration {
    ProbeRegistration::new("sessions", RedisProbe::new(url).unwrap()).timeout(deadline)
}

fn healthy() -> Seen {
    (
        HealthStatus::Healthy,
        Some(PONG_DESCRIPTION.to_owned()),
        EntryOutcome::Completed,
    )
}

fn failed(status: HealthStatus) -> Seen {
    (
        status,
        Some("check failed".to_owned()),
        EntryOutcome::Errored,
    )
}

#[tokio::test]
async fn a_running_server_is_healthy_on_its_database() {
    let server = RedisServer::start(&[]);
    assert_eq!(run(probe(&server.url(""), LONG)).await, healthy());
    let db1 = format!("{}/1", server.url(""));
    assert_eq!(run(probe(&db1, LONG)).await, healthy());
    // A database the server does not have: `SELECT` is refused.
    let db99 = format!("{}/99", server.url(""));
    let error = failure_of(&db99).await;
    let setup = format!("PING {db99}: connection setup failed");
    assert!(error.starts_with(&setup), "{error}");
}

#[tokio::test]
async fn a_killed_server_fails_at_once_as_refused_naming_the_url() {
    let mut server = RedisServer::start(&[]);
    let url = server.url("");
    assert_eq!(run(probe(&url, LONG)).await, healthy());
    server.kill();
    // `Errored`, not `TimedOut` at the 10 s deadline: the refusal is the
    // answer. The configured failure status is the entry's.
    let degraded = probe(&url, LONG).failure_status(FailureStatus::Degraded);
    assert_eq!(run(degraded).await, failed(HealthStatus::Degraded));
    let error = failure_of(&url).await;
    let refused = format!("PING {url}: cannot connect");
    assert!(error.starts_with(&refused), "{error}");
    assert!(error.to_lowercase().contains("refused"), "{error}");
}

#[tokio::test]
async fn a_paused_server_times_out_at_the_deadline_and_recovers_when_resumed() {
    let server = RedisServer::start(&[]);
    let url = server.url("");
    assert_eq!(run(probe(&url, SHORT)).await, healthy());
    server.signal("STOP");
    // The kernel still accepts the connection; nobody answers `PING`.
    let timed_out = (
        HealthStatus::Unhealthy,
        Some("timed out after 400 ms".to_owned()),
        EntryOutcome::TimedOut,
    );
    assert_eq!(run(probe(&url, SHORT)).await, timed_out);
    server.signal("CONT");
    let start = tokio::time::Instant::now();
    loop {
        let seen = run(probe(&url, SHORT)).await;
        if seen == healthy() {
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "still {seen:?} {PATIENCE:?} after SIGCONT"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn auth_with_the_right_password_is_healthy_and_a_wrong_one_never_shows_a_password() {
    let server = RedisServer::start(&["--requirepass", PASSWORD]);
    // A password alone, and with the `default` user (Redis 6 ACL).
    for user in ["", "default"] {
        let url = server.url(&format!("{user}:{PASSWORD}@"));
        assert_eq!(run(probe(&url, LONG)).await, healthy(), "{user}");
    }
    let error = failure_of(&server.url(":not-the-pw@")).await;
    let shown = format!("PING {}: ", server.url(":***@"));
    assert!(error.starts_with(&shown), "{error}");
    assert!(
        !error.contains("not-the-pw") && !error.contains(PASSWORD),
        "{error}"
    );
    // No password at all: the server answers `PING` with `NOAUTH`, which
    // is not `PONG`.
    let error = failure_of(&server.url("")).await;
    assert!(error.contains("NOAUTH"), "{error}");
}

// Port 1 on loopback: nothing listens there, so the connection is refused.
zb_health::prelude::manifest!(
    Caches,
    yaml = "service: s\nprobes:\n  - { name: sessions, kind: redis, url: \"redis://:s3cret@127.0.0.1:1/2\", failure_status: degraded, timeout: 400ms }\n"
);

#[actix_web::test]
async fn a_manifest_line_alone_registers_the_probe_with_its_failure_status() {
    let registry = HealthRegistry::new();
    let _installed = Caches::install_into(&registry, CachesDeps {}).unwrap();
    let meta = Caches::PROBES[0];
    assert_eq!((meta.name, meta.timeout()), ("sessions", SHORT));
    assert_eq!(meta.settings.tags, zb_health::prelude::TagSet::READY);
    // The refused connection, with the line's failure status.
    assert_eq!(seen(&registry).await, failed(HealthStatus::Degraded));
}
