//! Plots of a dataset and an evaluation as SVG, written directly (no
//! plotting crate, no fonts needed: viewers render the text): the sorted
//! performance distribution of a kernel's space (the paper's Figures 1–5)
//! and the per-model bars of an evaluation.

use super::LearnError;
use super::dataset::Dataset;
use super::evaluate::Evaluation;
use std::fmt::Write as _;
use std::path::Path;

const W: f64 = 640.0;
const H: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn open(title: &str) -> String {
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{}</text>",
        W / 2.0,
        esc(title)
    );
    s
}

/// A value axis: maps values to y pixels, linear or logarithmic.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Axis {
    fn new(min: f64, max: f64, allow_log: bool) -> Axis {
        let log = allow_log && min > 0.0 && max / min > 10.0;
        if log {
            Axis {
                lo: min.log10().floor(),
                hi: max.log10().ceil(),
                log,
            }
        } else {
            let hi = if max > 0.0 { max * 1.05 } else { 1.0 };
            Axis { lo: 0.0, hi, log }
        }
    }

    fn y(&self, v: f64) -> f64 {
        let t = if self.log { v.max(1e-12).log10() } else { v };
        let f = ((t - self.lo) / (self.hi - self.lo)).clamp(0.0, 1.0);
        H - BOTTOM - f * (H - TOP - BOTTOM)
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            (self.lo as i32..=self.hi as i32)
                .map(|e| 10f64.powi(e))
                .collect()
        } else {
            let raw = self.hi / 5.0;
            let mag = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 5.0, 10.0]
                .into_iter()
                .map(|m| m * mag)
                .find(|s| *s >= raw)
                .unwrap_or(raw);
            (0..)
                .map(|i| i as f64 * step)
                .take_while(|v| *v <= self.hi + 1e-9)
                .collect()
        }
    }

    fn draw(&self, s: &mut String, label: &str) {
        for t in self.ticks() {
            let y = self.y(t);
            let _ = writeln!(
                s,
                "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                W - RIGHT,
                LEFT - 6.0,
                y + 4.0,
                if t >= 1.0 || t == 0.0 {
                    format!("{t}")
                } else {
                    format!("{t:.2}")
                }
            );
        }
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{}\" stroke=\"black\"/><line x1=\"{LEFT}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"black\"/>",
            H - BOTTOM,
            W - RIGHT,
            H - BOTTOM,
            H - BOTTOM
        );
        let _ = writeln!(
            s,
            "<text transform=\"translate(18,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            (TOP + H - BOTTOM) / 2.0,
            esc(label)
        );
    }
}

fn write(path: &Path, svg: &str) -> Result<(), LearnError> {
    crate::lab::store::atomic::write(path, svg.as_bytes())?;
    Ok(())
}

/// Renders an SVG file to PNG beside it with `rsvg-convert` (Debian's
/// librsvg2-bin, installed by scripts/setup.sh); false when the tool is
/// missing or fails, so that SVG output never depends on it.
pub fn png(svg: &Path) -> bool {
    use crate::lab::confine::{self, Ending, Limits};
    let png = svg.with_extension("png");
    let args = [svg.as_os_str(), "-o".as_ref(), png.as_os_str()];
    confine::run(Path::new("rsvg-convert"), args, &[], &Limits::tool())
        .is_ok_and(|o| o.ending == Ending::Code(0))
}

/// The sorted performance distribution of one kernel's measured space:
/// every variant's speedup over the original, best first, with the
/// original's level marked.
pub fn distribution(d: &Dataset, kernel: usize, path: &Path) -> Result<(), LearnError> {
    let mut v: Vec<f64> = d
        .rows
        .iter()
        .filter(|r| r.kernel == kernel)
        .map(|r| r.speedup)
        .collect();
    if v.is_empty() {
        let name = d.kernels.get(kernel).map_or("?", |k| k.name.as_str());
        return Err(LearnError::Data(format!(
            "kernel {kernel} ({name}) has no measured variants"
        )));
    }
    v.sort_by(|a, b| b.total_cmp(a));
    let min = v.iter().copied().fold(f64::INFINITY, f64::min).min(1.0);
    let max = v.iter().copied().fold(0.0, f64::max).max(1.0);
    let axis = Axis::new(min, max, true);
    let mut s = open(&format!(
        "{}: {} variants, speedup over the original ({})",
        d.kernels[kernel].name,
        v.len(),
        d.selection.compiler
    ));
    axis.draw(
        &mut s,
        if axis.log {
            "speedup (log scale)"
        } else {
            "speedup"
        },
    );
    let n = v.len();
    let x = |i: usize| LEFT + (i as f64 + 0.5) / n as f64 * (W - LEFT - RIGHT);
    let points: Vec<String> = v
        .iter()
        .enumerate()
        .map(|(i, &y)| format!("{:.1},{:.1}", x(i), axis.y(y)))
        .collect();
    let _ = writeln!(
        s,
        "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"{}\"/>",
        points.join(" ")
    );
    let y1 = axis.y(1.0);
    let _ = writeln!(
        s,
        "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y1:.1}\" y2=\"{y1:.1}\" stroke=\"#d62728\" stroke-dasharray=\"6,4\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#d62728\">original</text>",
        W - RIGHT,
        W - RIGHT - 4.0,
        y1 - 5.0
    );
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">variants, sorted by speedup</text>\n</svg>",
        (LEFT + W - RIGHT) / 2.0,
        H - 20.0
    );
    write(path, &s)
}

