//! Register blocking of contractions (beyond the paper's space: `rb=MRxNR`).
//!
//! A nest of three perfectly nested innermost loops whose statements
//! accumulate into one element per iteration, the same element all along
//! one of the loops (the reduction loop `r`: `C[i][j] += A[i][k] *
//! B[k][j]` along `k`), becomes a micro-kernel: the two other loops `p`
//! (outer) and `q` (inner) are tiled by `mr` and `nr`, the reduction loop
//! runs inside the tile loops, the `mr` × `nr` statement instances of one
//! tile are unrolled and jammed into its body, and the elements they
//! accumulate into, invariant along `r`, live in local scalars: loaded
//! before the reduction loop and stored after it (scalar replacement).
//! What is left over at the edges (rows or columns that do not fill a
//! tile) runs in the original loop order.
//!
//! Legal when (checked here, on the generated loops like the other
//! post-passes):
//! - the three loops are fully permutable given the loops around them
//!   (every dependence they carry has non-negative distances along all
//!   three), so that tiling them and moving `r` inside is a legal
//!   reordering, and the leftover parts may run in the original order;
//! - no bound depends on another of the three loops, except the bounds of
//!   `q` on `p` (triangular nests: a block of rows then blocks the columns
//!   all its rows share, computed at run time, and runs the columns before
//!   and after them in the original order), and the innermost body is only
//!   statements (no condition), so every point of a tile is an instance
//!   and the scalars load only elements the original touches;
//! - every statement writes the same one element, every other reference
//!   to its array in the body is that same element (so no other reference
//!   in the reduction loop touches the scalars' elements; distinct arrays
//!   are distinct memory, as everywhere in the model), and the `mr` × `nr`
//!   instances of a tile write distinct elements.
//!
//! A nest that fails one of these keeps the code the other passes give it,
//! and the reason is returned as a note. `mod.rs` decides (the plan of a
//! nest, or why not); `emit.rs` prints the micro-kernel and its leftovers.

mod emit;
mod operands;
mod vector;

use crate::config::RegisterTile;
use crate::frontend::scop::ast::{Stmt, StmtKind};
use crate::frontend::scop::{Access, Affine, Scop};
use std::collections::HashMap;

use super::marks::{affine_of, compose, divides, upper_bound};
use super::print::collect_bodies;
use super::tree::{Loop, Node, contains_loop};
use super::{Lowered, expr};

/// How one nest is register-blocked: set on the outermost of its three
/// loops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Plan {
    pub(super) tile: RegisterTile,
    /// Positions (0 outermost) of the register loops `p`, `q` and of the
    /// reduction loop `r` among the three.
    pub(super) p: usize,
    pub(super) q: usize,
    pub(super) r: usize,
    /// The array whose elements the scalars hold.
    pub(super) array: String,
    /// Whether the row-block loop carries the OpenMP directive (when the
    /// outermost of the three had it and is `p`).
    pub(super) omp: bool,
    /// Whether the bounds of `q` depend on `p`: each block of rows then
    /// computes the columns all its rows share.
    pub(super) dependent: bool,
    /// With `pack=1`, when the nest allows it: the bounds of its packed
    /// buffers (the micro-kernel then runs on vectors, `vector.rs`).
    pub(super) pack: Option<vector::Panel>,
}

/// Marks every nest of three innermost loops that can be register-blocked
/// by `tile`; returns, for each one that cannot, why.
pub(super) fn mark_regblock(
    nodes: &mut [Node],
    tile: RegisterTile,
    scop: &Scop,
    lw: &Lowered<'_, '_>,
) -> Vec<String> {
    let mut bodies = HashMap::new();
    collect_bodies(&scop.body, &mut bodies);
    let mut notes = Vec::new();
    let mut blocked = 0;
    walk(nodes, tile, scop, &bodies, lw, &mut notes, &mut blocked);
    if blocked == 0 && notes.is_empty() {
        notes.push(
            "register blocking {tile} not applied: no contraction (three perfectly nested \
             innermost loops whose statements accumulate into an element that stays the same \
             along one of them)"
                .replace("{tile}", &tile.to_string()),
        );
    }
    notes
}

/// Why a nest is not register-blocked.
enum Refusal {
    /// It is not a contraction: nothing to say about it.
    NotContraction,
    /// A contraction the rules do not allow, and why.
    Illegal(String),
}

