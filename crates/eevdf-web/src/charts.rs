//! The two pictures of a run: the wakeup-latency distribution (a CDF on
//! log axes, drawn with plotters-canvas) and the per-CPU timeline of the
//! last window (canvas rectangles: who ran, wakeups, preemptions).

use std::rc::Rc;

use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

use eevdf_driver::live::Cdf;
use eevdf_driver::timeline::{MarkKind, Timeline};

/// Task colours; `www/style.css` has the same as `.t0` … `.t9`, so
/// chips and legends match the charts. [`slots`] says which is whose.
pub const PALETTE: [(u8, u8, u8); 10] = [
    (0x2f, 0x6f, 0xb3),
    (0xd9, 0x6c, 0x1e),
    (0x3a, 0x9a, 0x4a),
    (0xb8, 0x3b, 0x5e),
    (0x7b, 0x5a, 0xb5),
    (0x8c, 0x6d, 0x3f),
    (0xc2, 0x4f, 0xa8),
    (0x5f, 0x7f, 0x8c),
    (0xa8, 0xa1, 0x1e),
    (0x1e, 0xa3, 0xa8),
];

pub fn colour(slot: usize) -> (u8, u8, u8) {
    PALETTE[slot % PALETTE.len()]
}

/// The palette slots of a scenario's task directives, by name and in
/// order: a name starts at its own hash's slot and takes the next free
/// one. So a task keeps its colour when another is added or deleted
/// (unless the two names shared a slot), and A and B of a comparison
/// colour the same task alike. Past ten tasks, colours repeat.
pub fn slots<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<usize> {
    let n = PALETTE.len();
    let mut used = [false; PALETTE.len()];
    names
        .into_iter()
        .map(|name| {
            let start = fnv1a(name) % n;
            let slot = (0..n)
                .map(|k| (start + k) % n)
                .find(|&s| !used[s])
                .unwrap_or(start);
            used[slot] = true;
            slot
        })
        .collect()
}

/// FNV-1a: a fixed, tiny hash (std's is seeded per process, and a
/// colour must not change between page loads).
fn fnv1a(s: &str) -> usize {
    let h = s.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    h as usize
}

/// The slot of directive `task` in `slots` (a directive the table does
/// not know yet, mid-edit, keeps an index-based one).
pub fn slot_of(slots: &[usize], task: usize) -> usize {
    slots.get(task).copied().unwrap_or(task % PALETTE.len())
}

/// The CSS class of a palette slot.
pub fn slot_class(slot: usize) -> String {
    format!("t{}", slot % PALETTE.len())
}

fn css(c: (u8, u8, u8)) -> String {
    format!("rgb({},{},{})", c.0, c.1, c.2)
}

/// Shares a value with a child; equal only to itself (so a new snapshot
/// always redraws and an old one never compares deeply).
#[derive(Debug)]
pub struct Shared<T>(pub Rc<T>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<T> PartialEq for Shared<T> {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.0, &o.0)
    }
}

/// Sizes a canvas's bitmap to its laid-out width and to its CSS height,
/// or to `height` (set through the CSSOM, which the CSP allows).
fn fit(canvas: &HtmlCanvasElement, height: Option<u32>) -> (u32, u32) {
    let w = canvas.client_width().max(200) as u32;
    let h = match height {
        Some(h) => {
            let _ = canvas.style().set_property("height", &format!("{h}px"));
            h
        }
        None => (canvas.client_height().max(120)) as u32,
    };
    if canvas.width() != w {
        canvas.set_width(w);
    }
    if canvas.height() != h {
        canvas.set_height(h);
    }
    (w, h)
}

/// The "nines" of a fraction: p90 → 1, p99 → 2, p99.9 → 3.
/// An empirical CDF is a step function: the share stays flat between
/// two sampled latencies and rises at each. The curve starts at its
/// first latency with no wakeups below it.
fn steps(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    let mut below = 0.0;
    for &(x, f) in points {
        out.push((x, below));
        out.push((x, f));
        below = f;
    }
    out
}

fn nines(f: f64) -> f64 {
    (-(1.0 - f).max(1e-5).log10()).clamp(0.0, 4.0)
}

