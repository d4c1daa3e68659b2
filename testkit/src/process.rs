//! Process tests of an example service: its real binary as a child process,
//! talked to over real sockets on 127.0.0.1, every wait bounded by a
//! deadline and ended by a condition, never by a fixed sleep.
//!
//! An example's tests pass their own binary's path,
//! `env!("CARGO_BIN_EXE_<name>")`, which Cargo sets for integration tests
//! of the package that owns the binary.
//!
//! Everything here blocks (std sockets and threads): a test is a plain
//! `#[test]`, and nothing in the test process competes with the service
//! for a runtime.

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::http::{Response, request};

/// The deadline for a node to start listening, and for most conditions:
/// generous, because a loaded 2-core machine may be compiling next door.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// A `DRAIN_DELAY_MS` for a test that keeps a service draining while it
/// looks, then ends the drain with a second SIGTERM: 25 s, the longest a
/// manifest's 30 s termination grace period admits (rule R18 refuses a
/// longer one at start) while leaving 5 s for in-flight requests.
pub const LONG_DRAIN_DELAY_MS: &str = "25000";

/// A TCP port that nobody is bound to right now, on 127.0.0.1 or on
/// every interface (a child may be started with `HOST=0.0.0.0`).
///
/// It comes from below the kernel's ephemeral range, never from it: a port
/// the kernel handed out and took back (binding port 0) can be handed out
/// again a moment later as the local port of any outgoing connection, and
/// a test suite makes thousands of those, so a child binding it later
/// could fail with `EADDRINUSE`.
pub fn free_port() -> u16 {
    pick_port(|port| TcpListener::bind(("0.0.0.0", port)).is_ok())
}

