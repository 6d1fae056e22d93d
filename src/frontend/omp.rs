//! The user's own OpenMP loop directives (issue 40): what a
//! `#pragma omp parallel for`, `for` or `simd` in front of a loop of a
//! SCoP promises, read from its text.
//!
//! polytune takes such a loop nest only when the engine proves the
//! promise from its own dependence analysis (`engine/model/directive.rs`):
//! the loop the directive annotates (with `collapse(n)`, the `n` loops)
//! carries no dependence once the `private` variables have a copy per
//! iteration and the `reduction` variables are reassociated. The
//! transformed code then drops the directive and puts polytune's own
//! where the configuration asks for OpenMP, with the clauses that still
//! apply (`schedule`, `num_threads`, `proc_bind`); the original, which
//! the transformed code falls back to, keeps the user's.
//!
//! A clause whose promise polytune does not check (`aligned`, `linear`,
//! `ordered`, `lastprivate`, `copyin`, ...) makes the directive
//! unsupported, with the clause named.

use super::error::SpanError;
use super::extract::Found;
use super::scop::ast::{LocalPart, Stmt, StmtKind};
use super::scop::{Scop, UserDirective};
use serde::Serialize;

/// Which loop construct the directive is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Construct {
    /// `parallel for` (and `parallel for simd`): a team of its own.
    ParallelFor,
    /// `for` (and `for simd`): shares the loop among the team of an
    /// enclosing `parallel` region.
    For,
    /// `simd` alone.
    Simd,
}

/// The combination a reduction clause names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ReductionOp {
    /// `+` (and `-`, which OpenMP combines with `+`).
    Add,
    /// `*`.
    Mul,
}

/// One OpenMP loop directive, as the user wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Directive {
    /// On one line: `#pragma omp parallel for private(j)`.
    pub text: String,
    pub construct: Construct,
    /// `simd` in the construct (`parallel for simd`, `for simd`, `simd`).
    pub simd: bool,
    /// Variables with a copy per thread (`private`, `firstprivate`).
    pub private: Vec<String>,
    /// Of those, the ones whose copies start with the value before the
    /// loop (`firstprivate`).
    pub firstprivate: Vec<String>,
    pub reductions: Vec<(ReductionOp, String)>,
    /// How many loops the directive binds (`collapse(n)`; 1 without).
    pub collapse: usize,
    /// `nowait` (on `for` only).
    pub nowait: bool,
    /// The clauses kept on polytune's own directive, as written:
    /// `schedule(...)`, `num_threads(...)`, `proc_bind(...)`.
    pub kept: Vec<String>,
}

/// A user's `#pragma omp parallel` region around a SCoP whose loop is a
/// work-shared `#pragma omp for` (every thread of the team runs the code
/// around it, and the loop's iterations are shared among them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Team {
    /// On one line: `#pragma omp parallel private(t)`.
    pub text: String,
    /// Variables each thread has its own copy of: named in `private` or
    /// `firstprivate`, or declared inside the region before the SCoP.
    pub private: Vec<String>,
    pub reductions: Vec<(ReductionOp, String)>,
}

/// The `#pragma omp parallel` region at `words` (as for [`parse`]): `None`
/// for any other pragma (a combined `parallel for` included), an error
/// naming a clause polytune does not check.
pub fn parse_team(words: &[String]) -> Option<Result<Team, String>> {
    if words.first().map(String::as_str) != Some("omp")
        || words.get(1).map(String::as_str) != Some("parallel")
    {
        return None;
    }
    let rest = words[2..].join(" ");
    if construct(&format!("parallel {rest}")).is_some() {
        return None;
    }
    let text = format!("#pragma {}", words.join(" "));
    Some(clauses(&rest).and_then(|cl| {
        // The clauses of a team are those of a `parallel for` bar the
        // loop's own.
        let d = build(text.clone(), Construct::ParallelFor, false, cl)?;
        if d.collapse != 1 || d.kept.iter().any(|k| k.starts_with("schedule")) {
            return Err("its clauses are not those of a `parallel` region".into());
        }
        Ok(Team {
            text,
            private: d.private,
            reductions: d.reductions,
        })
    }))
}

/// What the directive at `words` (the words of a `#pragma` line after
/// `pragma`, as `lex::directive_words` gives them) is: `None` when it is
/// no OpenMP loop directive (another pragma, or an OpenMP construct that
/// is not a loop's: `parallel`, `single`, `critical`, ...), an error
/// naming what polytune does not check otherwise.
pub fn parse(words: &[String]) -> Option<Result<Directive, String>> {
    if words.first().map(String::as_str) != Some("omp") {
        return None;
    }
    let text = format!("#pragma {}", words.join(" "));
    // Tokens: words, parentheses and commas split apart.
    let joined = words[1..].join(" ");
    let (construct, simd, rest) = construct(&joined)?;
    Some(clauses(rest).and_then(|cl| build(text, construct, simd, cl)))
}

