//! The architecture's invariants, checked on the source (rust-analyzer's
//! "tidy" is the model): ARCHITECTURE.md says them, this test holds them.
//!
//! - a layer imports only from the layers below it (`lab` and `engine`
//!   side by side, neither knowing the other; `learn` not the engine);
//! - `unsafe` only in the isl and libclang doors;
//! - no layer but the command line prints; the engine, the front end,
//!   the configuration and the isl door start no process;
//! - no layer but the command line names its options (`--timeout`) in a
//!   string: the layers below say what they want, the command line adds
//!   the option;
//! - a source file over 600 lines is a known departure, listed here with
//!   its reason until it is split.
//!
//! Test modules (`#[cfg(test)] mod ...` at a file's end) and comments are
//! not checked. Each check is a function over one file's path and text,
//! tested below on files made to break it (a test of the test).

use std::path::{Path, PathBuf};

/// The layers, and what each may import (ARCHITECTURE.md, "Layers").
const LAYERS: [(&str, &[&str]); 8] = [
    ("config", &[]),
    ("isl", &[]),
    ("frontend", &["config", "isl"]),
    ("engine", &["config", "isl", "frontend"]),
    ("lab", &["config", "isl", "frontend"]),
    ("learn", &["config", "isl", "frontend", "lab"]),
    (
        "app",
        &["config", "isl", "frontend", "engine", "lab", "learn"],
    ),
    (
        "cli",
        &["config", "isl", "frontend", "engine", "lab", "learn", "app"],
    ),
];

/// Where `unsafe` may be: the isl door and the libclang door.
const UNSAFE_DOORS: [&str; 2] = ["src/isl/", "src/frontend/detect/clang.rs"];

/// Layers that start no process: the pure ones.
const NO_PROCESS: [&str; 4] = ["config", "isl", "frontend", "engine"];

/// Files over [`LONG`] lines, each of which says why it is whole at its
/// top: a line of its module documentation starting [`WHY_WHOLE`]. A
/// file that shrinks below the limit must leave the list; a new one must
/// not join it without its reason.
const KNOWN_LONG: [&str; 13] = [
    "src/isl/mod.rs",
    "src/engine/driver/signature.rs",
    "src/frontend/lower/types.rs",
    "src/lab/store/schema.rs",
    "src/frontend/lower/expr.rs",
    "src/frontend/parse/build.rs",
    "src/lab/store/query.rs",
    "src/app/fuzz/program/random.rs",
    "src/learn/dataset.rs",
    "src/config.rs",
    "src/learn/search/bo.rs",
    "src/lab/characterize.rs",
    "src/learn/search/simulate.rs",
];

/// The words that give a long file's reason, in its top `//!` comment.
const WHY_WHOLE: &str = "Why one file:";

/// Lines a source file may have without a reason.
const LONG: usize = 600;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `src/`, as (path relative to the crate, text).
fn sources() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("src"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// The layer of `path` (`src/lab/x.rs` → `lab`); `None` for the crate's
/// root files (`lib.rs`, `main.rs`).
fn layer(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("src/")?;
    let first = rest.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    LAYERS.iter().any(|(l, _)| *l == name).then_some(name)
}

/// The code of a file without its test module and its comments, line by
/// line with their numbers (from 1).
fn code(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut end = lines.len();
    for (i, l) in lines.iter().enumerate() {
        let next = lines[i + 1..].iter().find(|x| !x.trim().is_empty());
        if l.trim() == "#[cfg(test)]" && next.is_some_and(|n| n.trim_start().starts_with("mod ")) {
            end = i;
            break;
        }
    }
    lines[..end]
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, strip_trailing_comment(l)))
        .collect()
}

/// A line without a `//` comment after its code (a `//` inside a string
/// literal is kept: the quotes before it are counted).
fn strip_trailing_comment(line: &str) -> String {
    let mut in_string = false;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '"' if prev != '\\' => in_string = !in_string,
            '/' if !in_string && prev == '/' => return line[..i - 1].to_string(),
            _ => {}
        }
        prev = c;
    }
    line.to_string()
}

/// The crate's top-level modules a line names: `crate::x` and the heads
/// of `use crate::{x, y::z}`.
fn named_layers(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            for item in inner.split(',') {
                let head: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !head.is_empty() {
                    out.push(head);
                }
            }
        } else {
            let head: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !head.is_empty() {
                out.push(head);
            }
        }
        rest = after;
    }
    out
}

