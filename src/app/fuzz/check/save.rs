//! A finding saved with what reproduces it: the program, the variant,
//! a shell script that rebuilds and reruns both, their outputs and a
//! summary (`info.txt`).

use super::super::Finding;
use super::super::generate::Generated;
use super::{Ctx, Failure, suspects};
use crate::config::Config;
use crate::lab::compiler::Compiler;

impl Ctx<'_> {
    /// Saves a finding of `kind` under `findings/`, with the files that
    /// reproduce it; `None` when a signal is ending polytune (what ran was
    /// killed: no finding).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn save(
        &self,
        kind: &str,
        index: usize,
        generated: &Generated,
        config: Option<(&Config, &str)>,
        compiler: Option<&Compiler>,
        detail: &str,
        run: Option<(&Failure, &str)>,
    ) -> Option<Finding> {
        // A signal is ending polytune and killed what ran: no finding.
        if crate::lab::confine::ending() {
            return None;
        }
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
            let args =
                (self.opts.optimize_args)("prog.c", &cfg.to_string(), "variant.c", self.opts.alias);
            sh.push_str(&format!("\"$P\" {}\n", shell_words::join(&args)));
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
        Some(Finding {
            kind: kind.to_string(),
            program: index,
            config: config.map(|(c, _)| c.to_string()),
            compiler: compiler.map(|c| c.family),
            detail: detail.to_string(),
            suspects,
            dir,
        })
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
