//! The lifecycle's behaviour through the registry: gates, watchdogs and
//! the drain.

/// Startup gates and the drain.
mod startup_and_drain {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    use crate::lifecycle::*;
    use crate::prelude::{HealthStatus, Tag, TagSet};
    use crate::probe::{ProbeResult, from_fn};
    use crate::registry::{HealthRegistry, ProbeRegistration};
    use crate::report::HealthReport;

    fn names(report: &HealthReport) -> Vec<(&str, HealthStatus, Option<&str>)> {
        report
            .entries
            .iter()
            .map(|e| (&*e.name, e.status, e.description.as_deref()))
            .collect()
    }

    fn degraded_registry() -> HealthRegistry {
        let registry = HealthRegistry::new();
        registry
            .add(
                ProbeRegistration::new(
                    "cluster",
                    from_fn(|| async { Ok(ProbeResult::degraded("cluster not yet available")) }),
                )
                .tags(TagSet::READY),
            )
            .unwrap();
        registry
    }

    #[tokio::test]
    async fn a_pending_gate_puts_a_starting_entry_first_over_a_degraded_probe() {
        let registry = degraded_registry();
        let gate = registry.lifecycle().startup_gate();
        assert!(!registry.lifecycle().is_started());
        let report = registry.answer(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Unhealthy);
        assert_eq!(
            names(&report),
            [
                (STARTUP_ENTRY, HealthStatus::Unhealthy, Some("starting")),
                (
                    "cluster",
                    HealthStatus::Degraded,
                    Some("cluster not yet available")
                ),
            ]
        );
        gate.ready();
        assert!(registry.lifecycle().is_started());
        let report = registry.answer(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Degraded);
        assert_eq!(names(&report).len(), 1, "no startup entry once started");
    }

    #[tokio::test(start_paused = true)]
    async fn answer_live_is_the_watchdogs_and_ignores_the_gate_and_the_drain() {
        let registry = degraded_registry();
        let _gate = registry.lifecycle().startup_gate();
        registry.lifecycle().begin_drain();
        let empty = registry.answer(Tag::Live).await;
        assert_eq!(
            (empty.status, empty.entries.len()),
            (HealthStatus::Healthy, 0)
        );
        let consumer = registry
            .lifecycle()
            .watchdog("consumer", Duration::from_millis(10))
            .unwrap();
        consumer.beat();
        tokio::time::advance(Duration::from_millis(11)).await;
        let stalled = registry.answer(Tag::Live).await;
        assert_eq!(
            names(&stalled),
            [(
                "consumer",
                HealthStatus::Unhealthy,
                Some("no heartbeat within 10 ms")
            )]
        );
        consumer.beat();
        let healthy = registry.answer(Tag::Live).await;
        assert_eq!(names(&healthy), [("consumer", HealthStatus::Healthy, None)]);
        let ready = registry.answer(Tag::Ready).await;
        assert_eq!(
            names(&ready).iter().map(|e| e.0).collect::<Vec<_>>(),
            [STARTUP_ENTRY, SHUTDOWN_ENTRY, "cluster"]
        );
    }

    #[test]
    fn every_declared_gate_must_be_ready() {
        let registry = HealthRegistry::new();
        let a = registry.lifecycle().startup_gate();
        let b = registry.lifecycle().startup_gate();
        a.ready();
        assert!(!registry.lifecycle().is_started());
        b.ready();
        assert!(registry.lifecycle().is_started());
    }

