//! Checks over a whole candidate run: the variables of loop bounds are not
//! written in it, and which of its arrays may alias (the rule of the
//! module's documentation): a pair whose elements each lie in one block
//! of memory is checked at run time, any other is a rejection, with the
//! `restrict` declaration that fixes it.

use super::finder::{Finder, Why, base};
use super::*;

/// What a run's code must check at run time: the pairs of arrays (and
/// scalars) that may overlap, one of them written; and the written arrays
/// that may overlap a value read once before the run (an invariant load),
/// with the value's text as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Checked {
    pub(super) arrays: Vec<(String, String)>,
    pub(super) loads: Vec<(String, String)>,
}

impl Finder<'_> {
    /// Checks over a whole run: loop bounds not written, and the pairs of
    /// arrays that may alias, to be checked at run time (a pair that
    /// cannot be, because an array's rows are objects of their own, is
    /// the rejection).
    pub(super) fn region_checks(&self, stmts: &[&Node]) -> Result<Checked, Why> {
        let mut written: BTreeSet<String> = BTreeSet::new();
        let mut accesses: Vec<(Node, bool)> = Vec::new();
        let mut bounds: Vec<(Node, HashSet<String>)> = Vec::new();
        for s in stmts {
            collect(s, &mut written, &mut accesses, &mut bounds, &mut Vec::new());
        }
        // A macro that names a variable is a loop-invariant parameter to
        // the front end: right only if the nest never writes it (macros
        // of constants and of read-only variables, on either side of an
        // operator, are fine).
        for s in stmts {
            if let Some(v) = self
                .hidden_variables(s)
                .into_iter()
                .find(|v| written.contains(&v.name))
            {
                let what = match self.identifier_at(v.start) {
                    Some(m) if m != v.name => format!("`{m}` is a macro that names"),
                    _ => "a macro used here names".to_string(),
                };
                return Err(Why::at(
                    &v,
                    format!(
                        "{what} the variable `{}`, which the nest writes: polytune cannot see that use in the text (write the expression out)",
                        v.name
                    ),
                ));
            }
        }
        let loads = self.invariant_checks(stmts, &written, &accesses)?;
        for (var, iterators) in &bounds {
            if !iterators.contains(&var.name) && written.contains(&var.name) {
                return Err(Why::at(
                    var,
                    format!("loop bound `{}` is written inside the nest", var.name),
                ));
            }
        }
        let arrays = self.may_alias(stmts, accesses, &written)?;
        Ok(Checked { arrays, loads })
    }

    /// The pairs of a run's arrays (and of the scalars a pointer can
    /// reach) that may alias, one of them written: checked at run time,
    /// or the rejection when an array's rows are objects of their own.
    fn may_alias(
        &self,
        stmts: &[&Node],
        accesses: Vec<(Node, bool)>,
        written: &BTreeSet<String>,
    ) -> Result<Vec<(String, String)>, Why> {
        // One entry per array variable, written or not.
        let mut arrays: Vec<(Node, bool)> = Vec::new();
        for (b, w) in accesses {
            match arrays.iter_mut().find(|(x, _)| x.name == b.name) {
                Some(x) => x.1 |= w,
                None => arrays.push((b, w)),
            }
        }
        if self.assume_no_alias {
            return Ok(Vec::new());
        }
        // Scalars a pointer can reach: globals, statics, locals whose
        // address is taken (a write through `int *p` may change the
        // global bound `n`, or the accumulator `total`).
        let mut refs = Vec::new();
        for s in stmts {
            refs_of(s, &mut refs);
        }
        for r in refs {
            let v = r.var.as_ref().expect("a reference has its declaration");
            if v.array || v.pointer || (v.local && !self.addressed.contains(&r.name)) {
                continue;
            }
            if !arrays.iter().any(|(x, _)| x.name == r.name) {
                let w = written.contains(&r.name);
                arrays.push((r, w));
            }
        }
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (p, pw) in &arrays {
            let pv = p.var.as_ref().expect("a reference has its declaration");
            if !pv.pointer || pv.restrict {
                continue;
            }
            for (q, qw) in &arrays {
                let qv = q.var.as_ref().expect("a reference has its declaration");
                if q.name == p.name
                    || qv.restrict
                    || !(pw | qw)
                    || !compatible(&pv.element, &qv.element)
                    || (qv.automatic
                        && (!self.escaping.contains(&q.name)
                            || (pv.parameter && !self.reassigned.contains(&p.name))))
                    || (qv.local
                        && !qv.array
                        && !qv.pointer
                        && pv.parameter
                        && !self.reassigned.contains(&p.name))
                {
                    continue;
                }
                if pv.contiguous && qv.contiguous {
                    // Checked at run time: the original runs where the
                    // ranges the region reaches in them overlap.
                    let pair = if p.name < q.name {
                        (p.name.clone(), q.name.clone())
                    } else {
                        (q.name.clone(), p.name.clone())
                    };
                    if !pairs.contains(&pair) {
                        pairs.push(pair);
                    }
                    continue;
                }
                let what = if pv.parameter {
                    "a pointer parameter"
                } else {
                    "a pointer"
                };
                let fix = match restrict_declaration(&pv.declaration, &p.name) {
                    Some(d) => format!("declare it `{d}`"),
                    None => format!("declare `{}` `restrict`-qualified", p.name),
                };
                return Err(Why::at(
                    p,
                    format!(
                        "`{}` and `{}` may alias: `{}` is {what} that is not `restrict` and one of them is written, and {} rows that are objects of their own, which no run-time check of an address range covers (if they never overlap, {fix}, or vouch that no arrays alias)",
                        p.name,
                        q.name,
                        p.name,
                        if pv.contiguous {
                            format!("`{}` has", q.name)
                        } else {
                            format!("`{}` has", p.name)
                        }
                    ),
                )
                .unless(Vouch::NoAlias));
            }
        }
        Ok(pairs)
    }
}

