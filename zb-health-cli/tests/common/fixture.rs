//! A tiny std HTTP server on 127.0.0.1 for the page and dashboard tests:
//! fixed bodies by path, and a [`FixtureServer::stop`] after which its
//! port refuses connections (a service that went away).

use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// One route: a path, its content type and its body.
pub type Route = (&'static str, &'static str, String);

/// A running fixture server; stopped on drop.
pub struct FixtureServer {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FixtureServer {
    /// Serves `routes` (any other path: 404) on a free port of 127.0.0.1.
    pub fn start(routes: Vec<Route>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port on 127.0.0.1");
        let addr = listener.local_addr().expect("its address");
        // Non-blocking accepts, so the loop sees the stop flag.
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let stop = Arc::new(AtomicBool::new(false));
        let routes = Arc::new(routes);
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let routes = Arc::clone(&routes);
                        // A thread each: Chromium opens sockets it may
                        // never send on, which must not hold the others.
                        std::thread::spawn(move || answer(stream, &routes));
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
            // The listener drops here: the port refuses from now on.
        });
        Self {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://ADDR/PATH` (`path` without its leading slash).
    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{path}", self.addr)
    }

    /// Stops accepting and closes the listening socket.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn answer(mut stream: TcpStream, routes: &[Route]) {
    let Some(head) = zb_health_testkit::http::read_request_head(&mut stream) else {
        return;
    };
    let target = head.split(' ').nth(1).unwrap_or("/");
    let path = target.split('?').next().unwrap_or("/");
    let (status, content_type, body) = routes
        .iter()
        .find(|(p, _, _)| *p == path)
        .map_or(("404 Not Found", "text/plain", "not found"), |(_, t, b)| {
            ("200 OK", *t, b.as_str())
        });
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes());
}
