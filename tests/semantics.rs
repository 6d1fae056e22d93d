//! The polyhedral description means what the C means: for SCoPs that use
//! every construct the front end accepts, the statement instances a real
//! run executes are exactly the integer points of the domains, and they run
//! in the lexicographic order of the original schedule.

use polytune::frontend::scop::Scop;
use polytune::frontend::scop::ast::{Stmt, StmtKind};
use polytune::frontend::scop::print::{expr_to_c, for_header};
use polytune::frontend::{self, Options};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;

const PARAMS: &[&str] = &["n", "m"];

/// The SCoP as C where every statement prints its name and iterators.
fn tracer(stmts: &[Stmt], scop: &Scop, indent: &str, out: &mut String) {
    for s in stmts {
        match &s.kind {
            StmtKind::For(l) => {
                out.push_str(&format!("{indent}{} {{\n", for_header(l)));
                tracer(
                    std::slice::from_ref(&l.body),
                    scop,
                    &format!("{indent}  "),
                    out,
                );
                out.push_str(&format!("{indent}}}\n"));
            }
            StmtKind::If { cond, then, other } => {
                out.push_str(&format!("{indent}if ({}) {{\n", expr_to_c(cond)));
                tracer(
                    std::slice::from_ref(then),
                    scop,
                    &format!("{indent}  "),
                    out,
                );
                out.push_str(&format!("{indent}}}\n"));
                if let Some(o) = other {
                    out.push_str(&format!("{indent}else {{\n"));
                    tracer(std::slice::from_ref(o), scop, &format!("{indent}  "), out);
                    out.push_str(&format!("{indent}}}\n"));
                }
            }
            StmtKind::Block(v) => tracer(v, scop, indent, out),
            StmtKind::Assign { id, .. } => {
                let st = &scop.statements[*id];
                let mut fmt = format!("S{id}");
                let mut args = String::new();
                for it in &st.iterators {
                    fmt.push_str(" %d");
                    args.push_str(&format!(", {it}"));
                }
                out.push_str(&format!("{indent}printf(\"{fmt}\\n\"{args});\n"));
            }
            _ => {}
        }
    }
}