#[derive(Properties, PartialEq, Debug)]
pub struct CdfProps {
    pub current: Shared<Vec<Cdf>>,
    /// The pinned baseline's, drawn thin and faded.
    pub baseline: Option<Shared<Vec<Cdf>>>,
    pub dark: bool,
    /// A click near a curve: (task directive, latency ns of the nearest
    /// point), for teaching mode's "show me this sample".
    #[prop_or_default]
    pub on_sample: Option<Callback<(u32, u64)>>,
}

/// Where each current curve's points were drawn: (task, [(px, py, µs)]).
type Drawn = Vec<(usize, Vec<(i32, i32, f64)>)>;

#[function_component(CdfChart)]
pub fn cdf_chart(p: &CdfProps) -> Html {
    let canvas = use_node_ref();
    let drawn = use_mut_ref(Drawn::new);
    {
        let canvas = canvas.clone();
        let drawn = drawn.clone();
        let current = p.current.clone();
        let baseline = p.baseline.clone();
        let dark = p.dark;
        use_effect_with((p.current.clone(), p.baseline.clone(), p.dark), move |_| {
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                let mut d = drawn.borrow_mut();
                d.clear();
                let _ = draw_cdf(
                    &c,
                    &current.0,
                    baseline.as_ref().map(|b| &*b.0),
                    dark,
                    &mut d,
                );
                // Where the first curve ends (its slowest sample), for tools
                // and tests that click the chart.
                if let Some((_, pts)) = d.first() {
                    if let Some(&(x, y, _)) = pts.last() {
                        let _ = c.set_attribute("data-probe", &format!("{x},{y}"));
                    }
                }
            }
        });
    }
    let onclick = p.on_sample.clone().map(|cb| {
        let drawn = drawn.clone();
        Callback::from(move |e: MouseEvent| {
            let (x, y) = (e.offset_x(), e.offset_y());
            let best = drawn
                .borrow()
                .iter()
                .flat_map(|(task, pts)| pts.iter().map(move |p| (*task, *p)))
                .map(|(task, (px, py, us))| ((px - x).pow(2) + (py - y).pow(2), task, us))
                .min_by_key(|(d, _, _)| *d);
            if let Some((d, task, us)) = best {
                if d <= 30 * 30 {
                    cb.emit((task as u32, (us * 1000.0) as u64));
                }
            }
        })
    });
    html! {
        <canvas ref={canvas} class={classes!("chart", "cdf", onclick.is_some().then_some("clickable"))} data-testid="cdf"
                {onclick} title="Click a point of a curve to see that wakeup in teaching mode"
                aria-label="Wakeup latency distribution: fraction of wakeups at or below each latency" />
    }
}

/// Ticks for a log axis: 1, 2, 5 × 10^k inside `lo..=hi` (or 1, 3, or
/// every n-th decade on wide ranges), at most `max`.
fn log_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    let max = max.max(2);
    let decades = || {
        let mut d = 10f64.powf(lo.log10().floor());
        std::iter::from_fn(move || {
            let v = d;
            d *= 10.0;
            (v <= hi).then_some(v)
        })
    };
    for steps in [&[1.0, 2.0, 5.0][..], &[1.0, 3.0][..], &[1.0][..]] {
        let out: Vec<f64> = decades()
            .flat_map(|d| steps.iter().map(move |m| d * m))
            .filter(|v| *v >= lo && *v <= hi)
            .collect();
        if out.len() <= max {
            return out;
        }
    }
    let all: Vec<f64> = decades().filter(|v| *v >= lo).collect();
    let stride = all.len().div_ceil(max);
    all.into_iter().step_by(stride).collect()
}

