//! The latency table: per task name, samples, p50/p90/p99/p99.9/max in
//! µs and CPU share; with a pinned baseline, A and B rows and the
//! percent change the way LKML result tables show it (negative is
//! better for latency).

use yew::prelude::*;

use crate::charts::PALETTE;
use crate::worker::Row;

/// `(B - A) / A` in percent, as the LKML tables print it; `None` when A
/// is zero or either side has no samples.
pub fn delta_pct(a: f64, b: f64) -> Option<f64> {
    (a > 0.0).then(|| (b - a) / a * 100.0)
}

fn lat(r: &Row, v: f64) -> String {
    if r.samples == 0 {
        "-".into()
    } else {
        format!("{v:.1}")
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
            // Exact values (the JSON's 3 decimals) for tests and tools.
            { for vals.iter().enumerate().map(|(i, v)| {
                let us = if r.samples == 0 { "-".to_string() } else { format!("{v:.3}") };
                match (&jump, i == vals.len() - 1 && r.samples > 0) {
                    (Some(j), true) => html! {
                        <td data-us={us}>
                            <button type="button" class="jump" onclick={j.clone()} data-testid="jump"
                                    title="Show this wakeup in teaching mode">{ lat(r, *v) }</button>
                        </td>
                    },
                    _ => html! { <td data-us={us}>{ lat(r, *v) }</td> },
                }
            }) }
            <td data-cpu-ms={format!("{:.1}", r.cpu_ms)}>{ format!("{:.1}", r.share) }</td>
        </>
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct Props {
    pub rows: Vec<Row>,
    pub baseline: Option<Vec<Row>>,
    pub caption: String,
    /// Called with a task directive when its max latency is clicked.
    #[prop_or_default]
    pub on_jump: Option<Callback<u32>>,
}

#[function_component(ResultsTable)]
pub fn results_table(p: &Props) -> Html {
    let head = html! {
        <tr>
            <th>{ "task" }</th>
            if p.baseline.is_some() { <th></th> }
            <th>{ "samples" }</th><th>{ "p50" }</th><th>{ "p90" }</th><th>{ "p99" }</th>
            <th>{ "p99.9" }</th><th>{ "max" }</th><th title="percent of all CPUs' time">{ "CPU %" }</th>
        </tr>
    };
    let body = match &p.baseline {
        None => html! {
            { for p.rows.iter().enumerate().map(|(i, r)| html! {
                <tr data-task={r.name.clone()}>
                    <td><span class={classes!("chip-dot", format!("t{}", i % PALETTE.len()))}>{ format!("{} ×{}", r.name, r.tasks) }</span></td>
                    { cells(r, p.on_jump.as_ref().map(|j| j.reform(move |_| i as u32))) }
                </tr>
            }) }
        },
        Some(base) => html! {
            { for p.rows.iter().enumerate().map(|(i, r)| {
                let a = base.iter().find(|b| b.name == r.name);
                let name = html! {
                    <span class={classes!("chip-dot", format!("t{}", i % PALETTE.len()))}>{ format!("{} ×{}", r.name, r.tasks) }</span>
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
                                <td>{ delta_pct(a.samples as f64, r.samples as f64).map_or("-".into(), |d| format!("{d:+.1}%")) }</td>
                                { for values(a).iter().zip(values(r)).map(|(x, y)| {
                                    let d = (a.samples > 0 && r.samples > 0).then(|| delta_pct(*x, y)).flatten();
                                    let cls = match d {
                                        Some(d) if d <= -5.0 => "better",
                                        Some(d) if d >= 5.0 => "worse",
                                        _ => "same",
                                    };
                                    html! { <td class={cls}>{ d.map_or("-".into(), |d| format!("{d:+.1}%")) }</td> }
                                }) }
                                <td>{ format!("{:+.1}", r.share - a.share) }</td>
                            </tr>
                        </>
                    },
                    None => html! {
                        <tr class="b" data-task={r.name.clone()} data-side="B">
                            <td>{ name }</td><th>{ "B" }</th>{ cells(r, None) }
                        </tr>
                    },
                }
            }) }
        },
    };
    html! {
        <table class={classes!("results", p.baseline.is_some().then_some("ab"))} data-testid="worker-result">
            <caption>{ p.caption.clone() }</caption>
            <thead>{ head }</thead>
            <tbody>{ body }</tbody>
        </table>
    }
}

#[cfg(test)]
mod tests {
    use super::delta_pct;

    #[test]
    fn deltas_are_relative_to_the_baseline() {
        assert_eq!(delta_pct(100.0, 50.0), Some(-50.0));
        assert_eq!(delta_pct(57.0, 5446.0).map(|d| d.round()), Some(9454.0));
        assert_eq!(delta_pct(0.0, 3.0), None);
    }
}
