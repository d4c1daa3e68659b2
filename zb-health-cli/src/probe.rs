//! `zb-health probe URL`: one HTTP/1.1 GET on std alone, for images that
//! have no curl (a Dockerfile `HEALTHCHECK`, a Kubernetes `exec` probe).
//!
//! `http://` only. A health check probes the loopback of its own container,
//! where TLS protects nothing and would need a certificate store and a TLS
//! stack in every image; an `https://` URL is refused as a bad URL (exit 2)
//! rather than silently sent in clear text.
//!
//! `--timeout` is one deadline for the whole exchange: the connect, the
//! request, the head and the body (every read gets only what is left of
//! it, so a body trickled a byte at a time cannot hold the probe past it).
//! A host name is resolved by the system first, which no std API can
//! bound: a health check should name an IP literal (`127.0.0.1`), as the
//! examples do.
//!
//! Exit 0 on a status from 200 to 399, as the kubelet and `curl -f` judge
//! it (a redirect is not followed: the service answered); 1 on anything
//! else (another status, refused, timed out, a body not finished within the
//! deadline, a reply that is not HTTP), with one line on stderr saying
//! which; 2 on a URL it cannot use.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use zb_health_spec::upstream::{self, HttpUrl};

use crate::args::ProbeArgs;
use crate::input;

/// The most of the status line and headers read: a health answer's head is
/// a few hundred bytes.
const MAX_HEAD: usize = 64 * 1024;
/// The most of the body read before the connection is dropped: the status
/// decides, the body is only drained so the server sees a clean close.
const MAX_BODY: usize = 1024 * 1024;

/// Parses `url` with the spec's one URL reading
/// ([`upstream::parse_url`]), or says why it cannot be used. A
/// `#fragment` is dropped, as a browser keeps it to itself.
///
/// # Errors
///
/// A scheme other than `http` (`https` with why), user info, an empty
/// host, a bad port (0 included), or whitespace in the URL.
pub fn parse_url(url: &str) -> Result<HttpUrl, String> {
    let url = url.split('#').next().unwrap_or_default();
    if url
        .split_once("://")
        .is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case("https"))
    {
        return Err(format!(
            "`{url}`: https is not supported; probe the container's own loopback over http://, where TLS protects nothing"
        ));
    }
    let parts = upstream::parse_url(url).map_err(|p| format!("`{url}` {}", p.message))?;
    if parts.user_info {
        return Err(format!("`{url}`: user info is not supported"));
    }
    if parts.port == 0 {
        return Err(format!("`{url}`: `0` is not a port"));
    }
    Ok(parts)
}

/// Why a probe failed, for its one line on stderr.
#[derive(Debug)]
pub enum Failure {
    /// A status outside 200–399, and its reason phrase.
    Status(u16, String),
    /// No connection, or it broke.
    Refused(String),
    /// A deadline passed: what did not happen in time.
    Timeout(&'static str),
    /// The answer is not HTTP/1.x.
    Protocol(String),
}

impl Failure {
    /// The failure in a few words: the probe's stderr line, the
    /// dashboard's per-service error.
    pub fn describe(&self) -> String {
        match self {
            Failure::Status(code, reason) => format!("unhealthy: HTTP {code} {reason}"),
            Failure::Refused(why) => format!("unreachable: {why}"),
            Failure::Timeout(what) => format!("timed out: {what}"),
            Failure::Protocol(why) => format!("bad answer: {why}"),
        }
    }
}

/// An answer read off the wire.
#[derive(Debug)]
pub struct Answer {
    /// The status code.
    pub code: u16,
    /// The reason phrase.
    pub reason: String,
    /// The body, de-chunked, at most [`MAX_BODY`] bytes.
    pub body: Vec<u8>,
    /// Whether the body ended (by its length, its last chunk or the
    /// close) within [`MAX_BODY`]: a cut body is no document.
    pub complete: bool,
}

/// Runs `zb-health probe`.
pub fn run(args: &ProbeArgs) -> Result<(), input::Failure> {
    let url = parse_url(&args.url).map_err(input::unusable)?;
    let (connect, timeout) = (args.connect_timeout, args.timeout);
    let outcome =
        send(&url, &Request::get("*/*"), connect, timeout).and_then(|answer| match answer.code {
            200..400 => Ok(answer.code),
            code => Err(Failure::Status(code, answer.reason)),
        });
    match outcome {
        Ok(status) => {
            println!("{}: HTTP {status}", args.url);
            Ok(())
        }
        Err(failure) => {
            eprintln!("{}: {}", args.url, failure.describe());
            Err(input::Failure::Failed)
        }
    }
}

/// What remains of the deadline; a timeout failure when nothing does.
fn remaining(deadline: Instant, what: &'static str) -> Result<Duration, Failure> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or(Failure::Timeout(what))
}

fn io_failure(error: &std::io::Error, what: &'static str) -> Failure {
    match error.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => Failure::Timeout(what),
        _ => Failure::Refused(format!("{what}: {error}")),
    }
}