fn fmt_us(v: f64) -> String {
    if v >= 1000.0 {
        format!("{}ms", v / 1000.0)
    } else if v >= 1.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Plotters draws the grid and the curves; the text is drawn with the
/// canvas context directly, because plotters measures text with a styled
/// `<span>`, which the page's CSP (no inline styles) blocks.
fn draw_cdf(
    canvas: &HtmlCanvasElement,
    current: &[Cdf],
    baseline: Option<&Vec<Cdf>>,
    dark: bool,
    drawn: &mut Drawn,
) -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = fit(canvas, None);
    let ctx = context_2d(canvas).ok_or("no 2d context")?;
    let backend = CanvasBackend::with_canvas_object(canvas.clone()).ok_or("no canvas backend")?;
    let root = backend.into_drawing_area();
    let (bg, fg, grid) = if dark {
        (
            RGBColor(0x1f, 0x23, 0x28),
            "#e4e6e8",
            RGBColor(0x34, 0x3a, 0x40),
        )
    } else {
        (WHITE, "#1d1f21", RGBColor(0xe4, 0xe5, 0xe1))
    };
    root.fill(&bg)?;
    ctx.set_font("12px sans-serif");
    ctx.set_fill_style_str(fg);
    let all = current.iter().chain(baseline.into_iter().flatten());
    let (mut lo, mut hi) = (f64::MAX, 0f64);
    for c in all {
        for &(x, _) in &c.points {
            lo = lo.min(x.max(0.1));
            hi = hi.max(x);
        }
    }
    if hi <= 0.0 {
        ctx.fill_text("no wakeups yet", 20.0, 24.0).ok();
        return Ok(());
    }
    let lo = (lo / 1.5).max(0.1);
    let hi = (hi * 1.5).max(lo * 10.0);
    let (left, bottom) = (52u32, 34u32);
    let area = root.margin(10, bottom, left, 12);
    let mut chart = ChartBuilder::on(&area).build_cartesian_2d((lo..hi).log_scale(), 0f64..4f64)?;
    let xt = log_ticks(lo, hi, (w as usize / 70).max(2));
    for &x in &xt {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, 0.0), (x, 4.0)],
            grid,
        )))?;
    }
    for y in 0..=4 {
        let y = f64::from(y);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(lo, y), (hi, y)],
            grid,
        )))?;
    }
    let curve = |c: &Cdf| -> Vec<(f64, f64)> {
        let pts: Vec<(f64, f64)> = c
            .points
            .iter()
            .map(|&(x, f)| (x.max(lo), nines(f)))
            .collect();
        steps(&pts)
    };
    // One table over both runs' names: a task in both has one colour,
    // and one only A has keeps a colour of its own.
    let mut names: Vec<&str> = Vec::new();
    for c in current.iter().chain(baseline.into_iter().flatten()) {
        if !names.contains(&c.name.as_str()) {
            names.push(&c.name);
        }
    }
    let table = slots(names.iter().copied());
    let slot = |c: &Cdf| slot_of(&table, names.iter().position(|n| *n == c.name).unwrap_or(0));
    if let Some(b) = baseline {
        for c in b {
            let (r, g, bl) = colour(slot(c));
            chart.draw_series(LineSeries::new(
                curve(c),
                RGBColor(r, g, bl).mix(0.45).stroke_width(1),
            ))?;
        }
    }
    for c in current {
        let (r, g, b) = colour(slot(c));
        chart.draw_series(LineSeries::new(curve(c), RGBColor(r, g, b).stroke_width(2)))?;
    }
    root.present()?;
    // Text: tick labels, axis title, legend.
    let px = |x: f64, y: f64| chart.backend_coord(&(x, y));
    for (i, c) in current.iter().enumerate() {
        let pts = c
            .points
            .iter()
            .map(|&(x, f)| {
                let (a, b) = px(x.max(lo), nines(f));
                (a, b, x)
            })
            .collect();
        drawn.push((i, pts));
    }
    ctx.set_text_align("center");
    for &x in &xt {
        let (cx, cy) = px(x, 0.0);
        ctx.fill_text(&fmt_us(x), f64::from(cx), f64::from(cy) + 15.0)
            .ok();
    }
    ctx.fill_text(
        "wakeup latency (µs)",
        f64::from(left) + (f64::from(w) - f64::from(left)) / 2.0,
        f64::from(h) - 4.0,
    )
    .ok();
    ctx.set_text_align("right");
    for (y, label) in ["p0", "p90", "p99", "p99.9", "p99.99"].iter().enumerate() {
        let (_, cy) = px(lo, y as f64);
        ctx.fill_text(label, f64::from(left) - 6.0, f64::from(cy) + 4.0)
            .ok();
    }
    ctx.set_text_align("left");
    let mut ly =
        f64::from(h) - f64::from(bottom) - 10.0 - 16.0 * (current.len().saturating_sub(1)) as f64;
    for c in current {
        let lx = f64::from(w) - 110.0;
        ctx.set_fill_style_str(&css(colour(slot(c))));
        ctx.fill_rect(lx, ly - 5.0, 14.0, 3.0);
        ctx.set_fill_style_str(fg);
        ctx.fill_text(&c.name, lx + 18.0, ly).ok();
        ly += 16.0;
    }
    Ok(())
}

