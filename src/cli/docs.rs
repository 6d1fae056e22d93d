//! `polytune completions SHELL` and `polytune man DIR`: the shell
//! completions and the man pages, generated from the command line's own
//! definitions (clap_complete, clap_mangen), so they never disagree with
//! `--help`.

use anyhow::{Context, Result};
use clap::CommandFactory;
use std::path::PathBuf;

/// Print a shell's completion script.
///
/// Print the completion script of a shell (e.g. `polytune completions
/// bash > /etc/bash_completion.d/polytune`).
#[derive(clap::Args)]
pub(crate) struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    shell: clap_complete::Shell,
}

/// Write the man pages into a directory.
///
/// Write the man pages: polytune.1 and one per command
/// (polytune-optimize.1, ...) into DIR (e.g. `polytune man
/// /usr/local/share/man/man1`).
#[derive(clap::Args)]
pub(crate) struct ManArgs {
    /// The directory to write them to (made if missing).
    dir: PathBuf,
}

pub(crate) fn completions(a: CompletionsArgs) -> Result<()> {
    let mut cmd = super::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "polytune", &mut out);
    super::out(&String::from_utf8_lossy(&out))
}

pub(crate) fn man(a: ManArgs, ui: &super::Ui) -> Result<()> {
    std::fs::create_dir_all(&a.dir)
        .with_context(|| format!("cannot make the directory {}", a.dir.display()))?;
    let cmd = super::Cli::command();
    let mut pages = vec![("polytune".to_string(), cmd.clone())];
    for sub in cmd.get_subcommands() {
        let name = format!("polytune-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().name(name)));
    }
    for (name, page) in &pages {
        let mut text = Vec::new();
        clap_mangen::Man::new(page.clone()).render(&mut text)?;
        let path = a.dir.join(format!("{name}.1"));
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    ui.note(format!(
        "{} man pages written to {}",
        pages.len(),
        a.dir.display()
    ));
    Ok(())
}
