//! The playground page: a scenario editor, kernel feature toggles, a
//! preset menu, and the latency table computed in the Web Worker. Every
//! edit re-runs (debounced) and the URL fragment follows, so the address
//! bar is always a share link. The page parses locally (cheap) to show
//! errors at once and keeps the last good results while the text is bad.

use std::cell::RefCell;
use std::rc::Rc;

use eevdf_scenario::scenario::Scenario;
use gloo::timers::callback::Timeout;
use gloo::worker::{Spawnable, WorkerBridge};
use yew::prelude::*;

use crate::worker::{Outcome, Request, Response, Row, SimWorker, Swb};

/// The worker's loader script, relative so the page works under any
/// sub-path (`index.html` copies it next to the page).
const WORKER_LOADER: &str = "./eevdf-worker-loader.js";

/// Edits settle this long before a run starts.
const DEBOUNCE_MS: u32 = 300;

/// The kernel features offered as switches (SCHED_FEAT spelling); the
/// seed-patch variants follow.
const TOGGLES: &[(&str, &str)] = &[
    ("PREEMPT_SHORT", "shorter-slice wakee preempts"),
    ("RUN_TO_PARITY", "protect curr for a minimum slice"),
    ("NEXT_BUDDY", "wakee becomes the next buddy"),
    ("PICK_BUDDY", "pick honours an eligible buddy"),
    ("DELAY_DEQUEUE", "ineligible sleepers burn their lag"),
    ("DELAY_ZERO", "clip lag to zero on delayed dequeue"),
    ("PLACE_LAG", "keep lag across sleep"),
    ("PLACE_DEADLINE_INITIAL", "half-slice first request"),
    ("WAKEUP_PREEMPTION", "wakeups may preempt at all"),
    ("HRTICK", "high-resolution slice end"),
    ("PS_CLEAR_BUDDY", "clear buddies for preempt_short (7.1)"),
    ("PS_SET_NEXT_BUDDY", "v2 1/6: short wakee becomes buddy"),
    ("PROT_LAG_AWARE", "v2 2/6: lag-aware protection"),
    ("PS_IGNORE_NEED_RESCHED", "v2 3/6"),
    ("PS_CANCEL_IF_ELIGIBLE", "v2 4/6"),
    ("PROT_ALWAYS_UPDATE", "v2 5/6"),
    ("LAG_DECAY_SLEEP", "0/8 4/8: decay positive lag"),
    ("LAG_RESET_IDLE", "0/8 5/8: reset lag on idle CPU"),
    ("WA_SLICE", "0/8 7/8: slice-aware wake_affine"),
    ("SIS_SLICE", "0/8 8/8: slice-aware idle search"),
];

/// Where the user's last scenario is kept (local storage).
const STORAGE_KEY: &str = "eevdf.scenario";

/// Keeps the user's scenario for the next visit.
fn remember(text: &str) {
    use gloo::storage::Storage;
    let _ = gloo::storage::LocalStorage::set(STORAGE_KEY, text);
}

/// The scenario the page opens with: the link in the URL fragment if
/// there is one (and it decodes), else the user's last scenario (local
/// storage), else the `default` preset. A bad link is reported and the
/// default runs instead; the stored scenario is left alone.
fn initial_scenario() -> (String, Option<String>) {
    use gloo::storage::Storage;
    let default = eevdf_scenario::presets::preset("default")
        .map(|p| p.text.to_string())
        .unwrap_or_default();
    let hash = gloo::utils::window().location().hash().unwrap_or_default();
    if hash.len() <= 1 {
        let stored: Option<String> = gloo::storage::LocalStorage::get(STORAGE_KEY).ok();
        return match stored.filter(|t| Scenario::parse(t).is_ok()) {
            Some(t) => (t, None),
            None => (default, None),
        };
    }
    match eevdf_scenario::link::decode_text(&hash) {
        Ok(text) => (text, None),
        Err(e) => (default, Some(format!("This link could not be read: {e}"))),
    }
}

/// Puts the scenario's link fragment in the address bar without adding
/// a history entry.
fn show_link(sc: &Scenario) {
    let frag = eevdf_scenario::link::fragment(sc);
    let w = gloo::utils::window();
    if let Ok(h) = w.history() {
        let _ =
            h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&format!("#{frag}")));
    }
}

