//! Execution policy across threads, runtimes and a real socket
//! (BE-HLTH-006): single-flight between actix workers and between OS
//! threads with their own runtimes, and blocking probes on tokio's
//! blocking pool. The paused-time tests (cache, background probes, a hung
//! probe under 64 requests) are unit tests of `zb_health::policy`.

mod support;

use std::collections::HashSet;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::task::Poll;
use std::thread::{JoinHandle, ThreadId};
use std::time::Duration;

use actix_web::dev::Service;
use actix_web::web;
use tokio::sync::watch;
use tokio::time::Instant;
use zb_health::prelude::{
    HealthRegistry, HealthStatus, ProbeRegistration, ProbeResult, Tag, ZbHealth, from_fn,
};
use zb_health::probe::from_blocking_fn;
use zb_health::report::{EntryOutcome, HealthReport};

/// A probe that counts its executions and answers once `release` is true.
fn gated(name: &'static str) -> (ProbeRegistration, Arc<AtomicUsize>, watch::Sender<bool>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let (release, rx) = watch::channel(false);
    let counter = runs.clone();
    let probe = from_fn(move || {
        let (counter, mut rx) = (counter.clone(), rx.clone());
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            rx.wait_for(|open| *open).await?;
            Ok(ProbeResult::healthy())
        }
    });
    let registration = ProbeRegistration::new(name, probe).timeout(Duration::from_secs(5));
    (registration, runs, release)
}

/// Waits until `condition` holds, failing after a generous deadline.
fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Polls `fut` once, so it has joined whatever it joins, and hands it back.
async fn poll_once<F: Future>(fut: &mut std::pin::Pin<&mut F>) {
    std::future::poll_fn(|cx| {
        assert!(fut.as_mut().poll(cx).is_pending());
        Poll::Ready(())
    })
    .await;
}

fn current_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Like two actix workers: a check of `ready` on a thread with its own
/// runtime, once it has started its run (`runs` is 1), and a second one on
/// another, once it waits for that run.
fn two_checks_on_two_threads(
    reg: &HealthRegistry,
    runs: &AtomicUsize,
) -> (JoinHandle<HealthReport>, JoinHandle<HealthReport>) {
    let first = std::thread::spawn({
        let reg = reg.clone();
        move || current_thread_runtime().block_on(reg.check(Tag::Ready))
    });
    wait_until("the first run to start", || {
        runs.load(Ordering::SeqCst) == 1
    });
    let (joined_tx, joined_rx) = mpsc::channel();
    let second = std::thread::spawn({
        let reg = reg.clone();
        move || {
            current_thread_runtime().block_on(async move {
                let mut check = pin!(reg.check(Tag::Ready));
                poll_once(&mut check).await;
                joined_tx.send(()).unwrap();
                check.await
            })
        }
    });
    joined_rx.recv().unwrap();
    (first, second)
}

