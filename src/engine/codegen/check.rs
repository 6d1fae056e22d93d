//! Translation validation of isl's AST: the loops isl generated are read
//! back into Presburger sets (per executed statement, the constraints of
//! its enclosing loops and conditions and the values of its original
//! iterators), and they must run every instance of the domain, nothing
//! else, and no instance from two places. isl's AST generator is not
//! trusted: it was seen to drop the last instances of a statement (a
//! tiled, wavefronted nest with a strided loop, where the bound of a tile
//! loop only covered the other statement of the band). When the loops are
//! wrong for some parameter value of the context, the SCoP is left as it
//! was instead of being miscompiled.

use super::Node;
use crate::engine::model::Model;
use crate::isl::{AstExpr, AstOp, IslError, UnionMap};

/// Why the generated loops cannot be used.
#[derive(Debug)]
pub(crate) enum Failure {
    /// An expression has no Presburger counterpart to check it with.
    Unreadable(String),
    /// The check itself failed in isl.
    Isl(IslError),
    /// The loops do not run the domain exactly once, or not in an order
    /// that respects the dependences.
    Wrong(&'static str),
}

impl From<IslError> for Failure {
    fn from(e: IslError) -> Self {
        Failure::Isl(e)
    }
}

/// isl text of an AST expression (integer-valued or a condition).
fn text(e: &AstExpr) -> Result<String, Failure> {
    Ok(match e {
        // Bare: isl reads `(-3) * x` as a product of two expressions.
        AstExpr::Int(v) => v.to_string(),
        AstExpr::Id(name) => name.clone(),
        AstExpr::Op(op, args) => {
            let a = |k: usize| -> Result<String, Failure> {
                args.get(k)
                    .map(text)
                    .unwrap_or_else(|| Err(Failure::Unreadable(format!("{op:?} arity"))))
            };
            match op {
                AstOp::Add => format!("({} + {})", a(0)?, a(1)?),
                AstOp::Sub => format!("({} - {})", a(0)?, a(1)?),
                AstOp::Mul => format!("({} * {})", a(0)?, a(1)?),
                AstOp::Minus => format!("(-{})", a(0)?),
                // isl proved the dividend non-negative (pdiv) or the
                // division exact (div): both are the floor, as is fdiv.
                AstOp::Div | AstOp::PdivQ | AstOp::FdivQ => {
                    format!("floor({} / {})", a(0)?, a(1)?)
                }
                // Non-negative dividend, or only compared with zero.
                AstOp::PdivR | AstOp::ZdivR => format!("({} mod {})", a(0)?, a(1)?),
                AstOp::Min | AstOp::Max => {
                    let name = if *op == AstOp::Min { "min" } else { "max" };
                    let parts: Vec<String> = args.iter().map(text).collect::<Result<_, _>>()?;
                    let mut s = parts[parts.len() - 1].clone();
                    for p in parts[..parts.len() - 1].iter().rev() {
                        s = format!("{name}({p}, {s})");
                    }
                    s
                }
                AstOp::And | AstOp::AndThen => format!("(({}) and ({}))", a(0)?, a(1)?),
                AstOp::Or | AstOp::OrElse => format!("(({}) or ({}))", a(0)?, a(1)?),
                AstOp::Eq => format!("{} = {}", a(0)?, a(1)?),
                AstOp::Le => format!("{} <= {}", a(0)?, a(1)?),
                AstOp::Lt => format!("{} < {}", a(0)?, a(1)?),
                AstOp::Ge => format!("{} >= {}", a(0)?, a(1)?),
                AstOp::Gt => format!("{} > {}", a(0)?, a(1)?),
                other => return Err(Failure::Unreadable(format!("{other:?}"))),
            }
        }
    })
}

/// isl text of a condition, as a conjunction where possible: `x <= min(a,
/// b)` is `x <= a and x <= b` (and so on), far cheaper for isl than the
/// disjunction of pieces a minimum becomes.
fn cond_text(e: &AstExpr) -> Result<String, Failure> {
    // A select (`c ? a : b`, which isl's parser does not read) is lifted
    // out of the condition: `(c and E[a]) or (not c and E[b])`.
    if let Some(c) = first_select(e) {
        let c = cond_text(&c)?;
        let a = cond_text(&replace_first_select(e, 1).0)?;
        let b = cond_text(&replace_first_select(e, 2).0)?;
        return Ok(format!("(({c} and {a}) or (not ({c}) and {b}))"));
    }
    // A constant as a condition (isl writes `… || 1` where a disjunct
    // always holds): isl's parser reads `true` and `false`, not numbers.
    if let AstExpr::Int(v) = e {
        return Ok(if *v != 0 { "true" } else { "false" }.to_string());
    }
    if let AstExpr::Op(op, args) = e
        && args.len() == 2
    {
        let (l, r) = (&args[0], &args[1]);
        let split = |sym: &str,
                     x: &AstExpr,
                     bound: &AstExpr,
                     want: AstOp|
         -> Option<Result<String, Failure>> {
            match bound {
                AstExpr::Op(o, parts) if *o == want => Some((|| {
                    let x = text(x)?;
                    let parts: Vec<String> = parts
                        .iter()
                        .map(|p| Ok(format!("{x} {sym} {}", text(p)?)))
                        .collect::<Result<_, Failure>>()?;
                    Ok(parts.join(" and "))
                })()),
                _ => None,
            }
        };
        let flat = match op {
            AstOp::And | AstOp::AndThen => {
                return Ok(format!("{} and {}", cond_text(l)?, cond_text(r)?));
            }
            AstOp::Or | AstOp::OrElse => {
                return Ok(format!("({} or {})", cond_text(l)?, cond_text(r)?));
            }
            AstOp::Le => split("<=", l, r, AstOp::Min),
            AstOp::Lt => split("<", l, r, AstOp::Min),
            AstOp::Ge => split(">=", l, r, AstOp::Max),
            AstOp::Gt => split(">", l, r, AstOp::Max),
            _ => None,
        };
        if let Some(t) = flat {
            return t;
        }
    }
    Ok(format!("({})", text(e)?))
}

/// The condition of the first select (or conditional) of `e`, outermost
/// first.
fn first_select(e: &AstExpr) -> Option<AstExpr> {
    match e {
        AstExpr::Op(AstOp::Select | AstOp::Cond, args) if args.len() == 3 => Some(args[0].clone()),
        AstExpr::Op(_, args) => args.iter().find_map(first_select),
        _ => None,
    }
}

/// `e` with its first select replaced by its argument `pick` (1: the
/// value when true, 2: when false); whether one was replaced.
fn replace_first_select(e: &AstExpr, pick: usize) -> (AstExpr, bool) {
    match e {
        AstExpr::Op(AstOp::Select | AstOp::Cond, args) if args.len() == 3 => {
            (args[pick].clone(), true)
        }
        AstExpr::Op(op, args) => {
            let mut done = false;
            let args = args
                .iter()
                .map(|a| {
                    if done {
                        a.clone()
                    } else {
                        let (b, d) = replace_first_select(a, pick);
                        done = d;
                        b
                    }
                })
                .collect();
            (AstExpr::Op(*op, args), done)
        }
        other => (other.clone(), false),
    }
}

/// One executed statement: its constraints over the loop variables, its
/// time vector and the values of its original iterators.
struct Leaf {
    id: usize,
    args: Vec<AstExpr>,
    constraints: Vec<String>,
    time: Vec<String>,
}

fn collect(
    nodes: &[Node],
    constraints: &mut Vec<String>,
    time: &mut Vec<String>,
    out: &mut Vec<Leaf>,
) -> Result<(), Failure> {
    for (k, n) in nodes.iter().enumerate() {
        time.push(k.to_string());
        match n {
            Node::Stmt { id, args } => out.push(Leaf {
                id: *id,
                constraints: constraints.clone(),
                time: time.clone(),
                args: args.clone(),
            }),
            Node::If { cond, then, other } => {
                let c = text(cond)?;
                constraints.push(cond_text(cond)?);
                collect(then, constraints, time, out)?;
                constraints.pop();
                constraints.push(format!("not ({c})"));
                collect(other, constraints, time, out)?;
                constraints.pop();
            }
            Node::For(l) => {
                if l.step < 1 {
                    return Err(Failure::Unreadable(format!("loop step {}", l.step)));
                }
                let v = &l.var;
                let var = AstExpr::Id(v.clone());
                let first = AstExpr::Op(AstOp::Ge, vec![var, l.init.clone()]);
                let mut c = vec![cond_text(&first)?, cond_text(&l.cond)?];
                if l.step > 1 {
                    // (v - init) mod step = 0
                    let diff =
                        AstExpr::Op(AstOp::Sub, vec![AstExpr::Id(v.clone()), l.init.clone()]);
                    let rem = AstExpr::Op(AstOp::ZdivR, vec![diff, AstExpr::Int(l.step)]);
                    c.push(cond_text(&AstExpr::Op(
                        AstOp::Eq,
                        vec![rem, AstExpr::Int(0)],
                    ))?);
                }
                let added = c.len();
                constraints.extend(c);
                time.push(v.clone());
                collect(&l.body, constraints, time, out)?;
                time.pop();
                constraints.truncate(constraints.len() - added);
            }
        }
        time.pop();
    }
    Ok(())
}

/// Checks that `nodes` (isl's AST, before the post-passes) runs every
/// instance of the model's domain, nothing else, and no instance from two
/// statements of the AST, for every parameter value of the context. (The
/// order is isl's; that one AST statement does not run an instance twice
/// is not checked either.)
pub(crate) fn check(model: &Model<'_>, nodes: &[Node]) -> Result<(), Failure> {
    let ctx = model.ctx;
    let context = model.context.to_string();
    let params = context.split('{').next().unwrap_or("").to_string();
    let mut leaves = Vec::new();
    collect(nodes, &mut Vec::new(), &mut Vec::new(), &mut leaves)?;
    let depth = leaves.iter().map(|l| l.time.len()).max().unwrap_or(0);
    let mut pieces = Vec::new();
    for l in &leaves {
        let iters: Vec<String> = (0..l.args.len()).map(|k| format!("pt_a{k}")).collect();
        let mut cons = l.constraints.clone();
        for (i, a) in iters.iter().zip(&l.args) {
            cons.push(cond_text(&AstExpr::Op(
                AstOp::Eq,
                vec![AstExpr::Id(i.clone()), a.clone()],
            ))?);
        }
        let mut time = l.time.clone();
        time.resize(depth, "0".to_string());
        // The loop variables are the time vector's own dimensions.
        let body = if cons.is_empty() {
            String::new()
        } else {
            format!(" : {}", cons.join(" and "))
        };
        pieces.push(format!(
            "S{}[{}] -> [{}]{body}",
            l.id,
            iters.join(", "),
            time.join(", ")
        ));
    }
    // Per leaf: the instances it runs (with the time it runs them at).
    let mut runs: Vec<(usize, UnionMap<'_>)> = Vec::new();
    for (l, p) in leaves.iter().zip(&pieces) {
        let m = UnionMap::parse(ctx, &format!("{params}{{ {p} }}"))?
            .intersect_params(&model.context)?;
        runs.push((l.id, m));
    }
    // Every leaf runs instances of the domain only, and no two leaves
    // run the same instance.
    for (k, (id, m)) in runs.iter().enumerate() {
        let d = m.domain()?;
        if !d.is_subset(&model.domain)? {
            return Err(Failure::Wrong(
                "isl's loops run statement instances outside the SCoP",
            ));
        }
        for (id2, m2) in &runs[k + 1..] {
            if id == id2 && !d.intersect(&m2.domain()?)?.is_empty()? {
                return Err(Failure::Wrong(
                    "isl's loops run a statement instance more than once",
                ));
            }
        }
    }
    // Every instance of the domain is run by some leaf.
    let mut rest = model.domain.clone();
    for (_, m) in &runs {
        rest = rest.subtract(&m.domain()?)?;
    }
    if !rest.is_empty()? {
        return Err(Failure::Wrong(
            "isl's loops do not run every statement instance of the SCoP",
        ));
    }
    // The order: every instance runs at the time its loops and position
    // give it (textual positions and loop counters, compared
    // lexicographically), and every dependence must go forward in that
    // time. isl was seen to place a statement of a `set` node one
    // iteration early (fuzz seed 15, program 821: a read before its write).
    // It costs `space` (all 1536 configurations) 6% on gemm, 15% on
    // fdtd-apml and 45% on adi (user time, this 2-core machine).
    let mut executed: Option<UnionMap<'_>> = None;
    for (_, m) in runs {
        executed = Some(match executed {
            None => m,
            Some(e) => e.union(&m)?,
        });
    }
    if let Some(executed) = executed
        && !model.respects(&executed)?
    {
        return Err(Failure::Wrong(
            "isl's loops run statement instances in an order that breaks a dependence",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isl::Ctx;

    fn id(n: &str) -> AstExpr {
        AstExpr::Id(n.to_string())
    }

    /// The condition `c` on `c0`, read by isl as the relation `a = c0`
    /// under it, is `want`.
    fn assert_same_relation(c: &str, want: &str) {
        let ctx = Ctx::new();
        let m = UnionMap::parse(
            &ctx,
            &format!("[m] -> {{ S0[a] -> [c0] : {c} and a = c0 }}"),
        )
        .unwrap();
        let want = UnionMap::parse(&ctx, want).unwrap();
        assert!(m.is_equal(&want).unwrap(), "{c}");
    }

    #[test]
    fn bounds_become_conjunctions_isl_reads() {
        // c0 <= min(m + 1, -961 * floord(m + 30, 32))
        let bound = AstExpr::Op(
            AstOp::Min,
            vec![
                AstExpr::Op(AstOp::Add, vec![id("m"), AstExpr::Int(1)]),
                AstExpr::Op(
                    AstOp::Mul,
                    vec![
                        AstExpr::Int(-961),
                        AstExpr::Op(
                            AstOp::FdivQ,
                            vec![
                                AstExpr::Op(AstOp::Add, vec![id("m"), AstExpr::Int(30)]),
                                AstExpr::Int(32),
                            ],
                        ),
                    ],
                ),
            ],
        );
        let c = cond_text(&AstExpr::Op(AstOp::Le, vec![id("c0"), bound])).unwrap();
        assert_eq!(c, "c0 <= (m + 1) and c0 <= (-961 * floor((m + 30) / 32))");
        assert_same_relation(
            &c,
            "[m] -> { S0[a] -> [a] : a <= m + 1 and a <= -961 * floor((m + 30) / 32) }",
        );
    }

    /// isl writes `… || 1` where a disjunct always holds (adi with the
    /// time loop kept, `outer=1`): the constant is read as `true`.
    #[test]
    fn a_constant_disjunct_is_read_as_true() {
        let c = cond_text(&AstExpr::Op(
            AstOp::Or,
            vec![
                AstExpr::Op(AstOp::Ge, vec![id("m"), AstExpr::Int(2)]),
                AstExpr::Int(1),
            ],
        ))
        .unwrap();
        assert_eq!(c, "((m >= 2) or true)");
        assert_same_relation(&c, "[m] -> { S0[a] -> [a] }");
        assert_eq!(cond_text(&AstExpr::Int(0)).unwrap(), "false");
        assert_same_relation("(c0 > m or false)", "[m] -> { S0[a] -> [a] : a > m }");
    }

    #[test]
    fn selects_are_lifted_out_of_conditions() {
        // c0 >= (m >= 2 ? m : 1)
        let sel = AstExpr::Op(
            AstOp::Select,
            vec![
                AstExpr::Op(AstOp::Ge, vec![id("m"), AstExpr::Int(2)]),
                id("m"),
                AstExpr::Int(1),
            ],
        );
        let c = cond_text(&AstExpr::Op(AstOp::Ge, vec![id("c0"), sel])).unwrap();
        assert_same_relation(
            &c,
            "[m] -> { S0[a] -> [a] : (m >= 2 and a >= m) or (m < 2 and a >= 1) }",
        );
    }
}
