//! The sweeps of the benchmark report (`BENCH=all`, after the per-mode
//! tables): every server under test runs as its own child process, so its
//! peak RSS is its own, and wrk loads them all with the same settings.
//!
//! 1. The ready tier's p99 latency and throughput against concurrency for
//!    zb-health (uncached and with a 1 s cache), the bare actix handler and
//!    each peer of another ecosystem found in the peers directory.
//! 2. zb-health's ready throughput against the number of probes (1, 10,
//!    100, 1,000), with and without a 1 s cache on every probe.
//!
//! All servers of a sweep are started first and loaded in turn, the order
//! rotating each round, so a burst of background work (a build) falls on
//! all of them alike; each figure is the median of its rounds.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::{client, summary, wrk};

/// The concurrency the run's one table quotes sweep 1 at (the nearest
/// point swept): loaded well past one connection per core, short of the
/// queueing that dominates at 256.
pub const QUOTE_AT: u32 = 64;

/// The 1 s cache of the cached zb-health servers: lightship's peer
/// refreshes its state every second too.
pub const CACHE: Duration = Duration::from_secs(1);

/// What the sweeps run; each from the environment (see the README).
#[derive(Debug, Clone)]
pub struct Settings {
    /// Rounds per sweep (`SWEEP_ROUNDS`).
    pub rounds: usize,
    /// Duration of one wrk run in the sweeps (`SWEEP_DURATION`).
    pub duration: String,
    /// The concurrency points of sweep 1 (`SWEEP_CONNECTIONS`).
    pub concurrency: Vec<u32>,
    /// The probe counts of sweep 2 (`SWEEP_PROBES`).
    pub probe_counts: Vec<usize>,
    /// Connections of sweep 2, and the concurrency the summary quotes
    /// sweep 1 at (`CONNECTIONS`).
    pub connections: u32,
    /// Where `npm install` put the peers (`PEERS_DIR`).
    pub peers_dir: PathBuf,
}

/// One server under test, a child process; killed when dropped.
pub struct Server {
    /// Its name in the tables and plots.
    pub label: String,
    /// The ready path it serves.
    pub path: &'static str,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Resident set after its first answer, before any load (KiB).
    pub idle_rss_kib: Option<u64>,
    child: Child,
}

impl Server {
    /// Starts `command`, waits (up to 30 s) for its `listening <addr>` line
    /// on stdout, and checks that `path` answers 200.
    pub fn spawn(label: &str, path: &'static str, mut command: Command) -> Result<Self, String> {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{label}: could not start {command:?}: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout pipe")?;
        // Read on a thread so the wait has a deadline: a server that never
        // binds must not hang the report.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut server = Self {
            label: label.to_owned(),
            path,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            idle_rss_kib: None,
            child,
        };
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .map_err(|_| format!("{label}: no `listening` line within 30 s"))?;
        server.addr = parse_listening(&line)
            .ok_or_else(|| format!("{label}: expected `listening <addr>`, got {line:?}"))?;
        let status = client::status(server.addr, path).map_err(|e| format!("{label}: {e}"))?;
        if status != 200 {
            return Err(format!("{label}: GET {path} answered {status}, not 200"));
        }
        server.idle_rss_kib = server.status_kib("VmRSS");
        Ok(server)
    }

    /// This process's `/proc/<pid>/status` value for `key`, in KiB.
    pub fn status_kib(&self, key: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status_kib(&status, key)
    }

    fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `listening 127.0.0.1:port` → the address.
pub fn parse_listening(line: &str) -> Option<SocketAddr> {
    line.trim().strip_prefix("listening ")?.parse().ok()
}

