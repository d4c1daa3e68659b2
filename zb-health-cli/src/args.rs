//! Argument parsing by hand: three subcommands with a few flags each do not
//! need a parser crate.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// The short usage, for `--help` and after a usage error.
pub const USAGE: &str = "\
Usage: zb-health check [--color WHEN] FILE...
       zb-health k8s [--port N] [--grpc-port N] [--container NAME] [--check DEPLOYMENT] [--color WHEN] FILE
       zb-health probe [--connect-timeout D] [--timeout D] URL

Commands:
  check FILE...   validate health.yaml manifests with the compile-time rules
  k8s FILE        print the Kubernetes probes, grace period and notes that fit the manifest;
                  with --check DEPLOYMENT, report every probe setting of that Deployment or
                  StatefulSet that disagrees with it instead
  probe URL       GET http://host:port/path once: exit 0 on 2xx, 1 otherwise (a HEALTHCHECK)

Options:
  --color WHEN          colour the diagnostics: auto (default: when stderr is a terminal), always, never
  --port N              k8s: the application's HTTP port, used when the manifest has no
                        management port (default 8080)
  --grpc-port N         k8s: the gRPC port serving grpc.health.v1 (default 50051)
  --container NAME      k8s: the container (default: the service name; with --check, the only
                        container, else the first with probes)
  --check DEPLOYMENT    k8s: compare an existing manifest (multi-document YAML) instead of printing
  --connect-timeout D   probe: the TCP connect deadline (default 1s)
  --timeout D           probe: the deadline of the whole exchange (default 2s)
  -h, --help            print this help
  -V, --version         print the version

Durations are an integer and a unit: 500ms, 2s.
Exit status: 0 valid / consistent / healthy, 1 a rule is broken / drift / unhealthy,
2 usage error, bad URL or unreadable file.
";

/// When to colour the diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// When stderr is a terminal.
    Auto,
    /// Always, e.g. for a CI log that renders ANSI.
    Always,
    /// Never.
    Never,
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    /// `--help`, `-h`.
    Help,
    /// `--version`, `-V`.
    Version,
    /// `check FILE...`.
    Check {
        /// When to colour.
        color: Color,
        /// The manifests, in the order given.
        files: Vec<PathBuf>,
    },
    /// `k8s FILE`.
    K8s(K8sArgs),
    /// `probe URL`.
    Probe(ProbeArgs),
}

/// The options of `k8s`.
#[derive(Debug, PartialEq, Eq)]
pub struct K8sArgs {
    /// When to colour the diagnostics.
    pub color: Color,
    /// The manifest.
    pub manifest: PathBuf,
    /// `--port`, when given: the application port.
    pub port: Option<u16>,
    /// `--grpc-port`, when given.
    pub grpc_port: Option<u16>,
    /// `--container`, when given.
    pub container: Option<String>,
    /// `--check`: the Deployment or StatefulSet to compare.
    pub check: Option<PathBuf>,
}

/// The options of `probe`.
#[derive(Debug, PartialEq, Eq)]
pub struct ProbeArgs {
    /// The URL, as given; `probe` parses it (a bad URL exits 2 there).
    pub url: String,
    /// `--connect-timeout`.
    pub connect_timeout: Duration,
    /// `--timeout`: the whole exchange.
    pub timeout: Duration,
}

/// A command line that cannot be run.
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, UsageError> {
    let mut args = args.into_iter();
    // No command is a usage error, not help: a CI step that lost its
    // arguments must fail, not pass.
    let Some(first) = args.next() else {
        return Err(UsageError("no command given".into()));
    };
    match first.to_str() {
        Some("-h" | "--help" | "help") => Ok(Command::Help),
        Some("-V" | "--version") => Ok(Command::Version),
        Some("check") => parse_check(args),
        Some("k8s") => parse_k8s(args),
        Some("probe") => parse_probe(args),
        _ => Err(UsageError(format!(
            "unknown command `{}`",
            first.to_string_lossy()
        ))),
    }
}

