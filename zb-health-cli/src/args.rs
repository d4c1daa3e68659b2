//! The command line, derived with clap: one struct per subcommand, its help
//! from these doc comments. clap handles `--`, `-h`/`--help` and
//! `-V`/`--version` alike everywhere, and exits 2 on a usage error.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The zb-health command-line tool: validate a health.yaml manifest, print or
/// check the Kubernetes probes that fit it, probe a health endpoint, serve
/// one health page over several services, put a pod in maintenance.
///
/// Exit status: 0 valid / consistent / healthy / done; 1 a rule is broken,
/// drift, unhealthy, or refused by the server; 2 a usage error, a bad URL,
/// an unreadable file or a missing token.
#[derive(Debug, Parser)]
#[command(name = "zb-health", version)]
// No command is a usage error (exit 2), not help: a CI step that lost its
// arguments must fail, not pass.
#[command(subcommand_required = true, arg_required_else_help = false)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, PartialEq, Eq, Subcommand)]
pub enum Command {
    /// Validate health.yaml manifests with the compile-time rules.
    Check(CheckArgs),
    /// Print the Kubernetes probes, grace period and notes that fit a
    /// manifest.
    ///
    /// With --check DEPLOYMENT, report every probe setting of that
    /// Deployment or StatefulSet that disagrees with the manifest instead.
    K8s(K8sArgs),
    /// Print the Prometheus alerting rules that fit a manifest.
    ///
    /// Every threshold comes from the manifest's timings; an alert on a
    /// part the manifest lacks (watchdogs, shared probes, an active-node
    /// probe) is left out. Check the output with `promtool check rules`.
    Alerts(AlertsArgs),
    /// GET http://host:port/path once: exit 0 on 200-399, 1 otherwise (a
    /// HEALTHCHECK for images without curl).
    Probe(ProbeArgs),
    /// Serve one health page over a fleet's /health/history.
    ///
    /// Polls every pod itself (one request per pod per period, however
    /// many browsers look; after the first, only what changed, with
    /// ?since=) and serves the page at / and /ui and the aggregate JSON at
    /// /history. With --discover, the URLs are seeds: every member their
    /// clusters list is polled too, and one no answering pod lists any
    /// more is dropped after --forget-after. A pod that stops answering
    /// keeps its last document, greyed, with the time it last answered.
    /// Prints `zb-health dashboard: listening on http://ADDR/` when it is
    /// ready.
    Dashboard(DashboardArgs),
    /// Take a pod out of rotation for a while, or bring it back.
    ///
    /// Sends the request to the pod's management port
    /// (http://host:port, or the full /health/maintenance URL) with the
    /// bearer token from HEALTH_TOKEN, HEALTH_TOKEN_FILE or --token-file,
    /// never from an argument. Prints the window, or that none is open.
    Maintenance(OperatorArgs),
    /// Make the active node hand its role over for a while, or take it back.
    ///
    /// Sends the request to the node's management port (http://host:port,
    /// or the full /health/step-down URL) with the bearer token, as
    /// maintenance does. The next node in line takes the role after the
    /// hand-over margin; this one takes it back after the TTL.
    StepDown(OperatorArgs),
    /// Print the JSON Schema of health.yaml, or write it beside a manifest.
    ///
    /// With --next-to FILE, writes health-manifest.schema.json into FILE's
    /// folder and prints the first line that points editors at it
    /// (`# yaml-language-server: $schema=health-manifest.schema.json`).
    Schema(SchemaArgs),
}

/// When to colour the diagnostics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Color {
    /// When stderr is a terminal.
    #[default]
    Auto,
    /// Always, e.g. for a CI log that renders ANSI.
    Always,
    /// Never.
    Never,
}

impl Color {
    /// Whether to colour stderr.
    pub fn styled(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            // Like rustc: colour only when a person reads stderr.
            Color::Auto => std::io::stderr().is_terminal(),
        }
    }
}

/// `--color`, shared by the subcommands that print diagnostics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Args)]
pub struct ColorArg {
    /// Colour the diagnostics.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = Color::Auto)]
    pub color: Color,
}

/// The options of `check`.
#[derive(Debug, PartialEq, Eq, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub color: ColorArg,
    /// The manifests, checked in the order given, all of them even after a
    /// failure.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

