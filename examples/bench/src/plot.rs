//! The report's PNG plots, drawn with plotters' bitmap backend.
//!
//! Text needs a font, and plotters' `ab_glyph` backend takes the font's
//! bytes rather than asking the system: [`load_font`] reads a TrueType
//! file (`FONT`, or DejaVu Sans, which `bench/run.sh` installs with
//! `fonts-dejavu-core`). Without one no plot is drawn: a plot without axis
//! labels would be worthless.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

/// Where the font is looked for when `FONT` is unset: Debian's and
/// Fedora's DejaVu Sans.
const FONT_CANDIDATES: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
];

/// The family name the charts ask for; [`load_font`] registers it.
const FAMILY: &str = "sans-serif";

/// One line of a chart: its name and its `(x, y)` points.
pub struct Series {
    /// The legend text.
    pub label: String,
    /// The points, x ascending.
    pub points: Vec<(f64, f64)>,
}

/// A log-log line chart.
pub struct Chart<'a> {
    /// The title above the plot.
    pub title: &'a str,
    /// The x axis' label.
    pub x_label: &'a str,
    /// The y axis' label.
    pub y_label: &'a str,
    /// The lines.
    pub series: &'a [Series],
    /// Where the legend goes: the corner the lines leave free.
    pub legend: SeriesLabelPosition,
}

/// Registers a TrueType font for the charts' text; returns its path.
pub fn load_font() -> Result<PathBuf, String> {
    let path = match std::env::var_os("FONT") {
        Some(font) => PathBuf::from(font),
        None => FONT_CANDIDATES
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .ok_or("no DejaVuSans.ttf found (apt-get install fonts-dejavu-core, or set FONT)")?,
    };
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    // plotters keeps the font for the process's lifetime; so does this.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    for style in [FontStyle::Normal, FontStyle::Bold] {
        plotters::style::register_font(FAMILY, style, bytes)
            .map_err(|_| format!("{}: not a TrueType font", path.display()))?;
    }
    Ok(path)
}

/// The smallest and largest value, widened to whole powers of ten so a log
/// axis has labelled ends.
pub fn decade_bounds(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(None, |acc: Option<(f64, f64)>, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })?;
    let lo = 10f64.powf(lo.log10().floor());
    let hi = 10f64.powf(hi.log10().ceil());
    Some(if hi > lo { (lo, hi) } else { (lo, lo * 10.0) })
}

/// Draws `chart` into a 1000×640 PNG at `path`.
pub fn draw(path: &Path, chart: &Chart<'_>) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let (x0, x1) = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold((f64::INFINITY, 0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (y0, y1) = decade_bounds(
        chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1)),
    )
    .ok_or_else(|| e(&"no positive values to plot"))?;
    let root = BitMapBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut ctx = ChartBuilder::on(&root)
        .caption(chart.title, (FAMILY, 24))
        .margin(16)
        .x_label_area_size(52)
        .y_label_area_size(80)
        .build_cartesian_2d((x0 * 0.8..x1 * 1.25).log_scale(), (y0..y1).log_scale())
        .map_err(|x| e(&x))?;
    ctx.configure_mesh()
        .x_desc(chart.x_label)
        .y_desc(chart.y_label)
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 17))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| short(*y))
        .draw()
        .map_err(|x| e(&x))?;
    let colours = [RED, BLUE, GREEN, MAGENTA, CYAN, BLACK];
    for (i, series) in chart.series.iter().enumerate() {
        let colour = colours[i % colours.len()];
        let style = ShapeStyle::from(&colour).stroke_width(2);
        ctx.draw_series(LineSeries::new(series.points.iter().copied(), style))
            .map_err(|x| e(&x))?
            .label(series.label.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], style));
        ctx.draw_series(
            series
                .points
                .iter()
                .map(|&p| Circle::new(p, 4, colour.filled())),
        )
        .map_err(|x| e(&x))?;
    }
    ctx.configure_series_labels()
        .position(chart.legend.clone())
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FAMILY, 15))
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

/// An axis number without needless digits: 0.5, 12, 3.4k, 1.2M.
pub fn short(v: f64) -> String {
    match v.abs() {
        a if a >= 1e6 => format!("{}M", trim(v / 1e6)),
        a if a >= 1e3 => format!("{}k", trim(v / 1e3)),
        _ => trim(v),
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_widen_to_whole_decades() {
        assert_eq!(decade_bounds([0.35, 42.0]), Some((0.1, 100.0)));
        assert_eq!(decade_bounds([100.0]), Some((100.0, 1000.0)));
        assert_eq!(decade_bounds([0.0, f64::NAN]), None);
    }

    #[test]
    fn axis_numbers_are_short() {
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(12.0), "12");
        assert_eq!(short(3400.0), "3.4k");
        assert_eq!(short(1_200_000.0), "1.2M");
    }

    /// With a font on the machine, a chart is drawn to a PNG file.
    #[test]
    fn draws_a_png_when_a_font_is_found() {
        if load_font().is_err() {
            eprintln!("no font here; the drawing is not exercised");
            return;
        }
        let path = std::env::temp_dir().join(format!("zb-bench-plot-{}.png", std::process::id()));
        let series = [Series {
            label: "zb-health".into(),
            points: vec![(1.0, 0.2), (4.0, 0.3), (16.0, 1.1)],
        }];
        draw(
            &path,
            &Chart {
                title: "test",
                x_label: "connections",
                y_label: "p99 (ms)",
                series: &series,
                legend: SeriesLabelPosition::UpperLeft,
            },
        )
        .expect("the chart is drawn");
        let png = std::fs::read(&path).expect("the PNG exists");
        let _ = std::fs::remove_file(&path);
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
}
