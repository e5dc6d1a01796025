//! How many cases a property test runs: `HP_PROPTEST_CASES` (200 unless set; CI runs the
//! default), divided by what one case of that test costs.
#![allow(dead_code)]

pub fn proptest_cases(divisor: u32) -> u32 {
    let cases: u32 = std::env::var("HP_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    (cases / divisor).max(1)
}
