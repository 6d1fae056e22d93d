//! Unit tests of the refinement's steps and of each thread's rows.

use super::*;

fn cfg(s: &str) -> Config {
    s.parse().unwrap()
}

#[test]
fn steps_change_one_field_and_tile_what_a_register_tile_needs() {
    let c = cfg("fuse=smart,tile=32x32x1,omp=1");
    // The target's two best shapes, each as fused as before, else
    // distributed.
    assert_eq!(
        Step::PackedRegisterTile.apply(&c, VectorTarget::AVX512, None),
        [
            cfg("fuse=smart,tile=48x256x256,omp=1,rb=6x32,pack=1"),
            cfg("fuse=no,tile=48x256x256,omp=1,rb=6x32,pack=1"),
            cfg("fuse=smart,tile=64x256x192,omp=1,rb=8x24,pack=1"),
            cfg("fuse=no,tile=64x256x192,omp=1,rb=8x24,pack=1")
        ]
    );
    assert_eq!(
        Step::PackedRegisterTile.apply(&cfg("tile=64x64x64"), VectorTarget::AVX2, None),
        [
            cfg("tile=32x256x96,omp=1,rb=4x12,pack=1"),
            cfg("tile=48x256x64,omp=1,rb=6x8,pack=1")
        ]
    );
    // From one of them, only the other.
    assert_eq!(
        Step::PackedRegisterTile.apply(
            &cfg("tile=32x256x96,omp=1,rb=4x12,pack=1"),
            VectorTarget::AVX2,
            None
        ),
        [cfg("tile=48x256x64,omp=1,rb=6x8,pack=1")]
    );
    let apply = |s: Step, c: &Config| s.apply(c, VectorTarget::AVX2, None);
    assert_eq!(apply(Step::RegisterTile, &cfg("tile=64x64x64")).len(), 1);
    // Diamond tiles of their own shape, without register tile or
    // unroll-and-jam, also fused.
    assert_eq!(
        apply(
            Step::DiamondTiles,
            &cfg("fuse=smart,tile=1x128x8,omp=1,uj=8,rb=4x16")
        ),
        [
            cfg("fuse=smart,tile=32x32x256,omp=1,tt=diamond"),
            cfg("fuse=max,tile=32x32x256,omp=1,tt=diamond")
        ]
    );
    assert!(
        apply(
            Step::DiamondTiles,
            &cfg("fuse=max,tile=32x32x256,tt=diamond")
        )
        .is_empty()
    );
    assert_eq!(apply(Step::LargerTiles, &c)[0].tile, [64, 64, 1]);
    assert_eq!(apply(Step::SmallerTiles, &c)[0].tile, [16, 16, 1]);
    // Nothing to scale, nothing already on: no step.
    assert!(apply(Step::LargerTiles, &cfg("fuse=max")).is_empty());
    assert!(apply(Step::Reductions, &cfg("red=2")).is_empty());
    // red=1, then red=2 fused maximally as a plain nest, as fused as
    // before, fused maximally.
    assert_eq!(
        apply(Step::Reductions, &cfg("fuse=smart,tile=8x1x1,omp=1,uj=8x2")),
        [
            cfg("fuse=smart,tile=8x1x1,omp=1,uj=8x2,red=1"),
            cfg("fuse=max,omp=1,red=2"),
            cfg("fuse=smart,tile=8x1x1,omp=1,uj=8x2,red=2"),
            cfg("fuse=max,tile=8x1x1,omp=1,uj=8x2,red=2")
        ]
    );
    assert_eq!(
        apply(Step::Reductions, &cfg("fuse=max,red=1")),
        [cfg("fuse=max,red=2")]
    );
    // The plain nest without pre-vectorization (its interchange undoes
    // the fusion's order); the other forms keep it.
    assert_eq!(
        apply(
            Step::Reductions,
            &cfg("fuse=no,tile=32x256x1,omp=1,prevec=1,uj=8x2")
        ),
        [
            cfg("fuse=no,tile=32x256x1,omp=1,prevec=1,uj=8x2,red=1"),
            cfg("fuse=max,omp=1,red=2"),
            cfg("fuse=no,tile=32x256x1,omp=1,prevec=1,uj=8x2,red=2"),
            cfg("fuse=max,tile=32x256x1,omp=1,prevec=1,uj=8x2,red=2")
        ]
    );
    assert!(apply(Step::OuterUnroll, &cfg("uj=8")).is_empty());
    assert!(apply(Step::SmallerTiles, &cfg("tile=8x8x8")).is_empty());
    assert_eq!(apply(Step::OuterUnroll, &cfg("uj=2"))[0].unroll.outer, 4);
    assert_eq!(
        apply(Step::InnerUnroll, &c),
        [cfg("fuse=smart,tile=32x32x1,omp=1,uj=1x2")]
    );
}

