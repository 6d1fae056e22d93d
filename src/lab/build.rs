//! How a user's program is built and run, said the way a compiler is
//! told (issue 17): everything after `--` on polytune's command line is the
//! program's compile line (include paths, `-D` flags, extra sources,
//! libraries); `--run-args` is its command line. A program built by its
//! own build system gives `--build CMD` and `--run CMD` instead, with
//! placeholders for the file polytune built and the executable.
//!
//! The file that is compiled is a copy of the user's file (an
//! instrumented original or a variant) in a scratch directory, so the
//! user's file's directory is added for `#include "..."` (`-iquote`), and
//! the compiler runs in the current directory, where the user's relative
//! paths (`utilities/polybench.c`) mean what they meant.

use super::compiler::{Compilation, Compiler};
use super::confine::{self, Ending, Limits};
use crate::config::VectorTarget;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Placeholders of `--build` and `--run`.
pub(crate) const SRC: &str = "{src}";
pub(crate) const EXE: &str = "{exe}";
pub(crate) const CC: &str = "{cc}";
pub(crate) const CFLAGS: &str = "{cflags}";

/// The recipe of one program.
#[derive(Debug, Clone)]
pub struct Recipe {
    pub compiler: Compiler,
    /// `-D<SIZE>_DATASET` (the corpus' convention), or nothing.
    pub size: Option<super::size::Size>,
    /// `-I` directories given to polytune.
    pub include: Vec<PathBuf>,
    /// The user's compile line after `--`.
    pub extra: Vec<String>,
    /// The directory of the user's file.
    pub source_dir: PathBuf,
    /// A build command with `{src}`, `{exe}`, `{cc}`, `{cflags}`.
    pub build: Option<String>,
    /// A run command with `{exe}`.
    pub run: Option<String>,
    /// The program's arguments (without `--run`).
    pub run_args: Vec<String>,
    /// Files of the compile line that polytune wrote (a bare kernel's
    /// driver), with what they are: a description names them by file name.
    pub generated: Vec<(PathBuf, String)>,
    /// The program uses OpenMP itself (`frontend::uses_openmp`): every
    /// build, the original's included, gets `-fopenmp`, so that the
    /// original runs as its author runs it and a variant competes with
    /// that.
    pub openmp: bool,
}

impl Recipe {
    /// A recipe that builds `file` alone with `compiler`.
    pub fn new(compiler: Compiler, file: &Path) -> Recipe {
        Recipe {
            compiler,
            size: None,
            include: Vec::new(),
            extra: Vec::new(),
            source_dir: source_dir(file),
            build: None,
            run: None,
            run_args: Vec::new(),
            generated: Vec::new(),
            openmp: false,
        }
    }

    /// The compile line of `src` into `exe`, flags first (the compiler's
    /// optimization flags, then `extra_flags`), the user's line last.
    pub(crate) fn compile_args(
        &self,
        src: &Path,
        exe: &Path,
        openmp: bool,
        extra_flags: &[&str],
    ) -> Vec<OsString> {
        let mut args: Vec<OsString> = self.compiler.flags.iter().map(OsString::from).collect();
        args.extend(extra_flags.iter().map(OsString::from));
        if let Some(size) = self.size {
            args.push(size.define().into());
        }
        if openmp || self.openmp {
            args.push("-fopenmp".into());
        }
        args.push("-iquote".into());
        args.push(self.source_dir.clone().into());
        for i in &self.include {
            args.push("-I".into());
            args.push(i.into());
        }
        args.extend([src.into(), "-o".into(), exe.into()]);
        args.extend(self.extra.iter().map(OsString::from));
        if self.size.is_some() {
            // A corpus-style program is built as the corpus builds it
            // (`Compiler::compile`), with the math library: cholesky,
            // correlation and gramschmidt call `sqrt`.
            args.push("-lm".into());
        }
        args
    }

