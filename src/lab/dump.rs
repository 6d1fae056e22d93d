//! The dump a kernel prints with `--dump` (see
//! `polybench/include/polytune_bench.h`), and its comparison: exact for
//! integers, within a relative tolerance for floating point, since a
//! legal reordering may change rounding (contraction into FMA, ...).

use std::fmt;

/// Every array a program dumped, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Dump {
    pub arrays: Vec<(String, Values)>,
}

/// One dumped array's values.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// Doubles written as the hexadecimal digits of their IEEE-754 bits
    /// (`begin NAME COUNT bits`): exact, and an order of magnitude faster
    /// to print and read than decimal, which matters for the millions of
    /// values a MEDIUM run dumps before every timing.
    Doubles(Vec<f64>),
    /// Values as printed: integers, or decimal floating point.
    Text(Vec<String>),
}

impl Values {
    pub(crate) fn len(&self) -> usize {
        match self {
            Values::Doubles(v) => v.len(),
            Values::Text(v) => v.len(),
        }
    }

    /// Value `i` as text (doubles in their shortest exact decimal form).
    pub(crate) fn text(&self, i: usize) -> String {
        match self {
            Values::Doubles(v) => format!("{:?}", v[i]),
            Values::Text(v) => v[i].clone(),
        }
    }
}

/// Why a dump could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed dump at line {line}: {message}")]
pub struct DumpError {
    pub line: usize,
    pub message: String,
}

/// How results are compared: the accepted difference between two
/// floating-point values, `|a - b| <= atol + rtol * max(|a|, |b|)`, and
/// which lines of standard output count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
    pub stdout: StdoutPolicy,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            rtol: 1e-6,
            atol: 1e-9,
            stdout: StdoutPolicy::Stable,
        }
    }
}

/// Which lines of a program's standard output a variant must reproduce.
/// The regions' records and the exit status decide in every case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StdoutPolicy {
    /// Every line that two plain runs of the original print alike.
    Strict,
    /// The lines that also stay alike when the original's regions are
    /// slowed down (its second recording run spins after each region as
    /// long as the region took): a line that reports a time, a rate or
    /// anything else that follows the regions' speed is not compared.
    #[default]
    Stable,
    /// None.
    Ignore,
}

/// A `--stdout` name that is none of [`StdoutPolicy::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown standard output policy `{0}` (strict, stable or ignore)")]
pub struct UnknownStdoutPolicy(pub String);

super::named_by_as_str!(StdoutPolicy, UnknownStdoutPolicy);

impl StdoutPolicy {
    pub const ALL: [StdoutPolicy; 3] = [
        StdoutPolicy::Strict,
        StdoutPolicy::Stable,
        StdoutPolicy::Ignore,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StdoutPolicy::Strict => "strict",
            StdoutPolicy::Stable => "stable",
            StdoutPolicy::Ignore => "ignore",
        }
    }
}

/// The first difference between two dumps, and how many values differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub array: String,
    pub index: usize,
    pub expected: String,
    pub actual: String,
    pub differing: usize,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[{}]: expected {}, got {} ({} value(s) differ)",
            self.array, self.index, self.expected, self.actual, self.differing
        )
    }
}

impl Dump {
    /// Reads the `begin NAME COUNT` / values / `end NAME` format.
    pub fn parse(text: &str) -> Result<Dump, DumpError> {
        let mut arrays = Vec::new();
        let mut current: Option<(String, usize, Values)> = None;
        for (k, line) in text.lines().enumerate() {
            let err = |message: String| DumpError {
                line: k + 1,
                message,
            };
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix("begin ") {
                if current.is_some() {
                    return Err(err("`begin` inside an open array".into()));
                }
                let mut parts = rest.split_whitespace();
                let name = parts
                    .next()
                    .ok_or_else(|| err("`begin` without a name".into()))?;
                let count: usize = parts
                    .next()
                    .and_then(|c| c.parse().ok())
                    .ok_or_else(|| err("`begin` without a count".into()))?;
                let values = match parts.next() {
                    None => Values::Text(Vec::with_capacity(count.min(1 << 24))),
                    Some("bits") => Values::Doubles(Vec::with_capacity(count.min(1 << 24))),
                    Some(other) => return Err(err(format!("unknown value form `{other}`"))),
                };
                current = Some((name.to_string(), count, values));
            } else if let Some(rest) = line.strip_prefix("end ") {
                let (name, count, values) = current
                    .take()
                    .ok_or_else(|| err("`end` without `begin`".into()))?;
                if rest.trim() != name {
                    return Err(err(format!("`end {}` closes `{name}`", rest.trim())));
                }
                if values.len() != count {
                    return Err(err(format!(
                        "{name}: {} values, header says {count}",
                        values.len()
                    )));
                }
                arrays.push((name, values));
            } else if let Some((_, _, values)) = current.as_mut() {
                match values {
                    Values::Text(v) => v.push(line.to_string()),
                    Values::Doubles(v) => {
                        let bits = u64::from_str_radix(line, 16)
                            .ok()
                            .filter(|_| line.len() == 16)
                            .ok_or_else(|| err(format!("`{line}` is not 16 hexadecimal digits")))?;
                        v.push(f64::from_bits(bits));
                    }
                }
            } else {
                return Err(err(format!("value outside an array: `{line}`")));
            }
        }
        if let Some((name, ..)) = current {
            return Err(DumpError {
                line: text.lines().count(),
                message: format!("array `{name}` is never closed"),
            });
        }
        Ok(Dump { arrays })
    }

