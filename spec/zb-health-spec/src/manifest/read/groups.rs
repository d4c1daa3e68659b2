//! `groups`: named sets of probes, each at a path of its own, each rule
//! the shared function of `crate::rules` (R23, R24, R25).

use super::super::tree::Node;
use super::values::known_names;
use super::{Fields, Reader};
use crate::manifest::{GroupDecl, Located, Location, ProbeDecl};
use crate::{
    Disclosure, EndpointPaths, NameOf, Tag,
    rules::{check_group_paths, check_group_probes, check_group_tiers, check_name_of},
};

/// The keys of one group.
const GROUP_KEYS: [&str; 4] = ["path", "probes", "tiers", "disclosure"];

/// The help of a group's list that is not one.
const LIST_HELP: &str = "write a list, e.g. `[database, cache]`";

impl Reader {
    /// `groups`, read after `endpoints` (R24 compares the paths) and
    /// `probes` (R23 looks the names up; `None` when they could not be
    /// read, and then the names are not checked again).
    pub(super) fn groups(
        &mut self,
        top: &Fields,
        paths: &EndpointPaths,
        probes: Option<&[ProbeDecl]>,
    ) -> Vec<GroupDecl> {
        let Some(section) = top.get("groups") else {
            return Vec::new();
        };
        let pairs = self.entries(
            "`groups`",
            "a mapping of group names to groups",
            section.node,
            "write e.g. `groups: { canary: { path: /health/canary, probes: [database] } }`",
        );
        let mut groups = Vec::new();
        for (key, value) in pairs {
            let Some(name) = self.string("a health group name", key) else {
                continue;
            };
            check_name_of(NameOf::Group, &name.value, name.location, &mut self.sink);
            if let Some(group) = self.group(name, value) {
                groups.push(group);
            }
        }
        // Unknown with a name on an attribute: the runtime builder checks
        // the names then (R23 there).
        let known = known_names(probes);
        for group in &groups {
            let tiers: Vec<(Tag, Location)> = group.tiers.iter().map(|t| t.pair()).collect();
            check_group_tiers(&group.name.value, &tiers, &mut self.sink);
            if let Some(known) = &known {
                let names: Vec<(&str, Location)> = group.probes.iter().map(Located::text).collect();
                check_group_probes(
                    &group.name.value,
                    &names,
                    group.tiers.len(),
                    known.iter().copied(),
                    group.name.location,
                    &mut self.sink,
                );
            }
        }
        let located: Vec<(&str, &str, Location)> = groups
            .iter()
            .map(|g| (g.name.value.as_str(), &*g.path.value, g.path.location))
            .collect();
        check_group_paths(paths, &located, &mut self.sink);
        groups
    }

    /// One group: `path` (required, R11), `probes`, `tiers`, `disclosure`.
    fn group(&mut self, name: Located<String>, node: &Node) -> Option<GroupDecl> {
        let what = format!("health group `{}`", name.value);
        let fields = self.mapping(&what, node, &GROUP_KEYS)?;
        let missing = (
            format!("{what} has no `path`"),
            format!("add `path: /health/{}`, where it is served", name.value),
        );
        let path = self.required(&fields, "path", missing, |r, _, node| {
            r.string(&format!("the `path` of {what}"), node)
        });
        let probes = fields
            .get("probes")
            .map(|f| self.group_list(("probes", &what), f.node, Self::string))
            .unwrap_or_default();
        let tiers = fields
            .get("tiers")
            .map(|f| self.group_list(("tiers", &what), f.node, Self::keyword::<Tag>))
            .unwrap_or_default();
        let disclosure = fields.get("disclosure").and_then(|f| {
            self.keyword::<Disclosure>(&format!("the `disclosure` of {what}"), f.node)
        });
        Some(GroupDecl {
            name,
            path: path?,
            probes,
            tiers,
            disclosure,
        })
    }

    /// The `probes` or `tiers` of `group`: a list of names, each read by
    /// `read`.
    fn group_list<T>(
        &mut self,
        (key, group): (&str, &str),
        node: &Node,
        mut read: impl FnMut(&mut Self, &str, &Node) -> Option<T>,
    ) -> Vec<T> {
        let what = format!("the `{key}` of {group}");
        // `probes` lists probe names, `tiers` tier names.
        let expected = format!("a list of {} names", key.trim_end_matches('s'));
        let items = self.list(&what, &expected, node, LIST_HELP);
        let items = items.unwrap_or_default().iter();
        items.filter_map(|item| read(self, &what, item)).collect()
    }
}