/// The construct at the start of `s` and what follows it.
fn construct(s: &str) -> Option<(Construct, bool, &str)> {
    let mut rest = s.trim_start();
    let mut word = |w: &str| -> bool {
        let t = rest.trim_start();
        match t.strip_prefix(w) {
            Some(after) if !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') => {
                rest = after;
                true
            }
            _ => false,
        }
    };
    let parallel = word("parallel");
    let construct = if word("for") {
        if parallel {
            Construct::ParallelFor
        } else {
            Construct::For
        }
    } else if !parallel && word("simd") {
        return Some((Construct::Simd, true, rest));
    } else {
        return None;
    };
    let simd = word("simd");
    Some((construct, simd, rest))
}

/// The clauses of `s`: name and the text between its parentheses.
fn clauses(s: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() || b[i] == b',' {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        if start == i {
            return Err(format!("cannot read the clauses at `{}`", &s[start..]));
        }
        let name = s[start..i].to_string();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let arg = if b.get(i) == Some(&b'(') {
            let open = i;
            let mut depth = 0;
            loop {
                match b.get(i) {
                    Some(b'(') => depth += 1,
                    Some(b')') => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Some(_) => {}
                    None => return Err(format!("unbalanced parentheses in `{name}`")),
                }
                i += 1;
            }
            i += 1;
            Some(s[open + 1..i - 1].trim().to_string())
        } else {
            None
        };
        out.push((name, arg));
    }
    Ok(out)
}

fn names(arg: &str) -> Result<Vec<String>, String> {
    arg.split(',')
        .map(|n| {
            let n = n.trim();
            if !n.is_empty()
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !n.starts_with(|c: char| c.is_ascii_digit())
            {
                Ok(n.to_string())
            } else {
                Err(format!(
                    "`{n}` in a clause is not a variable name (array sections are not supported)"
                ))
            }
        })
        .collect()
}

fn build(
    text: String,
    construct: Construct,
    simd: bool,
    clauses: Vec<(String, Option<String>)>,
) -> Result<Directive, String> {
    let mut d = Directive {
        text,
        construct,
        simd,
        private: Vec::new(),
        firstprivate: Vec::new(),
        reductions: Vec::new(),
        collapse: 1,
        nowait: false,
        kept: Vec::new(),
    };
    for (name, arg) in clauses {
        let need = |arg: &Option<String>| -> Result<String, String> {
            arg.clone()
                .filter(|a| !a.is_empty())
                .ok_or_else(|| format!("the clause `{name}` needs an argument"))
        };
        match name.as_str() {
            "private" => d.private.extend(names(&need(&arg)?)?),
            "firstprivate" => {
                let n = names(&need(&arg)?)?;
                d.private.extend(n.iter().cloned());
                d.firstprivate.extend(n);
            }
            "reduction" => {
                let a = need(&arg)?;
                let (op, list) = a
                    .split_once(':')
                    .ok_or_else(|| format!("cannot read `reduction({a})`"))?;
                let op = match op.trim() {
                    "+" | "-" => ReductionOp::Add,
                    "*" => ReductionOp::Mul,
                    other => {
                        return Err(format!(
                            "the reduction operator `{other}` is not one polytune checks (`+`, `-` and `*` are)"
                        ));
                    }
                };
                d.reductions
                    .extend(names(list)?.into_iter().map(|n| (op, n)));
            }
            "collapse" => {
                let a = need(&arg)?;
                d.collapse = a
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| (1..=8).contains(&n))
                    .ok_or_else(|| format!("`collapse({a})` is not a constant from 1 to 8"))?;
            }
            "nowait" if construct == Construct::For => d.nowait = true,
            "schedule" | "num_threads" | "proc_bind" if construct != Construct::Simd => {
                d.kept.push(format!("{name}({})", need(&arg)?));
            }
            // No effect on what the loop computes once it is proven
            // parallel (`if` picks whether a team runs it; `shared` and
            // `default` only name what is already shared; a SIMD length
            // bound is weaker than the absence of any carried dependence).
            "if" | "shared" | "default" | "safelen" | "simdlen" | "order" => {
                need(&arg)?;
            }
            other => {
                return Err(format!(
                    "its clause `{other}` makes a promise polytune does not check"
                ));
            }
        }
    }
    for v in &d.private {
        if d.reductions.iter().any(|(_, r)| r == v) {
            return Err(format!("`{v}` is both private and a reduction variable"));
        }
    }
    Ok(d)
}

