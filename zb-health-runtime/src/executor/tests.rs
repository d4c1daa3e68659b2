//! The executor's behaviour, through the registry that runs it: single
//! flight, cache, background schedule, deadlines, panics and the bound.

/// Dependencies between probes (`depends_on`, R21, R22).
mod dependencies {
    use std::sync::atomic::Ordering;

    use super::policy::{counted, ms};
    use crate::prelude::{HealthRegistry, HealthStatus, Tag, TagSet};
    use crate::report::EntryOutcome;
    use crate::spec::{FailureStatus, Rule};

    fn registry() -> HealthRegistry {
        HealthRegistry::builder().probes_on_caller_runtime().build()
    }

    #[tokio::test(start_paused = true)]
    async fn a_dependent_is_skipped_while_its_dependency_fails_and_runs_again_after() {
        let reg = registry();
        let (db, dbc) = counted("database", ms(5));
        let (orders, oc) = counted("orders", ms(5));
        reg.add_all([db, orders.depends_on(["database"])]).unwrap();
        let report = reg.check(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Healthy);
        assert_eq!((dbc.started(), oc.started()), (1, 1));
        dbc.fail.store(true, Ordering::SeqCst);
        let report = reg.check(Tag::Ready).await;
        let e = report.entry("orders").unwrap();
        assert_eq!(e.status, HealthStatus::Unhealthy);
        assert_eq!(e.description.as_deref(), Some("skipped: database failing"));
        assert_eq!(e.outcome, EntryOutcome::Skipped);
        assert_eq!(e.duration, ms(0));
        assert_eq!(oc.started(), 1, "the dependent was not called");
        assert_eq!(dbc.started(), 2, "the dependency ran once for both");
        dbc.fail.store(false, Ordering::SeqCst);
        let report = reg.check(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Healthy);
        assert_eq!(
            oc.started(),
            2,
            "it runs again once the dependency recovers"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_dependency_costs_its_dependents_no_deadline_of_their_own() {
        let reg = registry();
        let (db, dbc) = counted("database", ms(5));
        let (orders, oc) = counted("orders", ms(5));
        dbc.hang.store(true, Ordering::SeqCst);
        reg.add_all([
            db.timeout(ms(800)),
            orders.timeout(ms(800)).depends_on(["database"]),
        ])
        .unwrap();
        for _ in 0..3 {
            let started = tokio::time::Instant::now();
            let report = reg.check(Tag::Ready).await;
            assert_eq!(
                started.elapsed(),
                ms(800),
                "the dependency's deadline, once"
            );
            let e = report.entry("orders").unwrap();
            assert_eq!(e.description.as_deref(), Some("skipped: database failing"));
        }
        assert_eq!(oc.started(), 0, "never called behind a dead parent");
        assert_eq!(dbc.started(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_dependency_in_another_tier_gates_too_and_an_optional_one_counts_as_failing() {
        let reg = registry();
        let (db, dbc) = counted("database", ms(5));
        let (cache, cc) = counted("cache", ms(5));
        let (orders, oc) = counted("orders", ms(5));
        reg.add_all([
            db.tags(TagSet::ACTIVE),
            cache.failure_status(FailureStatus::Degraded),
            orders.depends_on(["database", "cache"]),
        ])
        .unwrap();
        dbc.fail.store(true, Ordering::SeqCst);
        let ready = reg.check(Tag::Ready).await;
        assert_eq!(
            ready.entry("orders").unwrap().description.as_deref(),
            Some("skipped: database failing")
        );
        dbc.fail.store(false, Ordering::SeqCst);
        cc.fail.store(true, Ordering::SeqCst);
        let ready = reg.check(Tag::Ready).await;
        let e = ready.entry("orders").unwrap();
        // The dependent's own failure status, whatever the dependency's.
        assert_eq!(e.status, HealthStatus::Unhealthy);
        assert_eq!(e.description.as_deref(), Some("skipped: cache failing"));
        assert_eq!(oc.started(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_background_dependent_is_skipped_by_its_schedule() {
        let reg = registry();
        let (db, dbc) = counted("database", ms(5));
        let (orders, oc) = counted("orders", ms(5));
        reg.add_all([db, orders.refresh(ms(1000)).depends_on(["database"])])
            .unwrap();
        reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(100)).await;
        assert_eq!(oc.started(), 1);
        dbc.fail.store(true, Ordering::SeqCst);
        reg.check(Tag::Ready).await;
        // The next scheduled runs read the dependency's failure and skip.
        tokio::time::sleep(ms(2500)).await;
        assert_eq!(oc.started(), 1);
        dbc.fail.store(false, Ordering::SeqCst);
        reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(1000)).await;
        assert_eq!(oc.started(), 2);
        let report = reg.check(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Healthy);
    }

    #[test]
    fn the_registry_refuses_unknown_and_cyclic_dependencies() {
        let reg = HealthRegistry::new();
        let p = |name: &'static str| counted(name, ms(1)).0;
        let unknown = reg
            .add_all([p("database"), p("orders").depends_on(["databse"])])
            .unwrap_err();
        assert_eq!(unknown.rules(), [Rule::UnknownDependency]);
        assert!(
            unknown.to_string().contains("did you mean `database`?"),
            "{unknown}"
        );
        let own = reg.add(p("a").depends_on(["a"])).unwrap_err();
        assert_eq!(own.rules(), [Rule::DependencyCycle]);
        let cycle = reg
            .add_all([p("a").depends_on(["b"]), p("b").depends_on(["a"])])
            .unwrap_err();
        assert_eq!(cycle.rules(), [Rule::DependencyCycle]);
        assert!(cycle.to_string().contains("a -> b -> a"), "{cycle}");
        // A dependency registered before its dependent is known.
        let database = reg.add(p("database")).unwrap();
        reg.add(p("orders").depends_on(["database"])).unwrap();
        // A replacement that would close a cycle is refused, and the old
        // probe kept.
        let (err, _kept) = database
            .replace(p("database").depends_on(["orders"]))
            .unwrap_err();
        assert_eq!(err.rules(), [Rule::DependencyCycle]);
        assert!(
            err.to_string().contains("database -> orders -> database")
                || err.to_string().contains("orders -> database -> orders"),
            "{err}"
        );
        assert_eq!(err.rules(), [Rule::DependencyCycle]);
    }
}

/// Execution policy (BE-HLTH-006).
mod policy {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    use futures_util::future::join_all;

    use crate::prelude::{
        HealthRegistry, HealthStatus, ProbeRegistration, ProbeResult, Tag, TagSet, from_fn,
    };
    use crate::report::EntryOutcome;
    use crate::spec::Rule;
    use zb_health_spec::detection::DEFAULT_DETECTION_TIME;

    /// Requests waiting on `name`'s execution in flight (0 with none).
    fn waiting(reg: &HealthRegistry, name: &str) -> usize {
        reg.in_flight()
            .iter()
            .find(|f| &*f.name == name)
            .map_or(0, |f| f.waiting)
    }

    pub(super) fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Counts starts, the peak of runs at once and dropped futures.
    #[derive(Default)]
    pub(super) struct Counters {
        started: AtomicUsize,
        now: AtomicUsize,
        peak: AtomicUsize,
        dropped: AtomicUsize,
        pub(super) hang: AtomicBool,
        pub(super) fail: AtomicBool,
    }

    impl Counters {
        pub(super) fn started(&self) -> usize {
            self.started.load(Ordering::SeqCst)
        }
    }

    struct Running(Arc<Counters>);
    impl Drop for Running {
        fn drop(&mut self) {
            self.0.now.fetch_sub(1, Ordering::SeqCst);
            self.0.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A probe that takes `run` (or hangs while `hang` is set) and counts.
    pub(super) fn counted(name: &'static str, run: Duration) -> (ProbeRegistration, Arc<Counters>) {
        let c = Arc::new(Counters::default());
        let counters = c.clone();
        let probe = from_fn(move || {
            let c = counters.clone();
            async move {
                c.started.fetch_add(1, Ordering::SeqCst);
                let n = c.now.fetch_add(1, Ordering::SeqCst) + 1;
                c.peak.fetch_max(n, Ordering::SeqCst);
                let _running = Running(c.clone());
                if c.hang.load(Ordering::SeqCst) {
                    std::future::pending::<()>().await;
                }
                tokio::time::sleep(run).await;
                if c.fail.load(Ordering::SeqCst) {
                    return Ok(ProbeResult::unhealthy("down"));
                }
                Ok(ProbeResult::healthy())
            }
        });
        (ProbeRegistration::new(name, probe), c)
    }

    /// A ready check on its own task, to be dropped or awaited later.
    fn spawn_check(reg: &HealthRegistry) -> tokio::task::JoinHandle<crate::report::HealthReport> {
        let reg = reg.clone();
        tokio::spawn(async move { reg.check(Tag::Ready).await })
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_checks_share_one_execution() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(5));
        reg.add(r).unwrap();
        let reports = join_all((0..32).map(|_| reg.check(Tag::Ready))).await;
        assert_eq!(c.started(), 1);
        for report in &reports {
            assert_eq!(report.status, HealthStatus::Healthy);
            assert_eq!(report.entries[0].duration, ms(5));
        }
        // The flight is retired when it ends: the next request runs anew.
        reg.check(Tag::Ready).await;
        assert_eq!(c.started(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_probe_on_two_tiers_runs_once_for_both() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(5));
        reg.add(r.tags(TagSet::READY.with(Tag::Active))).unwrap();
        let (ready, active) = tokio::join!(reg.check(Tag::Ready), reg.check(Tag::Active));
        assert_eq!(c.started(), 1);
        assert_eq!(ready.entries, active.entries);
    }

    #[tokio::test(start_paused = true)]
    async fn the_others_get_the_result_when_the_first_waiter_leaves() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(50));
        reg.add(r).unwrap();
        let first = spawn_check(&reg);
        let second = spawn_check(&reg);
        tokio::time::sleep(ms(10)).await;
        assert_eq!(waiting(&reg, "db"), 2);
        first.abort();
        assert!(first.await.unwrap_err().is_cancelled());
        let report = second.await.unwrap();
        assert_eq!(report.status, HealthStatus::Healthy);
        assert_eq!(report.entries[0].duration, ms(50));
        assert_eq!(c.started(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_flight_nobody_waits_for_is_cancelled() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(50));
        reg.add(r).unwrap();
        let only = spawn_check(&reg);
        tokio::time::sleep(ms(10)).await;
        only.abort();
        let _ = only.await;
        assert_eq!(c.dropped.load(Ordering::SeqCst), 1, "probe future dropped");
        assert_eq!(waiting(&reg, "db"), 0);
        // Nothing left to join: the next request starts its own run.
        reg.check(Tag::Ready).await;
        assert_eq!(c.started(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_probe_has_one_execution_for_64_requests() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("hung", ms(0));
        c.hang.store(true, Ordering::SeqCst);
        reg.add(r.timeout(ms(200))).unwrap();
        let reports = join_all((0..64).map(|_| reg.check(Tag::Ready))).await;
        assert_eq!(c.started(), 1);
        assert_eq!(c.peak.load(Ordering::SeqCst), 1);
        assert_eq!(
            c.dropped.load(Ordering::SeqCst),
            1,
            "the hung future was dropped"
        );
        for report in &reports {
            let e = &report.entries[0];
            assert_eq!(e.outcome, EntryOutcome::TimedOut);
            assert_eq!(report.total_duration, ms(200));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_joiner_waits_only_the_remaining_time() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("hung", ms(0));
        c.hang.store(true, Ordering::SeqCst);
        reg.add(r.timeout(ms(200))).unwrap();
        let first = spawn_check(&reg);
        tokio::time::sleep(ms(150)).await;
        let late = reg.check(Tag::Ready).await;
        assert_eq!(late.total_duration, ms(50));
        assert_eq!(late.entries[0].outcome, EntryOutcome::TimedOut);
        assert_eq!(first.await.unwrap().total_duration, ms(200));
        assert_eq!(c.started(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn one_flight_takes_one_in_flight_slot() {
        // With a bound of 1, requests that each ran the probe would queue
        // behind each other and miss the deadline; sharing, all answer.
        let reg = HealthRegistry::builder()
            .probes_on_caller_runtime()
            .max_in_flight(1)
            .build();
        let (r, c) = counted("db", ms(100));
        reg.add(r.timeout(ms(150))).unwrap();
        let reports = join_all((0..8).map(|_| reg.check(Tag::Ready))).await;
        assert!(reports.iter().all(|r| r.status == HealthStatus::Healthy));
        assert_eq!(c.started(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_cached_result_is_served_with_its_original_duration() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(5));
        reg.add(r.cache(ms(1000))).unwrap();
        let first = reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(500)).await;
        let second = reg.check(Tag::Ready).await;
        assert_eq!(c.started(), 1, "no run within the cache time");
        assert_eq!(second.entries, first.entries);
        assert_eq!(second.entries[0].duration, ms(5));
        assert_eq!(second.total_duration, Duration::ZERO);
        tokio::time::sleep(ms(500)).await;
        reg.check(Tag::Ready).await;
        assert_eq!(c.started(), 2, "a run once the cache time has passed");
    }

    #[tokio::test(start_paused = true)]
    async fn a_failure_is_not_cached_so_a_blip_recovers_at_the_next_request() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(5));
        c.fail.store(true, Ordering::SeqCst);
        reg.add(r.cache(ms(1000))).unwrap();
        assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Unhealthy);
        assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Unhealthy);
        assert_eq!(c.started(), 2, "a failure is checked again at once");
        c.fail.store(false, Ordering::SeqCst);
        assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Healthy);
        assert_eq!(c.started(), 3, "the dependency is back: so is the tier");
        reg.check(Tag::Ready).await;
        assert_eq!(c.started(), 3, "the healthy answer is cached");
    }

    #[tokio::test(start_paused = true)]
    async fn a_failure_clears_the_cached_success_before_it() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(0));
        reg.add(r.cache(ms(1000))).unwrap();
        assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Healthy);
        tokio::time::sleep(ms(1000)).await;
        c.fail.store(true, Ordering::SeqCst);
        assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Unhealthy);
        c.fail.store(false, Ordering::SeqCst);
        c.hang.store(true, Ordering::SeqCst);
        // Not the old success: the probe runs, and here times out.
        let next = reg.check(Tag::Ready).await;
        assert_eq!(next.entries[0].outcome, EntryOutcome::TimedOut);
        assert_eq!(c.started(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failing_cached_probe_still_runs_once_for_concurrent_requests() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("hung", ms(0));
        c.hang.store(true, Ordering::SeqCst);
        reg.add(r.timeout(ms(100)).cache(ms(1000))).unwrap();
        let checks: Vec<_> = (0..64).map(|_| spawn_check(&reg)).collect();
        for report in join_all(checks).await {
            let report = report.unwrap();
            assert_eq!(report.entries[0].outcome, EntryOutcome::TimedOut);
        }
        assert_eq!(c.started(), 1, "single flight, not one run per request");
        assert_eq!(c.peak.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_background_probe_never_makes_a_request_wait() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(10));
        reg.add(r.refresh(ms(100)).max_staleness(ms(150)).timeout(ms(500)))
            .unwrap();
        let first = reg.check(Tag::Ready).await;
        assert_eq!(first.total_duration, Duration::ZERO);
        let e = &first.entries[0];
        assert_eq!(e.status, HealthStatus::Unhealthy);
        assert_eq!(e.description.as_deref(), Some("no result yet"));
        // The first request started the schedule; the run is under way.
        tokio::time::sleep(ms(5)).await;
        assert_eq!(c.started(), 1);
        assert_eq!(reg.check(Tag::Ready).await.total_duration, Duration::ZERO);
        tokio::time::sleep(ms(10)).await;
        let fresh = reg.check(Tag::Ready).await;
        assert_eq!(fresh.status, HealthStatus::Healthy);
        assert_eq!(fresh.entries[0].duration, ms(10));
        assert_eq!(fresh.total_duration, Duration::ZERO);
        // On schedule: one run per 100 ms, requests or not.
        tokio::time::sleep(ms(300)).await;
        assert_eq!(c.started(), 4);
        assert_eq!(waiting(&reg, "db"), 0, "requests never join a run");
    }

    #[tokio::test(start_paused = true)]
    async fn an_old_background_result_is_reported_stale() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(0));
        reg.add(r.refresh(ms(100)).max_staleness(ms(150)).timeout(ms(500)))
            .unwrap();
        reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(1)).await;
        assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Healthy);
        // The dependency hangs from the next run on (at 100 ms); its last
        // result (at 0 ms) ages past 150 ms long before the 500 ms deadline.
        c.hang.store(true, Ordering::SeqCst);
        tokio::time::sleep(ms(148)).await;
        assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Healthy);
        tokio::time::sleep(ms(3)).await;
        let stale = reg.check(Tag::Ready).await;
        let e = &stale.entries[0];
        assert_eq!(e.status, HealthStatus::Unhealthy);
        assert_eq!(
            e.description.as_deref(),
            Some("stale: no result for over 150 ms")
        );
        assert_eq!(stale.total_duration, Duration::ZERO);
        // At the deadline the timeout is recorded as the latest result.
        tokio::time::sleep(ms(500)).await;
        let timed_out = reg.check(Tag::Ready).await;
        assert_eq!(timed_out.entries[0].outcome, EntryOutcome::TimedOut);
        assert_eq!(
            timed_out.entries[0].description.as_deref(),
            Some("timed out after 500 ms")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_schedule_ends_when_the_probe_is_removed() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(10));
        let handle = reg.add(r.refresh(ms(100))).unwrap();
        reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(250)).await;
        assert_eq!(c.started(), 3);
        assert!(handle.remove());
        tokio::time::sleep(ms(10_000)).await;
        assert_eq!(c.started(), 3, "a run after removal");
    }

