//! `BENCH=cluster`: what the cluster costs as it grows.
//!
//! For each size (`CLUSTER_SIZES`, default 3, 9, 27) it starts that many
//! lean nodes (`zb-health-cluster-node`: chitchat with a 200 ms gossip,
//! the library's keys, the active-node rule with `CLUSTER_EXPECTED_SIZE`
//! set to the size) inside a network namespace of its own
//! (`zb_health_testkit::fault::NetNs`), and measures:
//!
//! * **idle cost**, over `CLUSTER_IDLE` (10 s) with no request sent: CPU
//!   per node from `/proc/PID/stat` (user + system, as a share of one
//!   core), the UDP bytes per second that reach each node (an `iptables`
//!   counting rule per gossip port), and RSS per node (`VmRSS`);
//! * **failover after a cut**: the active node's gossip cut both ways from
//!   the rest (`iptables`, silently dropped), then the time until another
//!   node answers `/health/active` 200; healed, and settled on the oldest
//!   again before the next run;
//! * **failover after a kill**: the active node killed (`SIGKILL`, no
//!   goodbye), then the time until another node answers 200; the killed
//!   node restarted on its own address before the next run;
//! * **hand-over after a SIGTERM**: the active node stopped as an
//!   orchestrator stops a pod (`SIGTERM`: it drains and gossips
//!   `Leaving`), then the time until another node answers 200, measured
//!   as the kill is; the node restarted once it has exited.
//!
//! Each failover and hand-over is the median of `CLUSTER_RUNS` (3) runs. Needs root
//! (namespaces and packet filters). The table and a plot go into
//! `bench/RESULTS.md` between its `BENCH=cluster` markers (kept when the
//! full report rewrites the file) and `bench/cluster-growth.png`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use zb_health_testkit::fault::NetNs;
use zb_health_testkit::{
    Launch, ServiceProcess, eventually, request_within, restart_cluster_node, start_cluster,
};

use crate::plot::{self, Chart, Series};

/// Where the section starts in `RESULTS.md`.
pub const BEGIN: &str = "<!-- BENCH=cluster begin -->";
/// Where it ends.
pub const END: &str = "<!-- BENCH=cluster end -->";

/// How long any condition may take on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(120);

/// The measurements of one size.
#[derive(Debug, Clone)]
struct Row {
    size: usize,
    cpu_percent: f64,
    udp_bytes_per_s: f64,
    rss_kib: f64,
    cut_ms: Vec<u128>,
    kill_ms: Vec<u128>,
    term_ms: Vec<u128>,
}

impl Row {
    fn median(v: &[u128]) -> Option<u128> {
        let mut v = v.to_vec();
        v.sort_unstable();
        v.get(v.len() / 2).copied()
    }
}

/// Runs every size and writes the section and the plot.
pub fn run() -> Result<(), String> {
    let sizes = crate::env_list("CLUSTER_SIZES", &[3usize, 9, 27]);
    let runs: usize = crate::env_or("CLUSTER_RUNS", 3);
    let idle = Duration::from_secs(crate::env_or("CLUSTER_IDLE", 10));
    let bin = node_binary()?;
    let mut rows = Vec::new();
    for &size in &sizes {
        eprintln!("cluster: {size} nodes");
        let row = measure(&bin, size, runs, idle)?;
        eprintln!("  {row:?}");
        rows.push(row);
    }
    let out = PathBuf::from(
        std::env::var("BENCH_OUT")
            .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench").to_owned()),
    );
    let section = markdown(&rows, runs, idle);
    println!("{section}");
    let plotted = plot_rows(&out.join("cluster-growth.png"), &rows);
    if let Err(e) = &plotted {
        eprintln!("cluster: no plot: {e}");
    }
    write_section(&out.join("RESULTS.md"), &section, plotted.is_ok())
}