/// A fake engine and lab: the code is the configuration's text, except
/// that register tiles are refused where the second tile size is 64,
/// and the 6x32 shape always
/// (then the code is the one without them) and diamond tiles always
/// (a kernel without a time loop), likewise privatization, `cyc=1` and
/// `dist=1`; runs are faster the more of
/// `faster` the configuration has.
fn climb(start: &str, budget: usize, seen: &[&str]) -> Vec<(Config, Step)> {
    climb_rows(start, budget, seen, None)
}

fn climb_rows(start: &str, budget: usize, seen: &[&str], rows: Option<u16>) -> Vec<(Config, Step)> {
    let mut seen: HashSet<String> = seen.iter().map(|s| cfg(s).to_string()).collect();
    let mut ran = Vec::new();
    let code = |c: &Config| {
        let mut c = *c;
        if c.tile[1] == 64 || c.regblock.is_some_and(|r| r.nr == 32) {
            c.regblock = None;
        }
        c.diamond = false;
        // Nothing to privatize, no parallel loop of uneven work, no band
        // over several statements to distribute.
        c.privatize = Privatize::Off;
        c.cyclic = false;
        c.distribute = false;
        c.to_string()
    };
    refine::<()>(
        cfg(start),
        VectorTarget::AVX512,
        rows,
        1.0,
        budget,
        &mut seen,
        &mut |c| {
            Some(Written {
                text: code(c),
                hash: code(c),
                openmp: c.omp,
            })
        },
        &mut |c, step, _from, _written| {
            ran.push((c, step));
            // Packing wins; larger tiles lose; the rest is neutral.
            Ok(Some(if c.regblock.is_some_and(|r| r.pack) {
                3.0
            } else if c.tile[0] > 32 {
                0.5
            } else {
                1.0
            }))
        },
        &mut || false,
    )
    .unwrap();
    ran
}

#[test]
fn the_search_moves_to_a_faster_step_and_starts_again_from_it() {
    let ran = climb("tile=32x32x32", 4, &[]);
    let steps: Vec<Step> = ran.iter().map(|r| r.1).collect();
    // Packed first (the target's first shape refused, its second run;
    // in parallel: its tiles are each thread's rows), and faster: from
    // there, wider panels (sixteen times, no faster; then four times, no
    // faster), then the scalar register tile (the same field, a
    // different program).
    assert_eq!(
        steps,
        vec![
            Step::PackedRegisterTile,
            Step::WiderPanels,
            Step::WiderPanels,
            Step::RegisterTile
        ]
    );
    assert_eq!(ran[0].0, cfg("tile=64x256x192,omp=1,rb=8x24,pack=1"));
    assert_eq!(ran[1].0, cfg("tile=64x4096x192,omp=1,rb=8x24,pack=1"));
    assert_eq!(ran[2].0, cfg("tile=64x1024x192,omp=1,rb=8x24,pack=1"));
    assert_eq!(ran[3].0, cfg("tile=64x256x192,omp=1,rb=4x16"));
}

