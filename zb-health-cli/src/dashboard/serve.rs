//! The dashboard's own HTTP: a std `TcpListener`, a thread per
//! connection up to [`MAX_CONNECTIONS`].
//!
//! * `GET /` and `GET /ui`: the page (`zb_health_spec::history::PAGE`).
//! * `GET /history`: the fleet, one row per pod,
//!   `{"nowMs","discover","services":[{"id","url","given","state","lastAnsweredMs","error","summary"}]}`;
//!   with `?full`, each row carries its pod's whole (merged) `history`
//!   too; with `?member=ID`, only that pod's row, with its `history`.
//! * `GET /stats`: the polling counters (polls, bytes).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde::Serialize;

use super::doc::{History, Summary};
use super::fleet::{Fleet, Pod, now_ms};

/// The most of a request head read: a browser's GET is well under it.
const MAX_REQUEST_HEAD: usize = 16 * 1024;
/// How long a browser has to send its request: a slow client holds one
/// thread, never the listener.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once; more are closed at once, so a flood cannot
/// start unbounded threads.
pub const MAX_CONNECTIONS: usize = 64;
/// The content types of the aggregate and of the plain answers.
const JSON: &str = "application/json";
const TEXT: &str = "text/plain; charset=utf-8";

/// The aggregate at `/history`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Aggregate<'a> {
    now_ms: u64,
    discover: bool,
    services: Vec<Row<'a>>,
}

/// One pod in the [`Aggregate`].
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Row<'a> {
    id: u64,
    url: &'a str,
    /// Given on the command line, or discovered.
    given: bool,
    /// `answering` or `unreachable`.
    state: &'static str,
    last_answered_ms: Option<u64>,
    error: Option<&'a str>,
    summary: Option<Summary<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    history: Option<&'a History>,
}

/// A pod's row; with `full`, its whole document too.
fn row(pod: &Pod, full: bool) -> Row<'_> {
    Row {
        id: pod.id,
        url: &pod.url,
        given: pod.given,
        state: if pod.answering {
            "answering"
        } else {
            "unreachable"
        },
        last_answered_ms: pod.last_answered_ms,
        error: pod.error.as_deref(),
        summary: pod.history.as_ref().map(History::summary),
        history: pod.history.as_ref().filter(|_| full),
    }
}

/// The aggregate: every pod (`member: None`) or one; `None` when that one
/// is not in the fleet.
pub fn aggregate(fleet: &Fleet, detail_full: bool, member: Option<u64>) -> Option<String> {
    let roster = fleet.roster();
    let pods = roster.all();
    let rows: Vec<Row<'_>> = match member {
        Some(id) => vec![row(pods.iter().find(|p| p.id == id)?, true)],
        None => pods.iter().map(|p| row(p, detail_full)).collect(),
    };
    let aggregate = Aggregate {
        now_ms: now_ms(),
        discover: fleet.polling.discover,
        services: rows,
    };
    Some(serde_json::to_string(&aggregate).expect("the aggregate serialises: string keys only"))
}

fn stats(fleet: &Fleet) -> String {
    let s = &fleet.stats;
    let n = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
    serde_json::json!({
        "pods": fleet.roster().all().len(),
        "fullEvery": super::fleet::FULL_EVERY,
        "polls": n(&s.polls),
        "fullPolls": n(&s.full_polls),
        "deltaPolls": n(&s.delta_polls),
        "failedPolls": n(&s.failed_polls),
        "fullBytes": n(&s.full_bytes),
        "deltaBytes": n(&s.delta_bytes),
    })
    .to_string()
}

/// Answers one request and closes the connection.
pub fn serve(mut stream: TcpStream, fleet: &Fleet) {
    let Some((method, path, query)) = read_request(&mut stream) else {
        return;
    };
    let head_only = method == "HEAD";
    let (status, content_type, body) = match (method.as_str(), path.as_str()) {
        ("GET" | "HEAD", "/" | "/ui") => (
            "200 OK",
            "text/html; charset=utf-8",
            zb_health_spec::history::PAGE.to_string(),
        ),
        ("GET" | "HEAD", "/history") => history(fleet, &query),
        ("GET" | "HEAD", "/stats") => ("200 OK", JSON, stats(fleet)),
        ("GET" | "HEAD", _) => (
            "404 Not Found",
            TEXT,
            "not found: the dashboard serves /, /ui, /history and /stats\n".to_string(),
        ),
        _ => (
            "405 Method Not Allowed",
            TEXT,
            "only GET and HEAD\n".to_string(),
        ),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nAllow: GET, HEAD\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    if !head_only {
        let _ = stream.write_all(body.as_bytes());
    }
    let _ = stream.flush();
}

/// `/history`, `/history?full`, `/history?member=ID`.
fn history(fleet: &Fleet, query: &str) -> (&'static str, &'static str, String) {
    let mut full = false;
    let mut member = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=').unwrap_or((pair, "")) {
            ("full", _) => full = true,
            ("member", id) => match id.parse::<u64>() {
                Ok(id) => member = Some(id),
                Err(_) => {
                    return (
                        "400 Bad Request",
                        TEXT,
                        format!("member: {id:?} is not a pod's id (the `id` of /history)\n"),
                    );
                }
            },
            _ => {}
        }
    }
    match aggregate(fleet, full, member) {
        Some(body) => ("200 OK", JSON, body),
        None => (
            "404 Not Found",
            TEXT,
            "no such pod: it left the fleet\n".to_string(),
        ),
    }
}

/// The method, path and query of the request on `stream`, or `None` when
/// it is not a request or does not come in time.
fn read_request(stream: &mut TcpStream) -> Option<(String, String, String)> {
    stream.set_read_timeout(Some(REQUEST_TIMEOUT)).ok()?;
    stream.set_write_timeout(Some(REQUEST_TIMEOUT)).ok()?;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        if buf.len() > MAX_REQUEST_HEAD {
            return None;
        }
        match stream.read(&mut chunk) {
            Ok(0) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    let head = String::from_utf8_lossy(&buf);
    let mut parts = head.lines().next()?.split(' ');
    let method = parts.next()?.to_string();
    let target = parts.next()?;
    let target = target.split('#').next().unwrap_or_default();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Some((method, path.to_string(), query.to_string()))
}
