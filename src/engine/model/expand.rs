//! Scalar expansion (`exp=1`, beyond the paper's space): a scalar whose
//! every value lives within one iteration of the loops around all its
//! accesses becomes an array with one element per iteration of them
//! (durbin's `sum`: `sum = 0; for (i ...) sum += ...; alpha = ... sum`
//! inside the `k` loop becomes `sum_x[k]`). Its memory-based dependences
//! from one iteration to another vanish with it: `sum_x[k] = 0` may run
//! for every `k` before anything else, or in a loop of its own.
//!
//! [`Model::expanded`] rewrites the SCoP — the accesses, the statements'
//! text, the arrays — and the pipeline builds the model of the rewritten
//! SCoP as of any other; the code generator allocates the arrays before
//! the new code and frees them after ([`crate::frontend::scop::Expanded`]).
//!
//! Expanding a scalar is exact when every read of it takes the value of a
//! write in the same iteration of those loops (none reads the value it
//! had before the SCoP, or one from an earlier iteration) and the code
//! after the SCoP never reads it (`frontend::liveness`): then each
//! element holds exactly the values the scalar held in its iteration, in
//! the same order, and no value needs to come out of the arrays.

use super::private::candidates;
use super::{EngineError, Model};
use crate::frontend::scop::ast::{Expr, ExprKind, Stmt, StmtKind};
use crate::frontend::scop::{
    Access, Affine, Array, Expanded, ScheduleDim, Scop, Statement, isl_names,
};
use crate::isl::{self, Set, UnionMap, UnionSet};

/// One web of a scalar: the statements whose accesses its values connect
/// (a write, the reads of its value, and so on), and per statement the
/// index of the iterator of each loop around all of them.
struct Users {
    ids: Vec<usize>,
    loops: Vec<Vec<usize>>,
}

impl<'c> Model<'c> {
    /// `scop` with every scalar it can expand expanded (see the module's
    /// comment), or why none can be. `dead` names the scalars whose value
    /// the code after the SCoP never reads.
    pub(crate) fn expanded(
        &self,
        scop: &Scop,
        dead: &[String],
    ) -> Result<Result<Scop, String>, EngineError> {
        let mut out = scop.clone();
        let mut why = Vec::new();
        for (name, _) in candidates(scop, false) {
            if !dead.iter().any(|d| d == name) {
                why.push(format!("`{name}` is read after the SCoP (or may be)"));
                continue;
            }
            for web in self.webs(scop, name)? {
                match self.expansion(scop, name, &web)? {
                    Ok(max) => rewrite(&mut out, name, &web, max),
                    Err(reason) => why.push(format!("`{name}` {reason}")),
                }
            }
        }
        if out.expanded.is_empty() {
            return Ok(Err(if why.is_empty() {
                "exp=1 left out: the SCoP writes no scalar polytune can expand".into()
            } else {
                format!("exp=1 left out: {}", why.join("; "))
            }));
        }
        // A scalar every web of which was expanded is gone.
        let used: Vec<String> = (out.statements.iter())
            .flat_map(|s| s.reads.iter().chain(&s.writes).chain(&s.may_writes))
            .map(|a| a.array.clone())
            .collect();
        out.arrays.retain(|a| used.contains(&a.name));
        Ok(Ok(out))
    }

