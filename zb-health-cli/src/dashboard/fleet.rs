//! The pods the dashboard polls, and the polling: a fixed pool of
//! workers takes the pod that is due first, so a slow pod holds one
//! worker for its deadline and delays no other; after a pod's first
//! document each poll asks only for what changed (`?since=`, with the
//! cluster's digest), and every [`FULL_EVERY`]th poll reads it whole
//! again. With discovery, the members the answering pods' clusters list
//! join the fleet, and a discovered pod that none lists any more leaves
//! it after the `--forget-after` time.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use zb_health_spec::history::{Since, cluster_digest};

use super::doc::{self, History};
use zb_health_spec::upstream::HttpUrl;

use crate::probe::{self, Request};

/// Every this many polls of a pod (5 minutes at the default 2 s period),
/// its whole document is read again instead of a delta: it picks up what
/// a delta cannot say (a flap count that aged out with no new result), and
/// bounds what a lost delta could leave wrong. Rare enough that a quiet
/// fleet's polling stays a few percent of reading whole documents
/// (`bench/RESULTS.md`, fleet).
pub const FULL_EVERY: u32 = 150;

/// How often the discovered members are reconciled with what the
/// answering pods list.
const ROSTER_EVERY: Duration = Duration::from_millis(500);

/// What the dashboard knows of one pod.
#[derive(Debug)]
pub struct Pod {
    /// Stable while the pod is in the fleet: the page names it by this.
    pub id: u64,
    /// The URL as given or discovered.
    pub url: String,
    parsed: HttpUrl,
    /// Given on the command line (never forgotten), or discovered.
    pub given: bool,
    /// Whether the last poll gave a document.
    pub answering: bool,
    /// Why the last poll did not, or `None`.
    pub error: Option<String>,
    /// The document, merged with every delta since, and when it last
    /// came (Unix epoch ms).
    pub history: Option<History>,
    pub last_answered_ms: Option<u64>,
    /// Polls since the last whole document.
    polls_since_full: u32,
    /// The history URLs its cluster lists, read when its cluster changes.
    members: Vec<String>,
    /// When an answering pod last listed it (discovered pods).
    listed_at: Instant,
}

/// The counters the bench and `/stats` read.
#[derive(Debug, Default)]
pub struct Stats {
    pub polls: AtomicU64,
    pub full_polls: AtomicU64,
    pub delta_polls: AtomicU64,
    pub failed_polls: AtomicU64,
    /// Body bytes fetched, whole documents and deltas.
    pub full_bytes: AtomicU64,
    pub delta_bytes: AtomicU64,
}

/// How the fleet is polled: the dashboard's options.
#[derive(Debug, Clone, Copy)]
pub struct Polling {
    pub period: Duration,
    pub timeout: Duration,
    /// Whether the answering pods' members join the fleet.
    pub discover: bool,
    pub forget_after: Duration,
    /// Whether a pod's later polls ask for the delta.
    pub delta: bool,
}

/// The fleet: its pods, when each is due, and the counters.
pub struct Fleet {
    pods: Mutex<Roster>,
    wake: Condvar,
    pub stats: Stats,
    /// How it is polled; `/history` says whether it discovers.
    pub polling: Polling,
}