fn walk(
    nodes: &mut [Node],
    tile: RegisterTile,
    scop: &Scop,
    bodies: &HashMap<usize, &Stmt>,
    lw: &Lowered<'_, '_>,
    notes: &mut Vec<String>,
    blocked: &mut usize,
) {
    for n in nodes {
        match n {
            Node::For(l) => {
                let plan = triple(l).map(|(a, b, c)| {
                    let at = format!("loops {}, {}, {}", a.var, b.var, c.var);
                    let mut p = plan(a, b, c, tile, scop, bodies, lw).map_err(|why| match why {
                        Refusal::Illegal(why) => {
                            Some(format!("register blocking {tile} not applied: {at}: {why}"))
                        }
                        Refusal::NotContraction => None,
                    })?;
                    if tile.pack {
                        match vector::panel([a, b, c], &p, scop, bodies) {
                            Ok(panel) => p.pack = Some(panel),
                            Err(why) => notes.push(format!(
                                "register blocking {tile}: operands not packed, scalar \
                                 micro-kernel: {at}: {why}"
                            )),
                        }
                    }
                    Ok::<_, Option<String>>(p)
                });
                match plan {
                    Some(Ok(p)) => {
                        *blocked += 1;
                        l.regblock = Some(Box::new(p));
                    }
                    Some(Err(why)) => notes.extend(why),
                    None => walk(&mut l.body, tile, scop, bodies, lw, notes, blocked),
                }
            }
            Node::If { then, other, .. } => {
                walk(then, tile, scop, bodies, lw, notes, blocked);
                walk(other, tile, scop, bodies, lw, notes, blocked);
            }
            Node::Stmt { .. } => {}
        }
    }
}

/// Whether some statement under `nodes` accumulates over the nest `vars`:
/// reads the one element it writes, and that element stays the same
/// along exactly one of the loops its iterators move with (the reduction
/// loop; a tile loop around point loops does not count) and changes along
/// the two others (the register loops).
fn accumulates(nodes: &[Node], scop: &Scop, vars: &[&str]) -> bool {
    let mut found = false;
    super::tree::for_each_stmt(nodes, &mut |id, args| {
        let st = &scop.statements[id];
        let Some(args) = args.iter().map(affine_of).collect::<Option<Vec<_>>>() else {
            return;
        };
        let [w] = st.writes.as_slice() else {
            return;
        };
        let Some(written) = reference(w, &st.iterators, &args) else {
            return;
        };
        let reads_it = st
            .reads
            .iter()
            .any(|r| reference(r, &st.iterators, &args).as_ref() == Some(&written));
        let moves = |v: &str| args.iter().any(|a| a.coefficient(v) != 0);
        let same = |v: &str| {
            written
                .1
                .iter()
                .all(|s| s.coefficient(v) == 0 && !divides(s, v))
        };
        let reductions = vars.iter().filter(|v| moves(v) && same(v)).count();
        let registers = vars.iter().filter(|v| !same(v)).count();
        found |= reads_it && reductions == 1 && registers == 2;
    });
    found
}

/// `a` with its only child `b` with its only child `c`, the innermost loop.
fn triple(a: &Loop) -> Option<(&Loop, &Loop, &Loop)> {
    let [Node::For(b)] = a.body.as_slice() else {
        return None;
    };
    let [Node::For(c)] = b.body.as_slice() else {
        return None;
    };
    (!contains_loop(&c.body)).then_some((a, b, &**c))
}

/// One reference over the generated loops: the array and its subscripts.
type Reference = (String, Vec<Affine>);

fn reference(a: &Access, iterators: &[String], args: &[Affine]) -> Option<Reference> {
    let values: Vec<Option<Affine>> = args.iter().cloned().map(Some).collect();
    let subs = a
        .subscripts
        .iter()
        .map(|s| compose(s, iterators, &values))
        .collect::<Option<Vec<_>>>()?;
    Some((a.array.clone(), subs))
}

/// The plan for the nest `a` ⊃ `b` ⊃ `c`, or why there is none.
fn plan(
    a: &Loop,
    b: &Loop,
    c: &Loop,
    tile: RegisterTile,
    scop: &Scop,
    bodies: &HashMap<usize, &Stmt>,
    lw: &Lowered<'_, '_>,
) -> Result<Plan, Refusal> {
    if !accumulates(&c.body, scop, &[&a.var, &b.var, &c.var]) {
        return Err(Refusal::NotContraction);
    }
    legal_plan(a, b, c, tile, scop, bodies, lw).map_err(Refusal::Illegal)
}