    /// The vector registers this recipe's builds target: the compiler's
    /// predefined macros under its flags and the user's `-m` options
    /// (`-march=native`, `-mno-avx512f`, ...), read by preprocessing an
    /// empty file. SSE2 when the compiler cannot say (a `--build` command
    /// may use other flags: the micro-kernel still selects its lanes when
    /// it is compiled, only the shapes tried would be another target's).
    pub fn vector_target(&self) -> VectorTarget {
        let mut args: Vec<OsString> = self
            .compiler
            .flags
            .iter()
            .chain(&self.extra)
            .filter(|f| f.starts_with("-m"))
            .map(OsString::from)
            .collect();
        args.extend(["-dM", "-E", "-x", "c", "/dev/null"].map(OsString::from));
        match confine::run(&self.compiler.program, &args, &[], &Limits::tool()) {
            Ok(o) if o.ending == Ending::Code(0) => {
                VectorTarget::from_macros(&o.stdout.into_text())
            }
            _ => VectorTarget::SSE2,
        }
    }

    /// Builds `src` into `exe`.
    pub(crate) fn build(
        &self,
        src: &Path,
        exe: &Path,
        openmp: bool,
        extra_flags: &[&str],
    ) -> Compilation {
        match &self.build {
            None => self
                .compiler
                .invoke(&self.compile_args(src, exe, openmp, extra_flags), exe),
            Some(cmd) => {
                let mut cflags: Vec<String> = self.compiler.flags.clone();
                cflags.extend(extra_flags.iter().map(|s| s.to_string()));
                if openmp || self.openmp {
                    cflags.push("-fopenmp".into());
                }
                cflags.push("-iquote".into());
                cflags.push(self.source_dir.to_string_lossy().into_owned());
                let line = fill_cflags(
                    &cmd.replace(SRC, &quote(src))
                        .replace(EXE, &quote(exe))
                        .replace(CC, &quote(&self.compiler.program)),
                    &cflags,
                );
                let shell = Compiler {
                    program: PathBuf::from("/bin/sh"),
                    flags: Vec::new(),
                    ..self.compiler.clone()
                };
                let mut c = shell.invoke(&["-c".into(), line.clone().into()], exe);
                if c.ok && !exe.is_file() {
                    c.ok = false;
                    c.stderr.push_str(&format!(
                        "polytune: `{line}` succeeded but made no {} (the build command must write the executable named by {EXE})\n",
                        exe.display()
                    ));
                }
                c
            }
        }
    }

    /// The program and arguments that run `exe`.
    pub(crate) fn command(&self, exe: &Path) -> (PathBuf, Vec<String>) {
        match &self.run {
            Some(cmd) => (
                PathBuf::from("/bin/sh"),
                vec!["-c".into(), cmd.replace(EXE, &quote(exe))],
            ),
            None => (exe.to_path_buf(), self.run_args.clone()),
        }
    }

    /// How the program is built and run, for a header comment: a command
    /// a user can type (the file named `FILE`).
    pub fn describe(&self, file: &str, openmp: bool) -> (String, String) {
        let mut build = match &self.build {
            Some(cmd) => fill_cflags(cmd, &self.compiler.flags)
                .replace(SRC, file)
                .replace(EXE, "./a.out")
                .replace(CC, &quote(&self.compiler.program)),
            None => {
                let args = self.compile_args(Path::new(file), Path::new("a.out"), openmp, &[]);
                let mut words = vec![self.compiler.program.to_string_lossy().into_owned()];
                words.extend(args.iter().map(|a| a.to_string_lossy().into_owned()));
                shell_words::join(words)
            }
        };
        for (path, what) in &self.generated {
            let name = path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            build = build.replace(&path.display().to_string(), &name);
            build.push_str(&format!(" ({name}: {what})"));
        }
        let run = match &self.run {
            Some(cmd) => cmd.replace(EXE, "./a.out"),
            None => {
                let mut words = vec!["./a.out".to_string()];
                words.extend(self.run_args.iter().cloned());
                shell_words::join(words)
            }
        };
        (build, run)
    }
}

