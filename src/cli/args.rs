//! The argument groups several commands share (`#[command(flatten)]`):
//! how programs are built, how they are run and timed, which
//! configuration to apply (`ConfigArgs`, in config_args.rs), which
//! measurements a model learns from, and the output format.

use super::Usage;
pub(crate) use super::config_args::ConfigArgs;
use crate::lab::characterize::Backend;
use crate::lab::compiler::{Compiler, Family};
use crate::lab::dump::StdoutPolicy;
use crate::lab::runner::Protocol;
use crate::lab::size::Size;
use anyhow::{Context, Result};
use clap::builder::PossibleValue;
use std::path::{Path, PathBuf};

/// The typed values users name on the command line by their `as_str`
/// names: a back-end compiler (`--compiler gcc`), a dataset size of
/// corpus-style programs (`--size medium`), a feature back end
/// (`--backend cachegrind`), a standard output policy (`--stdout stable`).
macro_rules! value_enum {
    ($($t:ty),*) => {$(
        impl clap::ValueEnum for $t {
            fn value_variants<'a>() -> &'a [Self] {
                &<$t>::ALL
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(PossibleValue::new(self.as_str()))
            }
        }
    )*};
}

value_enum!(Family, Size, Backend, StdoutPolicy);

/// How programs are built (every command that compiles).
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct BuildArgs {
    /// Back-end compiler (`collect`: a comma-separated list, gcc,clang).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "gcc")]
    pub compiler: Vec<Family>,
    /// Optimization flags of the back-end compiler.
    #[arg(long, default_value = "-O3 -march=native", allow_hyphen_values = true)]
    pub cflags: String,
    /// Extra include directory (repeatable).
    ///
    /// The file's and the corpus header's directories are always included (with
    /// --detect, clang gets them too).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
}

impl BuildArgs {
    /// The one compiler of a command that builds with one.
    pub(crate) fn compiler_name(&self) -> Result<Family> {
        match self.compiler.as_slice() {
            [one] => Ok(*one),
            _ => Err(
                Usage("--compiler takes one compiler here (a list only in `collect`)".into())
                    .into(),
            ),
        }
    }

    pub(crate) fn compiler(&self) -> Result<Compiler> {
        Ok(Compiler::detect(
            self.compiler_name()?,
            Some(split_flags(&self.cflags)),
        )?)
    }

