//! `kind: certificate`: its `path` (one PEM file or a list) and its
//! `warn_within` window ([`parse_window`](crate::certificate::parse_window)),
//! each mistake at its value; `address` is reserved for the planned
//! `host:port` source and refused at its key.

use std::time::Duration;

use super::super::tree::{Node, Value};
use super::{Fields, Reader};
use crate::certificate::{
    ADDRESS_HELP, ADDRESS_PLANNED, DEFAULT_WARN_WITHIN, WINDOW_SYNTAX, parse_window,
};
use crate::manifest::{Located, Location, ProbeKind};
use crate::{Rule, rules::missing_key};

/// The help of a `path` that is not a file name or a list of them.
const PATH_HELP: &str = "write the PEM file, e.g. `path: /etc/tls/tls.crt`, or a list of them, e.g. `path: [/etc/tls/tls.crt, /etc/tls/ca.crt]`";

impl Reader {
    /// `path` (required, R11; a file or a non-empty list of files, none
    /// empty, R15), `warn_within` (a window, R15), and R4 for `address`,
    /// which is planned.
    pub(super) fn certificate(
        &mut self,
        label: &str,
        fields: &Fields,
        at: Location,
    ) -> Option<ProbeKind> {
        let address = fields.get("address");
        if let Some(f) = address {
            self.sink.push(
                Rule::Unknown,
                f.key_loc,
                format!("`address` of {label} {ADDRESS_PLANNED}"),
                ADDRESS_HELP,
            );
        }
        let warn_within = match fields.get("warn_within") {
            None => Some(DEFAULT_WARN_WITHIN),
            Some(f) => self.window(&format!("`warn_within` of {label}"), f.node),
        };
        let paths = match fields.get("path") {
            Some(f) => self.pem_paths(label, f.node),
            // The `address` error already says to write `path:`.
            None if address.is_some() => None,
            None => {
                missing_key(
                    format!("{label} has kind `certificate` but no `path`"),
                    "add `path:` with the PEM file of the certificate, e.g. `path: /etc/tls/tls.crt` (a mounted Secret's `tls.crt`)",
                    at,
                    &mut self.sink,
                );
                None
            }
        };
        if address.is_some() {
            return None;
        }
        Some(ProbeKind::Certificate {
            paths: paths?,
            warn_within: warn_within?,
        })
    }

    /// `path`: one file name, or a list of at least one; none empty.
    fn pem_paths(&mut self, label: &str, node: &Node) -> Option<Vec<Located<String>>> {
        let what = format!("`path` of {label}");
        let items = match &node.value {
            Value::Str(_) => std::slice::from_ref(node),
            Value::Seq(items) if !items.is_empty() => items.as_slice(),
            Value::Seq(_) => {
                self.sink.push(
                    Rule::ValueType,
                    node.loc,
                    format!("{what} is an empty list"),
                    PATH_HELP,
                );
                return None;
            }
            _ => {
                self.wrong_type(&what, "a file name or a list of them", node, PATH_HELP);
                return None;
            }
        };
        let mut paths = Vec::with_capacity(items.len());
        let mut valid = true;
        for item in items {
            match self.string(&what, item) {
                Some(p) if p.value.trim().is_empty() => {
                    self.sink.push(
                        Rule::ValueType,
                        p.location,
                        format!("{what} is empty"),
                        PATH_HELP,
                    );
                    valid = false;
                }
                Some(p) => paths.push(p),
                None => valid = false,
            }
        }
        valid.then_some(paths)
    }