/// Per model: the mean % of Opt of its 1-shot and N-shot picks, next to
/// Random and multi-model.
pub fn model_bars(e: &Evaluation, path: &Path) -> Result<(), LearnError> {
    let rows = e.summary();
    let axis = Axis::new(0.0, 100.0, false);
    let mut s = open(&format!(
        "Leave-one-out: mean % of Opt over {} kernels (1-shot and {}-shot)",
        e.kernels.len(),
        e.shots
    ));
    axis.draw(&mut s, "% of Opt");
    let groups = rows.len().max(1) as f64;
    let gw = (W - LEFT - RIGHT) / groups;
    let bw = gw * 0.35;
    for (g, (name, _, p1, _, pn)) in rows.iter().enumerate() {
        let x0 = LEFT + g as f64 * gw + gw * 0.15;
        for (k, (v, color)) in [(p1, "#9ecae1"), (pn, "#3182bd")].into_iter().enumerate() {
            if !v.is_finite() {
                continue;
            }
            let x = x0 + k as f64 * bw;
            let y = axis.y(*v);
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\">{v:.0}</text>",
                bw - 2.0,
                H - BOTTOM - y,
                x + bw / 2.0,
                y - 3.0
            );
        }
        // Long names (multi-model ×6) break at spaces, one word a line.
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">",
            x0 + bw,
            H - BOTTOM + 16.0
        );
        let words: Vec<String> = name
            .split(' ')
            .flat_map(|w| match w.split_once('-') {
                Some((a, b)) => vec![format!("{a}-"), b.to_string()],
                None => vec![w.to_string()],
            })
            .collect();
        for (i, word) in words.iter().enumerate() {
            let _ = write!(
                s,
                "<tspan x=\"{:.1}\" dy=\"{}\">{}</tspan>",
                x0 + bw,
                if i == 0 { 0 } else { 12 },
                esc(word)
            );
        }
        let _ = writeln!(s, "</text>");
    }
    let lx = W - RIGHT - 150.0;
    let _ = writeln!(
        s,
        "<rect x=\"{lx}\" y=\"{TOP}\" width=\"12\" height=\"12\" fill=\"#9ecae1\"/><text x=\"{}\" y=\"{}\">1-shot</text><rect x=\"{}\" y=\"{TOP}\" width=\"12\" height=\"12\" fill=\"#3182bd\"/><text x=\"{}\" y=\"{}\">{}-shot</text>\n</svg>",
        lx + 16.0,
        TOP + 10.0,
        lx + 74.0,
        lx + 90.0,
        TOP + 10.0,
        e.shots
    );
    write(path, &s)
}

/// Curves over evaluations 1…N (best-so-far % of Opt of each search
/// strategy, say), one colour each, with a legend.
pub fn curves(
    title: &str,
    y_label: &str,
    series: &[(String, Vec<f64>)],
    path: &Path,
) -> Result<(), LearnError> {
    const COLORS: [&str; 10] = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        "#bcbd22", "#17becf",
    ];
    let n = series.iter().map(|s| s.1.len()).max().unwrap_or(0);
    if n == 0 {
        return Err(LearnError::Data("no curve to plot".into()));
    }
    let axis = Axis::new(0.0, 100.0, false);
    let mut s = open(title);
    axis.draw(&mut s, y_label);
    let x = |i: usize| LEFT + (i as f64 + 0.5) / n as f64 * (W - LEFT - RIGHT);
    for i in (0..n).filter(|i| (i + 1) % 5 == 0 || *i == 0) {
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            x(i),
            H - BOTTOM + 16.0,
            i + 1
        );
    }
    for (k, (name, ys)) in series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let points: Vec<String> = ys
            .iter()
            .enumerate()
            .map(|(i, &y)| format!("{:.1},{:.1}", x(i), axis.y(y)))
            .collect();
        let ly = H - BOTTOM - 14.0 * (series.len() - k) as f64;
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/><line x1=\"{}\" x2=\"{}\" y1=\"{ly:.1}\" y2=\"{ly:.1}\" stroke=\"{color}\" stroke-width=\"2\"/><text x=\"{}\" y=\"{:.1}\">{}</text>",
            points.join(" "),
            W - RIGHT - 150.0,
            W - RIGHT - 130.0,
            W - RIGHT - 125.0,
            ly + 4.0,
            esc(name)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">unique evaluations</text>\n</svg>",
        (LEFT + W - RIGHT) / 2.0,
        H - 20.0
    );
    write(path, &s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::Kind;
    use crate::learn::evaluate::{Options, score};

    #[test]
    fn plots_are_written_as_svg() {
        let d = Dataset::synthetic(3, 40, 5, 1);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k00.svg");
        distribution(&d, 0, &p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("k00: 40 variants"));
        assert!(svg.contains("<polyline") && svg.trim_end().ends_with("</svg>"));
        let speed: Vec<f64> = d.rows.iter().map(|r| r.speedup).collect();
        let rev: Vec<f64> = speed.iter().map(|s| -s).collect();
        let e = score(
            &d,
            &[Kind::Lr, Kind::Ibk],
            &[rev, speed],
            &Options {
                shots: 6,
                ..Options::default()
            },
        );
        let b = dir.path().join("models.svg");
        model_bars(&e, &b).unwrap();
        let svg = std::fs::read_to_string(&b).unwrap();
        // Random, two models, multi-model and multi-model ×6: one label each.
        for name in ["Random", "LR", "IBk", "multi-", "model", "×6"] {
            assert!(svg.contains(&format!(">{name}<")), "{name}");
        }
        // IBk ranked by the true speedups: its 1-shot is Opt.
        assert!(svg.contains(">100<"));
        assert!(distribution(&d, 7, &p).is_err());
        if png(&b) {
            let bytes = std::fs::read(b.with_extension("png")).unwrap();
            assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 1000);
        }
    }
}
