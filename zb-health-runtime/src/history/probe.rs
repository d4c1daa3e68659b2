//! One probe's history: two fixed rings and the flap buckets, in one
//! allocation made once.

use std::sync::Mutex;

use zb_health_spec::HealthStatus;

use super::{DESCRIPTION_BYTES, SAMPLES, TRANSITIONS, lock, stored_status};
use crate::report::{EntryOutcome, HealthEntry};

/// One-minute buckets over [`FLAP_WINDOW`](super::FLAP_WINDOW).
const FLAP_BUCKETS: usize = 60;
const MINUTE_MS: u64 = 60_000;

/// The bytes one probe's history takes once enabled, all of it allocated
/// at its first recorded result: the rings, the flap buckets and the last
/// result (`size_of` of the allocation), plus the pointer the probe keeps
/// to it. It never grows. With the `test-util` feature only, for the
/// memory bench.
#[cfg(any(test, feature = "test-util"))]
pub const PROBE_HISTORY_BYTES: usize = size_of::<ProbeHistory>() + size_of::<Box<ProbeHistory>>();

/// A description cut to [`DESCRIPTION_BYTES`], inline.
#[derive(Clone, Copy)]
struct Text {
    len: u8,
    bytes: [u8; DESCRIPTION_BYTES],
}

impl Text {
    const EMPTY: Text = Text {
        len: 0,
        bytes: [0; DESCRIPTION_BYTES],
    };

    fn new(s: Option<&str>) -> Option<Text> {
        let s = s?;
        let end = s.floor_char_boundary(DESCRIPTION_BYTES);
        let mut t = Text::EMPTY;
        t.bytes[..end].copy_from_slice(&s.as_bytes()[..end]);
        t.len = end as u8;
        Some(t)
    }

    fn as_str(&self) -> &str {
        // Cut at a character boundary, so always UTF-8.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

#[derive(Clone, Copy)]
struct Sample {
    at_ms: u64,
    duration_ns: u64,
    status: u8,
    outcome: EntryOutcome,
}

#[derive(Clone, Copy)]
struct Transition {
    at_ms: u64,
    from: u8,
    to: u8,
    outcome: EntryOutcome,
    description: Option<Text>,
}

#[derive(Clone, Copy)]
struct Last {
    sample: Sample,
    description: Option<Text>,
    since_ms: u64,
    /// Recorded while the service was starting: the next result is
    /// compared with nothing, as the first one is.
    starting: bool,
}

struct Rings {
    samples: [Sample; SAMPLES],
    transitions: [Transition; TRANSITIONS],
    /// `(minute, count)`: the transitions in that minute since the epoch.
    flaps: [(u64, u32); FLAP_BUCKETS],
    /// Results recorded; the rings' next slot is `runs % len`.
    runs: u64,
    transitions_seen: u64,
    last: Option<Last>,
}

/// One probe's history (see the module docs).
pub(crate) struct ProbeHistory {
    rings: Mutex<Rings>,
}

/// What a probe's history holds now, oldest first, for the document.
#[derive(Default)]
pub(crate) struct ProbeView {
    pub(crate) status: Option<HealthStatus>,
    pub(crate) description: Option<String>,
    pub(crate) duration_ms: Option<f64>,
    pub(crate) outcome: Option<EntryOutcome>,
    pub(crate) since_ms: Option<u64>,
    pub(crate) flaps: u32,
    pub(crate) runs: u64,
    /// `(atMs, status, durationMs, outcome)`.
    pub(crate) samples: Vec<(u64, HealthStatus, f64, EntryOutcome)>,
    /// `(atMs, from, to, outcome, description)`.
    pub(crate) transitions: Vec<(
        u64,
        HealthStatus,
        HealthStatus,
        EntryOutcome,
        Option<String>,
    )>,
}

/// What a ring of `N` slots holds after `written` writes, oldest first.
fn ring<T: Copy, const N: usize>(slots: &[T; N], written: u64) -> impl Iterator<Item = T> + '_ {
    (written.saturating_sub(N as u64)..written).map(|i| slots[(i % N as u64) as usize])
}

fn millis(ns: u64) -> f64 {
    ns as f64 / 1e6
}

impl ProbeHistory {
    /// Empty, boxed: the one allocation of this probe's history.
    pub(crate) fn boxed() -> Box<Self> {
        let sample = Sample {
            at_ms: 0,
            duration_ns: 0,
            status: 0,
            outcome: EntryOutcome::Completed,
        };
        Box::new(Self {
            rings: Mutex::new(Rings {
                samples: [sample; SAMPLES],
                transitions: [Transition {
                    at_ms: 0,
                    from: 0,
                    to: 0,
                    outcome: EntryOutcome::Completed,
                    description: None,
                }; TRANSITIONS],
                flaps: [(0, 0); FLAP_BUCKETS],
                runs: 0,
                transitions_seen: 0,
                last: None,
            }),
        })
    }

