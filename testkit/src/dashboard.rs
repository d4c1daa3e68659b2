//! `zb-health dashboard` as a child process: started on a free
//! loopback port, read over a real socket, killed on drop. The CLI's own
//! tests pass their `CARGO_BIN_EXE_zb-health`; an example's tests, which
//! cannot name another package's binary, find it with [`cli_binary`].

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

use crate::http::{Response, request};
use crate::process::PATIENCE;

/// A running dashboard and the address it serves on.
pub struct Dashboard {
    child: Child,
    /// Where it listens (`/`, `/ui`, `/history`).
    pub addr: SocketAddr,
}

impl Dashboard {
    /// Starts `BIN dashboard URLS --listen 127.0.0.1:0`, polling every
    /// 200 ms with a 2 s timeout, and waits for the address it prints.
    pub fn start(bin: &Path, urls: &[String]) -> Self {
        Self::start_with(bin, urls, &[])
    }

    /// [`start`](Self::start) with more arguments, e.g. `--discover`;
    /// a `--period` or `--timeout` among them replaces the default one.
    pub fn start_with(bin: &Path, urls: &[String], more: &[&str]) -> Self {
        let mut args = vec!["--listen", "127.0.0.1:0"];
        for (flag, default) in [("--period", "200ms"), ("--timeout", "2s")] {
            if !more.contains(&flag) {
                args.extend([flag, default]);
            }
        }
        let mut child = Command::new(bin)
            .arg("dashboard")
            .args(urls)
            .args(args)
            .args(more)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{} does not start: {e}", bin.display()));
        let stdout = child.stdout.take().expect("its stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(PATIENCE)
            .expect("the dashboard prints its address");
        let addr = line
            .trim()
            .strip_prefix("zb-health dashboard: listening on http://")
            .and_then(|rest| rest.strip_suffix('/'))
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("not the listening line: {line:?}"));
        Self { child, addr }
    }

    /// The dashboard's process id (its CPU and memory, for the bench).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `GET /history?full` (every pod's row with its whole document)
    /// when it answers 200.
    pub fn history(&self) -> Option<Response> {
        self.get("/history?full")
    }

    /// `GET path` when it answers 200.
    pub fn get(&self, path: &str) -> Option<Response> {
        request(self.addr, "GET", path, "")
            .ok()
            .filter(|r| r.status == 200)
    }

    /// Each pod's `url` and `state`, in the order they joined; `None`
    /// until the dashboard answers.
    pub fn pods(&self) -> Option<Vec<(String, String)>> {
        let json = self.get("/history")?.json();
        json["services"].as_array().map(|all| {
            all.iter()
                .map(|s| {
                    let field = |k: &str| s[k].as_str().unwrap_or_default().to_string();
                    (field("url"), field("state"))
                })
                .collect()
        })
    }

    /// Each service's `state`, in the order of the URLs; `None` until the
    /// dashboard answers.
    pub fn states(&self) -> Option<Vec<String>> {
        let json = self.history()?.json();
        json["services"].as_array().map(|all| {
            all.iter()
                .map(|s| s["state"].as_str().unwrap_or_default().to_string())
                .collect()
        })
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The workspace's `zb-health` binary, beside the running test's own
/// directory (`target/debug`), built first with Cargo if it is not there:
/// `cargo test --workspace` builds it anyway, a test run alone may not.
pub fn cli_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    // target/debug/deps/<test> → target/debug
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("a test binary lives in target/<profile>/deps");
    let bin = dir.join(format!("zb-health{}", std::env::consts::EXE_SUFFIX));
    if !bin.is_file() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "zb-health-cli", "--bin", "zb-health"])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build -p zb-health-cli failed");
    }
    assert!(bin.is_file(), "no {} after the build", bin.display());
    bin
}
