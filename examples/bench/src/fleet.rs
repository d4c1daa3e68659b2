//! `BENCH=fleet`: `zb-health dashboard` over 300 pods (issue 30). The pods
//! are synthetic (`zb_health_testkit::fleet`: real registries' history
//! documents, full rings, over real sockets on 127.0.0.1), the dashboard
//! is the release binary, polling every 2 s with 16 workers.
//!
//! Measured, for the delta polling (the default) and for whole documents
//! only (`--no-delta`), each over `FLEET_ROUNDS` poll rounds once every pod
//! answered: the dashboard's RSS and peak RSS, its CPU per round (utime
//! and stime from `/proc/PID/stat`, all threads), the bytes a round
//! fetches, and headless Chromium's time to render the page (the page's
//! own timing, `data-first-render-ms` and `data-render-ms`).
//!
//! Goals: RSS under 100 MiB, a round under 1 s of CPU, and a quiet fleet's
//! delta round under 5 % of the bytes of a whole round.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use zb_health_testkit::browser;
use zb_health_testkit::dashboard::Dashboard;
use zb_health_testkit::fleet::{Fleet, FleetSpec};

use crate::summary;

/// The markers of the section of `bench/RESULTS.md` this mode writes
/// (kept when the full report is written again).
pub const BEGIN: &str = "<!-- BENCH=fleet begin -->";
pub const END: &str = "<!-- BENCH=fleet end -->";

/// One measured side.
struct Side {
    label: &'static str,
    rss_kb: u64,
    hwm_kb: u64,
    cpu_per_round_ms: f64,
    rounds: f64,
    /// Every how many polls the dashboard reads a whole document (its
    /// `/stats`).
    full_every: u64,
    /// Mean bytes of one pod's poll, whole documents and deltas.
    full_poll_bytes: Option<f64>,
    delta_poll_bytes: Option<f64>,
    /// The page's renders in the traced run, and its main thread's work.
    renders: Option<f64>,
    render: PageWork,
}

/// Runs the measurement, prints it and writes its section of
/// `bench/RESULTS.md` (under `BENCH_OUT`).
pub fn run() -> Result<(), String> {
    let pods: usize = crate::env_or("FLEET_PODS", 300);
    let rounds: u64 = crate::env_or("FLEET_ROUNDS", 15);
    let spec = FleetSpec {
        pods,
        probes: 4,
        unhealthy: pods / 30,
        degraded: pods / 15,
        answer_every: Duration::from_secs(10),
    };
    let started = Instant::now();
    let fleet = Fleet::start(&spec);
    println!(
        "fleet: {pods} synthetic pods, {} probes each (rings full), ready answered every {:?}; started in {:.1} s",
        spec.probes,
        spec.answer_every,
        started.elapsed().as_secs_f64()
    );
    let bin = cli_binary()?;
    let delta = measure(&bin, &fleet, rounds, "delta (default)", &[])?;
    let whole = measure(
        &bin,
        &fleet,
        rounds,
        "whole documents (--no-delta)",
        &["--no-delta"],
    )?;
    let text = report(pods, rounds, &delta, &whole);
    println!("{text}");
    record(&delta, &whole);
    let out = std::env::var_os("BENCH_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("bench"));
    crate::results::write_section(&out.join("RESULTS.md"), BEGIN, END, &text)
}

/// The release `zb-health` beside this binary, built if missing.
fn cli_binary() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let bin = exe
        .parent()
        .ok_or("the bench binary has no directory")?
        .join("zb-health");
    if !bin.is_file() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--release", "-p", "zb-health-cli"])
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err("cargo build --release -p zb-health-cli failed".into());
        }
    }
    Ok(bin)
}

/// `/stats` of the dashboard.
fn stats(d: &Dashboard) -> Result<serde_json::Value, String> {
    d.get("/stats")
        .map(|r| r.json())
        .ok_or_else(|| "the dashboard's /stats did not answer".to_string())
}

/// utime + stime of `pid`, in ms (every thread).
fn cpu_ms(pid: u32) -> Result<f64, String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| e.to_string())?;
    // The fields after the command's closing parenthesis; utime and stime
    // are the 14th and 15th of the line, the 12th and 13th after it.
    let rest = stat.rsplit_once(')').ok_or("no /proc stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().map_err(|e| e.to_string())?
        + fields[12].parse::<f64>().map_err(|e| e.to_string())?;
    // USER_HZ is 100 on Linux whatever the kernel's HZ.
    Ok(ticks * 10.0)
}

fn status_kb(pid: u32, field: &str) -> u64 {
    crate::results::proc_status_kb(&pid.to_string(), field)
}