    /// The webs of scalar `name`: its statements grouped by the values
    /// that flow between them (a statement whose read takes the value
    /// another wrote joins its group), each with the loops around all of
    /// its statements. Values never cross webs, so each can be expanded
    /// on its own.
    fn webs(&self, scop: &Scop, name: &str) -> Result<Vec<Users>, EngineError> {
        let touches = |a: &Access| a.array == name;
        let users: Vec<&Statement> = (scop.statements.iter())
            .filter(|s| s.reads.iter().chain(&s.writes).any(touches))
            .collect();
        let live = self.live(scop, name)?;
        let params = format!("[{}] -> ", isl_names(&scop.parameters));
        let tuple = |s: &Statement, x: &str| {
            let v: Vec<String> = (0..s.iterators.len()).map(|k| format!("{x}{k}")).collect();
            format!("{}[{}]", s.name(), v.join(", "))
        };
        // Union-find over the statements.
        let mut group: Vec<usize> = (0..users.len()).collect();
        fn root(g: &mut [usize], mut k: usize) -> usize {
            while g[k] != k {
                g[k] = g[g[k]];
                k = g[k];
            }
            k
        }
        for a in 0..users.len() {
            for b in 0..users.len() {
                let pair = UnionMap::parse(
                    self.ctx,
                    &format!(
                        "{params}{{ {} -> {} }}",
                        tuple(users[a], "x"),
                        tuple(users[b], "y")
                    ),
                )?;
                if !live.intersect(&pair)?.is_empty()? {
                    let (ra, rb) = (root(&mut group, a), root(&mut group, b));
                    group[ra] = rb;
                }
            }
        }
        let mut webs: Vec<Vec<&Statement>> = Vec::new();
        let mut of: std::collections::HashMap<usize, usize> = Default::default();
        for (k, user) in users.iter().enumerate() {
            let r = root(&mut group, k);
            let w = *of.entry(r).or_insert_with(|| {
                webs.push(Vec::new());
                webs.len() - 1
            });
            webs[w].push(user);
        }
        Ok(webs.into_iter().map(|web| loops_around(&web)).collect())
    }

    /// The scalar's live ranges: each write to the reads of its value.
    fn live(&self, scop: &Scop, name: &str) -> Result<UnionMap<'c>, EngineError> {
        let one = UnionSet::parse(self.ctx, &format!("{{ {}[] }}", isl::mangle(name)))?;
        let reads = UnionMap::parse(self.ctx, &scop.reads())?
            .intersect_domain(&self.domain)?
            .intersect_range(&one)?;
        let writes = UnionMap::parse(self.ctx, &scop.writes())?
            .intersect_domain(&self.domain)?
            .intersect_range(&one)?;
        Ok(isl::dataflow(&reads, Some(&writes), None, &self.original_tree)?.must)
    }

    /// The greatest index of each loop around the web, when it can be
    /// expanded; otherwise why not.
    fn expansion(
        &self,
        scop: &Scop,
        name: &str,
        web: &Users,
    ) -> Result<Result<Vec<isl::AstExpr>, String>, EngineError> {
        if web.ids.iter().any(|id| block_ids(&scop.body).contains(id)) {
            return Ok(Err(
                "is touched by a block with declarations of its own".into()
            ));
        }
        if web.loops[0].is_empty() {
            return Ok(Err(
                "has accesses outside every loop around the others".into()
            ));
        }
        let ctx = self.ctx;
        let params = format!("[{}] -> ", isl_names(&scop.parameters));
        let statements: Vec<&Statement> = (web.ids.iter())
            .filter_map(|id| scop.statements.iter().find(|s| s.id == *id))
            .collect();
        // Each statement's instances to the iterations of the loops (all
        // of them, or the `d`-th).
        let to_loops = |d: Option<usize>| -> Result<UnionMap<'c>, isl::IslError> {
            let pieces: Vec<String> = (statements.iter().zip(&web.loops))
                .map(|(s, l)| {
                    let x: Vec<String> = (0..s.iterators.len()).map(|k| format!("x{k}")).collect();
                    let image: Vec<&str> = match d {
                        Some(d) => vec![x[l[d]].as_str()],
                        None => l.iter().map(|&i| x[i].as_str()).collect(),
                    };
                    format!("{}[{}] -> [{}]", s.name(), x.join(", "), image.join(", "))
                })
                .collect();
            UnionMap::parse(ctx, &format!("{params}{{ {} }}", pieces.join("; ")))
        };
        let iteration = to_loops(None)?;
        let mine = iteration.domain()?.intersect(&self.domain)?;
        if mine.is_empty()? {
            return Ok(Err("is touched only by statements that never run".into()));
        }
        let one = UnionSet::parse(ctx, &format!("{{ {}[] }}", isl::mangle(name)))?;
        let reads = UnionMap::parse(ctx, &scop.reads())?
            .intersect_domain(&mine)?
            .intersect_range(&one)?;
        let live = self.live(scop, name)?.intersect_range(&reads.domain()?)?;
        if !reads.domain()?.subtract(&live.range()?)?.is_empty()? {
            return Ok(Err(
                "has a read of the value it had before the SCoP (or of none)".into(),
            ));
        }
        // Write and read in the same iteration of the loops.
        let same = iteration.apply_range(&iteration.reverse()?)?;
        if !live.is_subset(&same)? {
            return Ok(Err(
                "carries a value from one iteration of the loops around it to the next".into(),
            ));
        }
        let mut max = Vec::new();
        for d in 0..web.loops[0].len() {
            let values: Set<'c> = mine.apply(&to_loops(Some(d))?)?.to_set()?;
            let negative = Set::parse(ctx, &format!("{params}{{ [v] : v < 0 }}"))?;
            if !values.intersect(&negative)?.is_empty()? {
                return Ok(Err(
                    "has a loop around it whose iterator may be negative".into()
                ));
            }
            match isl::max_of_dim(&values, 0)? {
                Some(m) => max.push(m),
                None => return Ok(Err("has a loop around it with no upper bound".into())),
            }
        }
        Ok(Ok(max))
    }
}

