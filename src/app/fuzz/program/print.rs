//! The printer: a program as a complete C file (parameters from `argv`,
//! deterministic initialization, the SCoP in a function, every array
//! printed in the `lab::dump` format).

use super::*;
use std::fmt::Write;

fn atomic_a(p: &Program, e: &AExpr) -> String {
    match e {
        AExpr::Var(_) => print_a(p, e),
        AExpr::Lit(v, _) if *v >= 0 => print_a(p, e),
        AExpr::Min(..) | AExpr::Max(..) => print_a(p, e),
        _ => format!("({})", print_a(p, e)),
    }
}

/// C text of an integer expression.
pub(crate) fn print_a(p: &Program, e: &AExpr) -> String {
    match e {
        AExpr::Lit(v, ty) => format!("{v}{}", ty.suffix()),
        AExpr::Var(v) => p.vars[*v].name.clone(),
        AExpr::Neg(a) => format!("-{}", atomic_a(p, a)),
        AExpr::Add(a, b) => format!("{} + {}", atomic_a(p, a), atomic_a(p, b)),
        AExpr::Sub(a, b) => format!("{} - {}", atomic_a(p, a), atomic_a(p, b)),
        AExpr::Mul(c, a) => format!("{c} * {}", atomic_a(p, a)),
        AExpr::Div(a, d) => format!("{} / {d}", atomic_a(p, a)),
        AExpr::Min(a, b) => format!("min({}, {})", print_a(p, a), print_a(p, b)),
        AExpr::Max(a, b) => format!("max({}, {})", print_a(p, a), print_a(p, b)),
        AExpr::Cast(t, a) => format!("({}){}", t.c_name(), atomic_a(p, a)),
    }
}

fn print_cond(p: &Program, c: &Cond) -> String {
    match c {
        Cond::Cmp(op, a, b) => format!("{} {} {}", print_a(p, a), op.symbol(), print_a(p, b)),
        Cond::And(a, b) => format!("({}) && ({})", print_cond(p, a), print_cond(p, b)),
        Cond::Or(a, b) => format!("({}) || ({})", print_cond(p, a), print_cond(p, b)),
        Cond::Not(a) => format!("!({})", print_cond(p, a)),
    }
}

/// An element as real code names it: every third array through an
/// element macro (`PT_AT2(A1, i, j)`, `#define PT_AT2(a, i, j)
/// a[i][j]`), the arrays after them with each subscript through a
/// parenthesized pure macro (`A2[PT_IX(i + 1)]`), the others plainly. The
/// choice follows the array, not the random stream: the programs are
/// those of the same seed without the macros.
fn print_access(p: &Program, a: &Access) -> String {
    let name = &p.arrays[a.array].name;
    let subs: Vec<String> = a.subs.iter().map(|e| print_a(p, e)).collect();
    match a.array % 3 {
        1 if (1..=4).contains(&subs.len()) => {
            format!("PT_AT{}({name}, {})", subs.len(), subs.join(", "))
        }
        2 => {
            let mut s = name.clone();
            for e in &subs {
                let _ = write!(s, "[PT_IX({e})]");
            }
            s
        }
        _ => {
            let mut s = name.clone();
            for e in &subs {
                let _ = write!(s, "[{e}]");
            }
            s
        }
    }
}

fn print_v(p: &Program, e: &VExpr, elem: Elem, top: bool) -> String {
    let wrap = |s: String| if top { s } else { format!("({s})") };
    match e {
        VExpr::Read(a) => print_access(p, a),
        VExpr::Scalar(s) => p.scalars[*s].name.clone(),
        VExpr::Int(v) => {
            if *v < 0 {
                format!("({v})")
            } else {
                v.to_string()
            }
        }
        VExpr::Float(f) => {
            if *f < 0.0 {
                format!("({f:?})")
            } else {
                format!("{f:?}")
            }
        }
        VExpr::Index(v) => format!("({}){}", elem.c_name(), p.vars[*v].name),
        // In parentheses: `a * (double)i*i` would be `(a * i) * i`.
        VExpr::Square(v) => format!("(({})PT_SQ({}))", elem.c_name(), p.vars[*v].name),
        VExpr::Add(a, b) => wrap(format!(
            "{} + {}",
            print_v(p, a, elem, false),
            print_v(p, b, elem, false)
        )),
        VExpr::Sub(a, b) => wrap(format!(
            "{} - {}",
            print_v(p, a, elem, false),
            print_v(p, b, elem, false)
        )),
        VExpr::Mul(a, b) => wrap(format!(
            "{} * {}",
            print_v(p, a, elem, false),
            print_v(p, b, elem, false)
        )),
    }
}

