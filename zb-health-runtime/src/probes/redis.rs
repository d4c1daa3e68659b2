//! `kind: redis` (feature `redis`): a Redis server, checked with `PING`.
//!
//! ```no_run
//! use zb_health::prelude::*;
//! use zb_health::probes::redis::RedisProbe;
//!
//! # fn demo(reg: &HealthRegistry) -> Result<(), Box<dyn std::error::Error>> {
//! let probe = RedisProbe::new("redis://:s3cret@sessions:6379/1")?;
//! reg.add(ProbeRegistration::new("sessions", probe).timeout(std::time::Duration::from_secs(1)))?;
//! # Ok(()) }
//! ```
//!
//! The manifest writes the same probe as
//! `{ name: sessions, kind: redis, url: "redis://:s3cret@sessions:6379/1" }`.
//!
//! # What a run does
//!
//! It connects to the URL's host and port, sends `AUTH` (when the URL has
//! a password) and `SELECT` (when it names a database other than `0`), then
//! `PING`, and closes the connection.
//!
//! * `PONG`: `Healthy`, described [`PONG_DESCRIPTION`];
//! * any other reply, a refused `AUTH` or `SELECT`, a refused or dropped
//!   connection: the probe's error, so the entry is the registration's
//!   failure status (`Unhealthy` by default) described `check failed`, and
//!   the error goes to the transition log only;
//! * a server that accepts and does not answer (paused, overloaded, a
//!   black-holed route): the run is dropped at the probe's deadline,
//!   `timed out`, and the socket with it.
//!
//! Every error names the URL with its password shown as `***`
//! ([`without_password`]); the password is sent only in `AUTH`.
//!
//! # Its own connection, opened on each run
//!
//! The probe never borrows the application's pool: a pool's idle
//! connection can stay usable while the server refuses new ones (at
//! `maxclients`, or after a password change), and an exhausted pool can
//! fail a probe whose server is fine. Neither does it keep a dedicated
//! connection between runs: a kept one needs reconnect logic, and after a
//! run dropped at its deadline its state is unknown. A fresh connection
//! checks exactly what a new client of the application would meet
//! (resolve, connect, authenticate, select, `PING`) for one TCP handshake
//! and two to four round trips a run; a probe runs at most once per
//! request (single flight shares it) or per `refresh` period. The
//! connection's driver is polled inside the run, not spawned, so the
//! deadline that drops the run closes the socket.
//!
//! `rediss://` is refused when the probe is made ([`RedisProbe::new`]) and
//! in a manifest: the Redis probe has no TLS client.

use std::fmt;

use futures_util::future::{self, Either};
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ProtocolVersion, RedisConnectionInfo, Value};
use tokio::net::TcpStream;
use zb_health_spec::redis::parse_url;
use zb_health_spec::upstream::without_password;

use super::TargetError;
use crate::probe::{Probe, ProbeOutcome, ProbeResult};

/// The description of a passing Redis probe. Fixed text: it is served to
/// anyone who can reach the endpoint, so it never carries the URL.
pub const PONG_DESCRIPTION: &str = "server answered PONG";

/// The Redis probe: a `PING` on a connection of its own per run (see the
/// [module docs](self)). Its `Debug` shows the URL without its password.
#[derive(Clone)]
pub struct RedisProbe {
    /// The URL as shown in messages: its password as `***`.
    shown: String,
    /// The host to connect to, an IPv6 literal without brackets.
    host: String,
    port: u16,
    /// The handshake: database, user and password.
    handshake: RedisConnectionInfo,
}

impl fmt::Debug for RedisProbe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisProbe")
            .field("url", &self.shown)
            .finish_non_exhaustive()
    }
}

impl RedisProbe {
    /// A probe of the Redis server at `url`,
    /// `redis://[user:password@]host[:port][/db]`.
    ///
    /// # Errors
    ///
    /// `url` is not one the probe can connect to (the rule of
    /// [`zb_health_spec::redis::parse_url`], which the manifest applies at
    /// compile time), e.g. a `rediss://` URL, which needs a TLS client
    /// zb-health does not have.
    pub fn new(url: &str) -> Result<Self, TargetError> {
        let shown = without_password(url).into_owned();
        let parts = parse_url(url)
            .map_err(|p| TargetError(format!("`{shown}` {}; {}", p.message, p.help)))?;
        Ok(Self {
            shown,
            host: parts.host,
            port: parts.port,
            handshake: RedisConnectionInfo {
                db: i64::from(parts.db),
                username: parts.username,
                password: parts.password,
                // RESP2: `PING` answers `+PONG` on every server version
                // (RESP3 needs `HELLO`, from Redis 6 on).
                protocol: ProtocolVersion::RESP2,
            },
        })
    }

    /// An error naming the URL (without its password) and why.
    fn error(&self, why: impl fmt::Display) -> TargetError {
        TargetError(format!("PING {}: {why}", self.shown))
    }

    /// Connect, hand shake and `PING` on a fresh connection: the reply.
    async fn ping(&self) -> Result<Value, TargetError> {
        let stream = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| self.error(format_args!("cannot connect: {e}")))?;
        // No response timeout of redis-rs's own: the probe's deadline is
        // the one bound, so a slow server is `timed out`, not an error.
        let (mut connection, driver) = MultiplexedConnection::new_with_config(
            &self.handshake,
            stream,
            AsyncConnectionConfig::new(),
        )
        .await
        .map_err(|e| self.error(format_args!("connection setup failed: {e}")))?;
        let command = redis::cmd("PING");
        let ping = command.query_async::<Value>(&mut connection);
        // The driver is polled here, not spawned, so dropping the run at
        // its deadline closes the socket with it.
        let (ping, driver) = (std::pin::pin!(ping), std::pin::pin!(driver));
        let reply = match future::select(ping, driver).await {
            Either::Left((reply, _)) => reply,
            // The connection ended; the pending `PING` says how.
            Either::Right(((), ping)) => ping.await,
        };
        reply.map_err(|e| self.error(e))
    }
}

impl Probe for RedisProbe {
    async fn check(&self) -> ProbeOutcome {
        match self.ping().await? {
            Value::SimpleString(pong) if pong == "PONG" => {
                Ok(ProbeResult::healthy().with_description(PONG_DESCRIPTION))
            }
            other => Err(self
                .error(format_args!("answered {other:?}, not PONG"))
                .into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_is_read_once_and_its_password_is_never_shown() {
        let probe = RedisProbe::new("redis://app:s3cret@[::1]:7000/2").unwrap();
        assert_eq!((probe.host.as_str(), probe.port), ("::1", 7000));
        assert_eq!(probe.handshake.db, 2);
        assert_eq!(probe.handshake.username.as_deref(), Some("app"));
        assert_eq!(probe.handshake.password.as_deref(), Some("s3cret"));
        let debug = format!("{probe:?}");
        assert!(debug.contains("redis://app:***@[::1]:7000/2"), "{debug}");
        assert!(!debug.contains("s3cret"), "{debug}");
        let error = probe.error("refused").to_string();
        assert_eq!(error, "PING redis://app:***@[::1]:7000/2: refused");
    }

    #[test]
    fn urls_it_cannot_use_are_refused_when_the_probe_is_made() {
        let error = RedisProbe::new("rediss://:s3cret@h:6380")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("`rediss://:***@h:6380` is a `rediss` (TLS) URL"),
            "{error}"
        );
        assert!(!error.contains("s3cret"), "{error}");
        let error = RedisProbe::new("redis://h/x").unwrap_err().to_string();
        assert!(error.contains("not a database number"), "{error}");
    }
}