/// Whether a program follows the corpus' protocol (includes its header,
/// polybench/include/polytune_bench.h).
/// `cmd` with each `{cflags}` replaced by the flags: one shell word where
/// it is a variable's value (`make CFLAGS={cflags}`), separate words
/// elsewhere (`{cc} {cflags} {src}`), each quoted as the shell needs.
fn fill_cflags(cmd: &str, flags: &[String]) -> String {
    // A word of these characters needs no quotes (shell_words quotes
    // `-march=native` for its `=`, harmless but noisy in a header).
    let plain = |f: &str| {
        !f.is_empty()
            && f.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_=./,:+@%".contains(c))
    };
    let words: Vec<String> = flags
        .iter()
        .map(|f| match plain(f) {
            true => f.clone(),
            false => shell_words::quote(f).into_owned(),
        })
        .collect();
    let separate = words.join(" ");
    let one = shell_words::quote(&separate).into_owned();
    let mut out = String::new();
    let mut rest = cmd;
    while let Some(at) = rest.find(CFLAGS) {
        out.push_str(&rest[..at]);
        out.push_str(if out.ends_with('=') { &one } else { &separate });
        rest = &rest[at + CFLAGS.len()..];
    }
    out.push_str(rest);
    out
}

pub fn corpus_style(text: &str) -> bool {
    text.contains("polytune_bench.h")
}

/// The directory of `file` (`.` for a bare file name).
pub fn source_dir(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn quote(p: &Path) -> String {
    shell_words::quote(&p.to_string_lossy()).into_owned()
}

/// Splits `--run-args` the way a shell would.
pub fn split_args(text: &str) -> Result<Vec<String>, String> {
    shell_words::split(text).map_err(|e| format!("cannot split `{text}` into arguments: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::compiler::Family;

    fn gcc() -> Compiler {
        Compiler {
            family: Family::Gcc,
            program: "gcc".into(),
            version: String::new(),
            flags: vec!["-O3".into()],
        }
    }

    #[test]
    fn the_users_line_comes_last_and_includes_resolve_beside_the_file() {
        let mut r = Recipe::new(gcc(), Path::new("linear-algebra/kernels/2mm/2mm.c"));
        r.extra = vec![
            "-Iutilities".into(),
            "utilities/polybench.c".into(),
            "-lm".into(),
        ];
        let args: Vec<String> = r
            .compile_args(
                Path::new("/tmp/x/v.c"),
                Path::new("/tmp/x/v"),
                true,
                &["-g"],
            )
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "-O3",
                "-g",
                "-fopenmp",
                "-iquote",
                "linear-algebra/kernels/2mm",
                "/tmp/x/v.c",
                "-o",
                "/tmp/x/v",
                "-Iutilities",
                "utilities/polybench.c",
                "-lm"
            ]
        );
        let (build, run) = r.describe("2mm.opt.c", false);
        assert_eq!(
            build,
            "gcc -O3 -iquote linear-algebra/kernels/2mm 2mm.opt.c -o a.out -Iutilities utilities/polybench.c -lm"
        );
        assert_eq!(run, "./a.out");
    }

    #[test]
    fn a_corpus_style_program_links_the_math_library() {
        let mut r = Recipe::new(gcc(), Path::new("polybench/solvers/cholesky.c"));
        r.size = Some(crate::lab::size::Size::Small);
        let (build, _) = r.describe("cholesky.c", false);
        assert_eq!(
            build,
            "gcc -O3 -DSMALL_DATASET -iquote polybench/solvers cholesky.c -o a.out -lm"
        );
    }

    #[test]
    fn build_and_run_commands_get_their_placeholders() {
        let mut r = Recipe::new(gcc(), Path::new("app/kernel.c"));
        r.run = Some("{exe} 40 --quiet".into());
        let (program, args) = r.command(Path::new("/tmp/a b/exe"));
        assert_eq!(program, PathBuf::from("/bin/sh"));
        assert_eq!(args, ["-c", "'/tmp/a b/exe' 40 --quiet"]);
        assert_eq!(split_args("-n 'a b' c").unwrap(), ["-n", "a b", "c"]);
        let flags = [
            "-O3".to_string(),
            "-march=native".into(),
            "-iquote".into(),
            "a b".into(),
        ];
        let line = fill_cflags("make CFLAGS={cflags} && {cc} {cflags} x.c", &flags);
        assert!(
            line.ends_with("&& {cc} -O3 -march=native -iquote 'a b' x.c"),
            "{line}"
        );
        // The variable's value is one word, which the shell splits back.
        let words = split_args(line.split(" && ").next().unwrap()).unwrap();
        assert_eq!(words, ["make", "CFLAGS=-O3 -march=native -iquote 'a b'"]);
        assert!(split_args("'open").is_err());
    }
}