/// Imports from a layer `path` may not use.
fn upward_imports(path: &str, text: &str) -> Vec<String> {
    let Some(l) = layer(path) else {
        return Vec::new();
    };
    let allowed = LAYERS.iter().find(|(x, _)| *x == l).unwrap().1;
    let mut out = Vec::new();
    for (n, line) in code(text) {
        for named in named_layers(&line) {
            let is_layer = LAYERS.iter().any(|(x, _)| *x == named);
            if is_layer && named != l && !allowed.contains(&named.as_str()) {
                out.push(format!(
                    "{path}:{n}: the {l} layer uses crate::{named}: {}",
                    line.trim()
                ));
            }
        }
    }
    out
}

/// Whether `line` has `word` as a whole word.
fn has_word(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + word.len()..].chars().next();
        let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        edge(before) && edge(after)
    })
}

fn unsafe_outside_doors(path: &str, text: &str) -> Vec<String> {
    if UNSAFE_DOORS.iter().any(|d| path.starts_with(d)) {
        return Vec::new();
    }
    code(text)
        .into_iter()
        .filter(|(_, l)| has_word(l, "unsafe"))
        .map(|(n, l)| {
            format!(
                "{path}:{n}: unsafe outside the isl and libclang doors: {}",
                l.trim()
            )
        })
        .collect()
}

fn prints(path: &str, text: &str) -> Vec<String> {
    if matches!(layer(path), None | Some("cli")) {
        return Vec::new();
    }
    const MACROS: [&str; 5] = ["println!", "eprintln!", "print!", "eprint!", "dbg!"];
    code(text)
        .into_iter()
        .filter(|(_, l)| {
            MACROS.iter().any(|m| {
                l.match_indices(m).any(|(i, _)| {
                    let before = l[..i].chars().next_back();
                    before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
                })
            })
        })
        .map(|(n, l)| {
            format!(
                "{path}:{n}: the {} layer prints (only the command line does): {}",
                layer(path).unwrap(),
                l.trim()
            )
        })
        .collect()
}

fn starts_processes(path: &str, text: &str) -> Vec<String> {
    let Some(l) = layer(path) else {
        return Vec::new();
    };
    if !NO_PROCESS.contains(&l) {
        return Vec::new();
    }
    code(text)
        .into_iter()
        .filter(|(_, line)| {
            line.contains("process::Command")
                || line.contains("Command::new")
                || line.contains("confine::run")
        })
        .map(|(n, line)| {
            format!(
                "{path}:{n}: the {l} layer starts a process: {}",
                line.trim()
            )
        })
        .collect()
}

fn too_long(path: &str, text: &str) -> Vec<String> {
    let lines = text.lines().count();
    let known = KNOWN_LONG.contains(&path);
    // The module documentation at the file's top, `//!` lines.
    let says_why = text.lines().take_while(|l| l.starts_with("//!")).any(|l| {
        l.trim_start_matches("//!")
            .trim_start()
            .starts_with(WHY_WHOLE)
    });
    match (lines > LONG, known) {
        (true, false) => vec![format!(
            "{path}: {lines} lines, over {LONG}: split it, or list it in tests/tidy.rs' KNOWN_LONG with its reason at its top (`//! {WHY_WHOLE} …`)"
        )],
        (true, true) if !says_why => vec![format!(
            "{path}: {lines} lines, over {LONG}: say why it is whole at its top (`//! {WHY_WHOLE} …`)"
        )],
        (false, true) => vec![format!(
            "{path}: {lines} lines, no longer over {LONG}: take it off tests/tidy.rs' KNOWN_LONG"
        )],
        _ => Vec::new(),
    }
}

/// Lines a function may have without saying at its top why it is one
/// function (a comment line with [`WHY_ONE`] just above it or among its
/// first lines).
const LONG_FN: usize = 120;

/// The words that give a long function's reason.
const WHY_ONE: &str = "Why one function:";

