//! Dependencies between probes (`depends_on`): R21, each names another
//! probe, and R22, they form no cycle.

use super::rule::Rule;
use super::sink::Violations;
use crate::suggest::{did_you_mean, hint, one_of};

/// One probe's `depends_on`, as [`check_dependencies`] reads it.
#[derive(Debug, Clone)]
pub struct Dependent<'a, L> {
    /// The probe's name, which others' `depends_on` can name; `None` for
    /// one whose name is not known here (a manifest's `kind: custom`
    /// entry without `name:`, named by its attribute): its own list is
    /// still checked, but nothing can depend on it.
    pub name: Option<&'a str>,
    /// How messages call the probe: its name, or its type.
    pub label: &'a str,
    /// The names it depends on, each where it is written.
    pub depends_on: Vec<(&'a str, L)>,
}

/// R21 and R22: every name in a `depends_on` is another
/// probe of the same registry, in any tier (R21, at the name, with a
/// "did you mean"), and the dependencies form no cycle (R22: a probe
/// that depends on itself, at the name, or a longer cycle, at the name
/// that closes it, with the cycle's path `a -> b -> a`). A cycle is
/// reported once, found by a depth-first walk in the probes' order.
pub fn check_dependencies<L: Clone>(probes: &[Dependent<'_, L>], sink: &mut Violations<L>) {
    let names: Vec<&str> = probes.iter().filter_map(|p| p.name).collect();
    let index = |name: &str| probes.iter().position(|p| p.name == Some(name));
    for p in probes {
        for (dep, at) in &p.depends_on {
            if p.name == Some(*dep) {
                sink.push(
                    Rule::DependencyCycle,
                    at.clone(),
                    format!("probe `{}` depends on itself", p.label),
                    DEPENDENCY_CYCLE_HELP,
                );
            } else if index(dep).is_none() {
                let others: Vec<&str> = names
                    .iter()
                    .copied()
                    .filter(|n| Some(*n) != p.name)
                    .collect();
                let known = if others.is_empty() {
                    "there is no other probe".to_owned()
                } else {
                    format!("the other probes are {}", one_of(&others))
                };
                sink.push(
                    Rule::UnknownDependency,
                    at.clone(),
                    format!("probe `{}` depends on `{dep}`, which is not a probe here", p.label),
                    format!(
                        "`depends_on` names other probes by their `name`, registered before or with this one (a `kind: custom` entry of a manifest once it has a `name:`); {known}{}",
                        hint(did_you_mean(dep, others.iter().copied()))
                    ),
                );
            }
        }
    }
    // Depth-first, three colours: a name met again while still on the
    // walk closes a cycle.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut marks = vec![Mark::New; probes.len()];
    for start in 0..probes.len() {
        if marks[start] != Mark::New {
            continue;
        }
        // The walk: each probe on it and the next of its dependencies.
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        marks[start] = Mark::OnPath;
        while let Some(&mut (at, ref mut next)) = path.last_mut() {
            let Some((dep, loc)) = probes[at].depends_on.get(*next) else {
                marks[at] = Mark::Done;
                path.pop();
                continue;
            };
            *next += 1;
            let Some(to) = index(dep).filter(|&to| to != at) else {
                continue;
            };
            match marks[to] {
                Mark::New => {
                    marks[to] = Mark::OnPath;
                    path.push((to, 0));
                }
                Mark::OnPath => {
                    let from = path.iter().position(|(i, _)| *i == to).unwrap_or(0);
                    let cycle: Vec<&str> = path[from..]
                        .iter()
                        .map(|(i, _)| probes[*i].label)
                        .chain([probes[to].label])
                        .collect();
                    sink.push(
                        Rule::DependencyCycle,
                        loc.clone(),
                        format!(
                            "the dependencies of probe `{}` form a cycle: {}",
                            probes[at].label,
                            cycle.join(" -> ")
                        ),
                        DEPENDENCY_CYCLE_HELP,
                    );
                }
                Mark::Done => {}
            }
        }
    }
}

/// Help for R22, a dependency cycle.
pub const DEPENDENCY_CYCLE_HELP: &str = "a dependency is evaluated before its dependent, so a cycle has no first probe; remove one `depends_on` entry of the cycle (a probe never needs to depend on itself)";
