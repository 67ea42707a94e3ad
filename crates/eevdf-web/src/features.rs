//! The features pane: kernel profile, HZ, base slice and preemption
//! model; a switch for every modelled SCHED_FEAT (kernel names first,
//! then the seed variants grouped by patch series under the thread's
//! subject line, then the enum variants); a field for a pasted
//! `/sys/kernel/debug/sched/features` line. Every control edits the
//! scenario through its own text form (`Scenario::set`,
//! `apply_features`, `debugfs::apply`), the same as the CLI's flags.

use eevdf_core::features::{FeatureKind, Profile, Status, FEATURES};
use eevdf_scenario::scenario::Scenario;
use eevdf_sim::PreemptModel;
use yew::prelude::*;

/// A seed patch series: its subject line and the toggles it adds.
struct Series {
    subject: &'static str,
    names: &'static [&'static str],
}

/// The seed threads' toggles (docs/model.md §8), by series.
const SERIES: &[Series] = &[
    Series {
        subject: "[PATCH] sched/eevdf: clear buddies for preempt_short",
        names: &["PS_CLEAR_BUDDY"],
    },
    Series {
        subject: "[PATCH 0/6 v2] sched/eevdf: Improve scheduling latency of short slice task",
        names: &[
            "PS_SET_NEXT_BUDDY",
            "PROT_LAG_AWARE",
            "PS_IGNORE_NEED_RESCHED",
            "PS_CANCEL_IF_ELIGIBLE",
            "PROT_ALWAYS_UPDATE",
        ],
    },
    Series {
        subject: "[PATCH 0/8] Improving latency of short slice tasks",
        names: &[
            "PS_SHORT_BUDDY_TIE",
            "LAG_DECAY_SLEEP",
            "LAG_RESET_IDLE",
            "MINSLICE_PERCPU",
            "WA_SLICE",
            "SIS_SLICE",
        ],
    },
    Series {
        subject: "[PATCH 0/2 v5] Reintroduce NEXT_BUDDY for EEVDF",
        names: &["NB_RESCHED_INELIGIBLE_WAKER"],
    },
];

const MACHINES: &[&str] = &[
    "up",
    "smp2",
    "smp4",
    "smp8",
    "smp16",
    "laptop-4c8t",
    "rb5",
    "orion6",
    "graviton3",
    "xeon-4314-2s",
    "epyc-2x128c",
];

fn in_series(name: &str) -> bool {
    SERIES.iter().any(|s| s.names.contains(&name))
}

/// Modelled boolean features of the kernel's own features.h.
fn kernel_bools() -> impl Iterator<Item = &'static eevdf_core::features::FeatureInfo> {
    FEATURES.iter().filter(|f| {
        f.kind == FeatureKind::Bool && f.status != Status::NotModelled && !in_series(f.name)
    })
}

/// The text of the scenario's `machine` line's value.
pub fn machine_name(sc: &Scenario) -> String {
    sc.to_text()
        .lines()
        .find_map(|l| l.strip_prefix("machine "))
        .unwrap_or("up")
        .to_string()
}

#[derive(Properties, PartialEq, Debug)]
pub struct Props {
    pub scenario: Scenario,
    pub on_change: Callback<Scenario>,
}