/// The directives `found` inside `scop`'s region, each on the loop it
/// stands in front of; an error for one that stands in front of no loop
/// of the SCoP, or binds more loops than are nested there.
pub(crate) fn attach(
    scop: &Scop,
    found: &[Found],
    text: &str,
    team: Option<&Team>,
) -> Result<Vec<UserDirective>, SpanError> {
    let body = scop.region.body;
    let mut out = Vec::new();
    for f in found
        .iter()
        .filter(|f| body.start <= f.span.start && f.span.start < body.end)
    {
        // The loop is the first statement after the line (other directives
        // of the user in between are refused where they are read).
        let at = f.span.end + (text[f.span.end..].len() - text[f.span.end..].trim_start().len());
        let mut hit = None;
        for s in &scop.body {
            find(s, at, 0, &mut hit);
        }
        let not_a_loop = || {
            SpanError::new(
                f.span,
                format!(
                    "the user's `{}` does not stand in front of a loop of this SCoP",
                    f.directive.text
                ),
            )
            .help("put the directive right in front of the `for` loop it applies to")
        };
        let (l, depth) = hit.ok_or_else(not_a_loop)?;
        let mut iterators = vec![l.iterator.clone()];
        let mut inner = l;
        for _ in 1..f.directive.collapse {
            let next = only_loop(&inner.body).ok_or_else(|| {
                SpanError::new(
                    f.span,
                    format!(
                        "the user's `{}` binds {} loops, but the loop over `{}` is not a perfect nest of that depth",
                        f.directive.text, f.directive.collapse, l.iterator
                    ),
                )
                .help("write `collapse(n)` only over perfectly nested loops")
            })?;
            iterators.push(next.iterator.clone());
            inner = next;
        }
        let mut statements = Vec::new();
        let mut shared = Vec::new();
        walk_inside(&inner.body, &mut statements, &mut shared);
        shared.retain(|v| {
            !f.directive.private.contains(v)
                && !iterators.contains(v)
                && !team.is_some_and(|t| t.private.contains(v))
        });
        shared.sort();
        shared.dedup();
        if f.directive.construct == Construct::Simd {
            shared.clear();
        }
        out.push(UserDirective {
            directive: f.directive.clone(),
            span: f.span,
            iterators,
            depth,
            statements,
            shared_iterators: shared,
        });
    }
    Ok(out)
}

use super::scop::ast::ForLoop;

/// The loop of `s` (or inside it) that starts at byte `at`, and how many
/// loops enclose it.
fn find<'a>(s: &'a Stmt, at: usize, depth: usize, hit: &mut Option<(&'a ForLoop, usize)>) {
    match &s.kind {
        StmtKind::For(l) => {
            if s.span.start == at || l.span.start == at {
                *hit = Some((l, depth));
                return;
            }
            find(&l.body, at, depth + 1, hit);
        }
        StmtKind::If { then, other, .. } => {
            find(then, at, depth, hit);
            if let Some(o) = other {
                find(o, at, depth, hit);
            }
        }
        StmtKind::Block(v) => v.iter().for_each(|c| find(c, at, depth, hit)),
        _ => {}
    }
}

/// The single loop a loop body is (alone, or alone in a block).
fn only_loop(s: &Stmt) -> Option<&ForLoop> {
    match &s.kind {
        StmtKind::For(l) => Some(l),
        StmtKind::Block(v) if v.len() == 1 => only_loop(&v[0]),
        _ => None,
    }
}

