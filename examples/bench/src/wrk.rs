//! Running wrk and reading its summary.

use std::process::Command;

/// How wrk loads a server.
#[derive(Debug, Clone)]
pub struct Load {
    /// wrk threads (`-t`).
    pub threads: u32,
    /// Open connections (`-c`).
    pub connections: u32,
    /// Duration of one run, in wrk's syntax (`-d`, e.g. `5s`).
    pub duration: String,
}

impl Load {
    /// The command line, for the report.
    pub fn describe(&self) -> String {
        format!(
            "wrk -t{} -c{} -d{}",
            self.threads, self.connections, self.duration
        )
    }
}

/// What one wrk run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The "Requests/sec:" line.
    pub requests_per_sec: f64,
    /// The "N requests in T" line: requests completed.
    pub requests: u64,
    /// The "Non-2xx or 3xx responses:" line, 0 when absent.
    pub non_2xx: u64,
    /// The "Socket errors:" line, verbatim, when present.
    pub socket_errors: Option<String>,
    /// The 99th percentile latency from "Latency Distribution", in
    /// milliseconds (wrk prints it because the bench passes `--latency`).
    pub p99_ms: Option<f64>,
}

impl Run {
    /// Whether every request got a 2xx answer over a healthy socket; a
    /// faster run of errors would be a meaningless number.
    pub fn is_clean(&self) -> bool {
        self.non_2xx == 0 && self.socket_errors.is_none()
    }
}

/// Whether wrk is on the PATH.
pub fn available() -> bool {
    Command::new("wrk").arg("--version").output().is_ok()
}

/// The CPU wrk is pinned to while set (`pin`): `usize::MAX` for none.
static PINNED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(usize::MAX);

/// Runs every later wrk on `cpu` only (`None`: anywhere), through
/// `taskset`, so that on a 2-core machine the load generator and the
/// server worker never share or trade a core mid-run (`BENCH=limit`).
pub fn pin(cpu: Option<usize>) {
    PINNED.store(
        cpu.unwrap_or(usize::MAX),
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// Runs wrk once against `url` and parses its summary.
pub fn run(url: &str, load: &Load) -> Result<Run, String> {
    let mut command = match PINNED.load(std::sync::atomic::Ordering::Relaxed) {
        usize::MAX => Command::new("wrk"),
        cpu => {
            let mut taskset = Command::new("taskset");
            taskset.arg("-c").arg(cpu.to_string()).arg("wrk");
            taskset
        }
    };
    let output = command
        .arg(format!("-t{}", load.threads))
        .arg(format!("-c{}", load.connections))
        .arg(format!("-d{}", load.duration))
        // The percentile table; the summary lines stay as they were.
        .arg("--latency")
        .arg(url)
        .output()
        .map_err(|e| format!("could not run wrk: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("wrk failed ({}): {stdout}{stderr}", output.status));
    }
    parse(&stdout)
}

/// Reads the summary lines of wrk's output.
pub fn parse(output: &str) -> Result<Run, String> {
    let value = |label: &str| {
        output
            .lines()
            .find_map(|l| l.trim().strip_prefix(label).map(|v| v.trim().to_owned()))
    };
    let requests_per_sec = value("Requests/sec:")
        .and_then(|v| v.parse::<f64>().ok())
        .ok_or_else(|| format!("no \"Requests/sec:\" in wrk's output:\n{output}"))?;
    let requests = output
        .lines()
        .find_map(|l| {
            l.trim()
                .split_once(" requests in ")
                .and_then(|(n, _)| n.parse().ok())
        })
        .ok_or_else(|| format!("no \"requests in\" in wrk's output:\n{output}"))?;
    let non_2xx = value("Non-2xx or 3xx responses:")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let socket_errors = value("Socket errors:");
    let p99_ms = value("99%").and_then(|v| duration_ms(&v));
    Ok(Run {
        requests_per_sec,
        requests,
        non_2xx,
        socket_errors,
        p99_ms,
    })
}

/// A wrk duration (`812.00us`, `1.23ms`, `2.00s`, `1.50m`) in milliseconds.
pub fn duration_ms(text: &str) -> Option<f64> {
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.trim().parse().ok()?;
    let scale = match unit.trim() {
        "us" => 1e-3,
        "ms" => 1.0,
        "s" => 1e3,
        "m" => 60e3,
        "h" => 3600e3,
        _ => return None,
    };
    Some(number * scale)
}

/// The median; the middle pair's mean for an even count. Medians rather
/// than means because a round that shares the CPU with a compiler is an
/// outlier to drop, not a sample to average in.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "Running 5s test @ http://127.0.0.1:41000/healthz
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   520.11us  101.31us   4.12ms   91.02%
    Req/Sec    61.22k     2.10k   64.50k    78.00%
  Latency Distribution
     50%  500.00us
     75%  560.00us
     90%  700.00us
     99%    1.25ms
  304612 requests in 5.00s, 46.19MB read
  Non-2xx or 3xx responses: 3
Requests/sec:  60919.35
Transfer/sec:      9.24MB
";

    #[test]
    fn reads_requests_per_second_and_errors() {
        let run = parse(SAMPLE).unwrap();
        assert_eq!(run.requests_per_sec, 60919.35);
        assert_eq!(run.requests, 304612);
        assert_eq!(run.non_2xx, 3);
        assert_eq!(run.p99_ms, Some(1.25));
        assert!(!run.is_clean());
    }

    #[test]
    fn durations_in_every_unit_wrk_prints() {
        let close = |text: &str, ms: f64| (duration_ms(text).unwrap() - ms).abs() < 1e-9;
        assert!(close("812.00us", 0.812));
        assert!(close("1.23ms", 1.23));
        assert!(close("2.00s", 2000.0));
        assert!(close("1.50m", 90_000.0));
        assert_eq!(duration_ms("fast"), None);
    }

    #[test]
    fn missing_summary_is_an_error() {
        assert!(parse("unable to connect to 127.0.0.1:1 Connection refused").is_err());
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
