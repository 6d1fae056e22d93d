//! The README and the book (`docs/`, mdBook): the README stays short,
//! every chapter is in the book's summary and every summary entry exists,
//! and every relative link of the README and the book leads to a file
//! that exists (the book is built by `mdbook build docs` in CI, which
//! fails on a missing chapter).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn chapters() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("docs/src"), &mut out);
    out.sort();
    out
}

/// The targets of a Markdown text's inline links `[text](target)`,
/// outside code blocks and code spans.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        // Code spans out.
        let mut plain = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                plain.push_str(part);
            }
        }
        let mut rest = plain.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

/// Links of `file` whose target is not there.
fn broken(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    links(&text)
        .into_iter()
        .filter(|t| !t.starts_with("http://") && !t.starts_with("https://") && !t.starts_with('#'))
        .filter(|t| {
            let path = t.split('#').next().unwrap();
            !file.parent().unwrap().join(path).exists()
        })
        .map(|t| format!("{}: {t}", file.display()))
        .collect()
}

#[test]
fn the_readme_is_short() {
    let lines = std::fs::read_to_string(root().join("README.md"))
        .unwrap()
        .lines()
        .count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines: the detail goes to the book (docs/src)"
    );
}

#[test]
fn the_summary_and_the_chapters_match() {
    let src = root().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: Vec<PathBuf> = links(&summary).iter().map(|l| src.join(l)).collect();
    for l in &listed {
        assert!(
            l.exists(),
            "SUMMARY.md names {} which is not there",
            l.display()
        );
    }
    for c in chapters() {
        if c.ends_with("SUMMARY.md") {
            continue;
        }
        assert!(listed.contains(&c), "{} is not in SUMMARY.md", c.display());
    }
}

#[test]
fn every_relative_link_leads_somewhere() {
    let mut files = chapters();
    files.push(root().join("README.md"));
    files.push(root().join("ARCHITECTURE.md"));
    let bad: Vec<String> = files.iter().flat_map(|f| broken(f)).collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A test of the link check: a link to nothing is found; links in code
/// and to the web are not checked.
#[test]
fn a_broken_link_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.md");
    std::fs::write(dir.path().join("b.md"), "").unwrap();
    std::fs::write(
        &f,
        "[ok](b.md) [gone](c.md) [web](https://x.org) `[code](d.md)`\n```\n[block](e.md)\n```\n[anchor](b.md#x)\n",
    )
    .unwrap();
    let bad = broken(&f);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].ends_with(": c.md"));
}
