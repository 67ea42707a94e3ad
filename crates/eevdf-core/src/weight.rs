//! Nice levels, load weights and the kernel's fixed-point division
//! (docs/model.md §2).
//!
//! `calc_delta_fair` reproduces `__calc_delta` bit for bit: the inverse
//! weight is a 32-bit reciprocal (`sched_prio_to_wmult` for tasks,
//! `WMULT_CONST / w` otherwise) and the product is shifted back with the
//! same normalisation steps, so vruntime advances exactly as in the kernel,
//! including its truncation.

/// Weight of a nice-0 task in the 1024 scale (`scale_load_down(NICE_0_LOAD)`).
pub const NICE_0_LOAD: u64 = 1024;

/// Weight of a `SCHED_IDLE` task (`WEIGHT_IDLEPRIO`).
pub const WEIGHT_IDLEPRIO: u64 = 3;
/// Its inverse (`WMULT_IDLEPRIO`).
pub const WMULT_IDLEPRIO: u32 = 1_431_655_765;

const WMULT_CONST: u64 = u32::MAX as u64;
const WMULT_SHIFT: u32 = 32;

/// `sched_prio_to_weight`, nice -20 ..= 19.
pub const SCHED_PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, //
    29154, 23254, 18705, 14949, 11916, //
    9548, 7620, 6100, 4904, 3906, //
    3121, 2501, 1991, 1586, 1277, //
    1024, 820, 655, 526, 423, //
    335, 272, 215, 172, 137, //
    110, 87, 70, 56, 45, //
    36, 29, 23, 18, 15,
];

/// `sched_prio_to_wmult`: the kernel's precomputed 2^32/w, nice -20 ..= 19.
pub const SCHED_PRIO_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, //
    147320, 184698, 229616, 287308, 360437, //
    449829, 563644, 704093, 875809, 1099582, //
    1376151, 1717300, 2157191, 2708050, 3363326, //
    4194304, 5237765, 6557202, 8165337, 10153587, //
    12820798, 15790321, 19976592, 24970740, 31350126, //
    39045157, 49367440, 61356676, 76695844, 95443717, //
    119304647, 148102320, 186737708, 238609294, 286331153,
];

/// A load weight with its cached 32-bit inverse (`struct load_weight`).
///
/// Weights are kept in the 1024 scale (`scale_load_down`), which is what
/// every EEVDF sum in fair.c uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadWeight {
    pub weight: u64,
    pub inv_weight: u32,
}

impl LoadWeight {
    /// A weight whose inverse is computed as `__update_inv_weight` does
    /// (group entities, reweighted entities).
    pub fn new(weight: u64) -> Self {
        let inv_weight = if weight >= WMULT_CONST {
            1
        } else {
            WMULT_CONST.checked_div(weight).unwrap_or(WMULT_CONST) as u32
        };
        LoadWeight { weight, inv_weight }
    }

    /// The weight of a `SCHED_NORMAL`/`SCHED_BATCH` task at `nice`
    /// (`set_load_weight`, which takes the inverse from the table).
    pub fn from_nice(nice: i32) -> Self {
        let idx = (nice.clamp(-20, 19) + 20) as usize;
        LoadWeight {
            weight: SCHED_PRIO_TO_WEIGHT[idx],
            inv_weight: SCHED_PRIO_TO_WMULT[idx],
        }
    }

    /// The weight of a `SCHED_IDLE` task.
    pub fn idle() -> Self {
        LoadWeight {
            weight: WEIGHT_IDLEPRIO,
            inv_weight: WMULT_IDLEPRIO,
        }
    }
}

/// `sched_prio_to_weight[nice + 20]`; nice is clamped to [-20, 19].
pub fn nice_to_weight(nice: i32) -> u64 {
    LoadWeight::from_nice(nice).weight
}

/// Index of the most significant set bit, 1-based (`fls`); `fls(0) == 0`.
fn fls(x: u32) -> u32 {
    32 - x.leading_zeros()
}