/// The declaration of `name` with its pointer `restrict`-qualified, as
/// the user would write it: `int **restrict m1`, `double x[restrict]`,
/// `double A[restrict N][M]`, `double (*restrict p)[M]`. `tokens` are
/// the declaration's tokens as written (an initializer is dropped);
/// `None` when `name` is not declared as a pointer there (a macro hides
/// the declarator).
pub(super) fn restrict_declaration(tokens: &[String], name: &str) -> Option<String> {
    // Drop an initializer, then split the declarators at commas.
    let mut depth = 0i32;
    let mut segments: Vec<Vec<&str>> = vec![Vec::new()];
    for t in tokens {
        match t.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            "=" | ";" if depth == 0 => break,
            "," if depth == 0 => {
                segments.push(Vec::new());
                continue;
            }
            _ => {}
        }
        segments.last_mut().expect("one segment").push(t);
    }
    let in_brackets = |seg: &[&str], k: usize| {
        seg[..k].iter().filter(|t| **t == "[").count()
            > seg[..k].iter().filter(|t| **t == "]").count()
    };
    let (which, k) = segments.iter().enumerate().find_map(|(i, seg)| {
        (0..seg.len())
            .find(|&k| seg[k] == name && !in_brackets(seg, k))
            .map(|k| (i, k))
    })?;
    let mut decl: Vec<&str> = segments[which].clone();
    let mut k = k;
    if which > 0 {
        // `double *a, *b`: the specifiers come from the first declarator.
        let first = &segments[0];
        let cut = first
            .iter()
            .position(|t| *t == "*" || *t == "(" || *t == "[")
            .unwrap_or(first.len().saturating_sub(1));
        let prefix: Vec<&str> = first[..cut].to_vec();
        k += prefix.len();
        decl = prefix.into_iter().chain(decl).collect();
    }
    if decl.get(k + 1) == Some(&"[") {
        decl.insert(k + 2, "restrict");
    } else {
        let qualifiers = ["const", "volatile", "restrict", "_Atomic"];
        let mut j = k;
        while j > 0 && qualifiers.contains(&decl[j - 1]) {
            j -= 1;
        }
        if j == 0 || decl[j - 1] != "*" {
            return None;
        }
        decl.insert(k, "restrict");
    }
    Some(render(&decl))
}

