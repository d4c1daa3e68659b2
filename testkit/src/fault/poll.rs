//! The pollers: one thread per node inside the namespace, each request
//! recorded with the instants it was sent and answered.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::history::{ActiveHistory, Answer, Sample};
use super::netns::NetNs;
use crate::http::{Response, request_within};
use crate::process::ServiceProcess;

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
        ActiveHistory::new(self.0.records_by(|s| s.sent), self.0.start)
    }

    /// Stops polling and returns the whole history.
    pub fn stop(mut self) -> ActiveHistory {
        self.0.halt();
        self.history()
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
