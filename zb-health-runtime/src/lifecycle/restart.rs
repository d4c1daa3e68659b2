//! The restart escalation (a probe's `restart_after`, R27): when this
//! node's failure of a shared dependency is its own, `live` fails so the
//! orchestrator restarts this pod, and only this one.
//!
//! A step ([`Restart::step`]) runs about once a second on the probe thread
//! and moves through three states:
//!
//! * **idle**: nothing asked;
//! * **claimed**: a probe qualifies ([`Candidate`]) and this node holds a
//!   claim on the cluster's restart budget in gossip
//!   ([`SharedVerdicts::claim_restart`]). It claims only while no other
//!   member holds one, and yields to an earlier claim made at the same time
//!   ([`RestartClaim::precedes`]);
//! * **requested**: the claim stood unchallenged for the view's settle time
//!   ([`SharedVerdicts::claim_settle`]): `live` carries an `Unhealthy`
//!   [`RESTART_ENTRY`] until the process ends (the restart) or the reason
//!   goes away (the probe recovers, the peers fail too, the view is lost,
//!   the node drains or enters maintenance), which withdraws the claim.
//!
//! The claim of a restarted pod leaves gossip with the pod, freeing the
//! budget for the next one.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use zb_health_spec::HealthStatus;
use zb_health_spec::rules::RESTART_ENTRY;

use crate::history::{EventKind, Events, now_ms};
use crate::observe::RESTART_REQUESTED;
use crate::report::HealthEntry;
use crate::shared::{RestartClaim, SharedVerdicts};
use crate::sync::lock;

/// A probe that qualifies for a restart now: failing here for at least
/// its `restart_after` while most peers that report it find it healthy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// The probe.
    pub(crate) probe: Arc<str>,
    /// How long it has been failing here.
    pub(crate) failing_for: Duration,
    /// The peers (this node not counted) that report it healthy.
    pub(crate) healthy_peers: u32,
    /// The peers that report it at all.
    pub(crate) peers: u32,
}

impl Candidate {
    /// The `live` entry's description, e.g. `database failing here for
    /// 130 s while healthy on 2 of 2 peers`.
    fn description(&self) -> String {
        format!(
            "{} failing here for {} s while healthy on {} of {} peers",
            self.probe,
            self.failing_for.as_secs(),
            self.healthy_peers,
            self.peers
        )
    }
}

enum State {
    Idle,
    Claimed {
        claim: RestartClaim,
        since: Instant,
    },
    Requested {
        claim: RestartClaim,
        description: String,
    },
}

/// The escalation: its state, and one flag the `live` path reads.
pub(super) struct Restart {
    state: Mutex<State>,
    /// Whether `state` is `Requested`, so `live` reads one atomic
    /// otherwise.
    requested: AtomicBool,
    /// Whether "waiting for another member's restart" was logged for the
    /// current wait, so a wait logs once.
    waiting_logged: AtomicBool,
    events: Arc<Events>,
}

impl Restart {
    pub(super) fn new(events: Arc<Events>) -> Self {
        Self {
            state: Mutex::new(State::Idle),
            requested: AtomicBool::new(false),
            waiting_logged: AtomicBool::new(false),
            events,
        }
    }

    /// The `live` entry while a restart is requested: one relaxed load
    /// otherwise.
    #[inline]
    pub(super) fn entry(&self) -> Option<HealthEntry> {
        if !self.requested.load(Ordering::Relaxed) {
            return None;
        }
        match &*lock(&self.state) {
            State::Requested { description, .. } => Some(HealthEntry::fixed(
                RESTART_ENTRY,
                HealthStatus::Unhealthy,
                Some(Cow::Owned(description.clone())),
            )),
            _ => None,
        }
    }

    /// Whether a restart is requested (`live` fails for it).
    pub(super) fn is_requested(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }

    /// One step of the escalation at `now` (see the module docs), with
    /// `candidate` the probe that qualifies now, if any (the first, in
    /// registration order), `blocked` while starting, draining or in
    /// maintenance (never a restart then), and `budget` where the claims
    /// go (`None` without a cluster view).
    pub(super) fn step(
        &self,
        candidate: Option<Candidate>,
        blocked: bool,
        budget: Option<&dyn SharedVerdicts>,
        now: Instant,
    ) {
        let mut state = lock(&self.state);
        let (candidate, budget) = match (candidate, budget, blocked) {
            (Some(c), Some(b), false) => (c, b),
            (_, budget, _) => {
                self.waiting_logged.store(false, Ordering::Relaxed);
                if let (Some(budget), false) = (budget, matches!(*state, State::Idle)) {
                    budget.claim_restart(None);
                }
                self.withdraw(&mut state);
                return;
            }
        };
        let claims = budget.restart_claims();
        let other = |ours: Option<&RestartClaim>| {
            claims
                .iter()
                .filter(|c| !c.own)
                .find(|c| ours.is_none_or(|ours| c.precedes(ours)))
                .cloned()
        };
        match &*state {
            State::Idle => {
                if let Some(holder) = other(None) {
                    if !self.waiting_logged.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            target: "zb_health::lifecycle",
                            probe = &*candidate.probe,
                            holder = %holder.address,
                            "restart wanted, but another member's restart is in progress: waiting for it"
                        );
                    }
                    return;
                }
                let claim = RestartClaim {
                    address: String::new(),
                    own: true,
                    probe: candidate.probe.to_string(),
                    at_ms: now_ms(),
                };
                if budget.claim_restart(Some(&claim)) {
                    tracing::info!(
                        target: "zb_health::lifecycle",
                        probe = &*candidate.probe,
                        "restart claimed: live fails once no earlier claim appears"
                    );
                    *state = State::Claimed { claim, since: now };
                }
            }
            State::Claimed { claim, since } => {
                // Our own, as published (its address filled in).
                let ours = claims.iter().find(|c| c.own).unwrap_or(claim);
                if let Some(earlier) = other(Some(ours)) {
                    tracing::info!(
                        target: "zb_health::lifecycle",
                        holder = %earlier.address,
                        "restart claim yielded to an earlier one"
                    );
                    budget.claim_restart(None);
                    *state = State::Idle;
                    return;
                }
                if now.saturating_duration_since(*since) >= budget.claim_settle() {
                    self.request(&candidate);
                    *state = State::Requested {
                        claim: claim.clone(),
                        description: candidate.description(),
                    };
                }
            }
            State::Requested { .. } => {}
        }
    }

    fn request(&self, candidate: &Candidate) {
        self.requested.store(true, Ordering::Relaxed);
        self.events
            .push(EventKind::RestartRequested, candidate.probe.clone());
        metrics::gauge!(RESTART_REQUESTED).set(1.0);
        tracing::error!(
            target: "zb_health::lifecycle",
            probe = &*candidate.probe,
            failing_for_s = candidate.failing_for.as_secs(),
            healthy_peers = candidate.healthy_peers,
            peers = candidate.peers,
            "restart requested: live answers 503, as this node's failure is its own"
        );
    }

    fn withdraw(&self, state: &mut State) {
        if let State::Requested { claim, description } = &*state {
            self.requested.store(false, Ordering::Relaxed);
            self.events
                .push(EventKind::RestartWithdrawn, Arc::from(claim.probe.as_str()));
            metrics::gauge!(RESTART_REQUESTED).set(0.0);
            tracing::warn!(
                target: "zb_health::lifecycle",
                probe = %claim.probe,
                was = %description,
                "restart request withdrawn: live answers 200 again"
            );
        }
        *state = State::Idle;
    }
}
