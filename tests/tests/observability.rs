//! BE-HLTH-008: transition logs, metrics and (no) trace spans, observed
//! through a capturing `tracing` subscriber and `metrics-util`'s debugging
//! recorder. Time is tokio's paused clock, so "once per interval" is a
//! statement about virtual time and run counts, never about wall-clock
//! margins. The example's `/metrics` is read over a real socket.

mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};
use zb_health::observe::{
    PROBE_DURATION, PROBE_FAILURES, PROBE_STATUS, TIER_FAILURES, TIER_STATUS, TIER_TARGET,
};
use zb_health::prelude::{
    FailureStatus, HealthRegistry, HealthStatus, ProbeRegistration, ProbeResult, Tag, TagSet,
    from_fn,
};

// ---------------------------------------------------------------------------
// A capturing subscriber: every event's level, message and fields, and every
// span created, at DEBUG and above (TRACE is never even asked for).

#[derive(Debug, Clone)]
struct Line {
    level: Level,
    target: String,
    message: String,
    fields: HashMap<String, String>,
}

impl Line {
    fn field(&self, name: &str) -> &str {
        self.fields
            .get(name)
            .map_or_else(|| panic!("no field `{name}` in {self:?}"), String::as_str)
    }
}

#[derive(Default, Clone)]
struct Capture {
    lines: Arc<Mutex<Vec<Line>>>,
    spans: Arc<Mutex<Vec<(Level, String)>>>,
    next_span: Arc<std::sync::atomic::AtomicU64>,
}

impl Capture {
    /// Takes the probe lines captured so far (the tier lines stay for
    /// [`take_tier`](Self::take_tier)).
    fn take(&self) -> Vec<Line> {
        let mut lines = self.lines.lock().unwrap();
        let (tier, probe) = std::mem::take(&mut *lines)
            .into_iter()
            .partition(|l| l.target == TIER_TARGET);
        *lines = tier;
        probe
    }

    /// Takes the tier transition lines captured so far, as (level,
    /// message, tier); the probe lines stay.
    fn take_tier(&self) -> Vec<(Level, String, String)> {
        let mut lines = self.lines.lock().unwrap();
        let (tier, probe): (Vec<Line>, Vec<Line>) = std::mem::take(&mut *lines)
            .into_iter()
            .partition(|l| l.target == TIER_TARGET);
        *lines = probe;
        tier.into_iter()
            .map(|l| {
                let tier = l.field("tier").to_owned();
                let unhealthy = l.fields.get("unhealthy").cloned();
                let message = match unhealthy {
                    Some(names) => format!("{} [{names}]", l.message),
                    None => l.message,
                };
                (l.level, message, tier)
            })
            .collect()
    }

    fn spans(&self) -> Vec<(Level, String)> {
        self.spans.lock().unwrap().clone()
    }
}