/// What [`send`] sends: a method, extra headers and a JSON body (none when
/// empty).
pub struct Request<'a> {
    /// `GET`, `POST`, …
    pub method: &'a str,
    /// The `Accept` header.
    pub accept: &'a str,
    /// More headers, e.g. `Authorization`.
    pub headers: Vec<(&'static str, String)>,
    /// A JSON body; none when empty.
    pub body: String,
}

impl<'a> Request<'a> {
    /// A plain `GET` asking for `accept`.
    pub fn get(accept: &'a str) -> Self {
        Self {
            method: "GET",
            accept,
            headers: Vec::new(),
            body: String::new(),
        }
    }
}

/// One exchange of `request` with `url`, within `timeout` for the whole
/// exchange (`connect_timeout` for the connect): the answer, whatever its
/// status, or why there was none.
///
/// # Errors
///
/// No connection, a deadline passed, or the answer is not HTTP/1.x.
pub fn send(
    url: &HttpUrl,
    request: &Request<'_>,
    connect_timeout: Duration,
    timeout: Duration,
) -> Result<Answer, Failure> {
    let deadline = Instant::now() + timeout;
    let addrs: Vec<SocketAddr> = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|e| Failure::Refused(format!("cannot resolve `{}`: {e}", url.host)))?
        .collect();
    let mut last = Failure::Refused(format!("`{}` resolves to no address", url.host));
    let mut stream = 'connect: {
        for addr in addrs {
            let budget =
                remaining(deadline, "no connection within the timeout")?.min(connect_timeout);
            match TcpStream::connect_timeout(&addr, budget) {
                Ok(s) => break 'connect s,
                Err(e) if matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock) => {
                    last = Failure::Timeout("no connection within the connect timeout");
                }
                Err(e) => last = Failure::Refused(format!("connect to {addr}: {e}")),
            }
        }
        return Err(last);
    };

    let extra: String = request
        .headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let body = if request.body.is_empty() {
        String::new()
    } else {
        format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            request.body.len()
        )
    };
    let request = format!(
        "{} {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: zb-health-probe/{}\r\nAccept: {}\r\nConnection: close\r\n{extra}{body}\r\n{}",
        request.method,
        url.target,
        url.authority,
        env!("CARGO_PKG_VERSION"),
        request.accept,
        request.body,
    );
    let sending = "could not send the request within the timeout";
    stream
        .set_write_timeout(Some(remaining(deadline, sending)?))
        .map_err(|e| io_failure(&e, sending))?;
    stream
        .write_all(request.as_bytes())
        .map_err(|e| io_failure(&e, sending))?;

    // The head, up to the blank line.
    let waiting = "no answer within the timeout";
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            break end + 4;
        }
        if buf.len() > MAX_HEAD {
            return Err(Failure::Protocol("the response head is too large".into()));
        }
        stream
            .set_read_timeout(Some(remaining(deadline, waiting)?))
            .map_err(|e| io_failure(&e, waiting))?;
        match stream.read(&mut chunk) {
            Ok(0) => {
                return Err(Failure::Protocol(
                    "the connection closed before a complete response head".into(),
                ));
            }
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(io_failure(&e, waiting)),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let code = parts.next().and_then(|c| c.parse::<u16>().ok());
    let reason = parts.next().unwrap_or_default().to_string();
    let Some(code) = code.filter(|c| (100..1000).contains(c) && version.starts_with("HTTP/1."))
    else {
        return Err(Failure::Protocol(format!(
            "not an HTTP/1.x status line: `{}`",
            status_line.escape_default()
        )));
    };

    // Drain the body within the deadline, so the server sees a clean close.
    // A body still arriving at the deadline fails the probe, as it does the
    // kubelet's and `curl --max-time`: the answer did not come in time.
    let mut length = None;
    let mut chunked = false;
    for header in lines {
        if let Some((name, value)) = header.split_once(':') {
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.to_ascii_lowercase().contains("chunked");
            }
        }
    }
    let body = buf.split_off(head_end);
    let (raw, complete) = drain_body(&mut stream, body, length, chunked, deadline)?;
    let (body, complete) = match (chunked, complete) {
        (true, true) => dechunk(&raw).map_or((Vec::new(), false), |data| (data, true)),
        (true, false) => (Vec::new(), false),
        (false, _) => (raw, complete),
    };
    Ok(Answer {
        code,
        reason,
        body,
        complete,
    })
}