/// The options of `schema`.
#[derive(Debug, PartialEq, Eq, Args)]
pub struct SchemaArgs {
    /// Write the schema into this manifest's folder instead of printing it.
    #[arg(long, value_name = "FILE")]
    pub next_to: Option<PathBuf>,
}

/// The options of `k8s` (`Default` for the plan alone, in tests).
#[derive(Debug, Default, PartialEq, Eq, Args)]
pub struct K8sArgs {
    #[command(flatten)]
    pub color: ColorArg,
    /// The manifest.
    #[arg(value_name = "FILE")]
    pub manifest: PathBuf,
    /// The application's HTTP port, used when the manifest has no management
    /// port [default: 8080].
    #[arg(long, value_name = "N", value_parser = port())]
    pub port: Option<u16>,
    /// The gRPC port serving grpc.health.v1 [default: 50051].
    #[arg(long, value_name = "N", value_parser = port())]
    pub grpc_port: Option<u16>,
    /// Ask grpc.health.v1 (the kubelet's `grpc` probe, on --grpc-port)
    /// instead of httpGet for liveness and readiness, on the service names
    /// the manifest's `grpc.services` maps to their tiers; a tier without
    /// one is refused. The startup probe stays httpGet: no gRPC name
    /// answers the startup path.
    #[arg(long)]
    pub grpc_probes: bool,
    /// The container [default: the service name; with --check, the only
    /// container, else the first with probes].
    #[arg(long, value_name = "NAME")]
    pub container: Option<String>,
    /// Point the readinessProbe at this health group's path (the manifest's
    /// `groups`) instead of the ready tier: a canary gated on its probes.
    #[arg(long, value_name = "GROUP")]
    pub readiness_group: Option<String>,
    /// Leave this probe of the ready tier out of the readinessProbe's
    /// verdict (`?exclude=NAME`), for an emergency; repeatable.
    #[arg(long, value_name = "PROBE")]
    pub readiness_exclude: Vec<String>,
    /// Compare this Deployment or StatefulSet file (multi-document YAML)
    /// with the manifest instead of printing.
    #[arg(long, value_name = "DEPLOYMENT")]
    pub check: Option<PathBuf>,
}

/// The options of `alerts`.
#[derive(Debug, PartialEq, Eq, Args)]
pub struct AlertsArgs {
    #[command(flatten)]
    pub color: ColorArg,
    /// The manifest.
    #[arg(value_name = "FILE")]
    pub manifest: PathBuf,
    /// The label matchers that select the service's series, e.g.
    /// 'namespace="prod",app="orders"' [default: job="<service>"].
    #[arg(long, value_name = "MATCHERS")]
    pub selector: Option<String>,
    /// How often Prometheus scrapes the pods, an integer and a unit: every
    /// alert holds two scrapes longer than the orchestrator takes to act,
    /// the flap window spans ten.
    #[arg(long, value_name = "D", default_value = "30s", value_parser = timeout)]
    pub scrape_interval: Duration,
}

/// The options of `probe`.
#[derive(Debug, PartialEq, Eq, Args)]
pub struct ProbeArgs {
    /// http://host[:port][/path]; an https:// or malformed URL exits 2.
    #[arg(value_name = "URL")]
    pub url: String,
    /// The TCP connect deadline, an integer and a unit (500ms, 2s).
    #[arg(long, value_name = "D", default_value = "1s", value_parser = timeout)]
    pub connect_timeout: Duration,
    /// The deadline of the whole exchange, an integer and a unit.
    #[arg(long, value_name = "D", default_value = "2s", value_parser = timeout)]
    pub timeout: Duration,
}

