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

mod args;
mod render;

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
    }
}

/// Checks every file, even after a failure, so one run reports them all.
fn check(color: Color, files: &[std::path::PathBuf]) -> ExitCode {
    let styled = match color {
        Color::Always => true,
        Color::Never => false,
        // Like rustc: colour only when a person reads stderr.
        Color::Auto => std::io::stderr().is_terminal(),
    };
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
