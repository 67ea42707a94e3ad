//! The teaching pane: one CPU's queues on a virtual-time axis (V, each
//! entity's vruntime and request up to its deadline, eligibility, curr's
//! vprot, the next buddy, delayed entities), the engine's reasons for the
//! last pick and wakeup in words, stepping controls, and the guided
//! tours with their captions. The picture comes from the worker
//! ([`eevdf_driver::teach::TeachView`]); this module only draws it (SVG: its
//! geometry is attributes, which the CSP allows).

use std::rc::Rc;

use yew::prelude::*;

use crate::charts::{colour, slot_of, slots};
use eevdf_driver::glossary::{pieces, Piece, GLOSSARY};
use eevdf_driver::share::TourAt;
use eevdf_driver::teach::{EntView, QueueView, TeachCmd, TeachView};
use eevdf_driver::tours::TOURS;

#[derive(Properties, PartialEq, Debug)]
pub struct Props {
    pub view: Option<Rc<TeachView>>,
    pub error: Option<String>,
    /// The page's scenario, for "restart from my scenario".
    pub scenario: String,
    pub on_cmd: Callback<TeachCmd>,
    pub on_close: Callback<()>,
    /// A tour to open at a step (a link's `&tour=ID&step=K`).
    #[prop_or_default]
    pub start: Option<TourAt>,
    /// The tour and step shown, for the link.
    #[prop_or_default]
    pub on_tour: Callback<Option<TourAt>>,
}

/// The tour index and steps done of a link's tour.
fn tour_index(t: &TourAt) -> Option<(usize, usize)> {
    let i = TOURS.iter().position(|x| x.id == t.id)?;
    Some((i, t.step.min(TOURS[i].steps.len())))
}

fn ms(v: i64) -> String {
    format!("{:+.2}", v as f64 / 1e6)
}

const W: f64 = 640.0;
const LEFT: f64 = 120.0;
/// A phone's picture (a viewport up to 480 px): fewer units across, so
/// the labels (12 units, style.css) render at 11 px or more.
const NARROW_W: f64 = 360.0;
const NARROW_LEFT: f64 = 100.0;
const NARROW_RIGHT: f64 = 22.0;
const RIGHT: f64 = 16.0;
const ROW: f64 = 24.0;
const TOP: f64 = 26.0;

/// The picture's width, label column and right margin in SVG units:
/// narrow on a phone.
fn layout() -> (f64, f64, f64) {
    let narrow = web_sys::window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|v| v.as_f64())
        .is_some_and(|px| px <= 480.0);
    if narrow {
        (NARROW_W, NARROW_LEFT, NARROW_RIGHT)
    } else {
        (W, LEFT, RIGHT)
    }
}

