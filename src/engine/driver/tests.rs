use super::extent::Expr;
use super::signature::{FileScan, Kind, Scalar};
use super::*;
use crate::frontend::{Options, parse_source};
use std::path::Path;

fn source(text: &str) -> SourceFile {
    parse_source(Path::new("kernel.c"), text.to_string(), &Options::default()).unwrap()
}

fn params(list: &[(&str, i64)]) -> Vec<(String, i64)> {
    list.iter().map(|(n, v)| (n.to_string(), *v)).collect()
}

/// Each array parameter: its name, extents and whether they come from the
/// footprint.
fn sizes(d: &Driver) -> Vec<(&str, &[i64], bool)> {
    d.arrays
        .iter()
        .map(|a| (a.parameter.as_str(), a.extents.as_slice(), a.from_footprint))
        .collect()
}

/// The message with which the driver refuses `text` at the values `list`.
fn refusal(text: &str, list: &[(&str, i64)]) -> String {
    message(generate(&source(text), &params(list)).unwrap_err())
}

/// The driver refuses `text` at the values `list`, saying `needle`.
fn assert_refused(text: &str, list: &[(&str, i64)], needle: &str) {
    let e = refusal(text, list);
    assert!(e.contains(needle), "{e}");
}

fn message(e: DriverError) -> String {
    match e {
        DriverError::Source(d, _) => format!(
            "{}:{}: {} / {}",
            d.line,
            d.column,
            d.message,
            d.help.unwrap_or_default()
        ),
        other => other.to_string(),
    }
}

const SYRK: &str = "\
void kernel_syrk(int n, int m, double alpha, double beta, double C[n][n], double A[n][m])
{
#pragma scop
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
  }
#pragma endscop
}
";

#[test]
fn reads_the_signature_around_a_scop() {
    let text = "#define DATA_TYPE double\ntypedef float real;\n/* f(int x) */\n\
        int f(const long n, DATA_TYPE C[restrict n][n + 1], real *restrict x, double (*rows)[8],\n\
        size_t k, double y[], struct s *bad, double **pp, char *names[4])\n{\n  x[0] = 0;\n}\n";
    let scan = FileScan::new(text);
    let f = scan.function_at(text.find("x[0]").unwrap()).unwrap();
    assert_eq!(f.name, "f");
    assert_eq!(f.returns, Ok("int".to_string()));
    assert_eq!(f.internal, None);
    let kinds: Vec<(&str, &Kind)> = f
        .params
        .iter()
        .map(|p| (p.name.as_str(), &p.kind))
        .collect();
    let long = Scalar::Int {
        spelling: "long".into(),
        unsigned: false,
    };
    assert_eq!(kinds[0], ("n", &Kind::Scalar(long)));
    let n = || Some(Expr::Var("n".into()));
    let Kind::Array {
        element, extents, ..
    } = kinds[1].1
    else {
        panic!("{:?}", kinds[1])
    };
    assert_eq!(element, &Scalar::Float("double".into()));
    assert_eq!(extents[0], n());
    assert_eq!(extents[1].as_ref().unwrap().eval(&|_| Some(4)), Ok(Some(5)));
    let Kind::Array {
        element, extents, ..
    } = kinds[2].1
    else {
        panic!("{:?}", kinds[2])
    };
    assert_eq!(
        (element, extents.as_slice()),
        (&Scalar::Float("float".into()), &[None][..])
    );
    let Kind::Array { extents, .. } = kinds[3].1 else {
        panic!("{:?}", kinds[3])
    };
    assert_eq!(extents, &vec![None, Some(Expr::Num(8))]);
    assert!(matches!(
        kinds[4].1,
        Kind::Scalar(Scalar::Int { unsigned: true, .. })
    ));
    assert!(matches!(kinds[5].1, Kind::Array { extents, .. } if extents == &vec![None]));
    assert!(matches!(kinds[6].1, Kind::Other(w) if w.contains("struct")));
    assert!(matches!(kinds[7].1, Kind::Other(w) if w.contains("pointer to pointers")));
    assert!(matches!(kinds[8].1, Kind::Other(w) if w.contains("array of pointers")));
    assert!(scan.function_at(0).is_none());
    let st = "static inline void g(void) { int a; }\n";
    let g = FileScan::new(st)
        .function_at(st.find("int a").unwrap())
        .unwrap();
    assert_eq!((g.internal, g.params.len()), (Some("static"), 0));
}

