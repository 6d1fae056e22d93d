//! The side channel of an instrumented build (the wrapping is written by
//! `engine::instrument`): what every SCoP region of one run took and
//! wrote, in a file named by `POLYTUNE_SIDE`, apart from the program's
//! own output. Format, one record per line:
//!
//! ```text
//! polytune-side 1 REGIONS
//! sum K EXEC ARRAY i N HASH                 execution EXEC of region K (integers)
//! sum K EXEC ARRAY f N SUM WSUM ABS         (floating point, C99 hex floats)
//! rest K ARRAY i|f EXECS N ...              executions past the first 1000, added up
//! param K NAME VALUE                       a parameter of region K at its first execution
//! time K SECONDS COUNT                      region K's total time and executions
//! lost K                                    region K's last values were over the limit
//! concurrent                                executions overlapped or came from several threads
//! begin rK.ARRAY [bits] / values / end rK.ARRAY    the last execution in full
//! done
//! ```
//!
//! Two runs agree when their summaries agree (hashes exactly; sums within
//! the tolerance scaled by the sum of magnitudes) and their last values do
//! (as [`Dump::compare`]).

use super::dump::{Dump, Mismatch, Tolerance, Values, floats_match};

/// One region's time over the whole run.
#[derive(Debug, Clone, PartialEq)]
pub struct RegionTime {
    pub region: usize,
    pub seconds: f64,
    pub executions: u64,
}

/// One array's summary over one execution (or over the executions past
/// the first thousand).
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub region: usize,
    /// The execution (1-based); 0 for the sum of the later ones.
    pub execution: u64,
    pub array: String,
    pub values: u64,
    pub digest: Digest,
}

/// What a summary keeps of the values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Digest {
    Integers {
        hash: u64,
    },
    Floats {
        sum: f64,
        weighted: f64,
        magnitude: f64,
    },
}

/// Everything one run reported.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Side {
    pub regions: Vec<RegionTime>,
    pub summaries: Vec<Summary>,
    /// The last execution of every region, arrays named `rK.NAME`.
    pub last: Dump,
    /// Regions whose last values were over the size limit (summaries only).
    pub lost: Vec<usize>,
    /// The parameters' values at each region's first execution: (region,
    /// the parameter's C name, its value).
    pub params: Vec<(usize, String, i64)>,
}

/// Why a side file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SideError {
    #[error(
        "the program wrote no measurement record (it never reached a SCoP region, or exited without running its exit handlers)"
    )]
    Missing,
    #[error("the measurement record ends early: the program did not exit normally")]
    Incomplete,
    #[error(
        "the program ran a SCoP region from several of its threads (the kernel is called inside the program's own parallel region): the overlap and order of its executions depend on thread scheduling, so polytune cannot time or verify them one by one\n  help: measure a build whose kernel is called from one thread (e.g. with the program's threads set to 1), or mark a region inside the kernel's parallel loop instead"
    )]
    Concurrent,
    #[error("malformed measurement record at line {line}: {message}")]
    Malformed { line: usize, message: String },
}

/// Parses a C99 hexadecimal float as `printf("%a")` writes it (and the
/// special values `inf`, `-inf`, `nan`, `-nan`).
pub(crate) fn parse_hex_float(s: &str) -> Option<f64> {
    let (neg, t) = match s.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, s),
    };
    let v = match t {
        "inf" | "infinity" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => {
            let t = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"))?;
            let (mant, exp) = t.split_once(['p', 'P'])?;
            let exp: i32 = exp.parse().ok()?;
            let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
            let mut m: f64 = 0.0;
            for c in int.chars() {
                m = m * 16.0 + c.to_digit(16)? as f64;
            }
            let mut scale = 1.0 / 16.0;
            for c in frac.chars() {
                m += c.to_digit(16)? as f64 * scale;
                scale /= 16.0;
            }
            m * 2f64.powi(exp)
        }
    };
    Some(if neg { -v } else { v })
}