#[function_component(FeaturesPane)]
// Over the 100-line limit, not yet split: a Yew function component,
// most of it the html! of the feature groups.
pub fn features_pane(p: &Props) -> Html {
    let error = use_state(|| None::<String>);
    let debugfs_note = use_state(|| None::<String>);
    // What the user is typing into the base slice field, until applied:
    // kept in state so streaming re-renders do not reset it.
    let slice_draft = use_state(|| None::<String>);
    let sc = &p.scenario;

    // Applies one `Scenario::set` argument, or shows why not.
    let setter = |key: &'static str| {
        let sc = sc.clone();
        let on_change = p.on_change.clone();
        let error = error.clone();
        Callback::from(move |value: String| {
            let mut next = sc.clone();
            match next.set(&format!("{key}={value}")) {
                Ok(()) => {
                    error.set(None);
                    on_change.emit(next);
                }
                Err(e) => error.set(Some(format!("{key}: {} ({})", e.message, e.hint))),
            }
        })
    };
    let select = |key: &'static str| {
        let set = setter(key);
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            set.emit(el.value());
        })
    };
    let text_input = |key: &'static str| {
        let set = setter(key);
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            set.emit(el.value());
        })
    };
    let feature = |token: String| {
        let sc = sc.clone();
        let on_change = p.on_change.clone();
        let error = error.clone();
        move || apply_token(&sc, &token, &on_change, &error)
    };
    let switch = |name: &'static str, doc: &'static str| {
        let on = sc.features.features.get_bool(name).unwrap_or(false);
        let flip = feature(if on {
            format!("NO_{name}")
        } else {
            name.to_string()
        });
        html! {
            <li>
                <label title={doc}>
                    <input type="checkbox" checked={on} data-feature={name}
                           onchange={Callback::from(move |_| flip())} />
                    <code>{ name }</code>
                </label>
            </li>
        }
    };
    let doc_of = |name: &str| {
        FEATURES
            .iter()
            .find(|f| f.name == name)
            .map_or("", |f| f.doc)
    };

    let enums = FEATURES.iter().filter_map(|f| match f.kind {
        FeatureKind::Enum(values) => Some((f.name, f.doc, values)),
        FeatureKind::Bool => None,
    });

    let on_debugfs = {
        let sc = sc.clone();
        let on_change = p.on_change.clone();
        let note = debugfs_note.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let form: web_sys::HtmlFormElement = e.target_unchecked_into();
            let Some(area) = form.elements().named_item("debugfs").and_then(|el| {
                wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlTextAreaElement>(el).ok()
            }) else {
                return;
            };
            let mut next = sc.clone();
            match eevdf_scenario::debugfs::apply(&mut next, &area.value()) {
                Ok(warnings) => {
                    note.set(Some(if warnings.is_empty() {
                        "Applied.".to_string()
                    } else {
                        format!("Applied; {}", warnings.join("; "))
                    }));
                    on_change.emit(next);
                }
                Err(e) => note.set(Some(format!(
                    "{}:{}: {} ({})",
                    e.line, e.column, e.message, e.hint
                ))),
            }
        })
    };

    let profile = sc.features.profile;
    let machine = machine_name(sc);
    let base_slice = (*slice_draft).clone().unwrap_or_else(|| {
        sc.sim
            .sysctl
            .base_slice_ns
            .map(|v| format!("{}us", v / 1000))
            .unwrap_or_default()
    });
    let on_slice_input = {
        let draft = slice_draft.clone();
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            draft.set(Some(el.value()));
        })
    };
    let on_slice_change = {
        let set = text_input("sysctl.base_slice_ns");
        let draft = slice_draft.clone();
        Callback::from(move |e: Event| {
            draft.set(None);
            set.emit(e);
        })
    };
    html! {
        <div class="features" data-testid="features">
            <div class="knobs">
                <label>{ "Kernel " }
                    <select onchange={select("kernel")} data-testid="profile">
                        { for Profile::ALL.iter().map(|p| html! {
                            <option value={p.name()} selected={*p == profile}>{ p.name() }</option>
                        }) }
                    </select>
                </label>
                <label>{ "Machine " }
                    <select onchange={select("machine")} data-testid="machine">
                        if !MACHINES.contains(&machine.as_str()) {
                            <option value={machine.clone()} selected=true>{ machine.clone() }</option>
                        }
                        { for MACHINES.iter().map(|m| html! {
                            <option value={*m} selected={*m == machine}>{ *m }</option>
                        }) }
                    </select>
                </label>
                <label>{ "HZ " }
                    <select onchange={select("hz")} data-testid="hz">
                        { for [100u32, 250, 300, 1000].iter().map(|h| html! {
                            <option value={h.to_string()} selected={*h == sc.sim.hz}>{ h }</option>
                        }) }
                    </select>
                </label>
                <label>{ "Preemption " }
                    <select onchange={select("preempt")} data-testid="preempt">
                        { for PreemptModel::ALL.iter().map(|m| html! {
                            <option value={m.name()} selected={*m == sc.preempt_model()}>{ m.name() }</option>
                        }) }
                    </select>
                </label>
                <label title="sysctl base_slice_ns; empty = the kernel's scaled default">{ "Base slice " }
                    <input type="text" size="7" placeholder="default" value={base_slice}
                           oninput={on_slice_input} onchange={on_slice_change} data-testid="base-slice" />
                </label>
            </div>
            if let Some(e) = &*error {
                <p class="error" data-testid="features-error">{ e }</p>
            }
            <h3>{ "features.h" }</h3>
            <ul class="toggles">
                { for kernel_bools().map(|f| switch(f.name, f.doc)) }
            </ul>
            { for SERIES.iter().map(|s| html! {
                <>
                    <h3 class="series" title={s.subject}>{ s.subject }</h3>
                    <ul class="toggles">
                        { for s.names.iter().map(|n| switch(n, doc_of(n))) }
                    </ul>
                </>
            }) }
            <h3>{ "Variants" }</h3>
            <ul class="toggles">
                { for enums.map(|(name, doc, values)| {
                    let current = sc.features.features.get_enum(name).unwrap_or("");
                    let sc2 = sc.clone();
                    let on_change = p.on_change.clone();
                    let error = error.clone();
                    let onchange = Callback::from(move |e: Event| {
                        let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
                        let mut next = sc2.clone();
                        match next.apply_features(&format!("{name}={}", el.value())) {
                            Ok(()) => on_change.emit(next),
                            Err(e) => error.set(Some(format!("{name}: {}", e.message))),
                        }
                    });
                    html! {
                        <li>
                            <label title={doc}>
                                <code>{ name }</code>{ " " }
                                <select {onchange} data-feature={name}>
                                    { for values.iter().map(|v| html! {
                                        <option value={*v} selected={*v == current}>{ *v }</option>
                                    }) }
                                </select>
                            </label>
                        </li>
                    }
                }) }
            </ul>
            <form class="debugfs" onsubmit={on_debugfs}>
                <label for="debugfs">{ "Paste /sys/kernel/debug/sched/features (and tunables):" }</label>
                <textarea id="debugfs" name="debugfs" rows="2" spellcheck="false"
                          placeholder="PLACE_LAG ... NO_NEXT_BUDDY ..." data-testid="debugfs" />
                <button type="submit">{ "Apply" }</button>
                if let Some(n) = &*debugfs_note {
                    <p class="muted" data-testid="debugfs-note">{ n }</p>
                }
            </form>
        </div>
    }
}