    /// Every compiler of the list.
    pub(crate) fn compilers(&self) -> Result<Vec<Compiler>> {
        let mut seen = Vec::new();
        for c in &self.compiler {
            if !seen.contains(c) {
                seen.push(*c);
            }
        }
        Ok(seen
            .into_iter()
            .map(|c| Compiler::detect(c, Some(split_flags(&self.cflags))))
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// The include path for `file`: the extra directories, the file's own
    /// (`.` for a file named without a directory, never an empty `-I ''`)
    /// and, for a program that includes the corpus header, that header's.
    pub(crate) fn include_for(&self, file: &Path) -> Vec<PathBuf> {
        let mut include = self.include.clone();
        include.push(match file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        });
        // Only the corpus's programs need it; elsewhere it would only
        // lengthen the compile line written into the output's header.
        let corpus_style = std::fs::read_to_string(file)
            .map(|t| t.contains("polytune_bench.h"))
            .unwrap_or(true);
        if corpus_style {
            include.push(corpus_include());
        }
        include
    }
}

/// How the user's program is built and run when it is measured (issue
/// 17): a compile line like a compiler's, or the program's own build.
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct ProgramArgs {
    /// The program's command-line arguments when it is run, e.g.
    /// --run-args "input.dat 100".
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub run_args: Option<String>,
    /// Build command of a program built by its own build system, run by /bin/sh
    /// in this directory.
    ///
    /// {src} is the C file polytune built (the original instrumented, or a
    /// variant), {exe} the executable it must write, {cc} the compiler,
    /// {cflags} its flags (one word after `=`, as in CFLAGS={cflags}; separate
    /// words elsewhere). E.g. --build "make -C app KERNEL={src} EXE={exe}
    /// CC={cc} CFLAGS={cflags}" or --build "{cc} {cflags} {src} io.c -o {exe}".
    #[arg(long, value_name = "CMD")]
    pub build: Option<String>,
    /// Run command, {exe} the executable (default: the executable with
    /// --run-args).
    #[arg(long, value_name = "CMD", conflicts_with = "run_args")]
    pub run: Option<String>,
    /// Relative tolerance when floating-point results are compared.
    #[arg(long, default_value_t = 1e-6)]
    pub rtol: f64,
    /// Absolute tolerance when floating-point results are compared.
    #[arg(long, default_value_t = 1e-9)]
    pub atol: f64,
    /// Which lines of standard output a variant must reproduce.
    ///
    /// strict: every line two runs of the original print alike; stable:
    /// those that stay alike when its regions are slowed down (a printed
    /// time is not compared); ignore: none. The regions' records decide.
    #[arg(long, value_name = "POLICY", value_enum, default_value = "stable")]
    pub stdout: StdoutPolicy,
    /// For a bare kernel: the values of its integer parameters, e.g. --param
    /// N=2000,M=1800.
    ///
    /// A bare kernel is a file without `main`: polytune writes a driver that
    /// allocates the arrays, calls the kernel once, and is built with it.
    #[arg(long, value_name = "NAME=V,...", value_delimiter = ',', value_parser = parse_param)]
    pub param: Vec<(String, i64)>,
    /// For a bare kernel: size pointer parameters of unknown extent by the
    /// elements it touches.
    ///
    /// A pointer parameter of unknown extent (`double *x`, `double x[]`) is
    /// sized from the elements the kernel touches.
    #[arg(long)]
    pub size_from_footprint: bool,
}

pub(crate) fn parse_param(s: &str) -> Result<(String, i64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not NAME=VALUE"))?;
    let value = value
        .trim()
        .parse()
        .map_err(|_| format!("`{value}` is not an integer"))?;
    Ok((name.trim().to_string(), value))
}

impl ProgramArgs {
    /// The recipe of `src` built with `compiler`: `-D<SIZE>_DATASET`
    /// only for programs in the corpus style (which read it); for a bare
    /// kernel, the driver polytune writes (into `scratch`, which must
    /// outlive the recipe's builds) is built with it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn recipe(
        &self,
        compiler: Compiler,
        src: &crate::frontend::SourceFile,
        include: Vec<PathBuf>,
        size: crate::lab::size::Size,
        compile_line: &[String],
        scratch: &Path,
        ui: &super::Ui,
    ) -> Result<crate::lab::build::Recipe> {
        let file = src.path.as_path();
        let mut r = crate::lab::build::Recipe::new(compiler, file);
        r.size = corpus_style(&src.text).then_some(size);
        r.include = include;
        r.extra = compile_line.to_vec();
        r.openmp = crate::frontend::pragmas::uses_openmp(&src.text);
        let bare = !crate::engine::driver::has_main(&src.text)
            && self.build.is_none()
            && !crate::engine::driver::sources_define_main(compile_line);
        if bare {
            let d =
                crate::engine::driver::generate_with(src, &self.param, self.size_from_footprint)
                    .with_context(|| {
                        format!(
                            "{}: the file has no `main`, and polytune cannot write one",
                            file.display()
                        )
                    })?;
            let path = scratch.join("polytune_driver.c");
            std::fs::write(&path, &d.text)?;
            ui.detail(format!(
                "{} has no `main`: driving {} with a generated main ({})",
                file.display(),
                d.functions.join(", "),
                d.arrays
                    .iter()
                    .map(|a| format!(
                        "{}{}",
                        a.parameter,
                        a.extents
                            .iter()
                            .map(|e| format!("[{e}]"))
                            .collect::<String>()
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            r.extra.push(path.display().to_string());
            r.generated.push((
                path.clone(),
                format!(
                    "the main polytune writes with `polytune driver {}{} --param {}{}`",
                    file.display(),
                    // A text that is not the file's was marked by --detect.
                    if std::fs::read_to_string(file).is_ok_and(|t| t != src.text) {
                        " --detect"
                    } else {
                        ""
                    },
                    self.param
                        .iter()
                        .map(|(n, v)| format!("{n}={v}"))
                        .collect::<Vec<_>>()
                        .join(","),
                    if self.size_from_footprint {
                        " --size-from-footprint"
                    } else {
                        ""
                    }
                ),
            ));
            r.extra
                .extend(d.defines.iter().map(|(n, v)| format!("-D{n}={v}")));
        } else if !self.param.is_empty() {
            return Err(Usage(format!(
                "--param is for a bare kernel (a file without `main`); {} has one: give the program's input with --run-args",
                file.display()
            ))
            .into());
        }
        r.build = self.build.clone();
        r.run = self.run.clone();
        if let Some(a) = &self.run_args {
            r.run_args = crate::lab::build::split_args(a).map_err(Usage)?;
        }
        Ok(r)
    }

    pub(crate) fn tolerance(&self) -> crate::lab::dump::Tolerance {
        crate::lab::dump::Tolerance {
            rtol: self.rtol,
            atol: self.atol,
            stdout: self.stdout,
        }
    }
}

/// The program's compile line after `--` (`measure`, `characterize`,
/// `collect`; `optimize` and `scop` through their source arguments).
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct CompileLine {
    /// The program's compile line after `--`: include paths, -D flags, extra
    /// sources, libraries.
    ///
    /// E.g. `-- -Iutilities utilities/polybench.c -DSMALL_DATASET -lm`. It
    /// builds the program when polytune measures it, and its preprocessor flags
    /// go to clang with --detect.
    #[arg(last = true, value_name = "COMPILE_LINE", allow_hyphen_values = true)]
    pub words: Vec<String>,
}

pub(crate) use crate::lab::build::corpus_style;

/// How programs are run and timed (`measure`, `collect` and the learned
/// `optimize`).
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct RunArgs {
    /// Dataset size of corpus-style programs.
    #[arg(long, value_enum, default_value = "medium")]
    pub size: Size,
    /// OpenMP threads (OMP_NUM_THREADS) of every run.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Per-run timeout in seconds.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    /// Address-space limit of every program run, e.g. 4G or 512M, or
    /// `none` [default: half of this machine's memory].
    #[arg(long, value_name = "SIZE")]
    pub memory_limit: Option<crate::lab::confine::MemoryLimit>,
}

impl RunArgs {
    /// The timing protocol of these arguments (the defaults otherwise).
    pub(crate) fn protocol(&self) -> Protocol {
        Protocol {
            threads: self.threads,
            timeout: std::time::Duration::from_secs(self.timeout),
            memory_limit: memory_limit(self.memory_limit),
            adaptive: Some(crate::lab::runner::Adaptive::default()),
            ..Default::default()
        }
    }
}

/// Machine-readable output.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct OutputArgs {
    /// Machine-readable output (JSON on standard output).
    #[arg(long)]
    pub json: bool,
}

/// The store of this machine's runs (`optimize`, `collect`): where what
/// they measure is appended, and what the learned `optimize` learns from.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct LearnArgs {
    /// The store this machine's runs are appended to and the ranker learns
    /// from [default: learned.sqlite in polytune's cache directory]
    ///
    /// Every learned `optimize` and every `collect` appends what it measured
    /// (each run variant's features, configuration, time, baseline and status,
    /// the machine and the compiler; `collect` the verified ones, each kernel's
    /// once it is done with a compiler) to this SQLite store of the campaign's
    /// schema, and the learned `optimize` fits its variant ranker to the shipped
    /// variants plus the store's, this machine's weighing 3 times a shipped one.
    /// A store that cannot be written is a warning: the run goes on without it
    /// (`collect`'s --db is never affected). The cache directory is
    /// $POLYTUNE_CACHE_DIR, else $XDG_CACHE_HOME/polytune, else
    /// ~/.cache/polytune. `polytune models status` says what it holds.
    #[arg(long, value_name = "FILE")]
    pub store: Option<PathBuf>,
    /// Neither learn from nor append to the store of this machine's runs.
    ///
    /// The environment variable POLYTUNE_NO_LEARN=1 does the same (the
    /// project's own test runs set it, so that they leave no store behind).
    #[arg(long)]
    pub no_learn: bool,
}

impl LearnArgs {
    /// The store to learn from and append to: `None` with --no-learn or
    /// POLYTUNE_NO_LEARN, or when there is no cache directory for the
    /// default one.
    pub(crate) fn store(&self) -> Option<PathBuf> {
        if self.no_learn || no_learn_in_environment() {
            None
        } else {
            self.store
                .clone()
                .or_else(crate::app::ranker::default_store)
        }
    }
}

/// Whether POLYTUNE_NO_LEARN says not to learn (set, and not `0`,
/// `false` or empty).
fn no_learn_in_environment() -> bool {
    std::env::var("POLYTUNE_NO_LEARN").is_ok_and(|v| {
        !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "" | "0" | "false" | "no" | "off"
        )
    })
}

/// The measurements of a store a model learns from.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct DataArgs {
    /// Back-end compiler whose measurements to use.
    #[arg(long, value_enum, default_value = "gcc")]
    pub compiler: Family,
    /// Dataset size of the measurements.
    #[arg(long, value_enum, default_value = "medium")]
    pub size: Size,
    /// Use the measurements taken at this many OpenMP threads.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub measured_threads: i64,
    /// Use the measurements of the machine whose description contains TEXT.
    ///
    /// For a store holding several machine types. The description is the
    /// processor, cores and OS, as `export` and the error on a mixed store name
    /// it.
    #[arg(long, value_name = "TEXT")]
    pub machine: Option<String>,
    /// Comma-separated models [default: all six: LR,SVM,IBk,K*,M5P,MLP].
    #[arg(long, value_delimiter = ',', value_parser = crate::learn::Kind::parse)]
    pub models: Vec<crate::learn::Kind>,
    /// What the models learn: `log`, `speedup` or `relative`.
    ///
    /// `log`, the logarithm of the speedup (a 2x loss weighs like a 2x gain),
    /// `speedup`, the paper's target, or `relative`, the log speedup over the
    /// kernel's typical variant.
    #[arg(long, default_value = "log", value_parser = crate::learn::Target::parse)]
    pub target: crate::learn::Target,
}

