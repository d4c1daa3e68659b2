//! A minimal blocking HTTP/1.1 GET, enough to fetch one health body and
//! its headers from a local server. Written out rather than pulling an HTTP
//! client crate into the workspace for three requests at startup.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// One response, read whole.
#[derive(Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Header names lower-cased, in wire order.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as text, for printing.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// `GET path` with `Connection: close`, so the response ends at EOF and no
/// keep-alive bookkeeping is needed.
pub fn get(addr: SocketAddr, path: &str) -> io::Result<Response> {
    parse(&fetch(addr, path)?)
}

/// Only the status code of `GET path`: enough to know a peer of another
/// ecosystem is up, whatever framing it gives its body (Node chunks).
pub fn status(addr: SocketAddr, path: &str) -> io::Result<u16> {
    let raw = fetch(addr, path)?;
    std::str::from_utf8(&raw[..raw.len().min(64)])
        .unwrap_or("")
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "bad status line"))
}

/// The raw response to `GET path`, read to EOF.
fn fetch(addr: SocketAddr, path: &str) -> io::Result<Vec<u8>> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    Ok(raw)
}

fn parse(raw: &[u8]) -> io::Result<Response> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no header end"))?;
    let head = std::str::from_utf8(&raw[..split]).map_err(|_| bad("non-UTF-8 headers"))?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| bad("bad status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    // Health bodies are sized, so actix sends Content-Length; a chunked body
    // would mean the server changed and the comparison must be re-checked.
    if headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"))
    {
        return Err(bad("chunked response; expected a sized body"));
    }
    if let Some(len) = headers.iter().find(|(n, _)| n == "content-length") {
        let len: usize = len.1.parse().map_err(|_| bad("bad content-length"))?;
        body.truncate(len);
    }
    Ok(Response {
        status,
        headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn parses_status_headers_and_sized_body() {
        let raw =
            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nContent-Type: application/json\r\n\r\n{}";
        let r = parse(raw).unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert_eq!(r.body, b"{}");
    }
}
