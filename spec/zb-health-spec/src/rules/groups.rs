//! Health groups (ZB-5): R23, what a group selects; R24, its path; R25,
//! never the `live` tier (ZB-1.3).

use super::paths::{endpoint_at, is_plain_path, normalize, per_probe_tier};
use super::rule::Rule;
use super::sink::Violations;
use crate::paths::EndpointPaths;
use crate::suggest::{did_you_mean, hint};
use crate::tag::Tag;

/// R23: a health group selects something, and every probe it names is
/// registered. `known` are the probes there are (the manifest's, or the
/// registry's at build time); `probes` the names it lists, each where it
/// was written; `at` the group, for an empty selection.
pub fn check_group_probes<'a, L: Clone>(
    group: &str,
    probes: &[(&str, L)],
    tiers: usize,
    known: impl IntoIterator<Item = &'a str> + Clone,
    at: L,
    sink: &mut Violations<L>,
) {
    if probes.is_empty() && tiers == 0 {
        sink.push(
            Rule::GroupUnknownProbe,
            at,
            format!("health group `{group}` selects no probe"),
            "list its probes by name (`probes: [database, cache]`) or its tiers (`tiers: [ready]`); an empty group would always answer 200",
        );
        return;
    }
    for (probe, loc) in probes {
        if known.clone().into_iter().any(|k| k == *probe) {
            continue;
        }
        sink.push(
            Rule::GroupUnknownProbe,
            loc.clone(),
            format!("health group `{group}` names probe `{probe}`, which is not registered"),
            format!(
                "name a probe of this manifest or registry{}",
                hint(did_you_mean(probe, known.clone()))
            ),
        );
    }
}

/// R24: each health group's path is a plain absolute path, and distinct
/// from every endpoint's (the tiers', the startup path), from every other
/// group's, and from every per-probe path (`<ready or active path>/<name>`,
/// which it would hide). `groups` are `(name, path, location)`.
pub fn check_group_paths<L: Clone>(
    endpoints: &EndpointPaths,
    groups: &[(&str, &str, L)],
    sink: &mut Violations<L>,
) {
    for (i, (name, path, loc)) in groups.iter().enumerate() {
        let subject = format!("the path `{path}` of health group `{name}`");
        if !is_plain_path(Rule::GroupPath, &subject, path, loc.clone(), sink) {
            continue;
        }
        let collides = endpoint_at(endpoints, path);
        let earlier = groups[..i]
            .iter()
            .find(|(_, p, _)| normalize(p) == normalize(path));
        let under = per_probe_tier(endpoints, path);
        let (with, fix) = match (collides, earlier, under) {
            (Some(e), _, _) => (
                format!("the `{e}` endpoint"),
                "give the group a path of its own, e.g. `/health/<group name>`",
            ),
            (None, Some((other, _, _)), _) => (
                format!("health group `{other}`"),
                "give each group a path of its own",
            ),
            (None, None, Some(t)) => (
                format!(
                    "the per-probe paths of the `{t}` tier (`{}/{{probe}}`)",
                    endpoints.get(t).trim_end_matches('/')
                ),
                "a group there would hide the probe of that name; put it beside the tiers, e.g. `/health/<group name>`",
            ),
            (None, None, None) => continue,
        };
        sink.push(
            Rule::GroupPath,
            loc.clone(),
            format!("{subject} collides with {with}"),
            fix,
        );
    }
}

/// R25: a health group selects `ready` or `active`, never `live`: `live`
/// carries no probes (ZB-1.3), so a group on it would always answer 200.
/// `tiers` are the tiers it lists, each where it was written.
pub fn check_group_tiers<L: Clone>(group: &str, tiers: &[(Tag, L)], sink: &mut Violations<L>) {
    for (_, loc) in tiers.iter().filter(|(tier, _)| *tier == Tag::Live) {
        sink.push(
            Rule::GroupOnLive,
            loc.clone(),
            format!("health group `{group}` selects the `live` tier"),
            "`live` runs no probes, so the group would always answer 200; select `ready` or `active`, or name the probes",
        );
    }
}