impl DataArgs {
    pub(crate) fn selection(&self) -> crate::learn::dataset::Selection {
        crate::learn::dataset::Selection {
            compiler: self.compiler,
            size: self.size,
            threads: self.measured_threads,
            machine: self.machine.clone(),
            ..Default::default()
        }
    }

    pub(crate) fn kinds(&self) -> Vec<crate::learn::Kind> {
        if self.models.is_empty() {
            crate::learn::Kind::ALL.to_vec()
        } else {
            self.models.clone()
        }
    }

    /// The dataset of `db`, saying what it leaves out: variants measured
    /// only beyond the paper's space (the models' attributes are its
    /// bits).
    pub(crate) fn dataset(
        &self,
        db: &Path,
        ui: &super::Ui,
    ) -> Result<crate::learn::dataset::Dataset> {
        if !db.exists() {
            anyhow::bail!(
                "{} does not exist (run `polytune collect` first)",
                db.display()
            );
        }
        let store = crate::lab::store::Store::open_read_only(db)?;
        let d = crate::learn::dataset::Dataset::from_store(&store, &self.selection())
            .with_context(|| format!("cannot read the dataset in {}", db.display()))?;
        note_beyond_paper(&d, ui);
        Ok(d)
    }
}

/// Says how many of a dataset's variants lie beyond the paper's space
/// (learned through their typed attributes).
/// Which model ranks the variants (--ranking).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RankingBy {
    Variant,
    Models,
}