fn parse_check(mut args: impl Iterator<Item = OsString>) -> Result<Command, UsageError> {
    let mut color = Color::Auto;
    let mut files = Vec::new();
    let mut options_done = false;
    while let Some(arg) = args.next() {
        // A path need not be UTF-8; only options are matched as text.
        let text = arg.to_str().filter(|_| !options_done);
        match text {
            Some("--") => options_done = true,
            Some("-h" | "--help") => return Ok(Command::Help),
            Some("--color") => {
                let when = args
                    .next()
                    .ok_or_else(|| UsageError("`--color` needs a value".into()))?;
                color = parse_color(&when.to_string_lossy())?;
            }
            Some(flag) if flag.starts_with("--color=") => {
                color = parse_color(&flag["--color=".len()..])?;
            }
            Some(flag) if flag.starts_with('-') && flag.len() > 1 => {
                return Err(UsageError(format!("unknown option `{flag}`")));
            }
            _ => files.push(PathBuf::from(arg)),
        }
    }
    if files.is_empty() {
        return Err(UsageError(
            "`check` needs at least one manifest file".into(),
        ));
    }
    Ok(Command::Check { color, files })
}

fn parse_k8s(mut args: impl Iterator<Item = OsString>) -> Result<Command, UsageError> {
    let mut color = Color::Auto;
    let mut manifest = None;
    let (mut port, mut grpc_port, mut container, mut check) = (None, None, None, None);
    while let Some(arg) = args.next() {
        let Some(flag) = arg.to_str().filter(|f| f.starts_with('-') && f.len() > 1) else {
            if manifest.replace(PathBuf::from(arg)).is_some() {
                return Err(UsageError("`k8s` takes one manifest file".into()));
            }
            continue;
        };
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(OsString::from(value))),
            None => (flag, None),
        };
        if matches!(name, "-h" | "--help") {
            return Ok(Command::Help);
        }
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| UsageError(format!("`{name}` needs a value")))
        };
        match name {
            "--color" => color = parse_color(&value()?.to_string_lossy())?,
            "--port" => port = Some(parse_port(name, &value()?)?),
            "--grpc-port" => grpc_port = Some(parse_port(name, &value()?)?),
            "--container" => container = Some(value()?.to_string_lossy().into_owned()),
            "--check" => check = Some(PathBuf::from(value()?)),
            _ => return Err(UsageError(format!("unknown option `{flag}`"))),
        }
    }
    let manifest = manifest.ok_or_else(|| UsageError("`k8s` needs a manifest file".into()))?;
    Ok(Command::K8s(K8sArgs {
        color,
        manifest,
        port,
        grpc_port,
        container,
        check,
    }))
}

fn parse_probe(mut args: impl Iterator<Item = OsString>) -> Result<Command, UsageError> {
    let mut url = None;
    let mut connect_timeout = Duration::from_secs(1);
    let mut timeout = Duration::from_secs(2);
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        let (name, inline) = match text.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                (name.to_string(), Some(value.to_string()))
            }
            _ => (text.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next().map(|v| v.to_string_lossy().into_owned()))
                .ok_or_else(|| UsageError(format!("`{name}` needs a value")))
        };
        match name.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--connect-timeout" => connect_timeout = parse_timeout(&name, &value()?)?,
            "--timeout" => timeout = parse_timeout(&name, &value()?)?,
            flag if flag.starts_with('-') && flag.len() > 1 => {
                return Err(UsageError(format!("unknown option `{flag}`")));
            }
            _ if url.is_some() => return Err(UsageError("`probe` takes one URL".into())),
            _ => url = Some(text),
        }
    }
    let url = url.ok_or_else(|| UsageError("`probe` needs a URL".into()))?;
    Ok(Command::Probe(ProbeArgs {
        url,
        connect_timeout,
        timeout,
    }))
}

