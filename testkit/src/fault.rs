//! The fault harness for the active tier's "exactly one active node"
//! under partitions, one-way loss and pauses (ZB-2.3a, ZB-4;
//! `spec/conflicts.md`): real service processes in a network
//! namespace the test creates, faults on that namespace's own loopback
//! with packet filters, processes paused and resumed with real signals,
//! and a checker that reads every node's `/health/active` history.
//!
//! * [`NetNs`]: `ip netns add`, its loopback up, and the calling thread
//!   moved into it ([`NetNs::enter`]), so every child the test starts from
//!   that thread, every port it picks and every request it sends are inside
//!   the namespace. Nothing leaves it: the faults cannot touch the
//!   machine's own loopback, and no address but 127.0.0.1 is used.
//! * Faults are `iptables` rules in one chain of the namespace's `INPUT`
//!   ([`FAULT_CHAIN`]): [`NetNs::cut`] drops the gossip between two groups
//!   of nodes in both directions, silently, as a real partition does;
//!   [`NetNs::cut_one_way`] drops one direction only; [`NetNs::loss`] drops
//!   a share of every gossip packet at random (`-m statistic`);
//!   [`NetNs::hang_tcp`] and [`NetNs::refuse_tcp`] make a dependency's port
//!   hang (dropped, so connects and queries run into their deadline) or
//!   refuse at once (a TCP reset); [`NetNs::heal`] removes them all;
//!   [`Flapping`] cuts and heals every period until dropped. `tc netem`
//!   is not used: some kernels here lack it, `iptables` works on all.
//! * [`ActivePoller`] records every node's `/health/active` answer with
//!   the instants its request was sent and answered, one thread per node so
//!   a paused node delays no other; [`ActiveHistory`] asserts the active
//!   tier's properties over the whole history and prints the offending
//!   window when one breaks.
//!
//! Clean-up is by drop, also when a test panics: the namespace (and with
//! it every rule) is deleted after the processes, which the test declares
//! after it and so drops first. A namespace left by a killed test run
//! (its process gone) is deleted by the next [`NetNs::new`].
//!
//! Needs root, `ip` (iproute2) and `iptables`, which `tests/run.sh`
//! installs; CI runs as root.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::http::{Response, request_within};
use crate::process::ServiceProcess;

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
    fn second_handle(&self) -> Self {
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

/// Runs a command, panicking with its output unless it succeeds.
fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (install iproute2 and iptables): {e}"));
    assert!(
        out.status.success(),
        "{program} {} failed ({}): {}{} (the fault harness needs root)",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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

/// Sends `signal` (e.g. `STOP`, `CONT`) to `node` with `kill(1)`: the
/// workspace forbids `unsafe`, so no libc call.
pub fn signal(node: &ServiceProcess, signal: &str) {
    run("kill", &[&format!("-{signal}"), &node.pid().to_string()]);
}

/// How a [`Poller`]'s thread waits between two requests to its node.
#[derive(Debug, Clone, Copy)]
enum Pace {
    /// This long after each answer, however long the request took.
    Pause(Duration),
    /// One request every this long, start to start, as a kubelet polls; at
    /// once after a request that took longer.
    Every(Duration),
}

impl Pace {
    /// The wait after a request that took `took`.
    fn wait(self, took: Duration) -> Duration {
        match self {
            Self::Pause(pause) => pause,
            Self::Every(period) => period.saturating_sub(took),
        }
    }
}

/// One request of a [`Poller`] and what came of it: what a record is made
/// of.
struct Exchange {
    node: usize,
    sent: Instant,
    received: Instant,
    /// `None` when no answer came within the patience.
    answer: Option<Response>,
}

/// What a [`Poller`] asks every node, how often, and what it keeps of each
/// request.
#[derive(Clone)]
struct Polling<T> {
    path: String,
    /// How long one request waits for its answer.
    patience: Duration,
    pace: Pace,
    record: fn(Exchange) -> T,
}

/// The machinery of [`ActivePoller`] and [`TierPoller`]: `GET` one path of
/// every node (its application port) from inside the namespace, one thread
/// per node so a paused node delays no other, keeping a record of every
/// request until halted.
struct Poller<T> {
    stop: Arc<AtomicBool>,
    records: Arc<Mutex<Vec<T>>>,
    threads: Vec<JoinHandle<()>>,
    /// When polling started.
    start: Instant,
}

impl<T: Clone + Send + 'static> Poller<T> {
    fn start(ns: &NetNs, nodes: &[&ServiceProcess], polling: &Polling<T>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let records = Arc::new(Mutex::new(Vec::new()));
        let start = Instant::now();
        let threads = nodes
            .iter()
            .enumerate()
            .map(|(node, n)| {
                let (addr, ns, polling) = (n.app, ns.second_handle(), polling.clone());
                let (stop, records) = (stop.clone(), records.clone());
                std::thread::spawn(move || {
                    ns.enter();
                    while !stop.load(Ordering::Relaxed) {
                        let sent = Instant::now();
                        let answer =
                            request_within(polling.patience, addr, "GET", &polling.path, "").ok();
                        let received = Instant::now();
                        let record = (polling.record)(Exchange {
                            node,
                            sent,
                            received,
                            answer,
                        });
                        records
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(record);
                        std::thread::sleep(polling.pace.wait(received - sent));
                    }
                })
            })
            .collect();
        Self {
            stop,
            records,
            threads,
            start,
        }
    }

    /// Every record so far, ordered by `key`.
    fn records_by<K: Ord>(&self, key: impl FnMut(&T) -> K) -> Vec<T> {
        let mut all = self
            .records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        all.sort_by_key(key);
        all
    }
}

impl<T> Poller<T> {
    /// Stops every thread, after its request in flight.
    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl<T> Drop for Poller<T> {
    fn drop(&mut self) {
        self.halt();
    }
}

/// One answer of one node's `/health/active`.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// The node's index in the poller's list.
    pub node: usize,
    /// When the request was sent.
    pub sent: Instant,
    /// When the answer (or the failure) came.
    pub received: Instant,
    /// The status code; 0 when there was no answer within the poll's
    /// patience (a paused or stopped node).
    pub status: u16,
}

/// Polls every node's `/health/active` on its application port, one thread
/// per node, every [`PERIOD`](Self::PERIOD), until [`stop`](Self::stop).
pub struct ActivePoller(Poller<Sample>);

impl ActivePoller {
    /// The pause between two polls of one node.
    pub const PERIOD: Duration = Duration::from_millis(20);
    /// How long one poll waits for an answer before it records "none".
    pub const PATIENCE: Duration = Duration::from_millis(500);

    /// Starts polling `nodes` (their application ports) from inside `ns`.
    pub fn start(ns: &NetNs, nodes: &[&ServiceProcess]) -> Self {
        let polling = Polling {
            path: "/health/active".to_owned(),
            patience: Self::PATIENCE,
            pace: Pace::Pause(Self::PERIOD),
            record: |e| Sample {
                node: e.node,
                sent: e.sent,
                received: e.received,
                status: e.answer.map_or(0, |r| r.status),
            },
        };
        Self(Poller::start(ns, nodes, &polling))
    }

    /// The history so far, without stopping.
    pub fn history(&self) -> ActiveHistory {
        ActiveHistory {
            samples: self.0.records_by(|s| s.sent),
            start: self.0.start,
        }
    }

    /// Stops polling and returns the whole history.
    pub fn stop(mut self) -> ActiveHistory {
        self.0.halt();
        self.history()
    }
}

/// One answer of a tier, with its body.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The node's index in the poller's list.
    pub node: usize,
    /// When the request was sent.
    pub sent: Instant,
    /// When the answer (or the failure) came.
    pub received: Instant,
    /// The status code; 0 when there was no answer.
    pub status: u16,
    /// The body as JSON, when it was JSON.
    pub body: Option<serde_json::Value>,
}