/// The plan for a contraction nest, or the rule it breaks: the rules are
/// checked in stages, each of which may refuse.
fn legal_plan(
    a: &Loop,
    b: &Loop,
    c: &Loop,
    tile: RegisterTile,
    scop: &Scop,
    bodies: &HashMap<usize, &Stmt>,
    lw: &Lowered<'_, '_>,
) -> Result<Plan, String> {
    let loops = [a, b, c];
    if loops
        .iter()
        .any(|l| l.step != 1 || upper_bound(l).is_none())
    {
        return Err("a loop has a step or a bound of a form polytune does not block".into());
    }
    if loops.iter().any(|l| !l.private.is_empty()) {
        return Err("a loop writes a privatized scalar or array (priv=1, priv=2)".into());
    }
    let body = innermost_body(&loops, scop, bodies)?;
    let (array, subs) = body.written;
    let (r, strides) = reduction_loop(&loops, &array, &subs, body.moved)?;
    let (p, q) = match r {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    };
    let dependent = columns_depend_on_rows(&loops, p, q)?;
    distinct_writes(tile, &strides[p], &strides[q], &array)?;
    if !lw.permutable3(c.info) {
        return Err(
            "the dependences do not allow the reduction loop inside the register tile \
             (the three loops are not fully permutable)"
                .into(),
        );
    }
    Ok(Plan {
        tile,
        p,
        q,
        r,
        array,
        omp: a.omp && p == 0,
        dependent,
        pack: None,
    })
}

/// What the innermost body of a contraction nest does.
struct Body {
    /// The one element every statement writes.
    written: Reference,
    /// Whether a statement's iterators move with each loop.
    moved: [bool; 3],
}

/// The innermost body's one written element, when its statements are all
/// assignments writing it and no other reference of the body may touch
/// the accumulated elements (scalar replacement would change the result).
fn innermost_body(
    loops: &[&Loop; 3],
    scop: &Scop,
    bodies: &HashMap<usize, &Stmt>,
) -> Result<Body, String> {
    let mut written: Option<Reference> = None;
    let mut moved = [false; 3];
    let mut refs: Vec<Reference> = Vec::new();
    for n in &loops[2].body {
        let Node::Stmt { id, args } = n else {
            return Err("the innermost body has a condition".into());
        };
        if !matches!(
            bodies.get(id).map(|s| &s.kind),
            Some(StmtKind::Assign { .. })
        ) {
            return Err("the innermost body has a block of local variables".into());
        }
        let st = &scop.statements[*id];
        let args: Vec<Affine> = args
            .iter()
            .map(affine_of)
            .collect::<Option<_>>()
            .ok_or("a statement's iterators are not affine in the loops")?;
        for (k, l) in loops.iter().enumerate() {
            moved[k] |= args.iter().any(|x| x.coefficient(&l.var) != 0);
        }
        for w in &st.writes {
            let r = reference(w, &st.iterators, &args).ok_or("a subscript overflows")?;
            match &written {
                None => written = Some(r),
                Some(x) if *x == r => {}
                Some(_) => return Err("the body writes more than one element per iteration".into()),
            }
        }
        for x in st.reads.iter().chain(&st.writes) {
            refs.push(reference(x, &st.iterators, &args).ok_or("a subscript overflows")?);
        }
    }
    let Some((array, subs)) = written else {
        return Err("the body writes nothing".into());
    };
    if subs.is_empty() {
        return Err(format!(
            "`{array}` is a scalar: one accumulator, nothing to block"
        ));
    }
    if refs.iter().any(|(n, s)| *n == array && *s != subs) {
        return Err(format!(
            "another reference in the loop may touch the accumulated elements of `{array}` \
             (scalar replacement would change the result)"
        ));
    }
    Ok(Body {
        written: (array, subs),
        moved,
    })
}

