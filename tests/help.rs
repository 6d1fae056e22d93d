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
    let (_, store, _) = polytune(&["store", "--help"]);
    for sub in store
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
    {
        let (code, text, _) = polytune(&["store", sub, "-h"]);
        assert_eq!(code, 0, "store {sub}");
        insta::assert_snapshot!(format!("help_store_{sub}"), text);
    }
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