/// The element type a statement computes in.
pub(crate) fn lhs_elem(p: &Program, lhs: &Lhs) -> Elem {
    match lhs {
        Lhs::Array(a) => p.arrays[a.array].elem,
        Lhs::Scalar(s) => p.scalars[*s].elem,
    }
}

pub(super) fn print_stmts(p: &Program, body: &[Stmt], indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    for s in body {
        match s {
            Stmt::For(l) => {
                let v = &p.vars[l.var];
                let step = match l.step {
                    1 => format!("{}++", v.name),
                    -1 => format!("{}--", v.name),
                    s if s > 0 => format!("{} += {s}", v.name),
                    s => format!("{} -= {}", v.name, -s),
                };
                let _ = writeln!(
                    out,
                    "{pad}for ({} {} = {}; {}; {step}) {{",
                    v.ty.c_name(),
                    v.name,
                    print_a(p, &l.init),
                    print_cond(p, &l.cond)
                );
                print_stmts(p, &l.body, indent + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::If { cond, then, other } => {
                let _ = writeln!(out, "{pad}if ({}) {{", print_cond(p, cond));
                print_stmts(p, then, indent + 1, out);
                match other {
                    Some(o) => {
                        let _ = writeln!(out, "{pad}}} else {{");
                        print_stmts(p, o, indent + 1, out);
                        let _ = writeln!(out, "{pad}}}");
                    }
                    None => {
                        let _ = writeln!(out, "{pad}}}");
                    }
                }
            }
            Stmt::IfData { read, then } => {
                let _ = writeln!(out, "{pad}if ({} > 0) {{", print_access(p, read));
                print_stmts(p, then, indent + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Assign { lhs, add, rhs } => {
                let l = match lhs {
                    Lhs::Array(a) => print_access(p, a),
                    Lhs::Scalar(s) => p.scalars[*s].name.clone(),
                };
                let op = if *add { "+=" } else { "=" };
                let _ = writeln!(
                    out,
                    "{pad}{l} {op} {};",
                    print_v(p, rhs, lhs_elem(p, lhs), true)
                );
            }
        }
    }
}

/// Initial value of element `k` (row-major flat index) of array `id`;
/// the C text below computes the same.
pub(crate) fn init_value(elem: Elem, id: usize, k: u64) -> crate::app::fuzz::interp::Val {
    use crate::app::fuzz::interp::Val;
    let id = id as u64;
    match elem {
        Elem::Long => Val::Long(((k * 7 + 3 + 5 * id) % 23) as i64 - 11),
        Elem::ULong => Val::ULong(
            k.wrapping_mul(2654435761)
                .wrapping_add(7 + id)
                .wrapping_rem(1000),
        ),
        Elem::Double => Val::Double(((k * 13 + 5 + id) % 17) as f64 / 8.0 + 0.25),
    }
}

fn init_c(elem: Elem, id: usize) -> String {
    match elem {
        Elem::Long => format!("(long)((k * 7UL + {}UL) % 23UL) - 11", 3 + 5 * id),
        Elem::ULong => format!("(k * 2654435761UL + {}UL) % 1000UL", 7 + id),
        Elem::Double => format!("(double)((k * 13UL + {}UL) % 17UL) / 8.0 + 0.25", 5 + id),
    }
}

/// Initial value of scalar `id`.
pub(crate) fn scalar_init(elem: Elem, id: usize) -> crate::app::fuzz::interp::Val {
    init_value(elem, 100 + id, 0)
}

/// The complete C program.
pub(crate) fn print_program(p: &Program) -> String {
    let mut out = prelude("");
    for a in &p.arrays {
        let dims: String = a.extents.iter().map(|e| format!("[{e}]")).collect();
        let _ = writeln!(out, "static {} {}{dims};", a.elem.c_name(), a.name);
    }
    global_scalars(p, &mut out);
    let _ = writeln!(out, "\nstatic void kernel({})\n{{", kernel_params(p, false));
    local_scalars(p, &mut out);
    out.push_str("#pragma scop\n");
    print_stmts(p, &p.body, 1, &mut out);
    out.push_str("#pragma endscop\n}\n\nstatic void init(void)\n{\n");
    for (id, a) in p.arrays.iter().enumerate() {
        let n: usize = a.extents.iter().product();
        let zeros: String = a.extents.iter().map(|_| "[0]").collect();
        init_block(&mut out, a.elem, &format!("&{}{zeros}", a.name), n, id);
    }
    init_scalars(p, &mut out);
    out.push_str("}\n\n");
    out.push_str(DUMP_FUNCTIONS);
    main_head(p, &mut out);
    let _ = writeln!(out, "  init();\n  kernel({});", param_names(p).join(", "));
    for a in &p.arrays {
        let n: usize = a.extents.iter().product();
        let zeros: String = a.extents.iter().map(|_| "[0]").collect();
        dump(&mut out, a.elem, &a.name, &format!("&{}{zeros}", a.name), n);
    }
    dump_scalars(p, "", &mut out);
    out.push_str("  return 0;\n}\n");
    out
}

/// The head of the file: the includes and the macros the program uses,
/// after a first comment that says what wrote it (`what`: the mode).
pub(super) fn prelude(what: &str) -> String {
    format!(
        "/* generated by polytune fuzz{what} */\n\
         #include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\
         #define min(a, b) ((a) < (b) ? (a) : (b))\n\
         #define max(a, b) ((a) > (b) ? (a) : (b))\n\
         #define PT_SQ(x) x*x\n\
         #define PT_IX(x) ((x))\n\
         #define PT_AT1(a, i) a[i]\n\
         #define PT_AT2(a, i, j) a[i][j]\n\
         #define PT_AT3(a, i, j, k) a[i][j][k]\n\
         #define PT_AT4(a, i, j, k, l) a[i][j][k][l]\n\n"
    )
}

/// The declarations of the scalars that outlive the kernel.
pub(super) fn global_scalars(p: &Program, out: &mut String) {
    for s in p.scalars.iter().filter(|s| !s.local) {
        let _ = writeln!(out, "static {} {};", s.elem.c_name(), s.name);
    }
}

/// The kernel's parameter list: the program's parameters, then, with
/// `arrays`, each array as a pointer parameter (`double *A` for one
/// dimension; `double B[5][7]` and `double (*C)[7]` in turn for more).
pub(super) fn kernel_params(p: &Program, arrays: bool) -> String {
    let mut v: Vec<String> = p
        .params()
        .iter()
        .map(|&v| format!("{} {}", p.vars[v].ty.c_name(), p.vars[v].name))
        .collect();
    if arrays {
        for (k, a) in p.arrays.iter().enumerate() {
            let ty = a.elem.c_name();
            let inner: String = a.extents[1..].iter().map(|e| format!("[{e}]")).collect();
            v.push(match (a.rank, k % 2) {
                (1, _) => format!("{ty} *{}", a.name),
                (_, 0) => format!("{ty} {}[{}]{inner}", a.name, a.extents[0]),
                _ => format!("{ty} (*{}){inner}", a.name),
            });
        }
    }
    if v.is_empty() {
        "void".to_string()
    } else {
        v.join(", ")
    }
}

/// The kernel's own scalars, declared and set at its start.
pub(super) fn local_scalars(p: &Program, out: &mut String) {
    for (id, s) in p.scalars.iter().enumerate().filter(|(_, s)| s.local) {
        let _ = writeln!(
            out,
            "  {} {};\n  {{ unsigned long k = 0; {} = {}; }}",
            s.elem.c_name(),
            s.name,
            s.name,
            init_c(s.elem, 100 + id)
        );
    }
}

/// Sets `n` elements from `first` on to the initial values of `id`.
pub(super) fn init_block(out: &mut String, elem: Elem, first: &str, n: usize, id: usize) {
    let _ = writeln!(
        out,
        "  {{ {} *p = {first}; for (unsigned long k = 0; k < {n}UL; k++) p[k] = {}; }}",
        elem.c_name(),
        init_c(elem, id)
    );
}

/// Sets the scalars that outlive the kernel to their initial values.
pub(super) fn init_scalars(p: &Program, out: &mut String) {
    for (id, s) in p.scalars.iter().enumerate().filter(|(_, s)| !s.local) {
        let _ = writeln!(
            out,
            "  {{ unsigned long k = 0; {} = {}; }}",
            s.name,
            init_c(s.elem, 100 + id)
        );
    }
}

/// The functions that print arrays in the `lab::dump` format.
pub(super) const DUMP_FUNCTIONS: &str = "static void dump_long(const char *name, const long *p, unsigned long n)\n\
     {\n  printf(\"begin %s %lu\\n\", name, n);\n  for (unsigned long k = 0; k < n; k++) printf(\"%ld\\n\", p[k]);\n  printf(\"end %s\\n\", name);\n}\n\n\
     static void dump_unsigned_long(const char *name, const unsigned long *p, unsigned long n)\n\
     {\n  printf(\"begin %s %lu\\n\", name, n);\n  for (unsigned long k = 0; k < n; k++) printf(\"%lu\\n\", p[k]);\n  printf(\"end %s\\n\", name);\n}\n\n\
     static void dump_double(const char *name, const double *p, unsigned long n)\n\
     {\n  printf(\"begin %s %lu bits\\n\", name, n);\n  for (unsigned long k = 0; k < n; k++) {\n    unsigned long long b;\n    memcpy(&b, &p[k], sizeof b);\n    printf(\"%016llx\\n\", b);\n  }\n  printf(\"end %s\\n\", name);\n}\n\n";

/// `main` up to the kernel's first call: the parameters read from `argv`.
pub(super) fn main_head(p: &Program, out: &mut String) {
    let params = p.params();
    let _ = writeln!(
        out,
        "int main(int argc, char **argv)\n{{\n  if (argc != {}) {{\n    fprintf(stderr, \"usage: %s{}\\n\", argv[0]);\n    return 2;\n  }}",
        params.len() + 1,
        params
            .iter()
            .map(|&v| format!(" {}", p.vars[v].name))
            .collect::<String>()
    );
    for (k, &v) in params.iter().enumerate() {
        let var = &p.vars[v];
        let read = match var.ty {
            IntTy::Int => format!("(int)strtol(argv[{}], 0, 10)", k + 1),
            IntTy::Long => format!("strtol(argv[{}], 0, 10)", k + 1),
            IntTy::UInt => format!("(unsigned)strtoul(argv[{}], 0, 10)", k + 1),
            IntTy::ULong => format!("strtoul(argv[{}], 0, 10)", k + 1),
        };
        let _ = writeln!(out, "  {} {} = {read};", var.ty.c_name(), var.name);
    }
}

/// The parameters' names, in the kernel's order.
pub(super) fn param_names(p: &Program) -> Vec<String> {
    p.params().iter().map(|&v| p.vars[v].name.clone()).collect()
}

/// Prints `n` values of type `elem` from the address `first` on, as `name`.
pub(super) fn dump(out: &mut String, elem: Elem, name: &str, first: &str, n: usize) {
    let ty = elem.c_name().replace(' ', "_");
    let _ = writeln!(out, "  dump_{ty}(\"{name}\", {first}, {n}UL);");
}

/// Prints the scalars that outlive the kernel, their names after `prefix`.
pub(super) fn dump_scalars(p: &Program, prefix: &str, out: &mut String) {
    for s in p.scalars.iter().filter(|s| !s.local) {
        dump(
            out,
            s.elem,
            &format!("{prefix}{}", s.name),
            &format!("&{}", s.name),
            1,
        );
    }
}
