//! Delinearization: a one-dimensional array indexed by polynomials in
//! the loop iterators and the parameters (`a[lda*j + i]`,
//! `u[(i*n + j)*m + k]`) read as a multi-dimensional array with
//! parametric sizes (`a[j][i]`, size `lda`), in the spirit of Grosser et
//! al., "Optimistic delinearization of parametrically sized arrays" (ICS
//! 2015).
//!
//! The *strides* of an array are the parameter parts of the terms of its
//! subscripts that hold an iterator (`lda` in `lda*j`, `n*m` in `i*n*m`,
//! 1 in `i`). They must form a chain by divisibility (`1 | m | n*m`),
//! refined so that each step multiplies by one parameter: the steps are
//! the dimension sizes, inner first. Every term of every subscript then
//! goes to the largest stride that divides it, and what remains of it
//! must be affine: that is the subscript of that dimension.
//!
//! The split is exact when every inner subscript stays in `[0, size)`
//! wherever it is evaluated: [`ExtentCheck`]s, which the engine turns
//! into assumptions on the parameters (checked at run time, the original
//! code as the fallback). The generated code keeps the user's subscript
//! expressions, so nothing is printed back in multi-dimensional form.

use super::{Affine, Formula, isl_names};
use crate::frontend::scop::ast::Span;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// The most terms a product may have.
pub(crate) const MAX_TERMS: usize = 256;
/// The highest degree of a product.
pub(crate) const MAX_DEGREE: usize = 8;

/// A polynomial with integer coefficients: monomial (its variables,
/// sorted, repeated for powers; empty for the constant) to coefficient.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub(crate) struct Polynomial {
    pub terms: BTreeMap<Vec<String>, i64>,
}

impl Polynomial {
    pub(crate) fn constant(c: i64) -> Polynomial {
        let mut p = Polynomial::default();
        if c != 0 {
            p.terms.insert(vec![], c);
        }
        p
    }

    pub(crate) fn var(name: &str) -> Polynomial {
        let mut p = Polynomial::default();
        p.terms.insert(vec![name.to_string()], 1);
        p
    }

    /// `self + k * other`, `None` on overflow.
    pub(crate) fn add_scaled(&self, other: &Polynomial, k: i64) -> Option<Polynomial> {
        let mut r = self.clone();
        for (m, c) in &other.terms {
            r.add_term(m.clone(), c.checked_mul(k)?)?;
        }
        Some(r)
    }

    fn add_term(&mut self, m: Vec<String>, c: i64) -> Option<()> {
        let e = self.terms.entry(m.clone()).or_insert(0);
        *e = e.checked_add(c)?;
        if *e == 0 {
            self.terms.remove(&m);
        }
        Some(())
    }

    /// The product, `None` on overflow or when it would have more than
    /// [`MAX_TERMS`] terms or a degree over [`MAX_DEGREE`] (no subscript
    /// written by hand comes near; a product of many sums would grow
    /// exponentially).
    pub(crate) fn mul(&self, other: &Polynomial) -> Option<Polynomial> {
        if self.terms.len() * other.terms.len() > MAX_TERMS
            || self.degree() + other.degree() > MAX_DEGREE
        {
            return None;
        }
        let mut r = Polynomial::default();
        for (m1, c1) in &self.terms {
            for (m2, c2) in &other.terms {
                let mut m: Vec<String> = m1.iter().chain(m2).cloned().collect();
                m.sort();
                r.add_term(m, c1.checked_mul(*c2)?)?;
            }
        }
        Some(r)
    }

    /// The largest number of variables in one term (0 for a constant).
    pub(crate) fn degree(&self) -> usize {
        self.terms.keys().map(Vec::len).max().unwrap_or(0)
    }

    /// The same value as a polynomial; `None` for a floor division.
    pub(crate) fn from_affine(a: &Affine) -> Option<Polynomial> {
        let mut p = Polynomial::constant(a.constant);
        for (t, &c) in &a.terms {
            match t {
                super::Term::Var(v) => p.add_term(vec![v.clone()], c)?,
                super::Term::FloorDiv(..) => return None,
            }
        }
        Some(p)
    }
}

