//! The machine view: CPU cards laid out by topology (NUMA node, LLC,
//! cluster, core with its SMT siblings), capacity and live state per CPU,
//! a palette of task templates, and the tasks as chips where their
//! affinity puts them. Tasks move by drag and drop with pointer events
//! (mouse, pen and touch alike), or by keyboard: activate a template or
//! a chip's "Move", then activate a CPU, LLC, node or the machine.

use std::rc::Rc;

use eevdf_scenario::scenario::Scenario;
use eevdf_sim::topology::Topology;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::charts::{slot_class, slot_of, slots, Shared};
use eevdf_driver::edit::{self, Target, Template};
use eevdf_driver::live::CpuLive;

/// The open task editor: which task, and its fields as typed so far
/// (`(key, value)`, scenario spellings; empty removes a key).
#[derive(Clone, Debug, PartialEq)]
struct Editing {
    task: usize,
    fields: Vec<(String, String)>,
}

/// What is being carried.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Payload {
    New(Template),
    Move(usize),
}

/// A pointer drag in progress.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Drag {
    payload: Payload,
    x0: i32,
    y0: i32,
    /// Moved far enough to be a drag rather than a click.
    moving: bool,
}

/// The button that shows or folds an LLC's CPU cards on a big machine.
fn fold_button(
    open: &UseStateHandle<Vec<(u32, u32)>>,
    key: (u32, u32),
    shown: bool,
    cpus: usize,
) -> Html {
    let onclick = {
        let open = open.clone();
        Callback::from(move |e: MouseEvent| {
            // Not a click on the LLC's zone (which places a task there).
            e.stop_propagation();
            let mut v = (*open).clone();
            match v.iter().position(|k| *k == key) {
                Some(i) => {
                    v.remove(i);
                }
                None => v.push(key),
            }
            open.set(v);
        })
    };
    let onkeydown = Callback::from(|e: KeyboardEvent| e.stop_propagation());
    html! {
        <button type="button" class="fold" {onclick} {onkeydown} aria-expanded={shown.to_string()}
                aria-label={format!("{} the {cpus} CPUs of LLC {}", if shown { "Fold" } else { "Show" }, key.1)}
                data-testid={format!("fold-{}-{}", key.0, key.1)}>
            { if shown { "Fold" } else { "Show" } }
        </button>
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct Props {
    pub scenario: Scenario,
    pub live: Option<Shared<Vec<CpuLive>>>,
    pub on_change: Callback<Scenario>,
}

/// `data-drop` under a viewport point.
fn drop_attr_at(x: i32, y: i32) -> Option<String> {
    let el = gloo::utils::document().element_from_point(x as f32, y as f32)?;
    let zone = el.closest("[data-drop]").ok()??;
    zone.get_attribute("data-drop")
}

fn slice_text(ns: Option<u64>) -> String {
    match ns {
        Some(v) if v % 1_000_000 == 0 => format!("{}ms", v / 1_000_000),
        Some(v) => format!("{}us", v / 1000),
        None => "base".into(),
    }
}

/// A cluster's cores (each its SMT siblings), by cluster id.
type Cluster = (u32, Vec<Vec<u32>>);
/// An LLC's clusters, by LLC id.
type Llc = (u32, Vec<Cluster>);
/// A node's LLCs, by node id.
type Node = (u32, Vec<Llc>);

/// Groups of CPUs as the page shows them: nodes → LLCs → clusters → cores.
struct Layout {
    nodes: Vec<Node>,
    max_capacity: u32,
}

fn layout(topo: &Topology) -> Layout {
    // Groups by id in order of first appearance: SMT siblings need not
    // be adjacent CPU numbers (x86 numbers a core's threads n and n+N).
    fn slot<T>(v: &mut Vec<(u32, T)>, id: u32, new: impl FnOnce() -> T) -> &mut T {
        let at = match v.iter().position(|e| e.0 == id) {
            Some(p) => p,
            None => {
                v.push((id, new()));
                v.len() - 1
            }
        };
        &mut v[at].1
    }
    let mut nodes: Vec<Node> = Vec::new();
    let mut core_ids: Vec<(u32, Vec<u32>)> = Vec::new();
    for (cpu, t) in topo.cpus.iter().enumerate() {
        let cpu = cpu as u32;
        let llcs = slot(&mut nodes, t.node, Vec::new);
        let clusters = slot(llcs, t.llc, Vec::new);
        let cores = slot(clusters, t.cluster, Vec::new);
        // Cores are listed per cluster; remember each core's position.
        let ids = slot(&mut core_ids, t.cluster, Vec::new);
        match ids.iter().position(|&c| c == t.core) {
            Some(p) => cores[p].push(cpu),
            None => {
                ids.push(t.core);
                cores.push(vec![cpu]);
            }
        }
    }
    Layout {
        nodes,
        max_capacity: topo.max_capacity().max(1),
    }
}

#[function_component(MachineView)]
// Over the 100-line limit, not yet split: a Yew function component
// (its drag state and callbacks share hooks); the editor dialog is its
// own component already, the palette and CPU cards are next.
pub fn machine_view(p: &Props) -> Html {
    let drag = use_state(|| None::<Drag>);
    let hover = use_state(|| None::<String>);
    let placing = use_state(|| None::<Payload>);
    // The task being edited and the editor's field values: kept here, not
    // read back from the inputs, so a re-render (results stream in several
    // times a second) never resets what the user typed.
    let editing = use_state(|| None::<Editing>);
    // A modal dialog: focus moves into the editor when it opens, and back
    // to the task's chip when it closes (to CPU 0 if the task is gone), so
    // a keyboard user goes on where they were.
    let opened = use_mut_ref(|| None::<OpenEditor>);
    let names: Vec<String> = p
        .scenario
        .sim
        .tasks
        .iter()
        .map(|t| t.name.clone())
        .collect();
    use_effect_with(editing.as_ref().map(|e| e.task), move |open| {
        let was = opened.borrow_mut().take();
        match (*open, was) {
            (Some(i), _) => {
                *opened.borrow_mut() = names.get(i).map(|n| OpenEditor {
                    name: n.clone(),
                    index: i,
                    count: names.len(),
                });
                focus_first("[data-testid=task-editor] input");
            }
            (None, Some(was)) => focus_after_edit(&names, was),
            (None, None) => {}
        }
    });
    let editor_error = use_state(|| None::<String>);
    let suppress_click = use_mut_ref(|| false);
    let ghost = use_node_ref();
    let sc = &p.scenario;
    let ss = slots(sc.sim.tasks.iter().map(|t| t.name.as_str()));

    // Big machines show each LLC as one line until asked: (node, llc)
    // pairs opened.
    let open = use_state(Vec::<(u32, u32)>::new);
    let topo = use_memo(sc.machine.clone(), |m| Topology::build(&m.spec()).ok());
    let Some(topo) = topo.as_ref() else {
        return html! { <p class="error">{ "This machine cannot be built." }</p> };
    };
    let nr = topo.nr_cpus();
    let lay = layout(topo);

    // Applies a payload to a target.
    let apply = {
        let sc = sc.clone();
        let on_change = p.on_change.clone();
        let editing = editing.clone();
        Rc::new(move |payload: Payload, target: &str| {
            let Some(t) = Target::parse(target) else {
                return;
            };
            let next = match payload {
                Payload::New(tpl) => edit::add_task(&sc, tpl, &t).map(|(s, _)| s),
                Payload::Move(i) => edit::move_task(&sc, i, &t),
            };
            if let Ok(next) = next {
                editing.set(None);
                on_change.emit(next);
            }
        })
    };

    // Pointer handlers shared by palette entries and chips.
    let start_drag = |payload: Payload| {
        let drag = drag.clone();
        let suppress = suppress_click.clone();
        Callback::from(move |e: PointerEvent| {
            if e.button() != 0 {
                return;
            }
            // A new gesture: a finger's drag ends without the click a
            // mouse's does, so the suppression must not outlive it (it
            // swallowed the next tap).
            *suppress.borrow_mut() = false;
            if let Some(el) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            {
                let _ = el.set_pointer_capture(e.pointer_id());
            }
            drag.set(Some(Drag {
                payload,
                x0: e.client_x(),
                y0: e.client_y(),
                moving: false,
            }));
        })
    };
    let on_move = {
        let drag = drag.clone();
        let hover = hover.clone();
        let ghost = ghost.clone();
        Callback::from(move |e: PointerEvent| {
            let Some(mut d) = *drag else {
                return;
            };
            let (x, y) = (e.client_x(), e.client_y());
            if !d.moving && ((x - d.x0).abs() + (y - d.y0).abs()) > 6 {
                d.moving = true;
                drag.set(Some(d));
            }
            if d.moving {
                if let Some(g) = ghost.cast::<web_sys::HtmlElement>() {
                    // CSSOM, not a style attribute: the CSP allows it.
                    let _ = g
                        .style()
                        .set_property("transform", &format!("translate({}px, {}px)", x + 8, y + 8));
                }
                let over = drop_attr_at(x, y);
                if *hover != over {
                    hover.set(over);
                }
            }
        })
    };
    // Activating a template starts placing it; a chip opens its editor.
    let activate: Rc<dyn Fn(Payload)> = {
        let placing = placing.clone();
        let editing = editing.clone();
        let editor_error = editor_error.clone();
        let sc = sc.clone();
        Rc::new(move |payload| match payload {
            Payload::New(_) => placing.set(Some(payload)),
            Payload::Move(i) => {
                editor_error.set(None);
                editing.set(Some(Editing {
                    task: i,
                    fields: edit::task_fields(&sc, i),
                }));
            }
        })
    };
    let on_up = {
        let activate = activate.clone();
        let drag = drag.clone();
        let hover = hover.clone();
        let apply = apply.clone();
        let suppress = suppress_click.clone();
        Callback::from(move |e: PointerEvent| {
            let Some(d) = *drag else {
                return;
            };
            drag.set(None);
            hover.set(None);
            if d.moving {
                *suppress.borrow_mut() = true;
                if let Some(target) = drop_attr_at(e.client_x(), e.client_y()) {
                    apply(d.payload, &target);
                }
            } else if e.pointer_type() == "touch" {
                // A tap acts when the finger lifts: Chromium makes no
                // click of a tap that closely follows another gesture
                // (a tap right after a drag did nothing); a click that
                // still comes is swallowed.
                *suppress.borrow_mut() = true;
                activate(d.payload);
            }
        })
    };
    let on_cancel = {
        let drag = drag.clone();
        let hover = hover.clone();
        Callback::from(move |_: PointerEvent| {
            drag.set(None);
            hover.set(None);
        })
    };
    // A click (mouse without moving, or Enter/Space) or a tap.
    let click = |payload: Payload| {
        let activate = activate.clone();
        let suppress = suppress_click.clone();
        Callback::from(move |_: MouseEvent| {
            if std::mem::take(&mut *suppress.borrow_mut()) {
                return;
            }
            activate(payload);
        })
    };
    let chip_keys = |i: usize| {
        let sc = sc.clone();
        let on_change = p.on_change.clone();
        Callback::from(move |e: KeyboardEvent| {
            if matches!(e.key().as_str(), "Delete" | "Backspace") {
                e.prevent_default();
                if let Ok(next) = edit::delete_task(&sc, i) {
                    on_change.emit(next);
                }
            }
        })
    };
    // Drop zones: activating one while placing drops there.
    let zone_activate = |target: String| {
        let placing = placing.clone();
        let apply = apply.clone();
        Callback::from(move |e: Event| {
            if let Some(pl) = *placing {
                e.stop_propagation();
                placing.set(None);
                apply(pl, &target);
            }
        })
    };
    // Only while placing: otherwise Enter and Space belong to the chip
    // inside the zone (its button opens the editor).
    let zone_keys = |target: String| {
        let activate = zone_activate(target);
        let placing = placing.clone();
        Callback::from(move |e: KeyboardEvent| {
            if placing.is_some() && matches!(e.key().as_str(), "Enter" | " ") {
                e.prevent_default();
                activate.emit(e.into());
            }
        })
    };
    let zone_click = |target: String| {
        let activate = zone_activate(target);
        Callback::from(move |e: MouseEvent| activate.emit(e.into()))
    };

    // Chips by the zone their affinity matches exactly; others go on
    // the machine with their CPU list.
    let zone_of = |cpus: &Option<Vec<u32>>| -> String {
        match cpus {
            None => Target::Machine.attr(),
            Some(c) => Target::Cpus(c.clone()).attr(),
        }
    };
    let mut zone_attrs: Vec<String> = vec![Target::Machine.attr()];
    for (_, llcs) in &lay.nodes {
        let node_cpus: Vec<u32> = llcs
            .iter()
            .flat_map(|l| l.1.iter().flat_map(|c| c.1.iter().flatten().copied()))
            .collect();
        zone_attrs.push(Target::Cpus(node_cpus).attr());
        for (_, clusters) in llcs {
            let llc_cpus: Vec<u32> = clusters
                .iter()
                .flat_map(|c| c.1.iter().flatten().copied())
                .collect();
            zone_attrs.push(Target::Cpus(llc_cpus).attr());
            for (_, cores) in clusters {
                let cl: Vec<u32> = cores.iter().flatten().copied().collect();
                zone_attrs.push(Target::Cpus(cl).attr());
            }
        }
    }
    for c in 0..nr {
        zone_attrs.push(Target::Cpus(vec![c]).attr());
    }
    let chips_for = |zone: &str| -> Html {
        html! {
            <div class="chips">
                { for sc.sim.tasks.iter().enumerate().filter(|(_, t)| {
                    let z = zone_of(&t.cpus);
                    z == zone || (zone == "machine" && !zone_attrs.contains(&z))
                }).map(|(i, t)| {
                    let extra = match &t.cpus {
                        Some(c) if zone == "machine" => format!(" cpus={}", c.iter().map(u32::to_string).collect::<Vec<_>>().join(",")),
                        _ => String::new(),
                    };
                    html! {
                        <button type="button" class={classes!("chip", slot_class(ss[i]))}
                                data-task={t.name.clone()}
                                title={format!("{} (kind={}); drag to move, Enter to edit, Delete to remove", t.name, t.workload.kind())}
                                onpointerdown={start_drag(Payload::Move(i))}
                                onpointermove={on_move.clone()} onpointerup={on_up.clone()}
                                onpointercancel={on_cancel.clone()}
                                onclick={click(Payload::Move(i))} onkeydown={chip_keys(i)}>
                            { format!("{} ×{} · {}{extra}", t.name, t.nr_threads(), slice_text(t.slice_ns)) }
                        </button>
                    }
                }) }
            </div>
        }
    };
    let zone_class = |base: &'static str, attr: &str| {
        classes!(
            base,
            "zone",
            (hover.as_deref() == Some(attr)).then_some("over"),
            placing.is_some().then_some("placing")
        )
    };
    let live = p.live.as_ref().map(|l| l.0.clone());
    let cpu_card = |cpu: u32| -> Html {
        let attr = Target::Cpus(vec![cpu]).attr();
        let cap = topo.capacity(cpu);
        let little = cap < lay.max_capacity;
        let st = live.as_ref().and_then(|l| l.get(cpu as usize)).cloned();
        html! {
            <div class={classes!(zone_class("cpu", &attr), little.then_some("little"))}
                 data-drop={attr.clone()} data-testid={format!("cpu-{cpu}")} tabindex="0"
                 role="button"
                 onclick={zone_click(attr.clone())} onkeydown={zone_keys(attr.clone())}>
                <div class="cpu-head">
                    <b>{ format!("CPU{cpu}") }</b>
                    <span class="cap" title="arch_scale_cpu_capacity">{ format!("cap {cap}") }</span>
                </div>
                {
                    match &st {
                        Some(s) => html! {
                            <div class="cpu-live">
                                // The card is named by its text (no aria-label that
                                // could leave the running task out, WCAG 2.5.3).
                                <span class="sr-only">{ "running" }</span>
                                <span class={classes!("run", s.running.map(|d| slot_class(slot_of(&ss, d as usize))))}
                                      data-testid={format!("cpu-{cpu}-running")}>
                                    { s.running_name.clone().unwrap_or_else(|| "idle".into()) }
                                </span>
                                <span class="q" title="tasks queued (h_nr_queued)">{ format!("q{}", s.queued) }</span>
                                <meter min="0" max="1024" value={s.util.to_string()}
                                       title={format!("util {} / 1024, busy {:.0}%", s.util, s.busy_pct)} />
                            </div>
                        },
                        None => html! {},
                    }
                }
                { chips_for(&attr) }
            </div>
        }
    };

    let multi_nodes = lay.nodes.len() > 1;
    let dense = nr > 64;
    // Past 32 CPUs a machine is taller than a screen: its LLCs fold.
    let collapse = nr > 32;
    let body = html! {
        <div class={classes!("nodes", dense.then_some("dense"))}>
            { for lay.nodes.iter().map(|(node, llcs)| {
                let node_cpus: Vec<u32> = llcs.iter().flat_map(|l| l.1.iter().flat_map(|c| c.1.iter().flatten().copied())).collect();
                let nattr = Target::Cpus(node_cpus).attr();
                let multi_llc = llcs.len() > 1;
                let inner = html! {
                    { for llcs.iter().map(|(llc, clusters)| {
                        let llc_cpus: Vec<u32> = clusters.iter().flat_map(|c| c.1.iter().flatten().copied()).collect();
                        let shown = !collapse || open.contains(&(*node, *llc));
                        let fold = collapse.then(|| fold_button(&open, (*node, *llc), shown, llc_cpus.len()));
                        let summary = (!shown).then(|| {
                            let running = llc_cpus.iter().filter(|c| {
                                live.as_ref().and_then(|l| l.get(**c as usize)).is_some_and(|s| s.running.is_some())
                            }).count();
                            html! {
                                <span class="llc-summary" data-testid={format!("llc-summary-{node}-{llc}")}>
                                    <span class="muted">{ format!("{} CPUs{}", llc_cpus.len(),
                                        if live.is_some() { format!(", {running} running") } else { String::new() }) }</span>
                                    // Tasks pinned to one CPU stay in view (and draggable).
                                    { for llc_cpus.iter().map(|&c| chips_for(&Target::Cpus(vec![c]).attr())) }
                                </span>
                            }
                        });
                        let lattr = Target::Cpus(llc_cpus).attr();
                        let multi_cl = clusters.len() > 1;
                        let cores = html! {
                            { for clusters.iter().map(|(cl, cores)| {
                                let cl_cpus: Vec<u32> = cores.iter().flatten().copied().collect();
                                let cattr = Target::Cpus(cl_cpus).attr();
                                let cores_html = html! {
                                    { for cores.iter().map(|core| html! {
                                        <div class={classes!("core", (core.len() > 1).then_some("smt"))}>
                                            { for core.iter().map(|&c| cpu_card(c)) }
                                        </div>
                                    }) }
                                };
                                if multi_cl {
                                    html! {
                                        <div class={zone_class("cluster", &cattr)} data-drop={cattr.clone()} tabindex="0"
                                             onclick={zone_click(cattr.clone())} onkeydown={zone_keys(cattr.clone())}>
                                            <div class="zone-head">{ format!("cluster {cl}") }{ chips_for(&cattr) }</div>
                                            <div class="cores">{ cores_html }</div>
                                        </div>
                                    }
                                } else {
                                    html! { <div class="cores">{ cores_html }</div> }
                                }
                            }) }
                        };
                        // Folded, the LLC is its head line: name, counts, chips.
                        let folded = summary.is_some();
                        if multi_llc || multi_nodes {
                            html! {
                                <div class={classes!(zone_class("llc", &lattr), folded.then_some("folded"))} data-drop={lattr.clone()} tabindex="0"
                                     data-testid={format!("llc-{llc}")}
                                     onclick={zone_click(lattr.clone())} onkeydown={zone_keys(lattr.clone())}>
                                    <div class="zone-head">{ format!("LLC {llc}") }{ chips_for(&lattr) }{ summary }{ fold }</div>
                                    if !folded { { cores } }
                                </div>
                            }
                        } else {
                            html! { <>{ fold }{ summary.unwrap_or(cores) }</> }
                        }
                    }) }
                };
                if multi_nodes {
                    html! {
                        <div class={zone_class("node", &nattr)} data-drop={nattr.clone()} tabindex="0"
                             data-testid={format!("node-{node}")}
                             onclick={zone_click(nattr.clone())} onkeydown={zone_keys(nattr.clone())}>
                            <div class="zone-head">{ format!("node {node}") }{ chips_for(&nattr) }</div>
                            { inner }
                        </div>
                    }
                } else {
                    inner
                }
            }) }
        </div>
    };

    let status = match *placing {
        Some(Payload::New(t)) => format!("Placing {}: choose a CPU, an LLC, a node or the machine (Esc cancels).", t.label()),
        Some(Payload::Move(i)) => format!(
            "Moving {}: choose a CPU, an LLC, a node or the machine (Esc cancels).",
            sc.sim.tasks.get(i).map_or("", |t| t.name.as_str())
        ),
        None => "Drag a template onto a CPU (pins it), an LLC, a node or the machine; drag chips to re-pin.".into(),
    };
    let on_escape = {
        let placing = placing.clone();
        let editing = editing.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Escape" {
                placing.set(None);
                editing.set(None);
            }
        })
    };
    let mattr = Target::Machine.attr();
    let ghost_label = drag
        .and_then(|d| d.moving.then_some(d.payload))
        .map(|pl| match pl {
            Payload::New(t) => t.label().to_string(),
            Payload::Move(i) => sc
                .sim
                .tasks
                .get(i)
                .map_or(String::new(), |t| t.name.clone()),
        });

    html! {
        <div class="machine-view" onkeydown={on_escape}>
            <div class="palette" role="toolbar" aria-label="Task templates">
                { for Template::ALL.iter().map(|&t| {
                    let spec = t.spec("x");
                    html! {
                        <button type="button" class="template" data-template={t.id()}
                                title="Drag onto the machine, or press Enter then choose a CPU"
                                onpointerdown={start_drag(Payload::New(t))}
                                onpointermove={on_move.clone()} onpointerup={on_up.clone()}
                                onpointercancel={on_cancel.clone()}
                                onclick={click(Payload::New(t))}>
                            <b>{ t.label() }</b>
                            <small>{ format!("slice {}", slice_text(spec.slice_ns)) }</small>
                        </button>
                    }
                }) }
            </div>
            <p class="muted status" data-testid="machine-status" aria-live="polite">{ status }</p>
            <div class={zone_class("machine", &mattr)} data-drop={mattr.clone()} tabindex="0"
                 data-testid="machine-zone"
                 onclick={zone_click(mattr.clone())} onkeydown={zone_keys(mattr.clone())}>
                <div class="zone-head">
                    { format!("{} · {nr} CPU{}", topo.name, if nr == 1 { "" } else { "s" }) }
                    { chips_for(&mattr) }
                </div>
                { body }
            </div>
            <div ref={ghost} class={classes!("ghost", ghost_label.is_none().then_some("hidden"))} aria-hidden="true">
                { ghost_label.unwrap_or_default() }
            </div>
            if let Some(ed) = &*editing {
                { editor(sc, ed, &p.on_change, &editing, &editor_error, &placing) }
            }
        </div>
    }
}