    /// The request path reads the gates through one word written under
    /// the gates' lock: gates declared and signalled on several threads at
    /// once never make a pending start read as started, nor leave a
    /// finished one reading as starting.
    #[test]
    fn gates_signalled_on_many_threads_never_read_as_started_while_one_is_pending() {
        let lifecycle = Arc::new(Lifecycle::default());
        let held = lifecycle.startup_gate();
        let done = Arc::new(AtomicBool::new(false));
        let reads = Arc::new(AtomicUsize::new(0));
        let reader = {
            let (lifecycle, done, reads) = (lifecycle.clone(), done.clone(), reads.clone());
            std::thread::spawn(move || {
                while !done.load(Ordering::Acquire) {
                    assert!(!lifecycle.is_started() && !lifecycle.is_steady());
                    reads.fetch_add(1, Ordering::Release);
                }
            })
        };
        // The writers start once the reader reads.
        while reads.load(Ordering::Acquire) == 0 {
            std::thread::yield_now();
        }
        let writers: Vec<_> = (0..4)
            .map(|_| {
                let lifecycle = lifecycle.clone();
                std::thread::spawn(move || {
                    for _ in 0..2_000 {
                        lifecycle.startup_gate().ready();
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        done.store(true, Ordering::Release);
        reader.join().unwrap();
        assert!(!lifecycle.is_started());
        held.ready();
        assert!(lifecycle.is_started() && lifecycle.is_steady());
    }

    #[test]
    fn a_dropped_gate_stays_pending_and_never_fails_the_start() {
        let registry = HealthRegistry::new();
        let gate = registry.lifecycle().startup_gate();
        drop(gate);
        assert!(
            !registry.lifecycle().is_started(),
            "a crashed init never looks ready"
        );
        let entries = registry.lifecycle().entries(Tag::Ready);
        assert_eq!(
            entries[0].description.as_deref(),
            Some(STARTING_DESCRIPTION)
        );
    }

    #[tokio::test]
    async fn run_signals_the_gate_from_the_outcome_and_catches_a_panic() {
        let registry = HealthRegistry::new();
        assert!(
            registry
                .lifecycle()
                .startup_gate()
                .run(async { Ok::<_, String>(()) })
                .await
        );
        assert!(registry.lifecycle().is_started());
        let failing = registry.lifecycle().startup_gate();
        assert!(!failing.run(async { Err("no schema") }).await);
        assert!(!registry.lifecycle().is_started());
        let registry = HealthRegistry::new();
        let panicking = registry.lifecycle().startup_gate();
        let work = async {
            if registry.lifecycle().is_started() {
                return Ok::<_, String>(());
            }
            panic!("init bug")
        };
        assert!(!panicking.run(work).await);
        let entries = registry.lifecycle().entries(Tag::Ready);
        assert_eq!(
            entries[0].description.as_deref(),
            Some(STARTUP_FAILED_DESCRIPTION)
        );
    }

    #[test]
    fn a_failed_gate_is_a_sticky_failed_start() {
        let registry = HealthRegistry::new();
        let gate = registry.lifecycle().startup_gate();
        let other = registry.lifecycle().startup_gate();
        gate.failed("postgres://user:secret@db refused");
        other.ready();
        assert!(!registry.lifecycle().is_started());
        let entries = registry.lifecycle().entries(Tag::Ready);
        assert_eq!(entries.len(), 1);
        assert_eq!(
            entries[0].description.as_deref(),
            Some(STARTUP_FAILED_DESCRIPTION),
            "fixed text, never the error"
        );
    }

    #[test]
    fn a_drain_adds_a_shutdown_entry_after_startup_and_runs_hooks_once() {
        let registry = HealthRegistry::new();
        let ran = Arc::new(AtomicUsize::new(0));
        let counter = ran.clone();
        registry.lifecycle().on_drain(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        let _gate = registry.lifecycle().startup_gate();
        assert!(registry.lifecycle().begin_drain());
        assert!(
            !registry.lifecycle().begin_drain(),
            "second call is a no-op"
        );
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        let late = ran.clone();
        registry.lifecycle().on_drain(move || {
            late.fetch_add(10, Ordering::SeqCst);
        });
        assert_eq!(ran.load(Ordering::SeqCst), 11, "a late hook runs at once");
        let entries = registry.lifecycle().entries(Tag::Ready);
        let order: Vec<&str> = entries.iter().map(|e| &*e.name).collect();
        assert_eq!(order, [STARTUP_ENTRY, SHUTDOWN_ENTRY]);
        assert!(registry.lifecycle().is_draining());
    }

    #[test]
    fn a_panicking_hook_does_not_stop_the_others() {
        let registry = HealthRegistry::new();
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        registry.lifecycle().on_drain(|| panic!("hook bug"));
        registry
            .lifecycle()
            .on_drain(move || flag.store(true, Ordering::SeqCst));
        assert!(registry.lifecycle().begin_drain());
        assert!(ran.load(Ordering::SeqCst));
    }
}

/// Watchdogs.
mod watchdogs {
    use std::sync::Arc;
    use std::time::Duration;

    use zb_health_spec::Rule;

    use crate::lifecycle::LiveAnswer;
    use crate::lifecycle::watchdog::DEAD_DESCRIPTION;
    use crate::registry::HealthRegistry;
    use crate::spec::HealthStatus;

    fn stalled_names(registry: &HealthRegistry) -> Option<Vec<(String, HealthStatus)>> {
        match registry.lifecycle().live() {
            LiveAnswer::Stalled(report) => Some(
                report
                    .entries
                    .iter()
                    .map(|e| (e.name.to_string(), e.status))
                    .collect(),
            ),
            _ => None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_missed_deadline_stalls_only_that_loop_and_a_beat_recovers_it() {
        let registry = HealthRegistry::builder().probes_on_caller_runtime().build();
        assert!(matches!(registry.lifecycle().live(), LiveAnswer::Fixed));
        let consumer = registry
            .lifecycle()
            .watchdog("consumer", Duration::from_millis(100))
            .unwrap();
        let scheduler = registry
            .lifecycle()
            .watchdog("scheduler", Duration::from_secs(10))
            .unwrap();
        consumer.beat();
        scheduler.beat();
        tokio::time::advance(Duration::from_millis(100)).await;
        assert_eq!(stalled_names(&registry), None, "at the deadline: in time");
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(
            stalled_names(&registry),
            Some(vec![
                ("consumer".into(), HealthStatus::Unhealthy),
                ("scheduler".into(), HealthStatus::Healthy),
            ])
        );
        consumer.beat();
        assert_eq!(stalled_names(&registry), None, "recovered");
        scheduler.beat();
        let LiveAnswer::Healthy(healthy) = registry.lifecycle().live() else {
            panic!("healthy");
        };
        let body = healthy.body(crate::answer::body_key(), |r| {
            crate::writer::canonical_json(r).into()
        });
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["status"], "Healthy");
        assert_eq!(body["entries"]["consumer"]["status"], "Healthy");
    }

    #[tokio::test(start_paused = true)]
    async fn retiring_the_heartbeat_removes_the_watchdog() {
        let registry = HealthRegistry::builder().probes_on_caller_runtime().build();
        let consumer = registry
            .lifecycle()
            .watchdog("consumer", Duration::from_millis(10))
            .unwrap();
        consumer.beat();
        tokio::time::advance(Duration::from_millis(50)).await;
        assert!(stalled_names(&registry).is_some());
        consumer.retire();
        assert!(matches!(registry.lifecycle().live(), LiveAnswer::Fixed));
        assert!(registry.lifecycle().watchdog_names().is_empty());
        // The name is free again.
        registry
            .lifecycle()
            .watchdog("consumer", Duration::from_millis(10))
            .unwrap();
    }

    #[test]
    fn bad_names_duplicates_and_zero_deadlines_are_refused() {
        let registry = HealthRegistry::new();
        let _a = registry
            .lifecycle()
            .watchdog("consumer", Duration::from_secs(1))
            .unwrap();
        let dup = registry
            .lifecycle()
            .watchdog("consumer", Duration::from_secs(1))
            .unwrap_err();
        assert_eq!(dup.rules(), [Rule::DuplicateName]);
        let bad = registry
            .lifecycle()
            .watchdog("a b", Duration::ZERO)
            .unwrap_err();
        assert_eq!(bad.rules(), [Rule::ProbeName, Rule::Duration]);
        assert_eq!(
            &*registry.lifecycle().watchdog_names(),
            [Arc::from("consumer")]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_heartbeat_dropped_unretired_is_a_dead_loop_for_good() {
        let registry = HealthRegistry::builder().probes_on_caller_runtime().build();
        let consumer = registry
            .lifecycle()
            .watchdog("consumer", Duration::from_secs(60))
            .unwrap();
        let scheduler = registry
            .lifecycle()
            .watchdog("scheduler", Duration::from_secs(60))
            .unwrap();
        // The loop owning it panicked: its heartbeat is dropped mid-deadline.
        drop(consumer);
        let LiveAnswer::Stalled(report) = registry.lifecycle().live() else {
            panic!("a dead loop stalls live at once");
        };
        let consumer = report.entry("consumer").unwrap();
        assert_eq!(consumer.status, HealthStatus::Unhealthy);
        assert_eq!(consumer.description.as_deref(), Some(DEAD_DESCRIPTION));
        scheduler.beat();
        tokio::time::advance(Duration::from_secs(3600)).await;
        scheduler.beat();
        assert!(
            stalled_names(&registry).is_some(),
            "nothing beats a dead loop back to life"
        );
        assert_eq!(
            &*registry.lifecycle().watchdog_names(),
            [Arc::from("consumer"), Arc::from("scheduler")]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_heartbeat_dropped_during_the_drain_is_retired_not_dead() {
        let registry = HealthRegistry::builder().probes_on_caller_runtime().build();
        let consumer = registry
            .lifecycle()
            .watchdog("consumer", Duration::from_secs(60))
            .unwrap();
        registry.lifecycle().begin_drain();
        // The servers stop and drop what owned the loop's heartbeat.
        drop(consumer);
        assert!(matches!(registry.lifecycle().live(), LiveAnswer::Fixed));
        assert!(registry.lifecycle().watchdog_names().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn the_stall_exit_sees_a_stall_after_the_first_beat_and_none_during_the_drain() {
        let registry = HealthRegistry::builder().probes_on_caller_runtime().build();
        let lifecycle = registry.lifecycle();
        let poller = lifecycle
            .watchdog("poller", Duration::from_millis(50))
            .unwrap();
        // Not beaten yet: starting, not stalled.
        tokio::time::advance(Duration::from_millis(100)).await;
        assert_eq!(lifecycle.watchdogs.first_stalled(), None);
        poller.beat();
        tokio::time::advance(Duration::from_millis(51)).await;
        assert_eq!(
            lifecycle.watchdogs.first_stalled().as_deref(),
            Some("poller")
        );
        lifecycle.begin_drain();
        assert_eq!(lifecycle.watchdogs.first_stalled(), None);
    }

    #[test]
    fn the_stall_exit_calls_exit_with_its_code_once_a_loop_dies() {
        use std::sync::atomic::{AtomicI32, Ordering};
        static CODE: AtomicI32 = AtomicI32::new(0);
        let registry = HealthRegistry::new();
        let lifecycle = registry.lifecycle();
        let poller = lifecycle
            .watchdog("poller", Duration::from_secs(60))
            .unwrap();
        super::super::stall_exit::watch(&lifecycle.watchdogs, |code| {
            CODE.store(code, Ordering::SeqCst);
        });
        // A dead loop needs no clock: dropped unretired.
        drop(poller);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while CODE.load(Ordering::SeqCst) == 0 {
            assert!(std::time::Instant::now() < deadline, "no exit");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(
            CODE.load(Ordering::SeqCst),
            super::super::WATCHDOG_STALL_EXIT_CODE
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_runs_from_the_first_beat_not_from_registration() {
        let registry = HealthRegistry::builder().probes_on_caller_runtime().build();
        let poller = registry
            .lifecycle()
            .watchdog("poller", Duration::from_millis(100))
            .unwrap();
        // A loop that waits behind a long startup gate has not beaten yet:
        // starting, not stalled, however long it takes.
        tokio::time::advance(Duration::from_secs(600)).await;
        assert_eq!(
            stalled_names(&registry),
            None,
            "not stalled before the first beat"
        );
        poller.beat();
        tokio::time::advance(Duration::from_millis(100)).await;
        assert_eq!(stalled_names(&registry), None, "at the deadline: in time");
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(
            stalled_names(&registry),
            Some(vec![("poller".into(), HealthStatus::Unhealthy)]),
            "from the first beat on, the deadline runs"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_loop_that_dies_before_its_first_beat_is_dead() {
        let registry = HealthRegistry::builder().probes_on_caller_runtime().build();
        let poller = registry
            .lifecycle()
            .watchdog("poller", Duration::from_secs(1))
            .unwrap();
        drop(poller);
        assert_eq!(
            stalled_names(&registry),
            Some(vec![("poller".into(), HealthStatus::Unhealthy)])
        );
        let started = registry.lifecycle().started();
        assert_eq!(started.status, HealthStatus::Unhealthy);
        assert_eq!(
            started
                .entry("poller")
                .and_then(|e| e.description.as_deref()),
            Some(DEAD_DESCRIPTION)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn started_waits_for_every_gate_and_every_first_beat_and_reads_no_probe() {
        use crate::lifecycle::STARTUP_ENTRY;
        use crate::lifecycle::watchdog::WAITING_DESCRIPTION;
        use crate::probe::{ProbeResult, from_fn};
        use crate::registry::ProbeRegistration;
        let registry = HealthRegistry::builder().probes_on_caller_runtime().build();
        // A dependency that is down: the startup path must not see it.
        registry
            .add(ProbeRegistration::new(
                "database",
                from_fn(|| async { Ok(ProbeResult::unhealthy("down")) }),
            ))
            .unwrap();
        assert_eq!(registry.lifecycle().started().status, HealthStatus::Healthy);
        assert!(registry.lifecycle().started().entries.is_empty());
        let gate = registry.lifecycle().startup_gate();
        let poller = registry
            .lifecycle()
            .watchdog("poller", Duration::from_secs(1))
            .unwrap();
        let entries =
            |r: &crate::report::HealthReport| -> Vec<(String, HealthStatus, Option<String>)> {
                r.entries
                    .iter()
                    .map(|e| {
                        (
                            e.name.to_string(),
                            e.status,
                            e.description.as_deref().map(str::to_owned),
                        )
                    })
                    .collect()
            };
        assert_eq!(
            entries(&registry.lifecycle().started()),
            [
                (
                    STARTUP_ENTRY.into(),
                    HealthStatus::Unhealthy,
                    Some("starting".into())
                ),
                (
                    "poller".into(),
                    HealthStatus::Unhealthy,
                    Some(WAITING_DESCRIPTION.into())
                ),
            ]
        );
        gate.ready();
        assert_eq!(
            entries(&registry.lifecycle().started()),
            [(
                "poller".into(),
                HealthStatus::Unhealthy,
                Some(WAITING_DESCRIPTION.into())
            )]
        );
        poller.beat();
        let started = registry.lifecycle().started();
        assert_eq!(started.status, HealthStatus::Healthy);
        assert_eq!(
            entries(&started),
            [("poller".into(), HealthStatus::Healthy, None)]
        );
        assert_eq!(
            registry.answer(crate::spec::Tag::Ready).await.status,
            HealthStatus::Unhealthy,
            "ready still sees the dependency"
        );
    }

    #[test]
    fn started_names_the_pending_and_the_failed_named_gates_and_ready_does_not() {
        let registry = HealthRegistry::new();
        let anonymous = registry.lifecycle().startup_gate();
        let migrations = registry.lifecycle().startup_gate_named("migrations");
        let warm_up = registry.lifecycle().startup_gate_named("warm-up");
        let data = |r: &HealthRegistry| {
            r.lifecycle().started().entries[0]
                .data
                .clone()
                .map(|d| serde_json::Value::Object(*d))
        };
        assert_eq!(
            data(&registry),
            Some(serde_json::json!({"pending": ["migrations", "warm-up"]}))
        );
        migrations.failed("boom");
        assert_eq!(
            data(&registry),
            Some(serde_json::json!({"pending": ["warm-up"], "failed": ["migrations"]}))
        );
        warm_up.ready();
        anonymous.ready();
        assert_eq!(
            data(&registry),
            Some(serde_json::json!({"failed": ["migrations"]}))
        );
        // The ready tier's startup entry stays the fixed one.
        let ready = futures_util::FutureExt::now_or_never(registry.answer(crate::spec::Tag::Ready));
        assert_eq!(ready.map(|r| r.entries[0].data.clone()), Some(None));
    }

    /// The lists keep the declaration order, whatever order the gates
    /// fail in, so the body does not change with a race between them.
    #[test]
    fn the_failed_gates_are_named_in_declaration_order() {
        let registry = HealthRegistry::new();
        let gates = ["schema", "cache", "keys"].map(|n| registry.lifecycle().startup_gate_named(n));
        let [schema, cache, keys] = gates;
        keys.failed("no keys");
        schema.failed("no schema");
        cache.ready();
        let data = registry.lifecycle().started().entries[0].data.clone();
        assert_eq!(
            data.map(|d| serde_json::Value::Object(*d)),
            Some(serde_json::json!({"failed": ["schema", "keys"]}))
        );
    }

    #[test]
    fn a_failed_gate_holds_started_at_startup_failed() {
        let registry = HealthRegistry::new();
        registry
            .lifecycle()
            .startup_gate()
            .failed("migration 7 broke");
        let started = registry.lifecycle().started();
        assert_eq!(started.status, HealthStatus::Unhealthy);
        assert_eq!(
            started.entries[0].description.as_deref(),
            Some(crate::lifecycle::STARTUP_FAILED_DESCRIPTION)
        );
    }
}
