//! The playground page: scenario editor and presets, feature switches,
//! the machine with drag-and-drop tasks, live results (table, latency
//! CDF, per-CPU timeline) streamed from the Web Worker, an A/B baseline,
//! share buttons, themes and a help overlay.
//!
//! The scenario text is the single source of truth: every gesture edits
//! it through `eevdf-scenario` (as the CLI's flags do), the page parses
//! it locally to show errors at once, the worker re-runs it, and the URL
//! fragment follows it, so the address bar is always a share link. While
//! the text is bad the last good results stay.

use std::cell::RefCell;
use std::rc::Rc;

use eevdf_scenario::scenario::Scenario;
use gloo::timers::callback::Timeout;
use gloo::worker::{Spawnable, WorkerBridge};
use yew::prelude::*;

use crate::charts::{CdfChart, Shared, TimelineChart};
use crate::features::{FeaturesPane, QuickSwitches};
use crate::lanes::{now_ms, progress_note, LaneState};
use crate::machine::MachineView;
use crate::page::{
    apply_theme, copy, initial_scenario, link_in_address, page_base, remember, show_fragment,
    stored_scenario, stored_theme, THEME_KEY,
};
use crate::results::{FidelityNote, ResultsTable};
use crate::sweep::SweepPane;
use crate::teaching::TeachingPane;
use crate::worker::{Job, Lane, Outcome, Request, Response, SimWorker, Swb};
use eevdf_driver::share;
use eevdf_driver::teach::{TeachCmd, TeachView};

/// The worker's loader script, relative so the page works under any
/// sub-path (`index.html` copies it next to the page).
pub(crate) const WORKER_LOADER: &str = "./eevdf-worker-loader.js";

/// Typing settles this long before a run starts.
const DEBOUNCE_MS: u32 = 100;

/// The preset that shows a flip in one click, for presets without one.
const FIRST_FLIP: &str = "preempt-short";

/// Under a preset's story: its flips as buttons ("Try NO_PREEMPT_SHORT:
/// ct's p99 rises."), or, for a preset without any, a pointer to a
/// preset that has one.
fn try_line(
    p: &eevdf_scenario::presets::Preset,
    sc: Option<&Scenario>,
    set_scenario: &Callback<Scenario>,
    open_preset: &Callback<&'static str>,
) -> Html {
    match (p.flips, sc) {
        (flips @ [_, ..], Some(sc)) => {
            let fidelity = p.name.starts_with("fidelity-");
            html! {
                <p class="try" data-testid="try-flip">
                    if p.name == "default" { { "New here? Flip one feature and watch the table. " } }
                    { for flips.iter().enumerate().map(|(i, f)| try_flip(f, i, sc, set_scenario)) }
                    if fidelity { { " The real kernel's does too (kernel reference data below)." } }
                </p>
            }
        }
        ([], _) if p.name != FIRST_FLIP => {
            let open = open_preset.clone();
            html! {
                <p class="try" data-testid="try-preset">
                    { "New here? " }
                    <button type="button" onclick={Callback::from(move |_: MouseEvent| open.emit(FIRST_FLIP))}>
                        { format!("Open {FIRST_FLIP}") }
                    </button>
                    { ", then press its Try button: one click shows what PREEMPT_SHORT does." }
                </p>
            }
        }
        _ => html! {},
    }
}

/// One flip's button and what it does, e.g. "Try NO_PREEMPT_SHORT: ct's
/// p99 rises." (after the first, separated by a space).
fn try_flip(
    f: &eevdf_scenario::presets::Flip,
    i: usize,
    sc: &Scenario,
    set_scenario: &Callback<Scenario>,
) -> Html {
    let mut next = sc.clone();
    let ok = next.apply_features(f.token).is_ok();
    let set = set_scenario.clone();
    let onclick = Callback::from(move |_: MouseEvent| {
        if ok {
            set.emit(next.clone());
        }
    });
    html! {
        <>
            if i > 0 { { " " } }
            <button type="button" {onclick} data-token={f.token}>{ format!("Try {}", f.token) }</button>
            { format!(": {}'s {} {}.", f.task, f.pct, if f.rises { "rises" } else { "falls" }) }
        </>
    }
}

/// Closes a pane and opens it again on the next turn of the event loop,
/// so it mounts afresh (and reads its props' opening state again).
fn remount(open: &UseStateHandle<bool>) {
    open.set(false);
    let reopen = open.clone();
    Timeout::new(0, move || reopen.set(true)).forget();
}