fn context_2d(c: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    c.get_context("2d")
        .ok()
        .flatten()
        .and_then(|o| o.dyn_into::<CanvasRenderingContext2d>().ok())
}

#[cfg(test)]
mod tests {
    use super::{fmt_us, log_ticks, slots, steps, Lanes, LABEL_PX, PALETTE};

    /// The CDF rises only at sampled latencies: flat in between.
    #[test]
    fn the_cdf_is_a_step_function() {
        let pts = [(10.0, 0.5), (20.0, 0.9), (40.0, 1.0)];
        assert_eq!(
            steps(&pts),
            [
                (10.0, 0.0),
                (10.0, 0.5),
                (20.0, 0.5),
                (20.0, 0.9),
                (40.0, 0.9),
                (40.0, 1.0)
            ]
        );
        assert!(steps(&[]).is_empty());
    }
    use eevdf_driver::timeline::Timeline;

    /// Deleting a task leaves the others' colours alone, and every
    /// preset's tasks have colours of their own.
    #[test]
    fn colours_follow_names_not_positions() {
        let all = slots(["ct", "hog", "rt", "sb"]);
        assert_eq!(slots(["ct", "rt", "sb"]), [all[0], all[2], all[3]]);
        assert_eq!(slots(["sb", "ct"]), [all[3], all[0]]);
        // Names that hash alike share a start: the later one moves on,
        // and takes its own slot back when the first goes.
        assert_eq!(slots(["hog", "hb"]), [1, 2]);
        assert_eq!(slots(["hb"]), [1]);
        for p in eevdf_scenario::presets::PRESETS {
            let sc = eevdf_scenario::scenario::Scenario::parse(p.text).unwrap();
            let mut s = slots(sc.sim.tasks.iter().map(|t| t.name.as_str()));
            let n = s.len();
            s.sort_unstable();
            s.dedup();
            assert_eq!(s.len(), n, "{}: two tasks share a colour", p.name);
        }
        // Ten names take the ten colours; the eleventh repeats one.
        let names: Vec<String> = (0..11).map(|i| format!("t{i}")).collect();
        let s = slots(names.iter().map(String::as_str));
        let mut first: Vec<usize> = s[..10].to_vec();
        first.sort_unstable();
        assert_eq!(first, (0..PALETTE.len()).collect::<Vec<_>>());
        assert!(s[10] < PALETTE.len());
    }

    /// A click maps back to the CPU lane and time it was drawn at.
    #[test]
    fn timeline_clicks_find_their_cpu_and_time() {
        let tl = Timeline {
            start: 90_000_000,
            end: 130_000_000,
            ..Timeline::default()
        };
        let lanes = Lanes::new(&tl, 4, 444.0);
        // 400 px of plot for 40 ms: 0.1 ms a pixel; 18 px lanes.
        assert_eq!(lanes.at(LABEL_PX, 5.0), Some((0, 90_000_000)));
        assert_eq!(
            lanes.at(LABEL_PX + 200.0, 18.0 * 2.5),
            Some((2, 110_000_000))
        );
        assert_eq!(
            lanes.at(LABEL_PX + 400.0, 18.0 * 3.9),
            Some((3, 130_000_000))
        );
        let t = 123_456_789;
        let x = lanes.x(t);
        let (_, back) = lanes.at(x, 1.0).unwrap();
        assert!(back.abs_diff(t) <= 1, "{back}");
        // The CPU labels, the axis below the lanes and past the end.
        assert_eq!(lanes.at(LABEL_PX - 1.0, 5.0), None);
        assert_eq!(lanes.at(LABEL_PX + 100.0, 18.0 * 4.0 + 1.0), None);
        assert_eq!(lanes.at(LABEL_PX + 401.0, 5.0), None);
    }

