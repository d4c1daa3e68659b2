//! `kind: disk`: its `path` and its free-space levels
//! ([`FreeSpace`](crate::disk::FreeSpace)), each mistake at its value.

use super::super::tree::Node;
use super::{Fields, Reader};
use crate::disk::{FREE_SPACE_SYNTAX, FreeSpace};
use crate::manifest::{Located, Location, ProbeKind};
use crate::{Rule, rules::missing_key};

impl Reader {
    /// `path` (required, R11, not empty), `degraded_below` and
    /// `unhealthy_below` (at least one, R11; each a level, R15), and R7
    /// when the unhealthy level leaves no room for `Degraded`.
    pub(super) fn disk(&mut self, label: &str, fields: &Fields, at: Location) -> Option<ProbeKind> {
        let path = match fields.get("path") {
            Some(f) => self.disk_path(label, f.node),
            None => {
                missing_key(
                    format!("{label} has kind `disk` but no `path`"),
                    "add `path:` with a directory on the filesystem to watch, e.g. `path: /var/lib/app`",
                    at,
                    &mut self.sink,
                );
                None
            }
        };
        let degraded_field = fields.get("degraded_below");
        let unhealthy_field = fields.get("unhealthy_below");
        if degraded_field.is_none() && unhealthy_field.is_none() {
            missing_key(
                format!(
                    "{label} has kind `disk` but neither `degraded_below` nor `unhealthy_below`"
                ),
                "add the free space below which it is unhealthy, degraded or both, e.g. `degraded_below: 10%` and `unhealthy_below: 500MiB`",
                at,
                &mut self.sink,
            );
        }
        let mut level = |key: &str| {
            fields
                .get(key)
                .map(|f| self.free_space(&format!("`{key}` of {label}"), f.node))
        };
        let degraded_below = level("degraded_below");
        let unhealthy_below = level("unhealthy_below");
        if let (Some(Some(d)), Some(Some(u))) = (degraded_below, unhealthy_below)
            && !FreeSpace::leaves_room_for_degraded(d.value, u.value)
        {
            self.sink.push(
                Rule::Contradiction,
                u.location,
                format!(
                    "`unhealthy_below: {}` of {label} is not below its `degraded_below: {}`, so it would never be `Degraded`",
                    u.value, d.value
                ),
                "set `unhealthy_below` lower than `degraded_below`, or remove `degraded_below`",
            );
            return None;
        }
        // An invalid level was reported; do not build the probe without it.
        let (Some(degraded_below), Some(unhealthy_below)) = (
            degraded_below.map_or(Some(None), |l| l.map(Some)),
            unhealthy_below.map_or(Some(None), |l| l.map(Some)),
        ) else {
            return None;
        };
        if degraded_below.is_none() && unhealthy_below.is_none() {
            return None;
        }
        Some(ProbeKind::Disk {
            path: path?,
            degraded_below,
            unhealthy_below,
        })
    }

    /// `path`: a string, not empty.
    fn disk_path(&mut self, label: &str, node: &Node) -> Option<Located<String>> {
        let path = self.string(&format!("`path` of {label}"), node)?;
        if path.value.trim().is_empty() {
            self.sink.push(
                Rule::ValueType,
                path.location,
                format!("`path` of {label} is empty"),
                "write the directory to watch, e.g. `path: /var/lib/app`",
            );
            return None;
        }
        Some(path)
    }

    /// A free-space level: a string in the one syntax (R15 otherwise).
    fn free_space(&mut self, what: &str, node: &Node) -> Option<Located<FreeSpace>> {
        let expected = "a share or an amount of bytes";
        self.parsed((what, expected, FREE_SPACE_SYNTAX), node, FreeSpace::parse)
    }
}

#[cfg(test)]
mod tests {
    use crate::disk::FreeSpace;
    use crate::manifest::{Located, Location, ProbeKind, parse_manifest};
    use crate::{Rule, TagSet};

    /// A manifest with one probe, written in block style from line 3.
    fn manifest(probe_lines: &str) -> String {
        format!("service: s\nprobes:\n  - name: data\n    kind: disk\n{probe_lines}")
    }

