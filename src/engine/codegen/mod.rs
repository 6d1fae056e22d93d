//! Code generation: isl's AST of a schedule, turned into C by our own
//! emitter, with the post-passes of the paper (section 2.6, steps 7–9):
//! SIMD marks on vectorizable innermost loops, OpenMP on the outermost
//! parallel loop of each nest, and unroll-and-jam of the two innermost
//! loops. Every mark rests on a dependence test made while the AST is
//! built (see [`Fact`]), never on the scheduler's word alone.
//!
//! `mod.rs` builds and checks the AST ([`lower`]) and emits a
//! configuration's C ([`emit`]); `tree.rs` is the generated code as an
//! owned tree, `check.rs` its translation validation, `marks.rs` the
//! post-passes, `regblock/` register blocking of contractions (beyond the
//! paper's space), `print.rs` the C printer and `expr.rs` its expressions.

mod alias;
mod check;
mod copies;
pub mod expr;
mod frame;
mod marks;
mod print;
mod reduce;
mod regblock;
pub mod shape;
pub use alias::alias_check_c;
mod tree;

use crate::config::Config;
use crate::engine::model::{EngineError, Model};
use crate::frontend::Replacement;
use crate::frontend::scop::Scop;
use crate::isl::{self, AstExpr, IslError, Schedule, Set, UnionMap};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write;

use copies::{ArrayCopy, Copy};
use frame::{allocate_expanded, free_expanded, guarded, team_prologue};
pub(crate) use marks::{affine_of, compose};
use marks::{mark_omp, mark_simd, mark_unroll};
pub(crate) use print::c_name;
use print::{Printer, collect_bodies, identifiers};
use tree::{Node, convert};

/// What the dependences say about one generated loop, given the loops
/// around it. Each is computed the first time a pass asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fact {
    /// No dependence is carried by this loop: iterations may run in any
    /// order or at once.
    Parallel = 0,
    /// This loop and its parent carry only non-negative distances: they
    /// may be interchanged, tiled, or unroll-and-jammed.
    JamWithParent = 1,
    /// No dependence carried by the parent has a non-zero distance along
    /// this loop: it stays parallel after unroll-and-jam of the parent.
    ParallelAfterJam = 2,
    /// [`Fact::Parallel`] once the reductions' own dependences are set
    /// aside (`Dependences::reduction`): parallel as a reduction.
    ParallelButReductions = 3,
}

/// The distances that would falsify `fact` for a loop at depth `d`, as
/// boxes (see [`Set::boxes_like`]); `None` when the fact cannot hold at
/// that depth.
fn counterexamples(fact: Fact, d: usize) -> Option<Vec<Vec<isl::Bound>>> {
    const ZERO: isl::Bound = (Some(0), Some(0));
    const NEG: isl::Bound = (None, Some(-1));
    const POS: isl::Bound = (Some(1), None);
    const ANY: isl::Bound = (None, None);
    let (prefix, tails): (usize, Vec<Vec<isl::Bound>>) = match fact {
        // me != 0
        Fact::Parallel | Fact::ParallelButReductions if d >= 1 => {
            (d - 1, vec![vec![NEG], vec![POS]])
        }
        // parent < 0 or me < 0
        Fact::JamWithParent if d >= 2 => (d - 2, vec![vec![NEG, ANY], vec![ANY, NEG]]),
        // parent > 0 and me != 0
        Fact::ParallelAfterJam if d >= 2 => (d - 2, vec![vec![POS, NEG], vec![POS, POS]]),
        _ => return None,
    };
    Some(
        tails
            .into_iter()
            .map(|tail| std::iter::repeat_n(ZERO, prefix).chain(tail).collect())
            .collect(),
    )
}

/// A loop's dependence distances.
#[derive(Clone)]
enum Distances<'c> {
    /// No dependence between the loop's instances.
    Independent,
    /// The distances and the loop's depth.
    Known(Set<'c>, usize),
    /// isl could not tell: nothing is assumed.
    Unknown,
}

