//! `kind: http`: an upstream HTTP dependency, checked with a `GET`.
//!
//! Each run opens a connection of its own (HTTP/1.1 over a tokio socket,
//! hyper 1's client) and closes it: no pool whose stale connection could
//! make a run pass or fail for a reason that is not the upstream's. The
//! run is bounded by the probe's deadline, the executor's, which drops the
//! run's future and with it the socket: a server that accepts and never
//! answers, or one that trickles its answer a byte at a time, fails at the
//! deadline, never later.
//!
//! * Healthy when the status is in the probe's [`StatusRange`] (default
//!   `200-299`) and, with [`body_contains`](HttpProbe::body_contains),
//!   the first [`BODY_LIMIT`] bytes of the body hold the text.
//! * A redirect is not followed: a 3xx is judged by the range like any
//!   other code.
//! * `http://` only: the HTTP probe has no TLS client, so an `https` URL is
//!   refused when the probe is made ([`HttpProbe::new`]) and in a manifest.
//! * Every error names the URL with its password shown as `***`
//!   ([`without_password`]). The user info is not sent.
//!
//! ```no_run
//! use zb_health::prelude::*;
//! use zb_health::probes::http::HttpProbe;
//!
//! # fn demo(reg: &HealthRegistry) -> Result<(), Box<dyn std::error::Error>> {
//! let probe = HttpProbe::new("http://inventory:8080/health")?
//!     .status(200, 399)?
//!     .body_contains("UP");
//! reg.add(ProbeRegistration::new("inventory", probe).timeout(std::time::Duration::from_secs(2)))?;
//! # Ok(()) }
//! ```

use std::fmt;

use bytes::Bytes;
use futures_util::future::{self, Either};
use http_body_util::{BodyExt, Empty};
use hyper::Request;
use hyper::header::{CONNECTION, HOST, HeaderValue, USER_AGENT};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use zb_health_spec::upstream::{self, without_password};

pub use zb_health_spec::upstream::StatusRange;

use super::TargetError;
use crate::probe::{Probe, ProbeOutcome, ProbeResult};

/// The most body bytes a run reads to look for
/// [`body_contains`](HttpProbe::body_contains): 64 KiB. A health page is
/// small; the text must be in its first 64 KiB, and a run never buffers
/// an unbounded body.
pub const BODY_LIMIT: usize = 64 * 1024;

/// The description of a passing HTTP probe. Fixed text: it is served to
/// anyone who can reach the endpoint, so it never carries the URL.
const ANSWERED_DESCRIPTION: &str = "upstream answered";

/// The HTTP probe: a `GET` of one `http://` URL per run.
#[derive(Debug, Clone)]
pub struct HttpProbe {
    /// The URL as shown in messages: its password as `***`.
    shown: String,
    /// `host:port` to connect to.
    connect: String,
    /// The `Host` header: the URL's authority without user info.
    host: HeaderValue,
    /// Path and query, `/` when the URL has none.
    target: String,
    status: StatusRange,
    body_contains: Option<String>,
}

impl HttpProbe {
    /// A probe of `url`, healthy on `200-299`.
    ///
    /// # Errors
    ///
    /// `url` is not an `http://host[:port][/path]` URL (the rule of
    /// [`upstream::parse_url`], which the manifest applies at compile
    /// time), e.g. an `https` URL, which needs a TLS client the HTTP probe
    /// does not have.
    pub fn new(url: &str) -> Result<Self, TargetError> {
        let shown = without_password(url).into_owned();
        let parts = upstream::parse_url(url)
            .map_err(|p| TargetError(format!("`{shown}` {}; {}", p.message, p.help)))?;
        let host = HeaderValue::from_str(&parts.authority)
            .map_err(|_| TargetError(format!("`{shown}` has a host that is not a header value")))?;
        Ok(Self {
            shown,
            connect: parts.connect,
            host,
            target: parts.target,
            status: StatusRange::DEFAULT,
            body_contains: None,
        })
    }

    /// Healthy on the codes `low..=high` instead of `200-299`.
    ///
    /// # Errors
    ///
    /// A code outside 100–599, or `low` above `high`.
    pub fn status(self, low: u16, high: u16) -> Result<Self, TargetError> {
        let status = StatusRange::new(low, high).map_err(TargetError)?;
        Ok(self.status_range(status))
    }

    /// Healthy on `status`, a range already checked (the manifest's).
    pub fn status_range(mut self, status: StatusRange) -> Self {
        self.status = status;
        self
    }

    /// Healthy only when the first [`BODY_LIMIT`] bytes of the body hold
    /// `text`.
    pub fn body_contains(mut self, text: impl Into<String>) -> Self {
        self.body_contains = Some(text.into());
        self
    }

    /// An error naming the URL (without its password) and why.
    fn error(&self, why: impl fmt::Display) -> TargetError {
        TargetError(format!("GET {}: {why}", self.shown))
    }

    /// One `GET` on a fresh connection: the status, and the body's first
    /// [`BODY_LIMIT`] bytes when a text is looked for.
    async fn exchange(&self) -> Result<(u16, Vec<u8>), TargetError> {
        let stream = TcpStream::connect(&self.connect)
            .await
            .map_err(|e| self.error(format_args!("cannot connect: {e}")))?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| self.error(e))?;
        let request = Request::get(self.target.as_str())
            .header(HOST, self.host.clone())
            .header(USER_AGENT, concat!("zb-health/", env!("CARGO_PKG_VERSION")))
            .header(CONNECTION, "close")
            .body(Empty::<Bytes>::new())
            .map_err(|e| self.error(e))?;
        let read = async {
            let response = sender
                .send_request(request)
                .await
                .map_err(|e| self.error(e))?;
            let code = response.status().as_u16();
            let mut body = Vec::new();
            if self.body_contains.is_some() {
                let mut incoming = response.into_body();
                while body.len() < BODY_LIMIT {
                    let Some(frame) = incoming.frame().await else {
                        break;
                    };
                    let frame =
                        frame.map_err(|e| self.error(format_args!("reading the body: {e}")))?;
                    if let Ok(data) = frame.into_data() {
                        let room = BODY_LIMIT - body.len();
                        body.extend_from_slice(&data[..data.len().min(room)]);
                    }
                }
            }
            Ok((code, body))
        };
        // The connection is driven here, not spawned, so dropping the run
        // at its deadline closes the socket with it.
        let (read, conn) = (std::pin::pin!(read), std::pin::pin!(conn));
        match future::select(read, conn).await {
            Either::Left((answer, _)) => answer,
            Either::Right((ended, read)) => {
                ended.map_err(|e| self.error(e))?;
                read.await
            }
        }
    }
}

impl Probe for HttpProbe {
    async fn check(&self) -> ProbeOutcome {
        let (code, body) = self.exchange().await?;
        if !self.status.contains(code) {
            return Err(self
                .error(format_args!(
                    "answered {code}, outside the healthy range {} (a redirect is not followed)",
                    self.status
                ))
                .into());
        }
        if let Some(text) = &self.body_contains
            && !contains(&body, text.as_bytes())
        {
            return Err(self
                .error(format_args!(
                    "answered {code} without `{text}` in the first {} bytes of its body",
                    body.len()
                ))
                .into());
        }
        Ok(ProbeResult::healthy().with_description(ANSWERED_DESCRIPTION))
    }
}

/// Whether `needle` occurs in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}
