//! The app frame: header, machine, features and results panes.

use gloo::worker::{Spawnable, WorkerBridge};
use yew::prelude::*;

use crate::worker::{Request, Response, SimWorker, Swb};

/// The worker's loader script, relative so the page works under any
/// sub-path (`index.html` copies it next to the page).
const WORKER_LOADER: &str = "./eevdf-worker-loader.js";

/// The default task set shown before scenarios exist.
const DEFAULT_NICES: [i32; 3] = [0, 0, 5];

#[function_component(App)]
pub fn app() -> Html {
    let result = use_state(|| None::<Response>);
    let bridge = use_mut_ref(|| None::<WorkerBridge<SimWorker>>);
    {
        let result = result.clone();
        let bridge = bridge.clone();
        use_effect_with((), move |_| {
            let b = SimWorker::spawner()
                .encoding::<Swb>()
                .callback(move |resp: Response| result.set(Some(resp)))
                .spawn_with_loader(WORKER_LOADER);
            b.send(Request {
                id: 1,
                nices: DEFAULT_NICES.to_vec(),
            });
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
                <section class="pane" aria-label="Machine">
                    <h2>{ "Machine" }</h2>
                    <p class="muted">{ "One CPU; topology models arrive with the SMP work." }</p>
                </section>
                <section class="pane" aria-label="Features">
                    <h2>{ "Features" }</h2>
                    <p class="muted">{ "Kernel profile: v7.1 (mainline defaults)." }</p>
                </section>
                <section class="pane" aria-label="Results">
                    <h2>{ "Results" }</h2>
                    { shares_table(&result) }
                </section>
            </main>
        </div>
    }
}

fn shares_table(result: &Option<Response>) -> Html {
    match result {
        None => {
            html! { <p class="muted" data-testid="worker-pending">{ "Computing in the worker…" }</p> }
        }
        Some(r) => html! {
            <table class="results" data-testid="worker-result">
                <caption>{ "Ideal CPU share (computed in the Web Worker)" }</caption>
                <thead><tr><th>{ "task" }</th><th>{ "nice" }</th><th>{ "weight" }</th><th>{ "share" }</th></tr></thead>
                <tbody>
                    { for DEFAULT_NICES.iter().zip(&r.shares_ppm).enumerate().map(|(i, (n, s))| html! {
                        <tr>
                            <td>{ format!("t{i}") }</td>
                            <td>{ *n }</td>
                            <td>{ eevdf_core::nice_to_weight(*n) }</td>
                            <td>{ format!("{:.1} %", *s as f64 / 10_000.0) }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        },
    }
}