    /// Records a reported entry at `at_ms`: a sample, and a transition when
    /// its status differs from the last one (the first result is none, and
    /// so is a change while the service is `starting`, or the first result
    /// after: a dependency that is not there yet during a normal start is
    /// no flap, as it is no transition in the log). No allocation: the description is copied
    /// into the fixed slots.
    pub(crate) fn record(&self, entry: &HealthEntry, at_ms: u64, starting: bool) {
        let duration_ns = u64::try_from(entry.duration.as_nanos()).unwrap_or(u64::MAX);
        let sample = Sample {
            at_ms,
            duration_ns,
            status: entry.status.severity(),
            outcome: entry.outcome,
        };
        let description = Text::new(entry.description.as_deref());
        let mut r = lock(&self.rings);
        let slot = (r.runs % SAMPLES as u64) as usize;
        r.samples[slot] = sample;
        r.runs += 1;
        let since_ms = match r.last {
            Some(last) if last.sample.status == sample.status => last.since_ms,
            Some(last) if starting || last.starting => at_ms,
            Some(last) => {
                let slot = (r.transitions_seen % TRANSITIONS as u64) as usize;
                r.transitions[slot] = Transition {
                    at_ms,
                    from: last.sample.status,
                    to: sample.status,
                    outcome: entry.outcome,
                    description,
                };
                r.transitions_seen += 1;
                let minute = at_ms / MINUTE_MS;
                let bucket = &mut r.flaps[(minute % FLAP_BUCKETS as u64) as usize];
                if bucket.0 != minute {
                    *bucket = (minute, 0);
                }
                bucket.1 += 1;
                at_ms
            }
            None => at_ms,
        };
        r.last = Some(Last {
            sample,
            description,
            since_ms,
            starting,
        });
    }

    /// All that is recorded: the tests' shorthand for `view_since(now_ms, 0)`.
    #[cfg(test)]
    pub(crate) fn view(&self, now_ms: u64) -> ProbeView {
        self.view_since(now_ms, 0)
    }

    /// A copy of the samples and transitions recorded at or after
    /// `from_ms` (0: all of them), with the flaps counted at `now_ms`.
    /// Filtered under the lock, so a delta copies only what it sends.
    pub(crate) fn view_since(&self, now_ms: u64, from_ms: u64) -> ProbeView {
        let r = lock(&self.rings);
        let now_minute = now_ms / MINUTE_MS;
        let flaps = r
            .flaps
            .iter()
            .filter(|(minute, _)| now_minute.saturating_sub(*minute) < FLAP_BUCKETS as u64)
            .map(|(_, n)| *n)
            .sum();
        let samples = ring(&r.samples, r.runs)
            .filter(|s| s.at_ms >= from_ms)
            .map(|s| {
                (
                    s.at_ms,
                    stored_status(s.status),
                    millis(s.duration_ns),
                    s.outcome,
                )
            })
            .collect();
        let transitions = ring(&r.transitions, r.transitions_seen)
            .filter(|t| t.at_ms >= from_ms)
            .map(|t| {
                let d = t.description.map(|d| d.as_str().to_owned());
                (
                    t.at_ms,
                    stored_status(t.from),
                    stored_status(t.to),
                    t.outcome,
                    d,
                )
            })
            .collect();
        let last = r.last;
        ProbeView {
            status: last.map(|l| stored_status(l.sample.status)),
            description: last.and_then(|l| l.description.map(|d| d.as_str().to_owned())),
            duration_ms: last.map(|l| millis(l.sample.duration_ns)),
            outcome: last.map(|l| l.sample.outcome),
            since_ms: last.map(|l| l.since_ms),
            flaps,
            runs: r.runs,
            samples,
            transitions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parts of `PROBE_HISTORY_BYTES`, as `spec/history.md` adds them
    /// up (x86-64 and aarch64: 8-byte alignment).
    #[test]
    fn the_parts_add_up_to_the_stated_bytes() {
        assert_eq!(size_of::<Sample>(), 24);
        assert_eq!(size_of::<Transition>(), 112);
        assert_eq!(size_of::<(u64, u32)>(), 16);
        assert_eq!(size_of::<Option<Last>>(), 136);
        assert_eq!(
            size_of::<Rings>(),
            24 * 60 + 112 * 20 + 16 * 60 + 8 + 8 + 136
        );
        assert_eq!(PROBE_HISTORY_BYTES, size_of::<Rings>() + 8 + 8);
    }
}
