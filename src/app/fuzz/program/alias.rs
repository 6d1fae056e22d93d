//! The printer of `--alias` programs: the kernel takes its arrays as
//! pointer parameters and has no `#pragma scop` (detection must find
//! it), and `main` calls it first with the arrays apart (in globals of
//! their own: the dump of the normal mode), then once per overlapping
//! layout with the arrays in that layout's buffers (some of them sharing
//! one), dumping each call's buffers and scalars under its own names.

use super::print::{
    DUMP_FUNCTIONS, dump, dump_scalars, global_scalars, init_block, init_scalars, kernel_params,
    local_scalars, main_head, param_names, prelude, print_stmts,
};
use super::{Layout, Program};
use std::fmt::Write;

/// The C name of array `a`'s storage in the call with the arrays apart.
fn apart_name(p: &Program, a: usize) -> String {
    format!("g_{}", p.arrays[a].name)
}

/// The argument that passes array `a` at `offset` elements into `buffer`
/// (a one-dimensional array of its element type).
fn placed_arg(p: &Program, a: usize, buffer: &str, offset: usize) -> String {
    let arr = &p.arrays[a];
    let at = format!("{buffer} + {offset}");
    if arr.rank == 1 {
        return at;
    }
    let inner: String = arr.extents[1..].iter().map(|e| format!("[{e}]")).collect();
    format!("({} (*){inner})({at})", arr.elem.c_name())
}

/// The complete C program of the alias mode: the kernel called with the
/// arrays apart, then in each of `overlaps`.
pub(crate) fn print_alias_program(p: &Program, overlaps: &[Layout]) -> String {
    let mut out = prelude(" (alias mode)");
    for (a, arr) in p.arrays.iter().enumerate() {
        let dims: String = arr.extents.iter().map(|e| format!("[{e}]")).collect();
        let _ = writeln!(
            out,
            "static {} {}{dims};",
            arr.elem.c_name(),
            apart_name(p, a)
        );
    }
    for l in overlaps {
        for b in &l.buffers {
            let _ = writeln!(out, "static {} {}[{}];", b.elem.c_name(), b.name, b.len);
        }
    }
    global_scalars(p, &mut out);
    let _ = writeln!(out, "\nstatic void kernel({})\n{{", kernel_params(p, true));
    local_scalars(p, &mut out);
    print_stmts(p, &p.body, 1, &mut out);
    out.push_str("}\n\nstatic void init(void)\n{\n");
    for (id, arr) in p.arrays.iter().enumerate() {
        let n: usize = arr.extents.iter().product();
        let zeros: String = arr.extents.iter().map(|_| "[0]").collect();
        let first = format!("&{}{zeros}", apart_name(p, id));
        init_block(&mut out, arr.elem, &first, n, id);
    }
    init_scalars(p, &mut out);
    out.push_str("}\n\n");
    for (k, l) in overlaps.iter().enumerate() {
        let _ = writeln!(out, "static void init_overlap{}(void)\n{{", k + 1);
        for b in &l.buffers {
            init_block(&mut out, b.elem, &b.name, b.len, b.id);
        }
        init_scalars(p, &mut out);
        out.push_str("}\n\n");
    }
    out.push_str(DUMP_FUNCTIONS);
    main_head(p, &mut out);
    let mut args = param_names(p);
    args.extend((0..p.arrays.len()).map(|a| apart_name(p, a)));
    let _ = writeln!(out, "  init();\n  kernel({});", args.join(", "));
    for (a, arr) in p.arrays.iter().enumerate() {
        let n: usize = arr.extents.iter().product();
        let zeros: String = arr.extents.iter().map(|_| "[0]").collect();
        let first = format!("&{}{zeros}", apart_name(p, a));
        dump(&mut out, arr.elem, &arr.name, &first, n);
    }
    dump_scalars(p, "", &mut out);
    for (k, l) in overlaps.iter().enumerate() {
        let mut args = param_names(p);
        for (a, &(b, off)) in l.place.iter().enumerate() {
            args.push(placed_arg(p, a, &l.buffers[b].name, off));
        }
        let _ = writeln!(
            out,
            "  init_overlap{}();\n  kernel({});",
            k + 1,
            args.join(", ")
        );
        for b in &l.buffers {
            dump(&mut out, b.elem, &b.name, &b.name, b.len);
        }
        dump_scalars(p, &l.prefix, &mut out);
    }
    out.push_str("  return 0;\n}\n");
    out
}
