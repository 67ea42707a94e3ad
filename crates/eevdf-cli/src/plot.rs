//! `--plot`: a sweep's percentile against its first axis, as SVG
//! (plotters): one line per combination of the other axes, a band from
//! the lowest to the highest seed.

use eevdf_driver::sweep::{self, Line};
use plotters::prelude::*;

use crate::BadInput;

pub fn sweep_svg(
    path: &str,
    lines: &[Line],
    task: Option<&str>,
    percentile: &str,
) -> Result<(), BadInput> {
    let task = match task {
        Some(t) => t.to_string(),
        None => first_task(lines).ok_or_else(|| BadInput("--plot: no task has samples".into()))?,
    };
    let (x_name, series) = sweep::series(lines, &task, percentile).ok_or_else(|| {
        BadInput(format!(
            "--plot: no axis to plot against, or `{task}` has no samples (hint: --vary KEY=V1,V2 and --task NAME)"
        ))
    })?;
    draw(path, &task, percentile, &x_name, &series)
        .map_err(|e| BadInput(format!("--plot {path}: {e}")))
}

fn first_task(lines: &[Line]) -> Option<String> {
    let names = lines.iter().find_map(|l| {
        let m = l.result.as_ref()?.get("by_name")?.as_object()?;
        m.iter()
            .find(|(_, v)| v.get("samples").and_then(|s| s.as_u64()).unwrap_or(0) > 0)
            .map(|(k, _)| k.clone())
    });
    names
}

fn draw(
    path: &str,
    task: &str,
    percentile: &str,
    x_name: &str,
    series: &[sweep::Series],
) -> Result<(), Box<dyn std::error::Error>> {
    let points = || series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = points().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.x), b.max(p.x)));
    let y1 = points().fold(0.0f64, |m, p| m.max(p.max));
    let pad = ((x1 - x0) * 0.05).max(0.5);
    let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{task} {percentile} latency"), ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x0 - pad..x1 + pad, 0.0..(y1 * 1.1).max(1.0))?;
    chart
        .configure_mesh()
        .x_desc(x_name)
        .y_desc(format!("{percentile} (us)"))
        .x_label_formatter(&|v| format!("{v}"))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()?;
    for (i, s) in series.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let mut band: Vec<(f64, f64)> = s.points.iter().map(|p| (p.x, p.max)).collect();
        band.extend(s.points.iter().rev().map(|p| (p.x, p.min)));
        chart.draw_series(std::iter::once(Polygon::new(
            band,
            colour.mix(0.2).filled(),
        )))?;
        let label = if s.label.is_empty() {
            task
        } else {
            s.label.as_str()
        };
        chart
            .draw_series(LineSeries::new(
                s.points.iter().map(|p| (p.x, p.median)),
                colour.stroke_width(2),
            ))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
        chart.draw_series(
            s.points
                .iter()
                .map(|p| Circle::new((p.x, p.median), 3, colour.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