    #[test]
    fn log_ticks_fit_the_width() {
        assert_eq!(
            log_ticks(40.0, 3000.0, 8),
            vec![50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0]
        );
        let wide = log_ticks(0.03, 150_000.0, 5);
        assert!(wide.len() <= 5 && wide.len() >= 2, "{wide:?}");
        assert_eq!(fmt_us(0.1), "0.1");
        assert_eq!(fmt_us(2000.0), "2ms");
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct TimelineProps {
    pub timeline: Shared<Timeline>,
    pub nr_cpus: u32,
    pub names: Rc<Vec<String>>,
    pub dark: bool,
    /// A click on a lane: (CPU, time ns), for teaching mode's "what
    /// happened here".
    #[prop_or_default]
    pub on_pick: Option<Callback<(u32, u64)>>,
}

#[function_component(TimelineChart)]
pub fn timeline_chart(p: &TimelineProps) -> Html {
    let canvas = use_node_ref();
    let lanes = use_mut_ref(Lanes::default);
    {
        let canvas = canvas.clone();
        let lanes = lanes.clone();
        let tl = p.timeline.clone();
        let nr = p.nr_cpus;
        let dark = p.dark;
        let names = p.names.clone();
        use_effect_with((p.timeline.clone(), p.nr_cpus, p.dark), move |_| {
            if let Some(c) = canvas.cast::<HtmlCanvasElement>() {
                let slots = slots(names.iter().map(String::as_str));
                *lanes.borrow_mut() = draw_timeline(&c, &tl.0, nr, &slots, dark);
            }
        });
    }
    let onclick = p.on_pick.clone().map(|cb| {
        let lanes = lanes.clone();
        Callback::from(move |e: MouseEvent| {
            let at = lanes
                .borrow()
                .at(f64::from(e.offset_x()), f64::from(e.offset_y()));
            if let Some(hit) = at {
                cb.emit(hit);
            }
        })
    });
    let tl = &p.timeline.0;
    let window_ms = (tl.end - tl.start) as f64 / 1e6;
    html! {
        <figure class="timeline">
            <canvas ref={canvas} class={classes!("chart", "timeline", p.on_pick.is_some().then_some("pickable"))}
                    data-testid="timeline" data-window={format!("{},{}", tl.start, tl.end)} {onclick}
                    title={p.on_pick.is_some().then_some("Click a CPU's lane: teaching mode at that moment")}
                    aria-label="Per-CPU timeline of the last window" />
            <figcaption class="muted">
                { format!("Last {window_ms:.0} ms up to {:.3} s. ", tl.end as f64 / 1e9) }
                <span class="legend-mark wake">{ "▼ wakeup" }</span>{ " " }
                <span class="legend-mark preempt">{ "| preemption" }</span>{ " " }
                { for p.names.iter().zip(slots(p.names.iter().map(String::as_str))).map(|(n, s)| html! {
                    <span class={classes!("chip-dot", slot_class(s))}>{ n.clone() }</span>
                }) }
            </figcaption>
        </figure>
    }
}

/// The height of one CPU's lane: [`ROW_PX`], less on big machines.
fn lane_px(nr_cpus: u32) -> f64 {
    (480.0 / f64::from(nr_cpus.max(1))).clamp(2.0, ROW_PX)
}

/// Where the timeline's lanes are on its canvas (CSS pixels).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Lanes {
    start: u64,
    span: f64,
    plot_w: f64,
    row: f64,
    nr: u32,
}

impl Lanes {
    fn new(tl: &Timeline, nr_cpus: u32, width: f64) -> Lanes {
        let nr = nr_cpus.max(1);
        Lanes {
            start: tl.start,
            span: (tl.end - tl.start).max(1) as f64,
            plot_w: (width - LABEL_PX - 4.0).max(10.0),
            row: lane_px(nr),
            nr,
        }
    }

    /// The x of time `t`.
    fn x(&self, t: u64) -> f64 {
        LABEL_PX + (t.saturating_sub(self.start) as f64) / self.span * self.plot_w
    }