/// A `Key:   1234 kB` line of `/proc/<pid>/status`, in KiB.
pub fn status_kib(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// A bench server in its own process: `BENCH=serve` of this binary.
pub fn own(kind: &str, probes: usize, cache: Option<Duration>) -> Command {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("zb-health-bench"));
    let mut command = Command::new(exe);
    command
        .env("BENCH", "serve")
        .env("SERVE", kind)
        .env("PROBES", probes.to_string())
        .env(
            "CACHE_MS",
            cache.map_or_else(String::new, |c| c.as_millis().to_string()),
        );
    command
}

/// A peer script run by Node from the peers directory.
fn node(peers: &Path, script: &str) -> Command {
    let mut command = Command::new("node");
    // Run from the peers directory, where node_modules is; the script by
    // its name there, so a relative PEERS_DIR works too.
    command.arg(script).current_dir(peers);
    command
}

/// The peers found: each is used if its package (or, for Python, its
/// virtual environment) is installed.
fn peer_commands(peers: &Path) -> Vec<(&'static str, Command)> {
    // Absolute: each peer runs from this directory, and a relative program
    // path would be looked up from there.
    let peers = &peers.canonicalize().unwrap_or_else(|_| peers.to_path_buf());
    let mut found = Vec::new();
    let installed = |package: &str| peers.join("node_modules").join(package).is_dir();
    if installed("@godaddy/terminus") {
        found.push(("terminus (Node)", node(peers, "terminus.cjs")));
    }
    if installed("lightship") {
        found.push(("lightship (Node, 1 s state)", node(peers, "lightship.mjs")));
    }
    // The Python peer's virtual environment, made by bench/run.sh.
    let python = peers.join("py/bin/python");
    if python.is_file() {
        let mut command = Command::new(python);
        command.arg("fastapi_health_peer.py").current_dir(peers);
        found.push(("fastapi-health (Python)", command));
    }
    found
}

/// One server's results in sweep 1: per concurrency point, the medians.
#[derive(Debug, Clone)]
pub struct Curve {
    /// The server's label.
    pub label: String,
    /// `(connections, req/s, p99 ms)`, medians over the rounds.
    pub points: Vec<(u32, f64, f64)>,
    /// Resident set before load, KiB.
    pub idle_rss_kib: Option<u64>,
    /// Peak resident set (`VmHWM`) after the whole sweep's load, KiB.
    pub peak_rss_kib: Option<u64>,
    /// Whether all of its runs were free of errors and non-2xx answers.
    pub clean: bool,
    /// What wrk reported for each run that was not clean.
    pub errors: Vec<String>,
}

/// Sweep 2: zb-health's ready req/s per probe count, uncached and cached.
#[derive(Debug, Clone)]
pub struct ProbeSweep {
    /// `(probes, uncached req/s, cached req/s)`, medians.
    pub points: Vec<(usize, f64, f64)>,
    /// `(probes, uncached peak RSS KiB, cached peak RSS KiB)`.
    pub peak_rss_kib: Vec<(usize, Option<u64>, Option<u64>)>,
    /// Whether every run was clean.
    pub clean: bool,
}

/// Loads `servers` with wrk for every concurrency in `concurrency`, the
/// server order rotating each round; returns the runs per server and
/// point. The first round is preceded by a 1 s warm-up of each server.
fn load_all(
    servers: &[Server],
    concurrency: &[u32],
    rounds: usize,
    duration: &str,
) -> Result<Vec<Vec<Vec<wrk::Run>>>, String> {
    let load = |c: u32, d: &str| wrk::Load {
        threads: 1,
        connections: c,
        duration: d.to_owned(),
    };
    for s in servers {
        wrk::run(&s.url(), &load(32, "1s")).map_err(|e| format!("{}: {e}", s.label))?;
    }
    let mut runs = vec![vec![Vec::new(); concurrency.len()]; servers.len()];
    for round in 0..rounds {
        for (ci, &c) in concurrency.iter().enumerate() {
            for k in 0..servers.len() {
                let si = (k + round) % servers.len();
                let s = &servers[si];
                let run = wrk::run(&s.url(), &load(c, duration))
                    .map_err(|e| format!("{} at -c{c}: {e}", s.label))?;
                eprintln!(
                    "  sweep round {}/{rounds}  -c{c:<4} {:<30} {:>9.0} req/s  p99 {}{}",
                    round + 1,
                    s.label,
                    run.requests_per_sec,
                    run.p99_ms.map_or("n/a".into(), |p| format!("{p:.2} ms")),
                    if run.is_clean() {
                        String::new()
                    } else {
                        format!(
                            "  (non-2xx {}, socket errors: {})",
                            run.non_2xx,
                            run.socket_errors.as_deref().unwrap_or("none")
                        )
                    }
                );
                runs[si][ci].push(run);
            }
        }
    }
    Ok(runs)
}

