//! The differential fuzzer (`polytune fuzz`): random legal SCoPs as
//! complete C programs, each transformed under random configurations
//! through the same path as `optimize --config`, compiled with gcc and
//! clang, run at several parameter values and thread counts, and
//! compared with the untransformed program built by the same compiler.
//!
//! A program is legal by construction and by proof: the generator
//! ([`program`]) writes affine loop nests over its own syntax tree, and
//! the interpreter ([`interp`]), which follows C's rules for signed and
//! unsigned arithmetic, runs it at every chosen parameter set before it
//! is emitted; arrays are then sized (and subscripts shifted) so that
//! every access is in bounds, and a program with a signed overflow or too
//! long a run is drawn again. The interpreter's output is also the
//! expected output of the compiled original (a check of the fuzzer
//! itself, reported as `oracle`).

pub mod interp;
pub mod program;

use crate::config::Config;
use crate::frontend;
use crate::lab::compiler::{Compiler, Family};
use crate::lab::confine;
use crate::lab::dump::{Dump, Tolerance};
use crate::lab::runner::{self, Exit};
pub use program::GenOptions;
pub use program::Program;
use program::{AExpr, Access, Lhs, Stmt, VExpr};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A run's limits: its deadline and the default memory limit.
fn limits(timeout: Duration) -> confine::Limits {
    confine::Limits::new(timeout, Some(confine::default_memory_limit()))
}

/// A small seeded generator (SplitMix64): the same seed gives the same
/// programs, configurations and parameters on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// The seed of program `index` of a run seeded with `seed`.
pub fn program_seed(seed: u64, index: usize) -> u64 {
    Rng::new(seed ^ (index as u64).wrapping_mul(0xA076_1D64_78BD_642F)).next_u64()
}

/// What the fuzzer cannot do at all (no compiler, no output directory).
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    #[error(transparent)]
    Compiler(#[from] crate::lab::compiler::CompilerError),
    #[error("cannot use {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid fuzz options: {0}")]
    Options(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> FuzzError + '_ {
    move |source| FuzzError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A variant text modifier for tests of the fuzzer itself (a deliberately
/// broken transformation must be reported).
pub type Tamper = fn(&Program, &str) -> String;

/// A fuzzing campaign.
#[derive(Clone)]
pub struct Options {
    pub seed: u64,
    /// Index of the first program (chunks of one long run).
    pub first: usize,
    pub programs: usize,
    /// Configurations per program (distinct, drawn from the whole space).
    pub configs: usize,
    /// Parameter sets per program.
    pub params: usize,
    pub compilers: Vec<Family>,
    pub threads: Vec<usize>,
    pub cflags: Vec<String>,
    /// Findings go to `out/findings`, scratch files to `out/work`.
    pub out: PathBuf,
    pub jobs: usize,
    pub timeout: Duration,
    /// Keep the scratch directory of every program.
    pub keep_work: bool,
    /// Progress and findings on stderr as they come.
    pub verbose: bool,
    pub tamper: Option<Tamper>,
    pub generator: GenOptions,
    /// Transform by running this polytune binary (`optimize FILE --config
    /// T -o OUT`, killed after `engine_timeout`) instead of calling the
    /// library in this process (which cannot be stopped if it hangs).
    pub polytune: Option<PathBuf>,
    pub engine_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seed: 1,
            first: 0,
            programs: 50,
            configs: 4,
            params: 3,
            compilers: vec![Family::Gcc, Family::Clang],
            threads: vec![1, 2],
            cflags: vec!["-O2".into()],
            out: PathBuf::from("polytune-fuzz"),
            jobs: 2,
            timeout: Duration::from_secs(20),
            keep_work: false,
            verbose: false,
            tamper: None,
            generator: GenOptions::default(),
            polytune: None,
            engine_timeout: Duration::from_secs(60),
        }
    }
}

/// Counts of a campaign. A pair is one program under one configuration;
/// it is `wrong`, `crashed`, ... if any of its builds or runs was.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Counts {
    pub programs: usize,
    /// Programs the generator could not make legal (drawn again 100 times).
    pub gave_up: usize,
    /// Generated programs the front end rejected.
    pub rejected: usize,
    pub pairs: usize,
    pub transformed: usize,
    /// Pairs the engine left unchanged with a reason.
    pub unchanged: usize,
    pub wrong: usize,
    pub crashed: usize,
    pub compile_errors: usize,
    pub engine_errors: usize,
    /// Compiled originals whose output differs from the interpreter's.
    pub oracle: usize,
    /// Originals that did not compile or run (a fuzzer bug).
    pub original_failed: usize,
    /// Variant runs compared.
    pub runs: usize,
    pub wrong_runs: usize,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.programs += o.programs;
        self.gave_up += o.gave_up;
        self.rejected += o.rejected;
        self.pairs += o.pairs;
        self.transformed += o.transformed;
        self.unchanged += o.unchanged;
        self.wrong += o.wrong;
        self.crashed += o.crashed;
        self.compile_errors += o.compile_errors;
        self.engine_errors += o.engine_errors;
        self.oracle += o.oracle;
        self.original_failed += o.original_failed;
        self.runs += o.runs;
        self.wrong_runs += o.wrong_runs;
    }

    /// Anything that is a finding.
    pub fn findings(&self) -> usize {
        self.rejected
            + self.wrong
            + self.crashed
            + self.compile_errors
            + self.engine_errors
            + self.oracle
            + self.original_failed
    }
}