#[function_component(App)]
// Over the 100-line limit, not yet split: a Yew function component
// whose callbacks share a dozen hooks, which must run in one order on
// every render. The way out is custom hooks (`#[hook]`) per concern
// (the worker bridge, the address bar, the lanes) and view components
// for the top bar and the help; until then it reads top to bottom as
// state, effects, callbacks, view.
pub fn app() -> Html {
    let init = use_memo((), |_| initial_scenario());
    let text = use_state(|| init.text.clone());
    let link_error = use_state(|| init.error.clone());
    // After a bad link, the user's last scenario (kept, not overwritten)
    // is one click away.
    let last_scenario = use_memo((), |_| stored_scenario());
    let last_good = use_mut_ref(|| {
        let default = || {
            eevdf_scenario::presets::preset("default")
                .map(|p| p.text.to_string())
                .unwrap_or_default()
        };
        Some(init.text.clone())
            .filter(|t| Scenario::parse(t).is_ok())
            .or_else(stored_scenario)
            .unwrap_or_else(default)
    });
    let lanes = use_mut_ref(|| [LaneState::default(), LaneState::default()]);
    // Bumped on every accepted answer (the lanes live in a RefCell so the
    // worker callback always sees the current request ids).
    let tick = use_state(|| 0u64);
    let next_id = use_mut_ref(|| 0u32);
    let bridge = use_mut_ref(|| None::<WorkerBridge<SimWorker>>);
    let debounce: Rc<RefCell<Option<Timeout>>> = use_mut_ref(|| None);
    // Set by clicks (switches, drops, presets): their run starts at once;
    // only typing in the editor is debounced.
    let immediate = use_mut_ref(|| false);
    // The pinned baseline's text (A); the page's scenario is B.
    let baseline = use_state(|| init.pin.clone());
    // The sweep pane's flags (the link's `&sweep=`), and whether it is
    // open; a link with a sweep opens it and runs it (`sweep_auto`).
    let sweep = use_state(|| init.sweep.clone());
    let sweeping = use_state(|| init.sweep.is_some());
    let sweep_auto = use_state(|| init.sweep.is_some());
    // The preset last picked from the menu, by name (see `preset_notes`).
    let chosen_preset = use_state(|| None::<&'static str>);
    let status = use_state(|| None::<(String, Option<String>)>);
    let help = use_state(|| false);
    // A link with a tour opens teaching mode at its step.
    let teaching = use_state(|| init.tour.is_some());
    let tour_at = use_state(|| init.tour.clone());
    // The tour the teaching pane opens with (a link's), once.
    let tour_start = use_state(|| init.tour.clone());
    // The user's own scenario while a tour shows its own in the editor,
    // machine and results; "My scenario" and closing bring it back.
    let mine = use_state(|| None::<String>);
    // Requests made before the worker exists (a tour opened by the link
    // asks at once); sent when it does.
    let pending = use_mut_ref(Vec::<Request>::new);
    // Teaching mode's latest picture or error (answers on `Lane::Teach`).
    let teach = use_mut_ref(|| (None::<Rc<TeachView>>, None::<String>));
    let theme = use_state(stored_theme);
    let dark = use_memo((*theme).clone(), |t| apply_theme(t));

    // The worker lives as long as the page.
    {
        let lanes = lanes.clone();
        let tick = tick.clone();
        let bridge = bridge.clone();
        let teach = teach.clone();
        let pending = pending.clone();
        use_effect_with((), move |_| {
            let b = SimWorker::spawner()
                .encoding::<Swb>()
                .callback(move |resp: Response| {
                    let Some(lane) = resp.lane.run_slot() else {
                        let mut t = teach.borrow_mut();
                        match resp.outcome {
                            Outcome::Teach(v) => *t = (Some(Rc::new(*v)), None),
                            Outcome::TeachError(e) => t.1 = Some(e),
                            _ => return,
                        }
                        drop(t);
                        tick.set(*tick + 1);
                        return;
                    };
                    let next = lanes.borrow()[lane].accept(resp);
                    if let Some(mut s) = next {
                        if s.done && s.took_ms == 0.0 {
                            s.took_ms = now_ms() - s.asked_ms;
                        }
                        lanes.borrow_mut()[lane] = s;
                        tick.set(*tick + 1);
                    }
                })
                .spawn_with_loader(WORKER_LOADER);
            for r in pending.borrow_mut().drain(..) {
                b.send(r);
            }
            *bridge.borrow_mut() = Some(b);
            // Dropping the bridge terminates the worker: no leak on unmount.
            move || drop(bridge.borrow_mut().take())
        });
    }

    // A link opened in this tab changes only the fragment (no reload):
    // it replaces the scenario as a fresh load of it would. Our own
    // address updates use replaceState, which fires no hashchange.
    {
        let text = text.clone();
        let baseline = baseline.clone();
        let immediate = immediate.clone();
        let link_error = link_error.clone();
        let sweep = sweep.clone();
        let sweeping = sweeping.clone();
        let sweep_auto = sweep_auto.clone();
        let teaching = teaching.clone();
        let tour_start = tour_start.clone();
        use_effect_with((), move |_| {
            let window = gloo::utils::window();
            let listener = gloo::events::EventListener::new(&window, "hashchange", move |_| {
                match link_in_address() {
                    None => {}
                    Some(Ok(o)) => {
                        link_error.set(o.error);
                        *immediate.borrow_mut() = true;
                        text.set(o.text);
                        baseline.set(o.pin);
                        // A new sweep reopens the pane, which runs it.
                        if o.sweep.is_some() {
                            sweep_auto.set(true);
                            remount(&sweeping);
                        }
                        sweep.set(o.sweep);
                        // A tour reopens teaching mode at its step.
                        if o.tour.is_some() {
                            tour_start.set(o.tour);
                            remount(&teaching);
                        }
                    }
                    Some(Err(e)) => {
                        link_error.set(Some(format!("{e} The scenario on the page is kept.")))
                    }
                }
            });
            move || drop(listener)
        });
    }

    // Gives a request the next id and sends it to the worker.
    let post = {
        let bridge = bridge.clone();
        let next_id = next_id.clone();
        let pending = pending.clone();
        Rc::new(move |lane: Lane, job: Job| -> u32 {
            let id = {
                let mut n = next_id.borrow_mut();
                *n += 1;
                *n
            };
            let r = Request { id, lane, job };
            match bridge.borrow().as_ref() {
                Some(b) => b.send(r),
                None => pending.borrow_mut().push(r),
            }
            id
        })
    };
    // Sends a scenario on a run lane (`None`: nothing to run there); its
    // earlier answers stop counting.
    let send = {
        let post = post.clone();
        let lanes = lanes.clone();
        Rc::new(move |lane: Lane, scenario: Option<String>| {
            let job = scenario.clone().map_or(Job::Cancel, Job::Run);
            let id = post(lane, job);
            let mut ls = lanes.borrow_mut();
            let l = &mut ls[lane.run_slot().expect("a run lane")];
            l.id = id;
            l.done = false;
            l.stopped = false;
            l.asked_ms = now_ms();
            l.took_ms = 0.0;
            l.scenario = scenario.unwrap_or_default();
        })
    };
    // Stop cancels the live lane's run; its last snapshot stays on
    // screen. Resume runs the scenario again.
    let on_stop = {
        let post = post.clone();
        let lanes = lanes.clone();
        let tick = tick.clone();
        Callback::from(move |_: MouseEvent| {
            let id = post(Lane::Live, Job::Cancel);
            let mut ls = lanes.borrow_mut();
            let l = &mut ls[Lane::Live.run_slot().expect("a run lane")];
            l.id = id;
            l.stopped = true;
            drop(ls);
            tick.set(*tick + 1);
        })
    };
    let on_resume = {
        let send = send.clone();
        let text = text.clone();
        let tick = tick.clone();
        Callback::from(move |_: MouseEvent| {
            send(Lane::Live, Some((*text).clone()));
            tick.set(*tick + 1);
        })
    };
    let send_teach = Callback::from(move |cmd: TeachCmd| {
        post(Lane::Teach, Job::Teach(cmd));
    });
    // Opens teaching mode on the page's scenario, then runs `then` there
    // (a jump to a wakeup, a moment on a CPU).
    let teach_here = {
        let teaching = teaching.clone();
        let tour_start = tour_start.clone();
        let send_teach = send_teach.clone();
        let text = text.clone();
        let teach = teach.clone();
        Callback::from(move |then: Vec<TeachCmd>| {
            *teach.borrow_mut() = (None, None);
            tour_start.set(None);
            send_teach.emit(TeachCmd::Open {
                scenario: (*text).clone(),
                cpu: 0,
            });
            for cmd in then {
                send_teach.emit(cmd);
            }
            teaching.set(true);
        })
    };
    // Puts the user's own scenario back after a tour showed its own;
    // `reopen` opens teaching mode on it ("My scenario").
    let restore_mine = {
        let mine = mine.clone();
        let text = text.clone();
        let immediate = immediate.clone();
        let send_teach = send_teach.clone();
        Callback::from(move |reopen: bool| {
            if let Some(m) = (*mine).clone() {
                *immediate.borrow_mut() = true;
                if reopen {
                    send_teach.emit(TeachCmd::Open {
                        scenario: m.clone(),
                        cpu: 0,
                    });
                }
                text.set(m);
                mine.set(None);
            }
        })
    };
    // The pane's tour: the link follows it, and a tour shows its own
    // scenario (the user's is kept in `mine`).
    let on_tour = {
        let tour_at = tour_at.clone();
        let mine = mine.clone();
        let text = text.clone();
        let immediate = immediate.clone();
        let restore_mine = restore_mine.clone();
        Callback::from(move |t: Option<eevdf_driver::share::TourAt>| {
            match &t {
                Some(at) => {
                    let own = eevdf_driver::tours::TOURS
                        .iter()
                        .find(|x| x.id == at.id)
                        .map(|x| x.scenario.to_string());
                    if let Some(own) = own.filter(|o| *o != *text) {
                        if mine.is_none() {
                            mine.set(Some((*text).clone()));
                        }
                        *immediate.borrow_mut() = true;
                        text.set(own);
                    }
                }
                None => restore_mine.emit(true),
            }
            tour_at.set(t);
        })
    };
    let on_teach = {
        let teaching = teaching.clone();
        let teach_here = teach_here.clone();
        let restore_mine = restore_mine.clone();
        Callback::from(move |_: MouseEvent| {
            if *teaching {
                restore_mine.emit(false);
                teaching.set(false);
            } else {
                teach_here.emit(Vec::new());
            }
        })
    };
    // A click on a task's max latency: teaching mode at that wakeup.
    let on_jump = teach_here.reform(|task: u32| vec![TeachCmd::Worst { task }]);
    // A click on the CDF: teaching mode at the first wakeup that slow.
    let on_sample = teach_here
        .reform(|(task, at_least_ns): (u32, u64)| vec![TeachCmd::Sample { task, at_least_ns }]);
    // A click on the timeline: teaching mode on that CPU at that moment.
    let on_moment = teach_here
        .reform(|(cpu, ns): (u32, u64)| vec![TeachCmd::Cpu { cpu }, TeachCmd::RunTo { ns }]);

    let parsed = Scenario::parse(&text);
    // The last text that parsed: while the editor holds an error, the
    // panes show it (inert) and "Open your last scenario" brings it back.
    if parsed.is_ok() && *last_good.borrow() != *text {
        *last_good.borrow_mut() = (*text).clone();
    }
    let last_good_sc = match &parsed {
        Ok(sc) => Some(sc.clone()),
        Err(_) => Scenario::parse(&last_good.borrow()).ok(),
    };

    // The address bar follows the scenario, its pin, the sweep and the
    // tour.
    let link_state = share::LinkState {
        sweep: (*sweep).clone().filter(|_| *sweeping),
        tour: (*tour_at).clone().filter(|_| *teaching),
    };
    {
        let pin = (*baseline).clone();
        use_effect_with(
            ((*text).clone(), pin, link_state.clone()),
            move |(t, pin, state)| {
                if let Ok(sc) = Scenario::parse(t) {
                    show_fragment(&share::with_state(
                        share::fragment(&sc, pin.as_deref()),
                        state,
                    ));
                }
                || ()
            },
        );
    }
    // A pin (by the button, a link or a pasted block) runs A on its lane;
    // unpinning cancels that run and clears its results.
    {
        let send = send.clone();
        let lanes = lanes.clone();
        use_effect_with((*baseline).clone(), move |pin| {
            match pin {
                Some(a) => send(Lane::Baseline, Some(a.clone())),
                None if lanes.borrow()[1].id != 0 => {
                    send(Lane::Baseline, None);
                    lanes.borrow_mut()[1] = LaneState::default();
                }
                None => {}
            }
            || ()
        });
    }

    // Every text change: run (debounced) when it parses.
    {
        let send = send.clone();
        let debounce = debounce.clone();
        let next_id = next_id.clone();
        let immediate = immediate.clone();
        use_effect_with((*text).clone(), move |t| {
            if Scenario::parse(t).is_ok() {
                let t = t.clone();
                let now = *next_id.borrow() == 0 || std::mem::take(&mut *immediate.borrow_mut());
                let go = move || send(Lane::Live, Some(t));
                if now {
                    drop(debounce.borrow_mut().take());
                    go();
                } else {
                    *debounce.borrow_mut() = Some(Timeout::new(DEBOUNCE_MS, go));
                }
            }
            || ()
        });
    }

    let set_scenario = {
        let text = text.clone();
        let immediate = immediate.clone();
        Callback::from(move |sc: Scenario| {
            let t = sc.to_text();
            remember(&t);
            *immediate.borrow_mut() = true;
            text.set(t);
        })
    };
    let on_edit = {
        let text = text.clone();
        let baseline = baseline.clone();
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlTextAreaElement = e.target_unchecked_into();
            // A pasted mail (raw as "Copy for email" wrote it, quoted,
            // or with prose around the block) becomes its scenario, and
            // its `baseline` block the pin (eevdf_driver::input).
            let pasted = e.input_type().starts_with("insertFrom");
            let opened = eevdf_driver::input::editor_text(el.value(), pasted);
            let v = opened.text;
            if opened.pin.is_some() {
                baseline.set(opened.pin);
            }
            if Scenario::parse(&v).is_ok() {
                remember(&v);
            }
            text.set(v);
        })
    };
    let on_preset = {
        let text = text.clone();
        let immediate = immediate.clone();
        let chosen = chosen_preset.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Some(p) = eevdf_scenario::presets::preset(&el.value()) {
                chosen.set(Some(p.name));
                remember(p.text);
                *immediate.borrow_mut() = true;
                text.set(p.text.to_string());
            }
        })
    };
    // A preset by name (the first-time hint's button).
    let on_preset_name = {
        let text = text.clone();
        let immediate = immediate.clone();
        let chosen = chosen_preset.clone();
        Callback::from(move |name: &'static str| {
            if let Some(p) = eevdf_scenario::presets::preset(name) {
                chosen.set(Some(p.name));
                remember(p.text);
                *immediate.borrow_mut() = true;
                text.set(p.text.to_string());
            }
        })
    };
    let on_pin = {
        let baseline = baseline.clone();
        let text = text.clone();
        Callback::from(move |_| {
            if baseline.is_some() {
                baseline.set(None);
            } else if Scenario::parse(&text).is_ok() {
                baseline.set(Some((*text).clone()));
            }
        })
    };
    let on_copy_link = {
        let status = status.clone();
        let text = text.clone();
        let baseline = baseline.clone();
        let state = link_state.clone();
        Callback::from(move |_| {
            if let Ok(sc) = Scenario::parse(&text) {
                let frag = share::with_state(share::fragment(&sc, baseline.as_deref()), &state);
                copy(format!("{}#{frag}", page_base()), "Link", status.clone());
            }
        })
    };
    let on_copy_mail = {
        let status = status.clone();
        let text = text.clone();
        let baseline = baseline.clone();
        let lanes = lanes.clone();
        Callback::from(move |_| {
            let Ok(sc) = Scenario::parse(&text) else {
                return;
            };
            let ls = lanes.borrow();
            let (l, a) = (&ls[0], &ls[1]);
            let pair = share::pair_of(&sc, baseline.as_deref());
            let block = match (&pair.a, &l.lkml, &l.rows, &a.rows) {
                (None, Some(table), _, _) if l.done => Some(eevdf_scenario::report::mail(
                    &sc.to_text(),
                    eevdf_scenario::report::SIMULATED_BY,
                    table,
                    &format!("{}#{}", page_base(), share::fragment(&sc, None)),
                )),
                (Some(_), _, Some(rb), Some(ra)) if l.done && a.done => {
                    Some(share::ab_mail(&pair, ra, rb, &page_base()))
                }
                _ => None,
            };
            match block {
                Some(block) => copy(block, "Mail block", status.clone()),
                None => status.set(Some((
                    "The run has not finished yet; copy again when it has.".into(),
                    None,
                ))),
            }
        })
    };
    let on_theme = {
        let theme = theme.clone();
        Callback::from(move |_| {
            use gloo::storage::Storage;
            let next = match theme.as_str() {
                "auto" => "dark",
                "dark" => "light",
                _ => "auto",
            };
            let _ = gloo::storage::LocalStorage::set(THEME_KEY, next);
            theme.set(next.to_string());
        })
    };
    let on_help = {
        let help = help.clone();
        Callback::from(move |_| help.set(!*help))
    };
    let on_sweep = {
        let sweeping = sweeping.clone();
        let sweep_auto = sweep_auto.clone();
        Callback::from(move |_: MouseEvent| {
            sweep_auto.set(false);
            sweeping.set(!*sweeping);
        })
    };
    let on_sweep_spec = {
        let sweep = sweep.clone();
        Callback::from(move |args: String| sweep.set(Some(args)))
    };
    // Only while the pane is open: the fragment deflates the text, and
    // the app renders on every progress snapshot.
    let sweep_link = match Scenario::parse(&text) {
        Ok(sc) if *sweeping => format!(
            "{}#{}",
            page_base(),
            share::fragment(&sc, baseline.as_deref())
        ),
        _ => String::new(),
    };
    let on_keys = {
        let help = help.clone();
        Callback::from(move |e: KeyboardEvent| {
            let typing = e
                .target()
                .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
                .is_some_and(|el| {
                    matches!(el.tag_name().as_str(), "TEXTAREA" | "INPUT" | "SELECT")
                });
            if e.key() == "?" && !typing {
                help.set(!*help);
            } else if e.key() == "Escape" && *help {
                help.set(false);
            }
        })
    };

    let l = lanes.borrow()[0].clone();
    let b = lanes.borrow()[1].clone();
    // What differs between A and B, as the A/B mail's columns say it.
    let ab_labels = use_memo(((*text).clone(), (*baseline).clone()), |(t, pin)| {
        let b = Scenario::parse(t).ok()?;
        let pair = share::pair_of(&b, pin.as_deref());
        pair.a.is_some().then(|| pair.labels())
    });
    let names: Rc<Vec<String>> = Rc::new(match &parsed {
        Ok(sc) => sc.sim.tasks.iter().map(|t| t.name.clone()).collect(),
        Err(_) => l
            .live
            .as_ref()
            .map(|l| l.rows.iter().map(|r| r.name.clone()).collect())
            .unwrap_or_default(),
    });
    // Twin presets share a text, so the text alone cannot say which
    // was picked: the menu's last choice goes first, and every twin's
    // thread is shown.
    let preset_notes = parsed.as_ref().map_or_else(
        |_| Vec::new(),
        |sc| eevdf_scenario::presets::presets_for(&sc.to_text(), *chosen_preset),
    );
    let preset_note = preset_notes.first().copied();
    // The options' `selected` attributes do not move a selection the user
    // has changed, so the selector's value follows the text here.
    let preset_select = use_node_ref();
    {
        let name = preset_note.map_or("", |n| n.name).to_string();
        let select = preset_select.clone();
        use_effect_with(name, move |name| {
            if let Some(el) = select.cast::<web_sys::HtmlSelectElement>() {
                el.set_value(name);
            }
        });
    }
    // Kernel reference rows apply to a preset's own text only.
    let kernel_rows = preset_note
        .map(|p| eevdf_scenario::kernel_ref::rows(p.name))
        .unwrap_or_default();

    let not_run = parsed.as_ref().err().map(|e| {
        html! {
            <p class="error" data-testid="not-run">
                { format!("Not run: fix line {} of the scenario.", e.line) }
                if l.live.is_some() { { " The results below are the last run's." } }
            </p>
        }
    });
    let results = match (&l.live, &l.invalid) {
        (_, Some(e)) => html! { <p class="error" data-testid="worker-error">{ e }</p> },
        (None, None) if not_run.is_some() => html! {},
        (None, None) => {
            html! { <p class="muted" data-testid="worker-pending">{ "Simulating in the worker…" }</p> }
        }
        (Some(live), None) => {
            let warmup = last_good_sc.as_ref().map_or(0, |sc| sc.sim.warmup_ns);
            let caption = format!(
                "Wakeup latency (µs){}, {:.2} of {:.1} s simulated, {} events{}",
                match &*ab_labels {
                    Some((a, b)) => format!(": A = pinned baseline ({a}), B = current ({b})"),
                    None => String::new(),
                },
                live.sim_ns as f64 / 1e9,
                live.duration_ns as f64 / 1e9,
                live.events,
                if warmup > 0 {
                    format!(
                        ", wakeups in the first {:.3} s left out (warmup)",
                        warmup as f64 / 1e9
                    )
                } else {
                    String::new()
                }
            );
            html! {
                <>
                    <div class="run-progress">
                        <progress max={live.duration_ns.to_string()} value={live.sim_ns.to_string()}
                                  data-testid="progress" data-events={live.events.to_string()}
                                  data-wall-ms={format!("{:.1}", live.wall_ms)} />
                        <span class="muted" data-testid="eta">
                            { progress_note(live, l.done, l.stopped, if l.done { l.took_ms } else { now_ms() - l.asked_ms }) }
                        </span>
                        // Screen readers hear when a run has finished, not
                        // every progress step (errors are role=alert).
                        <span class="sr-only" aria-live="polite" data-testid="announce">
                            if l.done && !l.stopped && l.scenario == *text {
                                { format!("Results ready: {}", progress_note(live, true, false, l.took_ms)) }
                            }
                        </span>
                        if l.stopped {
                            <button type="button" onclick={on_resume.clone()} data-testid="resume">{ "Run again" }</button>
                        } else if !l.done {
                            <button type="button" onclick={on_stop.clone()} data-testid="stop">{ "Stop" }</button>
                        }
                    </div>
                    <ResultsTable rows={live.rows.clone()} caption={caption} on_jump={on_jump.clone()} kernel={kernel_rows.clone()}
                                  baseline={baseline.as_ref().and(b.live.as_ref()).map(|b| b.rows.clone())} />
                    if baseline.is_some() && !b.done {
                        <p class="muted">{ "Baseline still running…" }</p>
                    }
                </>
            }
        }
    };
    let charts = match &l.live {
        Some(live) => {
            let cur = Shared(Rc::new(live.cdf.clone()));
            let base = baseline
                .as_ref()
                .and(b.live.as_ref())
                .map(|b| Shared(Rc::new(b.cdf.clone())));
            html! {
                <div class="charts">
                    <figure>
                        <CdfChart current={cur} baseline={base} dark={*dark} on_sample={on_sample.clone()} />
                        <figcaption class="muted">
                            { "Wakeup latency CDF: share of wakeups at or below each latency (log axes)." }
                            if baseline.is_some() { { " Thin lines: baseline A." } }
                        </figcaption>
                    </figure>
                    <TimelineChart timeline={Shared(Rc::new(live.timeline.clone()))}
                                   nr_cpus={live.cpus.len() as u32} names={names.clone()} dark={*dark}
                                   on_pick={on_moment.clone()} />
                </div>
            }
        }
        None => html! {},
    };
    // A scenario that does not parse leaves the panes as they were (the
    // last one that did, inert), so typing never makes the page jump.
    let stale = parsed.is_err();
    let machine = match &last_good_sc {
        Some(sc) => html! {
            <div class={classes!(stale.then_some("stale"))} inert={stale} data-testid="machine-pane">
                <MachineView scenario={sc.clone()} on_change={set_scenario.clone()}
                             live={l.live.as_ref().map(|l| Shared(Rc::new(l.cpus.clone())))} />
            </div>
        },
        None => html! { <p class="muted">{ "Fix the scenario to edit the machine." }</p> },
    };
    let features = match &last_good_sc {
        Some(sc) => html! {
            <div class={classes!(stale.then_some("stale"))} inert={stale} data-testid="features-pane">
                <FeaturesPane scenario={sc.clone()} on_change={set_scenario.clone()} />
            </div>
        },
        None => html! { <p class="muted">{ "Fix the scenario to change features." }</p> },
    };
    let quick = match &last_good_sc {
        Some(sc) => html! {
            <div class={classes!(stale.then_some("stale"))} inert={stale}>
                <QuickSwitches scenario={sc.clone()} on_change={set_scenario.clone()} />
            </div>
        },
        None => html! {},
    };
    let theme_label = match theme.as_str() {
        "dark" => "Theme: dark",
        "light" => "Theme: light",
        _ => "Theme: auto",
    };

    html! {
        // "done" only once the run of exactly this text has finished, so
        // tests and tools never read a stale table.
        <div class="app" onkeydown={on_keys} data-request={l.id.to_string()} data-results-for={l.live_id.to_string()}
             data-state={if l.stopped { "stopped" } else if l.done && l.scenario == *text { "done" } else { "running" }}>
            <header class="topbar">
                <h1>{ "eevdf-playground" }</h1>
                <span class="tagline">{ "The Linux EEVDF scheduler you can run, see and share" }</span>
                <nav class="actions">
                    <button type="button" onclick={on_copy_link} data-testid="copy-link">{ "Copy link" }</button>
                    <button type="button" onclick={on_copy_mail} data-testid="copy-mail">{ "Copy for email" }</button>
                    <button type="button" onclick={on_pin} data-testid="pin"
                            aria-pressed={baseline.is_some().to_string()}>
                        { if baseline.is_some() { "Unpin baseline" } else { "Pin as baseline" } }
                    </button>
                    <button type="button" onclick={on_teach} data-testid="teach"
                            aria-pressed={teaching.to_string()}>{ "Teach" }</button>
                    <button type="button" onclick={on_sweep} data-testid="sweep"
                            aria-pressed={sweeping.to_string()}>{ "Sweep" }</button>
                    <button type="button" onclick={on_theme} data-testid="theme">{ theme_label }</button>
                    <button type="button" onclick={on_help.clone()} data-testid="help" aria-label="Help">{ "?" }</button>
                </nav>
            </header>
            if let Some((msg, body)) = &*status {
                <div class="notice toast" data-testid="copy-status" role="status">
                    <button type="button" class="close" aria-label="Dismiss" onclick={{
                        let status = status.clone();
                        Callback::from(move |_| status.set(None))
                    }}>{ "×" }</button>
                    { msg.clone() }
                    if let Some(b) = body {
                        <textarea readonly=true rows="6" class="scenario" value={b.clone()} />
                    }
                </div>
            }
            <main class="layout">
                <aside class="side">
                    <section class="pane scenario-pane" aria-label="Scenario">
                        <h2>{ "Scenario" }</h2>
                        if let Some(e) = (*link_error).clone() {
                            <p class="error" data-testid="link-error">
                                { e }{ " " }
                                if let Some(last) = last_scenario.as_ref().as_ref().filter(|t| **t != *text) {
                                    <button type="button" data-testid="restore-last" onclick={{
                                        let text = text.clone();
                                        let immediate = immediate.clone();
                                        let last = last.clone();
                                        Callback::from(move |_: MouseEvent| {
                                            *immediate.borrow_mut() = true;
                                            text.set(last.clone());
                                        })
                                    }}>{ "Open your last scenario" }</button>
                                }
                            </p>
                        }
                        <label class="preset">{ "Preset " }
                            <select onchange={on_preset} data-testid="preset" ref={preset_select.clone()}>
                                <option value="" selected={preset_note.is_none()} disabled=true>{ "choose…" }</option>
                                { for eevdf_scenario::presets::PRESETS.iter().map(|p| html! {
                                    <option value={p.name} title={p.title}
                                            selected={preset_note.is_some_and(|n| n.name == p.name)}>{ p.name }</option>
                                }) }
                            </select>
                        </label>
                        { for preset_notes.iter().map(|p| html! {
                            <details class="source" data-testid="preset-source">
                                <summary>{ p.title }</summary>
                                if !p.source.is_empty() { <pre>{ p.source }</pre> }
                            </details>
                        }) }
                        if let Some(p) = preset_note {
                            { try_line(p, parsed.as_ref().ok(), &set_scenario, &on_preset_name) }
                        }
                        // The error floats over the (inert) pane below, so
                        // typing never moves the page.
                        <div class="editor">
                        <textarea class="scenario" spellcheck="false" wrap="off" rows="12" data-testid="scenario-text"
                                  aria-label="Scenario text (format v1)"
                                  value={(*text).clone()} oninput={on_edit} />
                        if let Err(e) = &parsed {
                            <div class="editor-error" role="alert">
                            <p class="error" data-testid="scenario-error">{ e.to_string() }</p>
                            if *last_good.borrow() != *text && link_error.is_none() {
                                <p>
                                    <button type="button" data-testid="restore-last" onclick={{
                                        let text = text.clone();
                                        let immediate = immediate.clone();
                                        let last = last_good.borrow().clone();
                                        Callback::from(move |_: MouseEvent| {
                                            *immediate.borrow_mut() = true;
                                            text.set(last.clone());
                                        })
                                    }}>{ "Open your last scenario" }</button>
                                    <span class="muted">{ " (the panes show it meanwhile)" }</span>
                                </p>
                            }
                            </div>
                        }
                        </div>
                        if let Some(note) = parsed.as_ref().ok().and_then(|sc| sc.engine_note()) {
                            <p class="notice" data-testid="engine-note" role="note">{ note }</p>
                        }
                        { for parsed.as_ref().map(Scenario::slice_notes).unwrap_or_default().into_iter().map(|note| html! {
                            <p class="notice" data-testid="slice-note" role="note">{ note }</p>
                        }) }
                    </section>
                    <section class="pane" aria-label="Features">
                        <h2>{ "Kernel and features" }</h2>
                        { features }
                    </section>
                </aside>
                <div class="main">
                    if *teaching {
                        <TeachingPane view={teach.borrow().0.clone()} error={teach.borrow().1.clone()}
                                      scenario={(*text).clone()} on_cmd={send_teach.clone()}
                                      start={(*tour_start).clone()} on_tour={on_tour}
                                      on_close={{
                                          let teaching = teaching.clone();
                                          let tour_start = tour_start.clone();
                                          let restore_mine = restore_mine.clone();
                                          Callback::from(move |_| {
                                              restore_mine.emit(false);
                                              tour_start.set(None);
                                              teaching.set(false);
                                          })
                                      }} />
                    }
                    <section class="pane" aria-label="Machine">
                        <h2>{ "Machine" }</h2>
                        { machine }
                    </section>
                    <section class="pane" aria-label="Results">
                        <h2>{ "Results" }</h2>
                        { quick }
                        { for not_run }
                        <div class={classes!(stale.then_some("stale"))}>{ results }</div>
                        <FidelityNote kernel={kernel_rows} />
                        { charts }
                    </section>
                    if *sweeping {
                        <SweepPane scenario={(*text).clone()} spec={(*sweep).clone()} autorun={*sweep_auto}
                                   on_spec={on_sweep_spec} link={sweep_link} dark={*dark} />
                    }
                </div>
            </main>
            if *help {
                <div class="overlay" role="dialog" aria-modal="true" aria-label="Help" onclick={on_help.clone()}>
                    <div class="dialog help" data-testid="help-overlay">
                        <h3>{ "eevdf-playground in one minute" }</h3>
                        <ul>
                            <li>{ "The scenario text on the left is the whole experiment; every control edits it, and the address bar is always its share link." }</li>
                            <li>{ "Drag a task template onto a CPU to pin it there, onto an LLC or node for that affinity, or onto the machine for none. Drag chips to re-pin; click one to edit; Delete removes it. Keyboard: Enter on a template, then Enter on a CPU." }</li>
                            <li>{ "Flip SCHED_FEAT switches (kernel names; the seed patch series are grouped under their subject lines) and watch p50 … max move. Runs stream from a Web Worker and restart on every change." }</li>
                            <li>{ "Pin as baseline freezes the current setup as A; your next edits run as B, with percent changes signed as in LKML tables and eevdf compare (+ is better: lower latency, more samples). Links and mail then carry A as a `baseline` block." }</li>
                            <li>{ "Copy for email: a 72-column block (scenario, table, link) that pastes back here or into `eevdf run -`." }</li>
                            <li>{ "Teach opens one CPU's queues in virtual time: step by event or pick, go back, read why each pick and wakeup went as it did, or follow a guided tour. Click a task's max latency, or a point of the CDF, to see that wakeup; click a CPU's lane on the timeline to see that CPU at that moment." }</li>
                            <li>{ "The same scenarios run headless: `eevdf run LINK --format lkml`." }</li>
                        </ul>
                        <p class="muted">{ "Press ? to toggle this help, Esc to close." }</p>
                    </div>
                </div>
            }
        </div>
    }
}
