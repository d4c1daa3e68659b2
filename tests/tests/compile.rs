//! The compile-time spec checks: every rule has a compile-fail case with a
//! reviewed `.stderr` snapshot under `tests/ui/fail/`, and the legal forms
//! compile under `tests/ui/pass/`. `spec/rules.md` maps each rule to its
//! cases.

#[test]
fn compile_time_rules() {
    let t = trybuild::TestCases::new();
    t.pass("ui/pass/*.rs");
    t.compile_fail("ui/fail/*.rs");
}