impl fmt::Display for Polynomial {
    /// C notation (`lda*j + i - 1`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terms.is_empty() {
            return f.write_str("0");
        }
        // Higher degrees first, the constant last.
        let mut terms: Vec<(&Vec<String>, &i64)> = self.terms.iter().collect();
        terms.sort_by_key(|(m, _)| std::cmp::Reverse(m.len()));
        for (k, &(m, &c)) in terms.iter().enumerate() {
            let (neg, mag) = (c < 0, c.unsigned_abs());
            match (k, neg) {
                (0, true) => f.write_str("-")?,
                (0, false) => {}
                (_, true) => f.write_str(" - ")?,
                (_, false) => f.write_str(" + ")?,
            }
            if m.is_empty() {
                write!(f, "{mag}")?;
            } else {
                if mag != 1 {
                    write!(f, "{mag}*")?;
                }
                f.write_str(&m.join("*"))?;
            }
        }
        Ok(())
    }
}

/// The multi-dimensional view of an array.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shape {
    /// The size of every dimension but the outermost, outer first.
    pub sizes: Vec<String>,
    /// Per access, its subscripts, outer first (one more than `sizes`).
    pub subscripts: Vec<Vec<Affine>>,
}

/// Whether multiset `a` is contained in multiset `b` (both sorted).
fn divides(a: &[String], b: &[String]) -> bool {
    minus(b, a).is_some()
}

/// Multiset difference `b - a` when `a` is contained in `b`.
fn minus(b: &[String], a: &[String]) -> Option<Vec<String>> {
    let mut rest = b.to_vec();
    for x in a {
        let k = rest.iter().position(|y| y == x)?;
        rest.remove(k);
    }
    Some(rest)
}

fn term_text(m: &[String], c: i64) -> String {
    let mut p = Polynomial::default();
    p.terms.insert(m.to_vec(), c);
    p.to_string()
}

/// One common shape for every access of an array (each subscript a
/// polynomial; `is_iterator` tells loop iterators from parameters), or
/// why there is none.
pub(crate) fn delinearize(
    accesses: &[Polynomial],
    is_iterator: &dyn Fn(&str) -> bool,
) -> Result<Shape, String> {
    let split = |m: &[String]| -> (Vec<String>, Vec<String>) {
        m.iter().cloned().partition(|v| !is_iterator(v))
    };
    // The strides: parameter parts of the terms that hold an iterator.
    let mut strides: Vec<Vec<String>> = vec![vec![]];
    for p in accesses {
        for (m, &c) in &p.terms {
            let (params, iters) = split(m);
            if iters.len() > 1 {
                return Err(format!(
                    "its subscript `{p}` has the term `{}`, a product of loop iterators",
                    term_text(m, c)
                ));
            }
            if iters.len() == 1 && !strides.contains(&params) {
                strides.push(params);
            }
        }
    }
    strides.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    // A chain by divisibility, refined to one parameter per step.
    let mut chain: Vec<Vec<String>> = vec![vec![]];
    let mut sizes: Vec<String> = Vec::new();
    for s in &strides[1..] {
        let last = chain.last().cloned().unwrap_or_default();
        let Some(q) = minus(s, &last) else {
            return Err(format!(
                "the strides `{}` and `{}` of its subscripts are not multiples of one another",
                last.join("*"),
                s.join("*")
            ));
        };
        let mut cur = last;
        for v in q {
            cur.push(v.clone());
            cur.sort();
            chain.push(cur.clone());
            sizes.push(v);
        }
    }
    let rank = chain.len();
    let mut subscripts = Vec::new();
    for p in accesses {
        let mut subs = vec![Affine::default(); rank];
        for (m, &c) in &p.terms {
            let (params, iters) = split(m);
            let k = (0..rank)
                .rev()
                .find(|&k| divides(&chain[k], &params))
                .unwrap_or(0);
            let mut rest = minus(&params, &chain[k]).unwrap_or_default();
            rest.extend(iters);
            let piece = match rest.as_slice() {
                [] => Affine::constant(c),
                [v] => Affine::var(v).scale(c).ok_or("integer overflow")?,
                _ if sizes.is_empty() => {
                    return Err(format!(
                        "the term `{}` of its subscript `{p}` is a product of parameters that no loop iterator multiplies",
                        term_text(m, c)
                    ));
                }
                _ => {
                    return Err(format!(
                        "the term `{}` of its subscript `{p}` does not fit the dimension sizes `{}`",
                        term_text(m, c),
                        sizes_text(&sizes)
                    ));
                }
            };
            subs[k] = subs[k].add_scaled(&piece, 1).ok_or("integer overflow")?;
        }
        subs.reverse();
        subscripts.push(subs);
    }
    sizes.reverse();
    Ok(Shape { sizes, subscripts })
}

