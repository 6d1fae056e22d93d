//! A bare kernel (a SCoP's function, no `main`) driven by the main that
//! `engine::driver` generates: the two files build together, the program
//! runs and exits 0, and under AddressSanitizer no access leaves the
//! arrays the driver allocates (which would catch a footprint too small).

mod common;

use polytune::engine::driver::{Driver, DriverError, generate, has_main};
use polytune::frontend::{Options, parse_file};
use std::path::PathBuf;
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    common::root().join("tests/fixtures/bare_driver").join(name)
}

fn driver(name: &str, params: &[(&str, i64)]) -> Result<Driver, DriverError> {
    let src = parse_file(&fixture(name), &Options::default()).unwrap();
    assert!(!has_main(&src.text), "{name} has a main");
    let params: Vec<(String, i64)> = params.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    generate(&src, &params)
}

/// Builds the kernel with the driver text and runs it; the run's output
/// (status, stderr).
fn build_and_run(name: &str, driver: &Driver, flags: &[&str]) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("driver.c");
    std::fs::write(&main, &driver.text).unwrap();
    let exe = dir.path().join("kernel");
    let defines: Vec<String> = driver
        .defines
        .iter()
        .map(|(n, v)| format!("-D{n}={v}"))
        .collect();
    let out = Command::new("gcc")
        .args([
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-Wno-unknown-pragmas",
        ])
        .args(flags)
        .args(&defines)
        .arg(fixture(name))
        .arg(&main)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("gcc runs");
    assert!(
        out.status.success(),
        "gcc {name} + driver:\n{}\n--- driver.c ---\n{}",
        String::from_utf8_lossy(&out.stderr),
        driver.text
    );
    let run = Command::new("timeout")
        .arg("60")
        .arg(&exe)
        .env("ASAN_OPTIONS", "detect_leaks=1")
        .output()
        .unwrap();
    (
        run.status.success(),
        String::from_utf8_lossy(&run.stderr).into_owned(),
    )
}

const ASAN: &[&str] = &["-O1", "-g", "-fsanitize=address", "-fno-omit-frame-pointer"];

fn check(name: &str, params: &[(&str, i64)]) -> Driver {
    let d = driver(name, params).unwrap();
    let (ok, err) = build_and_run(name, &d, &["-O2"]);
    assert!(ok, "{name}: {err}");
    let (ok, err) = build_and_run(name, &d, ASAN);
    assert!(ok, "{name} under AddressSanitizer: {err}");
    assert!(err.is_empty(), "{name}: {err}");
    d
}

#[test]
fn a_vla_kernel_runs_with_its_driver() {
    let d = check("syrk_vla.c", &[("n", 120), ("m", 90)]);
    assert_eq!(d.functions, vec!["kernel_syrk"]);
    let extents: Vec<&[i64]> = d.arrays.iter().map(|a| a.extents.as_slice()).collect();
    assert_eq!(extents, vec![&[120, 120][..], &[120, 90][..]]);
}

#[test]
fn a_fixed_extent_kernel_runs_with_its_driver() {
    let d = check("stencil_fixed.c", &[("tsteps", 4), ("n", 200)]);
    let extents: Vec<&[i64]> = d.arrays.iter().map(|a| a.extents.as_slice()).collect();
    assert_eq!(extents, vec![&[200, 200][..], &[200, 200][..]]);
    // n = 201 would read row 200 of a 200-row array.
    let e = driver("stencil_fixed.c", &[("tsteps", 4), ("n", 201)]).unwrap_err();
    assert!(
        e.to_string()
            .contains("accesses `A` at index 200 in dimension 1, whose extent is 200"),
        "{e}"
    );
}

#[test]
fn pointers_sized_from_the_footprint_stay_in_bounds() {
    let d = check("footprint_pointers.c", &[("n", 50)]);
    let sizes: Vec<(&str, &[i64])> = d
        .arrays
        .iter()
        .map(|a| (a.parameter.as_str(), a.extents.as_slice()))
        .collect();
    assert_eq!(
        sizes,
        vec![("y", &[50][..]), ("x", &[52][..]), ("rows", &[99, 3][..])]
    );
    assert!(d.arrays.iter().all(|a| a.from_footprint));
    // The check can fail: one element less for `x`, and AddressSanitizer
    // reports the read past its end.
    let short = Driver {
        text: d
            .text
            .replace("(size_t)52ULL", "(size_t)51ULL")
            .replace("const double [52]", "const double [51]"),
        ..d.clone()
    };
    assert_ne!(short.text, d.text);
    let (ok, err) = build_and_run("footprint_pointers.c", &short, ASAN);
    assert!(!ok && err.contains("heap-buffer-overflow"), "{err}");
}

#[test]
fn a_pointer_of_unknown_extent_is_refused() {
    let e = driver("pointer_refused.c", &[("n", 10)])
        .unwrap_err()
        .to_string();
    let path = fixture("pointer_refused.c");
    assert!(
        e.starts_with(&format!(
            "{}:4:28: error: parameter `x` of `kernel_scale` (double *x) has no extent, and `kernel_scale` uses it outside the SCoP",
            path.display()
        )),
        "{e}"
    );
    assert!(
        e.contains("help: declare it as an array with extents, `double x[n]`, or write a main"),
        "{e}"
    );
}

#[test]
fn the_corpus_programs_have_a_main() {
    let files = common::corpus_files();
    assert!(!files.is_empty());
    for f in files {
        let text = std::fs::read_to_string(common::root().join("polybench").join(&f)).unwrap();
        assert!(has_main(&text), "{f}");
    }
}

/// A kernel without pragmas and with pointers to VLA rows: `driver` and
/// the learned `optimize` find it with --detect, size its pointers from
/// the footprint, and the header of the output says how to rebuild the
/// driver (with --detect and --size-from-footprint, no empty `-I`).
#[test]
fn a_detected_kernel_is_driven_and_its_header_rebuilds_the_driver() {
    let bin = env!("CARGO_BIN_EXE_polytune");
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("conv_vla_rows.c");
    std::fs::copy(fixture("conv_vla_rows.c"), &kernel).unwrap();
    let polytune = |args: &[&str]| {
        Command::new(bin)
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    // Without the footprint the row count is unknown: refused, with the way out.
    let out = polytune(&[
        "driver",
        "conv_vla_rows.c",
        "--detect",
        "--param",
        "h=40,w=50",
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--size-from-footprint"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = polytune(&[
        "driver",
        "conv_vla_rows.c",
        "--detect",
        "--param",
        "h=40,w=50",
        "--size-from-footprint",
        "-o",
        "driver.c",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Kernel and driver under AddressSanitizer: no access outside the arrays.
    let exe = dir.path().join("conv");
    let built = Command::new("gcc")
        .args([
            "-O1",
            "-g",
            "-fsanitize=address",
            "conv_vla_rows.c",
            "driver.c",
            "-o",
        ])
        .arg(&exe)
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(built.success());
    let run = Command::new(&exe).output().unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out = polytune(&[
        "optimize",
        "conv_vla_rows.c",
        "--detect",
        "--param",
        "h=40",
        "--param",
        "w=50",
        "--size-from-footprint",
        "--shots",
        "1",
        "-q",
        "-o",
        "out.c",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join("out.c")).unwrap();
    let header = text.lines().nth(1).unwrap();
    assert!(
        header.contains(
            "`polytune driver conv_vla_rows.c --detect --param h=40,w=50 --size-from-footprint`"
        ),
        "{header}"
    );
    assert!(header.contains("-I ."), "{header}");
    assert!(
        !header.contains("-I ''") && !header.contains("polybench/include"),
        "{header}"
    );
}
