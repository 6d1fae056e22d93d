//! Program generation: a random program drawn until it runs legally at
//! its parameter sets, its arrays sized so that every access is in
//! bounds, and the output the interpreter computed; and the random
//! configurations it is tried under.

use super::program::{AExpr, Access, GenOptions, Layout, Lhs, Program, Stmt, VExpr};
use super::{interp, overlap, program, program_seed};
use crate::config::Config;
use crate::lab::rng::SplitMix64;

/// The SCoP's integer arithmetic (iterators, parameters, literals and
/// casts in bounds, conditions and subscripts) involves an unsigned type.
pub fn uses_unsigned(p: &Program) -> bool {
    use program::Cond;
    pub(super) fn a(e: &AExpr) -> bool {
        match e {
            AExpr::Lit(_, t) => !t.signed(),
            AExpr::Var(_) => false,
            AExpr::Cast(t, x) => !t.signed() || a(x),
            AExpr::Neg(x) | AExpr::Mul(_, x) | AExpr::Div(x, _) => a(x),
            AExpr::Add(x, y) | AExpr::Sub(x, y) | AExpr::Min(x, y) | AExpr::Max(x, y) => {
                a(x) || a(y)
            }
        }
    }
    pub(super) fn c(e: &Cond) -> bool {
        match e {
            Cond::Cmp(_, x, y) => a(x) || a(y),
            Cond::And(x, y) | Cond::Or(x, y) => c(x) || c(y),
            Cond::Not(x) => c(x),
        }
    }
    pub(super) fn v(e: &VExpr) -> bool {
        match e {
            VExpr::Read(acc) => acc.subs.iter().any(a),
            VExpr::Add(x, y) | VExpr::Sub(x, y) | VExpr::Mul(x, y) => v(x) || v(y),
            _ => false,
        }
    }
    pub(super) fn s(body: &[Stmt]) -> bool {
        body.iter().any(|st| match st {
            Stmt::For(l) => a(&l.init) || c(&l.cond) || s(&l.body),
            Stmt::If { cond, then, other } => c(cond) || s(then) || other.as_deref().is_some_and(s),
            Stmt::IfData { read, then } => read.subs.iter().any(a) || s(then),
            Stmt::Assign { lhs, rhs, .. } => {
                matches!(lhs, Lhs::Array(acc) if acc.subs.iter().any(a)) || v(rhs)
            }
        })
    }
    p.vars.iter().any(|x| !x.ty.signed()) || s(&p.body)
}

/// A generated program, legal at its parameter sets, with the output the
/// interpreter computed at each.
pub struct Generated {
    pub program: Program,
    pub text: String,
    pub expected: Vec<String>,
    /// `--alias`: the layouts of the kernel's calls with overlapping
    /// arrays, after its call with them apart (their dumps follow that
    /// call's in `expected`).
    pub overlaps: Vec<Layout>,
}

fn for_each_access(body: &mut [Stmt], f: &mut dyn FnMut(&mut Access)) {
    pub(super) fn v(e: &mut VExpr, f: &mut dyn FnMut(&mut Access)) {
        match e {
            VExpr::Read(a) => f(a),
            VExpr::Add(x, y) | VExpr::Sub(x, y) | VExpr::Mul(x, y) => {
                v(x, f);
                v(y, f);
            }
            _ => {}
        }
    }
    for s in body {
        match s {
            Stmt::For(l) => for_each_access(&mut l.body, f),
            Stmt::If { then, other, .. } => {
                for_each_access(then, f);
                if let Some(o) = other {
                    for_each_access(o, f);
                }
            }
            Stmt::IfData { read, then } => {
                f(read);
                for_each_access(then, f);
            }
            Stmt::Assign { lhs, rhs, .. } => {
                if let Lhs::Array(a) = lhs {
                    f(a);
                }
                v(rhs, f);
            }
        }
    }
}

const MAX_EXTENT: i128 = 400;
const MAX_ARRAY: usize = 6000;
const MAX_TOTAL: usize = 12000;

