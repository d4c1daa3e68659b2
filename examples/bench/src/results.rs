//! `bench/RESULTS.md`: the machine, the date, the one table of ratios, the
//! sweeps with their plots, and how to reproduce.

use std::path::Path;
use std::process::Command;

use crate::report::{Curve, ProbeSweep, Settings};
use crate::summary;

/// What the report says about the machine it ran on.
#[derive(Debug, Clone)]
pub struct Machine {
    /// `model name` of /proc/cpuinfo.
    pub cpu: String,
    /// Logical CPUs this process may use.
    pub cores: usize,
    /// `MemTotal` of /proc/meminfo, GiB.
    pub memory_gib: f64,
    /// /proc/sys/kernel/osrelease.
    pub kernel: String,
    /// `rustc --version`.
    pub rustc: String,
    /// `node --version`, for the peers.
    pub node: String,
    /// `wrk -v`'s first line.
    pub wrk: String,
    /// UTC date and time at the start.
    pub date: String,
}

/// The first line a command prints (stdout, else stderr), or `unknown`.
fn first_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .and_then(|o| {
            let out = if o.stdout.is_empty() {
                o.stderr
            } else {
                o.stdout
            };
            String::from_utf8_lossy(&out)
                .lines()
                .next()
                .map(|l| l.trim().to_owned())
        })
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// A `key : value` line of a /proc file.
pub fn proc_field(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_owned())
    })
}

impl Machine {
    /// Reads /proc and asks the tools for their versions.
    pub fn describe() -> Self {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let memory_kib: f64 = proc_field(&read("/proc/meminfo"), "MemTotal")
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0.0);
        Self {
            cpu: proc_field(&read("/proc/cpuinfo"), "model name")
                .unwrap_or_else(|| "unknown".into()),
            cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
            memory_gib: memory_kib / 1024.0 / 1024.0,
            kernel: read("/proc/sys/kernel/osrelease").trim().to_owned(),
            rustc: first_line("rustc", &["--version"]),
            node: first_line("node", &["--version"]),
            wrk: first_line("wrk", &["-v"]),
            date: first_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        }
    }
}

/// Everything the file is made of.
pub struct Inputs<'a> {
    /// The machine.
    pub machine: &'a Machine,
    /// Load average at the start and the end of the run.
    pub load: (&'a str, &'a str),
    /// The main comparison's wrk settings (`ROUNDS`, `DURATION`, …).
    pub main_settings: String,
    /// The sweeps' settings.
    pub sweep: &'a Settings,
    /// Sweep 1, if it ran.
    pub curves: &'a [Curve],
    /// Sweep 2, if it ran.
    pub probes: Option<&'a ProbeSweep>,
    /// The PNGs drawn, file names relative to the results file.
    pub plots: &'a [(String, String)],
    /// Why the plots are missing, when they are.
    pub plot_error: Option<String>,
    /// Seconds the whole run took.
    pub elapsed_secs: u64,
}

/// Writes the report to `path`.
pub fn write(path: &Path, inputs: &Inputs<'_>) -> Result<(), String> {
    let mut text = render(inputs);
    // `BENCH=cluster` and `BENCH=fleet` keep their own sections (cluster
    // needs root and minutes of its own); a full report carries the last
    // ones over.
    if let Ok(old) = std::fs::read_to_string(path) {
        for (begin, end) in SECTIONS {
            if let Some(section) = existing_section(&old, begin, end) {
                text = match text.find("## How to reproduce") {
                    Some(at) => format!("{}{section}\n\n{}", &text[..at], &text[at..]),
                    None => format!("{text}\n{section}\n"),
                };
            }
        }
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The sections of `RESULTS.md` a mode writes on its own, by markers.
const SECTIONS: [(&str, &str); 2] = [
    (crate::cluster::BEGIN, crate::cluster::END),
    (crate::fleet::BEGIN, crate::fleet::END),
];

/// Replaces the section between `begin` and `end` of `RESULTS.md` at
/// `path` with `body` (or puts it before "## How to reproduce").
pub fn write_section(path: &Path, begin: &str, end: &str, body: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let block = format!("{begin}\n{body}{end}\n");
    let new = match (text.find(begin), text.find(end)) {
        (Some(b), Some(e)) if e > b => format!(
            "{}{block}{}",
            &text[..b],
            &text[e + end.len()..].trim_start_matches('\n')
        ),
        _ => match text.find("## How to reproduce") {
            Some(at) => format!("{}{block}\n{}", &text[..at], &text[at..]),
            None => format!("{text}\n{block}"),
        },
    };
    std::fs::write(path, new).map_err(|e| format!("{}: {e}", path.display()))
}

/// The section between `begin` and `end` of an existing `RESULTS.md`, so
/// the full report keeps it.
pub fn existing_section<'a>(results: &'a str, begin: &str, end: &str) -> Option<&'a str> {
    let b = results.find(begin)?;
    let e = results.find(end)?;
    (e > b).then(|| &results[b..e + end.len()])
}

