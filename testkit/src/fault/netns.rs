//! The namespace and its faults: [`NetNs`], `iptables` rules on its own
//! loopback, and [`Flapping`].

use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use super::process::run;

/// The `iptables` chain of the namespace's `INPUT` that holds every fault,
/// so [`NetNs::heal`] is one flush.
pub const FAULT_CHAIN: &str = "ZB_FAULTS";

/// The chain of [`NetNs::count_udp`], ahead of the faults.
pub const COUNT_CHAIN: &str = "ZB_COUNT";

/// The prefix of every namespace the harness creates, followed by the test
/// process's id and a counter.
const PREFIX: &str = "zbh-";

/// A network namespace of this test: its own loopback, its own packet
/// filter; deleted on drop.
#[derive(Debug)]
pub struct NetNs {
    name: String,
    file: std::fs::File,
    /// Whether dropping this handle deletes the namespace (a second handle,
    /// a harness thread's, does not).
    owned: bool,
}

impl NetNs {
    /// Creates a fresh namespace, brings its loopback up and installs the
    /// fault chain. Panics, saying what is missing, without root, `ip` or
    /// `iptables`.
    pub fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        remove_orphans();
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        run("ip", &["netns", "add", &name]);
        let file = std::fs::File::open(format!("/var/run/netns/{name}"))
            .unwrap_or_else(|e| panic!("the namespace {name}: {e}"));
        let ns = Self {
            name,
            file,
            owned: true,
        };
        ns.exec("ip", &["link", "set", "lo", "up"]);
        ns.iptables(&["-N", FAULT_CHAIN]);
        ns.iptables(&["-A", "INPUT", "-j", FAULT_CHAIN]);
        ns
    }

    /// The namespace's name, for `ip netns exec NAME …` by hand.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Moves the calling thread into the namespace: every process it
    /// starts afterwards, every socket it opens, is inside. Call it on the
    /// test's thread before starting the nodes, and on every thread that
    /// talks to them.
    pub fn enter(&self) {
        nix::sched::setns(&self.file, nix::sched::CloneFlags::CLONE_NEWNET)
            .unwrap_or_else(|e| panic!("setns into {}: {e} (the harness needs root)", self.name));
    }

    /// A second handle on the namespace, for a thread of the harness (a
    /// poller's, [`Flapping`]'s): it enters and runs commands, and dropping
    /// it leaves the namespace.
    pub(super) fn second_handle(&self) -> Self {
        Self {
            name: self.name.clone(),
            file: self.file.try_clone().expect("a handle on the netns"),
            owned: false,
        }
    }

    /// Runs `program args` inside the namespace; panics with its output
    /// unless it succeeds.
    pub fn exec(&self, program: &str, args: &[&str]) {
        let mut all = vec!["netns", "exec", &self.name, program];
        all.extend_from_slice(args);
        run("ip", &all);
    }

    /// `iptables -w ARGS` inside the namespace.
    pub fn iptables(&self, args: &[&str]) {
        let mut all = vec!["-w"];
        all.extend_from_slice(args);
        self.exec("iptables", &all);
    }

    /// Drops the gossip (UDP) between every address of `a` and every
    /// address of `b`, both ways, silently: a partition.
    pub fn cut(&self, a: &[SocketAddr], b: &[SocketAddr]) {
        self.cut_one_way(a, b);
        self.cut_one_way(b, a);
    }

    /// Drops the gossip from every address of `from` to every address of
    /// `to`, but not back: `to` stops hearing `from`, `from` still hears
    /// `to`.
    pub fn cut_one_way(&self, from: &[SocketAddr], to: &[SocketAddr]) {
        for f in from {
            for t in to {
                let (sport, dport) = (f.port().to_string(), t.port().to_string());
                self.iptables(&[
                    "-A",
                    FAULT_CHAIN,
                    "-p",
                    "udp",
                    "--sport",
                    &sport,
                    "--dport",
                    &dport,
                    "-j",
                    "DROP",
                ]);
            }
        }
    }

    /// Drops `percent` % of the UDP packets to every address of `to`, at
    /// random.
    pub fn loss(&self, to: &[SocketAddr], percent: u32) {
        let p = format!("{:.2}", f64::from(percent.min(100)) / 100.0);
        for t in to {
            let dport = t.port().to_string();
            self.iptables(&[
                "-A",
                FAULT_CHAIN,
                "-p",
                "udp",
                "--dport",
                &dport,
                "-m",
                "statistic",
                "--mode",
                "random",
                "--probability",
                &p,
                "-j",
                "DROP",
            ]);
        }
    }

    /// Makes the TCP port `port` hang: every packet to it is dropped, so a
    /// connect waits for its timeout and an open connection's query for
    /// its deadline (a dropped route, a dead host).
    pub fn hang_tcp(&self, port: u16) {
        self.tcp_rule(port, &["DROP"]);
    }

    /// Makes the TCP port `port` refuse at once: every packet to it is
    /// answered with a reset (a stopped server, a closed port).
    pub fn refuse_tcp(&self, port: u16) {
        self.tcp_rule(port, &["REJECT", "--reject-with", "tcp-reset"]);
    }

    /// Gives each port of `paths` its own path to the TCP port `target` on
    /// 127.0.0.1: a connection to `127.0.0.1:path` reaches `target` (a
    /// `REDIRECT` in the `nat` table), and its packets carry the path as
    /// their mark, so [`hang_path`](Self::hang_path) and
    /// [`refuse_path`](Self::refuse_path) can fail one client's path to a
    /// shared server while the others' still work.
    pub fn tcp_paths(&self, target: u16, paths: &[u16]) {
        let to = target.to_string();
        for path in paths {
            let p = path.to_string();
            let base = ["OUTPUT", "-p", "tcp", "-d", "127.0.0.1", "--dport", &p];
            let mut mark = vec!["-t", "mangle", "-A"];
            mark.extend_from_slice(&base);
            mark.extend_from_slice(&["-j", "MARK", "--set-mark", &p]);
            self.iptables(&mark);
            let mut nat = vec!["-t", "nat", "-A"];
            nat.extend_from_slice(&base);
            nat.extend_from_slice(&["-j", "REDIRECT", "--to-ports", &to]);
            self.iptables(&nat);
        }
    }

    /// Makes the path `path` of [`tcp_paths`](Self::tcp_paths) hang.
    pub fn hang_path(&self, path: u16) {
        self.mark_rule(path, &["DROP"]);
    }

    /// Makes the path `path` of [`tcp_paths`](Self::tcp_paths) refuse at
    /// once (a TCP reset).
    pub fn refuse_path(&self, path: u16) {
        self.mark_rule(path, &["REJECT", "--reject-with", "tcp-reset"]);
    }

    fn mark_rule(&self, path: u16, target: &[&str]) {
        let mark = path.to_string();
        let mut args = vec![
            "-A",
            FAULT_CHAIN,
            "-p",
            "tcp",
            "-m",
            "mark",
            "--mark",
            &mark,
            "-j",
        ];
        args.extend_from_slice(target);
        self.iptables(&args);
    }

    fn tcp_rule(&self, port: u16, target: &[&str]) {
        let port = port.to_string();
        let mut args = vec!["-A", FAULT_CHAIN, "-p", "tcp", "--dport", &port, "-j"];
        args.extend_from_slice(target);
        self.iptables(&args);
    }

    /// Counts the UDP bytes that reach each of `to` (a rule without a
    /// target per port, in a chain of its own ahead of the faults), for
    /// [`udp_bytes`](Self::udp_bytes).
    pub fn count_udp(&self, to: &[SocketAddr]) {
        self.iptables(&["-N", COUNT_CHAIN]);
        self.iptables(&["-I", "INPUT", "1", "-j", COUNT_CHAIN]);
        for t in to {
            let dport = t.port().to_string();
            self.iptables(&["-A", COUNT_CHAIN, "-p", "udp", "--dport", &dport]);
        }
    }

    /// The UDP bytes counted so far for each port of
    /// [`count_udp`](Self::count_udp), by port.
    pub fn udp_bytes(&self) -> std::collections::BTreeMap<u16, u64> {
        let mut all = vec!["netns", "exec", &self.name, "iptables", "-w"];
        all.extend_from_slice(&["-L", COUNT_CHAIN, "-v", "-x", "-n"]);
        let out = Command::new("ip")
            .args(&all)
            .output()
            .expect("iptables runs");
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .filter_map(|line| {
                let cols: Vec<&str> = line.split_whitespace().collect();
                let bytes = cols.get(1)?.parse().ok()?;
                let port = line.split("dpt:").nth(1)?.split_whitespace().next()?;
                Some((port.parse().ok()?, bytes))
            })
            .collect()
    }

    /// Removes every fault.
    pub fn heal(&self) {
        self.iptables(&["-F", FAULT_CHAIN]);
    }
}

