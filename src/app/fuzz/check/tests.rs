//! Unit tests of the checks.

use super::*;

#[test]
fn a_difference_in_an_overlapping_call_is_told_apart() {
    assert!(in_overlap(
        "overlap2_A_B[3]: expected 1, got 2 (1 value(s) differ)"
    ));
    assert!(!in_overlap("A[3]: expected 1, got 2 (1 value(s) differ)"));
}