#[test]
fn privatization_comes_first_from_a_sequential_program_with_openmp() {
    let mut order = Step::SEQUENTIAL_FIRST.to_vec();
    order.sort_by_key(|s| Step::ALL.iter().position(|x| x == s));
    assert_eq!(order, Step::ALL, "the same steps");
    assert_eq!(Step::order(false)[0], Step::Privatized);
    let others = |o: &[Step]| -> Vec<Step> {
        o.iter()
            .copied()
            .filter(|&s| s != Step::Privatized)
            .collect()
    };
    assert_eq!(others(&Step::order(false)), others(&Step::ALL));
    assert_eq!(Step::order(true), Step::ALL);
    let apply = |c: &str| Step::Privatized.apply(&cfg(c), VectorTarget::AVX2, None);
    assert_eq!(
        apply("fuse=smart,uj=2"),
        [
            cfg("fuse=smart,uj=2,priv=1"),
            cfg("fuse=smart,omp=1,uj=2,priv=2")
        ]
    );
    assert_eq!(apply("omp=1,priv=1"), [cfg("omp=1,priv=2")]);
    assert!(apply("omp=1,priv=2").is_empty());
    // A step's own primitive only: without it, no privatization.
    assert_eq!(
        Step::Privatized.without(&cfg("omp=1,priv=2")),
        Some(cfg("omp=1"))
    );
}

#[test]
fn refused_primitives_and_programs_run_before_are_not_run() {
    // The refused 6x32 is not run (same code as without), the 8x24 is.
    let ran = climb("tile=64x64x64", 2, &[]);
    assert_eq!(
        ran[0],
        (
            cfg("tile=64x256x192,omp=1,rb=8x24,pack=1"),
            Step::PackedRegisterTile
        )
    );
    // From 64-tiles the scalar register tile is refused too: not run;
    // nor are programs run before (the 8x24, the smaller tiles).
    let ran = climb(
        "tile=64x64x64",
        2,
        &["tile=32x32x32", "tile=64x256x192,omp=1,rb=8x24,pack=1"],
    );
    let steps: Vec<Step> = ran.iter().map(|r| r.1).collect();
    assert_eq!(steps, vec![Step::LargerTiles, Step::Reductions]);
    // A budget of 0 runs nothing.
    assert!(climb("tile=32x32x32", 0, &[]).is_empty());
}

#[test]
fn with_the_rows_known_packed_tiles_are_first_each_threads_share_of_them() {
    let c = cfg("fuse=no,tile=32x32x32,omp=1");
    // 1000 rows per thread: 6x32 in 1002 (167 blocks of six), 8x24 in
    // 1000, then the tiles of 8 blocks of rows.
    assert_eq!(
        Step::PackedRegisterTile.apply(&c, VectorTarget::AVX512, Some(1000)),
        [
            cfg("fuse=no,tile=1002x256x256,omp=1,rb=6x32,pack=1"),
            cfg("fuse=no,tile=1000x256x192,omp=1,rb=8x24,pack=1"),
            cfg("fuse=no,tile=48x256x256,omp=1,rb=6x32,pack=1"),
            cfg("fuse=no,tile=64x256x192,omp=1,rb=8x24,pack=1"),
        ]
    );
    // Fewer rows than 8 blocks: the tiles of 8 blocks, once.
    assert_eq!(
        Step::PackedRegisterTile.apply(&c, VectorTarget::AVX512, Some(20)),
        [
            cfg("fuse=no,tile=48x256x256,omp=1,rb=6x32,pack=1"),
            cfg("fuse=no,tile=64x256x192,omp=1,rb=8x24,pack=1"),
        ]
    );
    // Never beyond the largest tile size.
    let huge = Step::PackedRegisterTile.apply(&c, VectorTarget::AVX512, Some(60000));
    assert_eq!(huge[0].tile[0], 4092);
    assert_eq!(huge[1].tile[0], 4096);
    // The climb runs the tall 8x24 first (the fake refuses 6x32).
    let ran = climb_rows("tile=32x32x32", 1, &[], Some(1000));
    assert_eq!(ran[0].0, cfg("tile=1000x256x192,omp=1,rb=8x24,pack=1"));
}

fn rows_of(text: &str, params: &[(&str, i64)], threads: usize) -> Option<u16> {
    let src = crate::frontend::parse_source(
        std::path::Path::new("k.c"),
        text.to_string(),
        &crate::frontend::Options::default(),
    )
    .unwrap();
    let params: ParamValues = params.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    rows_per_thread(&src, &params, threads)
}