#[derive(Default)]
struct Fields(HashMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl Subscriber for Capture {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        // Ask `enabled` every time: other tests' threads have no subscriber.
        Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= Level::DEBUG
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let meta = span.metadata();
        self.spans
            .lock()
            .unwrap()
            .push((*meta.level(), meta.name().to_owned()));
        Id::from_u64(self.next_span.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let message = fields.0.remove("message").unwrap_or_default();
        self.lines.lock().unwrap().push(Line {
            level: *event.metadata().level(),
            target: event.metadata().target().to_owned(),
            message,
            fields: fields.0,
        });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// Captures this thread's `tracing` output until the guard drops. Every
/// test here runs on a current-thread runtime, so the probes run on this
/// thread too. Their metrics go to a no-op recorder, so they never reach
/// the example's global one, which a test below reads.
fn capture() -> (Capture, Guards) {
    let capture = Capture::default();
    let tracing = tracing::subscriber::set_default(capture.clone());
    let metrics = metrics::set_default_local_recorder(&metrics::NoopRecorder);
    (capture, (tracing, metrics))
}

type Guards = (
    tracing::subscriber::DefaultGuard,
    metrics::LocalRecorderGuard<'static>,
);

// ---------------------------------------------------------------------------
// Probes whose answer the test switches.

const HEALTHY: u8 = 0;
const ERROR: u8 = 1;
const PANIC: u8 = 2;
const HANG: u8 = 3;
const DEGRADED: u8 = 4;

/// The error text a failing probe returns: for the log, never the body.
const SECRET_ERROR: &str = "connect to postgres://app:hunter2@db.internal:5432 refused";

/// A probe named `name` that answers as `mode` says, taking 5 ms.
fn switched(name: &'static str) -> (ProbeRegistration, Arc<AtomicU8>) {
    let mode = Arc::new(AtomicU8::new(HEALTHY));
    let m = mode.clone();
    let probe = from_fn(move || {
        let mode = m.load(Ordering::SeqCst);
        async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            match mode {
                HEALTHY => Ok(ProbeResult::healthy().with_description("reachable")),
                ERROR => Err(SECRET_ERROR.into()),
                PANIC => panic!("boom at 10.0.0.7"),
                HANG => std::future::pending().await,
                _ => Ok(ProbeResult::degraded("replica lagging")),
            }
        }
    });
    let registration = ProbeRegistration::new(name, probe).timeout(Duration::from_millis(100));
    (registration, mode)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// The zb-health lines among `lines`, as (level, message, probe).
fn summary(lines: &[Line]) -> Vec<(Level, &str, &str)> {
    lines
        .iter()
        .map(|l| (l.level, l.message.as_str(), l.field("probe")))
        .collect()
}

// ---------------------------------------------------------------------------
// Logs

#[tokio::test(start_paused = true)]
async fn a_successful_probe_run_logs_nothing() {
    let (log, _guard) = capture();
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    let (r, _) = switched("db");
    reg.add(r).unwrap();
    for _ in 0..20 {
        assert_eq!(reg.answer(Tag::Ready).await.status, HealthStatus::Healthy);
    }
    let lines = log.take();
    assert!(lines.is_empty(), "{lines:?}");
}

#[tokio::test(start_paused = true)]
async fn runs_before_the_startup_gates_open_are_not_transitions() {
    let (log, _guard) = capture();
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    let gate = reg.lifecycle().startup_gate();
    let (r, mode) = switched("db");
    reg.add(r).unwrap();
    // A normal start: the dependency is not there yet, then it is.
    mode.store(ERROR, Ordering::SeqCst);
    for _ in 0..3 {
        assert_eq!(reg.answer(Tag::Ready).await.status, HealthStatus::Unhealthy);
    }
    mode.store(HEALTHY, Ordering::SeqCst);
    reg.answer(Tag::Ready).await;
    mode.store(ERROR, Ordering::SeqCst);
    reg.answer(Tag::Ready).await;
    let lines = log.take();
    assert!(lines.is_empty(), "nothing before the gates open: {lines:?}");

    gate.ready();
    reg.answer(Tag::Ready).await;
    let lines = log.take();
    assert_eq!(
        summary(&lines),
        [(Level::WARN, "health probe failing", "db")],
        "the first run after the start is compared with nothing"
    );
    assert_eq!(lines[0].field("previous"), "none");
}

#[tokio::test(start_paused = true)]
async fn a_failure_logs_once_at_warn_with_the_real_error_and_recovery_once_at_info() {
    let (log, _guard) = capture();
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    let (r, mode) = switched("db");
    reg.add(r).unwrap();
    reg.answer(Tag::Ready).await;
    mode.store(ERROR, Ordering::SeqCst);
    for _ in 0..5 {
        let report = reg.answer(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Unhealthy);
    }
    let lines = log.take();
    assert_eq!(
        summary(&lines),
        [(Level::WARN, "health probe failing", "db")],
        "five failing runs, one line"
    );
    let line = &lines[0];
    assert_eq!(line.target, "zb_health::observe");
    assert_eq!(line.field("error"), SECRET_ERROR);
    assert_eq!(line.field("status"), "Unhealthy");
    assert_eq!(line.field("outcome"), "errored");
    assert_eq!(line.field("previous"), "Healthy");

    mode.store(HEALTHY, Ordering::SeqCst);
    for _ in 0..3 {
        reg.answer(Tag::Ready).await;
    }
    let lines = log.take();
    assert_eq!(
        summary(&lines),
        [(Level::INFO, "health probe recovered", "db")]
    );
    assert_eq!(lines[0].field("suppressed"), "4", "runs after the first");
    assert_eq!(
        lines[0].field("failing_for_ms"),
        "25",
        "from the first failing result to the healthy one: five runs of 5 ms"
    );
}

#[tokio::test(start_paused = true)]
async fn timeouts_panics_and_failing_verdicts_are_transitions_with_their_cause() {
    let (log, _guard) = capture();
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    let mut modes = Vec::new();
    for name in ["hung", "exploding", "replica"] {
        let (r, mode) = switched(name);
        reg.add(r).unwrap();
        modes.push(mode);
    }
    reg.answer(Tag::Ready).await;
    for (mode, to) in modes.iter().zip([HANG, PANIC, DEGRADED]) {
        mode.store(to, Ordering::SeqCst);
    }
    for _ in 0..3 {
        reg.answer(Tag::Ready).await;
    }
    let lines = log.take();
    let mut got: Vec<(&str, &str, &str, &str)> = lines
        .iter()
        .filter(|l| l.level == Level::WARN)
        .map(|l| {
            (
                l.field("probe"),
                l.field("status"),
                l.field("outcome"),
                l.field("error"),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            (
                "exploding",
                "Unhealthy",
                "panicked",
                "panicked: boom at 10.0.0.7"
            ),
            ("hung", "Unhealthy", "timedOut", "timed out after 100 ms"),
            ("replica", "Degraded", "completed", "replica lagging"),
        ]
    );
    assert_eq!(lines.len(), 3, "{lines:?}");
}

#[tokio::test(start_paused = true)]
async fn an_unchanged_failure_is_logged_again_once_per_interval_with_the_suppressed_count() {
    let (log, _guard) = capture();
    let reg = HealthRegistry::builder()
        .probes_on_caller_runtime()
        .failure_log_interval(secs(60))
        .build();
    let (r, mode) = switched("db");
    reg.add(r).unwrap();
    mode.store(ERROR, Ordering::SeqCst);
    // One failing run every 10 s (each takes 5 ms) for just over 3 min.
    for _ in 0..19 {
        reg.answer(Tag::Ready).await;
        tokio::time::sleep(secs(10) - Duration::from_millis(5)).await;
    }
    let lines = log.take();
    let got: Vec<(&str, Option<&str>)> = lines
        .iter()
        .map(|l| (l.message.as_str(), l.fields.get("suppressed").map(|s| &**s)))
        .collect();
    // At 0 s the transition; at 60, 120 and 180 s a reminder, each after
    // five unlogged runs.
    assert_eq!(
        got,
        [
            ("health probe failing", Some("0")),
            ("health probe still failing", Some("5")),
            ("health probe still failing", Some("5")),
            ("health probe still failing", Some("5")),
        ]
    );
    assert!(lines.iter().all(|l| l.level == Level::WARN));
    assert_eq!(lines[3].field("failing_for_ms"), "180000");
    assert_eq!(lines[3].field("error"), SECRET_ERROR);
}

#[tokio::test(start_paused = true)]
async fn the_interval_can_be_set_on_an_existing_registry() {
    let (log, _guard) = capture();
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    assert_eq!(reg.failure_log_interval(), secs(300), "the default");
    reg.set_failure_log_interval(Duration::ZERO);
    let (r, mode) = switched("db");
    reg.add(r).unwrap();
    mode.store(ERROR, Ordering::SeqCst);
    for _ in 0..3 {
        reg.answer(Tag::Ready).await;
    }
    let messages: Vec<String> = log.take().into_iter().map(|l| l.message).collect();
    assert_eq!(
        messages,
        [
            "health probe failing",
            "health probe still failing",
            "health probe still failing"
        ],
        "a zero interval logs every failing run"
    );
}

#[tokio::test(start_paused = true)]
async fn the_log_state_goes_with_the_registration() {
    let (log, _guard) = capture();
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    let (r, mode) = switched("db");
    let handle = reg.add(r).unwrap();
    mode.store(ERROR, Ordering::SeqCst);
    reg.answer(Tag::Ready).await;
    reg.answer(Tag::Ready).await;
    assert_eq!(log.take().len(), 1);
    // The replacement starts with no history: its first failure is a
    // transition of its own, not a run of the old one's failure.
    let (r, replacement) = switched("db");
    replacement.store(ERROR, Ordering::SeqCst);
    let handle = handle.replace(r).unwrap();
    reg.answer(Tag::Ready).await;
    let lines = log.take();
    assert_eq!(
        summary(&lines),
        [(Level::WARN, "health probe failing", "db")]
    );
    assert_eq!(lines[0].field("previous"), "none");
    // Removed, it runs no more and its state is gone with it; a new
    // registration under the name starts afresh.
    assert!(handle.remove());
    reg.answer(Tag::Ready).await;
    assert!(log.take().is_empty());
    let (r, again) = switched("db");
    again.store(ERROR, Ordering::SeqCst);
    reg.add(r).unwrap();
    reg.answer(Tag::Ready).await;
    assert_eq!(log.take()[0].field("previous"), "none");
}

#[tokio::test(start_paused = true)]
async fn cached_reads_are_not_runs_and_background_runs_are() {
    let (log, _guard) = capture();
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    // A cached healthy answer: the dependency failing behind it is not
    // run, so not logged, until the cache time has passed.
    let (cached, cached_mode) = switched("cached");
    reg.add(cached.cache(secs(3))).unwrap();
    let (background, background_mode) = switched("background");
    reg.add(background.refresh(secs(1))).unwrap();
    reg.answer(Tag::Ready).await;
    // The schedule has run once; it fails from the next run on.
    tokio::time::sleep(Duration::from_millis(500)).await;
    background_mode.store(ERROR, Ordering::SeqCst);
    cached_mode.store(ERROR, Ordering::SeqCst);
    for _ in 0..10 {
        reg.answer(Tag::Ready).await;
    }
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(
        summary(&log.take()),
        [(Level::WARN, "health probe failing", "background")]
    );
    // Past the cache time the next request runs it; a failure is not
    // cached, so every later request runs it again, logged once (the
    // repeats are rate-limited).
    tokio::time::sleep(secs(1)).await;
    for _ in 0..10 {
        reg.answer(Tag::Ready).await;
    }
    assert_eq!(
        summary(&log.take()),
        [(Level::WARN, "health probe failing", "cached")]
    );
}

// ---------------------------------------------------------------------------
// Metrics

/// The debugging recorder, read cumulatively. Its snapshots reset counters
/// and gauges, so counters and histogram samples are summed here, and
/// every gauge is set to [`UNSET`] after a read: a gauge reads `None`
/// unless the code set it since the previous read.
struct Metrics<'a> {
    recorder: &'a DebuggingRecorder,
    snapshotter: Snapshotter,
    counters: HashMap<String, u64>,
    histograms: HashMap<String, Vec<f64>>,
    gauges: HashMap<String, f64>,
}

/// A gauge value no zb-health gauge takes.
const UNSET: f64 = -1.0;

static TEST_METADATA: metrics::Metadata<'static> =
    metrics::Metadata::new("observability", metrics::Level::INFO, None);

impl<'a> Metrics<'a> {
    fn new(recorder: &'a DebuggingRecorder) -> Self {
        Self {
            recorder,
            snapshotter: recorder.snapshotter(),
            counters: HashMap::new(),
            histograms: HashMap::new(),
            gauges: HashMap::new(),
        }
    }

    /// Reads the recorder; keys look like `name{label=value}`.
    fn read(&mut self) -> &mut Self {
        use metrics::Recorder;
        self.gauges.clear();
        for (key, _, _, value) in self.snapshotter.snapshot().into_vec() {
            let key = key.key();
            if matches!(value, DebugValue::Gauge(_)) {
                self.recorder.register_gauge(key, &TEST_METADATA).set(UNSET);
            }
            let labels: Vec<String> = key
                .labels()
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            let name = format!("{}{{{}}}", key.name(), labels.join(","));
            match value {
                DebugValue::Counter(n) => *self.counters.entry(name).or_default() += n,
                DebugValue::Gauge(v) => {
                    self.gauges.insert(name, v.into_inner());
                }
                DebugValue::Histogram(v) => self
                    .histograms
                    .entry(name)
                    .or_default()
                    .extend(v.into_iter().map(|f| f.into_inner())),
            }
        }
        self
    }

    fn gauge(&self, name: &str, label: &str) -> Option<f64> {
        let value = self.gauges.get(&format!("{name}{{{label}}}")).copied();
        value.filter(|v| *v != UNSET)
    }

    fn counter(&self, name: &str, label: &str) -> Option<u64> {
        self.counters.get(&format!("{name}{{{label}}}")).copied()
    }

    fn histogram(&self, name: &str, label: &str) -> &[f64] {
        self.histograms
            .get(&format!("{name}{{{label}}}"))
            .map_or(&[], Vec::as_slice)
    }
}

#[tokio::test(start_paused = true)]
async fn the_probe_gauge_counter_and_histogram_follow_the_runs() {
    let recorder = DebuggingRecorder::new();
    let _local = metrics::set_default_local_recorder(&recorder);
    let mut m = Metrics::new(&recorder);
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    let (r, mode) = switched("db");
    reg.add(r).unwrap();

    reg.answer(Tag::Ready).await;
    m.read();
    assert_eq!(m.gauge(PROBE_STATUS, "probe=db"), Some(2.0));
    assert_eq!(
        m.counter(PROBE_FAILURES, "probe=db"),
        Some(0),
        "the counter exists from the first run"
    );

    // Failing, still failing, recovered, failing again: two transitions.
    for (to, status) in [
        (ERROR, 0.0),
        (ERROR, 0.0),
        (HEALTHY, 2.0),
        (DEGRADED, 1.0),
        (PANIC, 0.0),
        (HANG, 0.0),
    ] {
        mode.store(to, Ordering::SeqCst);
        reg.answer(Tag::Ready).await;
        m.read();
        assert_eq!(m.gauge(PROBE_STATUS, "probe=db"), Some(status), "{to}");
    }
    assert_eq!(m.counter(PROBE_FAILURES, "probe=db"), Some(2));
    // Seven runs of 5 ms and one cut at the 100 ms deadline.
    assert_eq!(
        m.histogram(PROBE_DURATION, "probe=db"),
        [0.005, 0.005, 0.005, 0.005, 0.005, 0.005, 0.1]
    );
}

#[tokio::test(start_paused = true)]
async fn the_tier_gauges_follow_what_is_served() {
    let recorder = DebuggingRecorder::new();
    let _local = metrics::set_default_local_recorder(&recorder);
    let mut m = Metrics::new(&recorder);
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    let (r, mode) = switched("db");
    reg.add(r.tags(TagSet::READY.with(Tag::Active))).unwrap();
    let tiers =
        |m: &Metrics| ["tier=ready", "tier=active", "tier=live"].map(|t| m.gauge(TIER_STATUS, t));
    for tier in Tag::ALL {
        reg.answer(tier).await;
    }
    assert_eq!(tiers(m.read()), [Some(2.0), Some(2.0), Some(2.0)]);

    mode.store(DEGRADED, Ordering::SeqCst);
    reg.answer(Tag::Ready).await;
    assert_eq!(tiers(m.read()), [Some(1.0), None, None]);

    // What is served, not only the probes: a drain makes ready 503.
    mode.store(HEALTHY, Ordering::SeqCst);
    reg.lifecycle().begin_drain();
    reg.answer(Tag::Ready).await;
    assert_eq!(m.read().gauge(TIER_STATUS, "tier=ready"), Some(0.0));

    // A stalled watchdog makes live 503.
    let heartbeat = reg
        .lifecycle()
        .watchdog("consumer", Duration::from_millis(10))
        .unwrap();
    heartbeat.beat();
    tokio::time::advance(Duration::from_millis(11)).await;
    assert_eq!(reg.answer(Tag::Live).await.status, HealthStatus::Unhealthy);
    assert_eq!(m.read().gauge(TIER_STATUS, "tier=live"), Some(0.0));
}

/// A ready tier of a required `db` and an optional `cache` (its failure is
/// Degraded, a 200), with their switches.
fn db_and_optional_cache() -> (HealthRegistry, Arc<AtomicU8>, Arc<AtomicU8>) {
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    let (db, db_mode) = switched("db");
    reg.add(db).unwrap();
    let (cache, cache_mode) = switched("cache");
    reg.add(cache.failure_status(FailureStatus::Degraded))
        .unwrap();
    (reg, db_mode, cache_mode)
}

#[tokio::test(start_paused = true)]
async fn the_tier_failure_counter_counts_transitions_to_503_startup_and_drain_included() {
    let recorder = DebuggingRecorder::new();
    let _local = metrics::set_default_local_recorder(&recorder);
    let mut m = Metrics::new(&recorder);
    let (reg, db_mode, cache_mode) = db_and_optional_cache();
    let startup = reg.lifecycle().startup_gate();
    let failures = |m: &Metrics| {
        ["tier=ready", "tier=active", "tier=live"].map(|t| m.counter(TIER_FAILURES, t))
    };
    let answer = |tier| {
        let reg = reg.clone();
        async move { reg.answer(tier).await.status.is_serving() }
    };

    // Starting: the first answers are 503, a transition from "not yet
    // answered"; live's first answer is 200 and registers its counter at 0.
    for tier in Tag::ALL {
        answer(tier).await;
        answer(tier).await;
    }
    assert_eq!(failures(m.read()), [Some(1), Some(1), Some(0)]);
    startup.ready();
    assert!(answer(Tag::Ready).await && answer(Tag::Active).await);
    assert_eq!(failures(m.read()), [Some(1), Some(1), Some(0)]);

    // The optional probe fails: Degraded, 200, no readiness failure, but
    // the probe's own counter counts it.
    cache_mode.store(ERROR, Ordering::SeqCst);
    let report = reg.answer(Tag::Ready).await;
    assert_eq!(report.status, HealthStatus::Degraded);
    m.read();
    assert_eq!(
        failures(&m)[0],
        Some(1),
        "Degraded is not a readiness failure"
    );
    assert_eq!(m.counter(PROBE_FAILURES, "probe=cache"), Some(1));

    // A required probe fails and stays failed: one transition.
    db_mode.store(ERROR, Ordering::SeqCst);
    for _ in 0..3 {
        assert!(!answer(Tag::Ready).await);
    }
    assert_eq!(failures(m.read())[0], Some(2));
    // Failing another way (a panic) is the same verdict: not counted again.
    db_mode.store(PANIC, Ordering::SeqCst);
    assert!(!answer(Tag::Ready).await);
    assert_eq!(failures(m.read())[0], Some(2));
    db_mode.store(HEALTHY, Ordering::SeqCst);
    assert!(answer(Tag::Ready).await);

    // The drain: both tiers go to 503 once more.
    reg.lifecycle().begin_drain();
    for _ in 0..2 {
        assert!(!answer(Tag::Ready).await && !answer(Tag::Active).await);
    }
    assert_eq!(failures(m.read()), [Some(3), Some(2), Some(0)]);

    // A stalled watchdog is live's transition to 503 (its deadline runs
    // from its first beat).
    let heartbeat = reg
        .lifecycle()
        .watchdog("consumer", Duration::from_millis(10))
        .unwrap();
    heartbeat.beat();
    tokio::time::advance(Duration::from_millis(11)).await;
    assert!(!answer(Tag::Live).await);
    assert!(!answer(Tag::Live).await);
    assert_eq!(failures(m.read()), [Some(3), Some(2), Some(1)]);
    assert_eq!(
        m.counter(PROBE_FAILURES, "probe=db"),
        Some(1),
        "the probe counter is the probe's own"
    );
}

#[tokio::test(start_paused = true)]
async fn a_tier_logs_one_line_per_change_of_its_verdict() {
    let (log, _guard) = capture();
    let (reg, db_mode, cache_mode) = db_and_optional_cache();
    let ready = |n: usize| {
        let reg = reg.clone();
        async move {
            for _ in 0..n {
                reg.answer(Tag::Ready).await;
            }
        }
    };
    // A first answer of 200 says nothing.
    ready(2).await;
    assert_eq!(log.take_tier(), []);

    cache_mode.store(DEGRADED, Ordering::SeqCst);
    ready(2).await;
    assert_eq!(log.take_tier(), [], "Degraded is still 200");

    db_mode.store(ERROR, Ordering::SeqCst);
    ready(3).await;
    db_mode.store(HEALTHY, Ordering::SeqCst);
    ready(3).await;
    reg.lifecycle().begin_drain();
    ready(2).await;
    let warn = |m: &str| (Level::WARN, m.to_owned(), "ready".to_owned());
    assert_eq!(
        log.take_tier(),
        [
            warn("health tier failing [db]"),
            (
                Level::INFO,
                "health tier recovered".to_owned(),
                "ready".to_owned()
            ),
            warn("health tier failing [shutdown]"),
        ]
    );
    // The probe lines are apart: the db's failure and recovery, the cache's failure.
    assert_eq!(log.take().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_tier_starting_logs_its_startup_entry_once() {
    let (log, _guard) = capture();
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    let startup = reg.lifecycle().startup_gate();
    for _ in 0..3 {
        reg.answer(Tag::Ready).await;
    }
    startup.ready();
    reg.answer(Tag::Ready).await;
    let lines = log.take_tier();
    assert_eq!(
        lines,
        [
            (
                Level::WARN,
                "health tier failing [startup]".to_owned(),
                "ready".to_owned()
            ),
            (
                Level::INFO,
                "health tier recovered".to_owned(),
                "ready".to_owned()
            ),
        ]
    );
}

#[actix_web::test]
async fn the_http_endpoints_set_the_tier_gauges() {
    let recorder = DebuggingRecorder::new();
    let _local = metrics::set_default_local_recorder(&recorder);
    let mut m = Metrics::new(&recorder);
    // The recorder is this thread's only (a test's local recorder), so the
    // run records here, not on the probe thread; a service's recorder is
    // global and sees both.
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    let (r, mode) = switched("db");
    reg.add(r).unwrap();
    mode.store(ERROR, Ordering::SeqCst);
    let app = actix_web::test::init_service(
        actix_web::App::new().service(zb_health::prelude::map_zb_health(reg.clone())),
    )
    .await;
    for path in ["/health/ready", "/health/active", "/healthz"] {
        let req = actix_web::test::TestRequest::get().uri(path).to_request();
        actix_web::test::call_service(&app, req).await;
    }
    m.read();
    assert_eq!(m.gauge(TIER_STATUS, "tier=ready"), Some(0.0));
    assert_eq!(m.gauge(TIER_STATUS, "tier=active"), Some(2.0), "no probes");
    assert_eq!(m.gauge(TIER_STATUS, "tier=live"), Some(2.0));
    assert_eq!(m.counter(PROBE_FAILURES, "probe=db"), Some(1));
}

// ---------------------------------------------------------------------------
// Traces

#[actix_web::test]
async fn health_requests_create_no_spans_above_trace() {
    let (log, _guard) = capture();
    let reg = HealthRegistry::new();
    let (r, mode) = switched("db");
    reg.add(r).unwrap();
    let (background, _) = switched("background");
    reg.add(background.refresh(Duration::from_millis(10)))
        .unwrap();
    let _heartbeat = reg.lifecycle().watchdog("consumer", secs(60)).unwrap();
    let app = actix_web::test::init_service(
        actix_web::App::new().service(zb_health::prelude::map_zb_health(reg.clone())),
    )
    .await;
    for failing in [false, true] {
        mode.store(if failing { ERROR } else { HEALTHY }, Ordering::SeqCst);
        for path in ["/health/ready", "/health/active", "/healthz"] {
            let req = actix_web::test::TestRequest::get().uri(path).to_request();
            actix_web::test::call_service(&app, req).await;
        }
    }
    assert!(log.spans().is_empty(), "{:?}", log.spans());
    // The subscriber does see a span at DEBUG: the silence above is real.
    drop(tracing::debug_span!("control"));
    assert_eq!(log.spans(), [(Level::DEBUG, "control".to_owned())]);
    assert_eq!(log.take().len(), 1, "only the transition to failure");
}

// ---------------------------------------------------------------------------
// The manifest's `observability.failure_log_interval`.

zb_health::prelude::manifest!(
    Observed,
    yaml = r#"
service: observed
observability: { failure_log_interval: 90s }
"#
);

#[test]
fn the_manifest_sets_the_failure_log_interval_on_install() {
    let registry = HealthRegistry::new();
    Observed::install_into(&registry, ObservedDeps {}).unwrap();
    assert_eq!(registry.failure_log_interval(), secs(90));
}

#[tokio::test(start_paused = true)]
async fn a_failure_the_threshold_holds_back_is_neither_logged_nor_counted() {
    let (log, _guard) = capture();
    let recorder = DebuggingRecorder::new();
    let _local = metrics::set_default_local_recorder(&recorder);
    let mut m = Metrics::new(&recorder);
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    let (r, mode) = switched("db");
    reg.add(r.failure_threshold(3)).unwrap();
    reg.answer(Tag::Ready).await;
    // Two blips of two failed runs each: held back, no transition.
    for _ in 0..2 {
        mode.store(ERROR, Ordering::SeqCst);
        for _ in 0..2 {
            assert_eq!(reg.answer(Tag::Ready).await.status, HealthStatus::Healthy);
            m.read();
            assert_eq!(m.gauge(PROBE_STATUS, "probe=db"), Some(2.0), "reported");
        }
        mode.store(HEALTHY, Ordering::SeqCst);
        reg.answer(Tag::Ready).await;
    }
    assert!(log.take().is_empty(), "a held-back failure is not logged");
    m.read();
    assert_eq!(m.counter(PROBE_FAILURES, "probe=db"), Some(0));
    // A real outage: the third failed run is the one transition.
    mode.store(ERROR, Ordering::SeqCst);
    for _ in 0..5 {
        reg.answer(Tag::Ready).await;
    }
    let lines = log.take();
    assert_eq!(
        summary(&lines),
        [(Level::WARN, "health probe failing", "db")]
    );
    assert_eq!(lines[0].field("error"), SECRET_ERROR);
    m.read();
    assert_eq!(m.counter(PROBE_FAILURES, "probe=db"), Some(1));
    assert_eq!(m.gauge(PROBE_STATUS, "probe=db"), Some(0.0));
}

#[tokio::test(start_paused = true)]
async fn a_skipped_dependent_is_one_transition_logged_as_skipped() {
    let (log, _guard) = capture();
    let recorder = DebuggingRecorder::new();
    let _local = metrics::set_default_local_recorder(&recorder);
    let mut m = Metrics::new(&recorder);
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    let (db, mode) = switched("db");
    let (orders, _orders_mode) = switched("orders");
    reg.add_all([db, orders.depends_on(["db"])]).unwrap();
    reg.answer(Tag::Ready).await;
    mode.store(ERROR, Ordering::SeqCst);
    for _ in 0..5 {
        reg.answer(Tag::Ready).await;
    }
    let lines = log.take();
    assert_eq!(
        summary(&lines),
        [
            (Level::WARN, "health probe failing", "db"),
            (Level::WARN, "health probe failing", "orders"),
        ]
    );
    assert_eq!(lines[1].field("outcome"), "skipped");
    assert_eq!(lines[1].field("error"), "skipped: db failing");
    m.read();
    assert_eq!(m.counter(PROBE_FAILURES, "probe=orders"), Some(1));
    assert_eq!(m.gauge(PROBE_STATUS, "probe=orders"), Some(0.0));
    // It runs again with the database: one recovery each.
    mode.store(HEALTHY, Ordering::SeqCst);
    reg.answer(Tag::Ready).await;
    let lines = log.take();
    assert_eq!(
        summary(&lines),
        [
            (Level::INFO, "health probe recovered", "db"),
            (Level::INFO, "health probe recovered", "orders"),
        ]
    );
}

#[test]
fn the_maintenance_gauge_is_one_during_maintenance_and_zero_after() {
    let recorder = DebuggingRecorder::new();
    let _local = metrics::set_default_local_recorder(&recorder);
    let mut m = Metrics::new(&recorder);
    let reg = HealthRegistry::new();
    reg.lifecycle()
        .begin_maintenance("kernel patch", Duration::from_secs(600))
        .unwrap();
    m.read();
    assert_eq!(m.gauge(zb_health::observe::MAINTENANCE, ""), Some(1.0));
    reg.lifecycle().end_maintenance().unwrap();
    m.read();
    assert_eq!(m.gauge(zb_health::observe::MAINTENANCE, ""), Some(0.0));
    // A refused request sets nothing.
    assert_eq!(
        reg.lifecycle()
            .begin_maintenance("", Duration::from_secs(1))
            .unwrap_err()
            .field,
        "reason"
    );
    assert_eq!(
        reg.lifecycle()
            .begin_maintenance("patch", Duration::ZERO)
            .unwrap_err()
            .field,
        "ttl"
    );
    m.read();
    assert_eq!(m.gauge(zb_health::observe::MAINTENANCE, ""), None);
}

#[test]
fn the_stepped_down_gauge_is_one_during_a_step_down_and_zero_after() {
    use std::sync::Arc;
    use zb_health::cluster::{ClusterState, InMemoryClusterView, Member, MemberStatus, StepDown};
    let recorder = DebuggingRecorder::new();
    let _local = metrics::set_default_local_recorder(&recorder);
    let mut m = Metrics::new(&recorder);
    let view = Arc::new(InMemoryClusterView::with_state(ClusterState {
        self_address: "a".into(),
        members: vec![Member::new("a", MemberStatus::Up, 1)],
    }));
    let step_down = StepDown::new(view);
    step_down
        .begin("kernel patch", Duration::from_secs(600))
        .unwrap();
    m.read();
    assert_eq!(m.gauge(zb_health::observe::STEPPED_DOWN, ""), Some(1.0));
    step_down.end().unwrap();
    m.read();
    assert_eq!(m.gauge(zb_health::observe::STEPPED_DOWN, ""), Some(0.0));
}

/// The cluster gauges: `zb_health_cluster_active` follows this node's
/// active-node verdict (1 while the oldest `Up` member, 0 once an older
/// one joins, 0 while no cluster is available), and
/// `zb_health_shared_failing{probe}` this node's published verdict of a
/// shared probe. (`zb_health_cluster_members_up` is a chitchat view's:
/// `cluster_chitchat`.)
#[tokio::test(start_paused = true)]
async fn the_cluster_gauges_follow_the_active_verdict_and_the_shared_verdicts() {
    use std::sync::Arc;
    use zb_health::cluster::{
        ActiveNodeProbe, ClusterActiveNode, ClusterState, InMemoryClusterView, Member, MemberStatus,
    };
    use zb_health::observe::{CLUSTER_ACTIVE, SHARED_FAILING};
    use zb_health::prelude::Probe;
    use zb_health::shared::{SharedVerdicts, Tally};

    let recorder = DebuggingRecorder::new();
    let _local = metrics::set_default_local_recorder(&recorder);
    let mut m = Metrics::new(&recorder);
    let view = Arc::new(InMemoryClusterView::new());
    let probe = ActiveNodeProbe::new(view.clone(), ClusterActiveNode::unscoped());
    let _ = probe.check().await;
    m.read();
    assert_eq!(m.gauge(CLUSTER_ACTIVE, ""), Some(0.0), "no cluster yet");
    let members = |older: bool| {
        let mut members = vec![Member::new("b:1", MemberStatus::Up, 5)];
        if older {
            members.push(Member::new("a:1", MemberStatus::Up, 1));
        }
        ClusterState {
            self_address: "b:1".into(),
            members,
        }
    };
    view.set(members(false));
    let _ = probe.check().await;
    m.read();
    assert_eq!(
        m.gauge(CLUSTER_ACTIVE, ""),
        Some(1.0),
        "the oldest Up member"
    );
    let _ = probe.check().await;
    m.read();
    assert_eq!(
        m.gauge(CLUSTER_ACTIVE, ""),
        None,
        "a steady verdict sets nothing"
    );
    view.set(members(true));
    let _ = probe.check().await;
    m.read();
    assert_eq!(
        m.gauge(CLUSTER_ACTIVE, ""),
        Some(0.0),
        "an older member joined"
    );

    struct Alone;
    impl SharedVerdicts for Alone {
        fn publish(&self, _: &str, _: bool) {}
        fn tally(&self, _: &str) -> Option<Tally> {
            None
        }
    }
    let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
    let (r, mode) = switched("db");
    reg.add(r.shared()).unwrap();
    reg.set_shared_verdicts(Arc::new(Alone));
    for (to, failing) in [(HEALTHY, 0.0), (ERROR, 1.0), (HEALTHY, 0.0)] {
        mode.store(to, Ordering::SeqCst);
        reg.answer(Tag::Ready).await;
        m.read();
        assert_eq!(m.gauge(SHARED_FAILING, "probe=db"), Some(failing), "{to}");
    }
}

/// The lifecycle gauges the generated alerts leave pods out by:
/// `zb_health_starting` 1 from the first gate to the last one opening,
/// and `zb_health_draining` 1 from the drain on.
#[test]
fn the_starting_and_draining_gauges_follow_the_lifecycle() {
    use zb_health::observe::{DRAINING, STARTING};
    let recorder = DebuggingRecorder::new();
    let _local = metrics::set_default_local_recorder(&recorder);
    let mut m = Metrics::new(&recorder);
    let reg = HealthRegistry::new();
    let (first, second) = (
        reg.lifecycle().startup_gate(),
        reg.lifecycle().startup_gate(),
    );
    m.read();
    assert_eq!(m.gauge(STARTING, ""), Some(1.0));
    first.ready();
    m.read();
    assert_eq!(m.gauge(STARTING, ""), Some(1.0), "one gate still pending");
    second.ready();
    m.read();
    assert_eq!(m.gauge(STARTING, ""), Some(0.0));
    assert_eq!(m.gauge(DRAINING, ""), None, "unset before the drain");
    reg.lifecycle().begin_drain();
    m.read();
    assert_eq!(m.gauge(DRAINING, ""), Some(1.0));
}

/// The metrics table of `spec/observability.md` and the exporter agree:
/// every metric `describe_metrics` registers has a row, and every row
/// names a metric it registers, with the same kind.
#[test]
fn the_metrics_table_and_the_exporter_agree() {
    use metrics::{
        Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit,
    };

    #[derive(Default)]
    struct Described(Mutex<Vec<(String, &'static str)>>);

    impl Described {
        fn note(&self, name: KeyName, kind: &'static str) {
            self.0
                .lock()
                .unwrap()
                .push((name.as_str().to_owned(), kind));
        }
    }

    impl Recorder for Described {
        fn describe_counter(&self, key: KeyName, _: Option<Unit>, _: SharedString) {
            self.note(key, "counter");
        }
        fn describe_gauge(&self, key: KeyName, _: Option<Unit>, _: SharedString) {
            self.note(key, "gauge");
        }
        fn describe_histogram(&self, key: KeyName, _: Option<Unit>, _: SharedString) {
            self.note(key, "histogram");
        }
        fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
            Counter::noop()
        }
        fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
            Gauge::noop()
        }
        fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
            Histogram::noop()
        }
    }

    let described = Described::default();
    metrics::with_local_recorder(&described, zb_health::observe::describe_metrics);
    let mut exported = described.0.into_inner().unwrap();
    exported.sort();

    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../spec/observability.md"
    ))
    .unwrap();
    let section = doc
        .split("## Metrics")
        .nth(1)
        .expect("a Metrics section")
        .split("\n## ")
        .next()
        .unwrap();
    let mut documented: Vec<(String, &'static str)> = section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let name = cells
                .get(1)?
                .strip_prefix("`zb_health_")?
                .strip_suffix('`')?;
            let kind = ["counter", "gauge", "histogram"]
                .into_iter()
                .find(|k| cells.get(2) == Some(k))?;
            Some((format!("zb_health_{name}"), kind))
        })
        .collect();
    documented.sort();
    assert_eq!(exported, documented);
}