fn sizes_text(inner_first: &[String]) -> String {
    let v: Vec<&str> = inner_first.iter().rev().map(String::as_str).collect();
    v.join(", ")
}

/// A subscript of an inner dimension that must stay in `[0, size)`
/// wherever it is evaluated for the split to be exact.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtentCheck {
    /// Loop iterators in scope, outermost first.
    pub iterators: Vec<String>,
    /// Where the access is evaluated.
    pub domain: Formula,
    pub value: Affine,
    /// The dimension's size: a parameter.
    pub size: String,
    pub array: String,
    pub span: Span,
}

impl ExtentCheck {
    /// isl notation of the points where the subscript leaves `[0, size)`.
    pub fn violations(&self, parameters: &[String]) -> String {
        let below = self.value.scale(-1).and_then(|d| d.plus_constant(-1));
        let above = self.value.add_scaled(&Affine::var(&self.size), -1);
        let head = format!(
            "[{}] -> {{ [{}] : ",
            isl_names(parameters),
            isl_names(&self.iterators)
        );
        match (below, above) {
            (Some(b), Some(a)) => {
                let outside = Formula::or(vec![Formula::ge0(b), Formula::ge0(a)]);
                format!(
                    "{head}{} }}",
                    Formula::and(vec![self.domain.clone(), outside])
                )
            }
            _ => format!(
                "{head}({}) and ({v} < 0 or {v} >= {s}) }}",
                self.domain,
                v = self.value,
                s = crate::isl::mangle(&self.size)
            ),
        }
    }
}

/// A one-dimensional array of the C code that the model sees with more
/// dimensions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delinearized {
    pub array: String,
    /// The sizes of the dimensions but the outermost, outer first.
    pub sizes: Vec<String>,
    /// What must hold for the model to be exact.
    pub checks: Vec<ExtentCheck>,
}

