//! Transition publishers against real HTTP receivers on 127.0.0.1
//! (`spec/observability.md`, transition publishers): grouped per window,
//! silent while the service starts or drains, retried on a 5xx, and a
//! receiver that hangs delays no answer and makes the queue drop (and
//! count) what does not fit.

mod support;

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{App, HttpResponse, HttpServer, web};
use serde_json::Value;
use zb_health::prelude::{HealthRegistry, Tag};
use zb_health::publish::WebhookPublisher;

/// How long a test waits for a condition before it fails.
const PATIENCE: Duration = Duration::from_secs(20);

/// A receiver that keeps every body it is sent and answers `status`.
struct Receiver {
    addr: SocketAddr,
    bodies: Arc<Mutex<Vec<Value>>>,
    attempts: Arc<AtomicUsize>,
}

fn receiver(status: u16) -> Receiver {
    let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
    let attempts = Arc::new(AtomicUsize::new(0));
    let code = Arc::new(AtomicU16::new(status));
    let (b, a) = (bodies.clone(), attempts.clone());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            let server = HttpServer::new(move || {
                let (b, a, code) = (b.clone(), a.clone(), code.clone());
                App::new().route(
                    "/hook",
                    web::post().to(move |body: web::Bytes| {
                        let (b, a, code) = (b.clone(), a.clone(), code.clone());
                        async move {
                            a.fetch_add(1, Ordering::SeqCst);
                            if let Ok(v) = serde_json::from_slice(&body) {
                                b.lock().unwrap().push(v);
                            }
                            let status =
                                actix_web::http::StatusCode::from_u16(code.load(Ordering::SeqCst))
                                    .unwrap();
                            HttpResponse::build(status).finish()
                        }
                    }),
                )
            })
            .workers(1)
            .bind(("127.0.0.1", 0))
            .unwrap();
            tx.send(server.addrs()[0]).unwrap();
            server.run().await.unwrap();
        });
    });
    Receiver {
        addr: rx.recv().unwrap(),
        bodies,
        attempts,
    }
}

/// A receiver that accepts connections and never answers.
fn hung_receiver() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    addr
}

/// A registry with one ready probe `db` that answers as `healthy` says.
fn registry() -> (HealthRegistry, Arc<AtomicBool>) {
    let (db, healthy) = support::switchable("db");
    let registry = HealthRegistry::new();
    registry.add(db).unwrap();
    (registry, healthy)
}

