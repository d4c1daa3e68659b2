//! A `#[zb_health(blocking = true)]` probe over a real socket
//! (BE-HLTH-006): its call runs on tokio's blocking pool, not on the actix
//! worker; the deadline answers a request while the call hangs, no second
//! call starts meanwhile, and once the call returns the probe is healthy.

mod support;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use support::{Wire, request, serve};
use tokio::sync::mpsc as tokio_mpsc;
use zb_health::prelude::{
    BlockingProbe, HealthRegistry, ProbeOutcome, ProbeResult, ZbHealthProbe, map_zb_health,
    zb_health,
};

/// A synchronous driver whose first call hangs until the test releases it.
#[zb_health(name = "legacy-driver", tags = [ready], timeout = "200ms", blocking = true)]
struct LegacyDriver {
    calls: Arc<AtomicUsize>,
    /// One message per call, sent when it starts.
    entered: tokio_mpsc::UnboundedSender<()>,
    /// One message per call, sent just before it returns.
    returning: tokio_mpsc::UnboundedSender<()>,
    /// Taken by the first call, which waits on it; later calls find none.
    release: Mutex<Option<mpsc::Receiver<()>>>,
}

impl BlockingProbe for LegacyDriver {
    fn check(&self) -> ProbeOutcome {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let _ = self.entered.send(());
        let release = self.release.lock().unwrap().take();
        // A failed test drops the sender, so the hung call ends with it.
        let released = release.map_or(Ok(()), |r| r.recv());
        let _ = self.returning.send(());
        released?;
        Ok(ProbeResult::healthy())
    }
}

/// `f`, or a panic naming `what` if it takes longer than a generous bound.
async fn within<F: Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// The ready tier answered 503 with the probe's entry timed out.
fn assert_timed_out(w: &Wire) {
    assert_eq!(w.status, 503);
    let entry = &w.json()["entries"]["legacy-driver"];
    assert_eq!(entry["status"], "Unhealthy");
    assert_eq!(entry["description"], "timed out after 200 ms");
}

#[actix_web::test]
async fn a_blocking_probe_hangs_on_the_blocking_pool_bounded_by_its_deadline() {
    let calls = Arc::new(AtomicUsize::new(0));
    let (entered_tx, mut entered) = tokio_mpsc::unbounded_channel();
    let (returning_tx, mut returning) = tokio_mpsc::unbounded_channel();
    let (release, release_rx) = mpsc::channel();
    let reg = HealthRegistry::new();
    let driver = LegacyDriver {
        calls: calls.clone(),
        entered: entered_tx,
        returning: returning_tx,
        release: Mutex::new(Some(release_rx)),
    };
    reg.add(driver.registration()).unwrap();
    // One worker: were the call on it, nothing else could be answered.
    let server = serve(map_zb_health(reg));
    let addr = server.addr;

    // (a) The first request's call starts and hangs...
    let started = Instant::now();
    let first = tokio::spawn(request(addr, "GET", "/health/ready"));
    within("the blocking call to start", entered.recv()).await;
    // ...while the one worker still answers other requests...
    let live = within("/healthz", request(addr, "GET", "/healthz")).await;
    assert_eq!(live.status, 200);
    // ...and the request is answered at its deadline, not before, with
    // the call still hanging.
    let first = within("the first /health/ready", first).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_timed_out(&first);

    // (b) Requests during the hang wait for that call; none calls again.
    let (r1, r2, r3) = within("three /health/ready", async {
        tokio::join!(
            request(addr, "GET", "/health/ready"),
            request(addr, "GET", "/health/ready"),
            request(addr, "GET", "/health/ready"),
        )
    })
    .await;
    for r in [&r1, &r2, &r3] {
        assert_timed_out(r);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(returning.try_recv().is_err(), "the call is still hanging");

    // (c) Released, the call returns, and the next request is healthy.
    release.send(()).unwrap();
    within("the blocking call to return", returning.recv()).await;
    let after = within(
        "/health/ready after release",
        request(addr, "GET", "/health/ready"),
    )
    .await;
    assert_eq!(after.status, 200);
    assert_eq!(
        after.json()["entries"]["legacy-driver"]["status"],
        "Healthy"
    );
    // It joined the returning call or made one fresh call, never more.
    assert!(calls.load(Ordering::SeqCst) <= 2);
}