fn parse_port(flag: &str, value: &OsString) -> Result<u16, UsageError> {
    value
        .to_str()
        .and_then(|v| v.parse::<u16>().ok())
        .filter(|&p| p != 0)
        .ok_or_else(|| {
            UsageError(format!(
                "`{flag}` takes a port from 1 to 65535, not `{}`",
                value.to_string_lossy()
            ))
        })
}

fn parse_timeout(flag: &str, value: &str) -> Result<Duration, UsageError> {
    match zb_health_spec::parse_duration(value) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(UsageError(format!(
            "`{flag}` takes a non-zero duration such as `500ms` or `2s`, not `{value}`"
        ))),
    }
}

fn parse_color(when: &str) -> Result<Color, UsageError> {
    match when {
        "auto" => Ok(Color::Auto),
        "always" => Ok(Color::Always),
        "never" => Ok(Color::Never),
        other => Err(UsageError(format!(
            "`--color` takes auto, always or never, not `{other}`"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Command, UsageError> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn check_takes_color_in_both_spellings_and_files_after_double_dash() {
        assert_eq!(
            parse_strs(&["check", "--color", "never", "a.yaml", "--", "--b.yaml"]),
            Ok(Command::Check {
                color: Color::Never,
                files: vec!["a.yaml".into(), "--b.yaml".into()],
            })
        );
        assert_eq!(
            parse_strs(&["check", "--color=always", "-"]),
            Ok(Command::Check {
                color: Color::Always,
                files: vec!["-".into()],
            })
        );
    }

    #[test]
    fn usage_errors_are_errors() {
        assert!(parse_strs(&["check"]).is_err());
        assert!(parse_strs(&["check", "--color"]).is_err());
        assert!(parse_strs(&["check", "--color", "blue", "a.yaml"]).is_err());
        assert!(parse_strs(&["check", "--strict", "a.yaml"]).is_err());
        assert!(parse_strs(&["lint", "a.yaml"]).is_err());
    }

    #[test]
    fn k8s_and_probe_take_their_flags_in_both_spellings() {
        assert_eq!(
            parse_strs(&[
                "k8s",
                "h.yaml",
                "--port",
                "9000",
                "--grpc-port=7000",
                "--container",
                "app",
                "--check",
                "d.yaml"
            ]),
            Ok(Command::K8s(K8sArgs {
                color: Color::Auto,
                manifest: "h.yaml".into(),
                port: Some(9000),
                grpc_port: Some(7000),
                container: Some("app".into()),
                check: Some("d.yaml".into()),
            }))
        );
        assert_eq!(
            parse_strs(&[
                "probe",
                "--timeout=3s",
                "http://127.0.0.1:1/",
                "--connect-timeout",
                "200ms"
            ]),
            Ok(Command::Probe(ProbeArgs {
                url: "http://127.0.0.1:1/".into(),
                connect_timeout: Duration::from_millis(200),
                timeout: Duration::from_secs(3),
            }))
        );
        assert!(parse_strs(&["k8s"]).is_err());
        assert!(parse_strs(&["k8s", "a.yaml", "b.yaml"]).is_err());
        assert!(parse_strs(&["k8s", "a.yaml", "--port", "0"]).is_err());
        assert!(parse_strs(&["k8s", "a.yaml", "--port", "70000"]).is_err());
        assert!(parse_strs(&["probe"]).is_err());
        assert!(parse_strs(&["probe", "http://a/", "--timeout", "0s"]).is_err());
        assert!(parse_strs(&["probe", "http://a/", "--timeout", "1.5s"]).is_err());
    }

    #[test]
    fn nothing_help_and_version() {
        assert!(parse_strs(&[]).is_err());
        assert_eq!(parse_strs(&["--help"]), Ok(Command::Help));
        assert_eq!(parse_strs(&["-V"]), Ok(Command::Version));
    }
}
