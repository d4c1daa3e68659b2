//! `zb-health dashboard URL...`: one page over several services' history.
//!
//! Each URL is one pod's `/health/history` (an explicit address, never a
//! Service that picks a random pod). A thread per URL polls it every
//! `--period` with the `--timeout`, over `probe`'s std-only client, and
//! keeps the last good document and when it came: browsers read that copy,
//! so ten open pages cost the services what none costs, and a service that
//! stops answering keeps its last document on the page.
//!
//! A std `TcpListener` serves `GET /` and `GET /ui` (the page the services
//! serve at `/health/ui`, `zb_health_spec::history::PAGE`) and
//! `GET /history`, the aggregate:
//! `{"nowMs":…,"services":[{"url","state","lastAnsweredMs","error","history"}]}`.
//! A URL that answers but not with a history document is that service's
//! error, never the dashboard's.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use crate::args::DashboardArgs;
use crate::input;
use crate::probe::{self, Url};

/// The most of a request head read: a browser's GET is well under it.
const MAX_REQUEST_HEAD: usize = 16 * 1024;
/// How long a browser has to send its request: a slow client holds one
/// thread, never the listener.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once; more are closed at once, so a flood cannot
/// start unbounded threads.
const MAX_CONNECTIONS: usize = 64;
/// The members a body needs to be taken for a history document: three of
/// those `spec/health-history.schema.json` requires, enough to tell it from
/// another JSON answer (the page reads the rest).
const HISTORY_MEMBERS: [&str; 3] = ["nowMs", "tiers", "probes"];

/// What the dashboard knows of one service.
#[derive(Debug)]
struct Service {
    url: String,
    /// Whether the last poll gave a history document.
    answering: bool,
    /// Why the last poll did not, or `None`.
    error: Option<String>,
    /// The last good document (validated JSON, kept verbatim) and when it
    /// came, in Unix epoch ms.
    last: Option<(Box<RawValue>, u64)>,
}

type Services = Arc<Mutex<Vec<Service>>>;