/// One finding, saved with a reproducer.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// wrong, crash, timeout, compile-error, engine-error, engine-panic,
    /// frontend-rejected, oracle, original-failed.
    pub kind: String,
    pub program: usize,
    pub config: Option<String>,
    pub compiler: Option<Family>,
    pub detail: String,
    /// Features of the program and run that known bugs need (unsigned
    /// arithmetic in the SCoP, a parameter <= 0), to triage findings.
    pub suspects: Vec<String>,
    pub dir: PathBuf,
}

/// The SCoP's integer arithmetic (iterators, parameters, literals and
/// casts in bounds, conditions and subscripts) involves an unsigned type.
pub fn uses_unsigned(p: &Program) -> bool {
    use program::Cond;
    fn a(e: &AExpr) -> bool {
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
    fn c(e: &Cond) -> bool {
        match e {
            Cond::Cmp(_, x, y) => a(x) || a(y),
            Cond::And(x, y) | Cond::Or(x, y) => c(x) || c(y),
            Cond::Not(x) => c(x),
        }
    }
    fn v(e: &VExpr) -> bool {
        match e {
            VExpr::Read(acc) => acc.subs.iter().any(a),
            VExpr::Add(x, y) | VExpr::Sub(x, y) | VExpr::Mul(x, y) => v(x) || v(y),
            _ => false,
        }
    }
    fn s(body: &[Stmt]) -> bool {
        body.iter().any(|st| match st {
            Stmt::For(l) => a(&l.init) || c(&l.cond) || s(&l.body),
            Stmt::If { cond, then, other } => c(cond) || s(then) || other.as_deref().is_some_and(s),
            Stmt::Assign { lhs, rhs, .. } => {
                matches!(lhs, Lhs::Array(acc) if acc.subs.iter().any(a)) || v(rhs)
            }
        })
    }
    p.vars.iter().any(|x| !x.ty.signed()) || s(&p.body)
}

fn suspects(p: &Program, set: Option<usize>) -> Vec<String> {
    let mut v = Vec::new();
    if uses_unsigned(p) {
        v.push("unsigned".to_string());
    }
    if let Some(s) = set
        && p.param_sets[s].iter().any(|&x| x <= 0)
    {
        v.push("parameter<=0".to_string());
    }
    v
}

/// The result of a campaign.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub seed: u64,
    pub first: usize,
    pub configs: usize,
    pub params: usize,
    pub compilers: Vec<Family>,
    pub threads: Vec<usize>,
    pub counts: Counts,
    /// Why pairs were left unchanged, with how often.
    pub unchanged_reasons: BTreeMap<String, usize>,
    pub findings: Vec<Finding>,
}

