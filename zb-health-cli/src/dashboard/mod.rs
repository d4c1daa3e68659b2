//! `zb-health dashboard URL...`: one page over a fleet's history.
//!
//! Each URL is one pod's `/health/history` (an explicit address, never a
//! Service that picks a random pod). With `--discover` the URLs are seeds:
//! each pod's history lists every member's history URL, and those pods
//! are polled too ([`fleet`]). A fixed pool of `--concurrency` workers
//! polls each pod every `--period` with its own `--timeout`, over
//! `probe`'s std-only client, and keeps the last good document, merged
//! with each delta (`?since=`, [`doc`]): browsers read that copy, so ten
//! open pages cost the pods what none costs, and a pod that stops
//! answering keeps its last document on the page.
//!
//! The page and the aggregate JSON are served by [`serve`]. A URL that
//! answers but not with a history document is that pod's error, never
//! the dashboard's.

mod doc;
mod fleet;
mod serve;

use std::io::Write;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::args::DashboardArgs;
use crate::input;
use crate::probe;
use fleet::Fleet;

/// The path a bare management address (`http://host:port`) stands for.
const DEFAULT_HISTORY_PATH: &str = "/health/history";

/// Runs `zb-health dashboard`: exit 2 on a URL it cannot use or an address
/// it cannot listen on; otherwise it serves until it is stopped.
pub fn run(args: &DashboardArgs) -> Result<(), input::Failure> {
    let mut urls = Vec::with_capacity(args.urls.len());
    for url in &args.urls {
        let mut parsed = probe::parse_url(url).map_err(|why| {
            input::unusable(format!("{why} (the dashboard reads http:// history URLs)"))
        })?;
        let mut shown = url.clone();
        if parsed.target == "/" {
            parsed.target = DEFAULT_HISTORY_PATH.to_string();
            shown = format!("{}{DEFAULT_HISTORY_PATH}", url.trim_end_matches('/'));
        }
        urls.push((shown, parsed));
    }
    let listener = TcpListener::bind(args.listen)
        .map_err(|e| input::unusable(format!("cannot listen on {}: {e}", args.listen)))?;
    let local = listener
        .local_addr()
        .map_err(|e| input::unusable(format!("cannot read the listening address: {e}")))?;

    let polling = fleet::Polling {
        period: args.period,
        timeout: args.timeout,
        discover: args.discover,
        forget_after: args.forget_after,
        delta: !args.no_delta,
    };
    let fleet = Arc::new(Fleet::new(urls, polling));
    for _ in 0..args.concurrency {
        let fleet = Arc::clone(&fleet);
        std::thread::spawn(move || fleet.work());
    }

    // Tests and scripts read this line for the port of `--listen …:0`.
    println!("zb-health dashboard: listening on http://{local}/");
    let _ = std::io::stdout().flush();

    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if open.fetch_add(1, Ordering::SeqCst) >= serve::MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let (fleet, open) = (Arc::clone(&fleet), Arc::clone(&open));
        std::thread::spawn(move || {
            serve::serve(stream, &fleet);
            open.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(())
}