impl Side {
    /// Reads a side file's text; an empty text means the program never
    /// started recording.
    pub fn parse(text: &str) -> Result<Side, SideError> {
        if text.trim().is_empty() {
            return Err(SideError::Missing);
        }
        let mut side = Side::default();
        let mut done = false;
        let mut concurrent = false;
        let mut open: Option<(String, Values)> = None;
        for (k, line) in text.lines().enumerate() {
            let bad = |message: &str| SideError::Malformed {
                line: k + 1,
                message: format!("{message}: `{line}`"),
            };
            if let Some((name, values)) = open.as_mut() {
                if let Some(rest) = line.strip_prefix("end ") {
                    if rest != name {
                        return Err(bad("`end` closes another array"));
                    }
                    let (name, values) = open.take().expect("open");
                    side.last.arrays.push((name, values));
                    continue;
                }
                match values {
                    Values::Doubles(v) => {
                        let bits = u64::from_str_radix(line, 16)
                            .ok()
                            .filter(|_| line.len() == 16)
                            .ok_or_else(|| bad("not 16 hexadecimal digits"))?;
                        v.push(f64::from_bits(bits));
                    }
                    Values::Text(v) => {
                        line.parse::<i64>().map_err(|_| bad("not an integer"))?;
                        v.push(line.to_string());
                    }
                }
                continue;
            }
            let w: Vec<&str> = line.split_whitespace().collect();
            let num = |s: &str| s.parse::<u64>().map_err(|_| bad("not a count"));
            let float = |s: &str| parse_hex_float(s).ok_or_else(|| bad("not a number"));
            match w.as_slice() {
                ["polytune-side", "1", _] => {}
                ["time", k, secs, count] => side.regions.push(RegionTime {
                    region: num(k)? as usize,
                    seconds: secs.parse().map_err(|_| bad("not a time"))?,
                    executions: num(count)?,
                }),
                ["lost", k] => side.lost.push(num(k)? as usize),
                ["param", k, name, value] => side.params.push((
                    num(k)? as usize,
                    name.to_string(),
                    value.parse().map_err(|_| bad("not an integer"))?,
                )),
                ["begin", name] => open = Some((name.to_string(), Values::Text(Vec::new()))),
                ["begin", name, "bits"] => {
                    open = Some((name.to_string(), Values::Doubles(Vec::new())))
                }
                ["done"] => done = true,
                ["concurrent"] => concurrent = true,
                ["sum" | "rest", k, e, name, kind, rest @ ..] => {
                    // sum K EXEC ARRAY KIND N ... / rest K ARRAY KIND EXECS N ...
                    let n = rest.first().ok_or_else(|| bad("no count"))?;
                    let (execution, values, digest_words) =
                        (if w[0] == "sum" { num(e)? } else { 0 }, num(n)?, &rest[1..]);
                    let (array, kind) = if w[0] == "sum" {
                        (*name, *kind)
                    } else {
                        (*e, *name)
                    };
                    let digest = match (kind, digest_words) {
                        ("i", [h]) => Digest::Integers {
                            hash: h.parse().map_err(|_| bad("not a hash"))?,
                        },
                        ("f", [s, ws, m]) => Digest::Floats {
                            sum: float(s)?,
                            weighted: float(ws)?,
                            magnitude: float(m)?,
                        },
                        _ => return Err(bad("unknown summary")),
                    };
                    side.summaries.push(Summary {
                        region: num(k)? as usize,
                        execution,
                        array: array.to_string(),
                        values,
                        digest,
                    });
                }
                [] => {}
                _ => return Err(bad("unknown record")),
            }
        }
        if !done || open.is_some() {
            return Err(SideError::Incomplete);
        }
        if concurrent {
            return Err(SideError::Concurrent);
        }
        Ok(side)
    }

    /// Total seconds in all regions, and the executions of each region.
    pub(crate) fn seconds(&self) -> f64 {
        self.regions.iter().map(|r| r.seconds).sum()
    }

    /// Regions that never ran.
    pub(crate) fn unreached(&self) -> Vec<usize> {
        self.regions
            .iter()
            .filter(|r| r.executions == 0)
            .map(|r| r.region)
            .collect()
    }

    /// Compares `actual`'s records with `self` (the original's).
    pub(crate) fn compare(&self, actual: &Side, tol: Tolerance) -> Result<(), Mismatch> {
        let execs = |s: &Side| {
            s.regions
                .iter()
                .map(|r| (r.region, r.executions))
                .collect::<Vec<_>>()
        };
        if execs(self) != execs(actual) {
            return Err(Mismatch {
                array: "<executions of each region>".into(),
                index: 0,
                expected: format!("{:?}", execs(self)),
                actual: format!("{:?}", execs(actual)),
                differing: 1,
            });
        }
        if self.summaries.len() != actual.summaries.len() {
            return Err(Mismatch {
                array: "<recorded arrays>".into(),
                index: 0,
                expected: self.summaries.len().to_string(),
                actual: actual.summaries.len().to_string(),
                differing: 1,
            });
        }
        let differing = self
            .summaries
            .iter()
            .zip(&actual.summaries)
            .filter(|(e, a)| !summaries_match(e, a, tol))
            .count();
        if let Some((e, a)) = self
            .summaries
            .iter()
            .zip(&actual.summaries)
            .find(|(e, a)| !summaries_match(e, a, tol))
        {
            let at = if e.execution == 0 {
                "executions past the 1000th".to_string()
            } else {
                format!("execution {}", e.execution)
            };
            return Err(Mismatch {
                array: format!("region {} {} after {at}", e.region, e.array),
                index: 0,
                expected: e.digest.to_string(),
                actual: a.digest.to_string(),
                differing,
            });
        }
        self.last.compare(&actual.last, tol)
    }
}

