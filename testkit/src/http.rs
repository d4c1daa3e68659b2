//! The one HTTP client of the workspace's tests and of the bench: one
//! HTTP/1.1 request per fresh connection with `Connection: close`, read to
//! EOF and parsed by hand. Std sockets only, so a test sees the bytes the
//! server sent with no client library in between, and a refused or reset
//! exchange is an `Err` a caller can poll on.
//!
//! The CLI's `probe` keeps its own dependency-free client on purpose.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// An HTTP response as read off the wire.
#[derive(Debug, Clone)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Every header, in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The raw body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first header named `name`, case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON; panics with the body if it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&self.body)))
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The status of the entry `name` of a canonical body, e.g. `"Unhealthy"`.
    pub fn entry_status(&self, name: &str) -> Option<String> {
        self.json()["entries"][name]["status"]
            .as_str()
            .map(str::to_owned)
    }
}

/// One HTTP/1.1 request over a fresh connection, read until the server
/// closes it. A refused, reset or malformed exchange is an `Err`, so a
/// caller can poll a server that is starting or going away.
///
/// # Errors
///
/// The connection failed, or the answer is not HTTP.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> std::io::Result<Response> {
    // A hung server fails the request instead of the whole test run.
    request_within(Duration::from_secs(30), addr, method, path, body)
}

/// [`request`] that gives up when connecting or any read takes longer than
/// `patience`: for a caller that expects no answer and must not wait long
/// for it (the bench's saturated server).
///
/// # Errors
///
/// The connection failed or timed out, or the answer is not HTTP.
pub fn request_within(
    patience: Duration,
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> std::io::Result<Response> {
    exchange(patience, addr, method, path, &[], body)
}

/// [`request`] with extra request headers, e.g. `Authorization`.
///
/// # Errors
///
/// As [`request`].
pub fn request_with_headers(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<Response> {
    request_with_headers_and_body(addr, method, path, headers, "")
}

/// [`request`] with extra request headers and a JSON `body`.
///
/// # Errors
///
/// As [`request`].
pub fn request_with_headers_and_body(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<Response> {
    exchange(Duration::from_secs(30), addr, method, path, headers, body)
}

/// [`request_with_headers`] from async code, as [`request_async`].
///
/// # Errors
///
/// As [`request`]; also when the blocking task could not run.
pub async fn request_with_headers_async(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<Response> {
    let (method, path) = (method.to_owned(), path.to_owned());
    let headers: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    tokio::task::spawn_blocking(move || {
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        request_with_headers(addr, &method, &path, &headers)
    })
    .await
    .map_err(std::io::Error::other)?
}

/// One exchange: the request line, `Host`, `Connection: close`, `headers`,
/// and `body` when not empty.
fn exchange(
    patience: Duration,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect_timeout(&addr, patience.min(Duration::from_secs(10)))?;
    stream.set_read_timeout(Some(patience))?;
    let content_type = if body.is_empty() {
        ""
    } else {
        "Content-Type: application/json\r\n"
    };
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{extra}{content_type}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse_response(&raw)
}

/// Parses a whole HTTP/1.1 response (head and body, as read until the
/// server closed the connection).
///
/// # Errors
///
/// `InvalidData` when `raw` is not an HTTP response.
pub fn parse_response(raw: &[u8]) -> std::io::Result<Response> {
    let invalid = || std::io::Error::new(std::io::ErrorKind::InvalidData, "not an HTTP response");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(invalid)?;
    let head = String::from_utf8(raw[..split].to_vec()).map_err(|_| invalid())?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(invalid)?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Ok(Response {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    })
}

/// [`request`] from async code: the blocking exchange runs on the runtime's
/// blocking pool, so a test on a single-threaded runtime keeps serving the
/// tasks it spawned (its own in-process server among them) meanwhile.
///
/// # Errors
///
/// As [`request`]; also when the blocking task could not run.
pub async fn request_async(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> std::io::Result<Response> {
    let (method, path, body) = (method.to_owned(), path.to_owned(), body.to_owned());
    tokio::task::spawn_blocking(move || request(addr, &method, &path, &body))
        .await
        .map_err(std::io::Error::other)?
}

/// The head of one request read off `stream` (a server's side, for the
/// tests' fixture servers): blocking, with a 10 s read timeout, up to the
/// blank line; `None` when the client closes or stalls first.
pub fn read_request_head(stream: &mut TcpStream) -> Option<String> {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

#[cfg(test)]
mod tests {
    use super::parse_response;

    #[test]
    fn parses_the_status_the_headers_in_order_and_the_body() {
        let raw =
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 2\r\nContent-Type: application/json\r\n\r\n{}";
        let r = parse_response(raw).unwrap();
        assert_eq!(r.status, 503);
        assert_eq!(r.header("Content-Length"), Some("2"));
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.headers[0].0, "content-length");
        assert_eq!(r.body, b"{}");
    }

    #[test]
    fn a_response_without_a_head_is_invalid_data() {
        let err = parse_response(b"HTTP/1.1 200 OK\r\n").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    }
}