/// The task editor dialog.
fn editor(
    sc: &Scenario,
    ed: &Editing,
    on_change: &Callback<Scenario>,
    editing: &UseStateHandle<Option<Editing>>,
    error: &UseStateHandle<Option<String>>,
    placing: &UseStateHandle<Option<Payload>>,
) -> Html {
    let i = ed.task;
    let Some(task) = sc.sim.tasks.get(i) else {
        return html! {};
    };
    let value_of = |k: &str| {
        ed.fields
            .iter()
            .find(|(kk, _)| kk == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let kind = task.workload.kind();
    let fields = edit::fields_for(kind);
    let on_input = |key: &'static str| {
        let editing = editing.clone();
        let ed = ed.clone();
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            let mut next = ed.clone();
            match next.fields.iter_mut().find(|(k, _)| k == key) {
                Some(f) => f.1 = el.value(),
                None => next.fields.push((key.to_string(), el.value())),
            }
            editing.set(Some(next));
        })
    };
    let on_submit = {
        let sc = sc.clone();
        let on_change = on_change.clone();
        let editing = editing.clone();
        let error = error.clone();
        let fields = fields.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let form: web_sys::HtmlFormElement = e.target_unchecked_into();
            let els = form.elements();
            let edits: Vec<(String, String)> = fields
                .iter()
                .filter_map(|f| {
                    let el = els
                        .named_item(f)?
                        .dyn_into::<web_sys::HtmlInputElement>()
                        .ok()?;
                    Some((f.to_string(), el.value()))
                })
                .collect();
            match edit::set_task_fields(&sc, i, &edits) {
                Ok(next) => {
                    error.set(None);
                    editing.set(None);
                    on_change.emit(next);
                }
                Err(e) => error.set(Some(format!("{} ({})", e.message, e.hint))),
            }
        })
    };
    let on_delete = {
        let sc = sc.clone();
        let on_change = on_change.clone();
        let editing = editing.clone();
        Callback::from(move |_| {
            if let Ok(next) = edit::delete_task(&sc, i) {
                editing.set(None);
                on_change.emit(next);
            }
        })
    };
    let on_close = {
        let editing = editing.clone();
        Callback::from(move |_| editing.set(None))
    };
    let on_move = {
        let editing = editing.clone();
        let placing = placing.clone();
        Callback::from(move |_| {
            editing.set(None);
            placing.set(Some(Payload::Move(i)));
        })
    };
    html! {
        <div class="overlay" role="dialog" aria-modal="true" aria-label={format!("Edit task {}", task.name)}>
            <form class="dialog editor" onsubmit={on_submit} onkeydown={Callback::from(trap_focus)} data-testid="task-editor">
                <h3>{ format!("Task {} (kind={})", task.name, task.workload.kind()) }</h3>
                <div class="fields">
                    { for fields.iter().map(|f| html! {
                        <label title={edit::field_help(kind, f)}>
                            <span>{ *f }</span>
                            <input type="text" name={*f} value={value_of(f)} oninput={on_input(f)}
                                   placeholder={edit::field_default(kind, f)} />
                        </label>
                    }) }
                </div>
                <p class="muted">{ "Durations take a unit (20us, 2.8ms); policy is normal, batch or idle; a group must be declared in the scenario." }</p>
                if let Some(e) = &**error {
                    <p class="error" data-testid="editor-error">{ e }</p>
                }
                <div class="buttons">
                    <button type="submit" class="primary">{ "Save" }</button>
                    <button type="button" onclick={on_move}>{ "Move…" }</button>
                    <button type="button" class="danger" onclick={on_delete} data-testid="delete-task">{ "Delete" }</button>
                    <button type="button" onclick={on_close}>{ "Cancel" }</button>
                </div>
            </form>
        </div>
    }
}

