//! The tier endpoints' query, as kube-apiserver's `/readyz?verbose` and
//! `?exclude=NAME`: one reading for the runtime that answers it and the
//! CLI that writes it into a probe's path.

use crate::upstream::percent_decode;

/// The most `exclude` values read from one query; the rest are ignored.
/// A probe path names a few, an emergency one or two.
pub const MAX_EXCLUDED: usize = 64;

/// What a tier request's query asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TierQuery {
    /// `?verbose`: the plain-text answer, one line per check.
    pub verbose: bool,
    /// `?exclude=NAME`, repeatable: checks left out of the verdict, in the
    /// order given, each once.
    pub exclude: Vec<String>,
}

impl TierQuery {
    /// Reads a query string (without the `?`). Unknown parameters are
    /// ignored, as a server ignores them; `verbose` counts with or without
    /// a value (`?verbose`, `?verbose=1`), except `verbose=false` and
    /// `verbose=0`. A value that is not valid percent-encoded UTF-8 is
    /// kept as written, so it is reported as matching no check.
    pub fn parse(query: &str) -> TierQuery {
        let mut parsed = TierQuery::default();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "verbose" => parsed.verbose = !matches!(value, "false" | "0"),
                "exclude" if parsed.exclude.len() < MAX_EXCLUDED => {
                    let name = percent_decode(value, true).unwrap_or_else(|| value.to_owned());
                    if !name.is_empty() && !parsed.exclude.contains(&name) {
                        parsed.exclude.push(name);
                    }
                }
                _ => {}
            }
        }
        parsed
    }

    /// Whether it asks for nothing beyond the plain answer.
    pub fn is_plain(&self) -> bool {
        !self.verbose && self.exclude.is_empty()
    }
}

/// `exclude=a&exclude=b`: the query that leaves `names` out of a tier's
/// verdict (names are R9 identifiers, which need no escaping).
pub fn exclude_query<S: AsRef<str>>(names: &[S]) -> String {
    names
        .iter()
        .map(|n| format!("exclude={}", n.as_ref()))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbose_and_repeated_excludes_are_read_and_the_rest_ignored() {
        let q = TierQuery::parse("verbose&exclude=cache&foo=1&exclude=db&exclude=cache");
        assert!(q.verbose);
        assert_eq!(q.exclude, ["cache", "db"]);
        assert!(TierQuery::parse("").is_plain());
        assert!(TierQuery::parse("foo=bar").is_plain());
        assert!(TierQuery::parse("verbose=false").is_plain());
        assert!(TierQuery::parse("verbose=1").verbose);
        assert_eq!(TierQuery::parse("exclude=a%2Db").exclude, ["a-b"]);
        assert_eq!(TierQuery::parse("exclude=%zz").exclude, ["%zz"]);
        assert_eq!(TierQuery::parse("exclude=").exclude, Vec::<String>::new());
        let many = (0..100)
            .map(|i| format!("exclude=p{i}"))
            .collect::<Vec<_>>()
            .join("&");
        assert_eq!(TierQuery::parse(&many).exclude.len(), MAX_EXCLUDED);
    }

    #[test]
    fn an_exclude_query_reads_back() {
        let query = exclude_query(&["cache", "db"]);
        assert_eq!(query, "exclude=cache&exclude=db");
        assert_eq!(TierQuery::parse(&query).exclude, ["cache", "db"]);
    }
}