/// The reduction loop (its position among the three): the one along
/// which the written element stays the same; with, for each loop, the
/// stride of each subscript of the element along it.
fn reduction_loop(
    loops: &[&Loop; 3],
    array: &str,
    subs: &[Affine],
    moved: [bool; 3],
) -> Result<(usize, Vec<Vec<i64>>), String> {
    let mut strides = Vec::new();
    for l in loops {
        if subs.iter().any(|s| divides(s, &l.var)) {
            return Err(format!(
                "the subscripts of `{array}` divide loop variable {}",
                l.var
            ));
        }
        strides.push(
            subs.iter()
                .map(|s| s.coefficient(&l.var))
                .collect::<Vec<_>>(),
        );
    }
    let invariant: Vec<usize> = (0..3)
        .filter(|&k| strides[k].iter().all(|&s| s == 0))
        .collect();
    if invariant.len() == 1 && !moved[invariant[0]] {
        return Err(format!(
            "no statement moves with loop {}, along which the element of `{array}` stays the same",
            loops[invariant[0]].var
        ));
    }
    match invariant.as_slice() {
        [r] => Ok((*r, strides)),
        [] => Err(format!(
            "the element of `{array}` changes along every loop (not a contraction)"
        )),
        _ => Err(format!(
            "the element of `{array}` stays the same along two loops"
        )),
    }
}

/// Whether the column loop's bounds depend on the row loop's (a
/// triangular nest such as syrk's); no other bound may depend on another
/// of the three loops.
fn columns_depend_on_rows(loops: &[&Loop; 3], p: usize, q: usize) -> Result<bool, String> {
    let mut dependent = false;
    for inner in 1..3 {
        for outer in 0..inner {
            let l = loops[inner];
            if expr::mentions(&l.init, &loops[outer].var)
                || expr::mentions(&l.cond, &loops[outer].var)
            {
                if (inner, outer) == (q, p) {
                    dependent = true;
                } else {
                    return Err(format!(
                        "the bounds of loop {} depend on loop {} (only the columns' bounds \
                         may depend on the rows')",
                        l.var, loops[outer].var
                    ));
                }
            }
        }
    }
    Ok(dependent)
}

/// Whether the tile's instances write distinct elements of `array`, given
/// the strides of its subscripts along the rows and the columns.
fn distinct_writes(
    tile: RegisterTile,
    rows: &[i64],
    columns: &[i64],
    array: &str,
) -> Result<(), String> {
    for x in 0..tile.mr as i64 {
        for y in 0..tile.nr as i64 {
            for (x2, y2) in
                (0..tile.mr as i64).flat_map(|x2| (0..tile.nr as i64).map(move |y2| (x2, y2)))
            {
                if (x, y) >= (x2, y2) {
                    continue;
                }
                let same = rows
                    .iter()
                    .zip(columns)
                    .all(|(&sp, &sq)| sp * (x - x2) + sq * (y - y2) == 0);
                if same {
                    return Err(format!(
                        "two instances of a {tile} tile write the same element of `{array}`"
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::lower;
    use super::super::tree::Node;
    use crate::engine::model::Model;
    use crate::frontend::{Options, parse_source};
    use crate::isl::Ctx;
    use std::path::Path;

    fn innermost(nodes: &[Node]) -> Option<usize> {
        match nodes {
            [Node::For(l)] if l.body.iter().any(|n| matches!(n, Node::For(_))) => {
                innermost(&l.body)
            }
            [Node::For(l)] => l.info,
            _ => None,
        }
    }

    /// Whether the innermost three loops of `body`, in the original order,
    /// are fully permutable.
    fn permutable(body: &str) -> bool {
        let text = format!(
            "void f(int n, double A[99][99], double B[99][99], double C[99][99]) {{ int i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        );
        let scop = parse_source(Path::new("t.c"), text, &Options::default())
            .unwrap()
            .scops
            .remove(0);
        let ctx = Ctx::new();
        let m = Model::new(&ctx, &scop, None).unwrap();
        let lw = lower(&m, 0, &m.original_tree).unwrap();
        lw.permutable3(innermost(&lw.nodes))
    }

    /// The dependence test register blocking rests on. (With one
    /// accumulated element and no other reference to its array, the only
    /// dependences inside the nest are on that element, so a contraction
    /// the other rules accept always passes it; it stays as a guard.)
    #[test]
    fn full_permutability_of_three_loops() {
        assert!(permutable(
            "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++) C[i][j] += A[i][k] * B[k][j];"
        ));
        // (0, 1, -1): j and k may not be interchanged.
        assert!(!permutable(
            "for (i = 0; i < n; i++) for (j = 1; j < n; j++) for (k = 0; k < n - 1; k++) C[j][k] = C[j - 1][k + 1] + A[i][k];"
        ));
        // (1, -1, 0) between rows.
        assert!(!permutable(
            "for (i = 1; i < n; i++) for (j = 0; j < n - 1; j++) for (k = 0; k < n; k++) C[i][j] += C[i - 1][j + 1] * A[j][k];"
        ));
    }
}