impl Summary {
    /// Findings grouped by kind and suspects: (label, count, first dir).
    pub fn classes(&self) -> Vec<(String, usize, PathBuf)> {
        let mut m: BTreeMap<String, (usize, PathBuf)> = BTreeMap::new();
        for f in &self.findings {
            let label = if f.suspects.is_empty() {
                format!("{} (no known cause)", f.kind)
            } else {
                format!("{} [{}]", f.kind, f.suspects.join(", "))
            };
            m.entry(label).or_insert((0, f.dir.clone())).0 += 1;
        }
        m.into_iter().map(|(k, (n, d))| (k, n, d)).collect()
    }

    /// The final line.
    pub fn line(&self) -> String {
        let c = &self.counts;
        format!(
            "fuzz: {} program×configuration pairs ({} programs x {} configurations; x{} compilers x{} thread counts x{} parameter sets = {} runs), {} wrong, {} crashed, {} compile errors, {} engine errors, {} unchanged, {} rejected by the front end, {} oracle mismatches, {} originals failed, {} programs given up",
            c.pairs,
            c.programs,
            self.configs,
            self.compilers.len(),
            self.threads.len(),
            self.params,
            c.runs,
            c.wrong,
            c.crashed,
            c.compile_errors,
            c.engine_errors,
            c.unchanged,
            c.rejected,
            c.oracle,
            c.original_failed,
            c.gave_up
        )
    }
}

/// Compares a variant's output with the reference's: integers exactly,
/// doubles within 1e-9 relative.
pub fn compare_outputs(expected: &str, actual: &str) -> Result<(), String> {
    let e = Dump::parse(expected).map_err(|e| format!("reference output: {e}"))?;
    let a = Dump::parse(actual).map_err(|e| format!("variant output: {e}"))?;
    e.compare(
        &a,
        Tolerance {
            rtol: 1e-9,
            atol: 1e-12,
        },
    )
    .map_err(|m| m.to_string())
}

/// A generated program, legal at its parameter sets, with the output the
/// interpreter computed at each.
pub struct Generated {
    pub program: Program,
    pub text: String,
    pub expected: Vec<String>,
}

fn for_each_access(body: &mut [Stmt], f: &mut dyn FnMut(&mut Access)) {
    fn v(e: &mut VExpr, f: &mut dyn FnMut(&mut Access)) {
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
/// sets (None if no legal one was found in 100 draws).
pub fn generate(
    seed: u64,
    index: usize,
    sets: usize,
    gopts: GenOptions,
) -> Option<(Generated, Rng)> {
    let mut rng = Rng::new(program_seed(seed, index));
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
        let text = program::print_program(&p);
        return Some((
            Generated {
                program: p,
                text,
                expected,
            },
            rng,
        ));
    }
    None
}

/// Distinct random configurations.
pub fn pick_configs(rng: &mut Rng, k: usize) -> Vec<Config> {
    let mut all = Config::all();
    let mut out = Vec::new();
    while out.len() < k && !all.is_empty() {
        out.push(all.swap_remove(rng.below(all.len())));
    }
    out
}

struct Ctx<'a> {
    opts: &'a Options,
    compilers: Vec<Compiler>,
}

#[derive(Default)]
struct ProgramResult {
    counts: Counts,
    unchanged: BTreeMap<String, usize>,
    findings: Vec<Finding>,
}