    #[tokio::test(start_paused = true)]
    async fn the_schedule_ends_when_the_probe_is_replaced() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, old) = counted("db", ms(10));
        let handle = reg.add(r.refresh(ms(100))).unwrap();
        reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(250)).await;
        let (r, new) = counted("db", ms(10));
        let _handle = handle.replace(r).unwrap();
        tokio::time::sleep(ms(10_000)).await;
        assert_eq!(old.started(), 3, "the old schedule ran on");
        assert_eq!(
            new.started(),
            0,
            "the replacement is not a background probe"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_schedule_ends_with_the_registry() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(10));
        reg.add(r.refresh(ms(100))).unwrap();
        reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(250)).await;
        assert_eq!(c.started(), 3);
        drop(reg);
        tokio::time::sleep(ms(10_000)).await;
        assert_eq!(c.started(), 3, "a run after the registry was dropped");
        assert_eq!(Arc::strong_count(&c), 1, "the task still holds the probe");
    }

    /// On the probe thread (the default), the schedule starts at `add`:
    /// with no request and no runtime of the caller's at all.
    #[test]
    fn a_background_probe_runs_from_registration_on_the_probe_thread() {
        let until = |what: &str, done: &dyn Fn() -> bool| {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while !done() {
                assert!(std::time::Instant::now() < deadline, "{what}");
                std::thread::sleep(ms(5));
            }
        };
        let reg = HealthRegistry::new();
        let (r, c) = counted("db", ms(1));
        reg.add(r.refresh(ms(20))).unwrap();
        until("the schedule runs without a request", &|| c.started() >= 2);
        drop(reg);
        until("the schedule ends with the registry", &|| {
            Arc::strong_count(&c) == 1
        });
    }

    #[test]
    fn the_builder_applies_the_execution_policy_rules() {
        let reg = HealthRegistry::new();
        let ok = || ProbeRegistration::new("p", from_fn(|| async { Ok(ProbeResult::healthy()) }));
        let rules = |r| reg.add(r).unwrap_err().rules();
        assert_eq!(rules(ok().max_staleness(ms(5))), [Rule::RefreshPolicy]);
        assert_eq!(
            rules(ok().refresh(ms(5)).max_staleness(ms(5))),
            [Rule::RefreshPolicy]
        );
        assert_eq!(
            rules(ok().refresh(ms(5)).cache(ms(5))),
            [Rule::RefreshPolicy]
        );
        assert_eq!(rules(ok().cache(ms(0))), [Rule::Duration]);
        assert_eq!(
            rules(ok().tags(TagSet::ACTIVE).cache(ms(5))),
            [Rule::LiveAnswer]
        );
        assert_eq!(
            rules(ok().tags(TagSet::READY.with(Tag::Active)).refresh(ms(5))),
            [Rule::LiveAnswer]
        );
        assert!(reg.names().is_empty());
        reg.add(ok().refresh(ms(5)).max_staleness(ms(6))).unwrap();
    }

    #[test]
    fn no_cached_or_background_result_reaches_the_detection_time() {
        let reg = HealthRegistry::builder().detection_time(ms(4000)).build();
        let ok =
            |name| ProbeRegistration::new(name, from_fn(|| async { Ok(ProbeResult::healthy()) }));
        let rules = |r| reg.add(r).unwrap_err().rules();
        assert_eq!(
            rules(ok("a").cache(Duration::from_secs(300))),
            [Rule::MaxAgeFitsDetection]
        );
        assert_eq!(rules(ok("a").cache(ms(4000))), [Rule::MaxAgeFitsDetection]);
        // 2 × 2 s + the 800 ms default deadline.
        assert_eq!(
            rules(ok("a").refresh(ms(2000))),
            [Rule::MaxAgeFitsDetection]
        );
        assert_eq!(
            rules(ok("a").refresh(ms(1000)).max_staleness(ms(5000))),
            [Rule::MaxAgeFitsDetection]
        );
        assert!(reg.names().is_empty());
        reg.add(ok("a").cache(ms(3999))).unwrap();
        reg.add(ok("b").refresh(ms(1000))).unwrap();
        // A longer detection time changes nothing; a shorter one must fit.
        reg.set_detection_time(ms(10_000)).unwrap();
        assert_eq!(reg.detection_time(), Some(ms(4000)));
        // b's oldest result: 2 × 1 s + the 800 ms default deadline.
        let err = reg.set_detection_time(ms(2500)).unwrap_err();
        assert_eq!(err.rules(), [Rule::MaxAgeFitsDetection; 2]);
        assert_eq!(reg.detection_time(), Some(ms(4000)), "nothing changed");
        reg.set_detection_time(ms(4000)).unwrap();
    }

    /// The ready entry's status and description.
    async fn seen(reg: &HealthRegistry) -> (HealthStatus, String) {
        let report = reg.check(Tag::Ready).await;
        let e = &report.entries[0];
        (e.status, e.description.as_deref().unwrap_or("").to_owned())
    }

    /// A registry on the caller's runtime whose detection time is 4 s: a
    /// request-driven threshold counts periods of 2 s.
    fn detecting() -> HealthRegistry {
        HealthRegistry::builder()
            .probes_on_caller_runtime()
            .detection_time(ms(4000))
            .build()
    }

    /// The ready entry one period (2 s) later, with another caller's run
    /// (a gRPC health check) in between, which counts for nothing.
    async fn seen_next_period(reg: &HealthRegistry) -> (HealthStatus, String) {
        tokio::time::sleep(ms(1000)).await;
        reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(1000)).await;
        seen(reg).await
    }

    #[tokio::test(start_paused = true)]
    async fn a_failure_threshold_holds_a_blip_back_and_says_so() {
        use HealthStatus::{Healthy, Unhealthy};
        let reg = detecting();
        let (r, c) = counted("db", ms(5));
        reg.add(r.failure_threshold(3).success_threshold(2))
            .unwrap();
        assert_eq!(seen(&reg).await, (Healthy, String::new()));
        c.fail.store(true, Ordering::SeqCst);
        assert_eq!(seen(&reg).await, (Healthy, "1 of 3 failures".into()));
        assert_eq!(
            seen_next_period(&reg).await,
            (Healthy, "2 of 3 failures".into())
        );
        // A healthy run between resets the count: a blip is not an outage.
        c.fail.store(false, Ordering::SeqCst);
        assert_eq!(seen(&reg).await, (Healthy, String::new()));
        c.fail.store(true, Ordering::SeqCst);
        assert_eq!(seen(&reg).await, (Healthy, "1 of 3 failures".into()));
        assert_eq!(
            seen_next_period(&reg).await,
            (Healthy, "2 of 3 failures".into())
        );
        assert_eq!(seen_next_period(&reg).await, (Unhealthy, "down".into()));
        assert_eq!(seen(&reg).await, (Unhealthy, "down".into()));
        // Recovery needs two healthy periods in a row.
        c.fail.store(false, Ordering::SeqCst);
        assert_eq!(seen(&reg).await, (Unhealthy, "1 of 2 successes".into()));
        assert_eq!(seen(&reg).await, (Unhealthy, "1 of 2 successes".into()));
        assert_eq!(seen_next_period(&reg).await, (Healthy, String::new()));
        assert_eq!(c.started(), 15, "every request ran the probe");
    }

    /// Without a detection time a request-driven probe has no known
    /// period to count in, so every run counts.
    #[tokio::test(start_paused = true)]
    async fn without_a_detection_time_every_run_counts() {
        use HealthStatus::{Healthy, Unhealthy};
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(5));
        reg.add(r.failure_threshold(2)).unwrap();
        c.fail.store(true, Ordering::SeqCst);
        assert_eq!(seen(&reg).await, (Healthy, "1 of 2 failures".into()));
        assert_eq!(seen(&reg).await, (Unhealthy, "down".into()));
    }

    /// The time from the first failed run to the first run reported
    /// failing, with a run every `every` (each answering after `takes`).
    async fn time_to_trip(reg: &HealthRegistry, every: Duration) -> (Duration, Vec<String>) {
        let start = tokio::time::Instant::now();
        let mut first_failed = None;
        let mut held = Vec::new();
        for k in 0.. {
            tokio::time::sleep_until(start + every * k).await;
            let report = reg.check(Tag::Ready).await;
            let e = &report.entries[0];
            let at = tokio::time::Instant::now();
            let first = *first_failed.get_or_insert(at);
            if e.status != HealthStatus::Healthy {
                return (at - first, held);
            }
            let d = e.description.as_deref().unwrap_or_default().to_owned();
            if held.last() != Some(&d) {
                held.push(d);
            }
            assert!(k < 1000, "never tripped");
        }
        unreachable!()
    }

    /// R20 (a threshold counts run periods): with `failure_threshold: 3` and a
    /// period of 2 s, runs every 100 ms (the kubelet, a gRPC health check and a
    /// dashboard together) hold the failure back for two periods, less a tenth
    /// of one each, exactly as runs at the period alone, which trip at the
    /// third.
    #[tokio::test(start_paused = true)]
    async fn a_threshold_counts_periods_not_runs() {
        let reg = detecting();
        let (r, c) = counted("db", ms(0));
        reg.add(r.failure_threshold(3)).unwrap();
        c.fail.store(true, Ordering::SeqCst);
        let (tripped, held) = time_to_trip(&reg, ms(100)).await;
        assert_eq!(tripped, ms(3600), "2 periods, less 200 ms each");
        assert_eq!(held, ["1 of 3 failures", "2 of 3 failures"]);
        let runs = c.started();
        assert_eq!(runs, 37, "every run in between was held");
        // Recovered, then runs at exactly the period: the third trips.
        c.fail.store(false, Ordering::SeqCst);
        seen(&reg).await;
        c.fail.store(true, Ordering::SeqCst);
        let (tripped, held) = time_to_trip(&reg, ms(2000)).await;
        assert_eq!(tripped, ms(4000));
        assert_eq!(held, ["1 of 3 failures", "2 of 3 failures"]);
        assert_eq!(c.started(), runs + 1 + 3, "the third run reported it");
    }

    /// R20: an error, a timeout and a panic are failed runs like
    /// an `Unhealthy` answer, counted by the same periods.
    #[tokio::test(start_paused = true)]
    async fn every_kind_of_failed_run_counts_the_same() {
        const OK: u8 = 0;
        const DOWN: u8 = 1;
        const ERROR: u8 = 2;
        const HANG: u8 = 3;
        const PANIC: u8 = 4;
        let reg = detecting();
        let mode = Arc::new(std::sync::atomic::AtomicU8::new(OK));
        let m = mode.clone();
        let probe = from_fn(move || {
            let mode = m.load(Ordering::SeqCst);
            async move {
                match mode {
                    DOWN => Ok(ProbeResult::unhealthy("down")),
                    ERROR => Err("refused".into()),
                    HANG => std::future::pending().await,
                    PANIC => panic!("probe bug"),
                    _ => Ok(ProbeResult::healthy()),
                }
            }
        });
        reg.add(
            ProbeRegistration::new("db", probe)
                .timeout(ms(50))
                .failure_threshold(3),
        )
        .unwrap();
        let mut times = Vec::new();
        for failure in [DOWN, ERROR, HANG, PANIC] {
            mode.store(OK, Ordering::SeqCst);
            assert_eq!(seen(&reg).await, (HealthStatus::Healthy, String::new()));
            mode.store(failure, Ordering::SeqCst);
            times.push(time_to_trip(&reg, ms(100)).await);
        }
        let held = || vec!["1 of 3 failures".to_owned(), "2 of 3 failures".to_owned()];
        assert_eq!(times, vec![(ms(3600), held()); 4]);
    }

    /// R20: a background probe's threshold counts its `refresh`,
    /// not the readiness period, however often requests read it.
    #[tokio::test(start_paused = true)]
    async fn a_background_threshold_counts_its_refresh() {
        use HealthStatus::{Healthy, Unhealthy};
        let reg = detecting();
        let (r, c) = counted("db", ms(0));
        reg.add(r.refresh(ms(500)).failure_threshold(3)).unwrap();
        seen(&reg).await;
        // Reads every 100 ms, 50 ms after each scheduled run.
        tokio::time::sleep(ms(50)).await;
        assert_eq!(seen(&reg).await, (Healthy, String::new()));
        c.fail.store(true, Ordering::SeqCst);
        // Each change of the entry, and when it was seen.
        let mut seen_at: Vec<(Duration, (HealthStatus, String))> = Vec::new();
        let mut last = (Healthy, String::new());
        let start = tokio::time::Instant::now();
        while last.0 == Healthy {
            tokio::time::sleep(ms(100)).await;
            let entry = seen(&reg).await;
            if entry != last {
                seen_at.push((start.elapsed(), entry.clone()));
                last = entry;
            }
        }
        assert_eq!(
            seen_at,
            [
                (ms(500), (Healthy, "1 of 3 failures".into())),
                (ms(1000), (Healthy, "2 of 3 failures".into())),
                (ms(1500), (Unhealthy, "down".into())),
            ],
            "one count per refresh, the third trips"
        );
    }

    /// A cluster of `peers` other members with fixed verdicts, and this
    /// node's as published.
    #[derive(Default)]
    struct Peers {
        failing: std::sync::Mutex<Vec<bool>>,
        own: std::sync::Mutex<Vec<(String, bool)>>,
        unavailable: AtomicBool,
    }

    impl crate::shared::SharedVerdicts for Peers {
        fn publish(&self, probe: &str, failing: bool) {
            self.own.lock().unwrap().push((probe.to_owned(), failing));
        }

        fn tally(&self, _probe: &str) -> Option<crate::shared::Tally> {
            if self.unavailable.load(Ordering::SeqCst) {
                return None;
            }
            let peers = self.failing.lock().unwrap();
            let own = self.own.lock().unwrap().last().is_some_and(|(_, f)| *f);
            let failing = peers.iter().filter(|f| **f).count() as u32 + u32::from(own);
            Some(crate::shared::Tally {
                failing,
                reporting: peers.len() as u32 + 1,
            })
        }
    }

    /// BE-HLTH-003: a shared probe's failure is `Degraded` when a majority
    /// of the reporting members share it, its own failure otherwise, and
    /// ordinary while the view is unavailable; every run publishes the
    /// reported verdict, and one the threshold holds back is no failure.
    #[tokio::test(start_paused = true)]
    async fn a_shared_probe_fails_open_only_with_the_majority() {
        use HealthStatus::{Degraded, Healthy, Unhealthy};
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let peers = Arc::new(Peers::default());
        reg.set_shared_verdicts(peers.clone());
        let (r, c) = counted("db", ms(5));
        reg.add(r.shared().failure_threshold(2)).unwrap();
        *peers.failing.lock().unwrap() = vec![true, false];
        c.fail.store(true, Ordering::SeqCst);
        assert_eq!(seen(&reg).await, (Healthy, "1 of 2 failures".into()));
        assert_eq!(
            peers.own.lock().unwrap().last(),
            Some(&("db".to_owned(), false)),
            "a held-back failure is published as no failure"
        );
        assert_eq!(
            seen(&reg).await,
            (Degraded, "failing on 2 of 3 nodes".into())
        );
        *peers.failing.lock().unwrap() = vec![false, false];
        assert_eq!(seen(&reg).await, (Unhealthy, "down".into()), "1 of 3");
        peers.unavailable.store(true, Ordering::SeqCst);
        *peers.failing.lock().unwrap() = vec![true, true];
        assert_eq!(seen(&reg).await, (Unhealthy, "down".into()), "no view");
        peers.unavailable.store(false, Ordering::SeqCst);
        assert_eq!(
            seen(&reg).await,
            (Degraded, "failing on 3 of 3 nodes".into())
        );
        c.fail.store(false, Ordering::SeqCst);
        assert_eq!(seen(&reg).await, (Healthy, String::new()));
        assert_eq!(
            peers.own.lock().unwrap().last(),
            Some(&("db".to_owned(), false))
        );
    }

    /// R7: `shared` is a readiness decision, refused off `ready` and on
    /// `active`.
    #[test]
    fn a_shared_probe_off_the_ready_tier_is_refused() {
        let reg = HealthRegistry::new();
        for tags in [
            TagSet::of(&[Tag::Active]),
            TagSet::of(&[Tag::Ready, Tag::Active]),
        ] {
            let (r, _) = counted("db", ms(5));
            let err = reg.add(r.shared().tags(tags)).unwrap_err();
            assert_eq!(err.rules(), [Rule::Contradiction], "{tags:?}");
        }
        let (r, _) = counted("db", ms(5));
        reg.add(r.shared()).unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn failing_for_counts_time_from_the_first_failed_run() {
        use HealthStatus::{Healthy, Unhealthy};
        let reg = detecting();
        let (r, c) = counted("db", ms(5));
        reg.add(r.failing_for(ms(2000))).unwrap();
        c.fail.store(true, Ordering::SeqCst);
        assert_eq!(
            seen(&reg).await,
            (Healthy, "failing for 0 ms of 2000 ms".into())
        );
        // Time, not periods: a run between does not change it.
        tokio::time::sleep(ms(500)).await;
        reg.check(Tag::Ready).await;
        tokio::time::sleep(ms(495)).await;
        assert_eq!(
            seen(&reg).await,
            (Healthy, "failing for 1005 ms of 2000 ms".into())
        );
        tokio::time::sleep(ms(1000)).await;
        assert_eq!(seen(&reg).await, (Unhealthy, "down".into()));
        // Without a success threshold one healthy run recovers.
        c.fail.store(false, Ordering::SeqCst);
        assert_eq!(seen(&reg).await, (Healthy, String::new()));
    }

    #[tokio::test(start_paused = true)]
    async fn a_held_back_failure_is_not_cached_as_a_success() {
        use HealthStatus::{Healthy, Unhealthy};
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(5));
        reg.add(r.cache(ms(1000)).failure_threshold(2)).unwrap();
        seen(&reg).await;
        tokio::time::sleep(ms(1000)).await;
        c.fail.store(true, Ordering::SeqCst);
        assert_eq!(seen(&reg).await, (Healthy, "1 of 2 failures".into()));
        assert_eq!(seen(&reg).await, (Unhealthy, "down".into()));
        assert_eq!(c.started(), 3, "the held entry was not served again");
    }

    #[tokio::test(start_paused = true)]
    async fn a_background_probe_reports_its_held_back_failures() {
        use HealthStatus::{Healthy, Unhealthy};
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let (r, c) = counted("db", ms(5));
        reg.add(r.refresh(ms(1000)).failure_threshold(2)).unwrap();
        seen(&reg).await;
        tokio::time::sleep(ms(100)).await;
        assert_eq!(seen(&reg).await, (Healthy, String::new()));
        c.fail.store(true, Ordering::SeqCst);
        tokio::time::sleep(ms(1000)).await;
        assert_eq!(seen(&reg).await, (Healthy, "1 of 2 failures".into()));
        tokio::time::sleep(ms(1000)).await;
        assert_eq!(seen(&reg).await, (Unhealthy, "down".into()));
    }

    #[test]
    fn no_threshold_hides_an_outage_past_the_detection_time() {
        // 4 s: the readiness period is 2 s, so three runs fit, four not.
        let reg = HealthRegistry::builder().detection_time(ms(4000)).build();
        let ok =
            |name| ProbeRegistration::new(name, from_fn(|| async { Ok(ProbeResult::healthy()) }));
        let rules = |r| reg.add(r).unwrap_err().rules();
        assert_eq!(
            rules(ok("a").failure_threshold(4)),
            [Rule::ThresholdFitsDetection]
        );
        assert_eq!(
            rules(ok("a").failing_for(ms(4001))),
            [Rule::ThresholdFitsDetection]
        );
        assert_eq!(
            rules(ok("a").refresh(ms(500)).failure_threshold(10)),
            [Rule::ThresholdFitsDetection]
        );
        assert_eq!(
            rules(ok("a").success_threshold(0)),
            [Rule::ThresholdFitsDetection]
        );
        assert!(reg.names().is_empty());
        reg.add(ok("a").failure_threshold(3)).unwrap();
        reg.add(ok("b").refresh(ms(500)).failure_threshold(9))
            .unwrap();
        reg.add(ok("c").failing_for(ms(4000)).success_threshold(5))
            .unwrap();
        // A shorter detection time must fit the thresholds too.
        let err = reg.set_detection_time(ms(3000)).unwrap_err();
        assert_eq!(err.rules(), [Rule::ThresholdFitsDetection; 2]);
        // Without a detection time the default one (4 s) bounds them.
        let unset = HealthRegistry::new();
        let long = unset.add(ok("a").failure_threshold(100)).unwrap_err();
        assert_eq!(long.rules(), [Rule::ThresholdFitsDetection]);
        unset.add(ok("a").failure_threshold(2)).unwrap();
        let zero = unset.add(ok("b").failure_threshold(0)).unwrap_err();
        assert_eq!(zero.rules(), [Rule::ThresholdFitsDetection]);
    }

    #[test]
    fn without_a_detection_time_the_default_one_bounds_a_cache() {
        let reg = HealthRegistry::new();
        let ok =
            |name| ProbeRegistration::new(name, from_fn(|| async { Ok(ProbeResult::healthy()) }));
        assert_eq!(DEFAULT_DETECTION_TIME, ms(4000));
        let unbounded = reg.add(ok("a").cache(Duration::from_secs(300)));
        assert_eq!(unbounded.unwrap_err().rules(), [Rule::MaxAgeFitsDetection]);
        reg.add(ok("a").cache(ms(3999))).unwrap();
        assert_eq!(reg.detection_time(), None, "none was set");
        // The first one set replaces the default, even a longer one.
        reg.set_detection_time(Duration::from_secs(60)).unwrap();
        reg.add(ok("b").cache(Duration::from_secs(30))).unwrap();
        assert_eq!(reg.detection_time(), Some(Duration::from_secs(60)));
    }

    /// The deadline `reg` runs its probes with, as their entries say.
    async fn deadlines(reg: &HealthRegistry) -> Vec<String> {
        let report = reg.check(Tag::Ready).await;
        report
            .entries
            .iter()
            .map(|e| e.description.as_deref().unwrap_or_default().to_owned())
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_default_deadline_fits_the_orchestrator_timeout_set_before_or_after() {
        let hung = |name| {
            let (r, c) = counted(name, ms(0));
            c.hang.store(true, Ordering::SeqCst);
            r
        };
        let reg = HealthRegistry::builder()
            .probes_on_caller_runtime()
            .orchestrator_timeout(ms(1000))
            .build();
        reg.add(hung("a")).unwrap();
        assert_eq!(deadlines(&reg).await, ["timed out after 800 ms"]);
        // Only a deadline the user wrote breaks R5.
        assert_eq!(
            reg.add(hung("b").timeout(ms(1000))).unwrap_err().rules(),
            [Rule::Duration]
        );
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        reg.add(hung("a")).unwrap();
        reg.add(hung("b").timeout(ms(900))).unwrap();
        assert_eq!(
            deadlines(&reg).await,
            ["timed out after 800 ms", "timed out after 900 ms"],
            "none set: below Kubernetes' default 1 s timeout"
        );
        reg.set_orchestrator_timeout(ms(2000)).unwrap();
        assert_eq!(
            deadlines(&reg).await,
            ["timed out after 1000 ms", "timed out after 900 ms"],
            "the default follows the orchestrator timeout, up to 1 s"
        );
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        reg.add(hung("a").timeout(ms(1000))).unwrap();
        assert_eq!(
            reg.set_orchestrator_timeout(ms(1000)).unwrap_err().rules(),
            [Rule::Duration]
        );
    }
}

