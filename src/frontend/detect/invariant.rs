//! Invariant loads in detection: a value read from memory in a loop
//! bound, an `if` condition or a subscript (`grid_points[0]`,
//! `Mat->mrows`, `s.n`, `rowstr[j]` with `j` set outside the region) is
//! accepted when the region provably leaves that memory alone; the front
//! end then makes it a parameter of the SCoP (`lower/invariant.rs`).
//!
//! The proof: the value is an integer (not `volatile`) reached from a
//! variable by subscripts made of constants and variables, and member
//! accesses; the region writes neither that variable nor any variable of
//! the subscripts (loop iterators included); and what the region writes
//! that may overlap it is checked at run time: the value's address
//! against the range written (a written array whose rows are objects of
//! their own is a refusal). Overlap follows the module's aliasing rule,
//! with the value's own type: a written pointer that is not `restrict`
//! may point into any array, struct or scalar holding a value of a
//! compatible type, and a read through a pointer that is not `restrict`
//! may reach any written array of a compatible element type, or a
//! written scalar that is not a local whose address is never taken.
//! `--assume-no-alias` skips the overlap test and the check, not the
//! others.

use super::alias::{compatible, restrict_declaration};
use super::finder::{Finder, Why};
use super::*;

/// Whether `n` is a read of memory that may be invariant: an integer
/// value reached from a variable by member accesses and subscripts made
/// of constants and integer variables.
pub(super) fn candidate(n: &Node) -> bool {
    match n.kind {
        Kind::Subscript | Kind::Member => n.value.as_ref().is_some_and(|(_, int)| *int) && path(n),
        Kind::Other if n.children.len() == 1 => candidate(&n.children[0]),
        _ => false,
    }
}

fn path(n: &Node) -> bool {
    match n.kind {
        Kind::DeclRef => n.var.as_ref().is_some_and(|v| v.variable),
        Kind::Subscript => n.children.len() == 2 && path(&n.children[0]) && index(&n.children[1]),
        Kind::Member => n.children.len() == 1 && path(&n.children[0]),
        Kind::Other if n.children.len() == 1 => path(&n.children[0]),
        _ => false,
    }
}

fn index(n: &Node) -> bool {
    match n.kind {
        Kind::Literal => true,
        Kind::DeclRef => n.var.as_ref().is_some_and(|v| !v.variable || v.integer),
        Kind::Binary => {
            matches!(n.op.as_deref(), Some("+" | "-" | "*" | "/")) && n.children.iter().all(index)
        }
        Kind::Unary => matches!(n.op.as_deref(), Some("-" | "+")) && n.children.iter().all(index),
        Kind::Other => n.children.len() == 1 && index(&n.children[0]),
        _ => false,
    }
}

/// The variable a path starts from.
fn root(n: &Node) -> Option<&Node> {
    match n.kind {
        Kind::DeclRef => Some(n),
        _ => n.children.first().and_then(root),
    }
}

/// The variables of a path's subscripts.
fn index_variables<'n>(n: &'n Node, out: &mut Vec<&'n Node>) {
    match n.kind {
        Kind::Subscript => {
            index_variables(&n.children[0], out);
            fn refs<'n>(n: &'n Node, out: &mut Vec<&'n Node>) {
                if n.kind == Kind::DeclRef && n.var.as_ref().is_some_and(|v| v.variable) {
                    out.push(n);
                }
                n.children.iter().for_each(|c| refs(c, out));
            }
            refs(&n.children[1], out);
        }
        _ => n.children.iter().for_each(|c| index_variables(c, out)),
    }
}

/// Like `finder::any`, but not inside (nor at) a [`candidate`].
pub(super) fn any_outside(n: &Node, f: &dyn Fn(&Node) -> bool) -> Option<Node> {
    if candidate(n) {
        return None;
    }
    if f(n) {
        return Some(n.clone());
    }
    n.children.iter().find_map(|c| any_outside(c, f))
}