#[test]
fn finds_main_only_where_it_is_defined() {
    assert!(has_main("int x;\nint main(void)\n{\n  return 0;\n}\n"));
    assert!(has_main("int main(int argc, char **argv) { return argc; }"));
    assert!(!has_main("/* int main(void) { } */\nvoid f(void) { }\n"));
    assert!(!has_main("const char *s = \"int main() {}\";\n"));
    assert!(!has_main("int main(void);\nvoid f(void) { main(); }\n"));
    assert!(!has_main(SYRK));
}

#[test]
fn sizes_vla_parameters_at_the_given_values() {
    let d = generate(&source(SYRK), &params(&[("n", 20), ("m", 18)])).unwrap();
    assert_eq!(d.functions, vec!["kernel_syrk"]);
    assert!(d.defines.is_empty());
    let sizes = sizes(&d);
    assert_eq!(
        sizes,
        vec![("C", &[20, 20][..], false), ("A", &[20, 18][..], false)]
    );
    assert!(
        d.text.contains(
            "void kernel_syrk(int, int, double, double, double [20][20], double [20][18]);"
        ),
        "{}",
        d.text
    );
    assert!(d.text.contains("kernel_syrk(20, 18, 1.5, 1.2, (double (*)[20])polytune_buf0, (double (*)[18])polytune_buf1);"), "{}", d.text);
    assert!(d.text.contains("int main(void)"));
    assert!(
        d.text
            .starts_with("/* Generated by polytune: a driver for kernel.c that calls kernel_syrk once at n=20, m=18.\n"),
        "{}",
        d.text
    );
}

#[test]
fn integer_values_must_fit_their_type() {
    assert!(fits("int", false, i32::MAX as i64) && !fits("int", false, i32::MAX as i64 + 1));
    assert!(!fits("unsigned", true, -1) && fits("unsigned int", true, u32::MAX as i64));
    assert!(fits("long", false, 1 << 40) && fits("size_t", true, 1 << 40));
    assert!(!fits("short", false, 40000) && !fits("unsigned char", true, 256));
    assert!(fits("int64_t", false, -(1 << 40)) && !fits("uint32_t", true, 1 << 32));
}

#[test]
fn sizes_pointers_from_the_footprint() {
    let text = "void f(int n, const double *restrict x, double *restrict y, double (*B)[4])\n{\n\
        #pragma scop\n  for (int i = 0; i < n; i++) {\n    y[i] = x[i + 2] + x[2 * i];\n    B[i + 1][3] = y[i];\n  }\n#pragma endscop\n}\n";
    let d = generate(&source(text), &params(&[("n", 10)])).unwrap();
    let sizes = sizes(&d);
    assert_eq!(
        sizes,
        vec![
            ("x", &[19][..], true),
            ("y", &[10][..], true),
            ("B", &[11, 4][..], true)
        ]
    );
    assert!(
        d.text.contains("(const double *)polytune_buf0"),
        "{}",
        d.text
    );
    assert!(
        d.text
            .contains("void f(int, const double [19], double [10], double [11][4]);"),
        "{}",
        d.text
    );
}

