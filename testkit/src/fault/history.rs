//! What the pollers record, and the properties checked over it.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

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
    /// The history of `samples`, in the order sent, of a poller that
    /// started at `start`.
    pub(super) fn new(samples: Vec<Sample>, start: Instant) -> Self {
        Self { samples, start }
    }

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
