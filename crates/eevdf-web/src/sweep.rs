//! The sweep pane: the page's scenario over a grid of axis values (the
//! flags of `eevdf sweep`), each cell run on a pool of simulation
//! workers, at most one per core, its points streamed into a chart as
//! they finish. The sweep travels in the share link (`&sweep=`); its
//! lines are the CLI's, byte for byte.

use std::rc::Rc;

use eevdf_driver::sweep::{self, Grid, Line, Series, Spec};
use eevdf_scenario::scenario::Scenario;
use gloo::timers::callback::Timeout;
use gloo::worker::{Spawnable, WorkerBridge};
use yew::prelude::*;

use crate::lanes::now_ms;
use crate::worker::{Job, Lane, Outcome, Request, Response, SimWorker, Swb};

/// Cells one page sweep may run; larger grids are for the CLI.
const MAX_PAGE_CELLS: usize = 256;
/// The cost model's events one page sweep may run (a minute or two of
/// a few workers); more is for the CLI.
const MAX_PAGE_EVENTS: u64 = 400_000_000;
/// Workers in the pool at most, whatever the machine says.
const MAX_WORKERS: usize = 8;

/// Where a sweep is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Idle,
    Running,
    Done,
    Cancelled,
}

/// One sweep's run: its grid, the lines so far (by cell) and the pool.
#[derive(Default)]
struct Pool {
    /// Bumped by every run and cancel; answers of another are dropped.
    generation: u32,
    grid: Option<Rc<Grid>>,
    /// The scenario text the grid was built on.
    base: String,
    lines: Vec<Option<String>>,
    /// The same cells read for the summary and chart (from the workers'
    /// rows: the page parses no JSON).
    read: Vec<Option<Line>>,
    bridges: Vec<WorkerBridge<SimWorker>>,
    next: usize,
    finished: usize,
    phase: Phase,
    /// The pool's size when the run started.
    workers: usize,
    started_ms: f64,
    took_ms: f64,
    /// Bumped on every change, for the page to re-render.
    version: u64,
}

impl Pool {
    /// Gives worker `w` the next cell that needs a run; a cell whose
    /// scenario does not build is marked skipped on the way.
    fn feed(&mut self, w: usize) {
        let Some(grid) = self.grid.clone() else {
            return;
        };
        while self.next < grid.cells() {
            let i = self.next;
            self.next += 1;
            match grid.scenario(i) {
                Ok(sc) => {
                    if let Some(b) = self.bridges.get(w) {
                        b.send(Request {
                            id: u32::try_from(i).unwrap_or(u32::MAX),
                            lane: Lane::Live,
                            job: Job::Run(sc.to_text()),
                        });
                    }
                    return;
                }
                Err(e) => {
                    let why = e.to_string();
                    self.record(i, grid.line(i, Err(&why)), grid.line_of_rows(i, Err(&why)))
                }
            }
        }
    }

    fn record(&mut self, i: usize, line: String, read: Line) {
        if let (Some(slot), Some(r)) = (self.lines.get_mut(i), self.read.get_mut(i)) {
            if slot.replace(line).is_none() {
                self.finished += 1;
            }
            *r = Some(read);
        }
        self.version += 1;
    }

    /// Stops every worker (dropping a bridge terminates its worker).
    fn stop(&mut self, phase: Phase) {
        self.generation += 1;
        self.bridges.clear();
        self.phase = phase;
        self.took_ms = now_ms() - self.started_ms;
        self.version += 1;
    }

    fn lines(&self) -> Vec<Line> {
        self.read.iter().flatten().cloned().collect()
    }
}

/// A pool of up to one worker per core (`navigator.hardwareConcurrency`).
fn pool_size(cells: usize) -> usize {
    let cores = gloo::utils::window().navigator().hardware_concurrency();
    let cores = if cores.is_finite() && cores >= 1.0 {
        cores as usize
    } else {
        1
    };
    cores.min(MAX_WORKERS).min(cells).max(1)
}

