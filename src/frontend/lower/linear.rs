//! Linearized subscripts (`a[lda*j + i]`, `u[(i*n + j)*m + k]`): the
//! subscript of a one-dimensional access that is a polynomial of degree 2
//! or more is lowered to that polynomial; once the whole SCoP is lowered,
//! every access of such an array is split with one common shape
//! ([`delinearize`]), and the inner subscripts' ranges become assumptions.

use super::types::{literal_type, type_of_spelling};
use super::*;
use crate::frontend::scop::delinearize::{self, Delinearized, ExtentCheck, Polynomial};

/// The subscript as a polynomial; `None` for anything else (divisions,
/// calls, ...: the affine lowering says what is wrong with it).
fn polynomial(e: &Expr) -> Option<Polynomial> {
    match &e.kind {
        ExprKind::Int { value, .. } => Some(Polynomial::constant(*value)),
        ExprKind::Ident(n) => Some(Polynomial::var(n)),
        ExprKind::Unary {
            op: UnOp::Plus,
            expr,
        } => polynomial(expr),
        ExprKind::Unary {
            op: UnOp::Neg,
            expr,
        } => Polynomial::default().add_scaled(&polynomial(expr)?, -1),
        // A conversion that keeps every value (no narrow type).
        ExprKind::Cast { ty, expr } if widening(ty) => polynomial(expr),
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (polynomial(lhs)?, polynomial(rhs)?);
            match op {
                BinOp::Add => a.add_scaled(&b, 1),
                BinOp::Sub => a.add_scaled(&b, -1),
                BinOp::Mul => a.mul(&b),
                _ => None,
            }
        }
        _ => None,
    }
}

/// An access whose subscript is linearized.
pub(super) struct LinearAccess {
    pub(super) array: String,
    /// The whole access and its subscript.
    pub(super) access: Span,
    pub(super) subscript: Span,
    pub(super) poly: Polynomial,
}

/// `int`, `long`, `long long` (signed), spelled in any usual way.
pub(super) fn widening(ty: &str) -> bool {
    match type_of_spelling(ty) {
        CType::Long | CType::LLong => true,
        CType::Int => matches!(ty.trim(), "int" | "signed" | "signed int"),
        _ => false,
    }
}

impl Lowerer<'_> {
    /// The subscript of a one-dimensional access when it is a polynomial
    /// of degree 2 or more in iterators and parameters, its names checked
    /// (parameters recorded) as the affine lowering checks them; `None`
    /// when it is not such a polynomial.
    pub(super) fn linearized(&mut self, e: &Expr) -> R<Option<Polynomial>> {
        match polynomial(e) {
            Some(p) if p.degree() >= 2 => {
                self.signed_leaves(e, e)?;
                Ok(Some(p))
            }
            _ => Ok(None),
        }
    }

    /// Every value of a linearized subscript must have a signed type:
    /// its arithmetic is then that of the integers (C leaves signed
    /// overflow undefined), so the split means what the C code computes.
    fn signed_leaves(&mut self, e: &Expr, whole: &Expr) -> R<()> {
        let unsigned = |what: String| {
            SpanError::new(
                whole.span,
                format!(
                    "linearized subscript `{}`: {what}, and polytune delinearizes signed integer arithmetic only",
                    self.text[whole.span.start..whole.span.end].trim()
                ),
            )
            .help("declare its variables `int` or `long`, or cast them, e.g. `(long)N * i + j`")
        };
        match &e.kind {
            ExprKind::Ident(name) => {
                let (_, t) = self.piecewise(e, Place::Subscript)?;
                if t.maybe_unsigned() {
                    let why = if self.types.get(name).is_some_and(|(_, sp)| sp == MACRO) {
                        format!("the macro `{name}` has a type polytune does not know")
                    } else if t == CType::Unknown {
                        format!("polytune does not see the declaration of `{name}`")
                    } else {
                        format!("`{name}` has an unsigned type")
                    };
                    return Err(unsigned(why));
                }
                Ok(())
            }
            ExprKind::Int { value, text } if literal_type(text, *value).maybe_unsigned() => {
                Err(unsigned(format!("`{text}` is unsigned")))
            }
            ExprKind::Unary { expr, .. } | ExprKind::Cast { expr, .. } => {
                self.signed_leaves(expr, whole)
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.signed_leaves(lhs, whole)?;
                self.signed_leaves(rhs, whole)
            }
            _ => Ok(()),
        }
    }
}

