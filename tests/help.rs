//! Issue 37: every command's help and the main error messages, as the
//! user sees them, held by snapshots (`cargo insta review` after a
//! deliberate change). Paths of this checkout print as `<ROOT>`.

mod common;

use common::root;
use std::process::Command;

/// Runs polytune in the checkout; (exit code, stdout, stderr), with the
/// checkout's path replaced.
fn polytune(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_polytune"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap();
    let here = root().display().to_string();
    let clean = |b: &[u8]| String::from_utf8_lossy(b).replace(&here, "<ROOT>");
    (
        out.status.code().unwrap_or(-1),
        clean(&out.stdout),
        clean(&out.stderr),
    )
}

/// The commands `polytune --help` lists.
fn commands() -> Vec<String> {
    let (code, help, _) = polytune(&["--help"]);
    assert_eq!(code, 0);
    listed_commands(&help)
}

/// The subcommands a help text lists under `Commands:`, but `help`.
fn listed_commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

#[test]
fn every_commands_help() {
    let (_, top, _) = polytune(&["--help"]);
    insta::assert_snapshot!("help", top);
    let commands = commands();
    assert!(commands.len() >= 16, "{commands:?}");
    for c in &commands {
        let (code, short, _) = polytune(&[c, "-h"]);
        assert_eq!(code, 0, "{c}");
        insta::assert_snapshot!(format!("help_{c}"), short);
        let (code, long, _) = polytune(&[c, "--help"]);
        assert_eq!(code, 0, "{c}");
        // The first line is the short summary, detail follows in the long
        // help only: one line per command in the list.
        let summary = short.lines().next().unwrap();
        assert!(summary.len() <= 80, "{c}: {summary}");
        assert!(long.starts_with(summary), "{c}");
    }
    for group in ["store", "models"] {
        let (_, help, _) = polytune(&[group, "--help"]);
        for sub in listed_commands(&help) {
            let (code, text, _) = polytune(&[group, &sub, "-h"]);
            assert_eq!(code, 0, "{group} {sub}");
            insta::assert_snapshot!(format!("help_{group}_{sub}"), text);
            let summary = text.lines().next().unwrap();
            assert!(summary.len() <= 80, "{group} {sub}: {summary}");
        }
    }
}

/// The longest an option's or argument's line in `-h` may be, in
/// characters of its own help (clap's `[default: …]`, `[possible values:
/// …]` and `[alias…]` notes not counted): one short sentence, the detail
/// in `--help`.
const SHORT_HELP: usize = 100;

/// Clap's notes after a help text, which `SHORT_HELP` does not count.
const NOTES: [&str; 5] = [
    "[default: ",
    "[possible values: ",
    "[alias: ",
    "[aliases: ",
    "[env: ",
];

/// Every entry of a `-h` text, (its name column, its help): options,
/// arguments and subcommands, with their help on the same line or on the
/// lines under it (clap's layout for long entries), wrapped lines joined.
/// Entries stand at column 2 (`-q, --quiet`, `<FILE>`, a subcommand) or 6
/// (`--config` without a short name); deeper lines continue the entry
/// above; a line at column 0 (a heading, `Usage:`, the summary) ends it.
fn entries(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        if body.is_empty() || indent == 0 {
            open = false;
        } else if indent == 2 || indent == 6 {
            let (name, help) = body.split_once("  ").unwrap_or((body, ""));
            out.push((name.trim().to_string(), help.trim().to_string()));
            open = true;
        } else if open {
            let help = &mut out.last_mut().unwrap().1;
            if !help.is_empty() {
                help.push(' ');
            }
            help.push_str(body.trim());
        }
    }
    out
}

/// An entry's help without clap's trailing notes.
fn own_help(help: &str) -> &str {
    let mut help = help.trim_end();
    while help.ends_with(']') {
        match help.rfind('[') {
            Some(i) if NOTES.iter().any(|n| help[i..].starts_with(n)) => {
                help = help[..i].trim_end()
            }
            _ => break,
        }
    }
    help
}

/// What is wrong with an entry's help line in `-h`: too long, or more
/// than one sentence (a full stop, then a capital).
fn short_help_faults(text: &str) -> Vec<String> {
    entries(text)
        .into_iter()
        .filter_map(|(name, help)| {
            let own = own_help(&help);
            let chars: Vec<char> = own.chars().collect();
            let sentences = chars
                .windows(3)
                .any(|w| w[0] == '.' && w[1] == ' ' && w[2].is_uppercase());
            let long = chars.len() > SHORT_HELP;
            (long || sentences).then(|| format!("{name}: {} characters: {own}", chars.len()))
        })
        .collect()
}

