//! The `observability` section: how the transition logs are rate-limited
//! (BE-HLTH-008), and where transitions are published.

use std::time::Duration;

use super::{Fields, Reader};
use crate::manifest::Located;

/// The keys of `observability`.
const OBSERVABILITY_KEYS: [&str; 2] = ["failure_log_interval", "webhook"];

impl Reader {
    /// `observability.failure_log_interval`: any duration; zero logs every
    /// failing run. `observability.webhook`: a URL
    /// [`check_webhook_url`](crate::webhook::check_webhook_url) accepts
    /// (R15 at the value otherwise).
    pub(super) fn observability(
        &mut self,
        top: &Fields,
    ) -> (Option<Located<Duration>>, Option<Located<String>>) {
        let Some(section) = self.section(top, "observability", &OBSERVABILITY_KEYS) else {
            return (None, None);
        };
        let failure_log_interval = self.value(&section, "failure_log_interval", Self::duration);
        let webhook = self.value(&section, "webhook", |r, what, node| {
            let url = r.string(what, node)?;
            crate::webhook::check_webhook_url(&url.value, url.location, &mut r.sink).then_some(url)
        });
        (failure_log_interval, webhook)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::Rule;
    use crate::manifest::{Located, Location, parse_manifest};

    #[test]
    fn the_webhook_url_is_read_and_a_bad_one_is_r15_at_the_value() {
        let m =
            parse_manifest("service: s\nobservability:\n  webhook: http://127.0.0.1:9093/hooks\n")
                .unwrap();
        assert_eq!(
            m.webhook.map(|w| w.value),
            Some("http://127.0.0.1:9093/hooks".to_owned())
        );
        let v = parse_manifest("service: s\nobservability: { webhook: https://alerts/x }\n")
            .unwrap_err();
        assert_eq!(v.len(), 1);
        assert_eq!(
            (v[0].rule, v[0].location),
            (
                Rule::ValueType,
                Location {
                    line: 2,
                    column: 27
                }
            )
        );
        assert!(
            v[0].message.contains("is an `https` URL"),
            "{}",
            v[0].message
        );
    }

    #[test]
    fn the_failure_log_interval_is_read_with_its_location() {
        let m = parse_manifest("service: s\nobservability:\n  failure_log_interval: 10m\n")
            .unwrap_or_else(|v| panic!("{v:#?}"));
        assert_eq!(
            m.failure_log_interval,
            Some(Located::new(
                Duration::from_secs(600),
                Location {
                    line: 3,
                    column: 25
                }
            ))
        );
        let zero = parse_manifest("service: s\nobservability: { failure_log_interval: 0s }\n");
        assert_eq!(
            zero.map(|m| m.failure_log_interval.map(|d| d.value)),
            Ok(Some(Duration::ZERO)),
            "zero is allowed: every failing run is logged"
        );
        for empty in ["service: s\n", "service: s\nobservability:\n"] {
            assert_eq!(parse_manifest(empty).unwrap().failure_log_interval, None);
        }
    }

    #[test]
    fn unknown_keys_and_malformed_intervals_are_reported() {
        let v =
            parse_manifest("service: s\nobservability: { failure_log_intervl: 1m }\n").unwrap_err();
        assert_eq!(v.len(), 1, "{v:#?}");
        assert_eq!(v[0].rule, Rule::Unknown);
        assert!(v[0].help.contains("failure_log_interval"), "{}", v[0].help);
        let v = parse_manifest("service: s\nobservability: { failure_log_interval: often }\n")
            .unwrap_err();
        assert_eq!(
            (v.len(), v[0].rule, v[0].location.line),
            (1, Rule::Duration, 2)
        );
    }
}