/// The functions of a file (test modules included) as (name, first line,
/// last line), from 1: the line of `fn` to the line of its closing brace.
/// A small lexer: braces in strings, raw strings, characters and comments
/// do not count; a `fn` without a body (`;` first) is not a function here.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let b = text.as_bytes();
    let (mut i, mut line, mut depth) = (0usize, 1usize, 0usize);
    // (name, first line, depth of its body's opening brace)
    let mut open: Vec<(String, usize, usize)> = Vec::new();
    // (name, first line, bracket depth at `fn`)
    let mut pending: Option<(String, usize, usize)> = None;
    let mut paren = 0usize;
    let mut out = Vec::new();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => line += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut nest = 0;
                while i < b.len() {
                    if b[i] == b'\n' {
                        line += 1;
                    }
                    if b[i..].starts_with(b"/*") {
                        nest += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        nest -= 1;
                        i += 2;
                        if nest == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                continue;
            }
            b'r' if (i == 0 || !ident(b[i - 1]))
                && matches!(b.get(i + 1), Some(b'#') | Some(b'"')) =>
            {
                let mut hashes = 0;
                let mut j = i + 1;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) == Some(&b'"') {
                    let close: Vec<u8> = std::iter::once(b'"')
                        .chain(std::iter::repeat_n(b'#', hashes))
                        .collect();
                    j += 1;
                    while j < b.len() && !b[j..].starts_with(&close) {
                        if b[j] == b'\n' {
                            line += 1;
                        }
                        j += 1;
                    }
                    i = j + close.len();
                    continue;
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    if i < b.len() && b[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
            b'\'' => {
                // A character literal ('x', '\n', '\u{..}'), not a lifetime.
                if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                } else if b.get(i + 2) == Some(&b'\'') {
                    i += 2;
                } else if let Some(n) = text[i + 1..].chars().next()
                    && text[i + 1 + n.len_utf8()..].starts_with('\'')
                {
                    i += n.len_utf8() + 1;
                }
            }
            b'f' if b[i..].starts_with(b"fn ") && (i == 0 || !ident(b[i - 1])) => {
                let name: String = text[i + 3..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    pending = Some((name, line, paren));
                }
            }
            b'(' | b'[' => paren += 1,
            b')' | b']' => paren = paren.saturating_sub(1),
            // A declaration without a body (a `;` outside the signature's
            // brackets: `[u8; 4]` is a type).
            b';' if pending.as_ref().is_some_and(|p| p.2 == paren) => pending = None,
            b'{' => {
                depth += 1;
                if let Some((name, first, _)) = pending.take() {
                    open.push((name, first, depth));
                }
            }
            b'}' => {
                if open.last().is_some_and(|o| o.2 == depth) {
                    let (name, first, _) = open.pop().unwrap();
                    out.push((name, first, line));
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Whether the function starting at line `first` (from 1) says why it is
/// one function: just above it (its doc and attributes) or in its first
/// lines.
fn says_why(lines: &[&str], first: usize) -> bool {
    let above = lines[..first - 1]
        .iter()
        .rev()
        .take_while(|l| {
            let t = l.trim_start();
            t.starts_with("//") || t.starts_with("#[")
        })
        .any(|l| l.contains(WHY_ONE));
    let inside = lines[first - 1..]
        .iter()
        .take(12)
        .any(|l| l.trim_start().starts_with("//") && l.contains(WHY_ONE));
    above || inside
}

/// Every function over [`LONG_FN`] lines without its reason at its top
/// (the six found when the check came, 2026-11-28, were split into named
/// stages: no debt is kept).
fn long_functions(path: &str, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    functions(text)
        .iter()
        .filter(|(_, first, last)| last - first + 1 > LONG_FN && !says_why(&lines, *first))
        .map(|(name, first, last)| {
            format!(
                "{path}:{first}: fn {name} is {} lines, over {LONG_FN}: split it into named stages, or say at its top why it is one (`{WHY_ONE} …`)",
                last - first + 1
            )
        })
        .collect()
}

/// Where the command line's options are declared: the only layer that
/// may name them.
const CLI: &str = "src/cli/";

/// Options of other programs spelled like one of the command line's, by
/// the file that passes them and the program's name.
const FOREIGN_OPTIONS: [(&str, &str, &str); 1] = [("src/app/slurm.rs", "output", "sbatch")];

/// The long options the command line declares (`--name`, without the
/// dashes), read from its clap attributes: `#[arg(long = "x")]`, or
/// `#[arg(long)]` on a field `x_y` (`--x-y`), and their aliases. Read
/// from the crate's own `src/cli/`, once.
fn cli_flags() -> &'static [String] {
    static FLAGS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    FLAGS.get_or_init(|| {
        let mut flags: Vec<String> = sources()
            .iter()
            .filter(|(p, _)| p.starts_with(CLI))
            .flat_map(|(_, t)| declared_flags(t))
            .collect();
        flags.sort();
        flags.dedup();
        flags
    })
}

/// The long options and aliases one file's `#[arg(...)]` attributes
/// declare.
fn declared_flags(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].trim_start().starts_with("#[arg(") {
            i += 1;
            continue;
        }
        // The attribute, over its lines, to its closing `)]`.
        let mut attr = String::new();
        while i < lines.len() {
            attr.push_str(lines[i].trim());
            attr.push(' ');
            i += 1;
            if attr.trim_end().ends_with(")]") {
                break;
            }
        }
        let values = |key: &str| -> Vec<String> {
            attr.match_indices(key)
                .filter(|(at, _)| {
                    let before = attr[..*at].chars().next_back();
                    before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
                })
                .filter_map(|(at, _)| {
                    let rest = attr[at + key.len()..].trim_start().strip_prefix('=')?;
                    let rest = rest.trim_start().strip_prefix('"')?;
                    Some(rest.split('"').next()?.to_string())
                })
                .collect()
        };
        for key in ["alias", "visible_alias"] {
            out.extend(values(key));
        }
        let named = values("long");
        if !named.is_empty() {
            out.extend(named);
        } else if has_word(&attr, "long") {
            // The field the attribute is on: its name in kebab case.
            let field = lines[i..]
                .iter()
                .map(|l| l.trim())
                .find(|l| !l.starts_with("#[") && !l.starts_with("//") && !l.is_empty());
            if let Some(f) = field.and_then(|f| f.split(':').next()) {
                let name = f
                    .trim()
                    .trim_start_matches("pub(crate) ")
                    .trim_start_matches("pub ");
                out.push(name.replace('_', "-"));
            }
        }
    }
    out
}

/// The string literals of a file's code (its test module and comments
/// left out) as (line of their start, text), plain and raw.
fn string_literals(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let end = code(text).last().map_or(0, |(n, _)| *n).min(lines.len());
    let text = lines[..end].join("\n");
    let b = text.as_bytes();
    let (mut i, mut line) = (0usize, 1usize);
    let mut out = Vec::new();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        match b[i] {
            b'\n' => line += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let close = text[i..].find("*/").map_or(b.len(), |e| i + e + 2);
                line += text[i..close].matches('\n').count();
                i = close;
                continue;
            }
            b'r' if (i == 0 || !ident(b[i - 1])) && matches!(b.get(i + 1), Some(b'#' | b'"')) => {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                let open = i + 1 + hashes;
                if b.get(open) == Some(&b'"') {
                    let close = format!("\"{}", "#".repeat(hashes));
                    let body_end = text[open + 1..]
                        .find(&close)
                        .map_or(b.len(), |e| open + 1 + e);
                    let body = &text[open + 1..body_end];
                    out.push((line, body.to_string()));
                    line += body.matches('\n').count();
                    i = body_end + close.len();
                    continue;
                }
            }
            b'"' => {
                let (start, from) = (line, i + 1);
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    if b.get(i) == Some(&b'\n') {
                        line += 1;
                    }
                    i += 1;
                }
                out.push((start, text[from..i.min(b.len())].to_string()));
            }
            b'\'' => {
                // A character literal ('"', '\'', 'x'), not a lifetime.
                if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                } else if b.get(i + 2) == Some(&b'\'') {
                    i += 2;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The command line's options a text names (`--name`, not a longer
/// name that begins the same).
fn flags_named<'a>(text: &str, flags: &'a [String]) -> Vec<&'a str> {
    flags
        .iter()
        .filter(|f| {
            let spelled = format!("--{f}");
            text.match_indices(&spelled).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let after = text[at + spelled.len()..].chars().next();
                before.is_none_or(|c| !(c.is_alphanumeric() || c == '-'))
                    && after.is_none_or(|c| !(c.is_alphanumeric() || c == '-' || c == '_'))
            })
        })
        .map(String::as_str)
        .collect()
}

