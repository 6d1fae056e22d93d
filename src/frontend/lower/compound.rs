//! Compound statements: a block that declares scalars of its own and also
//! holds loops or conditions (`{ float acc = 0; for (dy ...) for (dx ...)
//! acc += in[y + dy][x + dx] * k[dy + 1][dx + 1]; out[y][x] = acc; }`) is
//! one statement of its enclosing loops, run as written.
//!
//! Its accesses over-approximate what its code touches. One made at the
//! block's own level (no loop or condition of the block around it) is
//! exact: a write there is a must-write. One inside the block's loops or
//! conditions reaches every element its subscripts take for some value
//! of the inner iterators within their bounds and the affine conditions
//! around it ([`Inner`]); a condition that depends on data bounds nothing
//! (its reads are reads). A write there is a may-write: it kills no
//! earlier write in the dependence analysis. The block's own scalars are
//! private; an inner loop's iterator declared outside the SCoP is
//! declared again inside the generated block, so each execution (each
//! thread) has its own.

use super::*;
use crate::frontend::scop::Inner;

/// The state of the compound block being lowered.
#[derive(Default)]
pub(super) struct Compound {
    /// Loops and guards around the block.
    pub(super) depth: usize,
    pub(super) guards: usize,
    /// Loops and conditions of the block around the current point.
    pub(super) nest: usize,
    /// The iterators of the block's loops.
    pub(super) iterators: Vec<String>,
    pub(super) writes: Vec<Access>,
    pub(super) may_writes: Vec<Access>,
    /// Iterators of the block's loops declared outside the SCoP, with
    /// their C type.
    pub(super) private: Vec<(String, String)>,
}

/// What lowering a condition may change, to undo when it turns out to
/// depend on data.
struct Snapshot {
    unsigned: usize,
    unsigned_seen: HashSet<(Vec<String>, Formula, Affine, i64, i64)>,
    divisions: usize,
    parameters: usize,
    invariants: usize,
    uses: BTreeMap<String, (usize, Span)>,
}