async fn until(what: &str, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < PATIENCE, "{what} within {PATIENCE:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transitions_reach_a_webhook_grouped_and_none_while_starting_or_draining() {
    let hook = receiver(200);
    let (registry, healthy) = registry();
    let gate = registry.lifecycle().startup_gate();
    registry.set_transition_window(Duration::from_millis(300));
    registry.add_transition_publisher(
        WebhookPublisher::new(&format!("http://{}/hook", hook.addr))
            .unwrap()
            .service("orders"),
    );
    // Starting: failures are no transitions to publish.
    for ok in [false, true, false] {
        healthy.store(ok, Ordering::SeqCst);
        registry.answer(Tag::Ready).await;
    }
    healthy.store(true, Ordering::SeqCst);
    gate.ready();
    registry.answer(Tag::Ready).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(
        hook.attempts.load(Ordering::SeqCst),
        0,
        "published while starting"
    );

    // Three changes inside one window: one message, counted.
    for ok in [false, true, false] {
        healthy.store(ok, Ordering::SeqCst);
        assert_eq!(registry.answer(Tag::Ready).await.status.is_serving(), ok);
    }
    until("one message", || !hook.bodies.lock().unwrap().is_empty()).await;
    let body = hook.bodies.lock().unwrap()[0].clone();
    assert_eq!(body["service"], "orders");
    let transitions = body["transitions"].as_array().unwrap();
    let of = |kind: &str, name: &str| {
        transitions
            .iter()
            .find(|t| t["kind"] == kind && t["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name} in {body}"))
            .clone()
    };
    let db = of("probe", "db");
    assert_eq!(
        (db["from"].as_str(), db["to"].as_str(), db["count"].as_u64()),
        (Some("Healthy"), Some("Unhealthy"), Some(3))
    );
    assert_eq!(db["reason"], "unhealthy");
    assert!(db["at"].as_str().unwrap().ends_with('Z'));
    let ready = of("tier", "ready");
    assert_eq!(
        (
            ready["from"].as_str(),
            ready["to"].as_str(),
            ready["count"].as_u64()
        ),
        (Some("Healthy"), Some("Unhealthy"), Some(3))
    );
    assert_eq!(ready["reason"], "failing");
    assert!(
        !body.to_string().contains("db unreachable"),
        "a description reached the webhook"
    );

    // Draining: nothing more.
    registry.lifecycle().begin_drain();
    healthy.store(true, Ordering::SeqCst);
    registry.answer(Tag::Ready).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(
        hook.bodies.lock().unwrap().len(),
        1,
        "published while draining"
    );
    assert_eq!(registry.dropped_transitions(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_webhook_delays_no_answer_and_what_does_not_fit_is_dropped_and_counted() {
    let (registry, healthy) = registry();
    // No window: the first transition goes out at once, and hangs.
    registry.set_transition_window(Duration::ZERO);
    registry.add_transition_publisher(
        WebhookPublisher::new(&format!("http://{}/hook", hung_receiver()))
            .unwrap()
            .retries(1, Duration::ZERO, Duration::from_secs(60)),
    );
    // Far more transitions than the queue holds, while the publisher
    // waits on a receiver that never answers: every answer still comes.
    // The publisher takes the first one before the rest arrive.
    healthy.store(false, Ordering::SeqCst);
    registry.answer(Tag::Ready).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    for i in 0..400 {
        healthy.store(i % 2 == 0, Ordering::SeqCst);
        let report = registry.answer(Tag::Ready).await;
        assert_eq!(report.status.is_serving(), i % 2 == 0);
    }
    assert!(registry.dropped_transitions() > 0, "nothing was dropped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5xx_is_retried_with_backoff_and_a_4xx_is_not() {
    for (status, attempts) in [(500, 3), (400, 1)] {
        let hook = receiver(status);
        let (registry, healthy) = registry();
        registry.set_transition_window(Duration::from_millis(10));
        registry.add_transition_publisher(
            WebhookPublisher::new(&format!("http://{}/hook", hook.addr))
                .unwrap()
                .retries(3, Duration::from_millis(50), Duration::from_secs(2)),
        );
        registry.answer(Tag::Ready).await;
        healthy.store(false, Ordering::SeqCst);
        registry.answer(Tag::Ready).await;
        until(&format!("{attempts} attempts on HTTP {status}"), || {
            hook.attempts.load(Ordering::SeqCst) >= attempts
        })
        .await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(
            hook.attempts.load(Ordering::SeqCst),
            attempts,
            "HTTP {status}"
        );
    }
}

#[test]
fn a_bad_webhook_url_is_refused_naming_the_variable() {
    let var = zb_health::publish::WEBHOOK_URL_VAR;
    let error = WebhookPublisher::from_lookup(|name| {
        (name == var).then(|| "https://hooks.example/x".to_owned())
    })
    .unwrap_err();
    assert_eq!(error.variable, "HEALTH_WEBHOOK_URL");
    assert!(error.reason.contains("http://"), "{}", error.reason);
    assert!(WebhookPublisher::from_lookup(|_| None).unwrap().is_none());
}

/// A blank `HEALTH_WEBHOOK_URL` (`X=` in a pod spec) is no setting, as
/// for every variable the library reads but the token: no publisher, and
/// no refusal at start.
#[test]
fn a_blank_webhook_variable_is_no_setting() {
    let var = zb_health::publish::WEBHOOK_URL_VAR;
    for blank in ["", "  "] {
        let publisher =
            WebhookPublisher::from_lookup(|name| (name == var).then(|| blank.to_owned()));
        assert!(publisher.unwrap().is_none(), "{blank:?}");
    }
}

/// A manifest's `observability.webhook` (here given to the wiring as the
/// generated `install` gives it) is installed with the service's name and
/// receives the transitions; a URL the reader would refuse, given in
/// code, stops the install with R15 and installs nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manifests_webhook_is_installed_and_a_bad_one_stops_the_install() {
    use zb_health::install::Settings;
    use zb_health::lifecycle::Drain;
    use zb_health::spec::Rule;

    let wiring = |url: String| {
        let mut settings = Settings::new("orders", Drain::new(Duration::from_secs(5)));
        settings.registry.detection_time = Some(Duration::from_secs(4));
        settings.webhook = Some(url);
        settings
    };
    let hook = receiver(200);
    let (other, _) = registry();
    let (registry, healthy) = registry();
    registry.set_transition_window(Duration::from_millis(100));
    let _installed = wiring(format!("http://{}/hook", hook.addr))
        .install(&registry, Vec::new(), [], [])
        .unwrap();
    registry.answer(Tag::Ready).await;
    healthy.store(false, Ordering::SeqCst);
    registry.answer(Tag::Ready).await;
    until("the manifest's webhook to receive a transition", || {
        !hook.bodies.lock().unwrap().is_empty()
    })
    .await;
    let body = hook.bodies.lock().unwrap()[0].clone();
    assert_eq!(body["service"], "orders");
    assert!(!body["transitions"].as_array().unwrap().is_empty());

    let error = wiring("https://hooks.example/x".to_owned())
        .install(&other, Vec::new(), [], [])
        .err()
        .expect("a bad webhook URL is refused");
    assert_eq!(error.rules(), [Rule::ValueType]);
    assert!(
        error.to_string().contains("observability.webhook"),
        "{error}"
    );
}