/// The variant ranker's table in `dir`, unless `by` is the six models:
/// an error when `--ranking variant` asks for one the directory lacks.
pub(crate) fn variant_ranker(
    by: Option<RankingBy>,
    dir: &Path,
    ui: &super::Ui,
) -> Result<Option<std::sync::Arc<crate::app::ranker::Shipped>>> {
    if by == Some(RankingBy::Models) {
        return Ok(None);
    }
    match crate::app::ranker::load(dir)? {
        Some(t) => {
            ui.detail(format!(
                "ranking by the variant ranker, fitted to {} measured variants of {} kernels ({})",
                t.table.rows.len(),
                t.table.kernels.len(),
                dir.join(crate::app::ranker::FILE).display()
            ));
            Ok(Some(std::sync::Arc::new(t)))
        }
        None if by == Some(RankingBy::Variant) => anyhow::bail!(
            "--ranking variant: {} has no {} (the variant ranker's table of measured variants); use the shipped models or --ranking models",
            dir.display(),
            crate::app::ranker::FILE
        ),
        None => Ok(None),
    }
}

pub(crate) fn note_beyond_paper(d: &crate::learn::dataset::Dataset, ui: &super::Ui) {
    if d.beyond_paper > 0 {
        ui.note(format_args!(
            "{} of {} variants lie beyond the paper's space: the models learn their fields as typed attributes ({})",
            d.beyond_paper,
            d.rows.len(),
            d.extended_names.join(", ")
        ));
    }
}