/// Checks the sweep and builds its grid; the error is for the page.
fn build(scenario: &str, spec: &Spec) -> Result<Grid, String> {
    let sc = Scenario::parse(scenario).map_err(|e| format!("the scenario: {e}"))?;
    let grid = spec.grid(sc)?;
    if grid.cells() > MAX_PAGE_CELLS {
        return Err(format!(
            "{} runs, over the page's {MAX_PAGE_CELLS}: run it with eevdf sweep",
            grid.cells()
        ));
    }
    let all: Vec<usize> = (0..grid.cells()).collect();
    let events = grid.budget(&all)?.events;
    if events > MAX_PAGE_EVENTS {
        return Err(format!(
            "about {} M events, over the page's {} M: shorten the duration, \
             sweep fewer values, or run it with eevdf sweep",
            events / 1_000_000,
            MAX_PAGE_EVENTS / 1_000_000
        ));
    }
    Ok(grid)
}

#[derive(Debug, Properties, PartialEq)]
pub struct SweepProps {
    /// The page's scenario text (it may not parse).
    pub scenario: String,
    /// The sweep's flags as the link carries them.
    pub spec: Option<String>,
    /// Run the sweep as soon as the pane opens (a link with a sweep).
    pub autorun: bool,
    /// A run's flags, canonical, for the link.
    pub on_spec: Callback<String>,
    /// The page's share link (the CLI command shows it).
    pub link: String,
    pub dark: bool,
}