/// The pods in the order they joined, and their schedule.
pub struct Roster {
    pods: Vec<Pod>,
    next_id: u64,
    /// `(due, pod id)`, earliest first; an id whose pod left is skipped.
    due: BinaryHeap<Reverse<(Instant, u64)>>,
    reconciled: Instant,
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Fleet {
    /// A fleet of the given pods (`(shown, parsed)`), all due now.
    pub fn new(given: Vec<(String, HttpUrl)>, polling: Polling) -> Self {
        let now = Instant::now();
        let mut roster = Roster {
            pods: Vec::new(),
            next_id: 0,
            due: BinaryHeap::new(),
            reconciled: now,
        };
        for (url, parsed) in given {
            roster.add(url, parsed, true, now);
        }
        Self {
            pods: Mutex::new(roster),
            wake: Condvar::new(),
            stats: Stats::default(),
            polling,
        }
    }

    /// The pods, locked: for the page and the aggregate.
    pub fn roster(&self) -> MutexGuard<'_, Roster> {
        self.pods.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One worker: forever, the pod due first, polled and recorded.
    pub fn work(&self) {
        loop {
            let (id, url, since) = self.next_job();
            let started = Instant::now();
            let delta = since.is_some();
            let outcome = self.poll(url, since);
            self.record(id, delta, outcome, started);
        }
    }

    /// Waits for the earliest due pod and takes it off the schedule: its
    /// id, its URL, and what it already holds (a delta's `since`).
    fn next_job(&self) -> (u64, HttpUrl, Option<Since>) {
        let mut roster = self.roster();
        loop {
            if self.polling.discover && roster.reconciled.elapsed() >= ROSTER_EVERY {
                self.reconcile(&mut roster);
            }
            let now = Instant::now();
            let wait = match roster.due.peek().copied() {
                Some(Reverse((at, id))) if at <= now => {
                    roster.due.pop();
                    if let Some(pod) = roster.pods.iter_mut().find(|p| p.id == id) {
                        let since = pod.since().filter(|_| self.polling.delta);
                        return (id, pod.parsed.clone(), since);
                    }
                    continue;
                }
                Some(Reverse((at, _))) => (at - now).min(ROSTER_EVERY),
                None => ROSTER_EVERY,
            };
            roster = self
                .wake
                .wait_timeout(roster, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// One GET of a pod's history (or its delta): the body, or why there
    /// is none.
    fn poll(&self, mut url: HttpUrl, since: Option<Since>) -> Result<String, String> {
        if let Some(since) = &since {
            let sep = if url.target.contains('?') { '&' } else { '?' };
            url.target = format!("{}{sep}{}", url.target, since.to_query());
        }
        let timeout = self.polling.timeout;
        let answer = probe::send(&url, &Request::get("application/json"), timeout, timeout)
            .map_err(|f| f.describe())?;
        if answer.code != 200 {
            return Err(format!(
                "not a history endpoint: HTTP {} {}",
                answer.code, answer.reason
            ));
        }
        if !answer.complete {
            return Err("the answer was cut short".into());
        }
        let bytes = answer.body.len() as u64;
        let counter = if since.is_some() {
            &self.stats.delta_bytes
        } else {
            &self.stats.full_bytes
        };
        counter.fetch_add(bytes, Ordering::Relaxed);
        String::from_utf8(answer.body)
            .map_err(|_| "not a history document: the body is not UTF-8".to_string())
    }

    /// Records a poll's outcome and puts the pod back on the schedule,
    /// one period after this poll started.
    fn record(&self, id: u64, delta: bool, outcome: Result<String, String>, started: Instant) {
        let stats = &self.stats;
        stats.polls.fetch_add(1, Ordering::Relaxed);
        let counter = if delta {
            &stats.delta_polls
        } else {
            &stats.full_polls
        };
        counter.fetch_add(1, Ordering::Relaxed);
        // Parsed outside the lock: the page's reads never wait on it.
        let parsed = outcome.and_then(|text| doc::parse(&text));
        if parsed.is_err() {
            stats.failed_polls.fetch_add(1, Ordering::Relaxed);
        }
        let mut roster = self.roster();
        // A pod that left the fleet meanwhile is not found: its answer is
        // dropped.
        let Some(pod) = roster.pods.iter_mut().find(|p| p.id == id) else {
            return;
        };
        pod.apply(parsed);
        let due = started + self.polling.period;
        roster.due.push(Reverse((due, id)));
        drop(roster);
        self.wake.notify_one();
    }

    /// Adds the members the answering pods list, and drops the
    /// discovered pods none has listed for the forget time.
    fn reconcile(&self, roster: &mut Roster) {
        let now = Instant::now();
        roster.reconciled = now;
        let listed: HashSet<String> = roster
            .pods
            .iter()
            .filter(|p| p.answering)
            .flat_map(|p| p.members.iter().cloned())
            .collect();
        for pod in &mut roster.pods {
            if listed.contains(&pod.url) {
                pod.listed_at = now;
            }
        }
        let forget_after = self.polling.forget_after;
        roster.pods.retain(|pod| {
            let keep = pod.given || now.duration_since(pod.listed_at) < forget_after;
            if !keep {
                eprintln!("{}: no member lists it any more; dropped", pod.url);
            }
            keep
        });
        let known: HashSet<String> = roster.pods.iter().map(|p| p.url.clone()).collect();
        let mut added = false;
        for url in listed.difference(&known) {
            match probe::parse_url(url) {
                Ok(parsed) => {
                    eprintln!("{url}: discovered");
                    roster.add(url.clone(), parsed, false, now);
                    added = true;
                }
                Err(why) => eprintln!("{url}: a member's URL the dashboard cannot use: {why}"),
            }
        }
        if added {
            self.wake.notify_all();
        }
    }
}

impl Roster {
    fn add(&mut self, url: String, parsed: HttpUrl, given: bool, now: Instant) {
        let id = self.next_id;
        self.next_id += 1;
        self.pods.push(Pod {
            id,
            url,
            parsed,
            given,
            answering: false,
            error: Some("no answer yet".into()),
            history: None,
            last_answered_ms: None,
            polls_since_full: 0,
            members: Vec::new(),
            listed_at: now,
        });
        self.due.push(Reverse((now, id)));
    }

    /// Every pod, in the order they joined.
    pub fn all(&self) -> &[Pod] {
        &self.pods
    }
}

impl Pod {
    /// What the next poll asks for: a delta of what it holds, or (`None`)
    /// the whole document.
    fn since(&self) -> Option<Since> {
        let history = self.history.as_ref()?;
        if self.polls_since_full + 1 >= FULL_EVERY {
            return None;
        }
        let cluster = history.cluster_json();
        Some(Since {
            since_ms: history.now_ms,
            cluster: (cluster != "null").then(|| cluster_digest(cluster)),
        })
    }

    /// Takes a poll's outcome in.
    fn apply(&mut self, parsed: Result<History, String>) {
        match parsed {
            Ok(new) => {
                if !self.answering {
                    eprintln!("{}: answering", self.url);
                }
                self.answering = true;
                self.error = None;
                self.last_answered_ms = Some(now_ms());
                // The member list is read again only when the cluster it
                // comes from was replaced, not on every poll.
                let mut cluster_came = new.carries_cluster();
                let merged = match (self.history.take(), new.is_delta()) {
                    (_, false) => Ok((new, 0)),
                    (Some(mut held), true) => {
                        held.merge(new).map(|()| (held, self.polls_since_full + 1))
                    }
                    (None, true) => Err(Box::new(new)),
                };
                // Another process, or no delta after all: kept as it came,
                // and read whole next.
                let (merged, polls) = merged.unwrap_or_else(|new| {
                    cluster_came = true;
                    (*new, FULL_EVERY)
                });
                self.polls_since_full = polls;
                if cluster_came {
                    self.members = merged.member_urls();
                }
                self.history = Some(merged);
            }
            Err(why) => {
                // Once per change of reason, not once per period.
                if self.answering || self.error.as_deref() != Some(why.as_str()) {
                    eprintln!("{}: {why}", self.url);
                }
                self.answering = false;
                self.error = Some(why);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(members: &[(&str, &str, bool)]) -> String {
        let members: Vec<String> = members
            .iter()
            .map(|(url, status, reachable)| {
                format!(
                    r#"{{"id":"x","address":"127.0.0.1:1","status":"{status}","reachable":{reachable},"active":false,"self":false,"shared":{{}},"ready":null,"history":"{url}"}}"#
                )
            })
            .collect();
        format!(
            r#"{{"service":"s","nowMs":5,"startedMs":1,"flapWindowMs":3600000,"tiers":{{"ready":null,"active":null,"live":null}},"probes":[],"lifecycle":null,"events":[],"cluster":{{"self":null,"active":null,"members":[{}]}},"capacity":{{"samples":60,"transitions":20,"events":20}}}}"#,
            members.join(",")
        )
    }

    #[test]
    fn discovered_pods_join_and_a_departed_one_goes_after_the_forget_time() {
        let seed = "http://127.0.0.1:1/health/history";
        let other = "http://127.0.0.1:2/health/history";
        let fleet = Fleet::new(
            vec![(seed.to_string(), probe::parse_url(seed).unwrap())],
            Polling {
                period: Duration::from_secs(1),
                timeout: Duration::from_secs(1),
                discover: true,
                forget_after: Duration::ZERO,
                delta: true,
            },
        );
        let started = Instant::now();
        fleet.record(
            0,
            false,
            Ok(doc(&[(seed, "up", true), (other, "up", true)])),
            started,
        );
        fleet.reconcile(&mut fleet.roster());
        let urls =
            |f: &Fleet| -> Vec<String> { f.roster().all().iter().map(|p| p.url.clone()).collect() };
        assert_eq!(urls(&fleet), [seed, other]);
        // Leaving and no longer reached: departed.
        fleet.record(
            0,
            false,
            Ok(doc(&[(seed, "up", true), (other, "leaving", false)])),
            started,
        );
        fleet.reconcile(&mut fleet.roster());
        assert_eq!(urls(&fleet), [seed]);
    }
}
