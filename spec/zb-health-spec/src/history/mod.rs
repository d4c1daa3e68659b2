//! The health page (`spec/history.md`): one self-contained HTML
//! document, inline CSS and script only, that reads the history document
//! (`spec/health-history.schema.json`) from the sibling path `history`.
//! zb-health serves it at `/health/ui`, the CLI's dashboard at `/ui`.
//!
//! And the delta form of the document (`?since=`), whose two halves (the
//! service that answers it and the dashboard that asks for it) must agree
//! on the query and on the cluster's digest: both are here, once.

/// The page, embedded at build time: no CDN, no web font, no build step.
pub const PAGE: &str = include_str!("page.html");

/// What a reader already holds, sent as `?since=MS[&cluster=DIGEST]`: the
/// document then carries only what was recorded at or after `since_ms`,
/// and no cluster when the reader's [`cluster_digest`] is still the one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Since {
    /// Unix epoch milliseconds: the `nowMs` of the last document read.
    pub since_ms: u64,
    /// The [`cluster_digest`] of the `cluster` the reader holds.
    pub cluster: Option<String>,
}

impl Since {
    /// The delta asked for by a query string (`since=…&cluster=…`, in any
    /// order, other parameters ignored): `Ok(None)` without `since`, and
    /// an error naming the parameter and its form for a bad value.
    pub fn from_query(query: &str) -> Result<Option<Since>, String> {
        let mut since = None;
        let mut cluster = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "since" => {
                    since = Some(value.parse::<u64>().map_err(|_| {
                        format!(
                            "since: {value:?} is not Unix epoch milliseconds (e.g. since=1764790000000)"
                        )
                    })?);
                }
                "cluster" => {
                    if value.len() != 16 || !value.bytes().all(|b| b.is_ascii_hexdigit()) {
                        return Err(format!(
                            "cluster: {value:?} is not a cluster digest (16 hex digits, from the last document)"
                        ));
                    }
                    cluster = Some(value.to_ascii_lowercase());
                }
                _ => {}
            }
        }
        match (since, cluster) {
            (Some(since_ms), cluster) => Ok(Some(Since { since_ms, cluster })),
            (None, Some(_)) => Err("cluster: only with since=".into()),
            (None, None) => Ok(None),
        }
    }

    /// The query string that asks for this delta.
    pub fn to_query(&self) -> String {
        match &self.cluster {
            Some(digest) => format!("since={}&cluster={digest}", self.since_ms),
            None => format!("since={}", self.since_ms),
        }
    }
}

/// The digest of a document's `cluster` value, from its exact JSON text:
/// 64-bit FNV-1a, as 16 lowercase hex digits. Not a security measure: a
/// reader that sends it back gets no cluster while it is still the same.
pub fn cluster_digest(cluster_json: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in cluster_json.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_query_reads_back_what_it_wrote() {
        let since = Since {
            since_ms: 1_764_790_000_000,
            cluster: Some(cluster_digest("{\"members\":[]}")),
        };
        assert_eq!(Since::from_query(&since.to_query()), Ok(Some(since)));
        assert_eq!(Since::from_query(""), Ok(None));
        assert_eq!(Since::from_query("verbose"), Ok(None));
        assert_eq!(
            Since::from_query("x=1&since=5"),
            Ok(Some(Since {
                since_ms: 5,
                cluster: None
            }))
        );
    }

    #[test]
    fn a_bad_delta_query_names_its_parameter() {
        for (query, start) in [
            ("since=", "since: "),
            ("since=-1", "since: "),
            ("since=1.5", "since: "),
            ("since=1&cluster=xyz", "cluster: "),
            ("cluster=0123456789abcdef", "cluster: only with since="),
        ] {
            let why = Since::from_query(query).unwrap_err();
            assert!(why.starts_with(start), "{query}: {why}");
        }
    }

    #[test]
    fn the_digest_is_fnv1a() {
        // The published FNV-1a 64 test vectors.
        assert_eq!(cluster_digest(""), "cbf29ce484222325");
        assert_eq!(cluster_digest("a"), "af63dc4c8601ec8c");
        assert_eq!(cluster_digest("foobar"), "85944171f73967e8");
    }
}