/// A layer below the command line that names one of its options: the
/// option is the command line's word; the layer below says what it wants
/// (the time limit, the program's arguments) and the command line adds
/// the option in its help.
fn names_cli_flags(path: &str, text: &str) -> Vec<String> {
    if path.starts_with(CLI) || layer(path).is_none() || test_files().iter().any(|t| t == path) {
        return Vec::new();
    }
    string_literals(text)
        .into_iter()
        .flat_map(|(n, s)| {
            flags_named(&s, cli_flags())
                .into_iter()
                .filter(|f| !FOREIGN_OPTIONS.iter().any(|(p, o, _)| *p == path && o == f))
                .map(move |f| {
                    format!(
                        "{path}:{n}: the {} layer names the command line's option --{f} (say what it wants; the command line adds the option)",
                        layer(path).unwrap()
                    )
                })
        })
        .collect()
}

/// Files that are test modules of their own (`#[cfg(test)] mod x;` in
/// their parent): not checked, like the test modules at a file's end.
fn test_files() -> &'static [String] {
    static FILES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let files = sources();
        let mut out = Vec::new();
        for (p, t) in &files {
            let lines: Vec<&str> = t.lines().collect();
            for w in lines.windows(2) {
                let decl = w[1].trim();
                let decl = decl.strip_prefix("pub(crate) ").unwrap_or(decl);
                let Some(name) = decl.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) else {
                    continue;
                };
                if w[0].trim() != "#[cfg(test)]" {
                    continue;
                }
                let dir = match p.strip_suffix("mod.rs") {
                    Some(d) => d.to_string(),
                    None => format!("{}/", p.strip_suffix(".rs").unwrap()),
                };
                out.push(format!("{dir}{name}.rs"));
            }
        }
        out
    })
}