impl Answer {
    /// The `status` and `description` of the entry `name` of the body.
    pub fn entry(&self, name: &str) -> (Option<&str>, Option<&str>) {
        let entry = self.body.as_ref().map(|b| &b["entries"][name]);
        (
            entry.and_then(|e| e["status"].as_str()),
            entry.and_then(|e| e["description"].as_str()),
        )
    }
}

/// Polls one path of every node (its application port), one thread per
/// node, every `period`, keeping each answer with its body: requests that
/// drive request-driven probes at a steady rate, as a kubelet does.
pub struct TierPoller(Poller<Answer>);

impl TierPoller {
    /// How long one poll waits for an answer before it records "none".
    const PATIENCE: Duration = Duration::from_secs(5);

    /// Starts polling `path` of `nodes` from inside `ns`.
    pub fn start(ns: &NetNs, nodes: &[&ServiceProcess], path: &str, period: Duration) -> Self {
        let polling = Polling {
            path: path.to_owned(),
            patience: Self::PATIENCE,
            pace: Pace::Every(period),
            record: |e| {
                let (status, body) = e.answer.map_or((0, None), |r| {
                    (r.status, serde_json::from_slice(&r.body).ok())
                });
                Answer {
                    node: e.node,
                    sent: e.sent,
                    received: e.received,
                    status,
                    body,
                }
            },
        };
        Self(Poller::start(ns, nodes, &polling))
    }

