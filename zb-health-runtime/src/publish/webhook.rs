//! [`WebhookPublisher`]: each batch as one JSON `POST`, with retries and a
//! timeout, over plain HTTP/1.1.

use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::{Transition, TransitionPublisher};
use crate::setting::{SettingError, setters};
use crate::wallclock::{rfc3339, unix_ms};

/// The variable that names the webhook: `http://host:port/path`.
pub const WEBHOOK_URL_VAR: &str = "HEALTH_WEBHOOK_URL";

/// POSTs each batch of transitions as JSON to a URL:
///
/// ```json
/// {"service": "orders", "transitions": [{"kind": "probe", "name": "database",
///   "from": "Healthy", "to": "Unhealthy", "at": "2026-12-03T16:10:00Z",
///   "reason": "timedOut", "count": 3}]}
/// ```
///
/// A refused connection, a timeout or a 5xx is retried with backoff
/// (by default 3 attempts, 250 ms then 500 ms apart, 2 s each); a 4xx is
/// not (the receiver refused it). `http://` only: zb-health's HTTP clients
/// have no TLS (put a sidecar or an in-cluster receiver in between).
#[derive(Debug, Clone)]
pub struct WebhookPublisher {
    /// `host:port`, an IPv6 literal bracketed.
    connect: String,
    /// The `Host` header: the authority as written.
    authority: String,
    target: String,
    service: Option<String>,
    attempts: u32,
    backoff: Duration,
    timeout: Duration,
}

impl WebhookPublisher {
    /// A publisher to `url` (`http://host[:port][/path]`).
    ///
    /// # Errors
    ///
    /// Not an `http://` URL with a host, a port that is not a number, or
    /// user info (a secret in a URL ends up in logs).
    pub fn new(url: &str) -> Result<Self, String> {
        let url = zb_health_spec::webhook::parse_webhook_url(url)?;
        Ok(Self {
            connect: url.connect,
            authority: url.authority,
            target: url.target,
            service: None,
            attempts: 3,
            backoff: Duration::from_millis(250),
            timeout: Duration::from_secs(2),
        })
    }

    /// The publisher named by [`WEBHOOK_URL_VAR`], `None` when it is not
    /// set or blank (as every variable the library reads but the token).
    ///
    /// # Errors
    ///
    /// A URL [`new`](Self::new) refuses, naming the variable (its value is
    /// not secret: a webhook URL carries no credentials here).
    pub fn from_env() -> Result<Option<Self>, SettingError> {
        Self::from_lookup(crate::setting::process_env)
    }

    /// [`from_env`](Self::from_env) over `lookup` instead of the process
    /// environment.
    ///
    /// # Errors
    ///
    /// As [`from_env`](Self::from_env).
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, SettingError> {
        match crate::setting::non_blank(lookup, WEBHOOK_URL_VAR) {
            None => Ok(None),
            Some(url) => Self::new(&url).map(Some).map_err(|reason| SettingError {
                variable: WEBHOOK_URL_VAR,
                value: url,
                reason,
            }),
        }
    }

    fn body(&self, batch: &[Transition]) -> String {
        let transitions: Vec<_> = batch
            .iter()
            .map(|t| {
                json!({
                    "kind": t.kind.as_str(),
                    "name": &*t.name,
                    "from": t.from.map(|s| s.as_str()),
                    "to": t.to.as_str(),
                    "at": rfc3339(unix_ms(t.at)),
                    "reason": t.reason,
                    "count": t.count,
                })
            })
            .collect();
        json!({"service": self.service, "transitions": transitions}).to_string()
    }

    /// One `POST`: the status code, or why there was none.
    async fn post(&self, body: &str) -> Result<u16, String> {
        let exchange = async {
            let mut stream = TcpStream::connect(self.connect.as_str())
                .await
                .map_err(|e| format!("connect: {e}"))?;
            let request = format!(
                "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: zb-health\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                self.target,
                self.authority,
                body.len()
            );
            stream
                .write_all(request.as_bytes())
                .await
                .map_err(|e| format!("send: {e}"))?;
            // The status line is all that is needed.
            let mut head = Vec::with_capacity(64);
            BufReader::new(stream.take(256))
                .read_until(b'\n', &mut head)
                .await
                .map_err(|e| format!("read: {e}"))?;
            let line = String::from_utf8_lossy(&head);
            line.split(' ')
                .nth(1)
                .and_then(|code| code.parse().ok())
                .ok_or_else(|| format!("not an HTTP answer: {:?}", line.trim()))
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| format!("no answer within {} ms", self.timeout.as_millis()))?
    }
}

setters!(WebhookPublisher {
    /// The service name each message carries.
    fn service(name: impl Into<String>) => service = Some(name.into());

    /// Attempts per batch (at least 1), the first pause between them
    /// (doubled after each), and each attempt's deadline.
    fn retries(attempts: u32, backoff: Duration, timeout: Duration) |s| {
        s.attempts = attempts.max(1);
        s.backoff = backoff;
        s.timeout = timeout;
    };
});

impl TransitionPublisher for WebhookPublisher {
    fn publish<'a>(&'a self, batch: &'a [Transition]) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let body = self.body(batch);
            let mut pause = self.backoff;
            let mut last = String::new();
            for attempt in 1..=self.attempts {
                match self.post(&body).await {
                    Ok(code) if (200..300).contains(&code) => return Ok(()),
                    Ok(code) if (400..500).contains(&code) => {
                        return Err(format!("the webhook refused the batch: HTTP {code}"));
                    }
                    Ok(code) => last = format!("HTTP {code}"),
                    Err(error) => last = error,
                }
                if attempt < self.attempts {
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                }
            }
            Err(format!(
                "the webhook failed {} times, last: {last}",
                self.attempts
            ))
        })
    }
}
