//! The latency table: per task name, samples, p50/p90/p99/p99.9/max in
//! µs and CPU share; with a pinned baseline, A and B rows and the
//! percent change signed as LKML result tables and `eevdf compare` sign
//! it (`report::DELTA_CONVENTION`: + is better). A preset with kernel reference data
//! (`eevdf_scenario::kernel_ref`) gets one more row per kernel under its
//! task's simulated rows, and every scenario gets a mark: agrees with
//! the kernel, differs from it, or not checked against one.

use eevdf_scenario::kernel_ref::{KernelRef, Mark};
use eevdf_scenario::report::DELTA_CONVENTION;
use yew::prelude::*;

use crate::charts::{slot_class, slots};
use eevdf_driver::live::Row;

/// The change from A to B in percent, signed as `eevdf compare` signs
/// it: + is better. Latency is better lower, `(A - B) / A`; samples
/// more, `(B - A) / A`. `None` when A is zero.
pub fn change_pct(a: f64, b: f64, higher_better: bool) -> Option<f64> {
    (a > 0.0).then(|| {
        let d = (b - a) / a * 100.0;
        if higher_better {
            d
        } else {
            // Not `-d`: no change prints +0.0, not -0.0.
            0.0 - d
        }
    })
}

/// `d` with its sign at one decimal; a change that rounds to zero is
/// "+0.0" (never "-0.0").
pub fn signed1(d: f64) -> String {
    // Adding +0.0 turns the -0.0 of a rounded tiny negative into +0.0.
    format!("{:+.1}", (d * 10.0).round() / 10.0 + 0.0)
}

fn lat(r: &Row, v: f64) -> String {
    if r.samples == 0 {
        "-".into()
    } else {
        format!("{v:.1}")
    }
}

/// When the max's wakeup was due, under it: a max in the first
/// milliseconds is start-up (a `warmup` leaves it out).
fn max_at(r: &Row) -> Html {
    match r.max_at_s {
        Some(s) => {
            html! { <small class="max-at" data-max-at={format!("{s:.6}")}>{ format!("at {s:.3} s") }</small> }
        }
        None => html! {},
    }
}

fn values(r: &Row) -> [f64; 5] {
    [r.p50, r.p90, r.p99, r.p99_9, r.max]
}

/// The cells of one row; with `jump`, the max is a button that opens
/// teaching mode at that wakeup.
fn cells(r: &Row, jump: Option<Callback<MouseEvent>>) -> Html {
    let vals = values(r);
    html! {
        <>
            <td data-samples={r.samples.to_string()}>{ r.samples }</td>
            <td data-min={format!("{:.3}", r.min)}>{ lat(r, r.min) }</td>
            <td data-avg={format!("{:.3}", r.avg)}>{ lat(r, r.avg) }</td>
            // Exact values (the JSON's 3 decimals) for tests and tools.
            { for vals.iter().enumerate().map(|(i, v)| {
                let us = if r.samples == 0 { "-".to_string() } else { format!("{v:.3}") };
                match (&jump, i == vals.len() - 1 && r.samples > 0) {
                    (Some(j), true) => html! {
                        <td data-us={us}>
                            <button type="button" class="jump" onclick={j.clone()} data-testid="jump"
                                    title="Show this wakeup in teaching mode">{ lat(r, *v) }</button>
                            { max_at(r) }
                        </td>
                    },
                    (None, true) => html! { <td data-us={us}>{ lat(r, *v) }{ max_at(r) }</td> },
                    _ => html! { <td data-us={us}>{ lat(r, *v) }</td> },
                }
            }) }
            <td data-cpu-ms={format!("{:.1}", r.cpu_ms)}>{ format!("{:.1}", r.share) }</td>
        </>
    }
}

/// A kernel reference row: its label, the kernel's p50..max in µs, and
/// its verdict as a symbol (words in the tooltip and in the note below
/// the table). `ab` adds the empty side column of an A/B table.
fn kernel_row(k: &KernelRef, ab: bool) -> Html {
    let mark = Mark::from(k.verdict);
    let tip = format!(
        "{} ({}): medians over {} of `{}`",
        k.release,
        mark.text(),
        k.seeds_text(),
        k.command()
    );
    html! {
        <tr class="kernel" data-task={k.task.clone()} data-side="kernel" data-series={k.series.clone()}
            data-mark={mark.key()} title={tip}>
            <td class="kname">{ format!("kernel {}", k.version()) }<small>{ " (Debian, QEMU)" }</small></td>
            if ab { <th>{ "K" }</th> }
            <td data-samples={k.samples.to_string()}>{ k.samples }</td>
            <td></td><td></td>
            { for k.latencies_ns().iter().map(|ns| {
                let us = *ns as f64 / 1000.0;
                html! { <td data-us={format!("{us:.3}")}>{ format!("{us:.1}") }</td> }
            }) }
            <td class={classes!("mark", mark.key())} aria-label={mark.text()}>{ mark.symbol() }</td>
        </tr>
    }
}