/// The task whose editor is open, as it was when it opened.
struct OpenEditor {
    name: String,
    index: usize,
    /// The scenario's task count then: fewer on close means a delete.
    count: usize,
}

/// Where the focus goes when an editor closes: the task's chip, found by
/// name or, after a rename, by its unchanged position; CPU 0 when the
/// task was deleted.
fn focus_after_edit(names: &[String], OpenEditor { name, index, count }: OpenEditor) {
    if names.len() < count {
        focus_first("[data-testid=cpu-0]");
        return;
    }
    let now = if names.contains(&name) {
        Some(&name)
    } else {
        names.get(index)
    };
    if let Some(n) = now {
        focus_first(&format!("button.chip[data-task=\"{n}\"]"));
    }
}

/// Focuses the first element matching `selector`, if any.
fn focus_first(selector: &str) {
    use wasm_bindgen::JsCast;
    if let Some(el) = gloo::utils::document()
        .query_selector(selector)
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

/// Keeps Tab and Shift+Tab inside the dialog the key is pressed in: from
/// its last control to its first, and back.
fn trap_focus(e: KeyboardEvent) {
    use wasm_bindgen::JsCast;
    if e.key() != "Tab" {
        return;
    }
    // Yew delegates events to its root, so the dialog is found from the
    // target, not `current_target`.
    let Some(dialog) = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|t| t.closest(".dialog").ok().flatten())
    else {
        return;
    };
    let Ok(list) = dialog.query_selector_all("input, select, textarea, button") else {
        return;
    };
    let n = list.length();
    if n == 0 {
        return;
    }
    let (edge, wrap) = if e.shift_key() {
        (list.item(0), list.item(n - 1))
    } else {
        (list.item(n - 1), list.item(0))
    };
    let active = gloo::utils::document().active_element();
    let at_edge = match (&edge, &active) {
        (Some(a), Some(b)) => a.is_same_node(Some(b.as_ref())),
        _ => false,
    };
    if at_edge {
        if let Some(el) = wrap.and_then(|w| w.dyn_into::<web_sys::HtmlElement>().ok()) {
            e.prevent_default();
            let _ = el.focus();
        }
    }
}