#[test]
fn macros_take_the_files_define_or_a_param() {
    let text = "#ifndef N\n#define N 100\n#endif\nvoid f(double A[N])\n{\n#pragma scop\n  for (int i = 0; i < N; i++)\n    A[i] = 0.5 * A[i];\n#pragma endscop\n}\n";
    let d = generate(&source(text), &[]).unwrap();
    assert_eq!(d.arrays[0].extents, vec![100]);
    assert!(d.defines.is_empty());
    let d = generate(&source(text), &params(&[("N", 7)])).unwrap();
    assert_eq!(d.arrays[0].extents, vec![7]);
    assert_eq!(d.defines, vec![("N".to_string(), 7)]);
    // Unconditional: the compile line cannot change it.
    let fixed = text.replace("#ifndef N\n", "").replace("#endif\n", "");
    assert_refused(
        &fixed,
        &[("N", 7)],
        "#defines N as 100, and not under #ifndef N",
    );
    // Guarded as PolyBench guards its sizes.
    let pb = text.replace(
        "#ifndef N\n",
        "#if !defined(M) && !defined (N)\n# ifdef SMALL\n#  define N 10\n# else\n",
    );
    let pb = pb.replace("#endif\n", "# endif\n#endif\n");
    let d = generate(&source(&pb), &params(&[("N", 7)])).unwrap();
    assert_eq!(d.defines, vec![("N".to_string(), 7)]);
    // Two values and no --param: which one is not known.
    let e = message(generate(&source(&pb), &[]).unwrap_err());
    assert!(e.contains("give its value, `N=VALUE`"), "{e}");
    let other = text.replace("#ifndef N", "#ifndef NX");
    assert!(generate(&source(&other), &params(&[("N", 7)])).is_err());
}

#[test]
fn refuses_what_it_cannot_drive() {
    let ptr = "void f(int n, double *x)\n{\n  x[0] = 1.0;\n#pragma scop\n  for (int i = 0; i < n; i++)\n    x[i] = x[i] * 2.0;\n#pragma endscop\n}\n";
    let e = refusal(ptr, &[("n", 5)]);
    assert!(
        e.starts_with("1:15: parameter `x` of `f` (double *x) has no extent"),
        "{e}"
    );
    assert!(
        e.contains("declare it as an array with extents, `double x[n]`, or write a main"),
        "{e}"
    );

    let st = "struct s { int a; };\nvoid f(int n, struct s *p, double A[n])\n{\n#pragma scop\n  for (int i = 0; i < n; i++)\n    A[i] = 1.0;\n#pragma endscop\n}\n";
    assert_refused(
        st,
        &[("n", 5)],
        "parameter `p` of `f` (struct s *p) is a struct, union or enum",
    );

    let e = refusal(SYRK, &[("n", 5)]);
    assert!(e.contains("`m`") && e.contains("`m=VALUE`"), "{e}");
    // What would let it be driven is typed (the command line names the
    // option that gives it).
    match generate(&source(SYRK), &params(&[("n", 5)])).unwrap_err() {
        DriverError::Source(_, needs) => assert_eq!(needs, Some(Needs::Value("m".into()))),
        other => panic!("{other}"),
    }
    let e = refusal(SYRK, &[("n", 5), ("m", 4), ("q", 1)]);
    assert_eq!(
        e,
        "the value of q: kernel.c has no kernel parameter or SCoP symbol of this name"
    );
    let e = refusal(SYRK, &[("n", 5), ("n", 4)]);
    assert_eq!(e, "the value of n: given twice");
    assert_refused(
        SYRK,
        &[("n", 1 << 40), ("m", 4)],
        "does not fit the type `int`",
    );

    let unknown = SYRK.replace("double C[n][n]", "real C[n][n]");
    assert_refused(
        &unknown,
        &[("n", 5), ("m", 4)],
        "parameter `C` of `kernel_syrk` (real C[n][n]) is of type `real`, which polytune does not know",
    );

    let stat = SYRK.replace("void kernel_syrk", "static void kernel_syrk");
    assert_refused(&stat, &[("n", 5), ("m", 4)], "`kernel_syrk` is static");
}

