//! The settings of an example service, from environment variables.
//!
//! The ports, the host and the drain are the library's own settings
//! (`HOST`, `PORT`, `MANAGEMENT_PORT`, `GRPC_PORT`, `DRAIN_DELAY_MS`: see
//! `zb_health::server::ZbHealthServer::from_env`); these are the example's:
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `DATA_DIR` | `<temp dir>/zb-health-<service>-<gossip port>` | Where the default SQLite file lives; per service and port, so local nodes never share a file. |
//! | `DATABASE_URL` | `sqlite://<DATA_DIR>/<service>.db?mode=rwc` | A sea-orm URL: `sqlite://…` or `postgres://…`. |
//! | `CLUSTER_ADDR` | `127.0.0.1:<Defaults::gossip_port>` | This node's chitchat gossip address (UDP). |
//! | `CLUSTER_SEEDS` | empty | Comma-separated gossip addresses of the cluster; empty: a single-node cluster. |
//! | `CLUSTER_ROLES` | empty | Comma-separated roles this node announces. |
//! | `NODE_ID` | `<service>-<gossip port>` | The node's name in gossip. |
//!
//! A malformed value is an error naming the variable, never silently the
//! default: a node that quietly binds another port is worse than one that
//! does not start.

use std::net::SocketAddr;
use std::path::PathBuf;

/// What a service's manifest and code supply as defaults.
#[derive(Debug, Clone)]
pub struct Defaults {
    /// The manifest's `service` (`Health::SERVICE`): names the data
    /// directory, the SQLite file, the node and the gossip cluster.
    pub service: &'static str,
    /// The gossip port when `CLUSTER_ADDR` is not set; one per service so
    /// the three examples can run side by side with no settings.
    pub gossip_port: u16,
}

/// The cluster part of [`Settings`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSettings {
    /// The cluster's name in gossip: nodes of different services never mix.
    pub cluster_id: String,
    /// This node's name (`NODE_ID`).
    pub node_id: String,
    /// This node's gossip address (`CLUSTER_ADDR`).
    pub addr: SocketAddr,
    /// The seeds (`CLUSTER_SEEDS`); may include `addr` itself.
    pub seeds: Vec<String>,
    /// The roles this node announces (`CLUSTER_ROLES`).
    pub roles: Vec<String>,
}

/// Everything an example service reads from its environment.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The manifest's `service`.
    pub service: &'static str,
    /// The data directory (`DATA_DIR`).
    pub data_dir: PathBuf,
    /// The database URL (`DATABASE_URL`); may hold a password, so print
    /// [`database_display`](Self::database_display) instead.
    pub database_url: String,
    /// Gossip settings.
    pub cluster: ClusterSettings,
}

impl Settings {
    /// Reads the process environment.
    ///
    /// # Errors
    ///
    /// A message naming the malformed variable.
    pub fn from_env(defaults: Defaults) -> Result<Self, String> {
        Self::from_lookup(defaults, |name| std::env::var(name).ok())
    }

    /// Reads variables through `var` (for tests: no process environment).
    ///
    /// # Errors
    ///
    /// A message naming the malformed variable.
    pub fn from_lookup(
        defaults: Defaults,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, String> {
        let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let service = defaults.service;
        let addr = match var("CLUSTER_ADDR") {
            Some(a) => a
                .trim()
                .parse()
                .map_err(|e| format!("CLUSTER_ADDR={a:?}: {e} (expected ip:port)"))?,
            None => SocketAddr::from(([127, 0, 0, 1], defaults.gossip_port)),
        };
        // Local nodes differ by their gossip port, so the defaults that
        // must not be shared (the SQLite file, the node's name) use it.
        let port = addr.port();
        let data_dir = var("DATA_DIR").map_or_else(
            || std::env::temp_dir().join(format!("zb-health-{service}-{port}")),
            PathBuf::from,
        );
        let database_url = var("DATABASE_URL").unwrap_or_else(|| {
            format!(
                "sqlite://{}?mode=rwc",
                data_dir.join(format!("{service}.db")).display()
            )
        });

        let cluster = ClusterSettings {
            cluster_id: service.to_owned(),
            node_id: var("NODE_ID").unwrap_or_else(|| format!("{service}-{port}")),
            addr,
            seeds: list(var("CLUSTER_SEEDS")),
            roles: list(var("CLUSTER_ROLES")),
        };
        Ok(Self {
            service,
            data_dir,
            database_url,
            cluster,
        })
    }

    /// Prints what the service's own settings chose, the database URL
    /// redacted; the ports are the server's to log.
    pub fn announce(&self) {
        let cluster = if self.cluster.seeds.is_empty() {
            format!("single-node cluster, gossip on udp {}", self.cluster.addr)
        } else {
            format!(
                "gossip on udp {} with seeds {}",
                self.cluster.addr,
                self.cluster.seeds.join(",")
            )
        };
        println!(
            "{}: database {}; node {}; {cluster}",
            self.service,
            self.database_display(),
            self.cluster.node_id
        );
    }

    /// The database URL with its password replaced by `***`, for logs.
    pub fn database_display(&self) -> String {
        redact(&self.database_url)
    }

    /// Whether the database is a SQLite file.
    pub fn is_sqlite(&self) -> bool {
        self.database_url.starts_with("sqlite:")
    }
}

/// `scheme://user:password@host/…` → `scheme://user:***@host/…`.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let Some((userinfo, host)) = rest.split_once('@') else {
        return url.to_owned();
    };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}

fn list(value: Option<String>) -> Vec<String> {
    value
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> Defaults {
        Defaults {
            service: "svc",
            gossip_port: 7100,
        }
    }

    fn with(vars: &[(&str, &str)]) -> Result<Settings, String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Settings::from_lookup(defaults(), move |name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn no_variables_give_the_documented_defaults() {
        let s = with(&[]).unwrap();
        assert_eq!(s.data_dir, std::env::temp_dir().join("zb-health-svc-7100"));
        assert!(s.is_sqlite());
        assert!(
            s.database_url.ends_with("svc.db?mode=rwc"),
            "{}",
            s.database_url
        );
        assert_eq!(s.cluster.addr.to_string(), "127.0.0.1:7100");
        assert!(s.cluster.seeds.is_empty() && s.cluster.roles.is_empty());
        assert_eq!(s.cluster.node_id, "svc-7100");
    }

    #[test]
    fn variables_override_and_lists_are_trimmed() {
        let s = with(&[
            ("DATA_DIR", "/srv/svc"),
            ("NODE_ID", "svc-a"),
            ("CLUSTER_SEEDS", " 127.0.0.1:1, ,127.0.0.1:2 "),
            ("CLUSTER_ROLES", "admin,driver"),
            ("DATABASE_URL", "postgres://u:pw@127.0.0.1:5432/db"),
        ])
        .unwrap();
        assert_eq!(s.cluster.node_id, "svc-a");
        assert_eq!(s.cluster.seeds, ["127.0.0.1:1", "127.0.0.1:2"]);
        assert_eq!(s.cluster.roles, ["admin", "driver"]);
        assert_eq!(s.data_dir, PathBuf::from("/srv/svc"));
        assert!(!s.is_sqlite());
        assert_eq!(s.database_display(), "postgres://u:***@127.0.0.1:5432/db");
    }

    #[test]
    fn a_malformed_value_names_its_variable() {
        let e = with(&[("CLUSTER_ADDR", "localhost")]).unwrap_err();
        assert!(e.starts_with("CLUSTER_ADDR="), "{e}");
    }
}
