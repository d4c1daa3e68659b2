//! `kind: redis`: its `url` ([`crate::redis::parse_url`]), the mistake at
//! its value.

use super::{Fields, Reader};
use crate::manifest::ProbeKind;
use crate::vocab::Kind;

impl Reader {
    /// `url`: required (R11), and one the Redis probe can connect to (R15).
    pub(super) fn redis(&mut self, fields: &Fields) -> Option<ProbeKind> {
        let url = self.url(
            Kind::Redis,
            fields,
            "add `url: redis://host:6379`, the Redis server to `PING`",
            |u| crate::redis::parse_url(u).map(drop),
        )?;
        Some(ProbeKind::Redis { url })
    }
}

#[cfg(test)]
mod tests {
    use crate::Rule;
    use crate::manifest::{ProbeKind, parse_manifest};
    use crate::{FailureStatus, TagSet};

    /// A manifest with one Redis probe, written in block style from line 3.
    fn manifest(probe_lines: &str) -> String {
        format!("service: s\nprobes:\n  - name: cache\n    kind: redis\n{probe_lines}")
    }

    #[test]
    fn a_redis_probe_reads_its_url_on_ready() {
        let m = parse_manifest(&manifest(
            "    url: redis://app:pw@cache:6379/2\n    failure_status: degraded\n",
        ))
        .unwrap_or_else(|v| panic!("{v:#?}"));
        let p = &m.probes[0];
        let ProbeKind::Redis { url } = &p.kind else {
            panic!("{:?}", p.kind)
        };
        assert_eq!(url.value, "redis://app:pw@cache:6379/2");
        assert_eq!(url.location.to_string(), "5:10");
        assert_eq!(p.effective_tags(), Some(TagSet::READY));
        assert_eq!(
            p.failure_status.map(|f| f.value),
            Some(FailureStatus::Degraded)
        );
    }

    #[test]
    fn a_bad_url_is_refused_at_its_value_without_its_password() {
        let v = parse_manifest(&manifest("    url: rediss://app:s3cret@cache:6380\n"))
            .expect_err("a violation");
        assert_eq!(v.len(), 1, "{v:#?}");
        let v = &v[0];
        assert_eq!(
            (v.rule, v.location.to_string()),
            (Rule::ValueType, "5:10".to_owned())
        );
        assert!(
            v.message
                .contains("`rediss://app:***@cache:6380`, is a `rediss` (TLS) URL"),
            "{}",
            v.message
        );
        assert!(!v.message.contains("s3cret") && !v.help.contains("s3cret"));
    }

    #[test]
    fn a_missing_url_or_an_http_option_is_refused_with_the_fix() {
        let v = parse_manifest(&manifest("    timeout: 1s\n")).expect_err("no url");
        assert_eq!((v[0].rule, v.len()), (Rule::MissingKey, 1), "{v:#?}");
        assert!(
            v[0].message.contains("kind `redis` but no `url`"),
            "{}",
            v[0].message
        );
        assert!(
            v[0].help.contains("url: redis://host:6379"),
            "{}",
            v[0].help
        );
        let v = parse_manifest(&manifest("    url: redis://h\n    status: 200\n"))
            .expect_err("status is http's");
        assert!(
            v[0].message.contains("`status` does not apply"),
            "{}",
            v[0].message
        );
    }
}
