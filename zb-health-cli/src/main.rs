//! `zb-health`, the command-line tool of zb-health.
//!
//! `zb-health check health.yaml [more.yaml…]` validates each manifest with
//! exactly the rules the `#[zb_health]` and `manifest!` macros apply at
//! compile time: it calls [`zb_health_spec::manifest::parse_manifest`] and
//! writes no rule of its own, so the CLI, the compiler and the runtime cannot
//! disagree. Every violation is printed rustc-style on stderr (through
//! `annotate-snippets`, rustc's own renderer): `error[R1]: …`, the YAML line
//! with a caret at the violation's line:column, the requirement the rule
//! enforces, and a `help:` line.
//!
//! It sees the manifest alone. What only the compiler can see is left to it:
//! an R7 contradiction between the manifest and a `#[zb_health]` attribute,
//! or a custom `type` that is not a probe; such a manifest is `ok` here and
//! still fails the build.
//!
//! Exit status, for CI pipelines and editors (every subcommand):
//! - `0`: every file is valid (each gets `PATH: ok` on stdout), the
//!   Deployment is consistent, the endpoint is healthy;
//! - `1`: at least one rule is broken, a setting drifted, the probe failed;
//! - `2`: a usage error, a bad URL, or a file that cannot be read (which
//!   one, and why).
//!
//! `zb-health k8s health.yaml` prints the Kubernetes probes, grace period
//! and notes that fit the manifest (a strategic-merge patch); with
//! `--check deployment.yaml` it reports, at line:column in that file, every
//! setting that disagrees with the manifest instead (see [`k8s`]).
//!
//! `zb-health alerts health.yaml` prints the Prometheus alerting rules that
//! fit the manifest, thresholds from its timings (see [`alerts`]).
//!
//! `zb-health probe URL` is a std-only HTTP/1.1 health check for images
//! without curl (see [`probe`]).
//!
//! `zb-health dashboard URL...` serves one health page over several
//! services' `/health/history`, polling each itself (see [`dashboard`]).
//!
//! `zb-health schema --next-to health.yaml` writes the manifest's JSON
//! Schema beside it, for editors (see [`schema`]).
//!
//! `zb-health maintenance URL --reason TEXT --for 10m` takes a pod out of
//! rotation through its management port, `--off` brings it back;
//! `zb-health step-down URL` hands the active role over the same way (see
//! [`operator`]).
//!
//! The arguments are parsed by clap ([`args`]); this file only dispatches.

mod alerts;
mod args;
mod check;
mod dashboard;
mod input;
mod k8s;
mod operator;
mod probe;
mod render;
mod schema;
mod yaml;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};

fn main() -> ExitCode {
    // clap prints help and the version on stdout (exit 0), a usage error
    // with the usage on stderr (exit 2).
    let outcome = match Cli::parse().command {
        Command::Check(args) => check::run(&args),
        Command::K8s(args) => k8s::run(&args),
        Command::Alerts(args) => alerts::run(&args),
        Command::Probe(args) => probe::run(&args),
        Command::Dashboard(args) => dashboard::run(&args),
        Command::Maintenance(args) => operator::run(&args, &operator::MAINTENANCE),
        Command::StepDown(args) => operator::run(&args, &operator::STEP_DOWN),
        Command::Schema(args) => schema::run(&args),
    };
    // 0 on success, else the failure's status.
    ExitCode::from(outcome.err().map_or(0, |failure| failure as u8))
}