fn compile(c: &Compiler, flags: &[String], src: &Path, exe: &Path) -> Result<(), String> {
    let out = Command::new(&c.program)
        .args(flags)
        .arg("-fopenmp")
        .arg(src)
        .arg("-o")
        .arg(exe)
        .arg("-lm")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", c.program.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn compile_command(c: &Compiler, flags: &[String], src: &str, exe: &str) -> String {
    format!(
        "{} {} -fopenmp {src} -o {exe} -lm",
        c.program.display(),
        flags.join(" ")
    )
}

fn shell_args(args: &[String]) -> String {
    args.join(" ")
}

/// What a failing variant run looked like.
struct Failure {
    kind: &'static str,
    set: usize,
    threads: usize,
    detail: String,
    actual: String,
}

impl Ctx<'_> {
    fn note(&self, msg: &str) {
        if self.opts.verbose {
            eprintln!("{msg}");
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn save(
        &self,
        kind: &str,
        index: usize,
        generated: &Generated,
        config: Option<(&Config, &str)>,
        compiler: Option<&Compiler>,
        detail: &str,
        run: Option<(&Failure, &str)>,
    ) -> Finding {
        let mut name = format!("{kind}-p{index:05}");
        if let Some(c) = compiler {
            name.push_str(&format!("-{}", c.name()));
        }
        if let Some((cfg, _)) = config {
            name.push_str(&format!("-{}", cfg.bits()));
        }
        let dir = self.opts.out.join("findings").join(&name);
        let suspects = suspects(&generated.program, run.map(|(f, _)| f.set));
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join("prog.c"), &generated.text);
        let mut sh = format!(
            "#!/bin/sh\n# polytune fuzz finding: {kind}\n# seed {} program {index}\n# {}\n",
            self.opts.seed,
            detail.lines().next().unwrap_or("")
        );
        sh.push_str("set -x\ncd \"$(dirname \"$0\")\"\nP=${POLYTUNE:-polytune}\n");
        if let Some((cfg, variant)) = config {
            let _ = std::fs::write(dir.join("variant.c"), variant);
            sh.push_str(&format!(
                "\"$P\" optimize prog.c --config {cfg} -o variant.c\n"
            ));
        }
        if let Some(c) = compiler {
            sh.push_str(&compile_command(c, &self.opts.cflags, "prog.c", "orig"));
            sh.push('\n');
            if config.is_some() {
                sh.push_str(&compile_command(
                    c,
                    &self.opts.cflags,
                    "variant.c",
                    "variant",
                ));
                sh.push('\n');
            }
        }
        let (set, threads) = run.map(|(f, _)| (f.set, f.threads)).unwrap_or((0, 1));
        let args = shell_args(&generated.program.args(set));
        sh.push_str(&format!(
            "# parameters: {}\n./orig {args} > expected.txt\n",
            generated.program.describe_params(set)
        ));
        if config.is_some() && compiler.is_some() {
            sh.push_str(&format!(
                "OMP_NUM_THREADS={threads} ./variant {args} > actual.txt\ncmp expected.txt actual.txt && echo same\n"
            ));
        }
        let _ = std::fs::write(dir.join("repro.sh"), sh);
        if let Some((f, expected)) = run {
            let _ = std::fs::write(dir.join("expected.txt"), expected);
            let _ = std::fs::write(dir.join("actual.txt"), &f.actual);
        }
        let mut info = format!("kind: {kind}\nseed: {}\nprogram: {index}\n", self.opts.seed);
        if let Some((cfg, _)) = config {
            info.push_str(&format!("config: {cfg} ({})\n", cfg.bits()));
        }
        if let Some(c) = compiler {
            info.push_str(&format!(
                "compiler: {} ({}) {}\n",
                c.name(),
                c.version,
                self.opts.cflags.join(" ")
            ));
        }
        for s in 0..generated.program.param_sets.len() {
            info.push_str(&format!(
                "parameter set {s}: {}\n",
                generated.program.describe_params(s)
            ));
        }
        info.push_str(&format!(
            "detail: {detail}\nsuspects: {}\n",
            suspects.join(", ")
        ));
        let _ = std::fs::write(dir.join("info.txt"), info);
        self.note(&format!(
            "fuzz: {kind}: program {index}{}{}: {} -> {}",
            compiler
                .map(|c| format!(" {}", c.name()))
                .unwrap_or_default(),
            config.map(|(c, _)| format!(" {c}")).unwrap_or_default(),
            detail.lines().next().unwrap_or(""),
            dir.display()
        ));
        Finding {
            kind: kind.to_string(),
            program: index,
            config: config.map(|(c, _)| c.to_string()),
            compiler: compiler.map(|c| c.family),
            detail: detail.to_string(),
            suspects,
            dir,
        }
    }

    fn program(&self, index: usize) -> ProgramResult {
        let opts = self.opts;
        let mut res = ProgramResult::default();
        res.counts.programs = 1;
        let Some((generated, mut rng)) = generate(opts.seed, index, opts.params, opts.generator)
        else {
            res.counts.gave_up = 1;
            return res;
        };
        let work = opts.out.join("work").join(format!("p{index:05}"));
        if std::fs::create_dir_all(&work).is_err() {
            res.counts.original_failed = 1;
            return res;
        }
        let prog = work.join("prog.c");
        let _ = std::fs::write(&prog, &generated.text);
        let src = match frontend::parse_source(
            &prog,
            generated.text.clone(),
            &frontend::Options::default(),
        ) {
            Ok(s) => s,
            Err(e) => {
                res.counts.rejected = 1;
                res.findings.push(self.save(
                    "frontend-rejected",
                    index,
                    &generated,
                    None,
                    None,
                    &e.to_string(),
                    None,
                ));
                self.cleanup(&work);
                return res;
            }
        };
        let configs = pick_configs(&mut rng, opts.configs);
        res.counts.pairs = configs.len();
        // The variants: Some(text) when transformed.
        let mut variants: Vec<Option<String>> = Vec::new();
        for (k, cfg) in configs.iter().enumerate() {
            let r = match &opts.polytune {
                None => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    crate::engine::pipeline::optimize(&src, cfg, None)
                }))
                .map(|r| r.map_err(|e| ("engine-error", e.to_string())))
                .map_err(|panic| {
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default()
                }),
                Some(bin) => Ok(self.optimize_with(bin, &prog, &work.join(format!("v{k}.c")), cfg)),
            };
            // An internal error is a finding, whether seen in-process or as
            // the child's exit code 3.
            let r = r.map(|o| {
                o.and_then(|o| match o.internal.is_empty() {
                    true => Ok(o),
                    false => Err(("engine-error", o.internal.join("\n"))),
                })
            });
            match r {
                Ok(Ok(outcome)) if outcome.skipped.is_empty() => {
                    res.counts.transformed += 1;
                    let text = match opts.tamper {
                        Some(t) => t(&generated.program, &outcome.text),
                        None => outcome.text,
                    };
                    variants.push(Some(text));
                }
                Ok(Ok(outcome)) => {
                    res.counts.unchanged += 1;
                    for s in &outcome.skipped {
                        let why = s
                            .split_once("left unchanged: ")
                            .map(|(_, w)| w)
                            .unwrap_or(s);
                        *res.unchanged.entry(reason_class(why)).or_default() += 1;
                    }
                    variants.push(None);
                }
                Ok(Err((kind, e))) => {
                    res.counts.engine_errors += 1;
                    res.findings.push(self.save(
                        kind,
                        index,
                        &generated,
                        Some((cfg, "")),
                        None,
                        &e,
                        None,
                    ));
                    variants.push(None);
                }
                Err(msg) => {
                    res.counts.engine_errors += 1;
                    res.findings.push(self.save(
                        "engine-panic",
                        index,
                        &generated,
                        Some((cfg, "")),
                        None,
                        &msg,
                        None,
                    ));
                    variants.push(None);
                }
            }
        }
        let mut wrong = vec![false; configs.len()];
        let mut crashed = vec![false; configs.len()];
        let mut broken = vec![false; configs.len()];
        let mut oracle = false;
        let mut original_failed = false;
        for comp in &self.compilers {
            let orig_exe = work.join(format!("orig-{}", comp.name()));
            if let Err(e) = compile(comp, &opts.cflags, &prog, &orig_exe) {
                original_failed = true;
                res.findings.push(self.save(
                    "original-failed",
                    index,
                    &generated,
                    None,
                    Some(comp),
                    &e,
                    None,
                ));
                continue;
            }
            // The reference output at each parameter set.
            let mut reference = Vec::new();
            for (s, expected) in generated.expected.iter().enumerate() {
                let args = generated.program.args(s);
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                match runner::run(&orig_exe, &argv, opts.threads[0], &limits(opts.timeout)) {
                    Ok(r) if r.ok() => {
                        if let Err(m) = compare_outputs(expected, &r.stdout) {
                            oracle = true;
                            let f = Failure {
                                kind: "oracle",
                                set: s,
                                threads: opts.threads[0],
                                detail: m.clone(),
                                actual: r.stdout.clone(),
                            };
                            res.findings.push(self.save(
                                "oracle",
                                index,
                                &generated,
                                None,
                                Some(comp),
                                &format!("interpreter vs compiled original: {m}"),
                                Some((&f, expected)),
                            ));
                        }
                        reference.push(Some(r.stdout));
                    }
                    other => {
                        original_failed = true;
                        let what = match other {
                            Ok(r) => format!("{:?}: {}", r.exit, r.stderr),
                            Err(e) => e.to_string(),
                        };
                        res.findings.push(self.save(
                            "original-failed",
                            index,
                            &generated,
                            None,
                            Some(comp),
                            &what,
                            None,
                        ));
                        reference.push(None);
                    }
                }
            }
            for (k, cfg) in configs.iter().enumerate() {
                let Some(text) = &variants[k] else { continue };
                let vsrc = work.join(format!("v{k}.c"));
                let vexe = work.join(format!("v{k}-{}", comp.name()));
                let _ = std::fs::write(&vsrc, text);
                if let Err(e) = compile(comp, &opts.cflags, &vsrc, &vexe) {
                    broken[k] = true;
                    res.findings.push(self.save(
                        "compile-error",
                        index,
                        &generated,
                        Some((cfg, text)),
                        Some(comp),
                        &e,
                        None,
                    ));
                    continue;
                }
                let mut first: Option<(Failure, String)> = None;
                let mut failures = 0;
                for (s, refer) in reference.iter().enumerate() {
                    let Some(refer) = refer else { continue };
                    let args = generated.program.args(s);
                    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                    for &t in &opts.threads {
                        res.counts.runs += 1;
                        let fail = match runner::run(&vexe, &argv, t, &limits(opts.timeout)) {
                            Ok(r) if r.ok() => match compare_outputs(refer, &r.stdout) {
                                Ok(()) => None,
                                Err(m) => Some(Failure {
                                    kind: "wrong",
                                    set: s,
                                    threads: t,
                                    detail: m,
                                    actual: r.stdout,
                                }),
                            },
                            Ok(r) => Some(Failure {
                                kind: if r.exit == Exit::Timeout {
                                    "timeout"
                                } else {
                                    "crash"
                                },
                                set: s,
                                threads: t,
                                detail: format!("{:?} {}", r.exit, r.stderr.trim()),
                                actual: r.stdout,
                            }),
                            Err(e) => Some(Failure {
                                kind: "crash",
                                set: s,
                                threads: t,
                                detail: format!("cannot run: {e}"),
                                actual: String::new(),
                            }),
                        };
                        if let Some(f) = fail {
                            failures += 1;
                            if f.kind == "wrong" {
                                wrong[k] = true;
                                res.counts.wrong_runs += 1;
                            } else {
                                crashed[k] = true;
                            }
                            if first.is_none() {
                                first = Some((f, refer.clone()));
                            }
                        }
                    }
                }
                if let Some((f, expected)) = first {
                    let detail = format!(
                        "{} at {} with {} thread(s) ({failures} failing run(s) of this build)",
                        f.detail,
                        generated.program.describe_params(f.set),
                        f.threads
                    );
                    res.findings.push(self.save(
                        f.kind,
                        index,
                        &generated,
                        Some((cfg, text)),
                        Some(comp),
                        &detail,
                        Some((&f, &expected)),
                    ));
                }
            }
        }
        res.counts.wrong = wrong.iter().filter(|&&x| x).count();
        res.counts.crashed = crashed
            .iter()
            .zip(&wrong)
            .filter(|&(&c, &w)| c && !w)
            .count();
        res.counts.compile_errors = broken.iter().filter(|&&x| x).count();
        res.counts.oracle = oracle as usize;
        res.counts.original_failed = original_failed as usize;
        self.cleanup(&work);
        res
    }

    /// `polytune optimize prog --config cfg -o out` as a child process.
    fn optimize_with(
        &self,
        bin: &Path,
        prog: &Path,
        out: &Path,
        cfg: &Config,
    ) -> Result<crate::engine::pipeline::Outcome, (&'static str, String)> {
        let (p, o, c) = (
            prog.to_string_lossy().into_owned(),
            out.to_string_lossy().into_owned(),
            cfg.to_string(),
        );
        let args = [
            "optimize",
            p.as_str(),
            "--config",
            c.as_str(),
            "-o",
            o.as_str(),
        ];
        match runner::run(bin, &args, 1, &limits(self.opts.engine_timeout)) {
            Ok(r) if r.ok() => {
                let text =
                    std::fs::read_to_string(out).map_err(|e| ("engine-error", e.to_string()))?;
                let skipped = r
                    .stderr
                    .lines()
                    .filter(|l| l.contains("left unchanged"))
                    .map(|l| l.trim_start_matches("polytune: warning: ").to_string())
                    .collect();
                Ok(crate::engine::pipeline::Outcome {
                    text,
                    skipped,
                    internal: Vec::new(),
                    // The child does not say; the configuration asked for
                    // it (the fuzzer builds every program with OpenMP).
                    openmp: cfg.omp,
                })
            }
            Ok(r) if r.exit == Exit::Timeout => Err((
                "engine-timeout",
                format!(
                    "optimize took more than {} s",
                    self.opts.engine_timeout.as_secs()
                ),
            )),
            Ok(r) if r.exit == Exit::Code(101) || matches!(r.exit, Exit::Signal(_)) => {
                Err(("engine-panic", format!("{:?}: {}", r.exit, r.stderr.trim())))
            }
            Ok(r) => Err(("engine-error", format!("{:?}: {}", r.exit, r.stderr.trim()))),
            Err(e) => Err(("engine-error", format!("cannot run {}: {e}", bin.display()))),
        }
    }

    fn cleanup(&self, work: &Path) {
        if !self.opts.keep_work {
            let _ = std::fs::remove_dir_all(work);
        }
    }
}