fn check(body: &str) {
    let text = format!(
        "void k(int n, int m, double A[99][99], double s) {{\n  int i, j, k;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
    );
    let src = frontend::parse_source(Path::new("t.c"), text, &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let scop = &src.scops[0];
    let mut c = String::from(
        "#include <stdio.h>\n#include <stdlib.h>\n\
         #define min(a,b) ((a) < (b) ? (a) : (b))\n#define max(a,b) ((a) > (b) ? (a) : (b))\n\
         #define floord(x,d) (((x) < 0) ? -((-(x) + (d) - 1) / (d)) : (x) / (d))\n\
         #define ceild(x,d) (((x) < 0) ? -((-(x)) / (d)) : ((x) + (d) - 1) / (d))\n\
         int main(int argc, char **argv) {\n  int n = atoi(argv[1]), m = atoi(argv[2]);\n  int i, j, k;\n  (void)i; (void)j; (void)k;\n",
    );
    tracer(&scop.body, scop, "  ", &mut c);
    c.push_str("  return 0;\n}\n");
    let dir = tempfile::tempdir().unwrap();
    let cfile = dir.path().join("t.c");
    let exe = dir.path().join("t");
    std::fs::write(&cfile, &c).unwrap();
    let st = Command::new("gcc")
        .args(["-O0", "-w", "-o"])
        .arg(&exe)
        .arg(&cfile)
        .status()
        .unwrap();
    assert!(st.success(), "{c}");

    for (n, m) in [(0, 0), (1, 3), (4, 2), (7, 5), (10, 1)] {
        let out = Command::new(&exe)
            .arg(n.to_string())
            .arg(m.to_string())
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let mut executed: HashMap<usize, BTreeSet<Vec<i64>>> = HashMap::new();
        let mut last_time: Option<Vec<i64>> = None;
        for line in text.lines() {
            let mut w = line.split_whitespace();
            let id: usize = w.next().unwrap()[1..].parse().unwrap();
            let point: Vec<i64> = w.map(|x| x.parse().unwrap()).collect();
            let time = scop.statements[id].time(&point);
            if let Some(prev) = &last_time {
                assert!(
                    prev < &time,
                    "n={n} m={m}: {line} runs after time {prev:?} but has time {time:?}\n{body}"
                );
            }
            last_time = Some(time);
            assert!(
                executed.entry(id).or_default().insert(point),
                "instance executed twice: {line}"
            );
        }
        for st in &scop.statements {
            let d = st.iterators.len();
            let mut model = BTreeSet::new();
            let mut point = vec![-20i64; d];
            loop {
                let env = |name: &str| -> i64 {
                    if let Some(k) = st.iterators.iter().position(|x| x == name) {
                        point[k]
                    } else {
                        match PARAMS.iter().position(|p| *p == name) {
                            Some(0) => n,
                            Some(_) => m,
                            None => panic!("unknown variable {name}"),
                        }
                    }
                };
                if st.domain.eval(&env) {
                    model.insert(point.clone());
                }
                // next point of the box [-20, 40]^d
                let mut k = d;
                loop {
                    if k == 0 {
                        break;
                    }
                    k -= 1;
                    point[k] += 1;
                    if point[k] <= 40 {
                        k = usize::MAX;
                        break;
                    }
                    point[k] = -20;
                }
                if k != usize::MAX {
                    break;
                }
            }
            let ran = executed.remove(&st.id).unwrap_or_default();
            assert_eq!(
                ran, model,
                "S{} with n={n} m={m}: executed vs domain {}\n{body}",
                st.id, st.domain
            );
        }
    }
}

#[test]
fn rectangular_and_triangular() {
    check(
        "for (i = 0; i < n; i++) { A[i][0] = 1; for (j = i + 1; j <= n - 1; j++) A[i][j] = 2; A[i][1] = 3; }",
    );
}

#[test]
fn min_max_floord_ceild_bounds() {
    check(
        "for (i = max(0, n - 6); i <= min(n + 2, 3 * m); i++) for (j = ceild(i - 3, 2); j < floord(i + n, 3) + 1; j++) A[i][j] = 1;",
    );
}

#[test]
fn strides_and_downward_loops() {
    check("for (i = 1; i < n + 3; i += 3) for (j = i + m; j >= i; j -= 2) A[i][j] = 1;");
    check(
        "for (i = n; i > -3; i--) { s = 0; for (j = 0; j <= 2; j = j + 1) s += A[j][i]; A[i][i] = s; }",
    );
    check("for (int i = 2 * n; i >= 0; i -= 4) A[i][0] = 1;");
}

#[test]
fn guards_with_else_or_not() {
    check(
        "for (i = 0; i < n; i++) for (j = 0; j < m; j++) if (i == j || !(i + j < n)) A[i][j] = 1; else if (i != 2) A[i][j] = 2; else A[j][i] = 3;",
    );
    check(
        "for (i = 0; i <= n; i++) { if (i > 2 && i < m) { A[i][0] = 1; A[i][1] = 2; } A[i][2] = 3; }",
    );
}

#[test]
fn divisions_and_statements_outside_loops() {
    check(
        "s = 1; for (i = 0; i < n; i++) for (j = i / 2; j <= (i + m) / 3; j++) A[i][j] = s; A[0][0] = 2;",
    );
}

#[test]
fn sequences_of_nests_and_conjunctive_loop_conditions() {
    check(
        "for (i = 0; i < n && i < m; i++) A[i][0] = 1; for (i = 0; i < m; i++) for (j = 0; j < n && j <= i; j++) { A[i][j] = 2; A[j][i] = 3; }",
    );
}