/// The loops around all of `web`'s statements: their original schedules'
/// common prefix.
fn loops_around(web: &[&Statement]) -> Users {
    let first = &web[0].schedule;
    let common = (0..first.len())
        .take_while(|&t| web.iter().all(|s| s.schedule.get(t) == Some(&first[t])))
        .count();
    Users {
        ids: web.iter().map(|s| s.id).collect(),
        loops: web
            .iter()
            .map(|s| {
                (s.schedule[..common].iter())
                    .filter_map(|d| match *d {
                        ScheduleDim::Iterator { index, .. } => Some(index),
                        ScheduleDim::Position(_) => None,
                    })
                    .collect()
            })
            .collect(),
    }
}

/// The statements that are blocks with declarations of their own.
fn block_ids(stmts: &[Stmt]) -> Vec<usize> {
    let mut out = Vec::new();
    for s in stmts {
        match &s.kind {
            StmtKind::Local { id, .. } => out.push(*id),
            StmtKind::For(l) => out.extend(block_ids(std::slice::from_ref(&l.body))),
            StmtKind::If { then, other, .. } => {
                out.extend(block_ids(std::slice::from_ref(then)));
                if let Some(o) = other {
                    out.extend(block_ids(std::slice::from_ref(o)));
                }
            }
            StmtKind::Block(b) => out.extend(block_ids(b)),
            _ => {}
        }
    }
    out
}

/// `scop` with a web of `name` expanded: its accesses and every mention
/// in its statements' text become `array[i0][i1]...` with the iterators
/// of the loops around them.
fn rewrite(scop: &mut Scop, name: &str, users: &Users, max: Vec<isl::AstExpr>) {
    let taken = |n: &str| {
        scop.arrays.iter().any(|a| a.name == n)
            || scop.parameters.iter().any(|p| p == n)
            || scop
                .statements
                .iter()
                .any(|s| s.iterators.iter().any(|i| i == n))
            || crate::frontend::scop::ast::local_names(&scop.body)
                .iter()
                .any(|l| l == n)
    };
    let mut array = format!("polytune_x_{name}");
    let mut k = 2;
    while taken(&array) {
        array = format!("polytune_x_{name}_{k}");
        k += 1;
    }
    let mut subscripts = std::collections::HashMap::new();
    for (id, loops) in users.ids.iter().zip(&users.loops) {
        let Some(s) = scop.statements.iter_mut().find(|s| s.id == *id) else {
            continue;
        };
        let its: Vec<String> = loops.iter().map(|&i| s.iterators[i].clone()).collect();
        for a in s.reads.iter_mut().chain(s.writes.iter_mut()) {
            if a.array == name {
                a.array = array.clone();
                a.subscripts = its.iter().map(|i| Affine::var(i)).collect();
            }
        }
        subscripts.insert(*id, its);
    }
    mention(&mut scop.body, name, &array, &subscripts);
    scop.arrays.push(Array {
        name: array.clone(),
        rank: max.len(),
        written: true,
    });
    scop.expanded.push(Expanded {
        scalar: name.to_string(),
        array,
        max,
    });
}

