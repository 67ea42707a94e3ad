//! The app frame: header, scenario, features and results panes. The
//! simulation runs in the Web Worker; the page only renders answers.

use gloo::worker::{Spawnable, WorkerBridge};
use yew::prelude::*;

use crate::worker::{Outcome, Request, Response, Row, SimWorker, Swb};

/// The worker's loader script, relative so the page works under any
/// sub-path (`index.html` copies it next to the page).
const WORKER_LOADER: &str = "./eevdf-worker-loader.js";

/// The scenario the page opens with: the link in the URL fragment if
/// there is one (and it decodes), else the `default` preset. A bad link
/// is reported and the default runs instead.
fn initial_scenario() -> (String, Option<String>) {
    let default = eevdf_scenario::presets::preset("default")
        .map(|p| p.text.to_string())
        .unwrap_or_default();
    let hash = gloo::utils::window().location().hash().unwrap_or_default();
    if hash.len() <= 1 {
        return (default, None);
    }
    match eevdf_scenario::link::decode_text(&hash) {
        Ok(text) => (text, None),
        Err(e) => (default, Some(format!("This link could not be read: {e}"))),
    }
}

#[function_component(App)]
pub fn app() -> Html {
    let (scenario, link_error) = use_memo((), |_| initial_scenario()).as_ref().clone();
    let result = use_state(|| None::<Response>);
    let bridge = use_mut_ref(|| None::<WorkerBridge<SimWorker>>);
    {
        let result = result.clone();
        let bridge = bridge.clone();
        let scenario = scenario.clone();
        use_effect_with((), move |_| {
            let b = SimWorker::spawner()
                .encoding::<Swb>()
                .callback(move |resp: Response| result.set(Some(resp)))
                .spawn_with_loader(WORKER_LOADER);
            b.send(Request { id: 1, scenario });
            *bridge.borrow_mut() = Some(b);
            // Dropping the bridge terminates the worker: no leak on unmount.
            move || drop(bridge.borrow_mut().take())
        });
    }

    html! {
        <div class="app">
            <header class="topbar">
                <h1>{ "eevdf-playground" }</h1>
                <span class="tagline">{ "The Linux EEVDF scheduler you can run, see and share" }</span>
            </header>
            <main class="panes">
                <section class="pane" aria-label="Scenario">
                    <h2>{ "Scenario" }</h2>
                    if let Some(e) = link_error {
                        <p class="error" data-testid="link-error">{ e }</p>
                    }
                    <pre class="scenario" data-testid="scenario-text">{ scenario }</pre>
                </section>
                <section class="pane" aria-label="Features">
                    <h2>{ "Features" }</h2>
                    <p class="muted">{ "Kernel profile v7.1: mainline defaults." }</p>
                </section>
                <section class="pane" aria-label="Results">
                    <h2>{ "Results" }</h2>
                    { results(&result) }
                </section>
            </main>
        </div>
    }
}

fn results(result: &Option<Response>) -> Html {
    let Some(r) = result else {
        return html! { <p class="muted" data-testid="worker-pending">{ "Simulating in the worker…" }</p> };
    };
    match &r.outcome {
        Outcome::Invalid {
            line,
            column,
            message,
            hint,
        } => html! {
            <p class="error" data-testid="scenario-error">
                { format!("{line}:{column}: {message} ({hint})") }
            </p>
        },
        Outcome::Done {
            rows,
            sim_ns,
            events,
            ..
        } => html! {
            <table class="results" data-testid="worker-result">
                <caption>{ format!("Wakeup latency (µs), {:.1} s simulated, {events} events", *sim_ns as f64 / 1e9) }</caption>
                <thead><tr>
                    <th>{ "task" }</th><th>{ "samples" }</th><th>{ "p50" }</th><th>{ "p90" }</th>
                    <th>{ "p99" }</th><th>{ "p99.9" }</th><th>{ "max" }</th><th>{ "CPU ms" }</th>
                </tr></thead>
                <tbody>{ for rows.iter().map(row) }</tbody>
            </table>
        },
    }
}

fn row(r: &Row) -> Html {
    let lat = |v: f64| {
        if r.samples == 0 {
            "-".to_string()
        } else {
            format!("{v:.3}")
        }
    };
    html! {
        <tr>
            <td>{ format!("{} ×{}", r.name, r.tasks) }</td>
            <td>{ r.samples }</td>
            <td>{ lat(r.p50) }</td>
            <td>{ lat(r.p90) }</td>
            <td>{ lat(r.p99) }</td>
            <td>{ lat(r.p99_9) }</td>
            <td>{ lat(r.max) }</td>
            <td>{ format!("{:.1}", r.cpu_ms) }</td>
        </tr>
    }
}