/// The node binary beside this one, built first: `cargo run` builds only
/// the binary it runs, so the node beside it may be older than the library
/// it is meant to measure (`bench/run.sh` builds both).
fn node_binary() -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let bin = me.with_file_name("zb-health-cluster-node");
    let release = me
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|dir| dir == "release");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut build = std::process::Command::new(cargo);
    build
        .args([
            "build",
            "-p",
            "zb-health-bench",
            "--bin",
            "zb-health-cluster-node",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if release {
        build.arg("--release");
    }
    match build.status() {
        Ok(status) if status.success() => {}
        Ok(status) => return Err(format!("building zb-health-cluster-node: {status}")),
        // No cargo here: use the binary as it is, if there is one.
        Err(e) => eprintln!("cluster: cannot run cargo ({e}); using {}", bin.display()),
    }
    bin.is_file().then_some(bin.clone()).ok_or_else(|| {
        format!(
            "{} not built: cargo build --release -p zb-health-bench --bins",
            bin.display()
        )
    })
}

fn measure(bin: &Path, size: usize, runs: usize, idle: Duration) -> Result<Row, String> {
    let ns = NetNs::new();
    ns.enter();
    let launch = Launch::new(bin)
        .env("CLUSTER_EXPECTED_SIZE", size.to_string())
        .env("RUST_LOG", "warn");
    let mut nodes = start_cluster(&launch, size);
    let all: Vec<usize> = (0..size).collect();
    eventually("node 0 alone active", PATIENCE, || {
        (active_among(&nodes, &all) == Some(0)
            && all[1..].iter().all(|&i| status(&nodes[i]) == 503))
        .then_some(())
    });
    // Idle: no request at all while the clocks run.
    let gossip: Vec<std::net::SocketAddr> = nodes
        .iter()
        .map(|n| n.gossip.parse().expect("a gossip address"))
        .collect();
    ns.count_udp(&gossip);
    let cpu_before: Vec<u64> = nodes.iter().map(cpu_ticks).collect();
    let bytes_before = ns.udp_bytes();
    let start = Instant::now();
    std::thread::sleep(idle);
    let elapsed = start.elapsed().as_secs_f64();
    let cpu_after: Vec<u64> = nodes.iter().map(cpu_ticks).collect();
    let bytes_after = ns.udp_bytes();
    let ticks_per_s = 100.0; // USER_HZ on Linux
    let cpu: f64 = cpu_after
        .iter()
        .zip(&cpu_before)
        .map(|(a, b)| (a - b) as f64 / ticks_per_s / elapsed * 100.0)
        .sum::<f64>()
        / size as f64;
    let bytes: f64 = gossip
        .iter()
        .map(|g| {
            let p = g.port();
            bytes_after.get(&p).copied().unwrap_or(0) - bytes_before.get(&p).copied().unwrap_or(0)
        })
        .sum::<u64>() as f64
        / size as f64
        / elapsed;
    let rss = nodes.iter().map(rss_kib).sum::<u64>() as f64 / size as f64;

    // Failover after a cut: the active node alone on one side.
    let mut cut_ms = Vec::new();
    for _ in 0..runs {
        let active = wait_active(&nodes, &all);
        let rest: Vec<usize> = all.iter().copied().filter(|&i| i != active).collect();
        let at = Instant::now();
        ns.cut(
            &[gossip[active]],
            &rest.iter().map(|&i| gossip[i]).collect::<Vec<_>>(),
        );
        wait_active(&nodes, &rest);
        cut_ms.push(at.elapsed().as_millis());
        ns.heal();
        // Settled: the oldest alone active again.
        eventually("one active node after the heal", PATIENCE, || {
            let on: Vec<usize> = all
                .iter()
                .copied()
                .filter(|&i| status(&nodes[i]) == 200)
                .collect();
            (on == [active]).then_some(())
        });
        std::thread::sleep(Duration::from_secs(1));
    }

    // Failover after a kill, and the hand-over after a SIGTERM (the
    // drain gossips `Leaving`), each measured the same way.
    let kill_ms = stop_active(&launch, &mut nodes, runs, ServiceProcess::kill);
    let term_ms = stop_active(&launch, &mut nodes, runs, |n| n.sigterm());
    drop(nodes);
    drop(ns);
    Ok(Row {
        size,
        cpu_percent: cpu,
        udp_bytes_per_s: bytes,
        rss_kib: rss,
        cut_ms,
        kill_ms,
        term_ms,
    })
}

/// `runs` times: the active node stopped with `stop`, then the time until
/// another node answers 200; once it has exited it is restarted on its own
/// address, the youngest, and a standby before the next run.
fn stop_active(
    launch: &Launch,
    nodes: &mut [ServiceProcess],
    runs: usize,
    stop: impl Fn(&mut ServiceProcess),
) -> Vec<u128> {
    let all: Vec<usize> = (0..nodes.len()).collect();
    let mut took = Vec::new();
    for _ in 0..runs {
        let active = wait_active(nodes, &all);
        let rest: Vec<usize> = all.iter().copied().filter(|&i| i != active).collect();
        let at = Instant::now();
        stop(&mut nodes[active]);
        wait_active(nodes, &rest);
        took.push(at.elapsed().as_millis());
        nodes[active].wait_exit(PATIENCE);
        restart_cluster_node(launch, nodes, active);
        eventually("the restarted node a standby", PATIENCE, || {
            (status(&nodes[active]) == 503 && active_among(nodes, &rest).is_some()).then_some(())
        });
        std::thread::sleep(Duration::from_secs(2));
    }
    took
}

/// `/health/active`'s status code (0: no answer within 300 ms).
fn status(node: &ServiceProcess) -> u16 {
    request_within(
        Duration::from_millis(300),
        node.app,
        "GET",
        "/health/active",
        "",
    )
    .map_or(0, |r| r.status)
}

/// The first of `which` that answers 200, if any.
fn active_among(nodes: &[ServiceProcess], which: &[usize]) -> Option<usize> {
    which.iter().copied().find(|&i| status(&nodes[i]) == 200)
}

/// Polls `which` until one answers 200 (every 10 ms a sweep).
fn wait_active(nodes: &[ServiceProcess], which: &[usize]) -> usize {
    let start = Instant::now();
    loop {
        if let Some(i) = active_among(nodes, which) {
            return i;
        }
        assert!(start.elapsed() < PATIENCE, "no active node among {which:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// utime + stime of the process, in clock ticks.
fn cpu_ticks(node: &ServiceProcess) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", node.pid())).unwrap_or_default();
    // The fields after the command name, which is in parentheses.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15, i.e. 11 and 12 after ')'.
    let at = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    at(11) + at(12)
}

fn rss_kib(node: &ServiceProcess) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", node.pid())).unwrap_or_default();
    crate::report::status_kib(&status, "VmRSS").unwrap_or(0)
}

fn markdown(rows: &[Row], runs: usize, idle: Duration) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "## Cluster growth\n");
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "`BENCH=cluster`, finished {date}, load average {} at the end.\n",
        crate::loadavg()
    );
    let _ = writeln!(
        o,
        "Lean nodes (`zb-health-cluster-node`: chitchat with a 200 ms gossip, the library's keys, `CLUSTER_EXPECTED_SIZE` = the size) in a network namespace of their own on one machine. Idle cost over {} s with no request sent: CPU per node from `/proc` (user + system, % of one core), the UDP bytes per second reaching each node (an `iptables` counter per gossip port), RSS per node. Failover: the active node cut off both ways (`iptables`), or killed (`SIGKILL`), until another node answers `/health/active` 200; hand-over: the active node stopped with `SIGTERM` (it drains and gossips `Leaving`), measured the same way; the median of {runs} runs, each listed.\n",
        idle.as_secs()
    );
    let _ = writeln!(
        o,
        "| nodes | CPU per node | gossip bytes/s per node | ÷ size | RSS per node | failover after a cut | after a kill | hand-over after a SIGTERM |"
    );
    let _ = writeln!(o, "|---|---|---|---|---|---|---|---|");
    for r in rows {
        let list = |v: &[u128]| {
            v.iter()
                .map(|ms| format!("{:.1}", *ms as f64 / 1000.0))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let med = |v: &[u128]| {
            Row::median(v).map_or("—".into(), |ms| format!("{:.1} s", ms as f64 / 1000.0))
        };
        let _ = writeln!(
            o,
            "| {} | {:.2} % | {:.0} | {:.0} | {:.1} MiB | {} ({}) | {} ({}) | {} ({}) |",
            r.size,
            r.cpu_percent,
            r.udp_bytes_per_s,
            r.udp_bytes_per_s / r.size as f64,
            r.rss_kib / 1024.0,
            med(&r.cut_ms),
            list(&r.cut_ms),
            med(&r.kill_ms),
            list(&r.kill_ms),
            med(&r.term_ms),
            list(&r.term_ms),
        );
    }
    let _ = writeln!(o, "\nThe goals of `BENCH=cluster`:\n");
    let cuts: Vec<String> = rows
        .iter()
        .filter_map(|r| Row::median(&r.cut_ms).map(|ms| format!("{:.1} s", ms as f64 / 1000.0)))
        .collect();
    let within = rows
        .iter()
        .all(|r| Row::median(&r.cut_ms).is_some_and(|ms| ms <= 5_000));
    let margin = service_kit::cluster::view_config()
        .handover()
        .margin()
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "* Failover after a cut within 5 s at every size: **{}** ({}). A successor waits out the hand-over's margin of silence, {:.1} s here (the view's 2 s lease plus a slack of twice its hearing delay: a beat, a 200 ms gossip round and a 200 ms refresh), so that the old node has stepped down first (`spec/conflicts.md`); it does not grow with the size.",
        if within { "met" } else { "not met" },
        cuts.join(", "),
        margin.as_secs_f64()
    );
    let terms: Vec<String> = rows
        .iter()
        .filter_map(|r| Row::median(&r.term_ms).map(|ms| format!("{:.2} s", ms as f64 / 1000.0)))
        .collect();
    let term_within = rows.iter().all(|r| r.term_ms.iter().all(|&ms| ms <= 1_000));
    let _ = writeln!(
        o,
        "* Hand-over after a SIGTERM within 1 s in every run (issue 39): **{}** (medians {}). The draining node gossips `Leaving`, so the next-oldest takes over on that gossip, without failure detection or the margin.",
        if term_within { "met" } else { "not met" },
        terms.join(", ")
    );
    if let Some(last) = rows.iter().max_by_key(|r| r.size) {
        let _ = writeln!(
            o,
            "* Gossip CPU per node under 1 % of a core at {} nodes: **{}** ({:.2} %).",
            last.size,
            if last.cpu_percent < 1.0 {
                "met"
            } else {
                "not met"
            },
            last.cpu_percent
        );
    }
    if let (Some(first), Some(last)) = (rows.first(), rows.last())
        && last.size > first.size
    {
        let per_member: Vec<f64> = rows
            .iter()
            .map(|r| r.udp_bytes_per_s / r.size as f64)
            .collect();
        let (lo, hi) = per_member
            .iter()
            .fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
        let size = last.size as f64 / first.size as f64;
        let bytes = last.udp_bytes_per_s / first.udp_bytes_per_s.max(1.0);
        let _ = writeln!(
            o,
            "* Per-node gossip bytes at most linear in the size: the bytes per node per member stay between {lo:.0} and {hi:.0} B/s, so the growth is linear; from {} to {} nodes ({size:.0}× the size) they grew {bytes:.2}×, the smallest cluster lying {:.0} % below the line (its nodes have fewer peers to gossip with than chitchat's fan-out of 3).",
            first.size,
            last.size,
            (1.0 - per_member[0] / hi) * 100.0
        );
    }
    o
}

