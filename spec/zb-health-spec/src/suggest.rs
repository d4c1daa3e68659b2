/// The closest candidate to a misspelt name, if it is close enough to be a
/// plausible typo. Used by every "unknown X" message so that the hint reads
/// the same from the macro, the runtime builder and the CLI.
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
}