    /// Total number of values.
    pub(crate) fn len(&self) -> usize {
        self.arrays.iter().map(|(_, v)| v.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Compares `actual` against `self` (the reference).
    pub fn compare(&self, actual: &Dump, tol: Tolerance) -> Result<(), Mismatch> {
        let names = |d: &Dump| {
            d.arrays
                .iter()
                .map(|(n, v)| (n.clone(), v.len()))
                .collect::<Vec<_>>()
        };
        if names(self) != names(actual) {
            return Err(Mismatch {
                array: "<arrays>".into(),
                index: 0,
                expected: format!("{:?}", names(self)),
                actual: format!("{:?}", names(actual)),
                differing: 1,
            });
        }
        let mut first: Option<Mismatch> = None;
        let mut differing = 0;
        for ((name, exp), (_, act)) in self.arrays.iter().zip(&actual.arrays) {
            let matches = |i: usize| match (exp, act) {
                (Values::Doubles(e), Values::Doubles(a)) => floats_match(e[i], a[i], tol),
                (Values::Text(e), Values::Text(a)) => values_match(&e[i], &a[i], tol),
                _ => values_match(&exp.text(i), &act.text(i), tol),
            };
            for i in 0..exp.len() {
                if !matches(i) {
                    differing += 1;
                    if first.is_none() {
                        first = Some(Mismatch {
                            array: name.clone(),
                            index: i,
                            expected: exp.text(i),
                            actual: act.text(i),
                            differing: 0,
                        });
                    }
                }
            }
        }
        match first {
            None => Ok(()),
            Some(mut m) => {
                m.differing = differing;
                Err(m)
            }
        }
    }
}

fn values_match(e: &str, a: &str, tol: Tolerance) -> bool {
    if e == a {
        return true;
    }
    if let (Ok(x), Ok(y)) = (e.parse::<i64>(), a.parse::<i64>()) {
        return x == y;
    }
    match (e.parse::<f64>(), a.parse::<f64>()) {
        (Ok(x), Ok(y)) => floats_match(x, y, tol),
        _ => false,
    }
}

pub(crate) fn floats_match(x: f64, y: f64, tol: Tolerance) -> bool {
    if x.to_bits() == y.to_bits() {
        return true;
    }
    if x.is_nan() || y.is_nan() {
        return x.is_nan() && y.is_nan();
    }
    if x.is_infinite() || y.is_infinite() {
        return x == y;
    }
    (x - y).abs() <= tol.atol + tol.rtol * x.abs().max(y.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_compares() {
        let a = Dump::parse("begin C 3\n1.5\n2\n-0.25\nend C\nbegin n 1\n7\nend n\n").unwrap();
        assert_eq!(a.len(), 4);
        let b =
            Dump::parse("begin C 3\n1.5000000001\n2\n-0.25\nend C\nbegin n 1\n7\nend n\n").unwrap();
        assert!(a.compare(&b, Tolerance::default()).is_ok());
        let c = Dump::parse("begin C 3\n1.6\n2\n-0.25\nend C\nbegin n 1\n8\nend n\n").unwrap();
        let m = a.compare(&c, Tolerance::default()).unwrap_err();
        assert_eq!((m.array.as_str(), m.index, m.differing), ("C", 0, 2));
        let d = Dump::parse("begin C 3\n1.5\n2\n-0.25\nend C\n").unwrap();
        assert!(a.compare(&d, Tolerance::default()).is_err());
    }

    #[test]
    fn integers_are_exact_and_nan_matches_nan() {
        assert!(!values_match(
            "100000000",
            "100000001",
            Tolerance::default()
        ));
        assert!(values_match("nan", "nan", Tolerance::default()));
        assert!(!values_match("nan", "1", Tolerance::default()));
        assert!(!values_match("inf", "-inf", Tolerance::default()));
    }

    #[test]
    fn doubles_as_bits() {
        // 1.5, -0.25, NaN; the text dump of the same values.
        let bits = Dump::parse(
            "begin C 3 bits\n3ff8000000000000\nbfd0000000000000\n7ff8000000000000\nend C\n",
        )
        .unwrap();
        assert_eq!(bits.len(), 3);
        assert_eq!(bits.arrays[0].1.text(1), "-0.25");
        let text = Dump::parse("begin C 3\n1.5\n-0.25\nnan\nend C\n").unwrap();
        assert!(bits.compare(&text, Tolerance::default()).is_ok());
        assert!(text.compare(&bits, Tolerance::default()).is_ok());
        let close = Dump::parse(
            "begin C 3 bits\n3ff8000000000001\nbfd0000000000000\n7ff8000000000000\nend C\n",
        )
        .unwrap();
        assert!(bits.compare(&close, Tolerance::default()).is_ok());
        let far = Dump::parse(
            "begin C 3 bits\n3ff9000000000000\nbfd0000000000000\n0000000000000000\nend C\n",
        )
        .unwrap();
        let m = bits.compare(&far, Tolerance::default()).unwrap_err();
        assert_eq!((m.index, m.differing), (0, 2));
        assert_eq!((m.expected.as_str(), m.actual.as_str()), ("1.5", "1.5625"));
        assert!(Dump::parse("begin C 1 bits\n3ff8\nend C\n").is_err());
        assert!(Dump::parse("begin C 1 bits\nzzzzzzzzzzzzzzzz\nend C\n").is_err());
        assert!(Dump::parse("begin C 1 hex\n1\nend C\n").is_err());
    }

    #[test]
    fn malformed_dumps_are_errors() {
        assert!(Dump::parse("1.0\n").is_err());
        assert!(Dump::parse("begin A 2\n1\nend A\n").is_err());
        assert!(Dump::parse("begin A 1\n1\n").is_err());
        assert!(Dump::parse("begin A 1\n1\nend B\n").is_err());
    }
}