    /// The one violation: rule, line:column, message and help.
    fn only(probe_lines: &str) -> (Rule, String, String, String) {
        let v = parse_manifest(&manifest(probe_lines)).expect_err("a violation");
        assert_eq!(v.len(), 1, "{v:#?}");
        let v = &v[0];
        (
            v.rule,
            v.location.to_string(),
            v.message.clone(),
            v.help.clone(),
        )
    }

    #[test]
    fn a_disk_probe_reads_its_path_and_levels_on_ready() {
        let m = parse_manifest(&manifest(
            "    path: /var/lib/app\n    degraded_below: 10%\n    unhealthy_below: 500MiB\n",
        ))
        .unwrap_or_else(|v| panic!("{v:#?}"));
        let p = &m.probes[0];
        let ProbeKind::Disk {
            path,
            degraded_below,
            unhealthy_below,
        } = &p.kind
        else {
            panic!("{:?}", p.kind)
        };
        assert_eq!(path.value, "/var/lib/app");
        let at = |line, column| Location { line, column };
        assert_eq!(
            *degraded_below,
            Some(Located::new(FreeSpace::percent(10), at(6, 21)))
        );
        assert_eq!(
            unhealthy_below.map(|u| u.value),
            Some(FreeSpace::Bytes(500 << 20))
        );
        assert_eq!(p.effective_tags(), Some(TagSet::READY));
    }

    #[test]
    fn a_share_above_100_is_refused_at_its_value_with_the_syntax() {
        let (rule, at, message, help) = only("    path: /data\n    degraded_below: 120%\n");
        assert_eq!((rule, at.as_str()), (Rule::ValueType, "6:21"));
        assert!(
            message.contains("`degraded_below` of probe `data`"),
            "{message}"
        );
        assert!(
            message.contains("`120%` is not a share from `0%` to `100%`"),
            "{message}"
        );
        assert!(
            help.contains("e.g. `10%`") && help.contains("`500MiB`"),
            "{help}"
        );
    }

    #[test]
    fn a_byte_level_without_unit_or_a_number_is_refused() {
        let (rule, at, message, _) = only("    path: /data\n    unhealthy_below: 500\n");
        assert_eq!((rule, at.as_str()), (Rule::ValueType, "6:22"));
        assert!(
            message.contains("must be a share or an amount of bytes"),
            "{message}"
        );
        let (rule, at, message, _) = only("    path: /data\n    unhealthy_below: 5 mb\n");
        assert_eq!((rule, at.as_str()), (Rule::ValueType, "6:22"));
        assert!(message.contains("unknown unit `mb`"), "{message}");
    }

    #[test]
    fn an_unhealthy_level_not_below_degraded_is_a_contradiction_at_it() {
        let (rule, at, message, help) =
            only("    path: /data\n    degraded_below: 5%\n    unhealthy_below: 10%\n");
        assert_eq!((rule, at.as_str()), (Rule::Contradiction, "7:22"));
        assert!(message.contains("would never be `Degraded`"), "{message}");
        assert!(help.contains("lower than `degraded_below`"), "{help}");
        // A share and bytes are compared at run time only.
        parse_manifest(&manifest(
            "    path: /data\n    degraded_below: 1GiB\n    unhealthy_below: 10%\n",
        ))
        .unwrap_or_else(|v| panic!("{v:#?}"));
    }

    #[test]
    fn path_and_a_level_are_required_and_options_stay_on_disk() {
        let (rule, at, message, _) = only("    degraded_below: 10%\n");
        assert_eq!((rule, at.as_str()), (Rule::MissingKey, "3:5"));
        assert!(message.contains("no `path`"), "{message}");
        let (rule, at, message, _) = only("    path: /data\n");
        assert_eq!((rule, at.as_str()), (Rule::MissingKey, "3:5"));
        assert!(
            message.contains("neither `degraded_below` nor `unhealthy_below`"),
            "{message}"
        );
        let (rule, at, _, _) = only("    path: ''\n    degraded_below: 10%\n");
        assert_eq!((rule, at.as_str()), (Rule::ValueType, "5:11"));
        let v =
            parse_manifest("service: s\nprobes:\n  - { name: db, kind: database, path: /data }\n")
                .expect_err("path on a database probe");
        assert_eq!(v[0].rule, Rule::Unknown, "{v:#?}");
        assert!(
            v[0].help.contains("`disk` and `certificate` probes only"),
            "{v:#?}"
        );
    }
}
