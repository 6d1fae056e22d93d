//! An evaluation's tables (Markdown and CSV) and the leave-one-out
//! predictions as CSV: pure rendering of the numbers [`super::score`]
//! computed.

use super::{Evaluation, means};
use crate::learn::Kind;
use crate::learn::csv_text::CsvText;
use crate::learn::dataset::Dataset;

/// Leave-one-out predictions as CSV: one line per variant with its
/// kernel, configuration (its bit string, or beyond the paper's space its
/// readable form, quoted), weight, measured speedup and every model's
/// predicted speedup.
pub fn predictions_csv(d: &Dataset, models: &[Kind], predicted: &[Vec<f64>]) -> String {
    let mut head = vec!["kernel", "variant_id", "config", "configs", "speedup"];
    head.extend(models.iter().map(|m| m.name()));
    let mut t = CsvText::new(head);
    for (i, r) in d.rows.iter().enumerate() {
        let mut rec = vec![
            d.kernels[r.kernel].name.clone(),
            r.variant_id.to_string(),
            r.config.text(),
            r.configs.to_string(),
            r.speedup.to_string(),
        ];
        rec.extend(predicted.iter().map(|p| p[i].to_string()));
        t.row(rec);
    }
    t.finish()
}

/// A column of the tables: a name and a value per kernel.
type Column = (String, Vec<f64>);

impl Evaluation {
    fn columns(&self, n_shot: bool) -> Vec<Column> {
        let mut c = vec![
            (
                "Opt".to_string(),
                self.kernels.iter().map(|k| k.opt).collect(),
            ),
            (
                "Random".to_string(),
                self.kernels.iter().map(|k| k.random).collect(),
            ),
        ];
        for (m, name) in self.models.iter().enumerate() {
            c.push((
                name.clone(),
                self.kernels
                    .iter()
                    .map(|k| if n_shot { k.n_shot[m] } else { k.one_shot[m] })
                    .collect(),
            ));
        }
        // Multi-model 1-shot is the models' consensus; N-shot the best of
        // every model's top-1 (the paper's).
        c.push((
            "multi-model".to_string(),
            self.kernels
                .iter()
                .map(|k| if n_shot { k.multi } else { k.consensus })
                .collect(),
        ));
        if n_shot {
            c.push((
                format!("multi-model ×{}", self.shots),
                self.kernels.iter().map(|k| k.multi_n).collect(),
            ));
        }
        c.push((
            "diverse".to_string(),
            self.kernels
                .iter()
                .map(|k| if n_shot { k.diverse_n } else { k.diverse })
                .collect(),
        ));
        c
    }

    /// Per-kernel value as a percentage of that kernel's Opt.
    fn percent(&self, col: &[f64]) -> Vec<f64> {
        col.iter()
            .zip(&self.kernels)
            .map(|(v, k)| 100.0 * v / k.opt)
            .collect()
    }

    /// Mean over kernels of each model's and multi-model's % of Opt.
    pub fn summary(&self) -> Vec<(String, f64, f64, f64, f64)> {
        let one = self.columns(false);
        let n = self.columns(true);
        let mut out = Vec::new();
        for (name, col) in n.iter().skip(1) {
            let single = one.iter().find(|c| &c.0 == name).map(|c| c.1.clone());
            let (s1, p1) = match &single {
                Some(c) => (means(c).0, means(&self.percent(c)).0),
                None => (f64::NAN, f64::NAN),
            };
            out.push((
                name.clone(),
                s1,
                p1,
                means(col).0,
                means(&self.percent(col)).0,
            ));
        }
        out
    }

    /// The tables as Markdown: speedups over the original and as % of
    /// Opt, for 1-shot and for N-shot with multi-model (paper Tables 8–13).
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        for (title, n_shot) in [("1-shot", false), (&*format!("{}-shot", self.shots), true)] {
            let cols = self.columns(n_shot);
            for pct in [false, true] {
                s += &format!(
                    "\n### {title}: {}\n\n",
                    if pct {
                        "% of Opt"
                    } else {
                        "speedup over the original"
                    }
                );
                s += "| kernel |";
                for (n, _) in &cols {
                    s += &format!(" {n} |");
                }
                s += "\n|---|";
                s += &"---:|".repeat(cols.len());
                s += "\n";
                let vals: Vec<Vec<f64>> = cols
                    .iter()
                    .map(|(_, c)| if pct { self.percent(c) } else { c.clone() })
                    .collect();
                for (k, ks) in self.kernels.iter().enumerate() {
                    s += &format!("| {} |", ks.kernel);
                    for v in &vals {
                        s += &if pct {
                            format!(" {:.0} |", v[k])
                        } else {
                            format!(" {:.2} |", v[k])
                        };
                    }
                    s += "\n";
                }
                for (label, geo) in [("mean", false), ("geomean", true)] {
                    s += &format!("| **{label}** |");
                    for v in &vals {
                        let (a, g) = means(v);
                        let x = if geo { g } else { a };
                        s += &if pct {
                            format!(" {x:.0} |")
                        } else {
                            format!(" {x:.2} |")
                        };
                    }
                    s += "\n";
                }
            }
        }
        s
    }

    /// The best measured configuration of every kernel (the paper's
    /// Tables 3–4), in readable form.
    pub fn best_configurations(&self) -> String {
        let mut s = String::from(
            "\n### Best measured configuration per kernel\n\n| kernel | variants | speedup | configuration |\n|---|---:|---:|---|\n",
        );
        for k in &self.kernels {
            s += &format!(
                "| {} | {} | {:.2} | `{}` |\n",
                k.kernel, k.variants, k.opt, k.opt_config
            );
        }
        s
    }

    /// One line per kernel and column, for spreadsheets.
    pub fn csv(&self) -> String {
        let mut t = CsvText::new([
            "kernel",
            "variants",
            "column",
            "shots",
            "speedup",
            "percent_of_opt",
        ]);
        for (n_shot, shots) in [(false, 1), (true, self.shots)] {
            for (name, col) in self.columns(n_shot) {
                if n_shot && (name == "Opt" || name == "Random") {
                    continue;
                }
                for (k, v) in self.kernels.iter().zip(&col) {
                    t.row([
                        k.kernel.clone(),
                        k.variants.to_string(),
                        name.clone(),
                        shots.to_string(),
                        format!("{v:.6}"),
                        format!("{:.3}", 100.0 * v / k.opt),
                    ]);
                }
            }
        }
        t.finish()
    }
}