/// Which dependences a loop's distances are of: the model's, the model's
/// but the reductions' own, every one (with the memory dependences a
/// privatized model dropped).
const ALL: usize = 0;
const BUT_REDUCTIONS: usize = 1;
const FULL: usize = 2;

/// The generated loops of one schedule, before the post-passes: what
/// every configuration sharing that schedule starts from. Dependence
/// facts of a loop are computed when a pass first asks for them.
pub struct Lowered<'m, 'c> {
    model: &'m Model<'c>,
    nodes: Vec<Node>,
    /// The run-time check of the model's assumed context, when it is not
    /// every parameter value.
    guard: Option<AstExpr>,
    /// Per loop: statement instances to the loop's schedule dimensions.
    schedules: Vec<UnionMap<'c>>,
    /// Per loop: its dependence distances, once computed; with and
    /// without the reductions' own, and (with privatized scalars) with
    /// the memory dependences the privatized model dropped.
    distances: RefCell<Vec<[Option<Distances<'c>>; 3]>>,
    /// Per loop, with privatized scalars (and arrays): those it writes,
    /// when each can have a copy per iteration (`None`: one cannot), once
    /// computed.
    private: RefCell<Vec<Option<Option<Vec<Copy>>>>>,
    /// Per loop and [`Fact`]: the answer, once computed.
    known: RefCell<Vec<[Option<bool>; 4]>>,
}

impl<'c> Lowered<'_, 'c> {
    /// Whether `fact` holds for a loop; nothing is assumed when it cannot
    /// be told.
    fn holds(&self, info: Option<usize>, fact: Fact) -> bool {
        let Some(k) = info else {
            return false;
        };
        if let Some(v) = self.known.borrow()[k][fact as usize] {
            return v;
        }
        // A loop that writes a privatized variable runs in parallel with
        // copies of it, or without when even the memory dependences the
        // privatized model dropped allow it (a temporary array's elements
        // written once per iteration, read after the loop).
        let v = self.decide(k, fact).unwrap_or(false)
            && match fact {
                Fact::Parallel => {
                    self.private_in(k).is_some()
                        || self
                            .decide_with(k, FULL, &|d| counterexamples(Fact::Parallel, d))
                            .unwrap_or(false)
                }
                Fact::ParallelButReductions => self.private_in(k).is_some(),
                Fact::JamWithParent | Fact::ParallelAfterJam => true,
            };
        self.known.borrow_mut()[k][fact as usize] = Some(v);
        v
    }

    /// With privatized scalars (and arrays): the ones loop `k` writes,
    /// when each can have a copy per iteration (`None` when one cannot:
    /// the loop is not parallel then). Without, always `Some` and empty.
    fn private_in(&self, k: usize) -> Option<Vec<Copy>> {
        let Some(p) = &self.model.private else {
            return Some(Vec::new());
        };
        if let Some(v) = &self.private.borrow()[k] {
            return v.clone();
        }
        let v = self.copies(p, k).unwrap_or(None);
        self.private.borrow_mut()[k] = Some(v.clone());
        v
    }

    /// The privatized scalars and arrays a loop declares for itself once
    /// it is marked parallel (empty without privatization).
    fn private_names(&self, info: Option<usize>) -> Vec<Copy> {
        info.and_then(|k| self.private_in(k)).unwrap_or_default()
    }

    /// Whether a loop would copy an array per iteration if it ran in
    /// parallel: no vector loop (a copy per lane) nor SIMD reduction does.
    fn copies_arrays(&self, info: Option<usize>) -> bool {
        self.private_names(info).iter().any(|c| c.array.is_some())
    }

    /// Whether a loop and the two around it are fully permutable given
    /// the loops outside them: no dependence they carry has a negative
    /// distance along any of the three (register blocking rests on it).
    fn permutable3(&self, info: Option<usize>) -> bool {
        const ZERO: isl::Bound = (Some(0), Some(0));
        const NEG: isl::Bound = (None, Some(-1));
        const ANY: isl::Bound = (None, None);
        let Some(k) = info else {
            return false;
        };
        self.decide_with(k, FULL, &|d| {
            (d >= 3).then(|| {
                [[NEG, ANY, ANY], [ANY, NEG, ANY], [ANY, ANY, NEG]]
                    .iter()
                    .map(|tail| {
                        std::iter::repeat_n(ZERO, d - 3)
                            .chain(tail.iter().copied())
                            .collect()
                    })
                    .collect()
            })
        })
        .unwrap_or(false)
    }