#[test]
fn refuses_bounds_that_the_params_do_not_tell() {
    let scop = "#pragma scop\n  for (int i = 0; i < n; i++)\n    A[i] = 1.0;\n#pragma endscop\n";
    for change in ["n = 2 * n;", "n++;", "--n;", "n <<= 1;", "g(&n);"] {
        let text =
            format!("void g(int *);\nvoid f(int n, double A[n])\n{{\n  {change}\n{scop}}}\n");
        let e = refusal(&text, &[("n", 5)]);
        assert!(
            e.contains("`f` may modify its parameter `n` before the SCoP"),
            "{change}: {e}"
        );
    }
    for fine in [
        "int k = n + 1;",
        "if (n == 3) return;",
        "double s = A[n - 1];",
    ] {
        let text = format!("void f(int n, double A[n])\n{{\n  {fine}\n{scop}}}\n");
        assert!(
            generate(&source(&text), &params(&[("n", 5)])).is_ok(),
            "{fine}"
        );
    }
    let global = format!("int n;\nvoid f(double A[100])\n{{\n{scop}}}\n");
    assert_refused(
        &global,
        &[("n", 5)],
        "the SCoP reads the variable `n`, which is not a parameter of `f`",
    );
}

#[test]
fn refuses_a_call_out_of_bounds() {
    let text = "void f(int n, double A[10], double B[n])\n{\n#pragma scop\n  for (int i = 0; i < n; i++)\n    A[i] = B[i - 1];\n#pragma endscop\n}\n";
    assert_refused(
        text,
        &[("n", 12)],
        "accesses `A` at index 11 in dimension 1, whose extent is 10",
    );
    assert_refused(text, &[("n", 5)], "accesses `B` at index -1 in dimension 1");
}

#[test]
fn one_call_per_function_in_file_order() {
    let text = "void g(int n, double A[n])\n{\n#pragma scop\n  for (int i = 0; i < n; i++)\n    A[i] = 1.0;\n#pragma endscop\n\
        #pragma scop\n  for (int i = 0; i < n; i++)\n    A[i] += 1.0;\n#pragma endscop\n}\n\
        double h(int n, float s, float B[restrict static 3])\n{\n#pragma scop\n  for (int i = 0; i < 3; i++)\n    B[i] = s;\n#pragma endscop\n  return 0;\n}\n";
    let d = generate(&source(text), &params(&[("n", 4)])).unwrap();
    assert_eq!(d.functions, vec!["g", "h"]);
    assert!(
        d.text.contains("double h(int, float, float [3]);"),
        "{}",
        d.text
    );
    assert!(
        d.text.contains("h(4, 1.5, (float *)polytune_buf1);"),
        "{}",
        d.text
    );
}

#[test]
fn a_delinearized_array_is_sized_by_its_linear_footprint() {
    let text = "void dmxpy(int n, int lda, double y[], double x[], double m[])\n{\n  int i, j;\n#pragma scop\n  for (j = 0; j < n; j++)\n    for (i = 0; i < n; i++)\n      y[i] = y[i] + x[j] * m[lda*j + i];\n#pragma endscop\n}\n";
    let d = generate(&source(text), &params(&[("n", 10), ("lda", 12)])).unwrap();
    // m: up to lda*(n-1) + n-1 = 117.
    assert_eq!(
        sizes(&d),
        vec![
            ("y", &[10][..], true),
            ("x", &[10][..], true),
            ("m", &[118][..], true)
        ]
    );
    // Declared with a fixed extent too small for the footprint: refused.
    let fixed = text.replace("double m[]", "double m[100]");
    assert_refused(&fixed, &[("n", 10), ("lda", 12)], "at index 117");
}

#[test]
fn a_region_left_as_written_beside_a_scop_is_refused() {
    // Polytune's own output: not modelled, so its arrays cannot be sized.
    let text = "void f(int n, double a[n], double b[n]) {\n  int i;\n#pragma scop\n  /* polytune: tile=1 */\n  for (i = 0; i < n; i++) a[i] = 0;\n#pragma endscop\n#pragma scop\n  for (i = 0; i < n; i++) b[i] = 1;\n#pragma endscop\n}\n";
    assert_refused(
        text,
        &[("n", 10)],
        "3:1: this region is left as written (see the warning above), so the driver cannot size the arrays it touches / write a main",
    );
    // In a function the driver does not call, it is plain code.
    let apart = text.replacen(
        "#pragma endscop\n#pragma scop\n",
        "#pragma endscop\n}\nvoid g(int n, double b[n]) {\n  int i;\n#pragma scop\n",
        1,
    );
    assert!(generate(&source(&apart), &params(&[("n", 10)])).is_ok());
}