#[function_component(App)]
pub fn app() -> Html {
    let init = use_memo((), |_| initial_scenario());
    let text = use_state(|| init.0.clone());
    let link_error = init.1.clone();
    let result = use_state(|| None::<Response>);
    let req_id = use_mut_ref(|| 0u32);
    let bridge = use_mut_ref(|| None::<WorkerBridge<SimWorker>>);
    let debounce: Rc<RefCell<Option<Timeout>>> = use_mut_ref(|| None);

    // The worker lives as long as the page.
    {
        let result = result.clone();
        let bridge = bridge.clone();
        let req_id = req_id.clone();
        use_effect_with((), move |_| {
            let b = SimWorker::spawner()
                .encoding::<Swb>()
                .callback(move |resp: Response| {
                    // Answers to superseded requests are dropped.
                    if resp.id == *req_id.borrow() {
                        result.set(Some(resp));
                    }
                })
                .spawn_with_loader(WORKER_LOADER);
            *bridge.borrow_mut() = Some(b);
            // Dropping the bridge terminates the worker: no leak on unmount.
            move || drop(bridge.borrow_mut().take())
        });
    }

    let parsed = Scenario::parse(&text);

    // Every text change: run (debounced) when it parses, and follow the
    // fragment.
    {
        let bridge = bridge.clone();
        let req_id = req_id.clone();
        let debounce = debounce.clone();
        use_effect_with((*text).clone(), move |t| {
            if let Ok(sc) = Scenario::parse(t) {
                show_link(&sc);
                let t = t.clone();
                let first = *req_id.borrow() == 0;
                let send = move || {
                    let id = {
                        let mut r = req_id.borrow_mut();
                        *r += 1;
                        *r
                    };
                    if let Some(b) = bridge.borrow().as_ref() {
                        b.send(Request { id, scenario: t });
                    }
                };
                if first {
                    send();
                } else {
                    *debounce.borrow_mut() = Some(Timeout::new(DEBOUNCE_MS, send));
                }
            }
            || ()
        });
    }

    let on_edit = {
        let text = text.clone();
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
            let v = el.value();
            if Scenario::parse(&v).is_ok() {
                remember(&v);
            }
            text.set(v);
        })
    };
    let on_preset = {
        let text = text.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Some(p) = eevdf_scenario::presets::preset(&el.value()) {
                remember(p.text);
                text.set(p.text.to_string());
            }
        })
    };
    let toggle = |name: &'static str, on: bool| {
        let text = text.clone();
        Callback::from(move |_| {
            if let Ok(mut sc) = Scenario::parse(&text) {
                let token = if on {
                    format!("NO_{name}")
                } else {
                    name.to_string()
                };
                if sc.apply_features(&token).is_ok() {
                    let t = sc.to_text();
                    remember(&t);
                    text.set(t);
                }
            }
        })
    };

    let features_pane = match &parsed {
        Ok(sc) => html! {
            <ul class="toggles" data-testid="features">
                { for TOGGLES.iter().map(|(name, what)| {
                    let on = sc.features.features.get_bool(name).unwrap_or(false);
                    html! {
                        <li>
                            <label title={*what}>
                                <input type="checkbox" checked={on} data-feature={*name}
                                       onchange={toggle(name, on)} />
                                <code>{ *name }</code>
                            </label>
                        </li>
                    }
                }) }
            </ul>
        },
        Err(_) => html! { <p class="muted">{ "Fix the scenario to change features." }</p> },
    };

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
                    <label class="preset">{ "Preset " }
                        <select onchange={on_preset} data-testid="preset">
                            <option value="" selected=true disabled=true>{ "choose…" }</option>
                            { for eevdf_scenario::presets::PRESETS.iter().map(|p| html! {
                                <option value={p.name} title={p.title}>{ p.name }</option>
                            }) }
                        </select>
                    </label>
                    <textarea class="scenario" spellcheck="false" wrap="off" rows="14" data-testid="scenario-text"
                              value={(*text).clone()} oninput={on_edit} />
                    if let Err(e) = &parsed {
                        <p class="error" data-testid="scenario-error">{ e.to_string() }</p>
                    }
                </section>
                <section class="pane" aria-label="Features">
                    <h2>{ "Features" }</h2>
                    { features_pane }
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
            <p class="error" data-testid="worker-error">
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