/// The options of `dashboard`.
#[derive(Debug, PartialEq, Eq, Args)]
pub struct DashboardArgs {
    /// Each pod's history endpoint, http:// only, e.g.
    /// http://10.0.0.7:8081/health/history (one per pod, never a Service
    /// that picks a random pod); a bare management address
    /// (http://10.0.0.7:8081) means its /health/history.
    #[arg(value_name = "URL", required = true)]
    pub urls: Vec<String>,
    /// Find the rest of the cluster from the URLs: each pod's history
    /// lists every member's history URL (on the management port).
    #[arg(long)]
    pub discover: bool,
    /// How long a discovered pod that no answering pod lists any more
    /// stays on the page, an integer and a unit.
    #[arg(long, value_name = "D", default_value = "60s", value_parser = timeout)]
    pub forget_after: Duration,
    /// Always read each pod's whole document, never the delta (?since=):
    /// for comparison; a pod too old for the delta answers whole anyway.
    #[arg(long)]
    pub no_delta: bool,
    /// How many pods are polled at once, at most; one slow pod holds one
    /// of them for its --timeout, never the others.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub concurrency: u16,
    /// The address to serve on; 0.0.0.0:9000 for every interface, port 0
    /// for any free port.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9000")]
    pub listen: SocketAddr,
    /// How often each service is polled, an integer and a unit.
    #[arg(long, value_name = "D", default_value = "2s", value_parser = timeout)]
    pub period: Duration,
    /// The deadline of each poll (connect and answer), an integer and a
    /// unit.
    #[arg(long, value_name = "D", default_value = "1s", value_parser = timeout)]
    pub timeout: Duration,
}

/// The options of `maintenance` and `step-down`.
#[derive(Debug, PartialEq, Eq, Args)]
pub struct OperatorArgs {
    /// The pod's management port, e.g. http://10.0.0.7:8081.
    #[arg(value_name = "URL")]
    pub url: String,
    /// Why, in a few words (at most 80 characters); with --for.
    #[arg(long, value_name = "TEXT", requires = "ttl", conflicts_with = "off")]
    pub reason: Option<String>,
    /// How long, e.g. 10m (at most 1440m); it ends by itself then.
    #[arg(
        long = "for",
        id = "ttl",
        value_name = "D",
        requires = "reason",
        conflicts_with = "off"
    )]
    pub ttl: Option<String>,
    /// End it now.
    #[arg(long)]
    pub off: bool,
    /// A file holding the bearer token (a mounted Secret), instead of the
    /// HEALTH_TOKEN variable.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// The deadline of the exchange, an integer and a unit.
    #[arg(long, value_name = "D", default_value = "5s", value_parser = timeout)]
    pub timeout: Duration,
}

/// A port from 1 to 65535: 0 is "any port" to a socket, never a probe's.
fn port() -> clap::builder::RangedI64ValueParser<u16> {
    clap::value_parser!(u16).range(1..)
}

