//! The bench's GETs, over the workspace's one HTTP client
//! (`zb_health_testkit::request_within`: a fresh connection,
//! `Connection: close`, read to EOF). The bench adds a short patience and
//! what comparing bodies byte for byte needs: the body must be sized.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use zb_health_testkit::Response;

/// How long a GET may wait: short, because `BENCH=management` asks a
/// saturated server that never answers, and a report should not stall.
const PATIENCE: Duration = Duration::from_secs(5);

/// `GET path`; an error unless the body is sized (`Content-Length`, not
/// chunked), since the bench compares zb-health's bytes with the bare
/// handler's.
pub fn get(addr: SocketAddr, path: &str) -> io::Result<Response> {
    sized(fetch(addr, path)?)
}

/// Only the status code of `GET path`: enough to know a peer of another
/// ecosystem is up, whatever framing it gives its body (Node chunks).
pub fn status(addr: SocketAddr, path: &str) -> io::Result<u16> {
    fetch(addr, path).map(|r| r.status)
}

/// `GET path` as it came, within [`PATIENCE`].
fn fetch(addr: SocketAddr, path: &str) -> io::Result<Response> {
    zb_health_testkit::request_within(PATIENCE, addr, "GET", path, "")
}

/// `response` with its body cut to its `Content-Length`, or an error if it
/// is chunked: health bodies are sized, so actix sends `Content-Length`; a
/// chunked body would mean the server changed and the comparison must be
/// re-checked.
fn sized(mut response: Response) -> io::Result<Response> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    if response
        .header("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"))
    {
        return Err(bad("chunked response; expected a sized body"));
    }
    if let Some(len) = response.header("content-length") {
        let len: usize = len.parse().map_err(|_| bad("bad content-length"))?;
        response.body.truncate(len);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::sized;

    fn response(headers: &[(&str, &str)], body: &[u8]) -> zb_health_testkit::Response {
        let raw = headers
            .iter()
            .fold(String::from("HTTP/1.1 200 OK\r\n"), |head, (n, v)| {
                head + n + ": " + v + "\r\n"
            });
        zb_health_testkit::parse_response(&[(raw + "\r\n").as_bytes(), body].concat()).unwrap()
    }

    #[test]
    fn a_sized_body_is_cut_to_its_content_length() {
        let r = sized(response(&[("content-length", "2")], b"{}extra")).unwrap();
        assert_eq!(r.body, b"{}");
    }

    #[test]
    fn a_chunked_body_is_refused() {
        let r = response(&[("Transfer-Encoding", "chunked")], b"2\r\n{}\r\n0\r\n\r\n");
        assert!(sized(r).is_err());
    }
}
