//! `zb-health check FILE...`: each manifest through the macros' own parser.

use zb_health_spec::manifest::{Manifest, ProbeKind, parse_manifest};

use crate::args::CheckArgs;
use crate::input::{self, Failure, Source};
use crate::render;

/// Checks every file, even after a failure, so one run reports them all;
/// the status is the worst one (an unreadable file wins over a violation).
pub fn run(args: &CheckArgs) -> Result<(), Failure> {
    let styled = args.color.color.styled();
    let mut worst = None;
    for path in &args.files {
        let outcome = input::read(path).and_then(|source| {
            manifest(&source, styled).map(|m| println!("{}", ok_line(&source.shown, &m)))
        });
        worst = worst.max(outcome.err());
    }
    worst.map_or(Ok(()), Err)
}

/// `FILE: ok`, and, when the manifest has custom probes, what this check
/// could not see: their `#[zb_health]` attributes, which the build checks
/// against the manifest (a deadline, tags, a policy), and how to run that.
fn ok_line(shown: &str, manifest: &Manifest) -> String {
    let types: Vec<String> = manifest
        .probes
        .iter()
        .filter_map(|p| match &p.kind {
            ProbeKind::Custom { type_path, .. } => Some(format!("`{}`", type_path.value)),
            _ => None,
        })
        .collect();
    if types.is_empty() {
        format!("{shown}: ok")
    } else {
        format!(
            "{shown}: ok as a manifest; `cargo check` also checks its custom probes {} (each a #[zb_health] probe whose attribute agrees with it), which this check cannot see",
            types.join(", ")
        )
    }
}

/// The manifest in `source`, or its violations rendered on stderr (exit 1):
/// what `check` runs, and what `k8s` runs first.
pub fn manifest(source: &Source, styled: bool) -> Result<Manifest, Failure> {
    parse_manifest(&source.text).map_err(|violations| render::report(source, &violations, styled))
}
