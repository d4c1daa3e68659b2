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
//! Exit status, for CI pipelines and editors:
//! - `0`: every file is valid (each gets `PATH: ok` on stdout);
//! - `1`: at least one rule is broken;
//! - `2`: a usage error, or a file that cannot be read (which one, and why).
//!
//! `zb-health k8s health.yaml` prints the Kubernetes probes, grace period
//! and notes that fit the manifest (a strategic-merge patch); with
//! `--check deployment.yaml` it reports, at line:column in that file, every
//! setting that disagrees with the manifest instead (see [`k8s`]).
//!
//! `zb-health probe URL` is a std-only HTTP/1.1 health check for images
//! without curl (see [`probe`]).

mod args;
mod k8s;
mod probe;
mod render;
mod yaml;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use args::{Color, Command};

fn main() -> ExitCode {
    let command = match args::parse(std::env::args_os().skip(1)) {
        Ok(command) => command,
        Err(error) => {
            eprintln!("error: {error}\n\n{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Help => {
            print!("{}", args::USAGE);
            ExitCode::SUCCESS
        }
        Command::Version => {
            println!("zb-health {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Command::Check { color, files } => check(color, &files),
        Command::K8s(args) => ExitCode::from(kube(&args)),
        Command::Probe(args) => ExitCode::from(probe::run(&args)),
    }
}

fn styled(color: Color) -> bool {
    match color {
        Color::Always => true,
        Color::Never => false,
        // Like rustc: colour only when a person reads stderr.
        Color::Auto => std::io::stderr().is_terminal(),
    }
}

/// `k8s`: the manifest must pass `check`, then translate to Kubernetes; with
/// `--check`, the Deployment is compared instead of printed.
fn kube(args: &args::K8sArgs) -> u8 {
    let styled = styled(args.color);
    let shown = args.manifest.display().to_string();
    let text = match std::fs::read_to_string(&args.manifest) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("error: cannot read `{shown}`: {error}");
            return 2;
        }
    };
    let manifest = match zb_health_spec::manifest::parse_manifest(&text) {
        Ok(manifest) => manifest,
        Err(violations) => {
            let _ = std::io::stderr()
                .write_all(render::report(&shown, &text, &violations, styled).as_bytes());
            return 1;
        }
    };
    let options = k8s::Options {
        port: args.port,
        grpc_port: args.grpc_port,
        container: args.container.clone(),
    };
    let plan = match k8s::plan(&manifest, &options) {
        Ok(plan) => plan,
        Err(violations) => {
            let _ = std::io::stderr()
                .write_all(render::report(&shown, &text, &violations, styled).as_bytes());
            return 1;
        }
    };
    let Some(deployment) = &args.check else {
        print!("{}", k8s::render::yaml(&plan, &shown));
        return 0;
    };
    let deploy_shown = deployment.display().to_string();
    let deploy_text = match std::fs::read_to_string(deployment) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("error: cannot read `{deploy_shown}`: {error}");
            return 2;
        }
    };
    let drifts = match k8s::drift::check(
        &manifest,
        &plan,
        &deploy_text,
        args.container.as_deref(),
        args.grpc_port,
    ) {
        Ok(drifts) => drifts,
        Err(why) => {
            eprintln!("error: cannot check `{deploy_shown}`: {why}");
            return 2;
        }
    };
    if drifts.is_empty() {
        println!("{deploy_shown}: consistent with {shown}");
        return 0;
    }
    let diagnostics: Vec<render::Diagnostic<'_>> = drifts
        .iter()
        .map(|d| render::Diagnostic {
            id: d.check.code(),
            message: &d.message,
            location: d.location,
            note: d.check.note(),
            help: &d.help,
        })
        .collect();
    let count = drifts.len();
    let summary = format!(
        "`{deploy_shown}` disagrees with `{shown}` in {count} place{}",
        if count == 1 { "" } else { "s" }
    );
    let report = render::render_all(&deploy_shown, &deploy_text, &diagnostics, &summary, styled);
    let _ = std::io::stderr().write_all(report.as_bytes());
    1
}

/// Checks every file, even after a failure, so one run reports them all.
fn check(color: Color, files: &[std::path::PathBuf]) -> ExitCode {
    let styled = styled(color);
    let mut status = 0u8;
    for path in files {
        let shown = path.display().to_string();
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) => {
                eprintln!("error: cannot read `{shown}`: {error}");
                status = 2;
                continue;
            }
        };
        match zb_health_spec::manifest::parse_manifest(&text) {
            Ok(_) => println!("{shown}: ok"),
            Err(violations) => {
                let report = render::report(&shown, &text, &violations, styled);
                // A closed stderr leaves nothing to tell; the status still says it.
                let _ = std::io::stderr().write_all(report.as_bytes());
                status = status.max(1);
            }
        }
    }
    ExitCode::from(status)
}