fn plot_rows(path: &Path, rows: &[Row]) -> Result<(), String> {
    plot::load_font()?;
    let series = |label: &str, f: &dyn Fn(&Row) -> Option<f64>| Series {
        label: label.into(),
        points: rows
            .iter()
            .filter_map(|r| f(r).map(|y| (r.size as f64, y)))
            .collect(),
    };
    let lines = [
        series("gossip bytes/s per node ÷ 100", &|r| {
            Some(r.udp_bytes_per_s / 100.0)
        }),
        series("CPU per node, ‰ of a core", &|r| {
            Some(r.cpu_percent * 10.0)
        }),
        series("failover after a cut, s", &|r| {
            Row::median(&r.cut_ms).map(|ms| ms as f64 / 1000.0)
        }),
        series("failover after a kill, s", &|r| {
            Row::median(&r.kill_ms).map(|ms| ms as f64 / 1000.0)
        }),
        series("hand-over after a SIGTERM, s", &|r| {
            Row::median(&r.term_ms).map(|ms| ms as f64 / 1000.0)
        }),
    ];
    plot::draw(
        path,
        &Chart {
            title: "Cluster growth: per-node cost and failover",
            x_label: "nodes",
            y_label: "value (see legend)",
            series: &lines,
            legend: plotters::prelude::SeriesLabelPosition::UpperLeft,
        },
    )
}

/// Replaces the section between the markers of `RESULTS.md` (or puts it
/// before "## How to reproduce").
fn write_section(path: &Path, section: &str, plotted: bool) -> Result<(), String> {
    let picture = if plotted {
        "\n![cluster growth: per-node cost and failover against the size](cluster-growth.png)\n"
    } else {
        ""
    };
    crate::results::write_section(path, BEGIN, END, &format!("{section}{picture}"))
}