    /// A warning window: a string in the one syntax (R15 otherwise).
    fn window(&mut self, what: &str, node: &Node) -> Option<Duration> {
        let expected = "a number of days or hours";
        let window = self.parsed((what, expected, WINDOW_SYNTAX), node, parse_window)?;
        Some(window.value)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::Rule;
    use crate::certificate::DEFAULT_WARN_WITHIN;
    use crate::manifest::{ProbeKind, parse_manifest};

    /// A manifest with one probe, written in block style from line 3.
    fn manifest(probe_lines: &str) -> String {
        format!("service: s\nprobes:\n  - name: tls\n    kind: certificate\n{probe_lines}")
    }

    /// Every violation: rule, line:column, message and help.
    fn violations(probe_lines: &str) -> Vec<(Rule, String, String, String)> {
        let v = parse_manifest(&manifest(probe_lines)).expect_err("a violation");
        v.iter()
            .map(|v| {
                let at = v.location.to_string();
                (v.rule, at, v.message.clone(), v.help.clone())
            })
            .collect()
    }

    fn only(probe_lines: &str) -> (Rule, String, String, String) {
        let mut v = violations(probe_lines);
        assert_eq!(v.len(), 1, "{v:#?}");
        v.remove(0)
    }

    fn read(probe_lines: &str) -> (Vec<String>, Duration) {
        let m = parse_manifest(&manifest(probe_lines)).unwrap_or_else(|v| panic!("{v:#?}"));
        let ProbeKind::Certificate { paths, warn_within } = &m.probes[0].kind else {
            panic!("{:?}", m.probes[0].kind)
        };
        (
            paths.iter().map(|p| p.value.clone()).collect(),
            *warn_within,
        )
    }

    #[test]
    fn one_file_or_a_list_and_the_default_window() {
        let (paths, window) = read("    path: /etc/tls/tls.crt\n");
        assert_eq!(
            (paths, window),
            (vec!["/etc/tls/tls.crt".into()], DEFAULT_WARN_WITHIN)
        );
        let (paths, window) = read("    path: [leaf.pem, ca.pem]\n    warn_within: 36h\n");
        assert_eq!(paths, ["leaf.pem", "ca.pem"]);
        assert_eq!(window, Duration::from_secs(36 * 3600));
    }

    #[test]
    fn a_bad_window_is_refused_at_its_value_with_the_syntax() {
        let (rule, at, message, help) = only("    path: /tls.crt\n    warn_within: 2w\n");
        assert_eq!((rule, at.as_str()), (Rule::ValueType, "6:18"));
        assert!(
            message.contains("`warn_within` of probe `tls`"),
            "{message}"
        );
        assert!(message.contains("unknown unit `w`"), "{message}");
        assert!(help.contains("warn_within: 14d"), "{help}");
        let (rule, at, message, _) = only("    path: /tls.crt\n    warn_within: 14\n");
        assert_eq!((rule, at.as_str()), (Rule::ValueType, "6:18"));
        assert!(
            message.contains("must be a number of days or hours"),
            "{message}"
        );
    }

    #[test]
    fn address_is_planned_and_refused_at_its_key() {
        let (rule, at, message, help) = only("    address: example.org:443\n");
        assert_eq!((rule, at.as_str()), (Rule::Unknown, "5:5"));
        assert!(message.contains("`address` of probe `tls`"), "{message}");
        assert!(message.contains("planned"), "{message}");
        assert!(help.contains("path:"), "{help}");
        // Beside a path, still refused.
        let (rule, at, _, _) = only("    path: /tls.crt\n    address: example.org:443\n");
        assert_eq!((rule, at.as_str()), (Rule::Unknown, "6:5"));
    }

    #[test]
    fn path_is_required_and_never_empty() {
        let (rule, at, message, _) = only("    warn_within: 14d\n");
        assert_eq!((rule, at.as_str()), (Rule::MissingKey, "3:5"));
        assert!(message.contains("no `path`"), "{message}");
        let (rule, at, message, _) = only("    path: []\n");
        assert_eq!((rule, at.as_str()), (Rule::ValueType, "5:11"));
        assert!(message.contains("empty list"), "{message}");
        let (rule, at, _, _) = only("    path: [a.pem, '']\n");
        assert_eq!((rule, at.as_str()), (Rule::ValueType, "5:19"));
        let (rule, at, message, _) = only("    path: 3\n");
        assert_eq!((rule, at.as_str()), (Rule::ValueType, "5:11"));
        assert!(
            message.contains("a file name or a list of them"),
            "{message}"
        );
        // The disk options are not a certificate's.
        let (rule, _, message, _) = only("    path: /tls.crt\n    degraded_below: 10%\n");
        assert_eq!(rule, Rule::Unknown, "{message}");
    }
}