/// The variables whose address the function takes (`&x`, `&s.f`,
/// `&a[i]`): a pointer may reach them.
pub(super) fn addressed(n: &Node, out: &mut HashSet<String>) {
    if n.kind == Kind::Unary
        && matches!(n.op.as_deref(), None | Some("&"))
        && let Some(r) = n.children.first().and_then(root)
    {
        out.insert(r.name.clone());
    }
    n.children.iter().for_each(|c| addressed(c, out));
}

/// The candidates in the affine positions of a run, with the position.
fn reads<'n>(n: &'n Node, out: &mut Vec<(&'n Node, &'static str)>) {
    fn within<'n>(n: &'n Node, what: &'static str, out: &mut Vec<(&'n Node, &'static str)>) {
        if candidate(n) {
            out.push((n, what));
            return;
        }
        if n.kind == Kind::Subscript && n.children.len() == 2 {
            within(&n.children[0], what, out);
            within(&n.children[1], "subscript", out);
            return;
        }
        n.children.iter().for_each(|c| within(c, what, out));
    }
    match n.kind {
        Kind::For if n.children.len() == 4 => {
            n.children[..3]
                .iter()
                .for_each(|h| within(h, "loop bound", out));
            reads(&n.children[3], out);
        }
        Kind::If if !n.children.is_empty() => {
            within(&n.children[0], "`if` condition", out);
            n.children[1..].iter().for_each(|c| reads(c, out));
        }
        Kind::Subscript if n.children.len() == 2 => {
            reads(&n.children[0], out);
            within(&n.children[1], "subscript", out);
        }
        _ => n.children.iter().for_each(|c| reads(c, out)),
    }
}

/// Every variable named in a run, with its declaration's facts.
fn variables<'n>(n: &'n Node, out: &mut Vec<&'n Node>) {
    if n.kind == Kind::DeclRef
        && n.var.as_ref().is_some_and(|v| v.variable)
        && !out.iter().any(|o| o.name == n.name)
    {
        out.push(n);
    }
    n.children.iter().for_each(|c| variables(c, out));
}

/// The loop iterators of a run.
fn iterators(n: &Node, out: &mut HashSet<String>) {
    if n.kind == Kind::For
        && let Some(init) = n.children.first()
    {
        match init.children.first() {
            Some(v) if init.kind == Kind::Decl && v.kind == Kind::VarDecl => {
                out.insert(v.name.clone());
            }
            first => {
                if let Some(b) = first.and_then(super::finder::base) {
                    out.insert(b.name.clone());
                }
            }
        }
    }
    n.children.iter().for_each(|c| iterators(c, out));
}