    fn decide(&self, k: usize, fact: Fact) -> Result<bool, IslError> {
        let which = match fact {
            Fact::Parallel => ALL,
            Fact::ParallelButReductions => BUT_REDUCTIONS,
            // Unroll-and-jam knows nothing of private copies.
            Fact::JamWithParent | Fact::ParallelAfterJam => FULL,
        };
        self.decide_with(k, which, &|d| counterexamples(fact, d))
    }

    /// Whether no distance of loop `k` (of the dependences `which` names:
    /// [`ALL`], [`BUT_REDUCTIONS`] or [`FULL`]) lies in the boxes
    /// `bad(depth)` gives (`None`: the question has no answer at that
    /// depth).
    fn decide_with(
        &self,
        k: usize,
        which: usize,
        bad: &dyn Fn(usize) -> Option<Vec<Vec<isl::Bound>>>,
    ) -> Result<bool, IslError> {
        // Without privatized scalars every dependence is in the model's.
        let which = if which == FULL && self.model.private.is_none() {
            ALL
        } else {
            which
        };
        if self.distances.borrow()[k][which].is_none() {
            // The build's schedule nests one level per loop; flattened,
            // the last dimension is this loop.
            let found = match which {
                BUT_REDUCTIONS => self.model.distances_but_reductions(&self.schedules[k]),
                FULL => self.model.distances_full(&self.schedules[k]),
                _ => self.model.distances(&self.schedules[k]),
            };
            let d = match found {
                Ok(Some((set, d))) => Distances::Known(set, d),
                Ok(None) => Distances::Independent,
                Err(_) => Distances::Unknown,
            };
            self.distances.borrow_mut()[k][which] = Some(d);
        }
        let cache = self.distances.borrow();
        let (deltas, d) = match &cache[k][which] {
            Some(Distances::Known(set, d)) => (set, *d),
            Some(Distances::Independent) => return Ok(true),
            _ => return Ok(false),
        };
        let Some(boxes) = bad(d) else {
            return Ok(false);
        };
        let bad = deltas.boxes_like(&boxes)?;
        deltas.intersect(&bad)?.is_empty()
    }
}

impl Lowered<'_, '_> {
    /// Whether loop `info` carries none of reduction statement `st`'s own
    /// dependences (two updates of one element): each element's updates
    /// then run within one iteration of the loop, which does not reduce
    /// it. `false` when it cannot be told.
    fn keeps_updates_within(
        &self,
        info: Option<usize>,
        scop: &crate::frontend::scop::Scop,
        st: &crate::frontend::scop::Statement,
    ) -> bool {
        let Some(k) = info else {
            return false;
        };
        let within = || -> Result<bool, IslError> {
            let mine = isl::UnionSet::parse(
                self.model.ctx,
                &format!(
                    "[{}] -> {{ {}[{}] }}",
                    crate::frontend::scop::isl_names(&scop.parameters),
                    st.name(),
                    crate::frontend::scop::isl_names(&st.iterators)
                ),
            )?;
            let own = self.model.deps.reduction.intersect_domain(&mine)?;
            match Model::distances_of(&own, &self.schedules[k])? {
                None => Ok(true),
                Some((deltas, d)) => match counterexamples(Fact::Parallel, d) {
                    Some(boxes) => deltas.intersect(&deltas.boxes_like(&boxes)?)?.is_empty(),
                    None => Ok(false),
                },
            }
        };
        within().unwrap_or(false)
    }
}