/// The kernel rows that go under task `name`.
fn kernel_rows(kernel: &[KernelRef], name: &str, ab: bool) -> Html {
    html! { { for kernel.iter().filter(|k| k.task == name).map(|k| kernel_row(k, ab)) } }
}

/// The words after the mark: which kernels (by version) agree or differ.
pub fn mark_detail(kernel: &[KernelRef]) -> String {
    let versions = |v: eevdf_scenario::kernel_ref::Verdict| {
        let mut out: Vec<&str> = Vec::new();
        for k in kernel.iter().filter(|k| k.verdict == v) {
            if !out.contains(&k.version()) {
                out.push(k.version());
            }
        }
        out.join(", ")
    };
    use eevdf_scenario::kernel_ref::Verdict::{Agrees, Differs};
    match Mark::of(kernel) {
        Mark::NotChecked => "no kernel reference data for this scenario (only the default and the fidelity-* presets, unedited, have it)".into(),
        Mark::Agrees => format!(
            "{}: the simulator, run with that kernel's own settings, is within 2x at p50..p99.9",
            versions(Agrees)
        ),
        Mark::Differs => {
            let agree = versions(Agrees);
            format!(
                "{}: the simulator, run with that kernel's own settings (features, preemption \
                 model, base slice), is more than 2x off at p50..p99.9{}",
                versions(Differs),
                if agree.is_empty() { String::new() } else { format!("; agrees with {agree}") }
            )
        }
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct FidelityProps {
    /// The kernel rows of the current scenario (empty: not checked).
    pub kernel: Vec<KernelRef>,
}

/// The fidelity mark of the current scenario, and the commands behind
/// its kernel rows.
#[function_component(FidelityNote)]
pub fn fidelity_note(p: &FidelityProps) -> Html {
    let mark = Mark::of(&p.kernel);
    let mut commands: Vec<String> = Vec::new();
    for k in &p.kernel {
        if !commands.contains(&k.command()) {
            commands.push(k.command());
        }
    }
    html! {
        <div class={classes!("fidelity", mark.key())} data-testid="fidelity" data-mark={mark.key()}>
            <p><span class={classes!("mark", mark.key())}>{ mark.text() }</span>
               <span class="muted">{ format!(" — {}", mark_detail(&p.kernel)) }</span></p>
            if let Some(k) = p.kernel.first() {
                <p class="muted kernel-cmd">
                    { format!("Kernel rows: Debian's kernels under QEMU -icount, medians over {}; reproduce with ", k.seeds_text()) }
                    { for commands.iter().enumerate().map(|(i, c)| html! {
                        <>{ if i > 0 { " or " } else { "" } }<code data-testid="kernel-command">{ c.clone() }</code></>
                    }) }
                    { ". Verdicts from the fidelity report (simulator with the kernel's read-back settings; docs/fidelity.md)." }
                </p>
            }
        </div>
    }
}

/// A sortable column of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Col {
    Task,
    Samples,
    Min,
    Avg,
    P50,
    P90,
    P99,
    P999,
    Max,
    Cpu,
}

impl Col {
    pub const ALL: [Col; 10] = [
        Col::Task,
        Col::Samples,
        Col::Min,
        Col::Avg,
        Col::P50,
        Col::P90,
        Col::P99,
        Col::P999,
        Col::Max,
        Col::Cpu,
    ];

    fn label(self) -> &'static str {
        match self {
            Col::Task => "task",
            Col::Samples => "samples",
            Col::Min => "min",
            Col::Avg => "avg",
            Col::P50 => "p50",
            Col::P90 => "p90",
            Col::P99 => "p99",
            Col::P999 => "p99.9",
            Col::Max => "max",
            Col::Cpu => "CPU %",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Col::P999 => "p99_9",
            Col::Cpu => "cpu",
            c => c.label(),
        }
    }

    fn title(self) -> &'static str {
        match self {
            Col::Cpu => "percent of all CPUs' time; click to sort",
            Col::Min | Col::Avg => "as cyclictest prints them; click to sort",
            _ => "click to sort",
        }
    }

    /// The row's value in this column (`Task` sorts by name instead).
    fn value(self, r: &Row) -> f64 {
        match self {
            Col::Task => 0.0,
            Col::Samples => r.samples as f64,
            Col::Min => r.min,
            Col::Avg => r.avg,
            Col::P50 => r.p50,
            Col::P90 => r.p90,
            Col::P99 => r.p99,
            Col::P999 => r.p99_9,
            Col::Max => r.max,
            Col::Cpu => r.share,
        }
    }
}