/// Splits every access of each array that has a linearized subscript
/// with one shape per array, and returns the shapes with the ranges the
/// inner subscripts must keep; `text` is the whole file, for messages.
pub(super) fn delinearize_arrays(
    statements: &mut [Statement],
    linear: &[LinearAccess],
    iterators: &HashSet<String>,
    text: &str,
) -> R<Vec<Delinearized>> {
    let mut names: Vec<&String> = Vec::new();
    for l in linear {
        if !names.contains(&&l.array) {
            names.push(&l.array);
        }
    }
    let mut out = Vec::new();
    for array in names {
        let first = linear
            .iter()
            .find(|l| &l.array == array)
            .expect("the name comes from the list");
        let refuse = |why: String| {
            let words: Vec<&str> = text[first.subscript.start..first.subscript.end]
                .split_whitespace()
                .collect();
            SpanError::new(
                first.access,
                format!(
                    "non-affine subscript `{}`: the accesses of `{array}` cannot be read as one multi-dimensional array: {why}",
                    words.join(" ")
                ),
            )
            .help(format!(
                "index `{array}` with the same row length everywhere (`{array}[i*n + j]`), or declare it with several dimensions"
            ))
        };
        // Every access of the array, in statement order.
        // (statement, list: reads, writes, may-writes, index)
        let mut places: Vec<(usize, usize, usize)> = Vec::new();
        let mut polys = Vec::new();
        for (si, st) in statements.iter().enumerate() {
            for (write, list) in [(0, &st.reads), (1, &st.writes), (2, &st.may_writes)] {
                for (k, a) in list.iter().enumerate().filter(|(_, a)| &a.array == array) {
                    let p = match linear
                        .iter()
                        .find(|l| &l.array == array && l.access == a.span)
                    {
                        Some(l) => l.poly.clone(),
                        None => a
                            .subscripts
                            .first()
                            .and_then(Polynomial::from_affine)
                            .ok_or_else(|| refuse("one of its subscripts divides".to_string()))?,
                    };
                    places.push((si, write, k));
                    polys.push(p);
                }
            }
        }
        let shape = delinearize::delinearize(&polys, &|v| iterators.contains(v)).map_err(refuse)?;
        let mut checks: Vec<ExtentCheck> = Vec::new();
        for ((si, write, k), subs) in places.into_iter().zip(shape.subscripts) {
            let st = &mut statements[si];
            let access = match write {
                0 => &mut st.reads[k],
                1 => &mut st.writes[k],
                _ => &mut st.may_writes[k],
            };
            access.subscripts = subs.clone();
            let span = access.span;
            // Inside a compound statement's loops, where its iterators
            // run.
            let (mut iterators, mut domain) = (st.iterators.clone(), st.domain.clone());
            if let Some(inner) = &access.inner {
                iterators.extend(inner.iterators.iter().cloned());
                domain = Formula::and(vec![domain, inner.domain.clone()]);
            }
            for (value, size) in subs[1..].iter().zip(&shape.sizes) {
                let c = ExtentCheck {
                    iterators: iterators.clone(),
                    domain: domain.clone(),
                    value: value.clone(),
                    size: size.clone(),
                    array: array.clone(),
                    span,
                };
                if !checks.iter().any(|o| {
                    (&o.iterators, &o.domain, &o.value, &o.size)
                        == (&c.iterators, &c.domain, &c.value, &c.size)
                }) {
                    checks.push(c);
                }
            }
        }
        out.push(Delinearized {
            array: array.clone(),
            sizes: shape.sizes,
            checks,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::frontend::scop::Scop;
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    fn lower(decls: &str, body: &str) -> Result<Scop, String> {
        let text =
            format!("void f({decls}) {{ int i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}\n");
        parse_source(Path::new("t.c"), text, &Options::default())
            .map(|mut s| s.scops.remove(0))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn column_major_accesses_become_two_dimensional() {
        let s = lower(
            "int n, int lda, double *a, double *x",
            "for (j = 0; j < n; j++) for (i = 0; i < n; i++) a[lda*j + i] = a[lda*j + i] + x[i] + a[i];",
        )
        .unwrap();
        assert_eq!(
            s.reads(),
            "[n, lda] -> { S0[j, i] -> a[j, i]; S0[j, i] -> x[i]; S0[j, i] -> a[0, i] }"
        );
        assert_eq!(s.writes(), "[n, lda] -> { S0[j, i] -> a[j, i] }");
        let a = s.arrays.iter().find(|a| a.name == "a").unwrap();
        assert_eq!(a.rank, 2);
        let d = s.delinearized("a").unwrap();
        assert_eq!(d.sizes, vec!["lda"]);
        // `i` in [0, lda): once (the same subscript and domain everywhere).
        assert_eq!(d.checks.len(), 1);
        assert_eq!(
            s.element_c("a", &["c0".into(), "c1".into()]),
            "a[lda * (c0) + (c1)]"
        );
        // x stays as it is.
        assert!(s.delinearized("x").is_none());
        assert_eq!(s.element_c("x", &["c0".into()]), "x[c0]");
    }

    fn lower_with(defines: &str, decls: &str, body: &str) -> Result<Scop, String> {
        let text = format!(
            "{defines}\nvoid f({decls}) {{ int i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        );
        parse_source(Path::new("t.c"), text, &Options::default())
            .map(|mut s| s.scops.remove(0))
            .map_err(|e| e.to_string())
    }

    /// An index macro is read as the preprocessor expands it; the code
    /// keeps the call.
    #[test]
    fn index_macros_are_read_as_their_expansions() {
        let defines = "#define IDX(r, c, n) ((r) * (n) + (c))\n#define AT(r, c, n) r*n+c";
        let s = lower_with(
            defines,
            "int n, double *a, double *b",
            "for (i = 1; i < n; i++) for (j = 0; j < n; j++) b[IDX(i, j, n)] = a[IDX(i - 1, j, n)] + a[AT(i, j, n)];",
        )
        .unwrap();
        assert_eq!(s.writes(), "[n] -> { S0[i, j] -> b[i, j] }");
        assert_eq!(
            s.reads(),
            "[n] -> { S0[i, j] -> a[i - 1, j]; S0[i, j] -> a[i, j] }"
        );
        assert_eq!(s.delinearized("a").unwrap().sizes, vec!["n"]);
        // The argument is pasted as it is: `AT(i + 1, j, n)` is
        // `i + 1*n+j`, which is affine (and no row of `n`).
        let s = lower_with(
            defines,
            "int n, double *a",
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) a[AT(i + 1, j, n)] = 0;",
        )
        .unwrap();
        assert_eq!(s.writes(), "[n] -> { S0[i, j] -> a[i + j + n] }");
        // Inside a larger expression an unparenthesized body would bind
        // with the operators around it: not read as one operand.
        let e = lower_with(
            defines,
            "int n, double *a",
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) a[2 * AT(i, j, n)] = 0;",
        )
        .unwrap_err();
        assert!(e.contains("call to `AT`"), "{e}");
        // Two different definitions: which holds is the preprocessor's.
        let e = lower_with(
            "#ifdef COLS\n#define IX(r, c, n) ((c) * (n) + (r))\n#else\n#define IX(r, c, n) ((r) * (n) + (c))\n#endif",
            "int n, double *a",
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) a[IX(i, j, n)] = 0;",
        )
        .unwrap_err();
        assert!(e.contains("call to `IX`"), "{e}");
        // In a bound, a parenthesized body.
        let s = lower_with(
            "#define LAST(n) ((n) - 1)",
            "int n, double *a",
            "for (i = 0; i < LAST(n); i++) a[i] = 0;",
        )
        .unwrap();
        assert_eq!(s.domains(), "[n] -> { S0[i] : i >= 0 and -i + n - 2 >= 0 }");
    }

    /// An element macro is read and written as the element it names.
    #[test]
    fn element_macros_are_the_elements_they_name() {
        let s = lower_with(
            "#define C(i, j) c[(i) + (j) * ldc]\n#define A(i, j) (a[(i) + (j) * lda])",
            "int n, int lda, int ldc, double *a, double *c",
            "for (j = 0; j < n; j++) for (k = 0; k < n; k++) for (i = 0; i < n; i++) C(i, j) += A(i, k) * 2.0;",
        )
        .unwrap();
        assert_eq!(s.writes(), "[n, ldc, lda] -> { S0[j, k, i] -> c[j, i] }");
        assert_eq!(
            s.reads(),
            "[n, ldc, lda] -> { S0[j, k, i] -> c[j, i]; S0[j, k, i] -> a[k, i] }"
        );
        // Arguments are pasted as written.
        let s = lower_with(
            "#define E(i) e[i]",
            "int n, double *e",
            "for (i = 0; i < n; i++) E(2 * i) = E(i + 1);",
        )
        .unwrap();
        assert_eq!(s.writes(), "[n] -> { S0[i] -> e[2*i] }");
        assert_eq!(s.reads(), "[n] -> { S0[i] -> e[i + 1] }");
    }

    #[test]
    fn affine_scops_are_not_delinearized() {
        let s = lower(
            "int n, double *a",
            "for (i = 0; i < n; i++) a[2*i + 100] = a[i];",
        )
        .unwrap();
        assert!(s.delinearized.is_empty());
        assert_eq!(s.reads(), "[n] -> { S0[i] -> a[i] }");
    }

    #[test]
    fn casts_and_nested_products_are_split() {
        let s = lower(
            "int n, int m, long p, double *u",
            "for (i = 0; i < p; i++) for (j = 0; j < n; j++) for (k = 0; k < m; k++) u[((long)i*n + j)*m + k] = 0;",
        )
        .unwrap();
        assert_eq!(s.writes(), "[p, n, m] -> { S0[i, j, k] -> u[i, j, k] }");
        assert_eq!(s.delinearized("u").unwrap().sizes, vec!["n", "m"]);
    }

    #[test]
    fn what_cannot_be_split_is_refused_with_the_reason() {
        let e = lower(
            "int n, int m, double *a",
            "for (i = 0; i < n; i++) for (j = 0; j < m; j++) a[i*n + j] = a[j*m + i];",
        )
        .unwrap_err();
        assert!(
            e.contains("non-affine subscript `j*m + i`")
                || e.contains("non-affine subscript `i*n + j`"),
            "{e}"
        );
        assert!(
            e.contains("cannot be read as one multi-dimensional array"),
            "{e}"
        );
        assert!(e.contains("not multiples of one another"), "{e}");
        let e = lower(
            "int n, double *a",
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) a[i * j] = 1;",
        )
        .unwrap_err();
        assert!(e.contains("non-affine subscript `i * j`"), "{e}");
        assert!(e.contains("a product of loop iterators"), "{e}");
        // A division among the accesses of a linearized array.
        let e = lower(
            "int n, double *a",
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) a[i*n + j] = a[j / 2];",
        )
        .unwrap_err();
        assert!(e.contains("one of its subscripts divides"), "{e}");
        // Unsigned arithmetic wraps: not split.
        let e = lower(
            "unsigned long n, double *a",
            "for (i = 0; i < 9; i++) for (j = 0; j < 9; j++) a[i*n + j] = 1;",
        )
        .unwrap_err();
        assert!(e.contains("`n` has an unsigned type"), "{e}");
        // A two-dimensional array is not delinearized.
        let e = lower(
            "int n, double A[9][99]",
            "for (i = 0; i < 9; i++) for (j = 0; j < 9; j++) A[i][j*n + i] = 1;",
        )
        .unwrap_err();
        assert!(e.contains("product of two non-constant expressions"), "{e}");
    }
}