/// Generates the AST of `schedule`, remembering each loop's schedule.
pub fn lower<'m, 'c>(
    model: &'m Model<'c>,
    scop_index: usize,
    schedule: &Schedule<'c>,
) -> Result<Lowered<'m, 'c>, EngineError> {
    let (tree, schedules) =
        isl::build_ast(schedule, &model.context, &mut |b| Ok(b.schedule.clone()))?;
    let mut nodes = Vec::new();
    convert(tree, &mut nodes)?;
    if let Err(f) = check::check(model, &nodes) {
        return Err(match f {
            check::Failure::Wrong(what) => EngineError::Internal {
                scop: scop_index,
                reason: format!("{what}; refusing to emit them (an isl code generation bug)"),
            },
            check::Failure::Unreadable(what) => EngineError::Unsupported {
                scop: scop_index,
                reason: format!("the generated loops cannot be checked (isl expression {what})"),
            },
            check::Failure::Isl(e) => e.into(),
        });
    }
    let guard = match &model.guard {
        Some(set) => Some(isl::expr_from_set(set)?),
        None => None,
    };
    let n = schedules.len();
    Ok(Lowered {
        model,
        nodes,
        guard,
        schedules,
        distances: RefCell::new(vec![[None, None, None]; n]),
        private: RefCell::new(vec![None; n]),
        known: RefCell::new(vec![[None; 4]; n]),
    })
}

/// The C text of a SCoP's new body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Emitted {
    pub text: String,
    /// Whether it contains an OpenMP directive (it must be compiled with
    /// OpenMP to run in parallel).
    pub openmp: bool,
    /// What was asked for and not done, with the reason (register
    /// blocking of a nest the dependences or the statements do not allow,
    /// separate unroll-and-jam factors a nest does not take).
    pub notes: Vec<String>,
}

impl Emitted {
    /// What replaces the SCoP's region: the new body, with the helper
    /// macros it may use defined in front of the `#pragma scop` line and
    /// undefined after the `#pragma endscop` line (no directive inside the
    /// region: a program polytune wrote reads again).
    pub fn replacement(&self) -> Replacement {
        Replacement {
            before: expr::helper_defines(),
            body: self.text.clone(),
            after: expr::helper_undefs(),
        }
    }
}

/// The C text replacing the body of `scop`, with the post-passes `config`
/// asks for (the helper macros it uses are defined outside it, see
/// [`Emitted::replacement`]). `indent` is the SCoP's indentation.
pub fn emit(scop: &Scop, lowered: &Lowered<'_, '_>, config: &Config, indent: &str) -> Emitted {
    let (nodes, notes) = marked(scop, lowered, config);
    let mut p = printer(scop);
    p.cyclic = config.cyclic;
    let _ = writeln!(p.out, "{indent}/* polytune: {config} */");
    let single = team_prologue(&mut p, scop, &nodes, indent);
    // Values the SCoP reads from memory it never writes are parameters,
    // loaded once here (the original in the fallback reads them itself).
    let loads = scop.invariant_declarations(&format!("{indent}  "));
    let indent = &if loads.is_empty() {
        indent.to_string()
    } else {
        let _ = writeln!(p.out, "{indent}{{");
        p.out.push_str(&loads);
        format!("{indent}  ")
    };
    // Expanded scalars' arrays, allocated before the new code and freed
    // after it; the original runs when they cannot be.
    let outer = indent;
    let expanded = &scop.expanded;
    let inner = format!("{indent}    ");
    let indent = if expanded.is_empty() {
        indent
    } else {
        allocate_expanded(&mut p, scop, indent);
        &inner
    };
    guarded(&mut p, scop, lowered, &nodes, indent, single);
    if !expanded.is_empty() {
        free_expanded(&mut p, scop, outer);
    }
    let indent = outer;
    if !loads.is_empty() {
        let _ = writeln!(p.out, "{}}}", &indent[2..]);
    }
    Emitted {
        text: p.out,
        openmp: p.openmp,
        notes,
    }
}

/// The generated loops of `lowered` with the marks of `config`'s
/// post-passes, as [`emit`] prints them, and the notes of what was asked
/// for and not done.
pub(crate) fn shape(
    scop: &Scop,
    lowered: &Lowered<'_, '_>,
    config: &Config,
) -> (Vec<shape::ShapeNode>, Vec<String>) {
    let (nodes, notes) = marked(scop, lowered, config);
    (shape::view(scop, config.cyclic, &nodes), notes)
}