/// Sweep 1. Returns one curve per server that started; a peer that fails
/// to start is reported and left out rather than ending the report.
pub fn concurrency_sweep(settings: &Settings) -> Result<Vec<Curve>, String> {
    let mut servers = vec![
        Server::spawn("zb-health", "/health/ready", own("zb", 3, None))?,
        Server::spawn(
            "zb-health, 1 s cache",
            "/health/ready",
            own("zb", 3, Some(CACHE)),
        )?,
        Server::spawn("bare actix join!", "/ready3", own("bare", 3, None))?,
    ];
    for (label, command) in peer_commands(&settings.peers_dir) {
        match Server::spawn(label, "/ready", command) {
            Ok(server) => servers.push(server),
            Err(e) => eprintln!("warning: peer left out: {e}"),
        }
    }
    if servers.len() == 3 {
        eprintln!(
            "warning: no peers in {} (bench/run.sh installs them)",
            settings.peers_dir.display()
        );
    }
    let runs = load_all(
        &servers,
        &settings.concurrency,
        settings.rounds,
        &settings.duration,
    )?;
    Ok(servers
        .iter()
        .zip(runs)
        .map(|(s, per_point)| Curve {
            label: s.label.clone(),
            clean: per_point.iter().flatten().all(wrk::Run::is_clean),
            errors: settings
                .concurrency
                .iter()
                .zip(&per_point)
                .flat_map(|(&c, runs)| {
                    runs.iter().filter(|r| !r.is_clean()).map(move |r| {
                        format!(
                            "-c{c}: non-2xx {}, socket errors: {}",
                            r.non_2xx,
                            r.socket_errors.as_deref().unwrap_or("none")
                        )
                    })
                })
                .collect(),
            points: settings
                .concurrency
                .iter()
                .zip(&per_point)
                .map(|(&c, runs)| {
                    let rps: Vec<f64> = runs.iter().map(|r| r.requests_per_sec).collect();
                    let p99: Vec<f64> = runs.iter().filter_map(|r| r.p99_ms).collect();
                    (c, wrk::median(&rps), wrk::median(&p99))
                })
                .collect(),
            idle_rss_kib: s.idle_rss_kib,
            peak_rss_kib: s.status_kib("VmHWM"),
        })
        .collect())
}

/// Sweep 2: one zb-health process per probe count and cache setting.
pub fn probe_sweep(settings: &Settings) -> Result<ProbeSweep, String> {
    let mut servers = Vec::new();
    for &n in &settings.probe_counts {
        for cache in [None, Some(CACHE)] {
            let label = format!(
                "zb-health, {n} probes{}",
                if cache.is_some() { ", 1 s cache" } else { "" }
            );
            servers.push(Server::spawn(&label, "/health/ready", own("zb", n, cache))?);
        }
    }
    let runs = load_all(
        &servers,
        &[settings.connections],
        settings.rounds,
        &settings.duration,
    )?;
    let rps = |i: usize| {
        let v: Vec<f64> = runs[i][0].iter().map(|r| r.requests_per_sec).collect();
        wrk::median(&v)
    };
    let points = (0..settings.probe_counts.len())
        .map(|i| (settings.probe_counts[i], rps(2 * i), rps(2 * i + 1)))
        .collect();
    let peak_rss_kib = (0..settings.probe_counts.len())
        .map(|i| {
            (
                settings.probe_counts[i],
                servers[2 * i].status_kib("VmHWM"),
                servers[2 * i + 1].status_kib("VmHWM"),
            )
        })
        .collect();
    Ok(ProbeSweep {
        points,
        peak_rss_kib,
        clean: runs.iter().flatten().flatten().all(wrk::Run::is_clean),
    })
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or("n/a".into(), |k| format!("{:.1}", k as f64 / 1024.0))
}