fn measure(
    bin: &Path,
    fleet: &Fleet,
    rounds: u64,
    label: &'static str,
    more: &[&str],
) -> Result<Side, String> {
    let pods = fleet.pods.len() as u64;
    let mut args = vec!["--period", "2s", "--timeout", "1s"];
    args.extend_from_slice(more);
    let d = Dashboard::start_with(bin, &fleet.urls(), &args);
    let pid = d.pid();
    // Every pod answered, and one more round for the first deltas.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let s = stats(&d)?;
        if s["polls"].as_u64().unwrap_or(0) >= 2 * pods && s["failedPolls"] == 0 {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("{label}: the pods did not all answer: {s}"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let (s0, c0) = (stats(&d)?, cpu_ms(pid)?);
    let p0 = s0["polls"].as_u64().unwrap_or(0);
    while stats(&d)?["polls"].as_u64().unwrap_or(0) < p0 + rounds * pods {
        std::thread::sleep(Duration::from_millis(100));
    }
    let (s1, c1) = (stats(&d)?, cpu_ms(pid)?);
    let n = |s: &serde_json::Value, k: &str| s[k].as_u64().unwrap_or(0) as f64;
    let measured_rounds = (n(&s1, "polls") - n(&s0, "polls")) / pods as f64;
    let per_poll = |bytes: &str, polls: &str| {
        let count = n(&s1, polls) - n(&s0, polls);
        (count > 0.0).then(|| (n(&s1, bytes) - n(&s0, bytes)) / count)
    };
    let page = format!("http://{}/", d.addr);
    let trace = std::env::temp_dir().join(format!("zb-health-fleet-trace-{pid}.json"));
    let dom = browser::dump_dom_traced(&page, &trace);
    let attr = |name: &str| -> Option<f64> {
        let at = dom.find(&format!("{name}=\""))? + name.len() + 2;
        dom[at..].split('"').next()?.parse().ok()
    };
    let render = page_work(&trace, &page);
    let _ = std::fs::remove_file(&trace);
    Ok(Side {
        label,
        rss_kb: status_kb(pid, "VmRSS:"),
        hwm_kb: status_kb(pid, "VmHWM:"),
        cpu_per_round_ms: (c1 - c0) / measured_rounds,
        rounds: measured_rounds,
        full_every: s1["fullEvery"].as_u64().unwrap_or(1),
        full_poll_bytes: per_poll("fullBytes", "fullPolls"),
        delta_poll_bytes: per_poll("deltaBytes", "deltaPolls"),
        renders: attr("data-renders"),
        render: render?,
    })
}

/// The page's renderer main thread in a trace: its busy time and the
/// parts of it (ms).
#[derive(Debug, Default, Clone, Copy)]
struct PageWork {
    busy: f64,
    script: f64,
    style_layout: f64,
    paint: f64,
}

/// Reads `trace` (Chrome's JSON format): the renderer whose document is
/// `page` and, on its main thread, the time of its tasks and of their
/// script, style and layout, and paint events.
fn page_work(trace: &Path, page: &str) -> Result<PageWork, String> {
    let text = std::fs::read_to_string(trace).map_err(|e| format!("{}: {e}", trace.display()))?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let events = json["traceEvents"]
        .as_array()
        .or_else(|| json.as_array())
        .ok_or("no trace events")?;
    let pid = events
        .iter()
        .find(|e| {
            e["name"] == "ParseHTML"
                && e["args"]["beginData"]["url"]
                    .as_str()
                    .is_some_and(|u| u.starts_with(page))
        })
        .and_then(|e| e["pid"].as_u64())
        .ok_or("no renderer parsed the page")?;
    let main = events
        .iter()
        .find(|e| {
            e["ph"] == "M"
                && e["pid"].as_u64() == Some(pid)
                && e["args"]["name"] == "CrRendererMain"
        })
        .and_then(|e| e["tid"].as_u64())
        .ok_or("no renderer main thread")?;
    let mut work = PageWork::default();
    for e in events {
        if e["ph"] != "X" || e["pid"].as_u64() != Some(pid) || e["tid"].as_u64() != Some(main) {
            continue;
        }
        let ms = e["dur"].as_f64().unwrap_or(0.0) / 1000.0;
        match e["name"].as_str().unwrap_or_default() {
            "ThreadControllerImpl::RunTask" => work.busy += ms,
            "EvaluateScript" | "RunMicrotasks" | "FunctionCall" => work.script += ms,
            "UpdateLayoutTree" | "Layout" => work.style_layout += ms,
            "PrePaint" | "Paint" => work.paint += ms,
            _ => {}
        }
    }
    Ok(work)
}

fn fmt_opt(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1}{unit}"))
}

fn report(pods: usize, rounds: u64, delta: &Side, whole: &Side) -> String {
    let round_kb = |per_poll: Option<f64>| per_poll.map(|b| b * pods as f64 / 1024.0);
    let whole_round = round_kb(whole.full_poll_bytes);
    let delta_round = round_kb(delta.delta_poll_bytes);
    let share = match (delta_round, whole_round) {
        (Some(d), Some(w)) if w > 0.0 => Some(100.0 * d / w),
        _ => None,
    };
    let full_every_polls = delta.full_every;
    let full_every = full_every_polls as f64;
    let amortised = share.map(|s| (s * (full_every - 1.0) + 100.0) / full_every);
    let mut t = String::new();
    t.push_str(&format!(
        "## Fleet: the dashboard over {pods} pods (`BENCH=fleet`)\n\n\
         Measured {} by `BENCH=fleet` (also part of `BENCH=all`). {pods} synthetic pods \
         (`zb_health_testkit::fleet`: real registries' history documents, 4 probes each with \
         full rings, {} unhealthy and {} degraded, each answering its ready tier every 10 s) \
         over real sockets on 127.0.0.1; `zb-health dashboard` (release) polls them every 2 s \
         with 16 workers and a 1 s deadline each; {rounds} rounds measured per side once every \
         pod answered. CPU is the dashboard's utime + stime over all its threads. The page's \
         time is read from a Chrome trace of one headless run (the page loaded, then polling \
         every 2 s for 5 s of virtual time, so it renders the list of 300 a few times: the \
         renders column): the page's renderer main thread, its busy time (top-level tasks) \
         and within it script, style and layout, and paint, in real milliseconds.\n\n",
        results_date(),
        pods / 30,
        pods / 15
    ));
    t.push_str("| Side | RSS | peak RSS | CPU per round | bytes per pod poll | page: renders | page: main thread busy | script | style + layout | paint |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for s in [delta, whole] {
        let bytes = match (s.delta_poll_bytes, s.full_poll_bytes) {
            (Some(d), Some(f)) => format!("{d:.0} (delta), {f:.0} (whole)"),
            (Some(d), None) => format!("{d:.0} (delta)"),
            (None, Some(f)) => format!("{f:.0} (whole)"),
            (None, None) => "-".into(),
        };
        let w = s.render;
        t.push_str(&format!(
            "| {} | {:.1} MiB | {:.1} MiB | {:.1} ms ({:.1} rounds) | {bytes} | {} | {:.0} ms | {:.0} ms | {:.0} ms | {:.0} ms |\n",
            s.label,
            s.rss_kb as f64 / 1024.0,
            s.hwm_kb as f64 / 1024.0,
            s.cpu_per_round_ms,
            s.rounds,
            fmt_opt(s.renders, ""),
            w.busy,
            w.script,
            w.style_layout,
            w.paint,
        ));
    }
    t.push_str(&format!(
        "\n| Goal | Measured | Met |\n|---|---|---|\n\
         | dashboard RSS under 100 MiB | {:.1} MiB (peak {:.1}) | {} |\n\
         | one poll round under 1 s of CPU | {:.1} ms (whole documents: {:.1} ms) | {} |\n\
         | a quiet fleet's delta round under 5 % of a whole round's bytes | {} of {} = {} | {} |\n\
         | the same with the whole read every {full_every_polls}th poll, amortised | {} | {} |\n\n\
         A delta round is every pod's delta. The dashboard reads a pod's whole document again \
         every {full_every_polls}th poll (`FULL_EVERY`, 5 minutes at 2 s), which the last row \
         spreads over those polls. These pods are in no cluster: a real cluster's members each \
         carry the member list (about 200 bytes a member) in the whole document, and the delta \
         leaves it out while it is unchanged, so the share would be smaller still.\n",
        delta.rss_kb.max(whole.rss_kb) as f64 / 1024.0,
        delta.hwm_kb.max(whole.hwm_kb) as f64 / 1024.0,
        yes(delta.hwm_kb.max(whole.hwm_kb) < 100 * 1024),
        delta.cpu_per_round_ms,
        whole.cpu_per_round_ms,
        yes(delta.cpu_per_round_ms < 1000.0 && whole.cpu_per_round_ms < 1000.0),
        fmt_opt(delta_round, " KiB"),
        fmt_opt(whole_round, " KiB"),
        fmt_opt(share, " %"),
        yes(share.is_some_and(|s| s < 5.0)),
        fmt_opt(amortised, " %"),
        yes(amortised.is_some_and(|s| s < 5.0)),
    ));
    t
}

fn yes(met: bool) -> &'static str {
    if met { "yes" } else { "**no**" }
}

fn results_date() -> String {
    crate::results::Machine::describe().date
}

/// The headline numbers, into the run's one table.
fn record(delta: &Side, whole: &Side) {
    let hwm = delta.hwm_kb.max(whole.hwm_kb);
    summary::record(
        "fleet",
        "dashboard peak RSS at 300 pods",
        format!("{:.1} MiB", hwm as f64 / 1024.0),
        "< 100 MiB",
        Some(hwm < 100 * 1024),
    );
    summary::record(
        "fleet",
        "dashboard CPU per poll round at 300 pods (delta)",
        format!("{:.1} ms", delta.cpu_per_round_ms),
        "< 1 s",
        Some(delta.cpu_per_round_ms < 1000.0),
    );
    if let (Some(d), Some(w)) = (delta.delta_poll_bytes, whole.full_poll_bytes) {
        let share = 100.0 * d / w;
        summary::record(
            "fleet",
            "bytes of a quiet fleet's delta round ÷ a whole round",
            format!("{share:.1} %"),
            "< 5 %",
            Some(share < 5.0),
        );
    }
}
