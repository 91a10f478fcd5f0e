//! The section's picture, hand-written SVG: per system, pickup p99 at the fixed rate (one bar
//! per worker count, log scale) and the highest sustained rate (jobs/s, log scale), each bar
//! labelled with its figure.

use std::fmt::Write;

/// One system's bars: its name, its pickup p99 per worker count (ms), its sustained jobs/s.
pub(crate) struct Bars {
    pub(crate) name: String,
    pub(crate) p99: Vec<(usize, f64)>,
    pub(crate) sustained: Option<f64>,
}

const W: f64 = 900.0;
const H: f64 = 380.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 300.0;
const COLOURS: [&str; 3] = ["#4e79a7", "#f28e2b", "#59a14f"];

/// Height of `v` on a log axis from 1 to `max`.
fn y(v: f64, max: f64) -> f64 {
    let f = v.max(1.0).log10() / max.max(10.0).log10();
    BOTTOM - f * (BOTTOM - TOP)
}

fn panel(svg: &mut String, x0: f64, width: f64, title: &str, groups: &[(String, Vec<(String, f64)>)]) {
    let max = groups.iter().flat_map(|(_, b)| b.iter().map(|(_, v)| *v)).fold(10.0, f64::max) * 1.5;
    let _ = write!(
        svg,
        r#"<text x="{}" y="30" font-size="15" text-anchor="middle">{title}</text>"#,
        x0 + width / 2.0
    );
    let _ =
        write!(svg, r##"<line x1="{x0}" y1="{BOTTOM}" x2="{}" y2="{BOTTOM}" stroke="#333"/>"##, x0 + width);
    let slot = width / groups.len().max(1) as f64;
    for (g, (name, bars)) in groups.iter().enumerate() {
        let gx = x0 + g as f64 * slot;
        let bw = (slot * 0.8) / bars.len().max(1) as f64;
        for (i, (label, v)) in bars.iter().enumerate() {
            let bx = gx + slot * 0.1 + i as f64 * bw;
            let top = y(*v, max);
            let colour = COLOURS[i % COLOURS.len()];
            let _ = write!(
                svg,
                r#"<rect x="{bx:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{colour}"><title>{name} {label}: {v:.0}</title></rect>"#,
                bw - 2.0,
                BOTTOM - top
            );
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle">{v:.0}</text>"#,
                bx + bw / 2.0,
                top - 3.0
            );
        }
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{}" font-size="11" text-anchor="middle">{name}</text>"#,
            gx + slot / 2.0,
            BOTTOM + 16.0
        );
    }
}

pub(crate) fn svg(systems: &[Bars], caption: &str) -> String {
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif"><rect width="{W}" height="{H}" fill="white"/>"#
    );
    let counts: Vec<usize> =
        systems.first().map(|s| s.p99.iter().map(|(n, _)| *n).collect()).unwrap_or_default();
    let latency: Vec<_> = systems
        .iter()
        .map(|s| (s.name.clone(), s.p99.iter().map(|(n, v)| (format!("{n} workers"), *v)).collect()))
        .collect();
    let rates: Vec<_> = systems
        .iter()
        .filter_map(|s| s.sustained.map(|r| (s.name.clone(), vec![("sustained".to_owned(), r)])))
        .collect();
    panel(&mut svg, 30.0, 440.0, "pickup p99, ms (log scale, lower is better)", &latency);
    panel(&mut svg, 500.0, 370.0, "highest sustained jobs/s (log scale)", &rates);
    for (i, n) in counts.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let x = 40.0 + i as f64 * 110.0;
        let _ = write!(
            svg,
            r#"<rect x="{x}" y="{}" width="10" height="10" fill="{colour}"/><text x="{}" y="{}" font-size="11">{n} workers</text>"#,
            BOTTOM + 30.0,
            x + 14.0,
            BOTTOM + 39.0
        );
    }
    let _ = write!(svg, r#"<text x="30" y="{}" font-size="11">{caption}</text></svg>"#, H - 12.0);
    svg.push('\n');
    svg
}