#[test]
fn two_threads_with_their_own_runtimes_share_one_execution() {
    // Like two actix workers: each thread runs its own current-thread
    // runtime; the registry is the only thing they share.
    let reg = HealthRegistry::new();
    let (registration, runs, release) = gated("db");
    reg.add(registration).unwrap();

    let (first, second) = two_checks_on_two_threads(&reg, &runs);
    assert_eq!(waiting(&reg, "db"), 2);
    release.send(true).unwrap();
    for report in [first.join().unwrap(), second.join().unwrap()] {
        assert_eq!(report.status, HealthStatus::Healthy);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// A probe whose check blocks its thread (synchronous code in an `async`
/// check) until `release` says, then answers at once, or after a timer
/// with `then_wait`; counts its executions.
fn blocks_its_first_poll(
    name: &'static str,
    then_wait: bool,
) -> (ProbeRegistration, Arc<AtomicUsize>, mpsc::Sender<()>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let (release, rx) = mpsc::channel::<()>();
    let rx = Arc::new(Mutex::new(rx));
    let counter = runs.clone();
    let probe = from_fn(move || {
        let (counter, rx) = (counter.clone(), rx.clone());
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            let _ = rx.lock().unwrap().recv_timeout(Duration::from_secs(10));
            if then_wait {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok(ProbeResult::healthy())
        }
    });
    (ProbeRegistration::new(name, probe), runs, release)
}

/// A run's first poll takes no timer and no shared future (BE-HLTH-006),
/// but it is still one execution: a request from another thread that
/// arrives while the first poll blocks its thread waits for that run's
/// result (handed over at its end, or its flight if it then waits) and
/// never starts a second one.
#[test]
fn a_request_during_a_blocked_first_poll_shares_its_run() {
    for then_wait in [false, true] {
        let reg = HealthRegistry::new();
        let (registration, runs, release) = blocks_its_first_poll("db", then_wait);
        reg.add(registration).unwrap();
        let (first, second) = two_checks_on_two_threads(&reg, &runs);
        assert_eq!(
            waiting(&reg, "db"),
            1,
            "the second request waits on the first poll"
        );
        release.send(()).unwrap();
        for report in [first.join().unwrap(), second.join().unwrap()] {
            assert_eq!(
                report.status,
                HealthStatus::Healthy,
                "then_wait: {then_wait}"
            );
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1, "then_wait: {then_wait}");
        assert!(reg.in_flight().is_empty());
    }
}

/// A request that waits on another's blocked first poll keeps its own
/// deadline: it answers `timed out` while that poll still blocks.
#[test]
fn a_request_during_a_blocked_first_poll_answers_at_its_deadline() {
    let reg = HealthRegistry::new();
    let (registration, runs, release) = blocks_its_first_poll("db", false);
    reg.add(registration.timeout(Duration::from_millis(200)))
        .unwrap();
    let first = std::thread::spawn({
        let reg = reg.clone();
        move || current_thread_runtime().block_on(reg.check(Tag::Ready))
    });
    wait_until("the first poll to start", || {
        runs.load(Ordering::SeqCst) == 1
    });
    let report = current_thread_runtime().block_on(reg.check(Tag::Ready));
    assert!(!first.is_finished(), "the first poll still blocks");
    assert_eq!(report.status, HealthStatus::Unhealthy);
    assert_eq!(report.entries[0].outcome, EntryOutcome::TimedOut);
    release.send(()).unwrap();
    // The waiter ended the run at its deadline; the request that blocked
    // answers with that entry, past the deadline only because nothing can
    // interrupt a thread, and its late result counts for nothing.
    let blocked = first.join().unwrap();
    assert_eq!(blocked.entries[0].outcome, EntryOutcome::TimedOut);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[actix_web::test]
async fn concurrent_http_requests_on_two_workers_cause_one_execution() {
    const CLIENTS: usize = 32;
    let reg = HealthRegistry::new();
    let (registration, runs, release) = gated("db");
    reg.add(registration).unwrap();
    let endpoints = ZbHealth::new(reg.clone()).build().unwrap();
    // The worker threads that served a request, to show both took part.
    let workers = Arc::new(Mutex::new(HashSet::new()));
    let seen = workers.clone();
    let server = support::serve_on_workers(2, move |c| {
        let seen = seen.clone();
        c.service(
            web::scope("")
                .wrap_fn(move |req, srv| {
                    seen.lock().unwrap().insert(std::thread::current().id());
                    srv.call(req)
                })
                .service(endpoints.clone()),
        );
    });
    let addr = server.addr;

    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| tokio::spawn(support::request(addr, "GET", "/health/ready")))
        .collect();
    // Every request is waiting on the one execution before it may end.
    let deadline = Instant::now() + Duration::from_secs(10);
    while waiting(&reg, "db") < CLIENTS {
        assert!(
            Instant::now() < deadline,
            "only {} waiting",
            waiting(&reg, "db")
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    release.send(true).unwrap();
    for client in clients {
        let wire = client.await.unwrap();
        assert_eq!(wire.status, 200);
        assert_eq!(wire.json()["status"], "Healthy");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(workers.lock().unwrap().len(), 2, "both workers served");
}

/// A blocking probe that records its thread and blocks until released.
struct Blocking {
    calls: AtomicUsize,
    thread: Mutex<Option<ThreadId>>,
    release: Mutex<Option<mpsc::Receiver<()>>>,
}

#[tokio::test]
async fn a_blocking_probe_runs_off_the_caller_thread_and_never_twice_at_once() {
    let (release_tx, release_rx) = mpsc::channel();
    let state = Arc::new(Blocking {
        calls: AtomicUsize::new(0),
        thread: Mutex::new(None),
        release: Mutex::new(Some(release_rx)),
    });
    let s = state.clone();
    let probe = from_blocking_fn(move || {
        s.calls.fetch_add(1, Ordering::SeqCst);
        *s.thread.lock().unwrap() = Some(std::thread::current().id());
        // The first call blocks until released; later ones return at once.
        if let Some(rx) = s.release.lock().unwrap().take() {
            rx.recv().unwrap();
        }
        Ok(ProbeResult::healthy())
    });
    let reg = HealthRegistry::new();
    reg.add(ProbeRegistration::new("sync-driver", probe).timeout(Duration::from_millis(50)))
        .unwrap();

    // The call is stuck: the request is answered at the deadline anyway.
    let first = reg.check(Tag::Ready).await;
    assert_eq!(first.entries[0].outcome, EntryOutcome::TimedOut);
    assert_ne!(
        *state.thread.lock().unwrap(),
        Some(std::thread::current().id()),
        "ran on the caller's thread"
    );
    // The thread runs on; the next request joins it instead of calling again.
    let second = reg.check(Tag::Ready).await;
    assert_eq!(second.entries[0].outcome, EntryOutcome::TimedOut);
    assert_eq!(state.calls.load(Ordering::SeqCst), 1);

    // Once released, the stuck call ends and a new request calls afresh.
    release_tx.send(()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let report = reg.check(Tag::Ready).await;
        if report.status == HealthStatus::Healthy {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the blocking call never returned"
        );
    }
    assert!(state.calls.load(Ordering::SeqCst) <= 2);
}

#[tokio::test]
async fn a_panicking_blocking_probe_fails_only_its_entry() {
    let reg = HealthRegistry::new();
    reg.add(ProbeRegistration::new(
        "sync-driver",
        from_blocking_fn(|| panic!("secret blocking panic")),
    ))
    .unwrap();
    let report = reg.check(Tag::Ready).await;
    let e = &report.entries[0];
    assert_eq!(
        (e.status, e.outcome),
        (HealthStatus::Unhealthy, EntryOutcome::Panicked)
    );
    assert_eq!(e.description.as_deref(), Some("check panicked"));
}

/// Requests waiting on `name`'s execution in flight (0 with none).
fn waiting(registry: &HealthRegistry, name: &str) -> usize {
    registry
        .in_flight()
        .iter()
        .find(|f| &*f.name == name)
        .map_or(0, |f| f.waiting)
}

/// Hysteresis over a real socket (BE-HLTH-006, R20): one failed period
/// keeps `/health/ready` at 200 with the entry saying so; the second period
/// is the outage, 503; two healthy periods bring it back. The threshold
/// counts periods (1 s here, from a 2 s detection time), not requests: more
/// requests within a period count for nothing.
#[actix_web::test]
async fn a_failure_threshold_keeps_the_ready_tier_up_through_a_blip() {
    let reg = HealthRegistry::builder()
        .detection_time(Duration::from_secs(2))
        .build();
    let down = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d = down.clone();
    let probe = from_fn(move || {
        let down = d.load(Ordering::SeqCst);
        async move {
            if down {
                Err("connection refused by 10.0.0.7".into())
            } else {
                Ok(ProbeResult::healthy())
            }
        }
    });
    reg.add(
        ProbeRegistration::new("db", probe)
            .failure_threshold(2)
            .success_threshold(2),
    )
    .unwrap();
    let server = support::serve(ZbHealth::new(reg).build().unwrap());
    let get = || support::request(server.addr, "GET", "/health/ready");
    let description = |body: &serde_json::Value| body["entries"]["db"]["description"].clone();
    let next_period = || tokio::time::sleep(Duration::from_secs(1));
    assert_eq!(get().await.status, 200);
    down.store(true, Ordering::SeqCst);
    for _ in 0..3 {
        let held = get().await;
        assert_eq!(held.status, 200);
        let body = held.json();
        assert_eq!(body["entries"]["db"]["status"], "Healthy");
        assert_eq!(description(&body), "1 of 2 failures");
    }
    next_period().await;
    let out = get().await;
    assert_eq!(out.status, 503);
    assert_eq!(description(&out.json()), "check failed");
    down.store(false, Ordering::SeqCst);
    for _ in 0..3 {
        let recovering = get().await;
        assert_eq!(recovering.status, 503);
        assert_eq!(description(&recovering.json()), "1 of 2 successes");
    }
    next_period().await;
    assert_eq!(get().await.status, 200);
}