/// Sizes the arrays after a discovery run at every parameter set,
/// shifting subscripts that go below zero; `None` if too large.
fn size_arrays(p: &mut Program) -> Option<()> {
    let mut ranges: Vec<Vec<Option<(i128, i128)>>> =
        p.arrays.iter().map(|a| vec![None; a.rank]).collect();
    for set in p.param_sets.clone() {
        let mut m = interp::Machine::new(p, &set, false);
        m.run().ok()?;
        for (a, r) in m.ranges().into_iter().enumerate() {
            for (d, x) in r.into_iter().enumerate() {
                if let Some((lo, hi)) = x {
                    ranges[a][d] = Some(match ranges[a][d] {
                        None => (lo, hi),
                        Some((l, h)) => (l.min(lo), h.max(hi)),
                    });
                }
            }
        }
    }
    let mut offsets = vec![];
    let mut total = 0;
    for (a, r) in ranges.iter().enumerate() {
        let mut ext = vec![];
        let mut off = vec![];
        for x in r {
            let (lo, hi) = x.unwrap_or((0, 0));
            let o = if lo < 0 { -lo } else { 0 };
            let e = hi + o + 1;
            if e > MAX_EXTENT {
                return None;
            }
            ext.push(e as usize);
            off.push(o as i64);
        }
        let n: usize = ext.iter().product();
        if n > MAX_ARRAY {
            return None;
        }
        total += n;
        p.arrays[a].extents = ext;
        offsets.push(off);
    }
    if total > MAX_TOTAL {
        return None;
    }
    let mut body = std::mem::take(&mut p.body);
    for_each_access(&mut body, &mut |acc: &mut Access| {
        for (d, s) in acc.subs.iter_mut().enumerate() {
            let o = offsets[acc.array][d];
            if o > 0 {
                let old = std::mem::replace(s, AExpr::Lit(0, program::IntTy::Int));
                *s = AExpr::Add(Box::new(old), Box::new(AExpr::Lit(o, program::IntTy::Int)));
            }
        }
    });
    p.body = body;
    Some(())
}

/// Program `index` of a run seeded with `seed`, with `sets` parameter
/// sets (None if no legal one was found in 100 draws). With `alias`, the
/// same program printed for `--alias` (arrays as pointer parameters, no
/// pragmas) with its overlapping calls, drawn from a stream of their own
/// (the program and the random stream returned are those without).
pub fn generate(
    seed: u64,
    index: usize,
    sets: usize,
    gopts: GenOptions,
    alias: bool,
) -> Option<(Generated, SplitMix64)> {
    let mut rng = SplitMix64::new(program_seed(seed, index));
    for _ in 0..100 {
        let mut p = program::generate(&mut rng, gopts);
        // Parameter sets: each drawn until the program runs legally.
        let mut chosen = Vec::new();
        for _ in 0..sets {
            for _ in 0..4 {
                let v = program::random_params(&mut rng, &p, gopts);
                let mut m = interp::Machine::new(&p, &v, false);
                if m.run().is_ok() {
                    chosen.push(v);
                    break;
                }
            }
        }
        if chosen.len() < sets {
            continue;
        }
        p.param_sets = chosen;
        if size_arrays(&mut p).is_none() {
            continue;
        }
        let mut expected = Vec::new();
        for set in &p.param_sets {
            let mut m = interp::Machine::new(&p, set, true);
            if m.run().is_err() {
                break;
            }
            expected.push(m.dump());
        }
        if expected.len() < sets {
            continue;
        }
        if !alias {
            let text = program::print_program(&p);
            let generated = Generated {
                program: p,
                text,
                expected,
                overlaps: Vec::new(),
            };
            return Some((generated, rng));
        }
        let mut own = SplitMix64::new(program_seed(seed, index) ^ 0xA11A_5ED0_0F5E_7CA1);
        let overlaps = overlap::overlaps(&p, &mut own);
        for (set, out) in p.param_sets.iter().zip(expected.iter_mut()) {
            for l in &overlaps {
                let mut m = interp::Machine::overlapping(&p, set, l);
                // `overlaps` ran each at every set.
                m.run().ok()?;
                out.push_str(&m.dump());
            }
        }
        let text = program::print_alias_program(&p, &overlaps);
        let generated = Generated {
            program: p,
            text,
            expected,
            overlaps,
        };
        return Some((generated, rng));
    }
    None
}