#[function_component(SweepPane)]
// Over the 100-line limit, not yet split: the pool's callbacks and the
// view share its hooks; a `use_sweep_pool` hook would take the first
// half.
pub fn sweep_pane(p: &SweepProps) -> Html {
    let spec_text = use_state(|| p.spec.clone().unwrap_or_else(|| default_spec(&p.scenario)));
    let error = use_state(|| None::<String>);
    let pool = use_mut_ref(Pool::default);
    let version = use_state(|| 0u64);
    let task = use_state(|| None::<String>);

    let run = {
        let pool = pool.clone();
        let version = version.clone();
        let error = error.clone();
        let spec_text = spec_text.clone();
        let scenario = p.scenario.clone();
        let on_spec = p.on_spec.clone();
        Callback::from(move |_: ()| {
            let spec = match Spec::parse(&spec_text) {
                Ok(s) => s,
                Err(e) => return error.set(Some(e)),
            };
            let grid = match build(&scenario, &spec) {
                Ok(g) => Rc::new(g),
                Err(e) => return error.set(Some(e)),
            };
            error.set(None);
            let args = spec.to_args();
            spec_text.set(args.clone());
            on_spec.emit(args);
            let mut p = pool.borrow_mut();
            p.stop(Phase::Running);
            let generation = p.generation;
            p.lines = vec![None; grid.cells()];
            p.read = vec![None; grid.cells()];
            p.base = scenario.clone();
            p.next = 0;
            p.finished = 0;
            p.started_ms = now_ms();
            p.grid = Some(grid.clone());
            let workers = pool_size(grid.cells());
            p.workers = workers;
            for w in 0..workers {
                let pool = pool.clone();
                let version = version.clone();
                let grid = grid.clone();
                let bridge = SimWorker::spawner()
                    .encoding::<Swb>()
                    .callback(move |resp: Response| {
                        let mut p = pool.borrow_mut();
                        if p.generation != generation {
                            return;
                        }
                        let i = resp.id as usize;
                        let (line, read) = match resp.outcome {
                            Outcome::Done(f) => (
                                grid.line(i, Ok(&f.json)),
                                grid.line_of_rows(i, Ok(&f.live.rows)),
                            ),
                            Outcome::Invalid { message, .. } => (
                                grid.line(i, Err(&message)),
                                grid.line_of_rows(i, Err(&message)),
                            ),
                            _ => return,
                        };
                        p.record(i, line, read);
                        p.feed(w);
                        if p.finished == grid.cells() {
                            // Not inside this bridge's own callback.
                            let pool = pool.clone();
                            let version = version.clone();
                            Timeout::new(0, move || {
                                let v = {
                                    let mut p = pool.borrow_mut();
                                    if p.generation != generation {
                                        return;
                                    }
                                    p.stop(Phase::Done);
                                    p.version
                                };
                                version.set(v);
                            })
                            .forget();
                        }
                        // Yew may render at once: no borrow held then.
                        let v = p.version;
                        drop(p);
                        version.set(v);
                    })
                    .spawn_with_loader(crate::app::WORKER_LOADER);
                p.bridges.push(bridge);
            }
            p.phase = Phase::Running;
            for w in 0..workers {
                p.feed(w);
            }
            if p.finished == grid.cells() {
                p.stop(Phase::Done);
            }
            let v = p.version;
            drop(p);
            version.set(v);
        })
    };
    let on_cancel = {
        let pool = pool.clone();
        let version = version.clone();
        Callback::from(move |_: MouseEvent| {
            let v = {
                let mut p = pool.borrow_mut();
                p.stop(Phase::Cancelled);
                p.version
            };
            version.set(v);
        })
    };
    // A link with a sweep runs it when the pane opens.
    {
        let run = run.clone();
        use_effect_with(p.autorun, move |auto| {
            if *auto {
                run.emit(());
            }
        });
    }
    // Closing the pane stops its workers.
    {
        let pool = pool.clone();
        use_effect_with((), move |_| {
            move || pool.borrow_mut().stop(Phase::Cancelled)
        });
    }
    let on_input = {
        let spec_text = spec_text.clone();
        Callback::from(move |e: InputEvent| {
            let el: web_sys::HtmlInputElement = e.target_unchecked_into();
            spec_text.set(el.value());
        })
    };
    let on_key = {
        let run = run.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Enter" {
                e.prevent_default();
                run.emit(());
            }
        })
    };
    let on_task = {
        let task = task.clone();
        Callback::from(move |e: Event| {
            let el: web_sys::HtmlSelectElement = e.target_unchecked_into();
            task.set(Some(el.value()));
        })
    };

    // The chart for slides, captioned with the sweep that made it.
    let chart_node = use_node_ref();
    let export = {
        let chart_node = chart_node.clone();
        let spec = (*spec_text).clone();
        move |png: bool, what: String| {
            let caption = format!(
                "{} · {what} · eevdf sweep {spec}",
                crate::export::made_with()
            );
            let chart_node = chart_node.clone();
            Callback::from(move |_: MouseEvent| {
                if let Some(svg) = chart_node.cast::<web_sys::Element>() {
                    crate::export::download(png, &[svg], &caption, "eevdf-sweep");
                }
            })
        }
    };
    let pl = pool.borrow();
    let lines = pl.lines();
    let percentile = Spec::parse(&spec_text).map_or_else(|_| "p99".to_string(), |s| s.percentile);
    let names = sweep::tasks(&lines);
    let shown = (*task)
        .clone()
        .filter(|t| names.contains(t))
        .or_else(|| names.first().cloned());
    let chart = shown
        .as_deref()
        .and_then(|t| sweep::series(&lines, t, &percentile).map(|(x, s)| (t.to_string(), x, s)));
    let cells = pl.grid.as_ref().map_or(0, |g| g.cells());
    let elapsed = match pl.phase {
        Phase::Running => now_ms() - pl.started_ms,
        _ => pl.took_ms,
    };
    let note = match pl.phase {
        Phase::Idle => String::new(),
        Phase::Running => format!(
            "{} of {cells} runs on {} workers{}",
            pl.finished,
            pl.workers,
            eta(pl.finished, cells, elapsed)
        ),
        Phase::Done => format!("{cells} runs in {:.1} s", elapsed / 1000.0),
        Phase::Cancelled => format!("cancelled after {} of {cells} runs", pl.finished),
    };
    let state = match pl.phase {
        Phase::Idle => "idle",
        Phase::Running => "running",
        Phase::Done => "done",
        Phase::Cancelled => "cancelled",
    };
    let stale = pl.phase != Phase::Idle && pl.base != p.scenario;
    let jsonl: String = pl.lines.iter().flatten().map(String::as_str).collect();
    let cli = format!("eevdf sweep '{}' {}", p.link, *spec_text);
    html! {
        <section class="pane sweep-pane" aria-label="Sweep" data-testid="sweep-pane" data-state={state}
                 data-workers={pl.workers.to_string()} data-finished={pl.finished.to_string()}>
            <h2>{ "Sweep" }</h2>
            <p class="muted">
                { "This scenario over a grid of values, one worker per core. The axes are " }
                <code>{ "eevdf sweep" }</code>{ "'s flags: --vary KEY=V1,V2 (any --set key), --features-axis, --machine, --seeds, --percentile." }
            </p>
            <div class="sweep-form">
                <label>{ "Axes " }
                    <input type="text" spellcheck="false" data-testid="sweep-spec" value={(*spec_text).clone()}
                           oninput={on_input} onkeydown={on_key} aria-label="Sweep axes (eevdf sweep flags)" />
                </label>
                <button type="button" data-testid="sweep-run" onclick={run.reform(|_: MouseEvent| ())}>{ "Run sweep" }</button>
                if pl.phase == Phase::Running {
                    <button type="button" data-testid="sweep-cancel" onclick={on_cancel}>{ "Cancel" }</button>
                }
            </div>
            if let Some(e) = &*error {
                <p class="error" role="alert" data-testid="sweep-error">{ e.clone() }</p>
            }
            if pl.phase != Phase::Idle {
                <div class="run-progress">
                    <progress max={cells.to_string()} value={pl.finished.to_string()} data-testid="sweep-progress" />
                    <span class="muted" data-testid="sweep-note" aria-live="polite">{ note }</span>
                </div>
            }
            if stale {
                <p class="notice" data-testid="sweep-stale">{ "The scenario has changed since this sweep ran: Run sweep again for its numbers." }</p>
            }
            if names.len() > 1 {
                <label>{ "Task " }
                    <select onchange={on_task} data-testid="sweep-task">
                        { for names.iter().map(|n| html! {
                            <option value={n.clone()} selected={shown.as_deref() == Some(n.as_str())}>{ n.clone() }</option>
                        }) }
                    </select>
                </label>
            }
            if let Some((t, x, series)) = chart {
                { chart_svg(&t, &percentile, &x, &series, p.dark, &chart_node) }
                <div class="export" role="group" aria-label="Export the chart">
                    <button type="button" onclick={export(false, format!("{t} {percentile} against {x}"))} data-testid="sweep-export-svg">{ "SVG" }</button>
                    <button type="button" onclick={export(true, format!("{t} {percentile} against {x}"))} data-testid="sweep-export-png">{ "PNG" }</button>
                </div>
            }
            if !lines.is_empty() {
                <pre class="sweep-table" data-testid="sweep-table">{ sweep::summary(&lines, &percentile) }</pre>
                <details>
                    <summary>{ "JSON lines and the same sweep in the CLI" }</summary>
                    <pre class="cli" data-testid="sweep-cli">{ cli }</pre>
                    <pre class="jsonl" data-testid="sweep-jsonl">{ jsonl }</pre>
                </details>
            }
        </section>
    }
}

