//! Invariant loads: a value read from memory in a loop bound, a condition
//! or a subscript (`grid_points[0]`, `Mat->mrows`, `s.n`, `rowstr[j]`
//! with `j` not an iterator of the SCoP) becomes a parameter of the SCoP
//! when the SCoP provably leaves that memory alone: the array (or the
//! variable the path starts from) is never written in the SCoP, nor
//! assigned, and every subscript on the way is made of constants and
//! parameters. The engine loads each such value once, before the
//! transformed code (`const int __pt_p0 = grid_points[0];`); the
//! original, the run-time fallback, keeps the user's spelling.
//!
//! Aliasing: as everywhere in a `#pragma scop` region, distinct names are
//! distinct memory (the user's mark vouches for it); detection proves it
//! before it marks a region (`detect/invariant.rs`).
//!
//! Types: the declared type of an array of integers read by name (`int
//! grid_points[3]`) is the parameter's; otherwise (a struct field, a
//! declaration polytune does not see) it is `__typeof__(expr)`, not known
//! to be signed, and goes through the unsigned-range checks like any
//! parameter of unknown type.

use super::types::MACRO;
use super::*;
use crate::frontend::lex::{self, Tok};
use crate::frontend::scop::InvariantLoad;
use expr::Piecewise;

/// The arrays the SCoP writes, with the first write.
pub(super) fn written_arrays(body: &[Stmt]) -> HashMap<String, Span> {
    fn lhs(e: &Expr, out: &mut HashMap<String, Span>) {
        if let ExprKind::Access { name, .. } = &e.kind {
            out.entry(name.clone()).or_insert(e.span);
        }
    }
    fn walk(s: &Stmt, out: &mut HashMap<String, Span>) {
        match &s.kind {
            StmtKind::For(l) => walk(&l.body, out),
            StmtKind::If { then, other, .. } => {
                walk(then, out);
                if let Some(o) = other {
                    walk(o, out);
                }
            }
            StmtKind::Block(v) => v.iter().for_each(|x| walk(x, out)),
            StmtKind::Assign { lhs: l, .. } => lhs(l, out),
            StmtKind::Local { parts, .. } => {
                for p in parts {
                    match p {
                        LocalPart::Assign { lhs: l, .. } => lhs(l, out),
                        LocalPart::Stmt(s) => walk(s, out),
                        LocalPart::Decl { .. } => {}
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = HashMap::new();
    body.iter().for_each(|s| walk(s, &mut out));
    out
}

/// A read of memory by a path from a named variable.
struct Path {
    base: String,
    /// The names used in its subscripts.
    names: Vec<String>,
    /// Whether it goes through a struct member.
    member: bool,
}

impl Lowerer<'_> {
    /// `e`, a read of memory in an affine position, as a parameter; the
    /// error says why it is not invariant. `Ok(None)` when `e` is not a
    /// path polytune reads (the caller reports it).
    pub(super) fn invariant_load(
        &mut self,
        e: &Expr,
        place: Place,
    ) -> R<Option<(Piecewise, CType)>> {
        let text = self.text[e.span.start..e.span.end].to_string();
        let tokens = lex::tokens(&text);
        let spelled = spelling(&text, &tokens);
        let reads = match &e.kind {
            ExprKind::Access { name, .. } => format!("it reads array `{name}` (`{spelled}`)"),
            _ => format!("`{spelled}` reads memory"),
        };
        let path = match &e.kind {
            ExprKind::Access { name, subscripts } => {
                let mut names = Vec::new();
                for s in subscripts {
                    self.index_names(s, &reads, place, &mut names)?;
                }
                Path {
                    base: name.clone(),
                    names,
                    member: false,
                }
            }
            ExprKind::Unsupported(_) => match path_of(&text, &tokens) {
                Some(p) if p.member => p,
                _ => return Ok(None),
            },
            _ => return Ok(None),
        };
        let refuse = |why: String| {
            SpanError::new(
                e.span,
                format!("non-affine {}: {reads} {why}", place.name()),
            )
        };
        for n in &path.names {
            self.invariant_name(n, e.span, &reads, place)?;
        }
        let base = path.base.as_str();
        if self.all_iterators.contains(base) || self.local_names.contains(base) {
            return Err(refuse(format!("through `{base}`, which the SCoP sets")));
        }
        if let Some(span) = self
            .written_arrays
            .get(base)
            .or_else(|| self.written_scalars.get(base))
        {
            let (line, _) = LineIndex::new(self.text).line_col(span.start);
            return Err(refuse(format!(
                "that the SCoP writes (`{base}` is written at line {line}), so its value is not static"
            ))
            .help("read it into a variable before the SCoP, or keep the SCoP from writing it"));
        }
        let (ty, spelling) = match self.types.get(base) {
            Some((CType::NotInteger, sp)) if !path.member && sp != MACRO => {
                let words: Vec<&str> = sp
                    .split_whitespace()
                    .filter(|w| !matches!(*w, "static" | "extern" | "const" | "register"))
                    .collect();
                if words.contains(&"volatile") {
                    return Err(refuse(
                        "declared `volatile`: it may change at any time".into(),
                    ));
                }
                let clean = words.join(" ");
                match type_of_spelling(&clean) {
                    t @ (CType::Int
                    | CType::UInt
                    | CType::Long
                    | CType::ULong
                    | CType::LLong
                    | CType::ULLong) => (t, Some(clean)),
                    _ => (CType::Unknown, None),
                }
            }
            _ => (CType::Unknown, None),
        };
        let name = match self.invariants.iter().find(|l| l.expr == spelled) {
            Some(l) => l.name.clone(),
            None => {
                let name = self.fresh_name();
                self.invariants.push(InvariantLoad {
                    name: name.clone(),
                    expr: spelled.clone(),
                    ty: spelling
                        .clone()
                        .unwrap_or_else(|| format!("__typeof__({spelled})")),
                });
                if let Some(sp) = spelling {
                    self.types.insert(name.clone(), (ty, sp));
                }
                self.parameters.push(name.clone());
                name
            }
        };
        Ok(Some((Piecewise::Aff(Affine::var(&name)), ty)))
    }

    /// A name no one uses: not in the file, not another load's.
    fn fresh_name(&self) -> String {
        (0..)
            .map(|k| format!("__pt_p{}", self.invariants.len() + k))
            .find(|n| !self.text.contains(n.as_str()))
            .expect("a free name")
    }

    /// The names of a subscript of an invariant load: constants and
    /// parameters only.
    fn index_names(&self, e: &Expr, whole: &str, place: Place, out: &mut Vec<String>) -> R<()> {
        match &e.kind {
            ExprKind::Int { .. } => Ok(()),
            ExprKind::Ident(n) => {
                out.push(n.clone());
                Ok(())
            }
            ExprKind::Unary {
                op: UnOp::Neg | UnOp::Plus,
                expr,
            } => self.index_names(expr, whole, place, out),
            ExprKind::Cast { ty, expr } if types::is_integer_type(ty) => {
                self.index_names(expr, whole, place, out)
            }
            ExprKind::Binary {
                op: BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div,
                lhs,
                rhs,
            } => {
                self.index_names(lhs, whole, place, out)?;
                self.index_names(rhs, whole, place, out)
            }
            _ => Err(SpanError::new(
                e.span,
                format!(
                    "non-affine {}: {whole} at a subscript that is not made of constants and parameters",
                    place.name()
                ),
            )),
        }
    }

    /// A name in a subscript of an invariant load must keep its value in
    /// the whole SCoP.
    fn invariant_name(&self, n: &str, span: Span, whole: &str, place: Place) -> R<()> {
        let why = if self.all_iterators.contains(n) {
            format!("at a subscript that changes with the loop iterator `{n}`")
        } else if self.local_names.contains(n) {
            format!("at a subscript that uses `{n}`, declared in a block inside the SCoP")
        } else if self.written_scalars.contains_key(n) {
            format!("at a subscript that uses `{n}`, which the SCoP assigns")
        } else if self.var_type(n) == CType::NotInteger {
            format!("at a subscript that uses `{n}`, which is not an integer variable")
        } else {
            return Ok(());
        };
        Err(SpanError::new(
            span,
            format!("non-affine {}: {whole} {why}", place.name()),
        ))
    }
}

/// The expression as written, comments and line breaks dropped: a space
/// only between two words.
fn spelling(text: &str, tokens: &[lex::Token]) -> String {
    let mut out = String::new();
    let mut prev_word = false;
    for t in tokens {
        let word = matches!(t.kind, Tok::Ident | Tok::Number);
        if word && prev_word {
            out.push(' ');
        }
        out.push_str(&text[t.start..t.end]);
        prev_word = word;
    }
    out
}

/// A path `base (.f | ->f | [i])*` read from the text of an expression
/// the parser keeps whole (member accesses); subscripts are single
/// constants or names.
fn path_of(text: &str, tokens: &[lex::Token]) -> Option<Path> {
    let word = |t: &lex::Token| &text[t.start..t.end];
    let first = tokens.first().filter(|t| t.kind == Tok::Ident)?;
    let mut path = Path {
        base: word(first).to_string(),
        names: Vec::new(),
        member: false,
    };
    let mut k = 1;
    while k < tokens.len() {
        let t = &tokens[k];
        match t.kind {
            Tok::Punct(b'.') => {
                tokens.get(k + 1).filter(|n| n.kind == Tok::Ident)?;
                path.member = true;
                k += 2;
            }
            Tok::Punct(b'-')
                if tokens
                    .get(k + 1)
                    .is_some_and(|n| n.kind == Tok::Punct(b'>') && n.start == t.end) =>
            {
                tokens.get(k + 2).filter(|n| n.kind == Tok::Ident)?;
                path.member = true;
                k += 3;
            }
            Tok::Punct(b'[') => {
                let i = tokens.get(k + 1)?;
                tokens.get(k + 2).filter(|c| c.kind == Tok::Punct(b']'))?;
                match i.kind {
                    Tok::Number => {}
                    Tok::Ident => path.names.push(word(i).to_string()),
                    _ => return None,
                }
                k += 3;
            }
            _ => return None,
        }
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    fn scop(text: &str) -> Result<crate::frontend::scop::Scop, String> {
        parse_source(Path::new("t.c"), text.to_string(), &Options::default())
            .map(|mut s| s.scops.remove(0))
            .map_err(|e| e.to_string())
    }

    fn wrap(decls: &str, body: &str) -> String {
        format!(
            "{decls}\nvoid f(void) {{\n  int i, j;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        )
    }

    #[test]
    fn reads_of_unwritten_memory_are_parameters() {
        let s = scop(&wrap(
            "#include <stdio.h>\nint gp[3];\ndouble A[9][9];",
            "  for (i = 0; i < gp[0]; i++)\n    for (j = gp[ 1 ]; j < gp /* x */ [0] + 1; j++)\n      A[i][j] = A[i][gp[2]];",
        ))
        .unwrap();
        assert_eq!(s.parameters, ["__pt_p0", "__pt_p1", "__pt_p2"]);
        let loads: Vec<(&str, &str, &str)> = s
            .invariant_loads
            .iter()
            .map(|l| (l.name.as_str(), l.expr.as_str(), l.ty.as_str()))
            .collect();
        assert_eq!(
            loads,
            [
                ("__pt_p0", "gp[0]", "int"),
                ("__pt_p1", "gp[1]", "int"),
                ("__pt_p2", "gp[2]", "int")
            ]
        );
        assert!(s.unsigned_parameters.is_empty());
        assert_eq!(
            s.invariant_declarations("  "),
            "  const int __pt_p0 = gp[0];\n  const int __pt_p1 = gp[1];\n  const int __pt_p2 = gp[2];\n"
        );
        // The fallback keeps the user's spelling.
        assert!(s.original.contains("j < gp /* x */ [0] + 1"));
    }

    #[test]
    fn struct_fields_and_unsigned_elements_are_not_known_signed() {
        let s = scop(&wrap(
            "struct m { int r; };\nunsigned ug[2];\nextern struct m *M;\ndouble A[9];",
            "  for (i = 0; i < M->r; i++)\n    for (j = 0; j < ug[1]; j++)\n      A[i] = A[j];",
        ))
        .unwrap();
        let loads: Vec<(&str, &str)> = s
            .invariant_loads
            .iter()
            .map(|l| (l.expr.as_str(), l.ty.as_str()))
            .collect();
        assert_eq!(loads, [("M->r", "__typeof__(M->r)"), ("ug[1]", "unsigned")]);
        assert_eq!(s.unsigned_parameters, ["__pt_p0", "__pt_p1"]);
    }

    #[test]
    fn names_do_not_clash_with_the_file() {
        let s = scop(&wrap(
            "int gp[3], __pt_p0;\ndouble A[9];",
            "  for (i = 0; i < gp[0]; i++)\n    A[i] = 0.0;",
        ))
        .unwrap();
        assert_eq!(s.parameters, ["__pt_p1"]);
    }

    #[test]
    fn memory_the_scop_changes_is_refused() {
        for (decls, body, why) in [
            (
                "int gp[3];\ndouble A[9];",
                "  for (i = 0; i < gp[0]; i++)\n    gp[1] = i;",
                "it reads array `gp` (`gp[0]`) that the SCoP writes (`gp` is written at line 7)",
            ),
            (
                "int len[9];\ndouble A[9][9];",
                "  for (i = 0; i < 9; i++)\n    for (j = 0; j < len[i]; j++)\n      A[i][j] = 0.0;",
                "it reads array `len` (`len[i]`) at a subscript that changes with the loop iterator `i`",
            ),
            (
                "struct m { int r; };\nstruct m *M;\ndouble A[9];",
                "  for (i = 0; i < M->r; i++)\n    M = 0;",
                "`M->r` reads memory that the SCoP writes (`M` is written at line 8)",
            ),
            (
                "int gp[3];\nint k;\ndouble A[9];",
                "  for (i = 0; i < gp[k]; i++)\n    k = i;",
                "it reads array `gp` (`gp[k]`) at a subscript that uses `k`, which the SCoP assigns",
            ),
        ] {
            let e = scop(&wrap(decls, body)).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }
}
