//! `spec/traceability.md` has a row for every requirement ID of the digest
//! (`spec/requirement-ids.txt`), each with a known status, and no row for
//! an ID the digest does not have.

use std::collections::BTreeSet;

const IDS: &str = include_str!("../../spec/requirement-ids.txt");
const TABLE: &str = include_str!("../../spec/traceability.md");

/// The requirement rows of the table: `(id, status)`.
fn rows() -> Vec<(&'static str, &'static str)> {
    TABLE
        .lines()
        .filter_map(|line| {
            let mut cells = line.strip_prefix("| ")?.split(" | ");
            let id = cells.next()?;
            let status = cells.next()?;
            let is_id = ["ZB-", "AT-", "BE-HLTH-"].iter().any(|p| id.starts_with(p));
            is_id.then_some((id, status))
        })
        .collect()
}

#[test]
fn every_requirement_id_has_one_row_with_a_known_status() {
    let ids: BTreeSet<&str> = IDS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(ids.len() >= 30, "the ID list is read: {ids:?}");
    let rows = rows();
    let in_table: Vec<&str> = rows.iter().map(|(id, _)| *id).collect();
    let missing: Vec<&&str> = ids.iter().filter(|id| !in_table.contains(id)).collect();
    assert!(
        missing.is_empty(),
        "no row in spec/traceability.md for {missing:?}"
    );
    let unknown: Vec<&&str> = in_table.iter().filter(|id| !ids.contains(*id)).collect();
    assert!(
        unknown.is_empty(),
        "rows for IDs the digest lacks: {unknown:?}"
    );
    let mut seen = BTreeSet::new();
    for (id, status) in &rows {
        assert!(seen.insert(*id), "{id} has two rows");
        assert!(
            ["done", "partial", "planned", "deviation"]
                .iter()
                .any(|s| status.starts_with(s)),
            "{id}: unknown status {status:?}"
        );
    }
}
