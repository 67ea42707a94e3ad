//! Ideal proportional shares: what EEVDF converges to for always-runnable
//! tasks on one CPU (docs/model.md §9 invariant 10). The simulator's long-run
//! share tests compare measured service against these figures.

use eevdf_core::nice_to_weight;

/// Each task's ideal share of one CPU in parts per million, from its nice
/// level. Integer-only, so native and wasm agree to the last digit.
pub fn ideal_shares_ppm(nices: &[i32]) -> Vec<u64> {
    let weights: Vec<u64> = nices.iter().map(|n| nice_to_weight(*n)).collect();
    let total: u64 = weights.iter().sum();
    if total == 0 {
        return Vec::new();
    }
    weights.iter().map(|w| w * 1_000_000 / total).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_nice_step_is_about_ten_percent() {
        // 1024 vs 820: 55.5 % vs 44.4 %.
        assert_eq!(ideal_shares_ppm(&[0, 1]), vec![555_314, 444_685]);
        assert_eq!(ideal_shares_ppm(&[0, 0]), vec![500_000, 500_000]);
        assert!(ideal_shares_ppm(&[]).is_empty());
    }
}