/// A non-zero duration in the manifest's syntax: a zero deadline would fail
/// every probe.
fn timeout(value: &str) -> Result<Duration, String> {
    match zb_health_spec::duration::parse_duration(value) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err("takes a non-zero duration such as `500ms` or `2s`".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use clap::error::ErrorKind;

    fn parse(args: &[&str]) -> Result<Command, ErrorKind> {
        Cli::try_parse_from(std::iter::once("zb-health").chain(args.iter().copied()))
            .map(|cli| cli.command)
            .map_err(|e| e.kind())
    }

    fn color(color: Color) -> ColorArg {
        ColorArg { color }
    }

    #[test]
    fn the_derived_parser_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn check_takes_color_in_both_spellings_and_files_after_double_dash() {
        assert_eq!(
            parse(&["check", "--color", "never", "a.yaml", "--", "--b.yaml"]).ok(),
            Some(Command::Check(CheckArgs {
                color: color(Color::Never),
                files: vec!["a.yaml".into(), "--b.yaml".into()],
            }))
        );
        assert_eq!(
            parse(&["check", "--color=always", "-"]).ok(),
            Some(Command::Check(CheckArgs {
                color: color(Color::Always),
                files: vec!["-".into()],
            }))
        );
    }

    #[test]
    fn double_dash_ends_the_options_of_every_subcommand() {
        let Ok(Command::K8s(k8s)) = parse(&["k8s", "--", "--h.yaml"]) else {
            panic!("k8s takes a file after --");
        };
        assert_eq!(k8s.manifest, PathBuf::from("--h.yaml"));
        let Ok(Command::Probe(probe)) = parse(&["probe", "--timeout", "3s", "--", "--help"]) else {
            panic!("probe takes a URL after --");
        };
        assert_eq!(probe.url, "--help");
    }

    #[test]
    fn help_is_the_same_flag_in_every_subcommand() {
        for command in [&[][..], &["check"], &["k8s"], &["probe"], &["dashboard"]] {
            for flag in ["-h", "--help"] {
                let args: Vec<&str> = command.iter().copied().chain([flag]).collect();
                assert_eq!(parse(&args).err(), Some(ErrorKind::DisplayHelp), "{args:?}");
            }
        }
        assert_eq!(parse(&["-V"]).err(), Some(ErrorKind::DisplayVersion));
    }

    #[test]
    fn usage_errors_are_errors() {
        for args in [
            &[][..],
            &["check"],
            &["check", "--color"],
            &["check", "--color", "blue", "a.yaml"],
            &["check", "--strict", "a.yaml"],
            &["lint", "a.yaml"],
            &["k8s"],
            &["k8s", "a.yaml", "b.yaml"],
            &["k8s", "a.yaml", "--port", "0"],
            &["k8s", "a.yaml", "--port", "70000"],
            &["probe"],
            &["probe", "http://a/", "b"],
            &["probe", "http://a/", "--timeout", "0s"],
            &["probe", "http://a/", "--timeout", "1.5s"],
            &["dashboard"],
            &["dashboard", "http://a/", "--listen", "localhost"],
            &["dashboard", "http://a/", "--period", "0s"],
            &["dashboard", "http://a/", "--concurrency", "0"],
            &["dashboard", "http://a/", "--forget-after", "soon"],
        ] {
            assert!(parse(args).is_err(), "{args:?}");
        }
    }

    #[test]
    fn k8s_and_probe_take_their_flags_in_both_spellings() {
        assert_eq!(
            parse(&[
                "k8s",
                "h.yaml",
                "--port",
                "9000",
                "--grpc-port=7000",
                "--grpc-probes",
                "--container",
                "app",
                "--readiness-exclude",
                "cache",
                "--readiness-exclude=queue",
                "--check",
                "d.yaml"
            ])
            .ok(),
            Some(Command::K8s(K8sArgs {
                color: color(Color::Auto),
                manifest: "h.yaml".into(),
                port: Some(9000),
                grpc_port: Some(7000),
                grpc_probes: true,
                container: Some("app".into()),
                readiness_group: None,
                readiness_exclude: vec!["cache".into(), "queue".into()],
                check: Some("d.yaml".into()),
            }))
        );
        assert_eq!(
            parse(&[
                "probe",
                "--timeout=3s",
                "http://127.0.0.1:1/",
                "--connect-timeout",
                "200ms"
            ])
            .ok(),
            Some(Command::Probe(ProbeArgs {
                url: "http://127.0.0.1:1/".into(),
                connect_timeout: Duration::from_millis(200),
                timeout: Duration::from_secs(3),
            }))
        );
        let Ok(Command::Probe(probe)) = parse(&["probe", "http://a/"]) else {
            panic!("a URL alone is a probe");
        };
        assert_eq!(
            (probe.connect_timeout, probe.timeout),
            (Duration::from_secs(1), Duration::from_secs(2))
        );
    }

    #[test]
    fn dashboard_takes_urls_and_defaults_to_loopback_9000_every_2s() {
        assert_eq!(
            parse(&["dashboard", "http://a/h", "http://b/h"]).ok(),
            Some(Command::Dashboard(DashboardArgs {
                urls: vec!["http://a/h".into(), "http://b/h".into()],
                discover: false,
                no_delta: false,
                forget_after: Duration::from_secs(60),
                concurrency: 16,
                listen: "127.0.0.1:9000".parse().unwrap(),
                period: Duration::from_secs(2),
                timeout: Duration::from_secs(1),
            }))
        );
        let Ok(Command::Dashboard(d)) = parse(&[
            "dashboard",
            "--listen=0.0.0.0:0",
            "http://a/h",
            "--period",
            "200ms",
            "--timeout",
            "100ms",
        ]) else {
            panic!("dashboard takes its flags");
        };
        assert_eq!(d.listen, "0.0.0.0:0".parse().unwrap());
        assert_eq!(
            (d.period, d.timeout),
            (Duration::from_millis(200), Duration::from_millis(100))
        );
    }
}