/// A header click: a new column sorts descending (the worst first), the
/// same column flips to ascending, then back to the scenario's order.
pub fn next_sort(now: Option<(Col, bool)>, c: Col) -> Option<(Col, bool)> {
    match now {
        Some((s, true)) if s == c => Some((c, false)),
        Some((s, false)) if s == c => None,
        _ => Some((c, c != Col::Task)),
    }
}

/// Row indices in display order; ties and the unsorted table keep the
/// scenario's order. Rows without samples go last for latency columns.
pub fn sorted_order(rows: &[Row], sort: Option<(Col, bool)>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    let Some((c, desc)) = sort else {
        return order;
    };
    let latency = !matches!(c, Col::Task | Col::Samples | Col::Cpu);
    order.sort_by(|&i, &j| {
        let (a, b) = (&rows[i], &rows[j]);
        let empty = |r: &Row| latency && r.samples == 0;
        let by = if c == Col::Task {
            a.name.cmp(&b.name)
        } else {
            c.value(a).total_cmp(&c.value(b))
        };
        let by = if desc { by.reverse() } else { by };
        empty(a).cmp(&empty(b)).then(by)
    });
    order
}

#[derive(Properties, PartialEq, Debug)]
pub struct Props {
    pub rows: Vec<Row>,
    pub baseline: Option<Vec<Row>>,
    pub caption: String,
    /// Called with a task directive when its max latency is clicked.
    #[prop_or_default]
    pub on_jump: Option<Callback<u32>>,
    /// Kernel reference rows, each shown under its task's rows.
    #[prop_or_default]
    pub kernel: Vec<KernelRef>,
}