/// Running a tier (AT-2, AT-3, AT-4).
mod tier {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    use crate::prelude::{
        FailureStatus, HealthRegistry, HealthStatus, ProbeRegistration, ProbeResult, Tag, TagSet,
        from_fn,
    };
    use crate::report::EntryOutcome;
    use crate::spec::Rule;
    use crate::writer::canonical_json;

    fn ok(name: &'static str, status: HealthStatus) -> ProbeRegistration {
        ProbeRegistration::new(
            name,
            from_fn(move || async move { Ok(ProbeResult::new(status)) }),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn empty_tier_is_healthy_with_no_entries() {
        let report = HealthRegistry::builder()
            .probes_on_caller_runtime()
            .build()
            .check(Tag::Ready)
            .await;
        assert_eq!(report.status, HealthStatus::Healthy);
        assert!(report.entries.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn tier_status_is_the_worst_entry_in_registration_order() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        reg.add(ok("b", HealthStatus::Healthy)).unwrap();
        reg.add(ok("a", HealthStatus::Degraded)).unwrap();
        let report = reg.check(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Degraded);
        let names: Vec<&str> = report.entries.iter().map(|e| &*e.name).collect();
        assert_eq!(names, ["b", "a"]);
        reg.add(ok("c", HealthStatus::Unhealthy)).unwrap();
        assert_eq!(reg.check(Tag::Ready).await.status, HealthStatus::Unhealthy);
    }

    #[tokio::test(start_paused = true)]
    async fn tiers_run_only_their_own_probes() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        reg.add(ok("db", HealthStatus::Unhealthy)).unwrap();
        reg.add(ok("primary", HealthStatus::Healthy).tags(TagSet::ACTIVE))
            .unwrap();
        assert_eq!(reg.check(Tag::Ready).await.entries.len(), 1);
        let active = reg.check(Tag::Active).await;
        assert_eq!(
            (active.entries.len(), active.status),
            (1, HealthStatus::Healthy)
        );
        let live = reg.check(Tag::Live).await;
        assert_eq!(
            (live.entries.len(), live.status),
            (0, HealthStatus::Healthy)
        );
    }

    struct SetOnDrop(Arc<AtomicBool>);
    impl Drop for SetOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_timeout_cancels_the_probe_and_keeps_its_name() {
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = dropped.clone();
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        reg.add(
            ProbeRegistration::new(
                "hung-dependency",
                from_fn(move || {
                    let guard = SetOnDrop(flag.clone());
                    async move {
                        let _guard = guard;
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        Ok(ProbeResult::healthy())
                    }
                }),
            )
            .timeout(Duration::from_millis(50)),
        )
        .unwrap();
        let report = reg.check(Tag::Ready).await;
        let e = &report.entries[0];
        assert_eq!(&*e.name, "hung-dependency");
        assert_eq!(
            (e.status, e.outcome),
            (HealthStatus::Unhealthy, EntryOutcome::TimedOut)
        );
        assert_eq!(e.description.as_deref(), Some("timed out after 50 ms"));
        assert!(
            dropped.load(Ordering::SeqCst),
            "the hung probe's future was not dropped"
        );
        assert_eq!(report.total_duration, Duration::from_millis(50));
    }

    #[tokio::test(start_paused = true)]
    async fn a_panic_fails_only_its_own_entry() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        reg.add(ok("before", HealthStatus::Healthy)).unwrap();
        reg.add(ProbeRegistration::new(
            "exploding",
            from_fn(|| async { panic!("secret panic text at 10.0.0.7") }),
        ))
        .unwrap();
        reg.add(ok("after", HealthStatus::Healthy)).unwrap();
        let report = reg.check(Tag::Ready).await;
        let statuses: Vec<_> = report
            .entries
            .iter()
            .map(|e| (&*e.name, e.status, e.outcome))
            .collect();
        assert_eq!(
            statuses,
            [
                ("before", HealthStatus::Healthy, EntryOutcome::Completed),
                ("exploding", HealthStatus::Unhealthy, EntryOutcome::Panicked),
                ("after", HealthStatus::Healthy, EntryOutcome::Completed),
            ]
        );
        let body = String::from_utf8(canonical_json(&report)).unwrap();
        assert!(body.contains("\"check panicked\""));
        assert!(
            !body.contains("secret") && !body.contains("10.0.0.7"),
            "{body}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_panic_before_the_future_exists_fails_only_its_own_entry() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        reg.add(ok("before", HealthStatus::Healthy)).unwrap();
        #[allow(unreachable_code)]
        reg.add(ProbeRegistration::new(
            "sync-panic",
            from_fn(|| {
                panic!("secret synchronous panic");
                async { Ok(ProbeResult::healthy()) }
            }),
        ))
        .unwrap();
        let report = reg.check(Tag::Ready).await;
        let outcomes: Vec<_> = report
            .entries
            .iter()
            .map(|e| (&*e.name, e.outcome))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("before", EntryOutcome::Completed),
                ("sync-panic", EntryOutcome::Panicked)
            ]
        );
    }