impl Delinearized {
    /// The C element at multi-dimensional subscripts (C text, outer
    /// first), linearized again: `a[lda * (j) + (i)]`.
    pub(crate) fn element(&self, subscripts: &[String]) -> String {
        let mut it = subscripts.iter();
        let mut s = it.next().cloned().unwrap_or_else(|| "0".into());
        for (size, sub) in self.sizes.iter().zip(it) {
            s = format!("{size} * ({s}) + ({sub})");
        }
        format!("{}[{s}]", self.array)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `c * v1 * v2 ...` terms: `("lda j", 1)`.
    fn poly(terms: &[(&str, i64)]) -> Polynomial {
        let mut p = Polynomial::default();
        for (m, c) in terms {
            let mut m: Vec<String> = m.split_whitespace().map(String::from).collect();
            m.sort();
            p = p
                .add_scaled(
                    &Polynomial {
                        terms: [(m, 1)].into_iter().collect(),
                    },
                    *c,
                )
                .unwrap();
        }
        p
    }

    fn iters(v: &str) -> bool {
        matches!(v, "i" | "j" | "k")
    }

    fn subs(s: &Shape) -> Vec<Vec<String>> {
        s.subscripts
            .iter()
            .map(|v| v.iter().map(|a| a.to_string()).collect())
            .collect()
    }

    #[test]
    fn column_major_splits_on_its_leading_dimension() {
        // a[lda*j + i], a[lda*j + i + 1], a[i] (optimistic: row 0)
        let s = delinearize(
            &[
                poly(&[("lda j", 1), ("i", 1)]),
                poly(&[("lda j", 1), ("i", 1), ("", 1)]),
                poly(&[("i", 1)]),
            ],
            &iters,
        )
        .unwrap();
        assert_eq!(s.sizes, vec!["lda"]);
        assert_eq!(
            subs(&s),
            vec![vec!["j", "i"], vec!["j", "i + 1"], vec!["0", "i"]]
        );
    }

    #[test]
    fn three_dimensions_from_nested_products() {
        // (i*n + j)*m + k = i*n*m + j*m + k, and an offset of one row.
        let s = delinearize(
            &[
                poly(&[("i n m", 1), ("j m", 1), ("k", 1)]),
                poly(&[("i n m", 1), ("j m", 1), ("m", 1), ("k", 1)]),
            ],
            &iters,
        )
        .unwrap();
        assert_eq!(s.sizes, vec!["n", "m"]);
        assert_eq!(subs(&s), vec![vec!["i", "j", "k"], vec!["i", "j + 1", "k"]]);
    }

    #[test]
    fn coefficients_and_parameter_offsets_go_to_their_dimension() {
        // u[(n - 1 - i)*size + 2*j - 1]
        let s = delinearize(
            &[poly(&[
                ("n size", 1),
                ("size", -1),
                ("i size", -1),
                ("j", 2),
                ("", -1),
            ])],
            &iters,
        )
        .unwrap();
        assert_eq!(s.sizes, vec!["size"]);
        assert_eq!(subs(&s), vec![vec!["-i + n - 1", "2*j - 1"]]);
    }

    #[test]
    fn a_jump_of_two_parameters_is_refined() {
        // a[i*n*m + k]: sizes n and m, the middle subscript 0.
        let s = delinearize(&[poly(&[("i n m", 1), ("k", 1)])], &iters).unwrap();
        assert_eq!(s.sizes.len(), 2);
        assert_eq!(subs(&s), vec![vec!["i", "0", "k"]]);
    }

    #[test]
    fn inconsistent_accesses_are_refused_with_the_reason() {
        // Strides n and m: neither divides the other.
        let e = delinearize(
            &[poly(&[("i n", 1), ("j", 1)]), poly(&[("j m", 1), ("i", 1)])],
            &iters,
        )
        .unwrap_err();
        assert!(e.contains("not multiples"), "{e}");
        // A product of iterators.
        let e = delinearize(&[poly(&[("i j", 1)])], &iters).unwrap_err();
        assert!(e.contains("product of loop iterators"), "{e}");
        // n*n where the strides are 1, m, n*m.
        let e = delinearize(
            &[
                poly(&[("i n m", 1), ("j m", 1), ("k", 1)]),
                poly(&[("n n", 1), ("k", 1)]),
            ],
            &iters,
        )
        .unwrap_err();
        assert!(e.contains("does not fit"), "{e}");
        // A product of parameters alone.
        let e = delinearize(&[poly(&[("n m", 1), ("i", 1)])], &iters).unwrap_err();
        assert!(e.contains("a product of parameters"), "{e}");
    }

    #[test]
    fn polynomials_multiply_and_print_in_c() {
        let p = Polynomial::var("i")
            .mul(&Polynomial::var("n"))
            .unwrap()
            .add_scaled(&Polynomial::var("j"), 1)
            .unwrap()
            .mul(&Polynomial::var("m"))
            .unwrap()
            .add_scaled(&Polynomial::constant(3), -1)
            .unwrap();
        assert_eq!(p.to_string(), "i*m*n + j*m - 3");
        assert_eq!(p.degree(), 3);
        // Products of many sums are not expanded.
        let sum = Polynomial::var("a")
            .add_scaled(&Polynomial::var("b"), 1)
            .unwrap();
        let mut big = sum.clone();
        for _ in 0..7 {
            big = big.mul(&sum).unwrap();
        }
        assert_eq!(big.terms.len(), 9);
        assert!(big.mul(&sum).is_none());
        let d = Delinearized {
            array: "u".into(),
            sizes: vec!["n".into(), "m".into()],
            checks: vec![],
        };
        assert_eq!(
            d.element(&["c0".into(), "c1".into(), "c2".into()]),
            "u[m * (n * (c0) + (c1)) + (c2)]"
        );
    }

    #[test]
    fn extent_violations_in_isl_notation() {
        let c = ExtentCheck {
            iterators: vec!["j".into(), "i".into()],
            domain: Formula::and(vec![
                Formula::ge0(Affine::var("i")),
                Formula::ge0(
                    Affine::var("n")
                        .plus_constant(-1)
                        .unwrap()
                        .add_scaled(&Affine::var("i"), -1)
                        .unwrap(),
                ),
            ]),
            value: Affine::var("i"),
            size: "lda".into(),
            array: "a".into(),
            span: Span { start: 0, end: 0 },
        };
        assert_eq!(
            c.violations(&["n".into(), "lda".into()]),
            "[n, lda] -> { [j, i] : i >= 0 and -i + n - 1 >= 0 and (-i - 1 >= 0 or i - lda >= 0) }"
        );
    }
}