/// Sweep 1's tables in Markdown: p99, req/s, and memory.
pub fn curves_markdown(curves: &[Curve]) -> String {
    let Some(first) = curves.first() else {
        return String::new();
    };
    let head = |what: &str| {
        let mut h = format!("| {what} |");
        for (c, ..) in &first.points {
            h.push_str(&format!(" {c} conn. |"));
        }
        h.push('\n');
        h.push_str(&"|---".repeat(first.points.len() + 1));
        h.push_str("|\n");
        h
    };
    let mut out =
        String::from("p99 latency of the ready tier, ms (wrk `--latency`; lower is better)\n\n");
    out.push_str(&head("server"));
    for curve in curves {
        out.push_str(&format!(
            "| {}{} |",
            curve.label,
            if curve.clean { "" } else { " (!)" }
        ));
        for (_, _, p99) in &curve.points {
            out.push_str(&format!(" {p99:.2} |"));
        }
        out.push('\n');
    }
    out.push_str("\nrequests/s of the ready tier\n\n");
    out.push_str(&head("server"));
    for curve in curves {
        out.push_str(&format!("| {} |", curve.label));
        for (_, rps, _) in &curve.points {
            out.push_str(&format!(" {rps:.0} |"));
        }
        out.push('\n');
    }
    out.push_str("\nmemory of each server process, MiB (`VmRSS` before load, `VmHWM` after the whole sweep)\n\n| server | RSS idle | peak RSS under load |\n|---|---|---|\n");
    for curve in curves {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            curve.label,
            mib(curve.idle_rss_kib),
            mib(curve.peak_rss_kib)
        ));
    }
    if curves.iter().any(|c| !c.clean) {
        out.push_str("\n(!) wrk saw socket errors or non-2xx answers in some run of that server (a timeout is a request unanswered within wrk's 2 s; such requests are missing from its latency figures, so the p99 shown flatters that server):\n\n");
        for curve in curves.iter().filter(|c| !c.clean) {
            for error in &curve.errors {
                out.push_str(&format!("- {}, {error}\n", curve.label));
            }
        }
    }
    out
}

/// Sweep 2's table in Markdown.
pub fn probes_markdown(sweep: &ProbeSweep, connections: u32) -> String {
    let mut out = format!(
        "zb-health ready tier against the number of probes, wrk -c{connections}\n\n| probes | req/s, uncached | req/s, 1 s cache | peak RSS uncached, MiB | peak RSS cached, MiB |\n|---|---|---|---|---|\n"
    );
    for ((n, plain, cached), (_, rss_plain, rss_cached)) in
        sweep.points.iter().zip(&sweep.peak_rss_kib)
    {
        out.push_str(&format!(
            "| {n} | {plain:.0} | {cached:.0} | {} | {} |\n",
            mib(*rss_plain),
            mib(*rss_cached)
        ));
    }
    if !sweep.clean {
        out.push_str("\nwrk saw socket errors or non-2xx answers in some run of this sweep.\n");
    }
    out
}