#[test]
fn the_entry_reader_finds_long_help_lines_in_every_layout() {
    let long = "word ".repeat(30);
    let same_line = format!(
        "Summary\n\nOptions:\n  -q, --quiet   Short\n      --long <X>  {long}[default: 1]\n"
    );
    let next_line = format!(
        "Summary\n\nOptions:\n  -q, --quiet\n          Short\n      --long <X>\n          {long}\n"
    );
    let wrapped =
        "Summary\n\nArguments:\n  <FILE>  one half of the line\n          and the other half\n";
    for text in [&same_line, &next_line] {
        let e = entries(text);
        assert_eq!(e.len(), 2, "{e:?}");
        assert_eq!(e[0], ("-q, --quiet".into(), "Short".into()));
        let faults = short_help_faults(text);
        assert_eq!(faults.len(), 1, "{faults:?}");
        assert!(
            faults[0].starts_with("--long <X>: 149 characters"),
            "{faults:?}"
        );
    }
    assert_eq!(
        entries(wrapped),
        [(
            "<FILE>".into(),
            "one half of the line and the other half".into()
        )]
    );
    assert_eq!(
        own_help("Size [default: a] [possible values: a, b]"),
        "Size"
    );
    assert_eq!(own_help("Models [all six]"), "Models [all six]");
    let two = "Options:\n      --x  One sentence. Then another\n";
    assert_eq!(short_help_faults(two).len(), 1);
    let abbreviated = "Options:\n      --x  Tile sizes, e.g. 64x256x8 (tile=)\n";
    assert!(short_help_faults(abbreviated).is_empty());
}

/// Issue 37: every option's and argument's line in any command's `-h`
/// is one short sentence; the detail is in `--help`.
#[test]
fn every_short_help_line_is_one_short_sentence() {
    let mut pages = vec![vec![]];
    for c in commands() {
        pages.push(vec![c.clone()]);
        let (_, help, _) = polytune(&[&c, "--help"]);
        pages.extend(
            listed_commands(&help)
                .into_iter()
                .map(|s| vec![c.clone(), s]),
        );
    }
    let mut faults = Vec::new();
    let mut seen = 0;
    for page in &pages {
        let mut args: Vec<&str> = page.iter().map(String::as_str).collect();
        args.push("-h");
        let (code, text, _) = polytune(&args);
        assert_eq!(code, 0, "{args:?}");
        seen += entries(&text).len();
        faults.extend(
            short_help_faults(&text)
                .into_iter()
                .map(|f| format!("polytune {}: {f}", page.join(" "))),
        );
    }
    // Every command's -q, -v and -h at least: the reader read the pages.
    assert!(
        seen > 3 * pages.len(),
        "{seen} entries in {} pages",
        pages.len()
    );
    assert!(
        faults.is_empty(),
        "-h lines over {SHORT_HELP} characters or of several sentences (keep the first sentence, move the rest to a paragraph after a blank `///` line):\n{}",
        faults.join("\n")
    );
}

/// One error of each kind a user meets first, with its exit code: what,
/// where (file:line:col when the input has a place), and what to do.
#[test]
fn the_main_errors() {
    let gemm = "polybench/linear-algebra/gemm.c";
    let cases: [(&str, &[&str]); 8] = [
        (
            "no_such_file",
            &["optimize", "nosuch.c", "--config", "000000000000"],
        ),
        (
            "no_scop",
            &[
                "optimize",
                "tests/fixtures/broken/compile_error.c",
                "--config",
                "000000000000",
            ],
        ),
        (
            "bad_config",
            &["optimize", gemm, "--config", "0101", "-o", "/dev/null"],
        ),
        (
            "bad_context",
            &[
                "optimize",
                gemm,
                "--config",
                "000000000000",
                "--context",
                "[n] -> { : n >",
                "-o",
                "/dev/null",
            ],
        ),
        (
            "bad_tile",
            &["optimize", gemm, "--tile", "0x5", "-o", "/dev/null"],
        ),
        ("unknown_command", &["frobnicate"]),
        ("unknown_option", &["optimize", gemm, "--frobnicate"]),
        (
            "characterize_without_scop",
            &["characterize", "tests/fixtures/broken/compile_error.c"],
        ),
    ];
    for (name, args) in cases {
        let (code, stdout, stderr) = polytune(args);
        assert!(stdout.is_empty(), "{name}: {stdout}");
        let first = stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("error: ") || first.contains(": error: "),
            "{name}: one style: {stderr}"
        );
        insta::assert_snapshot!(format!("error_{name}"), format!("exit {code}\n{stderr}"));
    }
}