/// Tokens joined as C is usually written: `double (*restrict p)[M]`.
fn render(tokens: &[&str]) -> String {
    let mut out = String::new();
    let mut brackets = 0;
    let mut prev = "";
    for &t in tokens {
        let tight_after = matches!(prev, "(" | "[") || (prev == "*" && brackets == 0);
        let tight_before = matches!(t, ")" | "[" | "]" | ",");
        if !out.is_empty() && !tight_after && !tight_before {
            out.push(' ');
        }
        out.push_str(t);
        match t {
            "[" => brackets += 1,
            "]" => brackets -= 1,
            _ => {}
        }
        prev = t;
    }
    out
}

/// Collects the local (automatic) arrays of a function body that are
/// used other than to access one of their elements (`r1[i]`, `r1[i][j]`
/// with all dimensions): decayed to a pointer (`q = r1`, `f(r1)`, `r1 +
/// 1`, `r1[i]` of a 2-D array), or with an element's address taken
/// (`&r1[i]`). A pointer can point into such an array and no other.
pub(super) fn escapes(n: &Node, out: &mut HashSet<String>) {
    // The array at the bottom of a chain of subscripts, and how many.
    fn chain(n: &Node) -> (usize, &Node) {
        match n.kind {
            Kind::Subscript if !n.children.is_empty() => {
                let (k, b) = chain(&n.children[0]);
                (k + 1, b)
            }
            _ => (0, n),
        }
    }
    pub(super) fn automatic(n: &Node) -> Option<&clang::VarInfo> {
        (n.kind == Kind::DeclRef)
            .then_some(n.var.as_ref())
            .flatten()
            .filter(|v| v.automatic)
    }
    fn indices(n: &Node, out: &mut HashSet<String>) {
        if n.kind == Kind::Subscript
            && let Some((base, rest)) = n.children.split_first()
        {
            indices(base, out);
            rest.iter().for_each(|c| escapes(c, out));
        }
    }
    match n.kind {
        Kind::Subscript => {
            let (depth, base) = chain(n);
            match automatic(base) {
                Some(v) if depth >= v.rank => {
                    // An element: its indices may still use arrays.
                    indices(n, out);
                    return;
                }
                Some(_) => {
                    out.insert(base.name.clone());
                    indices(n, out);
                    return;
                }
                None => {}
            }
        }
        // `&r1[i]`: the element's address (an operator from a macro may
        // be `&` too).
        Kind::Unary if matches!(n.op.as_deref(), None | Some("&")) => {
            if let Some(c) = n.children.first() {
                let (depth, base) = chain(c);
                if let Some(v) = automatic(base)
                    && depth <= v.rank
                {
                    out.insert(base.name.clone());
                }
            }
        }
        Kind::DeclRef => {
            if automatic(n).is_some() {
                out.insert(n.name.clone());
            }
            return;
        }
        _ => {}
    }
    n.children.iter().for_each(|c| escapes(c, out));
}

/// Collects the variables of a function body that are assigned as a
/// whole (`p = q`, `p++`, `p += 2`) or whose address is taken (`&p`): a
/// parameter not among them still holds the value it was called with.
pub(super) fn reassigned(n: &Node, out: &mut HashSet<String>) {
    let target = match n.kind {
        Kind::Binary if matches!(n.op.as_deref(), None | Some("=")) => n.children.first(),
        Kind::CompoundAssign => n.children.first(),
        Kind::Unary
            if matches!(
                n.op.as_deref(),
                None | Some("&" | "++" | "--" | "post++" | "post--")
            ) =>
        {
            n.children.first()
        }
        _ => None,
    };
    let mut t = target;
    while let Some(x) = t {
        match x.kind {
            Kind::DeclRef => {
                out.insert(x.name.clone());
                break;
            }
            Kind::Other if x.children.len() == 1 => t = x.children.first(),
            _ => break,
        }
    }
    n.children.iter().for_each(|c| reassigned(c, out));
}

pub(super) fn compatible(a: &str, b: &str) -> bool {
    let chars = ["char", "signed char", "unsigned char", "void"];
    a == b || chars.contains(&a) || chars.contains(&b)
}

