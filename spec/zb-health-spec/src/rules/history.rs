//! Where the history is served: R26, a port for it, and R6 for its
//! paths.

use super::paths::{endpoint_at, is_plain_path, normalize, per_probe_tier};
use super::rule::Rule;
use super::sink::Violations;
use crate::paths::EndpointPaths;

/// R26: the history (`history` in a manifest) is served on the
/// management port, and on the application port only when asked for; with
/// neither there is nowhere to serve it. `at` is the `history` key.
pub fn check_history_port<L: Clone>(
    management_port: bool,
    application_port: bool,
    at: L,
    sink: &mut Violations<L>,
) {
    if !management_port && !application_port {
        sink.push(
            Rule::HistoryNeedsAPort,
            at,
            "`history` is served on the management port, and this manifest has no `management.port`",
            "add `management: { port: 8081 }`, or write `history: { application_port: true }` to serve it beside the tiers",
        );
    }
}

/// R6 for the history's paths: `paths` are `(what, path,
/// location)`, `what` naming the endpoint (`history`, `ui`). Each is a
/// plain absolute path, distinct from the other, from every tier's and
/// the startup path, from every health group's (`groups`), and from every
/// per-probe path, which it would hide.
pub fn check_history_paths<L: Clone>(
    endpoints: &EndpointPaths,
    groups: &[&str],
    paths: &[(&str, &str, L)],
    sink: &mut Violations<L>,
) {
    for (i, (what, path, loc)) in paths.iter().enumerate() {
        let p = normalize(path);
        let subject = format!("the `{what}` endpoint path `{path}`");
        if !is_plain_path(Rule::EndpointPath, &subject, path, loc.clone(), sink) {
            continue;
        }
        let endpoint = endpoint_at(endpoints, path).map(|e| format!("the `{e}` endpoint"));
        let group = groups
            .iter()
            .find(|g| normalize(g) == p)
            .map(|g| format!("the health group at `{g}`"));
        let earlier = paths[..i]
            .iter()
            .find(|(_, q, _)| normalize(q) == p)
            .map(|(w, _, _)| format!("the `{w}` endpoint"));
        let under = per_probe_tier(endpoints, path)
            .map(|t| format!("the per-probe paths of the `{t}` tier"));
        if let Some(with) = endpoint.or(group).or(earlier).or(under) {
            sink.push(
                Rule::EndpointPath,
                loc.clone(),
                format!("{subject} collides with {with}"),
                "give it a path of its own, e.g. `/health/history` and `/health/ui`",
            );
        }
    }
}
