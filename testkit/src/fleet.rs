//! A fleet of synthetic pods for the dashboard's tests and bench: `pods`
//! real [`HealthRegistry`]s in this process, each with its own listening
//! socket on 127.0.0.1 that answers `GET /health/history` (and its delta,
//! `?since=`) with the registry's own document, not 300 full services.
//!
//! Each pod has `probes` probes, the history on and its service named
//! `pod-NNN`; the first `unhealthy` pods fail their first probe (ready
//! answers 503), the next `degraded` ones report it `Degraded`. A driver
//! thread answers each pod's ready tier every `answer_every`, spread over
//! the period, as a kubelet would; at the start every ring is filled, so
//! the documents are as large as a long-running pod's. [`Fleet::hang`]
//! makes a pod accept connections and never answer: a pod that stopped
//! answering without closing its port.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::http::read_request_head;
use zb_health::prelude::{
    HealthRegistry, ProbeError, ProbeRegistration, ProbeResult, Tag, from_fn,
};
use zb_health::spec::Disclosure;
use zb_health::spec::history::Since;

/// What fleet to start.
#[derive(Debug, Clone)]
pub struct FleetSpec {
    pub pods: usize,
    pub probes: usize,
    /// The first this many pods fail their first probe.
    pub unhealthy: usize,
    /// The next this many report their first probe `Degraded`.
    pub degraded: usize,
    /// How often each pod's ready tier is answered.
    pub answer_every: Duration,
}

/// One synthetic pod.
pub struct Pod {
    pub addr: SocketAddr,
    pub name: String,
    pub registry: HealthRegistry,
    hang: Arc<AtomicBool>,
}

/// A running fleet; stopped on drop.
pub struct Fleet {
    pub pods: Vec<Arc<Pod>>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

/// The results each probe holds at the start: the history's sample ring.
const FILL: usize = 60;

impl Fleet {
    /// Starts the fleet: binds every socket, fills every ring, and starts
    /// the driver and the acceptor.
    pub fn start(spec: &FleetSpec) -> Self {
        let mut pods = Vec::with_capacity(spec.pods);
        let mut listeners = Vec::with_capacity(spec.pods);
        for i in 0..spec.pods {
            let registry = HealthRegistry::new();
            let status = if i < spec.unhealthy {
                Some(false)
            } else if i < spec.unhealthy + spec.degraded {
                Some(true)
            } else {
                None
            };
            let registrations: Vec<ProbeRegistration> = (0..spec.probes)
                .map(|p| {
                    let mode = if p == 0 { status } else { None };
                    let probe = from_fn(move || async move {
                        match mode {
                            Some(false) => Err(ProbeError::from("refused")),
                            Some(true) => Ok(ProbeResult::degraded("slow answers")),
                            None => Ok(ProbeResult::healthy().with_description("fine")),
                        }
                    });
                    ProbeRegistration::new(format!("probe-{p}"), probe)
                })
                .collect();
            registry.add_all(registrations).expect("the fleet's probes");
            registry.enable_history();
            let name = format!("pod-{i:03}");
            registry.set_service_name(name.as_str());
            let listener = TcpListener::bind("127.0.0.1:0").expect("a free port on 127.0.0.1");
            listener
                .set_nonblocking(true)
                .expect("a non-blocking listener");
            pods.push(Arc::new(Pod {
                addr: listener.local_addr().expect("its address"),
                name,
                registry,
                hang: Arc::new(AtomicBool::new(false)),
            }));
            listeners.push(listener);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            for pod in &pods {
                for _ in 0..FILL {
                    pod.registry.answer(Tag::Ready).await;
                }
            }
        });
        let stop = Arc::new(AtomicBool::new(false));
        let driver = {
            let (pods, stop, every) = (pods.clone(), Arc::clone(&stop), spec.answer_every);
            std::thread::spawn(move || drive(&runtime, &pods, &stop, every))
        };
        let acceptor = {
            let (pods, stop) = (pods.clone(), Arc::clone(&stop));
            std::thread::spawn(move || accept(&listeners, &pods, &stop))
        };
        Self {
            pods,
            stop,
            threads: vec![driver, acceptor],
        }
    }

    /// Every pod's history URL.
    pub fn urls(&self) -> Vec<String> {
        self.pods
            .iter()
            .map(|p| format!("http://{}/health/history", p.addr))
            .collect()
    }

    /// Pod `i` accepts connections from now on and never answers.
    pub fn hang(&self, i: usize) {
        self.pods[i].hang.store(true, Ordering::SeqCst);
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Answers one pod's ready tier after another, each every `every`.
fn drive(runtime: &tokio::runtime::Runtime, pods: &[Arc<Pod>], stop: &AtomicBool, every: Duration) {
    let step = every / u32::try_from(pods.len().max(1)).unwrap_or(u32::MAX);
    let mut next = Instant::now();
    for pod in pods.iter().cycle() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        runtime.block_on(pod.registry.answer(Tag::Ready));
        next += step;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
}

/// Accepts on every pod's socket; a thread per connection.
fn accept(listeners: &[TcpListener], pods: &[Arc<Pod>], stop: &Arc<AtomicBool>) {
    while !stop.load(Ordering::SeqCst) {
        let mut any = false;
        for (listener, pod) in listeners.iter().zip(pods) {
            match listener.accept() {
                Ok((stream, _)) => {
                    any = true;
                    let (pod, stop) = (Arc::clone(pod), Arc::clone(stop));
                    std::thread::spawn(move || answer(stream, &pod, &stop));
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(_) => {}
            }
        }
        if !any {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

fn answer(mut stream: TcpStream, pod: &Pod, stop: &AtomicBool) {
    let Some(head) = read_request_head(&mut stream) else {
        return;
    };
    if pod.hang.load(Ordering::SeqCst) {
        let mut chunk = [0u8; 64];
        // Holds the connection, unanswered, until the fleet stops or the
        // client gives up.
        let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
        while !stop.load(Ordering::SeqCst) {
            match stream.read(&mut chunk) {
                Ok(0) => return,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                _ => return,
            }
        }
        return;
    }
    let target = head.split(' ').nth(1).unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let (status, body) = match (path, Since::from_query(query)) {
        ("/health/history", Ok(since)) => (
            "200 OK",
            pod.registry
                .history_delta_json(Disclosure::Full, true, since.as_ref()),
        ),
        ("/health/history", Err(why)) => ("400 Bad Request", why),
        _ => ("404 Not Found", "not found".to_string()),
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes());
}