/// Reads the body until it is complete (by its length, its last chunk or
/// the close), at most [`MAX_BODY`] bytes; a timeout failure at `deadline`.
/// Another read error ends it quietly: the status has been read. Returns
/// the raw body and whether it ended.
fn drain_body(
    stream: &mut TcpStream,
    mut body: Vec<u8>,
    length: Option<usize>,
    chunked: bool,
    deadline: Instant,
) -> Result<(Vec<u8>, bool), Failure> {
    let late = "the body did not finish within the timeout";
    let mut chunk = [0u8; 4096];
    loop {
        let complete = if chunked {
            chunked_complete(&body)
        } else {
            length.is_some_and(|n| body.len() >= n)
        };
        if complete || body.len() > MAX_BODY {
            return Ok((body, complete));
        }
        let left = remaining(deadline, late)?;
        if stream.set_read_timeout(Some(left)).is_err() {
            return Ok((body, false));
        }
        match stream.read(&mut chunk) {
            // The close ends a body of no stated length.
            Ok(0) => return Ok((body, length.is_none() && !chunked)),
            Ok(n) => body.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(Failure::Timeout(late));
            }
            Err(_) => return Ok((body, false)),
        }
    }
}

/// Walks a chunked body, copying each chunk's data into `data` when given
/// (the completeness check after each read copies nothing):
/// `Ok(Some(end))` once its last (zero-size) chunk is in, `end` being
/// where what follows it starts (trailers, then a blank line); `Ok(None)`
/// while a chunk is still to come; `Err(())` when a chunk's size is no hex
/// number.
fn chunks(whole: &[u8], mut data: Option<&mut Vec<u8>>) -> Result<Option<usize>, ()> {
    let mut body = whole;
    loop {
        let Some(line_end) = find(body, b"\r\n") else {
            return Ok(None);
        };
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| ())?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(Some(whole.len() - body.len()));
        }
        let Some(next) = size.checked_add(2).filter(|&n| body.len() >= n) else {
            return Ok(None);
        };
        if let Some(data) = data.as_deref_mut() {
            data.extend_from_slice(&body[..size]);
        }
        body = &body[next..];
    }
}

/// The data of a complete chunked body, `None` if it is not one.
fn dechunk(body: &[u8]) -> Option<Vec<u8>> {
    let mut data = Vec::with_capacity(body.len());
    chunks(body, Some(&mut data)).ok().flatten().map(|_| data)
}

/// Whether a chunked body has reached its last (zero-size) chunk and the
/// blank line after it. A body that is not chunked after all is complete:
/// reading stops rather than guess.
fn chunked_complete(body: &[u8]) -> bool {
    chunks(body, None).map_or(true, |end| {
        end.is_some_and(|end| find(&body[end..], b"\r\n").is_some())
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_http_with_an_optional_port_and_path() {
        let url = parse_url("http://127.0.0.1:8080/healthz?x=1#frag").unwrap();
        assert_eq!(
            (url.host.as_str(), url.port, url.authority.as_str()),
            ("127.0.0.1", 8080, "127.0.0.1:8080")
        );
        assert_eq!(url.target, "/healthz?x=1");
        let url = parse_url("HTTP://[::1]/").unwrap();
        assert_eq!((url.host.as_str(), url.port), ("::1", 80));
        assert_eq!(parse_url("http://localhost").unwrap().target, "/");
        assert_eq!(parse_url("http://h?q").unwrap().target, "/?q");
        for bad in [
            "https://127.0.0.1/",
            "ftp://h/",
            "127.0.0.1:8080/healthz",
            "http://:80/",
            "http://h:0/",
            "http://h:99999/",
            "http://h:x/",
            "http://u@h/",
            "http://h/a b",
            "http://[::1/",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_chunked_body_is_complete_after_its_last_chunk() {
        assert!(chunked_complete(b"5\r\nhello\r\n0\r\n\r\n"));
        assert!(chunked_complete(b"5;ext=1\r\nhello\r\n0\r\nX-T: 1\r\n\r\n"));
        assert!(!chunked_complete(b"5\r\nhello\r\n"));
        assert!(!chunked_complete(b"5\r\nhel"));
        assert!(!chunked_complete(b""));
    }

    #[test]
    fn a_chunked_body_reads_as_its_data() {
        assert_eq!(
            dechunk(b"5\r\nhello\r\n1;x=y\r\n!\r\n0\r\n\r\n").as_deref(),
            Some(&b"hello!"[..])
        );
        assert_eq!(dechunk(b"5\r\nhel"), None);
    }
}
