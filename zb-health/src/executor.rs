//! Runs a tier: every probe concurrently, each under its deadline and a
//! panic guard, within the registry's in-flight bound (AT-2, AT-3, AT-4,
//! BE-HLTH-006).

use std::time::Duration;

use tokio::time::Instant;

use futures_util::future::join_all;
use zb_health_spec::Tag;

use crate::registry::HealthRegistry;
use crate::report::HealthReport;

impl HealthRegistry {
    /// Runs every probe of `tier` and reports the result.
    ///
    /// The probes run concurrently on the calling task, so the tier takes
    /// as long as its slowest probe, never the sum. A probe that misses its
    /// deadline is dropped, which cancels it, so hung calls cannot pile up.
    /// Concurrent requests for one probe share one execution, and a probe
    /// may be cached or run in the background (see [`crate::policy`]).
    /// The `live` tier carries no probes (ZB-1.3) and is always `Healthy`.
    pub async fn check(&self, tier: Tag) -> HealthReport {
        let Some(table) = self.table(tier) else {
            return HealthReport::new(tier, Vec::new(), Duration::ZERO);
        };
        let started = Instant::now();
        // Each entry comes through the probe's execution policy: a shared
        // flight (single-flight), a cached or a background result.
        let entries = join_all(table.iter().map(|probe| self.probe_entry(probe))).await;
        HealthReport::new(tier, entries, started.elapsed())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    use crate::{
        EntryOutcome, FailureStatus, HealthRegistry, HealthStatus, ProbeRegistration, ProbeResult,
        Rule, Tag, TagSet, canonical_json, from_fn,
    };

    fn ok(name: &'static str, status: HealthStatus) -> ProbeRegistration {
        ProbeRegistration::new(
            name,
            from_fn(move || async move { Ok(ProbeResult::new(status)) }),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn empty_tier_is_healthy_with_no_entries() {
        let report = HealthRegistry::new().check(Tag::Ready).await;
        assert_eq!(report.status, HealthStatus::Healthy);
        assert!(report.entries.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn tier_status_is_the_worst_entry_in_registration_order() {
        let reg = HealthRegistry::new();
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
        let reg = HealthRegistry::new();
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
        let reg = HealthRegistry::new();
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
        let reg = HealthRegistry::new();
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
        let reg = HealthRegistry::new();
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
        let reg = HealthRegistry::new();
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
        let reg = HealthRegistry::new();
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
        let reg = HealthRegistry::new();
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
        let reg = HealthRegistry::builder().max_in_flight(2).build();
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
        let reg = HealthRegistry::new();
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