impl Lowerer<'_> {
    fn compound_state(&mut self) -> &mut Compound {
        self.compound.as_mut().expect("inside a compound block")
    }

    /// Where the current point of the block is: `None` at the block's own
    /// level, else its inner iterators and the conditions on them.
    fn inner_here(&self) -> Option<Inner> {
        let c = self.compound.as_ref()?;
        (c.nest > 0).then(|| Inner {
            iterators: self.loops[c.depth..]
                .iter()
                .map(|l| l.iterator.clone())
                .collect(),
            domain: Formula::and(self.guards[c.guards..].to_vec()),
        })
    }

    /// The reads recorded since `mark` are made at the current point.
    pub(super) fn quantify_reads(&mut self, mark: usize) {
        let inner = self.inner_here();
        for r in &mut self.current_reads[mark..] {
            r.inner = inner.clone();
        }
    }

    /// An assignment of the block: its own scalars are no access; a write
    /// inside the block's loops or conditions is a may-write.
    pub(super) fn inner_assignment(&mut self, lhs: &Expr, op: AssignOp, rhs: &Expr) -> R<()> {
        let mark = self.current_reads.len();
        let write = match &lhs.kind {
            ExprKind::Ident(n) if self.block_locals.contains(n) => None,
            _ => Some(self.target(lhs, op)?),
        };
        self.value(rhs)?;
        self.quantify_reads(mark);
        if let ExprKind::Ident(n) = &lhs.kind
            && write.is_none()
            && op == AssignOp::Assign
        {
            self.define_local(n, rhs);
        }
        if let Some(mut w) = write {
            w.inner = self.inner_here();
            let c = self.compound_state();
            if w.inner.is_none() {
                c.writes.push(w);
            } else {
                c.may_writes.push(w);
            }
        }
        Ok(())
    }

    /// A loop of the block, lowered like any loop (its bounds affine);
    /// what it touches is quantified over its iterator.
    pub(super) fn inner_loop(&mut self, l: &ForLoop) -> R<()> {
        let it = &l.iterator;
        if l.declared_type.is_none()
            && !self.block_locals.contains(it)
            && !self.compound_state().private.iter().any(|(n, _)| n == it)
        {
            // The type without its storage class: the copy is automatic.
            let ty = match self.types.get(it) {
                Some((_, spelling)) if spelling != types::MACRO => spelling
                    .split_whitespace()
                    .filter(|w| {
                        !matches!(
                            *w,
                            "static" | "extern" | "register" | "auto" | "_Thread_local" | "const"
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => format!("__typeof__({it})"),
            };
            self.compound_state().private.push((it.clone(), ty));
        }
        self.compound_state().nest += 1;
        // The loop numbers no statement: the block's place stays.
        let counters = self.counters.clone();
        let r = self.for_loop(l);
        self.counters = counters;
        self.compound_state().nest -= 1;
        r
    }

    /// A condition of the block: an affine one bounds what its branches
    /// touch; one that depends on data (`if (in[i][k] > t)`) is read, and
    /// its branches are taken as possibly run.
    pub(super) fn inner_if(&mut self, cond: &Expr, then: &Stmt, other: Option<&Stmt>) -> R<()> {
        self.compound_state().nest += 1;
        let before = self.snapshot();
        let guard = match self.condition(cond, Place::Condition) {
            Ok(f) => Some(f),
            Err(_) => {
                self.restore(before);
                let mark = self.current_reads.len();
                self.value(cond)?;
                self.quantify_reads(mark);
                None
            }
        };
        let r = self.branches(cond, guard, then, other);
        self.compound_state().nest -= 1;
        r
    }

    fn branches(
        &mut self,
        cond: &Expr,
        guard: Option<Formula>,
        then: &Stmt,
        other: Option<&Stmt>,
    ) -> R<()> {
        let Some(f) = guard else {
            self.stmt(then)?;
            return other.map_or(Ok(()), |o| self.stmt(o));
        };
        self.guards.push(f.clone());
        let r = self.stmt(then);
        self.guards.pop();
        r?;
        if let Some(o) = other {
            let neg = f.negate().ok_or_else(|| overflow(cond.span))?;
            self.guards.push(neg);
            let r = self.stmt(o);
            self.guards.pop();
            r?;
        }
        Ok(())
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            unsigned: self.unsigned.len(),
            unsigned_seen: self.unsigned_seen.clone(),
            divisions: self.divisions.len(),
            parameters: self.parameters.len(),
            invariants: self.invariants.len(),
            uses: self.uses.clone(),
        }
    }

    fn restore(&mut self, s: Snapshot) {
        self.unsigned.truncate(s.unsigned);
        self.unsigned_seen = s.unsigned_seen;
        self.divisions.truncate(s.divisions);
        self.parameters.truncate(s.parameters);
        self.invariants.truncate(s.invariants);
        self.uses = s.uses;
    }
}

#[cfg(test)]
mod tests {
    use crate::frontend::scop::Scop;
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    fn lower(body: &str) -> Scop {
        let text = format!(
            "double A[9][9], B[9][9], x[9];\nvoid f(int n, double t) {{ int i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
        );
        parse_source(Path::new("t.c"), text, &Options::default())
            .unwrap()
            .scops
            .remove(0)
    }

    #[test]
    fn inner_accesses_range_over_the_inner_loops_and_affine_conditions() {
        let s = lower(
            "for (i = 0; i < n; i++) { double s = 0; for (j = 0; j < n; j++) if (j > i) s += A[i][j]; B[i][0] = s; }",
        );
        assert_eq!(
            s.reads(),
            "[n] -> { S0[i] -> A[o0_pt, o1_pt] : exists (j : o0_pt = i and o1_pt = j and (j >= 0 and -j + n - 1 >= 0 and -i + j - 1 >= 0)) }"
        );
        assert_eq!(s.writes(), "[n] -> { S0[i] -> B[i, 0] }");
        // The loop inside numbers no statement: the block is the first.
        assert_eq!(s.statements[0].schedule.len(), 3);
        assert_eq!(s.schedules(), "[n] -> { S0[i] -> [0, i, 0] }");
    }

    #[test]
    fn a_condition_on_data_is_read_and_bounds_nothing() {
        let s = lower(
            "for (i = 0; i < n; i++) { double m = 0; for (j = 0; j < n; j++) if (A[i][j] > t) x[j] = m; B[i][0] = m; }",
        );
        let st = &s.statements[0];
        // The condition's reads (A, and the scalar t) are reads; the write
        // under it may happen anywhere in the loop's range.
        let read: Vec<&str> = st.reads.iter().map(|r| r.array.as_str()).collect();
        assert_eq!(read, ["A", "t"]);
        assert_eq!(
            s.may_writes(),
            "[n] -> { S0[i] -> x[o0_pt] : exists (j : o0_pt = j and (j >= 0 and -j + n - 1 >= 0)) }"
        );
        assert!(s.parameters.iter().all(|p| p != "t"), "{:?}", s.parameters);
    }

    #[test]
    fn a_write_under_a_condition_of_the_block_is_a_may_write() {
        let s = lower("for (i = 0; i < n; i++) { double v = A[i][0]; if (v > 0) B[i][1] = v; }");
        let st = &s.statements[0];
        assert!(st.writes.is_empty());
        assert_eq!(st.may_writes.len(), 1);
        assert_eq!(
            s.may_writes(),
            "[n] -> { S0[i] -> B[o0_pt, o1_pt] : o0_pt = i and o1_pt = 1 }"
        );
    }

    #[test]
    fn iterators_declared_outside_are_private_with_their_type() {
        let text = "double A[9][9], B[9];\nstatic long q;\nvoid f(int n) { int i;\n#pragma scop\nfor (i = 0; i < n; i++) { double s = 0; for (q = 0; q < n; q++) for (p = 0; p < n; p++) s += A[q][p]; B[i] = s; }\n#pragma endscop\n}\n";
        let src = parse_source(Path::new("t.c"), text.to_string(), &Options::default()).unwrap();
        assert_eq!(
            src.scops[0].statements[0].private,
            [
                ("q".to_string(), "long".to_string()),
                ("p".to_string(), "__typeof__(p)".to_string())
            ]
        );
    }
}
