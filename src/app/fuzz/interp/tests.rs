//! The interpreter's unit tests.

use super::super::program;
use super::*;

#[test]
fn interpreter_follows_unsigned_comparison() {
    // for (long i = -n; i < 5UL; i++): zero trips when n > 0.
    use program::*;
    let p = Program {
        vars: n_and_i(),
        arrays: vec![],
        scalars: vec![Scalar {
            name: "s0".into(),
            elem: Elem::Long,
            local: false,
        }],
        body: vec![Stmt::For(Loop {
            var: 1,
            init: AExpr::Neg(Box::new(AExpr::Var(0))),
            cond: Cond::Cmp(CmpOp::Lt, AExpr::Var(1), AExpr::Lit(5, IntTy::ULong)),
            step: 1,
            body: vec![Stmt::Assign {
                lhs: Lhs::Scalar(0),
                add: true,
                rhs: VExpr::Int(1),
            }],
        })],
        param_sets: vec![],
        depth: 1,
    };
    let count = |n: i64| {
        let mut m = Machine::new(&p, &[n], true);
        m.run().unwrap();
        m.dump()
    };
    let init = match program::scalar_init(Elem::Long, 0) {
        Val::Long(x) => x,
        _ => unreachable!(),
    };
    assert_eq!(count(3), format!("begin s0 1\n{init}\nend s0\n"));
    assert_eq!(count(-3), format!("begin s0 1\n{}\nend s0\n", init + 2));
}