/// Written scalars and arrays, array accesses (base, written) and the
/// variables of loop bounds with the iterators in scope.
pub(super) fn collect(
    n: &Node,
    written: &mut BTreeSet<String>,
    accesses: &mut Vec<(Node, bool)>,
    bounds: &mut Vec<(Node, HashSet<String>)>,
    iterators: &mut Vec<String>,
) {
    let target = match n.kind {
        Kind::Binary if n.op.as_deref() == Some("=") => n.children.first(),
        Kind::CompoundAssign => n.children.first(),
        Kind::Unary if matches!(n.op.as_deref(), Some("++" | "--" | "post++" | "post--")) => {
            n.children.first()
        }
        _ => None,
    };
    if let Some(t) = target.and_then(base) {
        written.insert(t.name.clone());
        if t.var.as_ref().is_some_and(|v| v.array || v.pointer) {
            accesses.push((t.clone(), true));
        }
    }
    if n.kind == Kind::Subscript
        && let Some(b) = base(n)
        && b.var.as_ref().is_some_and(|v| v.array || v.pointer)
    {
        accesses.push((b.clone(), false));
    }
    if n.kind == Kind::For && n.children.len() == 4 {
        // The iterator: `i` of `i = 0`, or of `int i = 0` (a declaration
        // whose variable is the loop's own).
        let init = &n.children[0];
        let it = match init.children.first() {
            Some(v) if init.kind == Kind::Decl && v.kind == Kind::VarDecl => Some(v.name.clone()),
            first => first.and_then(base).map(|b| b.name.clone()),
        };
        iterators.extend(it.clone());
        let scope: HashSet<String> = iterators.iter().cloned().collect();
        for h in &n.children[..3] {
            let mut refs = Vec::new();
            refs_of(h, &mut refs);
            bounds.extend(refs.into_iter().map(|r| (r, scope.clone())));
        }
        collect(&n.children[3], written, accesses, bounds, iterators);
        for h in &n.children[..3] {
            collect(h, written, accesses, bounds, iterators);
        }
        if it.is_some() {
            iterators.pop();
        }
        return;
    }
    for c in &n.children {
        collect(c, written, accesses, bounds, iterators);
    }
}

fn refs_of(n: &Node, out: &mut Vec<Node>) {
    if n.kind == Kind::DeclRef && n.var.as_ref().is_some_and(|v| v.variable) {
        out.push(n.clone());
    }
    n.children.iter().for_each(|c| refs_of(c, out));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        // Identifiers and numbers, and one token per other character.
        let mut out: Vec<String> = Vec::new();
        let mut word = false;
        for c in s.chars() {
            if c.is_whitespace() {
                word = false;
                continue;
            }
            let w = c.is_ascii_alphanumeric() || c == '_';
            match out.last_mut() {
                Some(last) if w && word => last.push(c),
                _ => out.push(c.to_string()),
            }
            word = w;
        }
        out
    }

    #[test]
    fn the_suggested_fix_names_the_declared_type() {
        let fix = |d: &str, n: &str| restrict_declaration(&toks(d), n);
        for (declaration, name, fixed) in [
            ("int **m1", "m1", "int **restrict m1"),
            ("double x[]", "x", "double x[restrict]"),
            ("double x[100]", "x", "double x[restrict 100]"),
            ("double A[N][M]", "A", "double A[restrict N][M]"),
            ("double A[2*N][M+1]", "A", "double A[restrict 2 * N][M + 1]"),
            ("double (*p)[M]", "p", "double (*restrict p)[M]"),
            ("const double *p", "p", "const double *restrict p"),
            ("double *const p", "p", "double *const restrict p"),
            ("double *q = r1", "q", "double *restrict q"),
            ("double *a, *b", "b", "double *restrict b"),
        ] {
            assert_eq!(fix(declaration, name).as_deref(), Some(fixed));
        }
        // A declarator hidden by a macro, or not a pointer: no suggestion.
        assert_eq!(fix("double POLYBENCH_2D(C, NI, NJ, ni, nj)", "C"), None);
        assert_eq!(fix("double s", "s"), None);
    }
}
