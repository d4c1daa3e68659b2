//! Headless Chromium for the tests of the health page: the DOM after the
//! page's scripts ran ([`dump_dom`]) and screenshots ([`screenshot`]).
//!
//! The binary is `$CHROMIUM`, else `chromium` or `chromium-headless-shell`
//! on the `PATH` (Debian's `chromium`, which `tests/run.sh` installs). Each
//! run gets a fresh profile directory and the flags that keep Chromium off
//! the network (no background networking, component updates, sync or
//! QUIC): the tests load pages on 127.0.0.1 only. `--virtual-time-budget`
//! lets the page's timers and fetches run before the DOM is taken; a run
//! that still hangs is killed at its deadline.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::process::PATIENCE;

/// One Chromium run's deadline: it starts in about a second, but a loaded
/// 2-core machine may be compiling next door.
const RUN_DEADLINE: Duration = Duration::from_secs(60);

/// The page's marker that its first answer rendered.
pub const LOADED: &str = "data-loaded=\"true\"";

/// The Chromium binary: `$CHROMIUM`, else `chromium` or
/// `chromium-headless-shell` on the `PATH`; panics saying how to install
/// it when there is none.
pub fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("CHROMIUM").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-headless-shell"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "no Chromium: set $CHROMIUM, or install Debian's `chromium` \
         (tests/run.sh does: apt-get install --no-install-recommends chromium)"
    );
}

/// The serialized DOM of `url` at a 1200×900 window, once the page has
/// rendered its first answer (`<body data-loaded="true">`): Chromium is
/// run again until it has, for at most [`PATIENCE`].
pub fn dump_dom(url: &str) -> String {
    dump_dom_until(url, 1200, 900, |dom| dom.contains(LOADED))
}

/// The serialized DOM of `url` at a `width`×`height` window, run again
/// until `done` accepts it, for at most [`PATIENCE`]; panics with the last
/// DOM after that.
///
/// Headless Chromium lays a `--dump-dom` page out no narrower than 500 px
/// whatever the window; a narrower layout needs an `<iframe>` of that width
/// (as the page tests' 320 px check does) or [`screenshot`].
pub fn dump_dom_until(
    url: &str,
    width: u32,
    height: u32,
    mut done: impl FnMut(&str) -> bool,
) -> String {
    let start = Instant::now();
    let mut last;
    loop {
        match run(&[
            format!("--window-size={width},{height}"),
            "--dump-dom".into(),
            url.into(),
        ]) {
            Ok(dom) => {
                if done(&dom) {
                    return dom;
                }
                last = dom;
            }
            Err(why) => last = why,
        }
        assert!(
            start.elapsed() < PATIENCE,
            "Chromium did not show the expected DOM of {url} within {PATIENCE:?}; last:\n{last}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// [`dump_dom`] with a trace of the run written to `trace` (Chrome's JSON
/// trace format, the categories the DevTools timeline records and the
/// top-level tasks): the DOM once the page rendered, and the trace of that
/// run. Real time, unlike the page's own clock, which
/// `--virtual-time-budget` stops while scripts run.
pub fn dump_dom_traced(url: &str, trace: &Path) -> String {
    let start = Instant::now();
    loop {
        let _ = std::fs::remove_file(trace);
        let outcome = run(&[
            "--window-size=1200,900".into(),
            "--trace-startup=devtools.timeline,toplevel,v8.execute".into(),
            "--trace-startup-format=json".into(),
            format!("--trace-startup-file={}", trace.display()),
            "--trace-startup-duration=6".into(),
            "--dump-dom".into(),
            url.into(),
        ]);
        match outcome {
            Ok(dom) if dom.contains(LOADED) && trace.is_file() => return dom,
            Ok(_) | Err(_) if start.elapsed() < PATIENCE => {
                std::thread::sleep(Duration::from_millis(200));
            }
            Ok(dom) => panic!("Chromium traced no rendered page of {url}; last:\n{dom}"),
            Err(why) => panic!("Chromium did not trace {url}: {why}"),
        }
    }
}

/// A PNG screenshot of `url` at a `width`×`height` window, written to
/// `path`; panics if Chromium fails or writes nothing.
pub fn screenshot(url: &str, path: &Path, width: u32, height: u32) {
    let _ = std::fs::remove_file(path);
    let outcome = run(&[
        format!("--screenshot={}", path.display()),
        format!("--window-size={width},{height}"),
        "--hide-scrollbars".into(),
        url.into(),
    ]);
    if let Err(why) = outcome {
        panic!("screenshot of {url}: {why}");
    }
    assert!(
        std::fs::metadata(path).is_ok_and(|m| m.len() > 0),
        "Chromium wrote no screenshot to {}",
        path.display()
    );
}

/// One headless Chromium run with `args` after the common flags: its
/// stdout, or why it failed (its exit status and the end of its stderr, or
/// the deadline, after which it is killed).
fn run(args: &[String]) -> Result<String, String> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let root = std::env::temp_dir().join(format!("zb-health-chromium-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).map_err(|e| format!("a temp dir: {e}"))?;
    // Files, not pipes: a DOM larger than a pipe's buffer would block
    // Chromium while this thread waits for it to exit.
    let (out_path, err_path) = (root.join("stdout"), root.join("stderr"));
    let out = std::fs::File::create(&out_path).map_err(|e| e.to_string())?;
    let err = std::fs::File::create(&err_path).map_err(|e| e.to_string())?;
    let bin = chromium();
    let mut child = Command::new(&bin)
        .args([
            "--headless",
            // Root in a container has no user namespace for the sandbox.
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            // Off the network: the machine has none beyond loopback, and
            // each refused background connection costs time.
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--virtual-time-budget=5000",
        ])
        .arg(format!(
            "--user-data-dir={}",
            root.join("profile").display()
        ))
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(status);
        }
        if start.elapsed() > RUN_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&root);
    let tail = |s: &str| -> String {
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    };
    match status {
        Some(s) if s.success() => Ok(stdout),
        Some(s) => Err(format!(
            "Chromium exited with {s}; stderr:\n{}",
            tail(&stderr)
        )),
        None => Err(format!(
            "Chromium did not finish within {RUN_DEADLINE:?} and was killed; stderr:\n{}",
            tail(&stderr)
        )),
    }
}