    #[test]
    fn the_lifecycle_entry_names_are_reserved() {
        let reg = HealthRegistry::new();
        for name in [
            crate::lifecycle::STARTUP_ENTRY,
            crate::lifecycle::SHUTDOWN_ENTRY,
        ] {
            let err = reg.add(ok(name, HealthStatus::Healthy)).unwrap_err();
            assert_eq!(err.rules(), [Rule::ProbeName], "{name}");
        }
        assert!(reg.names().is_empty());
    }

    #[test]
    fn an_active_probe_is_never_optional() {
        let reg = HealthRegistry::new();
        let err = reg
            .add(
                ok("primary", HealthStatus::Healthy)
                    .tags(TagSet::ACTIVE)
                    .failure_status(FailureStatus::Degraded),
            )
            .unwrap_err();
        assert_eq!(err.rules(), [Rule::ActiveNotOptional]);
        reg.add(ok("cache", HealthStatus::Healthy).failure_status(FailureStatus::Degraded))
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn error_text_never_reaches_the_body() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        reg.add(ProbeRegistration::new(
            "database",
            from_fn(|| async {
                Err("connect to postgres://app:hunter2@db.internal:5432 refused".into())
            }),
        ))
        .unwrap();
        let report = reg.check(Tag::Ready).await;
        assert_eq!(report.entries[0].outcome, EntryOutcome::Errored);
        assert_eq!(report.status, HealthStatus::Unhealthy);
        let body = String::from_utf8(canonical_json(&report)).unwrap();
        assert!(body.contains("\"check failed\""), "{body}");
        for secret in ["hunter2", "db.internal", "postgres://", "refused"] {
            assert!(!body.contains(secret), "{secret} leaked into {body}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn degraded_failure_status_keeps_an_optional_dependency_from_failing_the_tier() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        reg.add(ok("cache", HealthStatus::Unhealthy).failure_status(FailureStatus::Degraded))
            .unwrap();
        reg.add(
            ProbeRegistration::new("search", from_fn(|| async { Err("down".into()) }))
                .failure_status(FailureStatus::Degraded),
        )
        .unwrap();
        let report = reg.check(Tag::Ready).await;
        assert!(
            report
                .entries
                .iter()
                .all(|e| e.status == HealthStatus::Degraded)
        );
        assert_eq!(report.status, HealthStatus::Degraded);
    }

    #[tokio::test(start_paused = true)]
    async fn probes_run_concurrently_not_one_after_another() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        for name in ["p1", "p2", "p3", "p4", "p5"] {
            reg.add(ProbeRegistration::new(
                name,
                from_fn(|| async {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    Ok(ProbeResult::healthy())
                }),
            ))
            .unwrap();
        }
        let report = reg.check(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Healthy);
        // Virtual time: exactly one sleep, where serial execution takes five.
        assert_eq!(report.total_duration, Duration::from_millis(200));
    }

    #[tokio::test(start_paused = true)]
    async fn probes_in_flight_never_exceed_the_bound() {
        let reg = HealthRegistry::builder()
            .probes_on_caller_runtime()
            .max_in_flight(2)
            .build();
        let now = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        for i in 0..6 {
            let (now, peak) = (now.clone(), peak.clone());
            reg.add(ProbeRegistration::new(
                format!("p{i}"),
                from_fn(move || {
                    let (now, peak) = (now.clone(), peak.clone());
                    async move {
                        let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(n, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        now.fetch_sub(1, Ordering::SeqCst);
                        Ok(ProbeResult::healthy())
                    }
                }),
            ))
            .unwrap();
        }
        let report = reg.check(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Healthy);
        assert_eq!(peak.load(Ordering::SeqCst), 2);
        assert_eq!(report.total_duration, Duration::from_millis(150));
    }

    #[test]
    fn duplicate_names_are_refused() {
        let reg = HealthRegistry::new();
        reg.add(ok("db", HealthStatus::Healthy)).unwrap();
        let err = reg.add(ok("db", HealthStatus::Healthy)).unwrap_err();
        assert_eq!(err.rules(), [Rule::DuplicateName]);
        let err = reg
            .add_all([
                ok("x", HealthStatus::Healthy),
                ok("x", HealthStatus::Healthy),
            ])
            .unwrap_err();
        assert_eq!(err.rules(), [Rule::DuplicateName]);
        assert_eq!(reg.names().len(), 1, "a refused batch adds nothing");
    }

    #[test]
    fn live_is_refused() {
        let reg = HealthRegistry::new();
        let err = reg
            .add(ok("db", HealthStatus::Healthy).tags(TagSet::of(&[Tag::Ready, Tag::Live])))
            .unwrap_err();
        assert_eq!(err.rules(), [Rule::LiveTag]);
        assert!(err.to_string().contains("R1 (ZB-1.3)"), "{err}");
        assert!(reg.names().is_empty());
    }

    #[test]
    fn every_violation_is_reported_at_once() {
        let reg = HealthRegistry::builder()
            .orchestrator_timeout(Duration::from_secs(1))
            .build();
        let err = reg
            .add(
                ok("", HealthStatus::Healthy)
                    .tags(TagSet::of(&[Tag::Live]))
                    .timeout(Duration::from_secs(2)),
            )
            .unwrap_err();
        assert_eq!(
            err.rules(),
            [Rule::ProbeName, Rule::LiveTag, Rule::Duration]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn replace_keeps_the_slot_and_remove_tears_down() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        reg.add(ok("a", HealthStatus::Healthy)).unwrap();
        let handle = reg.add(ok("b", HealthStatus::Unhealthy)).unwrap();
        reg.add(ok("c", HealthStatus::Healthy)).unwrap();
        let handle = handle.replace(ok("b", HealthStatus::Healthy)).unwrap();
        let report = reg.check(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Healthy);
        assert_eq!(&*report.entries[1].name, "b");
        // A replacement may not take another probe's name.
        let (err, handle) = handle.replace(ok("c", HealthStatus::Healthy)).unwrap_err();
        assert_eq!(err.rules(), [Rule::DuplicateName]);
        assert!(handle.remove());
        let names: Vec<String> = reg.names().iter().map(|n| n.to_string()).collect();
        assert_eq!(names, ["a", "c"]);
    }
}

/// BE-HLTH-006 (a registry of many probes stays small): the state a
/// registered probe keeps whatever its policy.
/// What only some probes need (a kept result, a failure being logged, a
/// background schedule, a policy other than the default) is boxed, the
/// threshold is kept once, and no description is formatted ahead of need;
/// 816 bytes before.
#[test]
fn a_registered_probe_keeps_little_state() {
    let size = size_of::<super::ProbeRuntime>();
    eprintln!("ProbeRuntime: {size} bytes");
    assert!(size <= 448, "ProbeRuntime is {size} bytes");
}

/// BE-HLTH-006: an execution counts (single flight, the in-flight bound)
/// until its future is really dropped. On the probe thread an abandoned
/// flight's task is aborted, and the abort takes effect later, on that
/// thread: these tests run there, on real time, with requests that time
/// out or give up at every moment.
mod teardown {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use futures_util::future::join_all;

    use crate::prelude::{HealthRegistry, ProbeRegistration, ProbeResult, Tag, from_fn};

    /// Live executions of a set of probes, and their peak.
    #[derive(Default)]
    struct Live {
        now: AtomicUsize,
        peak: AtomicUsize,
        started: AtomicUsize,
    }

    /// Counts one execution as live until its future is dropped; the drop
    /// takes a few milliseconds (a connection being closed), so a run
    /// started while it goes on is seen.
    struct Alive(Arc<Live>);

    impl Drop for Alive {
        fn drop(&mut self) {
            std::thread::sleep(Duration::from_millis(3));
            self.0.now.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// A probe that never answers, counted in `live`.
    fn hung(name: &'static str, live: &Arc<Live>) -> ProbeRegistration {
        let live = live.clone();
        let probe = from_fn(move || {
            let live = live.clone();
            async move {
                live.started.fetch_add(1, Ordering::SeqCst);
                let n = live.now.fetch_add(1, Ordering::SeqCst) + 1;
                live.peak.fetch_max(n, Ordering::SeqCst);
                let _alive = Alive(live);
                std::future::pending::<()>().await;
                Ok(ProbeResult::healthy())
            }
        });
        ProbeRegistration::new(name, probe).timeout(Duration::from_millis(20))
    }

    /// Waves of 64 concurrent requests for the ready tier, for `secs`
    /// seconds: in two waves of three every request gives up after 1 to
    /// 5 ms, so the flight loses its last waiter well before its 20 ms
    /// deadline and the next wave arrives while it is being dropped; in
    /// the third they wait for the deadline.
    async fn hammer(reg: &HealthRegistry, secs: u64) {
        let until = Instant::now() + Duration::from_secs(secs);
        let mut wave = 0u64;
        while Instant::now() < until {
            wave += 1;
            let requests = (0..64u64).map(|i| {
                let patience = match wave % 3 {
                    0 => Duration::from_millis(30),
                    _ => Duration::from_millis(1 + i % 5),
                };
                tokio::time::timeout(patience, reg.check(Tag::Ready))
            });
            join_all(requests).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_hung_probe_never_has_two_executions_alive() {
        let reg = HealthRegistry::new();
        let live = Arc::new(Live::default());
        reg.add(hung("hung", &live)).unwrap();
        hammer(&reg, 3).await;
        assert!(live.started.load(Ordering::SeqCst) > 20, "it ran");
        assert_eq!(live.peak.load(Ordering::SeqCst), 1);
    }

    /// Two peers failing `database`, as a fake cluster; this node's
    /// published verdicts.
    #[derive(Default)]
    struct Herd {
        published: std::sync::Mutex<Vec<bool>>,
    }

    impl crate::shared::SharedVerdicts for Herd {
        fn publish(&self, _probe: &str, failing: bool) {
            self.published.lock().unwrap().push(failing);
        }

        fn tally(&self, _probe: &str) -> Option<crate::shared::Tally> {
            let own = self.published.lock().unwrap().last() == Some(&true);
            Some(crate::shared::Tally {
                failing: 2 + u32::from(own),
                reporting: 3,
            })
        }
    }

    /// BE-HLTH-006: a run that reaches its deadline is finished once,
    /// whoever notices the deadline first: the flight on the probe thread,
    /// or a waiter on its own runtime, whose timer may fire first. So a
    /// hung shared dependency's timeout is published and compared at every
    /// run, and every answer of a shared outage is the opened one, never
    /// the raw `timed out` of a waiter that won the race.
    #[tokio::test(flavor = "current_thread")]
    async fn a_run_at_its_deadline_is_finished_once_whoever_notices_first() {
        let reg = HealthRegistry::new();
        let herd = Arc::new(Herd::default());
        reg.set_shared_verdicts(herd.clone());
        let live = Arc::new(Live::default());
        reg.add(hung("database", &live).shared()).unwrap();
        every_answer_opened(&reg, &herd, 40).await;
    }

    /// `rounds` ready checks, each answered with the shared outage's
    /// opened entry, never a raw `timed out`; the verdict published once.
    async fn every_answer_opened(reg: &HealthRegistry, herd: &Herd, rounds: usize) {
        for round in 0..rounds {
            let report = reg.check(Tag::Ready).await;
            let e = &report.entries[0];
            assert_eq!(
                (e.status, e.description.as_deref()),
                (
                    crate::spec::HealthStatus::Degraded,
                    Some("failing on 3 of 3 nodes")
                ),
                "round {round}"
            );
        }
        assert_eq!(*herd.published.lock().unwrap(), [true], "published once");
    }

    /// A request that finds the last flight abandoned but its execution
    /// not yet dropped (the probe thread is blocked: here by the drop
    /// itself), so that no run can start within its deadline, answers a
    /// timeout judged like a run's: the shared outage's opened entry, not
    /// a bare `timed out`.
    #[tokio::test(flavor = "current_thread")]
    async fn a_request_that_cannot_start_a_run_in_time_gets_a_judged_timeout() {
        struct SlowDrop;
        impl Drop for SlowDrop {
            fn drop(&mut self) {
                std::thread::sleep(Duration::from_millis(300));
            }
        }
        let reg = HealthRegistry::new();
        let herd = Arc::new(Herd::default());
        reg.set_shared_verdicts(herd.clone());
        let probe = from_fn(|| async {
            let _slow = SlowDrop;
            std::future::pending::<()>().await;
            Ok(ProbeResult::healthy())
        });
        let registration = ProbeRegistration::new("database", probe)
            .timeout(Duration::from_millis(20))
            .shared();
        reg.add(registration).unwrap();
        // The first round's flight is dropped after its deadline, for
        // 300 ms; the second waits for that and gives up at its own.
        every_answer_opened(&reg, &herd, 3).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_in_flight_bound_counts_an_execution_until_its_future_is_dropped() {
        let reg = HealthRegistry::builder().max_in_flight(1).build();
        let live = Arc::new(Live::default());
        reg.add_all([hung("a", &live), hung("b", &live), hung("c", &live)])
            .unwrap();
        hammer(&reg, 3).await;
        assert!(live.started.load(Ordering::SeqCst) > 20, "they ran");
        assert_eq!(live.peak.load(Ordering::SeqCst), 1);
    }
}

/// BE-HLTH-006: a check that blocks its thread in its first poll, past its
/// deadline. Nothing can interrupt the poll, but a request that waits on
/// the run ends it at the deadline, once for all: its timeout goes through
/// the threshold and the log like any failed run, and the late result of
/// the poll counts for nothing.
mod blocked_first_poll {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use crate::prelude::{
        HealthRegistry, HealthStatus, ProbeRegistration, ProbeResult, Tag, from_fn,
    };

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_waiter_ends_the_run_at_its_deadline_through_the_threshold() {
        let reg = HealthRegistry::builder().probes_on_caller_runtime().build();
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        // The first run blocks its thread for 600 ms, then says healthy;
        // every later run fails at once.
        let probe = from_fn(move || {
            let call = counted.fetch_add(1, Ordering::SeqCst);
            async move {
                if call == 0 {
                    std::thread::sleep(Duration::from_millis(600));
                    return Ok(ProbeResult::healthy());
                }
                Ok(ProbeResult::unhealthy("down"))
            }
        });
        let registration = ProbeRegistration::new("legacy", probe)
            .timeout(Duration::from_millis(100))
            .failure_threshold(2);
        reg.add(registration).unwrap();

        let claimer = tokio::spawn({
            let reg = reg.clone();
            async move { reg.check(Tag::Ready).await }
        });
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while calls.load(Ordering::SeqCst) == 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the run never started"
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let seen = |report: &crate::report::HealthReport| {
            let e = &report.entries[0];
            (e.status, e.description.as_deref().map(str::to_owned))
        };
        // The timeout is the threshold's first failure, held back: not a
        // bare `timed out` that skips the threshold.
        let held = (HealthStatus::Healthy, Some("1 of 2 failures".to_owned()));
        let waiter = reg.check(Tag::Ready).await;
        assert_eq!(seen(&waiter), held);
        // The poll, when it returns, answers with the run's entry.
        let claimed = claimer.await.unwrap();
        assert_eq!(seen(&claimed), held);
        // Its late "healthy" did not reset the count: the next failure is
        // the second in a row.
        let next = reg.check(Tag::Ready).await;
        assert_eq!(
            seen(&next),
            (HealthStatus::Unhealthy, Some("down".to_owned()))
        );
        assert_eq!(calls.load(Ordering::SeqCst), 2, "one run each");
    }
}
