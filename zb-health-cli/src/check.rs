//! `zb-health check FILE...`: each manifest through the macros' own parser.

use zb_health_spec::manifest::{Manifest, parse_manifest};

use crate::args::CheckArgs;
use crate::input::{self, Failure, Source};
use crate::render;

/// Checks every file, even after a failure, so one run reports them all;
/// the status is the worst one (an unreadable file wins over a violation).
pub fn run(args: &CheckArgs) -> Result<(), Failure> {
    let styled = args.color.color.styled();
    let mut worst = None;
    for path in &args.files {
        let outcome = input::read(path)
            .and_then(|source| manifest(&source, styled).map(|_| println!("{}: ok", source.shown)));
        worst = worst.max(outcome.err());
    }
    worst.map_or(Ok(()), Err)
}

/// The manifest in `source`, or its violations rendered on stderr (exit 1):
/// what `check` runs, and what `k8s` runs first.
pub fn manifest(source: &Source, styled: bool) -> Result<Manifest, Failure> {
    parse_manifest(&source.text)
        .map_err(|violations| render::fail(&render::report(source, &violations, styled)))
}