/// `__calc_delta(delta_exec, weight, lw)`: `delta_exec * weight / lw.weight`
/// in the kernel's 32.32 fixed point.
pub fn calc_delta(delta_exec: u64, weight: u64, lw: &LoadWeight) -> u64 {
    let mut fact = weight;
    let mut shift = WMULT_SHIFT as i32;
    let fact_hi = (fact >> 32) as u32;
    if fact_hi != 0 {
        let fs = fls(fact_hi);
        shift -= fs as i32;
        fact >>= fs;
    }
    fact = (fact & 0xffff_ffff) * lw.inv_weight as u64;
    // After this, fact fits in 32 bits and shift <= 32.
    let fact_hi = (fact >> 32) as u32;
    if fact_hi != 0 {
        let fs = fls(fact_hi);
        shift -= fs as i32;
        fact >>= fs;
    }
    mul_u64_u32_shr(delta_exec, fact as u32, shift as u32)
}

/// `mul_u64_u32_shr`: the low 64 bits of `(a * mul) >> shift`, computed
/// as the kernel's generic version does, from two 32x32 products. Exact
/// for `shift <= 32` (the only shifts `calc_delta` makes), and no 128-bit
/// multiply, which wasm32 lacks (it would call `__multi3` per update).
fn mul_u64_u32_shr(a: u64, mul: u32, shift: u32) -> u64 {
    debug_assert!(shift <= 32);
    let (ah, al) = (a >> 32, a & 0xffff_ffff);
    let mut ret = (al * u64::from(mul)) >> shift;
    if ah != 0 {
        ret = ret.wrapping_add((ah * u64::from(mul)) << (32 - shift));
    }
    ret
}

/// `calc_delta_fair`: real nanoseconds to virtual nanoseconds for an
/// entity of weight `lw` (identity at nice 0).
pub fn calc_delta_fair(delta: u64, lw: &LoadWeight) -> u64 {
    if lw.weight != NICE_0_LOAD {
        calc_delta(delta, NICE_0_LOAD, lw)
    } else {
        delta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mul_u64_u32_shr_is_the_96_bit_product_shifted() {
        let mut a: u64 = 1;
        for _ in 0..200 {
            for mul in [0u32, 1, 15, 1024, 4194304, 48388, u32::MAX] {
                for shift in [0u32, 1, 10, 22, 31, 32] {
                    let want = ((u128::from(a) * u128::from(mul)) >> shift) as u64;
                    assert_eq!(mul_u64_u32_shr(a, mul, shift), want, "{a} {mul} {shift}");
                }
            }
            a = a
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
    }

    #[test]
    fn wmult_table_is_the_inverse_of_the_weight_table() {
        for (w, m) in SCHED_PRIO_TO_WEIGHT.iter().zip(SCHED_PRIO_TO_WMULT) {
            let exact = (1u64 << 32) as f64 / *w as f64;
            assert!((exact - m as f64).abs() <= 1.0, "w={w} wmult={m}");
        }
    }

    #[test]
    fn nice_zero_is_identity() {
        let lw = LoadWeight::from_nice(0);
        assert_eq!(calc_delta_fair(2_800_000, &lw), 2_800_000);
    }

    #[test]
    fn fixed_point_truncates_like_the_kernel() {
        // nice 19 (w=15): 1 ms of runtime is 1024/15 ms of vruntime; the
        // kernel's reciprocal gives 68_266_666, one below the exact 68_266_666.67 floor.
        let lw = LoadWeight::from_nice(19);
        let v = calc_delta_fair(1_000_000, &lw);
        let exact = 1_000_000u64 * 1024 / 15;
        assert!(v <= exact && exact - v <= 1, "v={v} exact={exact}");
        // nice -20: heavy tasks advance slowly.
        let lw = LoadWeight::from_nice(-20);
        assert_eq!(calc_delta_fair(88_761, &lw), 1023);
    }

    #[test]
    fn computed_inverse_matches_update_inv_weight() {
        assert_eq!(LoadWeight::new(1024).inv_weight, 4_194_303);
        assert_eq!(LoadWeight::new(0).inv_weight, u32::MAX);
        assert_eq!(LoadWeight::new(1 << 40).inv_weight, 1);
    }
}