/// A skip reason without its numbers and names, to group them.
fn reason_class(why: &str) -> String {
    let s: String = why
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect();
    s.lines().next().unwrap_or("").chars().take(100).collect()
}

/// Runs a campaign.
pub fn run(opts: &Options) -> Result<Summary, FuzzError> {
    if opts.threads.is_empty() || opts.compilers.is_empty() || opts.params == 0 {
        return Err(FuzzError::Options(
            "need at least one compiler, one thread count and one parameter set".into(),
        ));
    }
    let compilers = opts
        .compilers
        .iter()
        .map(|&c| Compiler::detect(c, Some(opts.cflags.clone())))
        .collect::<Result<Vec<_>, _>>()?;
    let work = opts.out.join("work");
    std::fs::create_dir_all(&work).map_err(io_err(&work))?;
    let ctx = Ctx { opts, compilers };
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, ProgramResult)>> = Mutex::new(Vec::new());
    let done = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.max(1) {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    if k >= opts.programs {
                        break;
                    }
                    let r = ctx.program(opts.first + k);
                    let d = done.fetch_add(1, Ordering::SeqCst) + 1;
                    if opts.verbose && (d.is_multiple_of(10) || d == opts.programs) {
                        eprintln!("fuzz: {d}/{} programs", opts.programs);
                    }
                    results
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((opts.first + k, r));
                }
            });
        }
    });
    if !opts.keep_work {
        let _ = std::fs::remove_dir(&work);
    }
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(k, _)| *k);
    let mut counts = Counts::default();
    let mut unchanged_reasons = BTreeMap::new();
    let mut findings = Vec::new();
    for (_, r) in results {
        counts.add(&r.counts);
        for (k, v) in r.unchanged {
            *unchanged_reasons.entry(k).or_default() += v;
        }
        findings.extend(r.findings);
    }
    Ok(Summary {
        seed: opts.seed,
        first: opts.first,
        configs: opts.configs,
        params: opts.params,
        compilers: opts.compilers.clone(),
        threads: opts.threads.clone(),
        counts,
        unchanged_reasons,
        findings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic_and_legal() {
        for i in 0..30 {
            let (a, _) = generate(7, i, 3, GenOptions::default()).expect("a legal program");
            let (b, _) = generate(7, i, 3, GenOptions::default()).expect("a legal program");
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
            let Some((g, _)) = generate(11, i, 3, GenOptions::default()) else {
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
            let (g, _) = generate(3, i, 2, signed).expect("a legal program");
            assert!(!uses_unsigned(&g.program), "{}", g.text);
            assert!(g.program.param_sets.iter().flatten().all(|&v| v >= 1));
            let (d, _) = generate(3, i, 2, GenOptions::default()).expect("a legal program");
            unsigned_seen += uses_unsigned(&d.program) as usize;
        }
        assert!(unsigned_seen >= 5, "{unsigned_seen}");
    }

    #[test]
    fn comparison_is_exact_for_integers_and_tolerant_for_doubles() {
        let a = "begin A 2\n1\n2\nend A\n";
        assert!(compare_outputs(a, a).is_ok());
        assert!(compare_outputs(a, "begin A 2\n1\n3\nend A\n").is_err());
        let d = |x: f64| format!("begin B 1 bits\n{:016x}\nend B\n", x.to_bits());
        assert!(compare_outputs(&d(1.0), &d(1.0 + 1e-14)).is_ok());
        assert!(compare_outputs(&d(1.0), &d(1.0 + 1e-6)).is_err());
        assert!(compare_outputs(a, "").is_err());
    }

    #[test]
    fn interpreter_follows_unsigned_comparison() {
        // for (long i = -n; i < 5UL; i++): zero trips when n > 0.
        use program::*;
        let p = Program {
            vars: vec![
                Var {
                    name: "n".into(),
                    ty: IntTy::Long,
                    param: true,
                },
                Var {
                    name: "i".into(),
                    ty: IntTy::Long,
                    param: false,
                },
            ],
            arrays: vec![],
            scalars: vec![Scalar {
                name: "s0".into(),
                elem: Elem::Long,
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
            let mut m = interp::Machine::new(&p, &[n], true);
            m.run().unwrap();
            m.dump()
        };
        let init = match program::scalar_init(Elem::Long, 0) {
            interp::Val::Long(x) => x,
            _ => unreachable!(),
        };
        assert_eq!(count(3), format!("begin s0 1\n{init}\nend s0\n"));
        assert_eq!(count(-3), format!("begin s0 1\n{}\nend s0\n", init + 2));
    }
}