pub(crate) fn split_flags(f: &str) -> Vec<String> {
    f.split_whitespace().map(String::from).collect()
}

/// The corpus header's directory, found next to the executable's source
/// tree or the current directory.
pub(crate) fn corpus_include() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("polybench/include");
    if built.exists() {
        built
    } else {
        PathBuf::from("polybench/include")
    }
}

/// Where `train` writes a compiler's models by default and `optimize`
/// reads them: models/<compiler> in the current directory.
pub(crate) fn models_dir(compiler: Family) -> PathBuf {
    PathBuf::from("models").join(compiler.as_str())
}

/// The models `optimize` reads: models/<compiler> in the current
/// directory when it exists (what `train` writes by default), else the
/// shipped ones of the source tree.
pub(crate) fn models_to_read(compiler: Family) -> PathBuf {
    let local = models_dir(compiler);
    let shipped = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(&local);
    if local.exists() || !shipped.exists() {
        local
    } else {
        shipped
    }
}

/// The address-space limit of child programs: the default (half of the
/// machine's memory) unless given.
pub(crate) fn memory_limit(given: Option<crate::lab::confine::MemoryLimit>) -> Option<u64> {
    match given {
        Some(m) => m.0,
        None => Some(crate::lab::confine::default_memory_limit()),
    }
}

/// Whether two paths name one file (device and inode: hard links,
/// symbolic links and `/dev/stdout` aliases included).
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    crate::lab::store::atomic::same_file(a, b)
}

/// Refuses to write `out` over `input` unless allowed.
pub(crate) fn refuse_overwrite(out: Option<&Path>, input: &Path, in_place: bool) -> Result<()> {
    if let Some(out) = out
        && !in_place
        && same_file(out, input)
    {
        anyhow::bail!(
            "refusing to overwrite the input {}: {} is the same file; pass --in-place to allow it",
            input.display(),
            out.display()
        );
    }
    Ok(())
}

/// Writes a command's text output: to `out` atomically (a failure leaves
/// the file as it was, with --in-place the input), or to standard output.
pub(crate) fn write_output(out: Option<&Path>, text: &str) -> Result<()> {
    match out {
        Some(p) => Ok(crate::lab::store::atomic::write(p, text.as_bytes())?),
        None => super::out(text),
    }
}
