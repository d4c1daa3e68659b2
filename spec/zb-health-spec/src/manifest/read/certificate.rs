//! `kind: certificate`: its source, `path` (one PEM file or a list) or
//! `address` (a TLS server's `host:port`, with an optional `server_name`),
//! and its `warn_within` window
//! ([`parse_window`](crate::certificate::parse_window)), each mistake at
//! its value.

use std::time::Duration;

use super::super::tree::{Node, Value};
use super::{Fields, Reader};
use crate::certificate::{
    ADDRESS_SYNTAX, DEFAULT_WARN_WITHIN, SERVER_NAME_SYNTAX, WINDOW_SYNTAX, check_server_name,
    parse_address, parse_window,
};
use crate::manifest::{CertificateSource, Located, Location, ProbeKind};
use crate::{Rule, rules::missing_key};

/// The help of a `path` that is not a file name or a list of them.
const PATH_HELP: &str = "write the PEM file, e.g. `path: /etc/tls/tls.crt`, or a list of them, e.g. `path: [/etc/tls/tls.crt, /etc/tls/ca.crt]`";

impl Reader {
    /// One source (R11 for none, R7 for both): `path` (a file or a
    /// non-empty list of files, none empty, R15) or `address` (R15) with
    /// an optional `server_name` (R15; R4 beside `path`); `warn_within` (a
    /// window, R15).
    pub(super) fn certificate(
        &mut self,
        label: &str,
        fields: &Fields,
        at: Location,
    ) -> Option<ProbeKind> {
        let warn_within = match fields.get("warn_within") {
            None => Some(DEFAULT_WARN_WITHIN),
            Some(f) => self.window(&format!("`warn_within` of {label}"), f.node),
        };
        let server_name = fields.get("server_name").and_then(|f| {
            let what = format!("`server_name` of {label}");
            self.parsed((&what, "a DNS name", SERVER_NAME_SYNTAX), f.node, |t| {
                check_server_name(t).map(|()| t.to_owned())
            })
        });
        let source = match (fields.get("path"), fields.get("address")) {
            (Some(_), Some(address)) => {
                self.sink.push(
                    Rule::Contradiction,
                    address.key_loc,
                    format!("{label} has both `path` and `address`, and a certificate probe reads one source"),
                    "keep `path:` for PEM files (e.g. a mounted Secret's `tls.crt`) or `address:` for the chain a TLS server presents, not both",
                );
                None
            }
            (Some(path), None) => {
                if let Some(f) = fields.get("server_name") {
                    self.sink.push(
                        Rule::Unknown,
                        f.key_loc,
                        format!("`server_name` of {label} applies to an `address` source, and this probe reads `path`"),
                        "remove `server_name:`; a PEM file is read as it is",
                    );
                }
                self.pem_paths(label, path.node)
                    .map(CertificateSource::Files)
            }
            (None, Some(f)) => {
                let what = format!("`address` of {label}");
                let address =
                    self.parsed((&what, "a `host:port`", ADDRESS_SYNTAX), f.node, |t| {
                        parse_address(t).map(|_| t.to_owned())
                    })?;
                let server_name = match fields.get("server_name") {
                    Some(_) => Some(server_name?),
                    None => None,
                };
                Some(CertificateSource::Address {
                    address,
                    server_name,
                })
            }
            (None, None) => {
                missing_key(
                    format!("{label} has kind `certificate` but neither `path` nor `address`"),
                    "add `path:` with the PEM file of the certificate, e.g. `path: /etc/tls/tls.crt` (a mounted Secret's `tls.crt`), or `address:` with the TLS server whose chain to read, e.g. `address: shop.example.com:443`",
                    at,
                    &mut self.sink,
                );
                None
            }
        };
        Some(ProbeKind::Certificate {
            source: source?,
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
    use crate::manifest::{CertificateSource, ProbeKind, parse_manifest};

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

    fn read_source(probe_lines: &str) -> (CertificateSource, Duration) {
        let m = parse_manifest(&manifest(probe_lines)).unwrap_or_else(|v| panic!("{v:#?}"));
        let ProbeKind::Certificate {
            source,
            warn_within,
        } = &m.probes[0].kind
        else {
            panic!("{:?}", m.probes[0].kind)
        };
        (source.clone(), *warn_within)
    }

    fn read(probe_lines: &str) -> (Vec<String>, Duration) {
        let (CertificateSource::Files(paths), window) = read_source(probe_lines) else {
            panic!("not files: {probe_lines}")
        };
        (paths.iter().map(|p| p.value.clone()).collect(), window)
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
    fn an_address_with_or_without_a_server_name() {
        let (source, window) =
            read_source("    address: shop.example.com:8443\n    warn_within: 7d\n");
        let CertificateSource::Address {
            address,
            server_name,
        } = source
        else {
            panic!("{source:?}")
        };
        assert_eq!(address.value, "shop.example.com:8443");
        assert_eq!(address.location.to_string(), "5:14");
        assert_eq!(server_name, None);
        assert_eq!(window, Duration::from_secs(7 * 86_400));
        let (source, _) = read_source("    address: 10.0.0.7\n    server_name: shop.example.com\n");
        let CertificateSource::Address { server_name, .. } = source else {
            panic!("{source:?}")
        };
        assert_eq!(
            server_name.map(|n| n.value).as_deref(),
            Some("shop.example.com")
        );
    }

    #[test]
    fn a_bad_address_or_server_name_is_refused_at_its_value() {
        let (rule, at, message, help) = only("    address: https://shop:443\n");
        assert_eq!((rule, at.as_str()), (Rule::ValueType, "5:14"));
        assert!(message.contains("`address` of probe `tls`"), "{message}");
        assert!(message.contains("is a URL"), "{message}");
        assert!(help.contains("host:port"), "{help}");
        let (rule, at, message, help) = only("    address: shop:443\n    server_name: -shop\n");
        assert_eq!((rule, at.as_str()), (Rule::ValueType, "6:18"));
        assert!(
            message.contains("`server_name` of probe `tls`"),
            "{message}"
        );
        assert!(help.contains("DNS name"), "{help}");
    }

    #[test]
    fn one_source_only_and_server_name_only_with_an_address() {
        let (rule, at, message, _) = only("    path: /tls.crt\n    address: example.org:443\n");
        assert_eq!((rule, at.as_str()), (Rule::Contradiction, "6:5"));
        assert!(message.contains("both `path` and `address`"), "{message}");
        let (rule, at, message, _) = only("    path: /tls.crt\n    server_name: shop\n");
        assert_eq!((rule, at.as_str()), (Rule::Unknown, "6:5"));
        assert!(
            message.contains("applies to an `address` source"),
            "{message}"
        );
    }

    #[test]
    fn path_is_required_and_never_empty() {
        let (rule, at, message, _) = only("    warn_within: 14d\n");
        assert_eq!((rule, at.as_str()), (Rule::MissingKey, "3:5"));
        assert!(
            message.contains("neither `path` nor `address`"),
            "{message}"
        );
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