/// Every check over every file.
fn violations(files: &[(String, String)]) -> Vec<String> {
    let checks: [fn(&str, &str) -> Vec<String>; 7] = [
        upward_imports,
        unsafe_outside_doors,
        prints,
        starts_processes,
        too_long,
        long_functions,
        names_cli_flags,
    ];
    files
        .iter()
        .flat_map(|(p, t)| checks.iter().flat_map(move |c| c(p, t)))
        .collect()
}

#[test]
fn the_source_keeps_the_architectures_invariants() {
    let files = sources();
    assert!(files.len() > 100, "the source was not found");
    let v = violations(&files);
    assert!(v.is_empty(), "{}", v.join("\n"));
    // Every known long file exists.
    for p in &KNOWN_LONG {
        assert!(files.iter().any(|(f, _)| f == p), "{p} is listed but gone");
    }
}

/// A test of the test: files made to break each invariant are caught, and
/// the same code in a test module or a comment is not.
#[test]
fn broken_invariants_are_caught() {
    let file = |p: &str, t: &str| vec![(p.to_string(), t.to_string())];
    let caught = |p: &str, t: &str| violations(&file(p, t));
    // A lower layer importing a higher one, plainly or in a group.
    assert_eq!(
        caught("src/lab/x.rs", "use crate::engine::Scop;\n").len(),
        1
    );
    assert_eq!(
        caught(
            "src/learn/x.rs",
            "use crate::{config::Config, engine::space};\n"
        )
        .len(),
        1
    );
    assert_eq!(
        caught("src/engine/x.rs", "fn f() { crate::app::go() }\n").len(),
        1
    );
    assert!(caught("src/app/x.rs", "use crate::{engine, lab::x, learn};\n").is_empty());
    // unsafe outside the doors, but not in a door or a comment.
    assert_eq!(
        caught("src/lab/x.rs", "fn f() { unsafe { g() } }\n").len(),
        1
    );
    assert!(caught("src/isl/x.rs", "fn f() { unsafe { g() } }\n").is_empty());
    assert!(caught("src/lab/x.rs", "/// no `unsafe` here\nfn f() {}\n").is_empty());
    // Printing and spawning.
    assert_eq!(
        caught("src/app/x.rs", "fn f() { eprintln!(\"x\"); }\n").len(),
        1
    );
    assert_eq!(
        caught("src/engine/x.rs", "fn f() { println!(\"x\"); }\n").len(),
        1
    );
    assert!(caught("src/cli/x.rs", "fn f() { println!(\"x\"); }\n").is_empty());
    assert_eq!(
        caught(
            "src/engine/x.rs",
            "fn f() { std::process::Command::new(\"cc\"); }\n"
        )
        .len(),
        1
    );
    assert!(caught("src/lab/x.rs", "fn f() { Command::new(\"cc\"); }\n").is_empty());
    // In a test module: not checked.
    let tested = "fn f() {}\n\n#[cfg(test)]\nmod tests {\n    fn g() { println!(\"x\"); }\n}\n";
    assert!(caught("src/engine/x.rs", tested).is_empty());
    // A trailing comment, and `//` inside a string.
    assert!(caught("src/app/x.rs", "fn f() {} // println!(\"x\")\n").is_empty());
    assert_eq!(
        caught("src/app/x.rs", "fn f() { eprintln!(\"http://x\"); }\n").len(),
        1
    );
    // A long function without its reason, and with it; braces in
    // strings, characters and comments, and a declaration without a body,
    // do not confuse the count.
    let body = "    let x = 1;\n".repeat(LONG_FN);
    let long_fn = format!("fn f(a: [u8; 4]) {{\n{body}}}\n");
    assert_eq!(caught("src/lab/x.rs", &long_fn).len(), 1);
    let why = format!("/// Does f.\n// {WHY_ONE} a table of cases.\n{long_fn}");
    assert!(caught("src/lab/x.rs", &why).is_empty());
    let noisy =
        format!("fn g() -> u8;\nfn h() {{ let s = \"}}\"; let c = '}}'; /* }} */ }}\n{long_fn}");
    let v = caught("src/lab/x.rs", &noisy);
    assert!(v.len() == 1 && v[0].contains("fn f is 122 lines"), "{v:?}");
    // A layer below the command line naming one of its options: in a
    // plain string, over lines, in a raw string; not in the command line,
    // a comment, a test module, nor as a longer name or another program's
    // option of the same name.
    let names = |s: &str| {
        caught(
            "src/lab/x.rs",
            &format!("fn f() -> &'static str {{ {s} }}\n"),
        )
    };
    assert_eq!(names("\"help: raise --timeout\"").len(), 1);
    assert_eq!(
        names("\"give its arguments (--run-args), or\n  --run\"").len(),
        2
    );
    assert_eq!(names("r#\"another \"--db\"\"#").len(), 1);
    assert!(names("\"--dump --timeouts --db_x\"").is_empty());
    assert!(caught("src/cli/x.rs", "fn f() -> &'static str { \"--timeout\" }\n").is_empty());
    assert!(caught("src/lab/x.rs", "// raise --timeout\nfn f() {} // or --db\n").is_empty());
    let tested = "fn f() {}\n\n#[cfg(test)]\nmod tests {\n    const S: &str = \"--db\";\n}\n";
    assert!(caught("src/lab/x.rs", tested).is_empty());
    assert!(
        caught(
            "src/app/slurm.rs",
            "const S: &str = \"#SBATCH --output=x\";\n"
        )
        .is_empty()
    );
    assert_eq!(
        caught("src/app/other.rs", "const S: &str = \"--output=x\";\n").len(),
        1
    );
    // The options are read from clap's attributes: a field's name, a
    // given name, aliases; and the crate's own are found.
    let mut declared = declared_flags(
        "    /// Its arguments.\n    #[arg(long, value_name = \"ARGS\")]\n    pub run_args: String,\n    #[arg(\n        long = \"budget\",\n        visible_alias = \"shots\",\n    )]\n    shots: usize,\n    #[arg(short = 'I')]\n    include: Vec<String>,\n",
    );
    declared.sort();
    assert_eq!(declared, ["budget", "run-args", "shots"]);
    for f in [
        "timeout",
        "run-args",
        "param",
        "db",
        "priv",
        "assume-no-alias",
    ] {
        assert!(cli_flags().iter().any(|x| x == f), "--{f} not found");
    }
    // A long file without a reason, and a listed one that is short now.
    let long = "fn f() {}\n".repeat(LONG + 1);
    assert_eq!(caught("src/lab/new.rs", &long).len(), 1);
    assert_eq!(caught("src/config.rs", "fn f() {}\n").len(), 1);
    // A listed long file must say why it is whole at its top, not lower.
    assert_eq!(caught("src/config.rs", &long).len(), 1);
    let why = format!("//! The space.\n//!\n//! {WHY_WHOLE} it round-trips.\n{long}");
    assert!(caught("src/config.rs", &why).is_empty());
    let lower = format!("//! The space.\n{long}// {WHY_WHOLE} it round-trips.\n");
    assert_eq!(caught("src/config.rs", &lower).len(), 1);
}