/// A UDP address on 127.0.0.1 that nobody is bound to right now: a gossip
/// address. From the same range as [`free_port`], for the same reason.
pub fn free_udp_addr() -> SocketAddr {
    let port = pick_port(|port| UdpSocket::bind(("127.0.0.1", port)).is_ok());
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// The next port of this process's walk through the ports below the
/// ephemeral range that `free` accepts. Each call gets a port no earlier
/// call of this process got (until the walk wraps); the walk starts at an
/// offset from the process id, so test binaries run one after another do
/// not start on the ports the last one's children may still hold.
fn pick_port(free: impl Fn(u16) -> bool) -> u16 {
    const LOWEST: u16 = 10_000;
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let ephemeral_start = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .filter(|start| *start > LOWEST + 1_000)
        .unwrap_or(32_768);
    let span = usize::from(ephemeral_start - LOWEST);
    let offset = (std::process::id() as usize).wrapping_mul(7_919) % span;
    for _ in 0..span {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = LOWEST + u16::try_from((offset + n) % span).expect("below the range");
        if free(port) {
            return port;
        }
    }
    panic!("no free port in {LOWEST}..{ephemeral_start}")
}

/// Polls `check` every 50 ms until it answers `Some`, for at most
/// `deadline`; panics naming `what` after that.
pub fn eventually<T>(what: &str, deadline: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            start.elapsed() < deadline,
            "timed out after {deadline:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// How to start a service binary: its path and environment.
#[derive(Debug, Clone)]
pub struct Launch {
    bin: PathBuf,
    env: BTreeMap<String, String>,
}

impl Launch {
    /// The binary at `bin` (`env!("CARGO_BIN_EXE_<name>")`).
    pub fn new(bin: impl Into<PathBuf>) -> Self {
        Self {
            bin: bin.into(),
            env: BTreeMap::new(),
        }
    }

    /// Sets an environment variable of the child (overriding the free
    /// ports and the data directory [`start`](Self::start) picks).
    #[must_use]
    pub fn env(mut self, name: &str, value: impl Into<String>) -> Self {
        self.env.insert(name.to_owned(), value.into());
        self
    }

    /// Starts the binary with fresh free ports (`PORT`, `MANAGEMENT_PORT`,
    /// `GRPC_PORT`), a fresh gossip address (`CLUSTER_ADDR`) and a fresh
    /// `DATA_DIR`, unless set with [`env`](Self::env); its output goes to a
    /// log file that a failing test prints. Does not wait: see
    /// [`ServiceProcess::wait_listening`].
    pub fn start(&self) -> ServiceProcess {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = self
            .bin
            .file_name()
            .map_or_else(|| "service".into(), |n| n.to_string_lossy().into_owned());
        let root =
            std::env::temp_dir().join(format!("zb-health-proc-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("a temp dir");
        let mut env = self.env.clone();
        let mut default = |key: &str, value: String| {
            env.entry(key.to_owned()).or_insert(value);
        };
        default("PORT", free_port().to_string());
        default("MANAGEMENT_PORT", free_port().to_string());
        default("GRPC_PORT", free_port().to_string());
        default("CLUSTER_ADDR", free_udp_addr().to_string());
        default("DATA_DIR", root.join("data").display().to_string());
        let port = |key: &str| -> u16 { env[key].parse().expect("a port number") };
        let (port_, management, grpc) = (port("PORT"), port("MANAGEMENT_PORT"), port("GRPC_PORT"));
        let gossip = env["CLUSTER_ADDR"].clone();
        let data_dir = PathBuf::from(&env["DATA_DIR"]);
        let log = root.join("output.log");
        let out = std::fs::File::create(&log).expect("a log file");
        let err = out.try_clone().expect("a second handle on the log file");
        let child = Command::new(&self.bin)
            .envs(&env)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.bin.display()));
        ServiceProcess {
            child,
            root,
            data_dir,
            log,
            app: SocketAddr::from(([127, 0, 0, 1], port_)),
            management: SocketAddr::from(([127, 0, 0, 1], management)),
            grpc_port: grpc,
            gossip,
            started: Instant::now(),
        }
    }
}

/// A running service binary; killed and its temp dir removed on drop
/// (also when the test panics), printing its output if the test failed.
#[derive(Debug)]
pub struct ServiceProcess {
    child: Child,
    root: PathBuf,
    /// The child's `DATA_DIR`.
    pub data_dir: PathBuf,
    log: PathBuf,
    /// The application server's address.
    pub app: SocketAddr,
    /// The management server's address.
    pub management: SocketAddr,
    /// The gRPC health port.
    pub grpc_port: u16,
    /// The gossip address (`CLUSTER_ADDR`).
    pub gossip: String,
    started: Instant,
}

impl ServiceProcess {
    /// The local addresses this process listens on with TCP, from
    /// `/proc/net/tcp` and `/proc/net/tcp6` (the sockets its descriptors
    /// hold): how a test sees *where* a server binds without sending it
    /// any traffic but to 127.0.0.1.
    pub fn tcp_listening(&self) -> Vec<SocketAddr> {
        let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .map(|fds| {
                fds.flatten()
                    .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                    .filter_map(|target| {
                        let t = target.to_string_lossy().into_owned();
                        t.strip_prefix("socket:[")?
                            .strip_suffix(']')
                            .map(str::to_owned)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut out = Vec::new();
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = std::fs::read_to_string(table).unwrap_or_default();
            for line in text.lines().skip(1) {
                let cols: Vec<&str> = line.split_whitespace().collect();
                // local_address, state (0A: LISTEN), …, inode (column 9).
                if cols.len() > 9
                    && cols[3] == "0A"
                    && inodes.iter().any(|i| i == cols[9])
                    && let Some(addr) = proc_net_addr(cols[1])
                {
                    out.push(addr);
                }
            }
        }
        out
    }

    /// Asserts that the application, management and gRPC ports all listen
    /// on `ip` (the `HOST` the child was given), and on nothing else.
    pub fn assert_ports_bound_to(&self, ip: std::net::IpAddr) {
        let listening = self.tcp_listening();
        for port in [self.app.port(), self.management.port(), self.grpc_port] {
            let bound: Vec<&SocketAddr> = listening.iter().filter(|a| a.port() == port).collect();
            assert!(
                !bound.is_empty() && bound.iter().all(|a| a.ip() == ip),
                "port {port} should listen on {ip} only; listening: {listening:?}"
            );
        }
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until both HTTP ports answer `GET /healthz` (any status), for
    /// at most [`PATIENCE`]; panics with the child's output if it exits or
    /// never answers.
    pub fn wait_listening(&mut self) -> &mut Self {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("the child's status") {
                panic!(
                    "the service exited with {status} before listening; output:\n{}",
                    self.output()
                );
            }
            let up = |addr| request(addr, "GET", "/healthz", "").is_ok();
            if up(self.app) && up(self.management) {
                return self;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "not listening after {PATIENCE:?}; output:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `GET path` on the application port; panics if there is no answer.
    pub fn get(&self, path: &str) -> Response {
        self.expect(request(self.app, "GET", path, ""), path)
    }

    /// `GET path` on the management port; panics if there is no answer.
    pub fn get_management(&self, path: &str) -> Response {
        self.expect(request(self.management, "GET", path, ""), path)
    }

    /// `POST path` with a JSON `body` on the application port; panics if
    /// there is no answer.
    pub fn post(&self, path: &str, body: &str) -> Response {
        self.expect(request(self.app, "POST", path, body), path)
    }

    /// `GET path` on the application port, `Err` when nobody answers (the
    /// service is starting or gone).
    ///
    /// # Errors
    ///
    /// The request failed.
    pub fn try_get(&self, path: &str) -> std::io::Result<Response> {
        request(self.app, "GET", path, "")
    }

    /// `GET path` on the management port, `Err` when nobody answers: the
    /// port whose bodies show the cluster addresses.
    ///
    /// # Errors
    ///
    /// The request failed.
    pub fn try_get_management(&self, path: &str) -> std::io::Result<Response> {
        request(self.management, "GET", path, "")
    }

    fn expect(&self, response: std::io::Result<Response>, path: &str) -> Response {
        response.unwrap_or_else(|e| panic!("{path}: {e}; output:\n{}", self.output()))
    }

    /// Polls `GET path` until it answers `status`, for at most `deadline`;
    /// returns that answer.
    pub fn until_status(&self, path: &str, status: u16, deadline: Duration) -> Response {
        eventually(&format!("{path} to answer {status}"), deadline, || {
            self.try_get(path).ok().filter(|r| r.status == status)
        })
    }

    /// Sends SIGTERM, as an orchestrator does to stop a pod.
    pub fn sigterm(&self) {
        // `kill(1)`: the workspace forbids `unsafe`, so no libc call here.
        let status = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("kill(1) runs");
        assert!(status.success(), "kill -TERM {} failed", self.pid());
    }

    /// Waits for the child to exit, for at most `deadline`.
    pub fn wait_exit(&mut self, deadline: Duration) -> ExitStatus {
        eventually("the service to exit", deadline, || {
            self.child.try_wait().expect("the child's status")
        })
    }

    /// Whether the child is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("the child's status").is_none()
    }

    /// Kills the child at once (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Everything the child printed so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// How long since the child was started.
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// The temp dir of this child (its log and default data directory).
    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Drop for ServiceProcess {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!(
                "--- output of the service on {} ---\n{}",
                self.app,
                self.output()
            );
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Starts `n` nodes of one cluster on loopback: each with its own ports and
/// gossip address, all with the same `CLUSTER_SEEDS` (every node's gossip
/// address). They start one after another, each once the previous one
/// listens, so node 0 is the oldest (its generation, the start time in
/// Unix ms, is the smallest), then node 1, and so on.
pub fn start_cluster(launch: &Launch, n: usize) -> Vec<ServiceProcess> {
    start_cluster_with(launch, n, |_, launch| launch)
}

/// [`start_cluster`] with each node's launch adjusted by `each` (its index
/// and the launch), e.g. a database URL of its own.
pub fn start_cluster_with(
    launch: &Launch,
    n: usize,
    each: impl Fn(usize, Launch) -> Launch,
) -> Vec<ServiceProcess> {
    let gossip: Vec<String> = (0..n).map(|_| free_udp_addr().to_string()).collect();
    let seeds = gossip.join(",");
    let mut nodes = Vec::with_capacity(n);
    for (i, addr) in gossip.iter().enumerate() {
        let mut node = each(i, launch.clone())
            .env("CLUSTER_ADDR", addr.clone())
            .env("CLUSTER_SEEDS", seeds.clone())
            .env("NODE_ID", format!("node-{i}"))
            .start();
        node.wait_listening();
        nodes.push(node);
    }
    nodes
}

/// Starts node `i` of `nodes` (a cluster of [`start_cluster`]) again on its
/// own ports and gossip address with the same `NODE_ID`: a new, younger
/// incarnation. The one it replaces is killed first if it still runs.
/// Waits until the new one listens.
pub fn restart_cluster_node(launch: &Launch, nodes: &mut [ServiceProcess], i: usize) {
    let seeds = nodes
        .iter()
        .map(|n| n.gossip.clone())
        .collect::<Vec<_>>()
        .join(",");
    let old = &mut nodes[i];
    old.kill();
    let again = launch
        .clone()
        .env("PORT", old.app.port().to_string())
        .env("MANAGEMENT_PORT", old.management.port().to_string())
        .env("GRPC_PORT", old.grpc_port.to_string())
        .env("CLUSTER_ADDR", old.gossip.clone())
        .env("CLUSTER_SEEDS", seeds)
        .env("NODE_ID", format!("node-{i}"))
        .start();
    *old = again;
    old.wait_listening();
}

/// Starts the service binary `bin` twice and asserts where it binds: with
/// `HOST=0.0.0.0` its application, management and gRPC ports listen on
/// every interface (a pod's kubelet connects to the pod IP), and without
/// `HOST` on 127.0.0.1 only. It reads the listening sockets; the only
/// traffic, a `GET /healthz`, goes to 127.0.0.1.
pub fn assert_host_binds_every_port(bin: impl Into<PathBuf>) {
    let bin = bin.into();
    let every = std::net::IpAddr::from([0, 0, 0, 0]);
    let loopback = std::net::IpAddr::from([127, 0, 0, 1]);
    for (host, ip) in [(Some("0.0.0.0"), every), (None, loopback)] {
        let mut launch = Launch::new(bin.clone());
        if let Some(host) = host {
            launch = launch.env("HOST", host);
        }
        let mut node = launch.start();
        node.wait_listening();
        eventually("the gRPC port listens", PATIENCE, || {
            node.tcp_listening()
                .iter()
                .any(|a| a.port() == node.grpc_port)
                .then_some(())
        });
        node.assert_ports_bound_to(ip);
        assert_eq!(node.get("/healthz").status, 200);
    }
}

/// `0100007F:1F90` (hex, the address in host byte order per 32-bit word) as
/// a socket address.
fn proc_net_addr(field: &str) -> Option<SocketAddr> {
    let (ip, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let words: Vec<u32> = (0..ip.len() / 8)
        .map(|i| u32::from_str_radix(&ip[i * 8..i * 8 + 8], 16))
        .collect::<Result<_, _>>()
        .ok()?;
    let ip: std::net::IpAddr = match words.as_slice() {
        [v4] => std::net::Ipv4Addr::from(v4.swap_bytes()).into(),
        [a, b, c, d] => {
            let mut bytes = [0u8; 16];
            for (i, w) in [a, b, c, d].into_iter().enumerate() {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
            }
            std::net::Ipv6Addr::from(bytes).into()
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod proc_net_tests {
    use super::proc_net_addr;

    #[test]
    fn proc_net_addresses_read_as_the_kernel_writes_them() {
        assert_eq!(
            proc_net_addr("0100007F:1F90").unwrap().to_string(),
            "127.0.0.1:8080"
        );
        assert_eq!(
            proc_net_addr("00000000:1F91").unwrap().to_string(),
            "0.0.0.0:8081"
        );
        assert_eq!(
            proc_net_addr("00000000000000000000000000000000:C383")
                .unwrap()
                .to_string(),
            "[::]:50051"
        );
    }
}
