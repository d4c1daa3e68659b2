//! R6: the endpoint paths of the tiers and the startup path (ZB-5), and
//! what makes any path a plain one, for the groups' (R24) and the
//! history's paths too.

use super::rule::Rule;
use super::sink::Violations;
use crate::paths::{Endpoint, EndpointPaths};
use crate::tag::Tag;

/// R6: each endpoint path (the tiers', and the startup path) is non-empty,
/// absolute, and distinct from the others (ZB-5).
pub fn check_paths<L: Clone>(paths: &[(Endpoint, &str, L)], sink: &mut Violations<L>) {
    for (i, (tag, path, loc)) in paths.iter().enumerate() {
        if path.is_empty() {
            sink.push(
                Rule::EndpointPath,
                loc.clone(),
                format!("the `{tag}` endpoint path is empty"),
                format!(
                    "give it an absolute path such as `{}`",
                    EndpointPaths::zb().endpoint(*tag)
                ),
            );
            continue;
        }
        for (problem, fix) in path_problems(path) {
            let message = format!("the `{tag}` endpoint path `{path}` {problem}");
            sink.push(Rule::EndpointPath, loc.clone(), message, fix);
        }
        if let Some((other, _, _)) = paths[..i]
            .iter()
            .find(|(_, p, _)| normalize(p) == normalize(path))
        {
            sink.push(
                Rule::EndpointPath,
                loc.clone(),
                format!("the `{tag}` endpoint path `{path}` collides with the `{other}` endpoint"),
                "each tier needs its own path; an orchestrator could otherwise probe the wrong tier",
            );
        }
    }
}

/// Whether `path` is a plain absolute path, reporting under `rule` what
/// is wrong with it if not; `subject` names the path in the message
/// (``the path `/x` of health group `canary` ``).
pub(super) fn is_plain_path<L>(
    rule: Rule,
    subject: &str,
    path: &str,
    at: L,
    sink: &mut Violations<L>,
) -> bool {
    let empty = path.is_empty().then(|| {
        let fix = "give it an absolute path such as `/health/canary`";
        ("is empty", fix.to_owned())
    });
    let Some((problem, fix)) = empty.or_else(|| path_problems(path).next()) else {
        return true;
    };
    sink.push(rule, at, format!("{subject} {problem}"), fix);
    false
}

/// What is wrong with a non-empty `path` as a literal HTTP path: each
/// problem and its fix, as R6 words them for a tier.
fn path_problems(path: &str) -> impl Iterator<Item = (&'static str, String)> {
    let relative = !path.starts_with('/');
    let pattern = path.contains(|c: char| c.is_whitespace() || matches!(c, '{' | '}' | '?' | '#'));
    let fix = "use a literal path with no spaces, `{}` patterns, `?` or `#`";
    let relative = relative.then(|| ("does not start with `/`", format!("write `/{path}`")));
    relative
        .into_iter()
        .chain(pattern.then(|| ("is not a plain path", fix.to_owned())))
}

/// The endpoint (a tier, or the startup path) served at `path`.
pub(super) fn endpoint_at(endpoints: &EndpointPaths, path: &str) -> Option<Endpoint> {
    Endpoint::ALL
        .into_iter()
        .find(|e| normalize(endpoints.endpoint(*e)) == normalize(path))
}

/// The tier whose per-probe paths (`<ready or active path>/<name>`, one
/// segment) `path` is one of.
pub(super) fn per_probe_tier(endpoints: &EndpointPaths, path: &str) -> Option<Tag> {
    [Tag::Ready, Tag::Active].into_iter().find(|t| {
        let base = normalize(endpoints.get(*t)).trim_end_matches('/');
        normalize(path)
            .strip_prefix(base)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
    })
}

/// `p` without its trailing `/`s (`/` for the root), so `/a` and `/a/`
/// are one path.
pub(super) fn normalize(p: &str) -> &str {
    let t = p.trim_end_matches('/');
    if t.is_empty() { "/" } else { t }
}
