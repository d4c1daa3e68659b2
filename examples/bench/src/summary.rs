//! The one table of ratios of a whole run (`BENCH=all`): every mode
//! records its headline numbers here as it prints its own table, and the
//! report prints them together at the end and writes them into
//! `bench/RESULTS.md`.

use std::sync::Mutex;

/// One headline number of one benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Which benchmark measured it: the `BENCH=` mode that runs it on its
    /// own (`compare`, `policy`, `limit`, …), or the part of the sweeps
    /// (`sweep`, `memory`, `probe count`).
    pub bench: &'static str,
    /// What was measured.
    pub measure: String,
    /// The value, formatted.
    pub value: String,
    /// The goal, or `-` where there is none (a comparison with a peer).
    pub goal: String,
    /// Whether the goal is met; `None` without a goal.
    pub met: Option<bool>,
}

static ROWS: Mutex<Vec<Row>> = Mutex::new(Vec::new());

/// Adds a row to the run's table.
pub fn record(
    bench: &'static str,
    measure: impl Into<String>,
    value: impl Into<String>,
    goal: impl Into<String>,
    met: Option<bool>,
) {
    let row = Row {
        bench,
        measure: measure.into(),
        value: value.into(),
        goal: goal.into(),
        met,
    };
    // A poisoned lock only means another mode panicked mid-push; the rows
    // already there are still whole.
    ROWS.lock().unwrap_or_else(|e| e.into_inner()).push(row);
}

/// Every row recorded so far, in order.
pub fn rows() -> Vec<Row> {
    ROWS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The rows as a Markdown table, which is also how the terminal shows it.
pub fn markdown(rows: &[Row]) -> String {
    let mut out =
        String::from("| Benchmark | Measure | Value | Goal | Met |\n|---|---|---|---|---|\n");
    for r in rows {
        let met = match r.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "-",
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {met} |\n",
            r.bench, r.measure, r.value, r.goal
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_one_line_per_row_and_marks_a_missed_goal() {
        let rows = [
            Row {
                bench: "compare",
                measure: "/healthz zb ÷ bare".into(),
                value: "0.97".into(),
                goal: "≥ 0.95".into(),
                met: Some(true),
            },
            Row {
                bench: "peers",
                measure: "ready req/s zb ÷ terminus".into(),
                value: "2.10".into(),
                goal: "-".into(),
                met: None,
            },
            Row {
                bench: "compare",
                measure: "/health/ready zb ÷ bare".into(),
                value: "0.70".into(),
                goal: "≥ 0.85".into(),
                met: Some(false),
            },
        ];
        let table = markdown(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 2 + rows.len());
        assert_eq!(
            lines[2],
            "| compare | /healthz zb ÷ bare | 0.97 | ≥ 0.95 | yes |"
        );
        assert_eq!(
            lines[3],
            "| peers | ready req/s zb ÷ terminus | 2.10 | - | - |"
        );
        assert!(lines[4].ends_with("| **no** |"));
    }
}