impl std::fmt::Display for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Digest::Integers { hash } => write!(f, "hash {hash:016x}"),
            Digest::Floats { sum, weighted, .. } => {
                write!(f, "sum {sum:e}, weighted sum {weighted:e}")
            }
        }
    }
}

fn summaries_match(e: &Summary, a: &Summary, tol: Tolerance) -> bool {
    if (e.region, e.execution, &e.array, e.values) != (a.region, a.execution, &a.array, a.values) {
        return false;
    }
    match (e.digest, a.digest) {
        (Digest::Integers { hash: x }, Digest::Integers { hash: y }) => x == y,
        (
            Digest::Floats {
                sum: s1,
                weighted: w1,
                magnitude: m1,
            },
            Digest::Floats {
                sum: s2,
                weighted: w2,
                magnitude: m2,
            },
        ) => {
            // Rounding differences of a legal reordering are bounded by
            // the tolerance of each value; summed, by the tolerance
            // applied to the sum of magnitudes (weights are below 2).
            let scale = Tolerance {
                rtol: tol.rtol * 2.0,
                atol: tol.atol * 2.0 * e.values as f64,
                ..tol
            };
            let near = |x: f64, y: f64| {
                floats_match(x, y, scale) || (x - y).abs() <= scale.atol + scale.rtol * m1.max(m2)
            };
            near(s1, s2) && near(w1, w2) && floats_match(m1, m2, scale)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORD: &str = "polytune-side 1 1\nparam 0 n 7\nsum 0 1 A f 2 0x1.8p+1 0x1.cp+1 0x1.8p+1\nsum 0 1 n i 1 42\ntime 0 1.5e-03 1\nbegin r0.A bits\n3ff0000000000000\n4000000000000000\nend r0.A\nbegin r0.n\n7\nend r0.n\ndone\n";

    #[test]
    fn a_record_is_read() {
        let s = Side::parse(RECORD).unwrap();
        assert_eq!(
            s.regions,
            vec![RegionTime {
                region: 0,
                seconds: 1.5e-3,
                executions: 1
            }]
        );
        assert_eq!(s.summaries.len(), 2);
        assert_eq!(
            s.summaries[0].digest,
            Digest::Floats {
                sum: 3.0,
                weighted: 3.5,
                magnitude: 3.0
            }
        );
        assert_eq!(s.last.arrays.len(), 2);
        assert_eq!(s.params, vec![(0, "n".to_string(), 7)]);
        assert_eq!(s.compare(&s, Tolerance::default()), Ok(()));
        assert!(s.unreached().is_empty());
    }

    #[test]
    fn incomplete_and_missing_records_are_errors() {
        assert_eq!(Side::parse(""), Err(SideError::Missing));
        assert_eq!(
            Side::parse(&RECORD.replace("done", "concurrent\ndone")),
            Err(SideError::Concurrent)
        );
        assert_eq!(
            Side::parse(&RECORD[..RECORD.len() - 5]),
            Err(SideError::Incomplete)
        );
        assert!(matches!(
            Side::parse("polytune-side 1 1\nwhat\ndone\n"),
            Err(SideError::Malformed { line: 2, .. })
        ));
    }

    #[test]
    fn a_changed_summary_or_value_is_a_mismatch() {
        let s = Side::parse(RECORD).unwrap();
        let other = Side::parse(&RECORD.replace("0x1.cp+1", "0x1.dp+1")).unwrap();
        let m = s.compare(&other, Tolerance::default()).unwrap_err();
        assert!(m.array.contains("region 0 A after execution 1"), "{m}");
        let other = Side::parse(&RECORD.replace("sum 0 1 n i 1 42", "sum 0 1 n i 1 43")).unwrap();
        assert!(s.compare(&other, Tolerance::default()).is_err());
        let other = Side::parse(&RECORD.replace("begin r0.n\n7", "begin r0.n\n8")).unwrap();
        assert!(s.compare(&other, Tolerance::default()).is_err());
        let other = Side::parse(&RECORD.replace("time 0 1.5e-03 1", "time 0 1.5e-03 2")).unwrap();
        assert!(s.compare(&other, Tolerance::default()).is_err());
        // Rounding within the tolerance is not.
        let other =
            Side::parse(&RECORD.replace("0x1.8p+1 0x1.cp+1", "0x1.8000000000001p+1 0x1.cp+1"))
                .unwrap();
        assert_eq!(s.compare(&other, Tolerance::default()), Ok(()));
    }

    #[test]
    fn hex_floats() {
        assert_eq!(parse_hex_float("0x1.8p+1"), Some(3.0));
        assert_eq!(parse_hex_float("-0x1p-2"), Some(-0.25));
        assert_eq!(parse_hex_float("0x0p+0"), Some(0.0));
        assert!(parse_hex_float("nan").unwrap().is_nan());
        assert_eq!(parse_hex_float("-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_hex_float("0x1.fffffffffffffp+1023"), Some(f64::MAX));
        assert_eq!(parse_hex_float("3"), None);
    }
}