#[test]
fn rows_per_thread_is_the_largest_nests_outer_extent_split_evenly() {
    let gemm = "void k(int ni, int nj, int nk, double C[ni][nj], double A[ni][nk], \
                double B[nk][nj]) {\n#pragma scop\n\
                for (int i = 1; i < ni; i++)\n for (int j = 0; j < nj; j++)\n\
                for (int k = 0; k < nk; k++)\n C[i][j] += A[i][k] * B[k][j];\n\
                #pragma endscop\n}\n";
    // i in [1, 1999): 1999 rows, over 2 threads 1000, over 3 667.
    let p = [("ni", 2000), ("nj", 2300), ("nk", 2600)];
    assert_eq!(rows_of(gemm, &p, 2), Some(1000));
    assert_eq!(rows_of(gemm, &p, 3), Some(667));
    // A parameter without a value: unknown.
    assert_eq!(rows_of(gemm, &[("nj", 2300), ("nk", 2600)], 2), None);
    // Two loops only: no contraction to size.
    let axpy = "void k(int n, double x[n], double y[n][n]) {\n#pragma scop\n\
                for (int i = 0; i < n; i++)\n for (int j = 0; j < n; j++)\n\
                y[i][j] += x[j];\n#pragma endscop\n}\n";
    assert_eq!(rows_of(axpy, &[("n", 100)], 2), None);
}

#[test]
fn the_distributed_step_sets_dist_and_is_undone_by_unsetting_it() {
    let apply = |c: &str| Step::Distributed.apply(&cfg(c), VectorTarget::AVX2, None);
    assert_eq!(
        apply("fuse=no,tile=1x1x16,omp=1,uj=4,cyc=1"),
        [cfg("fuse=no,tile=1x1x16,omp=1,uj=4,cyc=1,dist=1")]
    );
    assert!(apply("fuse=max,dist=1").is_empty());
    assert_eq!(
        Step::Distributed.without(&cfg("fuse=max,omp=1,dist=1")),
        Some(cfg("fuse=max,omp=1"))
    );
}

#[test]
fn the_cyclic_step_deals_a_parallel_programs_iterations_in_turn() {
    let apply = |c: &str| Step::Cyclic.apply(&cfg(c), VectorTarget::AVX2, None);
    assert_eq!(
        apply("fuse=no,tile=32x32x1,omp=1"),
        [cfg("fuse=no,tile=32x32x1,omp=1,cyc=1")]
    );
    // From a sequential program: with OpenMP (the same code without a
    // parallel loop, then not run).
    assert_eq!(apply("fuse=no,uj=4"), [cfg("fuse=no,omp=1,uj=4,cyc=1")]);
    assert!(apply("omp=1,cyc=1").is_empty());
    assert_eq!(
        Step::Cyclic.without(&cfg("omp=1,cyc=1")),
        Some(cfg("omp=1"))
    );
}

#[test]
fn wider_panels_widen_a_packed_tiles_columns_only() {
    let apply = |c: &str| Step::WiderPanels.apply(&cfg(c), VectorTarget::AVX512, None);
    assert_eq!(
        apply("tile=48x256x256,omp=1,rb=6x32,pack=1"),
        [
            cfg("tile=48x4096x256,omp=1,rb=6x32,pack=1"),
            cfg("tile=48x1024x256,omp=1,rb=6x32,pack=1")
        ]
    );
    assert_eq!(
        apply("tile=48x2048x256,omp=1,rb=6x32,pack=1"),
        [cfg("tile=48x4096x256,omp=1,rb=6x32,pack=1")]
    );
    // Not without packed operands, nor beyond 4096 or from untiled.
    assert!(apply("tile=48x256x256,omp=1,rb=6x32").is_empty());
    assert!(apply("tile=48x4096x256,omp=1,rb=6x32,pack=1").is_empty());
    assert!(apply("tile=32x32x32,omp=1").is_empty());
    assert_eq!(Step::WiderPanels.without(&cfg("tile=48x1024x256")), None);
}