/// A first sweep for a scenario: its last task's slice over three
/// values and three seeds (the first task's latency is usually the one
/// asked about, and the last is what competes with it).
fn default_spec(scenario: &str) -> String {
    let last = Scenario::parse(scenario)
        .ok()
        .and_then(|sc| sc.sim.tasks.last().map(|t| t.name.clone()))
        .unwrap_or_else(|| "hog".into());
    format!("--vary task.{last}.slice=1ms,4ms,16ms --seeds 1..3")
}

/// ", about N s left" from the pace so far.
fn eta(done: usize, cells: usize, elapsed_ms: f64) -> String {
    if done == 0 || done >= cells {
        return String::new();
    }
    let left = elapsed_ms / done as f64 * (cells - done) as f64 / 1000.0;
    format!(", about {left:.0} s left")
}

/// Chart geometry (SVG user units).
const W: f64 = 640.0;
const H: f64 = 300.0;
const LEFT: f64 = 58.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 26.0;
const BOTTOM: f64 = 44.0;

/// A step of about a quarter of `max`: 1, 2 or 5 times a power of ten.
fn nice_step(max: f64) -> f64 {
    let raw = (max / 4.0).max(1e-9);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p)
}

/// The percentile against the first axis: a line per series through
/// the medians over seeds, a band from the lowest to the highest seed.
/// SVG elements with presentation attributes (the page's CSP allows no
/// inline styles), so every point is in the DOM for tests and tools.
fn chart_svg(
    task: &str,
    percentile: &str,
    x_name: &str,
    series: &[Series],
    dark: bool,
    node: &NodeRef,
) -> Html {
    let points = || series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = points().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.x), b.max(p.x)));
    let pad = ((x1 - x0) * 0.05).max(0.5);
    let (x0, x1) = (x0 - pad, x1 + pad);
    let step = nice_step(points().fold(0.0f64, |m, p| m.max(p.max)).max(1.0));
    let y1 = (points().fold(0.0f64, |m, p| m.max(p.max)) / step)
        .ceil()
        .max(1.0)
        * step;
    let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * (W - LEFT - RIGHT);
    let sy = |y: f64| H - BOTTOM - y / y1 * (H - TOP - BOTTOM);
    let (fg, grid) = if dark {
        ("#e4e6e8", "#343a40")
    } else {
        ("#1d1f21", "#e4e5e1")
    };
    let yticks: Vec<f64> = (0..=((y1 / step).round() as usize))
        .map(|k| k as f64 * step)
        .collect();
    let mut xticks: Vec<(f64, String)> = Vec::new();
    for p in points() {
        if !xticks.iter().any(|(x, _)| *x == p.x) {
            xticks.push((p.x, p.label.clone()));
        }
    }
    let colour = |i: usize| {
        let (r, g, b) = crate::charts::colour(i);
        format!("rgb({r},{g},{b})")
    };
    let label = format!("{task} {percentile} wakeup latency (µs) against {x_name}, median over seeds, band from the lowest to the highest seed");
    html! {
        <figure class="sweep-chart">
            <svg ref={node.clone()} viewBox={format!("0 0 {W} {H}")} role="img" aria-label={label.clone()} data-testid="sweep-chart"
                 data-series={series.len().to_string()} data-points={points().count().to_string()}>
                { for yticks.iter().map(|&y| html! {
                    <g>
                        <line x1={LEFT.to_string()} x2={(W - RIGHT).to_string()} y1={sy(y).to_string()} y2={sy(y).to_string()} stroke={grid} />
                        <text x={(LEFT - 6.0).to_string()} y={(sy(y) + 4.0).to_string()} text-anchor="end" font-size="11" fill={fg}>{ format!("{y}") }</text>
                    </g>
                }) }
                { for xticks.iter().map(|(x, l)| html! {
                    <text x={sx(*x).to_string()} y={(H - BOTTOM + 16.0).to_string()} text-anchor="middle" font-size="11" fill={fg}>{ l.clone() }</text>
                }) }
                <text x={((LEFT + W - RIGHT) / 2.0).to_string()} y={(H - 8.0).to_string()} text-anchor="middle" font-size="12" fill={fg}>{ x_name.to_string() }</text>
                <text x="12" y="16" font-size="12" fill={fg}>{ format!("{task} {percentile} (µs)") }</text>
                // The legend inside the picture, so an exported file has it.
                { for series.iter().enumerate().map(|(i, s)| {
                    let y = TOP + 4.0 + 14.0 * i as f64;
                    let x = W - RIGHT - 220.0;
                    html! {
                        <g class="legend-key">
                            <line x1={x.to_string()} x2={(x + 18.0).to_string()} y1={y.to_string()} y2={y.to_string()} stroke={colour(i)} stroke-width="3" />
                            <text x={(x + 24.0).to_string()} y={(y + 4.0).to_string()} font-size="11" fill={fg}>
                                { if s.label.is_empty() { task.to_string() } else { s.label.clone() } }
                            </text>
                        </g>
                    }
                }) }
                { for series.iter().enumerate().map(|(i, s)| {
                    let c = colour(i);
                    let mut band: Vec<String> = s.points.iter().map(|p| format!("{},{}", sx(p.x), sy(p.max))).collect();
                    band.extend(s.points.iter().rev().map(|p| format!("{},{}", sx(p.x), sy(p.min))));
                    let line: Vec<String> = s.points.iter().map(|p| format!("{},{}", sx(p.x), sy(p.median))).collect();
                    html! {
                        <g data-testid="sweep-series" data-label={s.label.clone()}>
                            <polygon points={band.join(" ")} fill={c.clone()} fill-opacity="0.18" stroke="none" />
                            <polyline points={line.join(" ")} fill="none" stroke={c.clone()} stroke-width="2" />
                            { for s.points.iter().map(|p| html! {
                                <circle cx={sx(p.x).to_string()} cy={sy(p.median).to_string()} r="3.5" fill={c.clone()}
                                        data-x={p.label.clone()} data-median={format!("{:.3}", p.median)} data-runs={p.runs.to_string()}>
                                    <title>{ format!("{}{}: median {:.1} µs ({:.1} to {:.1}) over {} runs", p.label,
                                        if s.label.is_empty() { String::new() } else { format!(", {}", s.label) }, p.median, p.min, p.max, p.runs) }</title>
                                </circle>
                            }) }
                        </g>
                    }
                }) }
            </svg>
        </figure>
    }
}