    /// Every answer so far, in the order they came.
    pub fn answers(&self) -> Vec<Answer> {
        self.0.records_by(|a| a.received)
    }

    /// The latest answer of each of `n` nodes, once each has one after
    /// `from`.
    pub fn latest(&self, n: usize, from: Instant) -> Option<Vec<Answer>> {
        let all = self.answers();
        (0..n)
            .map(|i| {
                all.iter()
                    .rev()
                    .find(|a| a.node == i && a.sent >= from)
                    .cloned()
            })
            .collect()
    }
}

/// The longest run of consecutive answers of `node` with `status`, from
/// the first such answer's request to the next other answer's (or the
/// last answer's arrival), among answers sent at or after `from`: how long
/// a kubelet polling alongside would have seen that status without a
/// break.
pub fn longest_run(answers: &[Answer], node: usize, status: u16, from: Instant) -> Duration {
    let mut longest = Duration::ZERO;
    let mut start: Option<Instant> = None;
    let mut last = from;
    for a in answers.iter().filter(|a| a.node == node && a.sent >= from) {
        match (a.status == status, start) {
            (true, None) => start = Some(a.sent),
            (false, Some(s)) => {
                longest = longest.max(a.sent.saturating_duration_since(s));
                start = None;
            }
            _ => {}
        }
        last = a.received;
    }
    if let Some(s) = start {
        longest = longest.max(last.saturating_duration_since(s));
    }
    longest
}

/// Every recorded `/health/active` answer, in the order sent, and the
/// properties the active tier promises over them.
#[derive(Debug, Clone)]
pub struct ActiveHistory {
    samples: Vec<Sample>,
    start: Instant,
}

impl ActiveHistory {
    /// Every sample, in the order sent.
    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// The samples sent at or after `from`.
    pub fn since(&self, from: Instant) -> impl Iterator<Item = &Sample> {
        self.samples.iter().filter(move |s| s.sent >= from)
    }

    /// **Never two active nodes**: no 200 of one node comes closer than
    /// `gap` to a 200 of another, counting each answer anywhere between its
    /// request and its arrival. Panics with the offending window.
    pub fn assert_never_two_active(&self, gap: Duration) {
        let active: Vec<&Sample> = self.samples.iter().filter(|s| s.status == 200).collect();
        // The latest 200 of each node so far, by its arrival.
        let mut latest: std::collections::BTreeMap<usize, &Sample> = Default::default();
        for s in &active {
            for (&node, other) in &latest {
                if node == s.node {
                    continue;
                }
                // The windows [sent, received] of the two answers, apart by:
                let apart = s.sent.saturating_duration_since(other.received);
                if apart < gap {
                    panic!(
                        "two active nodes: node {} answered 200 at {} ms and node {} at {} ms, {} ms apart (the hand-over gap is {} ms)\n{}",
                        other.node,
                        self.ms(other.received),
                        s.node,
                        self.ms(s.sent),
                        apart.as_millis(),
                        gap.as_millis(),
                        self.window(other.sent, Duration::from_secs(2))
                    );
                }
            }
            let keep = latest.get(&s.node).is_none_or(|l| l.received < s.received);
            if keep {
                latest.insert(s.node, s);
            }
        }
    }

    /// **Out within the lease**: none of `nodes` answers 200 to a request
    /// sent later than `bound` after `from`. Panics with the window.
    pub fn assert_silent_after(&self, nodes: &[usize], from: Instant, bound: Duration) {
        let after = from + bound;
        if let Some(s) = self
            .since(after)
            .find(|s| s.status == 200 && nodes.contains(&s.node))
        {
            panic!(
                "node {} still answered 200 at {} ms, {} ms after the fault at {} ms (bound {} ms)\n{}",
                s.node,
                self.ms(s.sent),
                s.sent.duration_since(from).as_millis(),
                self.ms(from),
                bound.as_millis(),
                self.window(after, Duration::from_secs(2))
            );
        }
    }

    /// The first 200 of one of `nodes` sent at or after `from`: which node
    /// and how long after `from`.
    pub fn first_active(&self, nodes: &[usize], from: Instant) -> Option<(usize, Duration)> {
        self.since(from)
            .find(|s| s.status == 200 && nodes.contains(&s.node))
            .map(|s| (s.node, s.received.duration_since(from)))
    }

    /// **An active node within a bound**: one of `nodes` answers 200 within
    /// `bound` of `from`; returns which node and when. Panics with the
    /// window otherwise.
    pub fn assert_active_within(
        &self,
        nodes: &[usize],
        from: Instant,
        bound: Duration,
    ) -> (usize, Duration) {
        match self.first_active(nodes, from) {
            Some((node, after)) if after <= bound => (node, after),
            found => panic!(
                "no active node among {nodes:?} within {} ms of {} ms (first: {found:?})\n{}",
                bound.as_millis(),
                self.ms(from),
                self.window(from + bound, Duration::from_secs(3))
            ),
        }
    }

