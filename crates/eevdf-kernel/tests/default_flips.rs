//! The page's default scenario demonstrates what the real kernel does:
//! each of its flips (its "Try" buttons) moves the named task's
//! percentile on a real 7.2 kernel by at least a fifth, beyond the
//! kernel's spread over seeds, in the direction the preset states.
//! `tests/kernel-ref/default.7.2.jsonl` is `make default-ref` (an `eevdf
//! sweep --kernel 7.2` of the default, five seeds, the baseline and each
//! flip); [`DefaultRef::parse`] refuses a cell that is not a kernel's run
//! of the default's text. The simulator's side of the same claims is
//! `eevdf-scenario/tests/flips.rs`.

use std::path::PathBuf;

use eevdf_kernel::default_ref::{med, range, DefaultRef};
use eevdf_scenario::presets::preset;

#[test]
fn the_default_flips_move_the_real_kernel_as_the_page_says() {
    let default = preset("default").expect("a default preset");
    assert!(
        default.flips.len() >= 3,
        "the default shows {} flips",
        default.flips.len()
    );
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernel-ref/default.7.2.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let r = DefaultRef::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(r.release().starts_with("7.2."), "{}", r.release());
    for f in default.flips {
        let (base, flipped) = r.kernel_flip(f);
        assert!(base.len() >= 5 && flipped.len() >= 5, "five seeds each");
        let (a, b) = (med(&base), med(&flipped));
        let effect = b - a;
        let noise = range(&base).max(range(&flipped));
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