/// Applies one feature token to the scenario, or shows why not.
fn apply_token(
    sc: &Scenario,
    token: &str,
    on_change: &Callback<Scenario>,
    error: &UseStateHandle<Option<String>>,
) {
    let mut next = sc.clone();
    match next.apply_features(token) {
        Ok(()) => {
            error.set(None);
            on_change.emit(next);
        }
        Err(e) => error.set(Some(format!("{token}: {}", e.message))),
    }
}

/// The switches people flip while they watch the results, kept beside
/// the results table (on a phone the features pane is a long scroll
/// below it).
pub const QUICK: [&str; 3] = ["PREEMPT_SHORT", "RUN_TO_PARITY", "NEXT_BUDDY"];

/// [`QUICK`]'s switches, each the same edit as the features pane's.
#[function_component(QuickSwitches)]
pub fn quick_switches(p: &Props) -> Html {
    let error = use_state(|| None::<String>);
    let sc = &p.scenario;
    let switch = |name: &'static str| {
        let on = sc.features.features.get_bool(name).unwrap_or(false);
        let token = if on {
            format!("NO_{name}")
        } else {
            name.to_string()
        };
        let (sc, on_change, error) = (sc.clone(), p.on_change.clone(), error.clone());
        let flip = Callback::from(move |_: Event| apply_token(&sc, &token, &on_change, &error));
        let doc = FEATURES
            .iter()
            .find(|f| f.name == name)
            .map_or("", |f| f.doc);
        html! {
            <label title={doc}>
                <input type="checkbox" checked={on} data-quick={name} onchange={flip} />
                <code>{ name }</code>
            </label>
        }
    };
    html! {
        <div class="quick" role="group" aria-label="Quick switches" data-testid="quick-switches">
            { for QUICK.into_iter().map(switch) }
            if let Some(e) = &*error {
                <p class="error" role="alert">{ e.clone() }</p>
            }
        </div>
    }
}