impl Default for NetNs {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        // The rules live in the namespace and go with it.
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// Deletes the namespaces of test processes that are gone (a run killed
/// before its drops ran).
fn remove_orphans() {
    let Ok(dir) = std::fs::read_dir("/var/run/netns") else {
        return;
    };
    for entry in dir.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = Command::new("ip").args(["netns", "del", &name]).status();
        }
    }
}

/// A partition that flaps: cut and healed every `period`, on a thread of
/// its own, until dropped (healed then).
pub struct Flapping {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Flapping {
    /// Cuts `a` from `b` (both ways) for `period`, heals for `period`, and
    /// so on. `ns` must outlive it.
    pub fn start(ns: &NetNs, a: &[SocketAddr], b: &[SocketAddr], period: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let (ns, a, b, flag) = (ns.second_handle(), a.to_vec(), b.to_vec(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut cut = false;
            while !flag.load(Ordering::Relaxed) {
                if cut {
                    ns.heal();
                } else {
                    ns.cut(&a, &b);
                }
                cut = !cut;
                std::thread::sleep(period);
            }
            ns.heal();
        });
        Self {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Flapping {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The namespace, with its rules and everything in it, is gone after a
    /// test that panics; a process started inside is ended by its own
    /// handle's drop (`ServiceProcess`), which the test declares later.
    #[test]
    fn a_failing_test_leaves_no_namespace_behind() {
        let name = std::panic::catch_unwind(|| {
            let ns = NetNs::new();
            ns.cut(
                &["127.0.0.1:1".parse().unwrap()],
                &["127.0.0.1:2".parse().unwrap()],
            );
            let name = ns.name().to_owned();
            assert!(std::path::Path::new(&format!("/var/run/netns/{name}")).exists());
            std::panic::panic_any(name);
        })
        .expect_err("the test panicked")
        .downcast::<String>()
        .expect("the namespace's name");
        assert!(
            !std::path::Path::new(&format!("/var/run/netns/{name}")).exists(),
            "{name} left behind"
        );
    }
}