    /// The CPU and time under a point, if it is on a lane.
    fn at(&self, x: f64, y: f64) -> Option<(u32, u64)> {
        if self.row <= 0.0 || y < 0.0 || x < LABEL_PX || x > LABEL_PX + self.plot_w {
            return None;
        }
        let cpu = (y / self.row) as u32;
        (cpu < self.nr).then(|| {
            let t = self.start + ((x - LABEL_PX) / self.plot_w * self.span).round() as u64;
            (cpu, t)
        })
    }
}

/// Rows of at most this height per CPU; at least 2 px on big machines.
const ROW_PX: f64 = 18.0;
const LABEL_PX: f64 = 40.0;
const AXIS_PX: f64 = 18.0;

/// Draws the timeline; returns where its lanes are, for clicks.
/// `slots` are the palette slots of the scenario's directives.
fn draw_timeline(
    c: &HtmlCanvasElement,
    tl: &Timeline,
    nr_cpus: u32,
    slots: &[usize],
    dark: bool,
) -> Lanes {
    let nr = nr_cpus.max(1) as f64;
    let row = lane_px(nr_cpus);
    let (w, h) = fit(c, Some((row * nr + AXIS_PX + 4.0) as u32));
    let lanes = Lanes::new(tl, nr_cpus, f64::from(w));
    let Some(ctx) = context_2d(c) else {
        return lanes;
    };
    let (w, h) = (f64::from(w), f64::from(h));
    let (bg, fg, lane) = if dark {
        ("#1f2328", "#e4e6e8", "#262b31")
    } else {
        ("#ffffff", "#1d1f21", "#f1f2ee")
    };
    ctx.set_fill_style_str(bg);
    ctx.fill_rect(0.0, 0.0, w, h);
    let span = lanes.span;
    let plot_w = lanes.plot_w;
    let x = |t: u64| lanes.x(t);
    ctx.set_font("11px sans-serif");
    for cpu in 0..nr_cpus {
        let y = f64::from(cpu) * row;
        ctx.set_fill_style_str(lane);
        ctx.fill_rect(LABEL_PX, y + 1.0, plot_w, row - 2.0);
        if row >= 10.0 || cpu % 8 == 0 {
            ctx.set_fill_style_str(fg);
            let _ = ctx.fill_text(&format!("CPU{cpu}"), 2.0, y + row.min(14.0) - 3.0);
        }
    }
    for s in &tl.segments {
        if s.cpu >= nr_cpus {
            continue;
        }
        ctx.set_fill_style_str(&css(colour(slot_of(slots, s.task as usize))));
        let x0 = x(s.start);
        let x1 = x(s.end).max(x0 + 0.75);
        ctx.fill_rect(x0, f64::from(s.cpu) * row + 1.0, x1 - x0, row - 2.0);
    }
    for m in &tl.marks {
        if m.cpu >= nr_cpus || row < 6.0 {
            continue;
        }
        let y = f64::from(m.cpu) * row;
        let xm = x(m.ts);
        if m.kind == MarkKind::Wakeup {
            ctx.set_fill_style_str(fg);
            ctx.begin_path();
            ctx.move_to(xm - 3.0, y + 1.0);
            ctx.line_to(xm + 3.0, y + 1.0);
            ctx.line_to(xm, y + 5.0);
            ctx.close_path();
            ctx.fill();
        } else {
            ctx.set_fill_style_str("#d0302f");
            ctx.fill_rect(xm - 0.75, y, 1.5, row);
        }
    }
    // Time axis: ms relative to the window's end.
    let y = nr * row + 13.0;
    ctx.set_fill_style_str(fg);
    let ms = span / 1e6;
    // As many labels as fit (about 52 px each), so a phone's narrow
    // canvas does not print them over each other.
    let fit = (plot_w / 52.0).floor().clamp(1.0, 8.0);
    let step = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        .into_iter()
        .find(|s| ms / s <= fit)
        .unwrap_or(200.0);
    let mut t = 0.0;
    while t <= ms + 1e-9 {
        let xx = LABEL_PX + plot_w - t / ms * plot_w;
        if t == 0.0 {
            ctx.set_text_align("right");
            let _ = ctx.fill_text("now", LABEL_PX + plot_w, y);
        } else {
            ctx.set_text_align("center");
            let _ = ctx.fill_text(&format!("-{t:.0}ms"), xx.max(LABEL_PX + 16.0), y);
        }
        t += step;
    }
    ctx.set_text_align("start");
    lanes
}