/// Every mention of `name` in the statements listed becomes the element
/// of `array` at their iterators.
fn mention(
    stmts: &mut [Stmt],
    name: &str,
    array: &str,
    subscripts: &std::collections::HashMap<usize, Vec<String>>,
) {
    fn expr(e: &mut Expr, name: &str, array: &str, its: &[String]) {
        match &mut e.kind {
            ExprKind::Ident(n) if n == name => {
                let span = e.span;
                e.kind = ExprKind::Access {
                    name: array.to_string(),
                    subscripts: its
                        .iter()
                        .map(|i| Expr::new(ExprKind::Ident(i.clone()), span))
                        .collect(),
                };
            }
            ExprKind::Access { subscripts, .. } => subscripts
                .iter_mut()
                .for_each(|x| expr(x, name, array, its)),
            ExprKind::Call { args, .. } => args.iter_mut().for_each(|x| expr(x, name, array, its)),
            ExprKind::Unary { expr: x, .. } | ExprKind::Cast { expr: x, .. } => {
                expr(x, name, array, its)
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                expr(lhs, name, array, its);
                expr(rhs, name, array, its);
            }
            ExprKind::Ternary { cond, then, other } => {
                expr(cond, name, array, its);
                expr(then, name, array, its);
                expr(other, name, array, its);
            }
            _ => {}
        }
    }
    for s in stmts {
        match &mut s.kind {
            StmtKind::Assign { id, lhs, rhs, .. } => {
                if let Some(its) = subscripts.get(id) {
                    expr(lhs, name, array, its);
                    expr(rhs, name, array, its);
                }
            }
            StmtKind::For(l) => mention(std::slice::from_mut(&mut l.body), name, array, subscripts),
            StmtKind::If { then, other, .. } => {
                mention(std::slice::from_mut(then), name, array, subscripts);
                if let Some(o) = other {
                    mention(std::slice::from_mut(o), name, array, subscripts);
                }
            }
            StmtKind::Block(b) => mention(b, name, array, subscripts),
            // Blocks with declarations of their own never touch an
            // expanded scalar (see `expansion`).
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::scop;
    use super::*;
    use crate::isl::Ctx;

    const SUM: &str = "for (k = 1; k < n; k++) { s = 0.0; \
                       for (i = 0; i < k; i++) s += A[k][i]; x[k] = s; }";

    fn dead() -> Vec<String> {
        vec!["s".to_string()]
    }

    #[test]
    fn a_scalar_living_within_an_iteration_becomes_an_array_over_it() {
        let ctx = Ctx::new();
        let s = scop(SUM);
        let m = Model::new(&ctx, &s, None).unwrap();
        let e = m.expanded(&s, &dead()).unwrap().expect("s lives within k");
        assert_eq!(e.expanded.len(), 1);
        let x = &e.expanded[0];
        assert_eq!((x.scalar.as_str(), x.array.as_str()), ("s", "polytune_x_s"));
        // Indexed by k, which runs up to n - 1.
        assert_eq!(x.max.len(), 1);
        assert!(e.statements.iter().all(|st| {
            st.reads
                .iter()
                .chain(&st.writes)
                .all(|a| a.array != "s" && (a.array != x.array || a.subscripts.len() == 1))
        }));
        assert!(e.arrays.iter().any(|a| a.name == x.array && a.rank == 1));
        let text = e.to_c("");
        assert!(text.contains("polytune_x_s[k] += A[k][i]"), "{text}");
        // Every `s = 0` before everything else: wrong for the scalar,
        // right once each k has its own.
        let hoisted = UnionMap::parse(
            &ctx,
            "[n] -> { S0[k] -> [0, k, 0]; S1[k, i] -> [1, k, i]; S2[k] -> [1, k, k] }",
        )
        .unwrap();
        let expanded = Model::new(&ctx, &e, None).unwrap();
        assert!(!m.respects(&hoisted).unwrap());
        assert!(expanded.respects(&hoisted).unwrap());
        assert!(expanded.respects(&expanded.original).unwrap());
    }

    fn refusal(body: &str, dead: &[&str]) -> String {
        let ctx = Ctx::new();
        let s = scop(body);
        let m = Model::new(&ctx, &s, None).unwrap();
        let dead: Vec<String> = dead.iter().map(|d| d.to_string()).collect();
        match m.expanded(&s, &dead).unwrap() {
            Ok(e) => panic!("expanded {:?}", e.expanded),
            Err(why) => why,
        }
    }

    /// ludcmp's `w` (and any scalar reused as a temporary in several
    /// nests): each web of its values gets an array of its own, over the
    /// loops around that web; a web outside every loop stays the scalar.
    #[test]
    fn each_web_of_a_scalar_is_expanded_over_its_own_loops() {
        let ctx = Ctx::new();
        let s = scop(
            "s = 0.0; for (i = 0; i < n; i++) { s = x[i]; A[i][0] = s; } \
             for (i = 0; i < n; i++) for (j = 0; j < n; j++) { s = A[i][j]; A[j][i] = s; }",
        );
        let m = Model::new(&ctx, &s, None).unwrap();
        let e = m.expanded(&s, &dead()).unwrap().unwrap();
        let arrays: Vec<(&str, usize)> = (e.expanded.iter())
            .map(|x| (x.array.as_str(), x.max.len()))
            .collect();
        assert_eq!(arrays, [("polytune_x_s", 1), ("polytune_x_s_2", 2)]);
        let text = e.to_c("");
        assert!(text.contains("s = 0.0;"), "{text}");
        assert!(text.contains("polytune_x_s_2[i][j] = A[i][j]"), "{text}");
        // The scalar is still written (by the first statement).
        assert!(e.arrays.iter().any(|a| a.name == "s"));
        let expanded = Model::new(&ctx, &e, None).unwrap();
        assert!(expanded.respects(&expanded.original).unwrap());
    }

    #[test]
    fn a_scalar_whose_values_cross_iterations_or_leave_the_scop_stays() {
        assert!(refusal(SUM, &[]).contains("`s` is read after the SCoP"));
        // Read before written in each iteration: the value from before.
        let entry = "for (i = 0; i < n; i++) { x[i] = s; s = A[i][0]; }";
        assert!(refusal(entry, &["s"]).contains("before the SCoP"));
        // Written at j = 0, read at every j: across iterations of j.
        let carried = "for (i = 0; i < n; i++) for (j = 0; j < n; j++) { \
                       if (j == 0) s = x[i]; A[i][j] = s; }";
        assert!(refusal(carried, &["s"]).contains("from one iteration"));
        // Set outside every loop and never read.
        assert!(refusal("s = 0.0; x[0] = 1.0;", &["s"]).contains("outside every loop"));
        // An iterator below 0 would index before the array.
        let negative = "for (i = -1; i < n; i++) { s = x[i + 1]; A[i + 1][0] = s; }";
        assert!(refusal(negative, &["s"]).contains("negative"));
        // Statements that never run.
        let never = "for (i = 0; i < 0; i++) { s = x[i]; A[i][0] = s; }";
        assert!(refusal(never, &["s"]).contains("never run"));
        // Nothing to expand.
        assert!(refusal("for (i = 0; i < n; i++) x[i] = 0.0;", &[]).contains("no scalar"));
    }
}