/// The lowered nodes with the marks of `config`'s post-passes (SIMD,
/// OpenMP, register blocking, unrolling, reductions), and the notes of
/// what was asked for and not done.
fn marked(scop: &Scop, lowered: &Lowered<'_, '_>, config: &Config) -> (Vec<Node>, Vec<String>) {
    let mut nodes = lowered.nodes.clone();
    if config.simd {
        mark_simd(&mut nodes, scop, lowered);
    }
    if config.omp {
        mark_omp(&mut nodes, lowered);
    }
    let mut notes = match config.regblock {
        Some(tile) => regblock::mark_regblock(&mut nodes, tile, scop, lowered),
        None => Vec::new(),
    };
    if config.unroll.is_some() {
        let why = mark_unroll(&mut nodes, config.unroll, lowered);
        // The paper's factor is applied where it can be, silently.
        if !config.unroll.is_paper() {
            notes.extend(why);
        }
    }
    if config.reduce.on() {
        let scheduled = config.reduce == crate::config::Reductions::Scheduled;
        reduce::mark_reductions(&mut nodes, scop, lowered, config.omp, scheduled);
    }
    (nodes, notes)
}

/// The printer of the SCoP's new code: its loop counters and
/// accumulators named apart from the SCoP's identifiers.
fn printer(scop: &Scop) -> Printer<'_> {
    let ids = identifiers(scop);
    let clash = ids.iter().any(|i| {
        i.strip_prefix('c')
            .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
    });
    let mut bodies = HashMap::new();
    collect_bodies(&scop.body, &mut bodies);
    Printer {
        scop,
        bodies,
        prefix: if clash {
            "polytune_c".into()
        } else {
            "c".into()
        },
        out: String::new(),
        team: false,
        openmp: false,
        acc: if ids.iter().any(|i| i.starts_with("acc")) {
            "polytune_acc".into()
        } else {
            "acc".into()
        },
        renamed: HashMap::new(),
        cyclic: false,
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::frontend::{Options, parse_source};
    use std::path::Path;

    fn resident_kib() -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// The runs themselves; ignored by default because resident memory is
    /// per process: other tests running beside it would inflate it. The
    /// test below runs it alone in a child process.
    #[test]
    #[ignore]
    fn leak_probe() {
        let text = "void f(int n, double A[9][9]) { int i, j;\n#pragma scop\nfor (i = 1; i < n; i++) for (j = 1; j < n; j++) A[i][j] = A[i-1][j] + A[i][j-1];\n#pragma endscop\n}\n";
        let src = parse_source(Path::new("t.c"), text.to_string(), &Options::default()).unwrap();
        let config: Config = "fuse=max,tile=32x32,wave=1,omp=1,prevec=1,simd=1,uj=2"
            .parse()
            .unwrap();
        let run = || {
            let out = crate::engine::pipeline::optimize(&src, &config, None).unwrap();
            assert!(out.skipped.is_empty());
        };
        for _ in 0..20 {
            run();
        }
        let before = resident_kib().unwrap_or(0);
        for _ in 0..200 {
            run();
        }
        let after = resident_kib().unwrap_or(0);
        println!("rss-kib: {before} {after}");
    }

    #[test]
    fn the_whole_pipeline_does_not_leak() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "engine::codegen::tests::leak_probe",
                "--nocapture",
                "--test-threads=1",
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        let line = stdout
            .lines()
            .find_map(|l| l.split_once("rss-kib: ").map(|(_, v)| v))
            .expect("the probe prints its resident memory");
        let v: Vec<u64> = line
            .split_whitespace()
            .take(2)
            .map(|x| x.parse().unwrap())
            .collect();
        assert!(
            v[1] < v[0] + 8_000,
            "resident memory grew from {} KiB to {} KiB over 200 runs",
            v[0],
            v[1]
        );
    }
}