/// The report's Markdown.
pub fn render(i: &Inputs<'_>) -> String {
    let m = i.machine;
    let mut out = String::new();
    out.push_str("# zb-health benchmark results\n\n");
    out.push_str(&format!(
        "Measured {} by `bench/run.sh` in one run of {} min {} s. Written by the run itself: do not edit by hand, run it again.\n\n",
        m.date,
        i.elapsed_secs / 60,
        i.elapsed_secs % 60
    ));
    out.push_str("**A shared machine.** Other work may use the same cores during a run; the load average below says how busy the machine was (the run itself adds about 1.5: wrk and a server). Absolute requests/s are therefore noisy. The ratios compare runs made minutes apart in the same process, alternating the sides, and are what to read; a ratio within a few percent of its goal is a tie.\n\n");
    out.push_str("## Machine\n\n| | |\n|---|---|\n");
    for (k, v) in [
        ("CPU", m.cpu.clone()),
        ("cores (logical, usable)", m.cores.to_string()),
        ("memory", format!("{:.1} GiB", m.memory_gib)),
        ("kernel", m.kernel.clone()),
        ("rustc", m.rustc.clone()),
        ("node (peers)", m.node.clone()),
        ("wrk", m.wrk.clone()),
        ("load average at start (1, 5, 15 min)", i.load.0.to_owned()),
        ("load average at end", i.load.1.to_owned()),
    ] {
        out.push_str(&format!("| {k} | {v} |\n"));
    }
    out.push_str(&format!(
        "\nSettings: {}; sweeps: {} round(s) of `wrk -t1 -d{}` per point, connections {:?}, probe counts {:?}.\n\n",
        i.main_settings, i.sweep.rounds, i.sweep.duration, i.sweep.concurrency, i.sweep.probe_counts
    ));
    out.push_str("## All ratios of the run\n\n");
    out.push_str("Every benchmark mode (`compare`: live and ready against bare handlers; `policy`: execution policy; `watchdog`: watchdogs; `management`: management port; `disclosure`; `hysteresis`; `grpc`: gRPC Watch; `limit`: the ready tier at the limit) and the sweeps below, one row per headline number. The Benchmark column names the `BENCH=` mode that measures the row on its own (`examples/bench/README.md`), or the sweep it comes from. The goals are the project's own, listed per mode in that README; `-` marks a comparison without one.\n\n");
    out.push_str(&summary::markdown(&summary::rows()));
    out.push_str("\n**Reading the table.** The two `compare` goals are judged on req/s; the CPU rows (the server worker's on-CPU time per request, from `/proc/<pid>/task/<tid>/schedstat`) are the same comparison less disturbed by other work on the machine. Where both views miss a goal together, the gap is the code's, not the machine's. Two five-second runs of the same server differ by 10–20 % on this shared virtual machine, so a single ratio within that of its goal is a tie; the `limit` rows that are close are measured in alternating one-second slices for that reason, and instruction counts (`examples/bench/README.md`) settle what wall-clock time cannot. The `sweep` rows quote concurrency 64; the `memory` rows are each server process's `VmHWM` after the whole concurrency sweep.\n");
    out.push_str("\n**The `limit` rows** (P1–P11) are worker CPU per request, one worker per server pinned to CPU 1 and wrk to CPU 0 (`src/limit.rs`). P1, P2, P2+ and P10 alternate their two sides in one-second slices within each round and are the median of the rounds' ratios; P11 comes from the medians of the five-second runs. P12 is the median of three pairs of fresh processes. A cached tier (P2+, P10) answers with the body it rendered last while no kept result changed and no lifecycle entry applies, so it costs about what `/healthz` costs. An uncached probe that answers at its first poll (P2, P11) costs no deadline timer, shared future or task: only its panic guard and an in-flight slot (one compare-and-swap).\n");
    out.push_str("\nThe full output of every benchmark (per-round numbers, CPU per request, the execution-policy and gRPC tables) is at the end of this file.\n\n");

    out.push_str("## The servers compared\n\n");
    out.push_str("Every server has one worker and listens on 127.0.0.1, and its ready answer covers the same three trivially fast probes (`database`, `disk-space`, `cache`: each resolves healthy with a description):\n\n");
    out.push_str("| server | what `/ready` does per request |\n|---|---|\n");
    out.push_str("| zb-health | `/health/ready` of `map_zb_health` over a registry of the three probes: each run under its deadline, panic guard and in-flight bound, single-flight, the canonical JSON body |\n");
    out.push_str("| zb-health, 1 s cache | the same with `.cache(1 s)` on each probe: most requests serve the cached results |\n");
    out.push_str("| bare actix join! | a hand-written actix handler: `tokio::join!` of the same three `Probe::check` calls, a serde body of the same shape; no deadline, no guard, no bound |\n");
    out.push_str("| terminus (Node) | `@godaddy/terminus` on Node's `http` server: its `/ready` health check runs the three probes with `Promise.all` on every request and answers `{\"status\":\"ok\",…}` |\n");
    out.push_str("| lightship (Node, 1 s state) | `lightship`'s `/ready` (fastify) answers from a state the service sets; the peer runs the three probes every second and calls `signalReady()`. That is the equivalent of zb-health's 1 s cache, so the ratios compare it with the cached zb-health |\n");
    out.push_str("| fastapi-health (Python) | FastAPI on uvicorn (uvloop, httptools), one worker process: fastapi-health's `/ready` runs the three probes as FastAPI dependencies on every request |\n\n");
    out.push_str("One worker each: actix runs one worker thread (`.workers(1)`), Node one event-loop thread and uvicorn one process with one event loop, so each server computes on one core and wrk (one thread) on the other. Node has helper threads (its garbage collector, the libuv pool) that actix does not; they are part of what a Node service costs. Only one server is loaded at a time; the others sit idle. The peers' sources are in `bench/peers/`; `bench/run.sh` installs their packages from npm and PyPI, at pinned versions, into `target/bench-peers/`.\n\n");

    out.push_str("## Ready tier against concurrency\n\n");
    if let Some((file, _)) = i.plots.iter().find(|(f, _)| f.contains("p99")) {
        out.push_str(&format!(
            "![ready-tier p99 latency against concurrency]({file})\n\n"
        ));
    }
    out.push_str(&crate::report::curves_markdown(i.curves));
    out.push_str("\n## Ready throughput against the number of probes\n\n");
    if let Some((file, _)) = i.plots.iter().find(|(f, _)| f.contains("probes")) {
        out.push_str(&format!(
            "![ready-tier throughput against the number of probes]({file})\n\n"
        ));
    }
    if let Some(sweep) = i.probes {
        out.push_str(&crate::report::probes_markdown(sweep, i.sweep.connections));
        out.push_str("\nWithout a cache every request runs every probe, and at most 16 probes run at once across all requests (the registry's default in-flight bound, BE-HLTH-006), so throughput falls with the probe count; with a 1 s cache a request reads the results and writes the body, which is what remains.\n");
    }
    if let Some(error) = &i.plot_error {
        out.push_str(&format!("\nNo plots were drawn: {error}.\n"));
    }
    out.push_str("\n## How to reproduce\n\n```sh\nbench/run.sh                  # installs wrk, a font and the Node peers if missing; ~10 min\nROUNDS=9 DURATION=10s SWEEP_ROUNDS=5 SWEEP_DURATION=10s bench/run.sh   # longer, steadier\n```\n\n");
    out.push_str("It builds the bench in release mode, runs every benchmark in one process (`BENCH=all` of `zb-health-bench`; each server of the sweeps is a child process of it), prints the ratio table, and rewrites this file and the PNGs beside it. Settings are described in `examples/bench/README.md`. On an idle machine with more rounds the absolute numbers rise; the ratios are what should reproduce.\n");
    out
}

/// A `kB` field (`VmRSS:`, `VmHWM:`) of `/proc/<pid>/status`, `pid` a
/// number or `self`; 0 when it cannot be read.
pub fn proc_status_kb(pid: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cpu_model_and_memory_lines() {
        let cpuinfo = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\ncpu MHz\t\t: 2450.000\n";
        assert_eq!(
            proc_field(cpuinfo, "model name").as_deref(),
            Some("AMD EPYC 7B13")
        );
        let meminfo = "MemTotal:        8148448 kB\nMemFree:  1 kB\n";
        assert_eq!(
            proc_field(meminfo, "MemTotal").as_deref(),
            Some("8148448 kB")
        );
        assert_eq!(proc_field(meminfo, "SwapTotal"), None);
    }
}