    /// **Exactly one active node, settled**: by `within` after `from`, one
    /// node answers 200 to every poll up to `until` and no other node
    /// answers 200 from then on. Returns that node and how long after
    /// `from` it settled; panics with the window otherwise.
    pub fn assert_one_active(
        &self,
        from: Instant,
        within: Duration,
        until: Instant,
    ) -> (usize, Duration) {
        let span: Vec<&Sample> = self.since(from).filter(|s| s.received <= until).collect();
        let last_active = span.iter().rev().find(|s| s.status == 200);
        let Some((winner, last_200)) = last_active.map(|s| (s.node, s.received)) else {
            panic!(
                "no node answered 200 between {} ms and {} ms\n{}",
                self.ms(from),
                self.ms(until),
                self.window(until, Duration::from_secs(3))
            );
        };
        // Settled after the last answer that breaks "only `winner`, always".
        let settled = span
            .iter()
            .filter(|s| (s.node == winner) != (s.status == 200))
            .map(|s| s.received)
            .max()
            .unwrap_or(from)
            .max(from);
        let after = settled.duration_since(from);
        assert!(
            settled <= last_200,
            "node {winner} answered 200 last at {} ms, but not since {} ms: no one active node at the end\n{}",
            self.ms(last_200),
            self.ms(settled),
            self.window(until, Duration::from_secs(3))
        );
        assert!(
            after <= within,
            "one active node (node {winner}) only {} ms after {} ms, not within {} ms\n{}",
            after.as_millis(),
            self.ms(from),
            within.as_millis(),
            self.window(settled, Duration::from_secs(3))
        );
        (winner, after)
    }

    /// The node indices that were polled.
    pub fn nodes(&self) -> Vec<usize> {
        let mut nodes: Vec<usize> = self.samples.iter().map(|s| s.node).collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
    }

    /// Milliseconds since the poller started.
    pub fn ms(&self, at: Instant) -> u128 {
        at.saturating_duration_since(self.start).as_millis()
    }

    /// The samples within `radius` of `at`, one line each: what a broken
    /// property prints.
    pub fn window(&self, at: Instant, radius: Duration) -> String {
        let mut out = String::from("sent ms .. answered ms  node  status\n");
        for s in self
            .samples
            .iter()
            .filter(|s| s.sent + radius >= at && s.sent <= at + radius)
        {
            let _ = writeln!(
                out,
                "{:>7} .. {:>7}  {:>4}  {}",
                self.ms(s.sent),
                self.ms(s.received),
                s.node,
                if s.status == 0 {
                    "none".to_owned()
                } else {
                    s.status.to_string()
                }
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(samples: &[(usize, u64, u16)]) -> ActiveHistory {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        ActiveHistory {
            samples: samples
                .iter()
                .map(|&(node, ms, status)| Sample {
                    node,
                    sent: at(ms),
                    received: at(ms + 2),
                    status,
                })
                .collect(),
            start,
        }
    }

    #[test]
    fn a_clean_hand_over_passes_and_an_overlap_is_caught() {
        let clean = history(&[(0, 0, 200), (1, 0, 503), (0, 100, 0), (1, 3000, 200)]);
        clean.assert_never_two_active(Duration::from_millis(500));
        let overlap = history(&[(0, 0, 200), (1, 1, 200)]);
        let caught = std::panic::catch_unwind(|| {
            overlap.assert_never_two_active(Duration::from_millis(500));
        });
        assert!(caught.is_err());
        // Interleaved answers are caught whichever node answered last.
        let interleaved = history(&[(0, 0, 200), (1, 700, 200), (0, 1400, 200)]);
        let caught = std::panic::catch_unwind(|| {
            interleaved.assert_never_two_active(Duration::from_millis(800));
        });
        assert!(caught.is_err());
    }

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

    #[test]
    fn one_active_node_is_checked_to_the_end() {
        let h = history(&[(0, 0, 503), (1, 0, 200), (0, 100, 200), (1, 100, 503)]);
        let from = h.start;
        let (node, after) =
            h.assert_one_active(from, Duration::from_secs(1), from + Duration::from_secs(1));
        assert_eq!((node, after.as_millis()), (0, 2));
        let flips = history(&[(0, 100, 200), (0, 200, 503), (0, 1500, 200)]);
        let from = flips.start;
        assert!(
            std::panic::catch_unwind(|| {
                flips.assert_one_active(from, Duration::from_secs(1), from + Duration::from_secs(1))
            })
            .is_err()
        );
    }
}