/// One queue on a virtual-time axis centred on V; `ss` are the palette
/// slots of the scenario's directives.
fn axis(q: &QueueView, ss: &[usize]) -> Html {
    let (w, left, right) = layout();
    let span = q
        .entities
        .iter()
        .flat_map(|e| [e.vruntime, e.deadline, e.vprot.unwrap_or(0)])
        .map(i64::unsigned_abs)
        .max()
        .unwrap_or(0)
        .max(1_000_000) as f64
        * 1.1;
    let plot = w - left - right;
    let x = |v: i64| left + plot / 2.0 + (v as f64 / span) * (plot / 2.0);
    let h = TOP + ROW * q.entities.len().max(1) as f64 + 22.0;
    // Rows in a fixed order (by name): an entity keeps its row while V
    // advances, so playing moves it along its row instead of reordering
    // the picture (a reordered keyed list is rebuilt, not moved).
    let mut rows: Vec<&EntView> = q.entities.iter().collect();
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    let ticks = [-1.0, -0.5, 0.0, 0.5, 1.0];
    let ent = |(i, e): (usize, &EntView)| {
        let y = TOP + ROW * i as f64;
        let (r, g, b) = colour(e.task.map_or(7, |t| slot_of(ss, t as usize)));
        let fill = format!("rgb({r},{g},{b})");
        let (x0, x1) = (x(e.vruntime), x(e.deadline));
        let title = format!(
            "{}: weight {}, slice {:.3} ms, lag {} ms (V - vruntime), {}{}{}",
            e.name,
            e.weight,
            e.slice as f64 / 1e6,
            ms(e.lag),
            if e.eligible {
                "eligible"
            } else {
                "not eligible"
            },
            if e.delayed { ", delayed" } else { "" },
            if e.next { ", next buddy" } else { "" },
        );
        let mut label = e.name.clone();
        if e.curr {
            label = format!("▶ {label}");
        }
        if e.next {
            label.push_str(" ★");
        }
        html! {
            // Keyed by entity: the same element moves when V advances,
            // so the animation can glide it.
            <g key={e.name.clone()} class={classes!("ent", e.eligible.then_some("eligible"), e.curr.then_some("curr"), e.delayed.then_some("delayed"))}
               data-entity={e.name.clone()} data-eligible={e.eligible.to_string()}>
                <title>{ title }</title>
                <text x={(left - 6.0).to_string()} y={(y + 4.0).to_string()} text-anchor="end" class="ent-label">{ label }</text>
                <rect x={x0.min(x1).to_string()} y={(y - 5.0).to_string()} width={(x1 - x0).abs().max(1.0).to_string()} height="10"
                      fill={fill.clone()} fill-opacity={if e.eligible { "0.85" } else { "0.3" }}
                      stroke={fill.clone()} stroke-dasharray={if e.delayed { "3 2" } else { "none" }} />
                <circle cx={x0.to_string()} cy={y.to_string()} r="4" fill={fill} class="vrt" />
                if let Some(p) = e.vprot {
                    <line x1={x(p).to_string()} x2={x(p).to_string()} y1={(y - 9.0).to_string()} y2={(y + 9.0).to_string()} class="vprot" />
                    <text x={(x(p) + 3.0).to_string()} y={(y - 8.0).to_string()} class="tick-label">{ "vprot" }</text>
                }
            </g>
        }
    };
    html! {
        <figure class="vaxis" data-queue={q.name.clone()}>
            <figcaption>
                <b>{ format!("cfs_rq {}", q.name) }</b>
                { format!(" · load {} · V at 0; bars run from vruntime to the virtual deadline (ms); faded = not eligible, dashed = delayed, ★ = next buddy, ▶ = running", q.load_weight) }
            </figcaption>
            <svg viewBox={format!("0 0 {w} {h}")} class="vaxis" role="img"
                 aria-label={format!("Virtual time of queue {}", q.name)}>
                // Eligible side (vruntime at or before V) is the left half.
                <rect x={left.to_string()} y="14" width={(plot / 2.0).to_string()} height={(h - 36.0).to_string()} class="eligible-zone" />
                { for ticks.iter().map(|t| {
                    let v = (t * span) as i64;
                    html! {
                        <>
                            <line x1={x(v).to_string()} x2={x(v).to_string()} y1="14" y2={(h - 22.0).to_string()}
                                  class={if *t == 0.0 { "vline" } else { "grid" }} />
                            <text x={x(v).to_string()} y={(h - 8.0).to_string()} text-anchor="middle" class="tick-label">
                                { if *t == 0.0 { "V".to_string() } else { ms(v) } }
                            </text>
                        </>
                    }
                }) }
                { for rows.iter().copied().enumerate().map(ent) }
            </svg>
        </figure>
    }
}

/// The `svg.vaxis` figures under `root`, in order.
fn svgs(root: &web_sys::Element) -> Vec<web_sys::Element> {
    use wasm_bindgen::JsCast;
    let Ok(list) = root.query_selector_all("svg.vaxis") else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into().ok())
        .collect()
}

/// An exported picture's caption: engine, tour step or scenario, time
/// and CPU.
fn export_caption(scenario: &str, at: Option<(u64, u32)>, tour: Option<(usize, usize)>) -> String {
    let what = match tour {
        Some((i, k)) => format!(
            "tour {}, step {k} of {}",
            TOURS[i].title,
            TOURS[i].steps.len()
        ),
        None => eevdf_scenario::scenario::Scenario::parse(scenario).map_or_else(
            |_| "the page's scenario".to_string(),
            |sc| {
                let names: Vec<&str> = sc.sim.tasks.iter().map(|t| t.name.as_str()).collect();
                format!("{} CPUs, tasks {}", sc.machine.nr_cpus(), names.join(", "))
            },
        ),
    };
    let at = at.map_or(String::new(), |(now, cpu)| {
        format!(" · t = {:.3} ms, CPU{cpu}", now as f64 / 1e6)
    });
    format!("{} · {what}{at}", crate::export::made_with())
}

