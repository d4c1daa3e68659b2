//! The "did you mean" hints of every "unknown X" message, the same from
//! the attribute, the manifest and the CLI, and the word lists they end in.

/// The closest candidate to a misspelt name, if it is close enough to be a
/// plausible typo. Used by every "unknown X" message so that the hint reads
/// the same from the attribute and the manifest.
pub fn did_you_mean<'a, I>(input: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let input_lc = input.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (levenshtein(&input_lc, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len().max(input.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// "`a`, `b` or `c`": how every message lists the legal words.
pub fn one_of(names: &[&str]) -> String {
    join(names, "or")
}

/// "`a`, `b` and `c`".
pub fn all_of(names: &[&str]) -> String {
    join(names, "and")
}

fn join(names: &[&str], last: &str) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((only, [])) => only.clone(),
        Some((tail, head)) => format!("{} {last} {tail}", head.join(", ")),
    }
}

/// "; did you mean `x`?" for a near miss, else "": the one wording of a
/// suggestion, appended to a help text.
pub fn hint(suggestion: Option<&str>) -> String {
    suggestion.map_or_else(String::new, |s| format!("; did you mean `{s}`?"))
}

/// Edit distance counting a swap of two neighbours as one edit (optimal
/// string alignment), since transposed letters are the commonest typo.
fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn suggests_near_misses_only() {
        assert_eq!(
            did_you_mean("raedy", ["ready", "active", "live"]),
            Some("ready")
        );
        assert_eq!(
            did_you_mean("actve", ["ready", "active", "live"]),
            Some("active")
        );
        assert_eq!(did_you_mean("database", ["ready", "active", "live"]), None);
    }

    #[test]
    fn lists_and_hints_read_as_prose() {
        use super::{all_of, hint, one_of};
        assert_eq!(one_of(&["a"]), "`a`");
        assert_eq!(one_of(&["a", "b", "c"]), "`a`, `b` or `c`");
        assert_eq!(all_of(&["a", "b"]), "`a` and `b`");
        assert_eq!(hint(Some("x")), "; did you mean `x`?");
        assert_eq!(hint(None), "");
    }
}