#[function_component(ResultsTable)]
pub fn results_table(p: &Props) -> Html {
    let sort = use_state(|| None::<(Col, bool)>);
    let th = |c: Col| {
        let (aria, arrow) = match *sort {
            Some((s, true)) if s == c => ("descending", " ▼"),
            Some((s, false)) if s == c => ("ascending", " ▲"),
            _ => ("none", ""),
        };
        let onclick = {
            let sort = sort.clone();
            Callback::from(move |_: MouseEvent| sort.set(next_sort(*sort, c)))
        };
        html! {
            <th aria-sort={aria} title={c.title()}>
                <button type="button" class="sort" data-sort={c.key()} {onclick}>{ c.label() }{ arrow }</button>
            </th>
        }
    };
    let head = html! {
        <tr>
            { th(Col::Task) }
            if p.baseline.is_some() { <th><span class="sr-only">{ "side (A, B, change)" }</span></th> }
            { for Col::ALL[1..].iter().map(|c| th(*c)) }
        </tr>
    };
    let ss = slots(p.rows.iter().map(|r| r.name.as_str()));
    let order = sorted_order(&p.rows, *sort);
    let body = match &p.baseline {
        None => html! {
            { for order.iter().map(|&i| (i, &p.rows[i])).map(|(i, r)| html! {
                <>
                    <tr data-task={r.name.clone()}>
                        <td><span class={classes!("chip-dot", slot_class(ss[i]))}>{ format!("{} ×{}", r.name, r.tasks) }</span></td>
                        { cells(r, p.on_jump.as_ref().map(|j| j.reform(move |_| i as u32))) }
                    </tr>
                    { kernel_rows(&p.kernel, &r.name, false) }
                </>
            }) }
        },
        Some(base) => html! {
            { for order.iter().map(|&i| (i, &p.rows[i])).map(|(i, r)| {
                let a = base.iter().find(|b| b.name == r.name);
                let name = html! {
                    <span class={classes!("chip-dot", slot_class(ss[i]))}>{ format!("{} ×{}", r.name, r.tasks) }</span>
                };
                match a {
                    Some(a) => html! {
                        <>
                            <tr class="a" data-task={r.name.clone()} data-side="A">
                                <td rowspan="3">{ name }</td><th>{ "A" }</th>{ cells(a, None) }
                            </tr>
                            <tr class="b" data-task={r.name.clone()} data-side="B"><th>{ "B" }</th>{ cells(r, p.on_jump.as_ref().map(|j| j.reform(move |_| i as u32))) }</tr>
                            <tr class="delta" data-task={r.name.clone()} data-side="delta">
                                <th>{ "Δ" }</th>
                                <td>{ change_pct(a.samples as f64, r.samples as f64, true).map_or("-".into(), |d| format!("{}%", signed1(d))) }</td>
                                { for [a.min, a.avg].iter().chain(values(a).iter()).zip([r.min, r.avg].into_iter().chain(values(r))).map(|(x, y)| {
                                    let d = (a.samples > 0 && r.samples > 0).then(|| change_pct(*x, y, false)).flatten();
                                    let cls = match d {
                                        Some(d) if d >= 5.0 => "better",
                                        Some(d) if d <= -5.0 => "worse",
                                        _ => "same",
                                    };
                                    html! { <td class={cls}>{ d.map_or("-".into(), |d| format!("{}%", signed1(d))) }</td> }
                                }) }
                                <td>{ signed1(r.share - a.share) }</td>
                            </tr>
                            { kernel_rows(&p.kernel, &r.name, true) }
                        </>
                    },
                    None => html! {
                        <>
                            <tr class="b" data-task={r.name.clone()} data-side="B">
                                <td>{ name }</td><th>{ "B" }</th>{ cells(r, None) }
                            </tr>
                            { kernel_rows(&p.kernel, &r.name, true) }
                        </>
                    },
                }
            }) }
        },
    };
    html! {
        // The table scrolls inside this on a narrow screen, not the page.
        <div class="table-scroll" data-testid="results-scroll">
        <table class={classes!("results", p.baseline.is_some().then_some("ab"))} data-testid="worker-result">
            <caption>
                { p.caption.clone() }
                if p.baseline.is_some() {
                    <span class="muted" data-testid="delta-convention">{ format!(". Δ: {DELTA_CONVENTION}.") }</span>
                }
            </caption>
            <thead>{ head }</thead>
            <tbody>{ body }</tbody>
        </table>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::{change_pct, mark_detail, signed1};
    use eevdf_scenario::kernel_ref::{self, Mark};

    #[test]
    fn the_mark_names_the_kernels() {
        assert!(mark_detail(&[]).starts_with("no kernel reference data"));
        let rows = kernel_ref::rows("fidelity-ct-1hog");
        assert!(!rows.is_empty());
        let d = mark_detail(&rows);
        for k in &rows {
            assert!(d.contains(k.version()), "{d}");
        }
        let mut mixed = rows.clone();
        mixed[0].verdict = kernel_ref::Verdict::Differs;
        if mixed.len() > 1 {
            mixed[1].verdict = kernel_ref::Verdict::Agrees;
            let d = mark_detail(&mixed);
            assert!(d.starts_with(mixed[0].version()), "{d}");
            assert!(
                d.ends_with(&format!("agrees with {}", mixed[1].version())),
                "{d}"
            );
        }
        assert_eq!(Mark::of(&mixed), Mark::Differs);
    }

    #[test]
    fn deltas_are_relative_to_the_baseline_and_plus_is_better() {
        // Halved latency is +50 %, as eevdf compare prints it.
        assert_eq!(change_pct(100.0, 50.0, false), Some(50.0));
        assert_eq!(
            change_pct(57.0, 5446.0, false).map(|d| d.round()),
            Some(-9454.0)
        );
        assert_eq!(
            change_pct(529.0, 460.0, true).map(|d| d.round()),
            Some(-13.0)
        );
        assert_eq!(change_pct(0.0, 3.0, false), None);
        assert_eq!(
            format!("{:+.1}", change_pct(57.0, 57.0, false).unwrap()),
            "+0.0"
        );
    }

    fn row(name: &str, samples: u64, p99: f64) -> eevdf_driver::live::Row {
        eevdf_driver::live::Row {
            name: name.into(),
            tasks: 1,
            samples,
            cpu_ms: 0.0,
            share: 0.0,
            p50: 0.0,
            p90: 0.0,
            p99,
            p99_9: 0.0,
            max: 0.0,
            max_at_s: None,
            min: 0.0,
            avg: 0.0,
            mean: 0.0,
        }
    }

    /// Worst first, then best first, then the scenario's order again;
    /// tasks without samples stay last; names sort alphabetically.
    #[test]
    fn columns_sort_worst_first_then_back() {
        use super::{next_sort, sorted_order, Col};
        let rows = [
            row("ct", 10, 60.0),
            row("hog", 0, 0.0),
            row("b", 5, 900.0),
            row("a", 5, 60.0),
        ];
        let s1 = next_sort(None, Col::P99);
        assert_eq!(s1, Some((Col::P99, true)));
        assert_eq!(
            sorted_order(&rows, s1),
            [2, 0, 3, 1],
            "desc, ties in scenario order"
        );
        let s2 = next_sort(s1, Col::P99);
        assert_eq!(
            sorted_order(&rows, s2),
            [0, 3, 2, 1],
            "asc, the empty row still last"
        );
        assert_eq!(next_sort(s2, Col::P99), None);
        assert_eq!(sorted_order(&rows, None), [0, 1, 2, 3]);
        let by_name = next_sort(s2, Col::Task);
        assert_eq!(sorted_order(&rows, by_name), [3, 2, 0, 1]);
    }

    /// A change too small to show is +0.0, whichever side it leans.
    #[test]
    fn tiny_changes_print_as_plus_zero() {
        assert_eq!(signed1(-0.04), "+0.0");
        assert_eq!(signed1(0.04), "+0.0");
        assert_eq!(signed1(-0.06), "-0.1");
        assert_eq!(signed1(12.34), "+12.3");
    }
}
