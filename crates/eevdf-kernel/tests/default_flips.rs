//! The page's default scenario demonstrates what the real kernel does:
//! each of its flips (its "Try" buttons) moves the named task's
//! percentile on a real 7.2 kernel by at least a fifth, beyond the
//! kernel's spread over seeds, in the direction the preset states.
//! `tests/kernel-ref/default.7.2.jsonl` is `make default-ref` (an `eevdf
//! sweep --kernel 7.2` of the default, five seeds, the baseline and each
//! flip); the simulator's side of the same claims is
//! `eevdf-scenario/tests/flips.rs`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use eevdf_scenario::presets::preset;
use serde_json::Value;

fn reference() -> Vec<Value> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernel-ref/default.7.2.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a sweep line"))
        .collect()
}

/// A scenario text without its `seed` and `features` lines (the sweep
/// sets them per cell).
fn unseeded(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("seed ") && !l.starts_with("features "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn spread(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::MIN, f64::max) - v.iter().copied().fold(f64::MAX, f64::min)
}

#[test]
fn the_default_flips_move_the_real_kernel_as_the_page_says() {
    let default = preset("default").expect("a default preset");
    assert!(
        default.flips.len() >= 3,
        "the default shows {} flips",
        default.flips.len()
    );
    let lines = reference();
    // features value -> task -> percentile -> one value per seed
    let mut by: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    let mut baseline = None;
    for l in &lines {
        let axes: BTreeMap<&str, &str> = l["axes"]
            .as_array()
            .expect("axes")
            .iter()
            .map(|a| (a[0].as_str().unwrap(), a[1].as_str().unwrap()))
            .collect();
        assert_eq!(axes.get("kernel"), Some(&"7.2"), "a kernel cell");
        let r = &l["result"];
        assert_eq!(r["source"]["kind"], "kernel", "measured on a kernel");
        assert!(
            r["source"]["kernel"]
                .as_str()
                .is_some_and(|k| k.starts_with("7.2.")),
            "{}",
            r["source"]["kernel"]
        );
        // The reference is of this default, not an older one.
        assert_eq!(
            unseeded(r["scenario"].as_str().unwrap()),
            unseeded(default.text)
        );
        let f = axes["features"].to_string();
        baseline.get_or_insert_with(|| f.clone());
        by.entry(f).or_default().push(r);
    }
    let baseline = baseline.expect("reference lines");
    let pct = |rs: &[&Value], task: &str, p: &str| -> Vec<f64> {
        let key = if p == "p99.9" { "p99_9" } else { p };
        rs.iter()
            .map(|r| {
                r["by_name"][task]["latency_us"][key]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{task} {p}"))
            })
            .collect()
    };
    for f in default.flips {
        let base = pct(&by[&baseline], f.task, f.pct);
        let flipped = pct(
            by.get(f.token)
                .unwrap_or_else(|| panic!("no cells for {}", f.token)),
            f.task,
            f.pct,
        );
        assert!(base.len() >= 5 && flipped.len() >= 5, "five seeds each");
        let (a, b) = (median(base.clone()), median(flipped.clone()));
        let effect = b - a;
        let noise = spread(&base).max(spread(&flipped));
        assert!(
            effect.abs() > noise && effect.abs() >= a / 5.0 && (effect > 0.0) == f.rises,
            "{}: the kernel moves {}'s {} from {a} to {b} us (spread {noise}); the page says it {}",
            f.token,
            f.task,
            f.pct,
            if f.rises { "rises" } else { "falls" }
        );
    }
}