/// The sweeps' headline rows for the run's one table: at [`QUOTE_AT`],
/// each other server's req/s against zb-health's (uncached, or cached for
/// lightship, whose state is refreshed like a 1 s cache), and the
/// probe-count sweep's end points.
pub fn record_summary(curves: &[Curve], sweep: Option<&ProbeSweep>) {
    let at = |label: &str| {
        let curve = curves.iter().find(|c| c.label == label)?;
        let point = curve
            .points
            .iter()
            .min_by_key(|(c, ..)| c.abs_diff(QUOTE_AT))?;
        Some((point.0, point.1, point.2))
    };
    let zb = at("zb-health");
    let zb_cached = at("zb-health, 1 s cache");
    for curve in curves.iter().filter(|c| !c.label.starts_with("zb-health")) {
        let Some(other) = at(&curve.label) else {
            continue;
        };
        let base = if curve.label.starts_with("lightship") {
            zb_cached.map(|z| ("zb-health 1 s cache", z))
        } else {
            zb.map(|z| ("zb-health", z))
        };
        let Some((base_label, (c, rps, p99))) = base else {
            continue;
        };
        summary::record(
            "sweep",
            format!("ready req/s at {c} conn.: {base_label} ÷ {}", curve.label),
            format!("{:.2}", rps / other.1),
            "-",
            None,
        );
        summary::record(
            "sweep",
            format!("ready p99 at {c} conn.: {base_label} vs {}", curve.label),
            format!("{p99:.2} ms vs {:.2} ms", other.2),
            "-",
            None,
        );
    }
    for curve in curves {
        summary::record(
            "memory",
            format!("peak RSS under load: {}", curve.label),
            format!("{} MiB", mib(curve.peak_rss_kib)),
            "-",
            None,
        );
    }
    if let Some(sweep) = sweep
        && let (Some(first), Some(last)) = (sweep.points.first(), sweep.points.last())
    {
        summary::record(
            "probe count",
            format!(
                "ready req/s, {} probes ÷ {} probe(s), uncached",
                last.0, first.0
            ),
            format!("{:.3}", last.1 / first.1),
            "-",
            None,
        );
        summary::record(
            "probe count",
            format!("ready req/s, {} probes: 1 s cache ÷ uncached", last.0),
            format!("{:.2}", last.2 / last.1),
            "-",
            None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str =
        "Name:\tzb-health-bench\nVmPeak:\t  812345 kB\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\n";

    #[test]
    fn reads_peak_and_current_rss_from_proc_status() {
        assert_eq!(status_kib(STATUS, "VmHWM"), Some(20480));
        assert_eq!(status_kib(STATUS, "VmRSS"), Some(10240));
        assert_eq!(status_kib(STATUS, "VmSwap"), None);
    }

    #[test]
    fn the_tables_list_each_unclean_run_of_a_server() {
        let curve = |label: &str, errors: Vec<String>| Curve {
            label: label.into(),
            points: vec![(1, 1000.0, 0.5), (256, 900.0, 1450.0)],
            idle_rss_kib: Some(10240),
            peak_rss_kib: Some(20480),
            clean: errors.is_empty(),
            errors,
        };
        let text = curves_markdown(&[
            curve("zb-health", Vec::new()),
            curve(
                "terminus (Node)",
                vec![
                    "-c256: non-2xx 0, socket errors: connect 0, read 0, write 0, timeout 12"
                        .into(),
                ],
            ),
        ]);
        assert!(text.contains("| terminus (Node) (!) | 0.50 | 1450.00 |"));
        assert!(text.contains("| zb-health | 0.50 | 1450.00 |"));
        assert!(text.contains("| zb-health | 10.0 | 20.0 |"));
        assert!(text.contains("- terminus (Node), -c256: non-2xx 0, socket errors: connect 0, read 0, write 0, timeout 12\n"));
    }

    #[test]
    fn reads_the_announced_address() {
        assert_eq!(
            parse_listening("listening 127.0.0.1:4321\n"),
            Some(SocketAddr::from(([127, 0, 0, 1], 4321)))
        );
        assert_eq!(parse_listening("Server running"), None);
    }
}
