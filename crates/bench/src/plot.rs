//! `--plot FILE.svg`: the latency percentile curve and requests/s over
//! time; with `--sweep`, requests/s, transfer rate and p50/p99 latency
//! against concurrency, one line per keep-alive mode. Drawn with plotters
//! (SVG backend only: no fonts or system libraries needed).

use std::path::Path;

use hdrhistogram::Histogram;
use plotters::prelude::*;

use crate::error::BenchError;

/// Size of the SVG in pixels.
pub const PLOT_SIZE: (u32, u32) = (1000, 800);
/// The percentile curve runs to 99.999% (five nines).
pub const CURVE_NINES: f64 = 5.0;
/// Points along the percentile curve.
pub const CURVE_POINTS: usize = 200;

/// One point of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    pub mode: String,
    pub concurrency: u64,
    pub requests_per_sec: f64,
    pub transfer_kbytes_per_sec: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

fn plot_err(path: &Path, e: impl std::fmt::Display) -> BenchError {
    BenchError::Plot {
        path: path.into(),
        reason: e.to_string(),
    }
}

/// x on the curve is `-log10(1 - p)`: 1 is 90%, 2 is 99%, 3 is 99.9%.
fn nines_label(x: &f64) -> String {
    let p = 100.0 * (1.0 - 10f64.powf(-x));
    let s = format!("{p:.3}");
    format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
}

/// Draws the latency percentile curve (top) and requests/s per second.
/// `time_taken` scales the last, partial second to a rate.
pub fn draw_run(
    path: &Path,
    total: &Histogram<u64>,
    per_second: &[u64],
    time_taken: f64,
) -> Result<(), BenchError> {
    let root = SVGBackend::new(path, PLOT_SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    let (top, bottom) = root.split_vertically(PLOT_SIZE.1 / 2);
    latency_panel(&top, total).map_err(|e| plot_err(path, e))?;
    rate_panel(&bottom, &rates(per_second, time_taken)).map_err(|e| plot_err(path, e))?;
    root.present().map_err(|e| plot_err(path, e))
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type DrawResult<'a> =
    Result<(), DrawingAreaErrorKind<<SVGBackend<'a> as DrawingBackend>::ErrorType>>;

fn latency_panel<'a>(area: &Area<'a>, total: &Histogram<u64>) -> DrawResult<'a> {
    let curve: Vec<(f64, f64)> = (0..=CURVE_POINTS)
        .map(|i| {
            let x = CURVE_NINES * i as f64 / CURVE_POINTS as f64;
            let q = 1.0 - 10f64.powf(-x);
            (x, total.value_at_quantile(q) as f64 / 1000.0)
        })
        .collect();
    let ymax = curve.iter().map(|p| p.1).fold(0.0, f64::max).max(0.001) * 1.05;
    let mut c = ChartBuilder::on(area)
        .caption("Latency by percentile", ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..CURVE_NINES, 0f64..ymax)?;
    c.configure_mesh()
        .x_desc("percentile")
        .y_desc("latency (ms)")
        .x_labels(6)
        .x_label_formatter(&nines_label)
        .draw()?;
    c.draw_series(LineSeries::new(curve, &BLUE))?;
    Ok(())
}

/// Completions per second as rates; the last, partial second is scaled
/// by its length so the curve does not drop at the end.
fn rates(per_second: &[u64], time_taken: f64) -> Vec<f64> {
    let last_len = time_taken - (per_second.len().saturating_sub(1)) as f64;
    per_second
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            if i + 1 == per_second.len() && last_len > 0.05 && last_len < 1.0 {
                v as f64 / last_len
            } else {
                v as f64
            }
        })
        .collect()
}

fn rate_panel<'a>(area: &Area<'a>, rates: &[f64]) -> DrawResult<'a> {
    let n = rates.len().max(1);
    let rmax = rates.iter().copied().fold(1.0, f64::max) * 1.1;
    let mut c = ChartBuilder::on(area)
        .caption("Requests per second", ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n as f64, 0f64..rmax)?;
    c.configure_mesh()
        .x_desc("seconds")
        .y_desc("requests/s")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()?;
    let series = rates.iter().enumerate().map(|(i, v)| (i as f64 + 0.5, *v));
    c.draw_series(LineSeries::new(series, &RED))?;
    Ok(())
}

type Metric = (&'static str, &'static str, fn(&SweepPoint) -> f64);

/// Draws the four sweep panels, one line per mode.
pub fn draw_sweep(path: &Path, points: &[SweepPoint]) -> Result<(), BenchError> {
    let root = SVGBackend::new(path, PLOT_SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    let panels = root.split_evenly((2, 2));
    let metrics: [Metric; 4] = [
        ("Requests per second", "requests/s", |p| p.requests_per_sec),
        ("Transfer rate", "KB/s", |p| p.transfer_kbytes_per_sec),
        ("p50 latency", "ms", |p| p.p50_ms),
        ("p99 latency", "ms", |p| p.p99_ms),
    ];
    let mut modes: Vec<&str> = points.iter().map(|p| p.mode.as_str()).collect();
    modes.dedup();
    let cmax = points.iter().map(|p| p.concurrency).max().unwrap_or(1) as f64 * 1.05;
    for (panel, (title, unit, f)) in panels.iter().zip(metrics) {
        let ymax = points.iter().map(f).fold(0.0, f64::max).max(0.001) * 1.1;
        let mut c = ChartBuilder::on(panel)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..cmax, 0f64..ymax)
            .map_err(|e| plot_err(path, e))?;
        c.configure_mesh()
            .x_desc("concurrency")
            .y_desc(unit)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .draw()
            .map_err(|e| plot_err(path, e))?;
        for (i, mode) in modes.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let line = points
                .iter()
                .filter(|p| p.mode == *mode)
                .map(|p| (p.concurrency as f64, f(p)));
            c.draw_series(LineSeries::new(line, color))
                .map_err(|e| plot_err(path, e))?
                .label(*mode)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        }
        c.configure_series_labels()
            .background_style(WHITE)
            .border_style(BLACK)
            .draw()
            .map_err(|e| plot_err(path, e))?;
    }
    root.present().map_err(|e| plot_err(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_last_second() {
        assert_eq!(rates(&[100, 100, 50], 2.5), vec![100.0, 100.0, 100.0]);
        assert_eq!(rates(&[100, 100], 2.0), vec![100.0, 100.0]);
    }

    #[test]
    fn labels() {
        assert_eq!(nines_label(&0.0), "0%");
        assert_eq!(nines_label(&2.0), "99%");
        assert_eq!(nines_label(&3.0), "99.9%");
    }
}