/// The statement ids inside `s`, and the iterators of its loops that do
/// not declare them (`for (j = 0; ...)`).
fn walk_inside(s: &Stmt, ids: &mut Vec<usize>, undeclared: &mut Vec<String>) {
    match &s.kind {
        StmtKind::For(l) => {
            if l.declared_type.is_none() {
                undeclared.push(l.iterator.clone());
            }
            walk_inside(&l.body, ids, undeclared);
        }
        StmtKind::If { then, other, .. } => {
            walk_inside(then, ids, undeclared);
            if let Some(o) = other {
                walk_inside(o, ids, undeclared);
            }
        }
        StmtKind::Block(v) => v.iter().for_each(|c| walk_inside(c, ids, undeclared)),
        StmtKind::Assign { id, .. } => ids.push(*id),
        StmtKind::Local { id, parts } => {
            ids.push(*id);
            for p in parts {
                if let LocalPart::Stmt(inner) = p {
                    let mut ignored = Vec::new();
                    walk_inside(inner, &mut ignored, undeclared);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Option<Result<Directive, String>> {
        let words = crate::frontend::lex::directive_words(line).unwrap();
        parse(&words[1..])
    }

    #[test]
    fn loop_directives_and_their_clauses_are_read() {
        let d = read("#pragma omp parallel for private(j, k) reduction(+:s) schedule(static, 4)")
            .unwrap()
            .unwrap();
        assert_eq!(d.construct, Construct::ParallelFor);
        assert!(!d.simd);
        assert_eq!(d.private, ["j", "k"]);
        assert_eq!(d.reductions, [(ReductionOp::Add, "s".to_string())]);
        assert_eq!(d.kept, ["schedule(static, 4)"]);
        assert_eq!(d.collapse, 1);
        let d = read("#  pragma omp for simd collapse(2) nowait firstprivate(t)")
            .unwrap()
            .unwrap();
        assert_eq!(
            (d.construct, d.simd, d.collapse, d.nowait),
            (Construct::For, true, 2, true)
        );
        assert_eq!(
            (d.private.clone(), d.firstprivate.clone()),
            (vec!["t".into()], vec!["t".into()])
        );
        let d = read("#pragma omp simd safelen(8)").unwrap().unwrap();
        assert_eq!(d.construct, Construct::Simd);
        let d = read(
            "#pragma omp parallel for reduction(-: a, b) default(shared) shared(x) if(n > 100)",
        )
        .unwrap()
        .unwrap();
        assert_eq!(d.reductions.len(), 2);
    }

    #[test]
    fn a_team_is_read_with_its_clauses() {
        let words = |l: &str| crate::frontend::lex::directive_words(l).unwrap();
        let t = parse_team(
            &words("#pragma omp parallel private(j) reduction(+:s) num_threads(4)")[1..],
        )
        .unwrap()
        .unwrap();
        assert_eq!(t.private, ["j"]);
        assert_eq!(t.reductions, [(ReductionOp::Add, "s".to_string())]);
        assert!(parse_team(&words("#pragma omp parallel for")[1..]).is_none());
        assert!(
            parse_team(&words("#pragma omp parallel copyin(x)")[1..])
                .unwrap()
                .is_err()
        );
    }

    #[test]
    fn a_directive_is_attached_to_the_loop_after_it() {
        use crate::frontend::{Options, parse_source};
        let parse = |body: &str| {
            let text = format!(
                "double a[9][9];\nvoid f(int n) {{ int i, j;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
            );
            parse_source(std::path::Path::new("t.c"), text, &Options::default())
        };
        let src = parse("for (i = 0; i < n; i++)\n#pragma omp parallel for collapse(2)\nfor (j = 0; j < n; j++) for (int k = 0; k < n; k++) a[j][k] = i;").unwrap();
        let d = &src.scops[0].directives[0];
        assert_eq!(
            (d.depth, d.iterators.clone()),
            (1, vec!["j".to_string(), "k".to_string()])
        );
        assert_eq!(d.statements, [0]);
        assert!(d.shared_iterators.is_empty());
        let e = parse("#pragma omp parallel for collapse(2)\nfor (i = 0; i < n; i++) { a[i][0] = 0; for (j = 0; j < n; j++) a[i][j] = 1; }").unwrap_err();
        assert!(e.to_string().contains("not a perfect nest"), "{e}");
    }

    #[test]
    fn other_pragmas_and_constructs_are_none() {
        assert!(read("#pragma omp parallel").is_none());
        assert!(read("#pragma omp parallel private(i)").is_none());
        assert!(read("#pragma omp single").is_none());
        assert!(read("#pragma omp forall").is_none());
        assert!(read("#pragma GCC ivdep").is_none());
    }

    #[test]
    fn unchecked_clauses_are_refused_by_name() {
        for (line, what) in [
            ("#pragma omp parallel for lastprivate(x)", "`lastprivate`"),
            ("#pragma omp simd aligned(a:64)", "`aligned`"),
            ("#pragma omp for ordered", "`ordered`"),
            ("#pragma omp parallel for reduction(max:m)", "`max`"),
            ("#pragma omp parallel for private(a[0:4])", "array sections"),
            ("#pragma omp parallel for collapse(n)", "collapse(n)"),
            ("#pragma omp parallel for nowait", "`nowait`"),
            ("#pragma omp parallel for private(x) reduction(+:x)", "both"),
        ] {
            let e = read(line).unwrap().unwrap_err();
            assert!(e.contains(what), "{line}: {e}");
        }
    }
}