/// Runs `zb-health dashboard`: exit 2 on a URL it cannot use or an address
/// it cannot listen on; otherwise it serves until it is stopped.
pub fn run(args: &DashboardArgs) -> Result<(), input::Failure> {
    let mut urls = Vec::with_capacity(args.urls.len());
    for url in &args.urls {
        let parsed = probe::parse_url(url).map_err(|why| {
            eprintln!("error: {why} (the dashboard reads http:// history URLs)");
            input::Failure::Unusable
        })?;
        urls.push((url.clone(), parsed));
    }
    let listener = TcpListener::bind(args.listen).map_err(|e| {
        eprintln!("error: cannot listen on {}: {e}", args.listen);
        input::Failure::Unusable
    })?;
    let local = listener.local_addr().map_err(|e| {
        eprintln!("error: cannot read the listening address: {e}");
        input::Failure::Unusable
    })?;

    let services: Services = Arc::new(Mutex::new(
        urls.iter()
            .map(|(url, _)| Service {
                url: url.clone(),
                answering: false,
                error: Some("no answer yet".into()),
                last: None,
            })
            .collect(),
    ));
    for (index, (shown, url)) in urls.into_iter().enumerate() {
        let services = Arc::clone(&services);
        let (period, timeout) = (args.period, args.timeout);
        std::thread::spawn(move || poll_forever(&services, index, &shown, &url, period, timeout));
    }

    // Tests and scripts read this line for the port of `--listen …:0`.
    println!("zb-health dashboard: listening on http://{local}/");
    let _ = std::io::stdout().flush();

    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let (services, open) = (Arc::clone(&services), Arc::clone(&open));
        std::thread::spawn(move || {
            serve(stream, &services);
            open.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Polls one service every `period` (from the start of one poll to the
/// next, so a slow service is not polled more often than the others).
fn poll_forever(
    services: &Services,
    index: usize,
    shown: &str,
    url: &Url,
    period: Duration,
    timeout: Duration,
) {
    loop {
        let started = Instant::now();
        let outcome = poll(url, timeout);
        let mut all = services.lock().unwrap_or_else(PoisonError::into_inner);
        let service = &mut all[index];
        match outcome {
            Ok(document) => {
                if !service.answering {
                    eprintln!("{shown}: answering");
                }
                service.answering = true;
                service.error = None;
                service.last = Some((document, now_ms()));
            }
            Err(why) => {
                // Once per change of reason, not once per period.
                if service.answering || service.error.as_deref() != Some(why.as_str()) {
                    eprintln!("{shown}: {why}");
                }
                service.answering = false;
                service.error = Some(why);
            }
        }
        drop(all);
        std::thread::sleep(period.saturating_sub(started.elapsed()));
    }
}

/// One GET of a history URL: the document, or why there is none.
fn poll(url: &Url, timeout: Duration) -> Result<Box<RawValue>, String> {
    let answer =
        probe::fetch(url, timeout, timeout, "application/json").map_err(|f| f.describe())?;
    if answer.code != 200 {
        return Err(format!(
            "not a history endpoint: HTTP {} {}",
            answer.code, answer.reason
        ));
    }
    if !answer.complete {
        return Err("the answer was cut short".into());
    }
    let text = String::from_utf8(answer.body)
        .map_err(|_| "not a history document: the body is not UTF-8".to_string())?;
    history_document(text).map_err(|why| format!("not a history document: {why}"))
}

/// `text` as a history document, verbatim, or why it is none: one JSON
/// object with every member of [`HISTORY_MEMBERS`]. Only the top level is
/// read; the values are checked to be JSON (skipped without recursion, so
/// no nesting overflows the stack) and left to the page.
fn history_document(text: String) -> Result<Box<RawValue>, String> {
    // A body that is no object at all (an HTML page) is named so, not by
    // where its JSON breaks.
    if !text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{')
    {
        return Err("not a JSON object".into());
    }
    let members: HashMap<String, IgnoredAny> =
        serde_json::from_str(&text).map_err(|e| format!("invalid JSON: {e}"))?;
    if let Some(missing) = HISTORY_MEMBERS.iter().find(|m| !members.contains_key(**m)) {
        return Err(format!("no `{missing}`"));
    }
    RawValue::from_string(text).map_err(|e| format!("invalid JSON: {e}"))
}

/// The aggregate at `/history`, as the page reads it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Aggregate<'a> {
    now_ms: u64,
    /// Every service, in the order given.
    services: Vec<ServiceView<'a>>,
}

/// One service in the [`Aggregate`].
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ServiceView<'a> {
    url: &'a str,
    /// `answering` or `unreachable`.
    state: &'static str,
    last_answered_ms: Option<u64>,
    error: Option<&'a str>,
    /// The last document, verbatim.
    history: Option<&'a RawValue>,
}

/// The aggregate of the contract, every service in the order given.
fn aggregate(services: &Services) -> String {
    let all = services.lock().unwrap_or_else(PoisonError::into_inner);
    let aggregate = Aggregate {
        now_ms: now_ms(),
        services: all
            .iter()
            .map(|service| ServiceView {
                url: &service.url,
                state: if service.answering {
                    "answering"
                } else {
                    "unreachable"
                },
                last_answered_ms: service.last.as_ref().map(|(_, at)| *at),
                error: service.error.as_deref(),
                history: service.last.as_ref().map(|(doc, _)| &**doc),
            })
            .collect(),
    };
    serde_json::to_string(&aggregate).expect("the aggregate serialises: string keys only")
}

/// Answers one request and closes the connection.
fn serve(mut stream: TcpStream, services: &Services) {
    let Some((method, path)) = read_request(&mut stream) else {
        return;
    };
    let head_only = method == "HEAD";
    let (status, content_type, body) = match (method.as_str(), path.as_str()) {
        ("GET" | "HEAD", "/" | "/ui") => (
            "200 OK",
            "text/html; charset=utf-8",
            zb_health_spec::history::PAGE.to_string(),
        ),
        ("GET" | "HEAD", "/history") => ("200 OK", "application/json", aggregate(services)),
        ("GET" | "HEAD", _) => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "not found: the dashboard serves /, /ui and /history\n".to_string(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
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

/// The method and path (without the query) of the request on `stream`, or
/// `None` when it is not a request or does not come in time.
fn read_request(stream: &mut TcpStream) -> Option<(String, String)> {
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
    let path = target.split(['?', '#']).next().unwrap_or_default();
    Some((method, path.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aggregate_keeps_the_last_document_of_a_service_that_stopped() {
        let services: Services = Arc::new(Mutex::new(vec![
            Service {
                url: "http://127.0.0.1:1/health/history".into(),
                answering: false,
                error: Some("unreachable: \"refused\"".into()),
                last: Some((
                    history_document(r#"{"nowMs":1,"tiers":{},"probes":[]}"#.into()).unwrap(),
                    5,
                )),
            },
            Service {
                url: "http://127.0.0.1:2/h".into(),
                answering: false,
                error: Some("no answer yet".into()),
                last: None,
            },
        ]));
        let text = aggregate(&services);
        assert!(serde_json::from_str::<IgnoredAny>(&text).is_ok(), "{text}");
        let services_part = text.split_once(",\"services\":").unwrap().1;
        assert_eq!(
            services_part,
            "[{\"url\":\"http://127.0.0.1:1/health/history\",\"state\":\"unreachable\",\"lastAnsweredMs\":5,\"error\":\"unreachable: \\\"refused\\\"\",\"history\":{\"nowMs\":1,\"tiers\":{},\"probes\":[]}},\
             {\"url\":\"http://127.0.0.1:2/h\",\"state\":\"unreachable\",\"lastAnsweredMs\":null,\"error\":\"no answer yet\",\"history\":null}]}"
        );
    }

    #[test]
    fn a_history_document_is_kept_verbatim() {
        let text = " {\"nowMs\": 1.5e3, \"tiers\": {\"ready\": null}, \"probes\": [{\"a\\\"b\": [true, false, -0.25]}], \"s\": \"\\u00e9\\n\"} ";
        let kept = history_document(text.into()).unwrap();
        assert_eq!(kept.get(), text.trim());
    }

    #[test]
    fn anything_else_is_refused_saying_why() {
        for (bad, why) in [
            ("", "not a JSON object"),
            ("[]", "not a JSON object"),
            ("\"x\"", "not a JSON object"),
            ("<html></html>", "not a JSON object"),
            ("{\"tiers\":{},\"probes\":[]}", "no `nowMs`"),
            ("{\"nowMs\":1,\"tiers\":{}}", "no `probes`"),
        ] {
            assert_eq!(history_document(bad.into()).unwrap_err(), why, "{bad:?}");
        }
        for bad in [
            "{",
            "{\"a\":}",
            "{\"a\":1,}",
            "{\"a\":01}",
            "{\"a\":1} {}",
            "{\"a\":\"\u{1}\"}",
            "{\"a\":\"\\x\"}",
            "{\"a\":tru}",
            "{\"a\":1.}",
        ] {
            let why = history_document(bad.into()).unwrap_err();
            assert!(why.starts_with("invalid JSON: "), "{bad:?}: {why}");
        }
    }

    #[test]
    fn deep_nesting_is_read_without_recursion() {
        let depth = 100_000;
        let deep = format!(
            "{{\"nowMs\":1,\"tiers\":{{}},\"probes\":{}{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert!(history_document(deep).is_ok());
    }
}