#[function_component(TeachingPane)]
// Over the 100-line limit, not yet split: a Yew function component,
// most of it the html! of the controls and the SVG axis.
pub fn teaching_pane(p: &Props) -> Html {
    // (tour index, steps done)
    let tour = use_state(|| p.start.as_ref().and_then(tour_index));
    // A link's tour: its scenario, then its steps up to the link's.
    {
        let on = p.on_cmd.clone();
        let start = p.start.as_ref().and_then(tour_index);
        use_effect_with((), move |_| {
            if let Some((i, k)) = start {
                on.emit(TeachCmd::Open {
                    scenario: TOURS[i].scenario.to_string(),
                    cpu: TOURS[i].cpu,
                });
                for s in &TOURS[i].steps[..k] {
                    on.emit(s.go.cmd());
                }
            }
        });
    }
    // The link follows the tour and its step.
    {
        let on = p.on_tour.clone();
        use_effect_with(*tour, move |t| {
            on.emit(t.map(|(i, k)| TourAt {
                id: TOURS[i].id,
                step: k,
            }));
        });
    }
    let run_ms = use_state(|| "10".to_string());
    // The animation: playing, and picks per second.
    let playing = use_state(|| false);
    let speed = use_state(|| 2u32);
    let log = use_node_ref();
    // Entities take their task's colour, as chips and charts do.
    let ss = use_memo(p.scenario.clone(), |t| {
        eevdf_scenario::scenario::Scenario::parse(t)
            .map(|sc| slots(sc.sim.tasks.iter().map(|t| t.name.as_str())))
            .unwrap_or_default()
    });
    let cmd = |c: TeachCmd| {
        let on = p.on_cmd.clone();
        Callback::from(move |_: MouseEvent| on.emit(c.clone()))
    };
    let restart = {
        let on = p.on_cmd.clone();
        let scenario = p.scenario.clone();
        let tour = tour.clone();
        let cpu = p.view.as_ref().map_or(0, |v| v.cpu);
        Callback::from(move |_: MouseEvent| {
            tour.set(None);
            on.emit(TeachCmd::Open {
                scenario: scenario.clone(),
                cpu,
            });
        })
    };
    let on_tour = {
        let on = p.on_cmd.clone();
        let tour = tour.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Some(i) = TOURS.iter().position(|t| t.id == el.value()) {
                tour.set(Some((i, 0)));
                on.emit(TeachCmd::Open {
                    scenario: TOURS[i].scenario.to_string(),
                    cpu: TOURS[i].cpu,
                });
            }
        })
    };
    let on_tour_next = {
        let on = p.on_cmd.clone();
        let tour = tour.clone();
        Callback::from(move |_: MouseEvent| {
            if let Some((i, k)) = *tour {
                if let Some(s) = TOURS[i].steps.get(k) {
                    on.emit(s.go.cmd());
                    tour.set(Some((i, k + 1)));
                }
            }
        })
    };
    let on_cpu = {
        let on = p.on_cmd.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Ok(cpu) = el.value().parse() {
                on.emit(TeachCmd::Cpu { cpu });
            }
        })
    };
    let on_run_ms = {
        let run_ms = run_ms.clone();
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            run_ms.set(el.value());
        })
    };
    let on_run_to = {
        let on = p.on_cmd.clone();
        let run_ms = run_ms.clone();
        let now = p.view.as_ref().map_or(0, |v| v.now);
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            if let Ok(v) = run_ms.trim().parse::<f64>() {
                if v.is_finite() && v >= 0.0 {
                    let ns = (v * 1e6) as u64;
                    on.emit(TeachCmd::RunTo { ns: ns.max(now) });
                }
            }
        })
    };
    let close = {
        let on = p.on_close.clone();
        Callback::from(move |_: MouseEvent| on.emit(()))
    };
    // Play: the next pick every 1/speed s, until paused, the run's end
    // or an error. The event log follows the newest line.
    {
        let on = p.on_cmd.clone();
        use_effect_with((*playing, *speed), move |(play, speed)| {
            let tick = play.then(|| {
                gloo::timers::callback::Interval::new(1000 / (*speed).max(1), move || {
                    on.emit(TeachCmd::NextPick)
                })
            });
            move || drop(tick)
        });
    }
    {
        let playing = playing.clone();
        let log = log.clone();
        let at_end = p.view.as_ref().is_none_or(|v| v.now >= v.end) || p.error.is_some();
        use_effect_with((p.view.clone(), at_end), move |(_, at_end)| {
            if *at_end && *playing {
                playing.set(false);
            }
            if let Some(pre) = log.cast::<web_sys::Element>() {
                pre.set_scroll_top(pre.scroll_height());
            }
        });
    }
    let on_play = {
        let playing = playing.clone();
        Callback::from(move |_: MouseEvent| playing.set(!*playing))
    };
    let on_speed = {
        let speed = speed.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            if let Ok(v) = el.value().parse::<u32>() {
                speed.set(v);
            }
        })
    };
    // The picture for slides: every queue's axis, captioned with what it
    // shows.
    let pictures = use_node_ref();
    let export = {
        let pictures = pictures.clone();
        let scenario = p.scenario.clone();
        let at = p.view.as_ref().map(|v| (v.now, v.cpu));
        let tour = *tour;
        move |png: bool| {
            let pictures = pictures.clone();
            let scenario = scenario.clone();
            Callback::from(move |_: MouseEvent| {
                if let Some(root) = pictures.cast::<web_sys::Element>() {
                    // The caption is made here, not at every render: it
                    // parses the scenario.
                    let caption = export_caption(&scenario, at, tour);
                    crate::export::download(png, &svgs(&root), &caption, "eevdf-teaching");
                }
            })
        }
    };

    let caption = tour.map(|(i, k)| {
        let t = &TOURS[i];
        let text = if k == 0 {
            format!(
                "{}: press Next to start ({} steps).",
                t.title,
                t.steps.len()
            )
        } else {
            t.steps[k - 1].caption.to_string()
        };
        (t, k, text)
    });

    let body = match (&p.view, &p.error) {
        (_, Some(e)) => html! { <p class="error" data-testid="teach-error">{ e }</p> },
        (None, None) => html! { <p class="muted">{ "Opening…" }</p> },
        (Some(v), None) => html! {
            <>
                <p class="teach-now" data-testid="teach-now">
                    { format!("t = {:.3} ms of {:.0} ms · {} events · CPU{} runs ", v.now as f64 / 1e6, v.end as f64 / 1e6, v.events, v.cpu) }
                    <b>{ v.running.clone().unwrap_or_else(|| "idle".into()) }</b>
                </p>
                if let Some(n) = &v.note {
                    <p class="note" data-testid="teach-note">{ n }</p>
                }
                <div class="why">
                    <h4>{ "Last pick" }</h4>
                    <ol data-testid="pick-reasons">
                        { for v.pick.iter().map(|s| html! { <li>{ s }</li> }) }
                    </ol>
                    if let Some(w) = &v.wakeup {
                        <h4>{ "Last wakeup" }</h4>
                        <p data-testid="wakeup-reason">{ w }</p>
                    }
                </div>
                <div class="export" role="group" aria-label="Export the picture">
                    <button type="button" onclick={export(false)} data-testid="teach-export-svg">{ "SVG" }</button>
                    <button type="button" onclick={export(true)} data-testid="teach-export-png">{ "PNG" }</button>
                </div>
                <div ref={pictures}>
                    { for v.queues.iter().filter(|q| !q.entities.is_empty()).map(|q| axis(q, &ss)) }
                </div>
                <details class="log" open=true>
                    <summary>{ format!("Events on CPU{}", v.cpu) }</summary>
                    <pre data-testid="teach-log" ref={log.clone()}>{ v.log.join("\n") }</pre>
                </details>
            </>
        },
    };
    let nr = p.view.as_ref().map_or(1, |v| v.nr_cpus);
    let cur_cpu = p.view.as_ref().map_or(0, |v| v.cpu);
    let can_back = p.view.as_ref().is_some_and(|v| v.can_go_back);
    html! {
        <section class="pane teaching" aria-label="Teaching mode" data-testid="teaching">
            <div class="teach-head">
                <h2>{ "Teaching mode" }</h2>
                <label>{ "Tour " }
                    <select onchange={on_tour} data-testid="tour">
                        <option value="" selected={tour.is_none()} disabled=true>{ "choose…" }</option>
                        { for TOURS.iter().enumerate().map(|(i, t)| html! {
                            <option value={t.id} selected={tour.is_some_and(|(j, _)| j == i)}>{ t.title }</option>
                        }) }
                    </select>
                </label>
                <label>{ "CPU " }
                    <select onchange={on_cpu} data-testid="teach-cpu">
                        { for (0..nr).map(|c| html! { <option value={c.to_string()} selected={c == cur_cpu}>{ c }</option> }) }
                    </select>
                </label>
                <button type="button" onclick={close} class="close" aria-label="Close teaching mode">{ "×" }</button>
            </div>
            if let Some((t, k, text)) = caption {
                <div class="caption" data-testid="tour-caption">
                    <p>{ linked(&text) }</p>
                    if k < t.steps.len() {
                        <button type="button" class="primary" onclick={on_tour_next} data-testid="tour-next">
                            { format!("Next ▶ ({}/{})", k + 1, t.steps.len()) }
                        </button>
                    } else {
                        <p class="muted" data-testid="tour-done">{ "End of the tour. Keep stepping, or flip a feature in your own scenario." }</p>
                    }
                </div>
            }
            <div class="controls" role="toolbar" aria-label="Stepping">
                <button type="button" onclick={restart} data-testid="teach-restart" title="Start over with the page's scenario">{ "⟲ My scenario" }</button>
                <button type="button" onclick={cmd(TeachCmd::Back)} disabled={!can_back} data-testid="teach-back">{ "◀ Back" }</button>
                <button type="button" onclick={cmd(TeachCmd::Step { events: 1 })} data-testid="teach-step">{ "Step" }</button>
                <button type="button" onclick={cmd(TeachCmd::NextPick)} data-testid="teach-next-pick">{ "Next pick" }</button>
                <button type="button" onclick={on_play} data-testid="teach-play" aria-pressed={playing.to_string()}>
                    { if *playing { "❚❚ Pause" } else { "▶ Play" } }
                </button>
                <label>{ "Speed " }
                    <select onchange={on_speed} data-testid="teach-speed" aria-label="Picks per second">
                        { for [1u32, 2, 4, 8].iter().map(|v| html! {
                            <option value={v.to_string()} selected={*v == *speed}>{ format!("{v}/s") }</option>
                        }) }
                    </select>
                </label>
                <form class="run-to" onsubmit={on_run_to}>
                    <label>{ "Run to " }
                        <input type="text" size="6" value={(*run_ms).clone()} oninput={on_run_ms} data-testid="teach-run-ms" />
                        { " ms" }
                    </label>
                    <button type="submit">{ "Go" }</button>
                </form>
            </div>
            { body }
            <details class="glossary" id="glossary" data-testid="glossary">
                <summary>{ "Glossary: the words of EEVDF" }</summary>
                <dl>
                    { for GLOSSARY.iter().map(|t| html! {
                        <>
                            <dt id={format!("glossary-{}", t.id)} tabindex="-1">{ t.name }</dt>
                            <dd>{ t.text }</dd>
                        </>
                    }) }
                </dl>
            </details>
        </section>
    }
}

/// A caption with its glossary terms as links into the glossary (the
/// first use of each).
fn linked(text: &str) -> Html {
    html! {
        { for pieces(text).into_iter().map(|p| match p {
            Piece::Text(s) => html! { { s.to_string() } },
            Piece::Term(s, t) => html! {
                <a href={format!("#glossary-{}", t.id)} class="term" data-term={t.id}
                   title={t.text} onclick={open_term(t.id)}>{ s.to_string() }</a>
            },
        }) }
    }
}

/// Opens the glossary at a term. Not by the fragment: the address bar
/// is the share link, and a new fragment would be read as a link.
fn open_term(id: &'static str) -> Callback<MouseEvent> {
    Callback::from(move |e: MouseEvent| {
        use wasm_bindgen::JsCast;
        e.prevent_default();
        let doc = gloo::utils::document();
        if let Some(g) = doc.get_element_by_id("glossary") {
            let _ = g.set_attribute("open", "");
        }
        if let Some(dt) = doc.get_element_by_id(&format!("glossary-{id}")) {
            dt.scroll_into_view();
            if let Ok(el) = dt.dyn_into::<web_sys::HtmlElement>() {
                let _ = el.focus();
            }
        }
    })
}