impl Finder<'_> {
    /// The invariant loads of a run: each reads memory the run does not
    /// write and cannot reach through a pointer; `written` are the
    /// variables the run assigns or writes elements of, `accesses` its
    /// array accesses (see `alias::collect`).
    ///
    /// A written array that may overlap a value (`int *out` and the bound
    /// `count[0]`) is returned with the value's text: the value's address
    /// is checked against the array's range at run time. One whose rows
    /// are objects of their own is the rejection.
    pub(super) fn invariant_checks(
        &self,
        stmts: &[&Node],
        written: &BTreeSet<String>,
        accesses: &[(Node, bool)],
    ) -> Result<Vec<(String, String)>, Why> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        let mut found = Vec::new();
        let mut named = Vec::new();
        let mut loops = HashSet::new();
        for s in stmts {
            reads(s, &mut found);
            variables(s, &mut named);
            iterators(s, &mut loops);
        }
        for (read, what) in found {
            let text = self.snippet(read);
            let refuse = |why: String| {
                Why::at(
                    read,
                    if what == "subscript" {
                        format!("data-dependent subscript `{text}`: it reads memory {why}")
                    } else {
                        format!("data-dependent {what}: `{text}` reads memory {why}")
                    },
                )
            };
            let mut vars = Vec::new();
            index_variables(read, &mut vars);
            if let Some(v) = vars.iter().find(|v| written.contains(&v.name)) {
                return Err(refuse(if loops.contains(&v.name) {
                    format!("that changes with the loop iterator `{}`", v.name)
                } else {
                    format!(
                        "at a subscript that uses `{}`, which the nest writes",
                        v.name
                    )
                }));
            }
            let Some(b) = root(read) else { continue };
            let bv = b.var.as_ref().expect("a reference has its declaration");
            if written.contains(&b.name) {
                return Err(refuse(format!(
                    "that the nest writes (`{}` is written in it)",
                    b.name
                )));
            }
            if self.assume_no_alias {
                continue;
            }
            let ty = read.value.as_ref().map(|(t, _)| t.as_str()).unwrap_or("");
            // Written arrays and pointers.
            let mut arrays: Vec<&Node> = Vec::new();
            for (a, w) in accesses {
                if *w && !arrays.iter().any(|x| x.name == a.name) {
                    arrays.push(a);
                }
            }
            for w in arrays {
                let wv = w.var.as_ref().expect("a reference has its declaration");
                if w.name == b.name
                    || !compatible(ty, &wv.element)
                    || wv.restrict
                    || (bv.pointer && bv.restrict)
                    || (!bv.pointer && !wv.pointer)
                    || (bv.pointer
                        && wv.automatic
                        && (!self.escaping.contains(&w.name)
                            || (bv.parameter && !self.reassigned.contains(&b.name))))
                    || (!bv.pointer
                        && bv.automatic
                        && (!self.escaping.contains(&b.name)
                            || (wv.parameter && !self.reassigned.contains(&w.name))))
                {
                    continue;
                }
                if wv.contiguous && bv.contiguous {
                    let raw = self.text.get(read.start..read.end).unwrap_or("");
                    pairs.push((w.name.clone(), raw.to_string()));
                    continue;
                }
                return Err(refuse(self.overlap(w, b, ty)).unless(Vouch::NoAlias));
            }
            // Written scalars, through a pointer.
            if bv.pointer && !bv.restrict {
                for w in &named {
                    let wv = w.var.as_ref().expect("a reference has its declaration");
                    if !written.contains(&w.name)
                        || wv.array
                        || wv.pointer
                        || !compatible(ty, &wv.element)
                        || (wv.local && !self.addressed.contains(&w.name))
                    {
                        continue;
                    }
                    if bv.contiguous {
                        let raw = self.text.get(read.start..read.end).unwrap_or("");
                        pairs.push((w.name.clone(), raw.to_string()));
                        continue;
                    }
                    return Err(refuse(self.overlap(w, b, ty)).unless(Vouch::NoAlias));
                }
            }
        }
        Ok(pairs)
    }

    /// Why the written `w` may overlap a value of type `ty` read from
    /// `b`, with the `restrict` declaration that rules it out.
    fn overlap(&self, w: &Node, b: &Node, ty: &str) -> String {
        let wv = w.var.as_ref().expect("a reference has its declaration");
        let bv = b.var.as_ref().expect("a reference has its declaration");
        let (what, fix) = if wv.pointer {
            let kind = if wv.parameter {
                "a pointer parameter"
            } else {
                "a pointer"
            };
            (
                format!(
                    "`{}` is {kind} that is not `restrict` and the nest writes through it",
                    w.name
                ),
                restrict_declaration(&wv.declaration, &w.name),
            )
        } else if wv.array {
            (
                format!(
                    "`{}` is not `restrict` and may point into `{}`, which the nest writes",
                    b.name, w.name
                ),
                restrict_declaration(&bv.declaration, &b.name),
            )
        } else {
            (
                format!(
                    "`{}` is not `restrict` and may point to `{}` ({}), which the nest assigns",
                    b.name, w.name, wv.element
                ),
                restrict_declaration(&bv.declaration, &b.name),
            )
        };
        let who = if wv.pointer { &w.name } else { &b.name };
        let fix = match fix {
            Some(d) => format!("declare it `{d}`"),
            None => format!("declare `{who}` `restrict`-qualified"),
        };
        format!(
            "that `{}` may overlap (both hold `{ty}`): {what} (if they never overlap, {fix}, or vouch that no arrays alias)",
            w.name
        )
    }
}