/// Distinct random configurations of the paper's space, or drawn
/// uniformly from the extended space with every target's packed register
/// tiles ([`crate::engine::extended::Extended::every_target`]).
pub fn pick_configs(rng: &mut SplitMix64, k: usize, extended: bool) -> Vec<Config> {
    let mut out = Vec::new();
    if extended {
        let space = crate::engine::extended::Extended::every_target();
        let n = space.len() as usize;
        while out.len() < k.min(n) {
            let c = space.config(rng.below(n) as u64);
            if !out.contains(&c) {
                out.push(c);
            }
        }
        return out;
    }
    let mut all = Config::all();
    while out.len() < k && !all.is_empty() {
        out.push(all.swap_remove(rng.below(all.len())));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend;
    use std::path::Path;

    /// The extended draws reach the fields only the refinement (or a
    /// user) sets: `priv=2`, `red=2`, `cyc=1`, `outer=1`, `dist=1`.
    #[test]
    fn the_extended_draws_include_the_refinements_fields() {
        let mut rng = SplitMix64::new(44);
        let drawn: Vec<Config> = (0..40)
            .flat_map(|_| pick_configs(&mut rng, 6, true))
            .collect();
        let share = |f: &dyn Fn(&Config) -> bool| drawn.iter().filter(|c| f(c)).count();
        for (name, n) in [
            ("outer=1", share(&|c| c.outer)),
            ("dist=1", share(&|c| c.distribute)),
            ("cyc=1", share(&|c| c.cyclic)),
            (
                "priv=2",
                share(&|c| c.privatize == crate::config::Privatize::Arrays),
            ),
            (
                "red=2",
                share(&|c| c.reduce == crate::config::Reductions::Scheduled),
            ),
        ] {
            assert!(n > drawn.len() / 5, "{name}: {n} of {}", drawn.len());
        }
    }

    /// The generator writes macro calls whose argument an iterator
    /// substitution must keep whole (`PT_SQ(i)`, `#define PT_SQ(x) x*x`).
    #[test]
    fn some_programs_square_an_iterator_through_a_pasting_macro() {
        let with = (0..200)
            .filter_map(|i| generate(3, i, 2, GenOptions::default(), false))
            .filter(|(g, _)| g.text.contains("PT_SQ(") && g.text.contains("#define PT_SQ(x) x*x"))
            .count();
        assert!(with >= 5, "{with} of 200 programs");
        // Element and index macros, as libraries write them.
        let macros = (0..50)
            .filter_map(|i| generate(3, i, 2, GenOptions::default(), false))
            .filter(|(g, _)| g.text.contains("PT_AT") && g.text.contains("[PT_IX("))
            .count();
        assert!(macros >= 5, "{macros} of 50 programs");
        // Conditions on data (`if (B[i] > 0) { ... }`).
        let data = (0..50)
            .filter_map(|i| generate(3, i, 2, GenOptions::default(), false))
            .filter(|(g, _)| g.text.contains("] > 0) {") || g.text.contains(") > 0) {"))
            .count();
        assert!(data >= 5, "{data} of 50 programs");
    }

    #[test]
    fn generation_is_deterministic_and_legal() {
        for i in 0..30 {
            let (a, _) = generate(7, i, 3, GenOptions::default(), false).expect("a legal program");
            let (b, _) = generate(7, i, 3, GenOptions::default(), false).expect("a legal program");
            assert_eq!(a.text, b.text);
            assert_eq!(a.expected, b.expected);
            let src = frontend::parse_source(
                Path::new("generated.c"),
                a.text.clone(),
                &frontend::Options::default(),
            );
            assert!(src.is_ok(), "{}\n{:?}", a.text, src.err());
        }
    }

    #[test]
    fn the_generator_makes_the_known_hard_cases() {
        // Over a few hundred programs: zero and negative parameters,
        // unsigned comparisons, min/max bounds, negative steps.
        let (mut zero, mut negative, mut unsigned_cmp, mut minmax, mut down) = (0, 0, 0, 0, 0);
        for i in 0..80 {
            let Some((g, _)) = generate(11, i, 3, GenOptions::default(), false) else {
                continue;
            };
            let sets = &g.program.param_sets;
            zero += sets.iter().flatten().any(|&v| v == 0) as usize;
            negative += sets.iter().flatten().any(|&v| v < 0) as usize;
            unsigned_cmp += (g.text.contains("UL;") || g.text.contains("U;")) as usize;
            minmax += (g.text.contains("min(") || g.text.contains("max(")) as usize;
            down += g.text.contains("--)") as usize;
        }
        for (what, n) in [
            ("a zero parameter", zero),
            ("a negative parameter", negative),
            ("an unsigned literal bound", unsigned_cmp),
            ("min/max", minmax),
            ("a decreasing loop", down),
        ] {
            assert!(n >= 3, "only {n} of 80 programs have {what}");
        }
    }

    #[test]
    fn signed_only_programs_use_no_unsigned_arithmetic() {
        let signed = GenOptions {
            unsigned: false,
            nonpositive: false,
        };
        let mut unsigned_seen = 0;
        for i in 0..30 {
            let (g, _) = generate(3, i, 2, signed, false).expect("a legal program");
            assert!(!uses_unsigned(&g.program), "{}", g.text);
            assert!(g.program.param_sets.iter().flatten().all(|&v| v >= 1));
            let (d, _) = generate(3, i, 2, GenOptions::default(), false).expect("a legal program");
            unsigned_seen += uses_unsigned(&d.program) as usize;
        }
        assert!(unsigned_seen >= 5, "{unsigned_seen}");
    }
}
