//! The overlapping calls of `--alias`: layouts in which two or more of a
//! program's arrays of one element type share storage, first at the same
//! address (the same array passed twice), then one shifted by a few
//! elements or a row from the other, each proven legal by the interpreter
//! at every parameter set (every access inside the shared buffer, which
//! is sized to hold both views; no signed overflow in what the overlap
//! now computes).

use super::interp::Machine;
use super::program::{Buffer, Layout, Lhs, Program, Stmt};
use crate::lab::rng::SplitMix64;

/// Draws per kind of overlap before it is given up for the program.
const TRIES: usize = 8;

/// The arrays the kernel writes.
fn written(p: &Program) -> Vec<bool> {
    fn walk(body: &[Stmt], w: &mut [bool]) {
        for s in body {
            match s {
                Stmt::For(l) => walk(&l.body, w),
                Stmt::If { then, other, .. } => {
                    walk(then, w);
                    if let Some(o) = other {
                        walk(o, w);
                    }
                }
                Stmt::IfData { then, .. } => walk(then, w),
                Stmt::Assign { lhs, .. } => {
                    if let Lhs::Array(a) = lhs {
                        w[a.array] = true;
                    }
                }
            }
        }
    }
    let mut w = vec![false; p.arrays.len()];
    walk(&p.body, &mut w);
    w
}

/// A layout of call `call` (1, 2, ...): `members` (array, offset) share
/// one buffer, every other array has its own.
fn layout(p: &Program, call: usize, members: &[(usize, usize)]) -> Layout {
    let prefix = format!("overlap{call}_");
    let mut buffers: Vec<Buffer> = Vec::new();
    let mut place = Vec::new();
    let mut shared: Option<usize> = None;
    for (a, arr) in p.arrays.iter().enumerate() {
        let n: usize = arr.extents.iter().product();
        match members.iter().find(|(m, _)| *m == a) {
            Some(&(_, off)) => {
                let b = *shared.get_or_insert_with(|| {
                    let names: Vec<&str> = members
                        .iter()
                        .map(|&(m, _)| p.arrays[m].name.as_str())
                        .collect();
                    buffers.push(Buffer {
                        name: format!("{prefix}{}", names.join("_")),
                        elem: arr.elem,
                        id: a,
                        len: 0,
                    });
                    buffers.len() - 1
                });
                buffers[b].len = buffers[b].len.max(off + n);
                place.push((b, off));
            }
            None => {
                buffers.push(Buffer {
                    name: format!("{prefix}{}", arr.name),
                    elem: arr.elem,
                    id: a,
                    len: n,
                });
                place.push((buffers.len() - 1, 0));
            }
        }
    }
    Layout {
        prefix,
        buffers,
        place,
    }
}

/// The layout runs legally at every parameter set of `p`.
fn legal(p: &Program, l: &Layout) -> bool {
    p.param_sets
        .iter()
        .all(|set| Machine::overlapping(p, set, l).run().is_ok())
}

/// The overlapping calls of `p`: the same storage for a written array and
/// another of its element type (now and then a third one too), then one
/// of such a pair shifted from the other by 1, 2 or 3 elements or by a
/// row; a kind none of whose draws is legal is left out, and so is every
/// call when no written array has another of its element type.
pub(super) fn overlaps(p: &Program, rng: &mut SplitMix64) -> Vec<Layout> {
    let w = written(p);
    let pairs: Vec<(usize, usize)> = (0..p.arrays.len())
        .filter(|&x| w[x])
        .flat_map(|x| {
            (0..p.arrays.len())
                .filter(move |&y| y != x && p.arrays[y].elem == p.arrays[x].elem)
                .map(move |y| (x, y))
        })
        .collect();
    if pairs.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for shifted in [false, true] {
        for _ in 0..TRIES {
            let (x, y) = pairs[rng.below(pairs.len())];
            let members = if shifted {
                let row = |a: usize| *p.arrays[a].extents.last().unwrap_or(&1);
                let d = match rng.below(5) {
                    0 | 1 => 1,
                    2 => 2 + rng.below(2),
                    3 => row(x),
                    _ => row(y),
                }
                .max(1);
                if rng.chance(0.5) {
                    vec![(x, 0), (y, d)]
                } else {
                    vec![(x, d), (y, 0)]
                }
            } else {
                let mut m = vec![(x, 0), (y, 0)];
                let third: Vec<usize> = (0..p.arrays.len())
                    .filter(|&z| z != x && z != y && p.arrays[z].elem == p.arrays[x].elem)
                    .collect();
                if !third.is_empty() && rng.chance(0.3) {
                    m.push((third[rng.below(third.len())], 0));
                }
                m
            };
            let l = layout(p, out.len() + 1, &members);
            if legal(p, &l) {
                out.push(l);
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::generate::generate;
    use super::super::program::GenOptions;
    use super::*;

    /// Over a few dozen programs: both kinds of overlap, each buffer large
    /// enough for every array placed in it, and the dump of every call in
    /// the expected output and the program's text.
    #[test]
    fn overlapping_calls_share_storage_within_their_buffers() {
        let (mut same, mut shifted, mut three) = (0, 0, 0);
        for i in 0..40 {
            let Some((g, _)) = generate(5, i, 2, GenOptions::default(), true) else {
                continue;
            };
            let p = &g.program;
            assert!(!g.text.contains("#pragma scop"), "{}", g.text);
            assert!(g.text.contains("static void kernel("), "{}", g.text);
            for (k, l) in g.overlaps.iter().enumerate() {
                let groups = l.shared();
                assert_eq!(groups.len(), 1, "{l:?}");
                let offsets: Vec<usize> = groups[0].iter().map(|&a| l.place[a].1).collect();
                if offsets.iter().all(|&o| o == 0) {
                    same += 1;
                    three += (groups[0].len() == 3) as usize;
                } else {
                    shifted += 1;
                }
                for (a, &(b, off)) in l.place.iter().enumerate() {
                    let n: usize = p.arrays[a].extents.iter().product();
                    assert!(off + n <= l.buffers[b].len, "{l:?}");
                    assert_eq!(l.buffers[b].elem, p.arrays[a].elem);
                }
                let call = format!("init_overlap{}();", k + 1);
                assert!(g.text.contains(&call), "{}", g.text);
                for b in &l.buffers {
                    let begin = format!("begin {} {}", b.name, b.len);
                    assert!(g.expected.iter().all(|e| e.contains(&begin)), "{begin}");
                }
            }
        }
        assert!(
            same >= 10 && shifted >= 10 && three >= 1,
            "{same} {shifted} {three}"
        );
    }

    /// A shift that makes a statement read what it wrote one element on
    /// is another computation: the interpreter sees the overlap.
    #[test]
    fn the_interpreter_reads_through_one_array_what_it_wrote_through_the_other() {
        use super::super::program::*;
        let i = AExpr::Var(1);
        let p = Program {
            vars: n_and_i(),
            arrays: ["A", "B"]
                .map(|name| Array {
                    name: name.into(),
                    elem: Elem::Long,
                    rank: 1,
                    extents: vec![4],
                })
                .to_vec(),
            scalars: vec![],
            // for (i = 0; i < n; i++) B[i] = A[i] + 1;
            body: vec![Stmt::For(Loop {
                var: 1,
                init: AExpr::Lit(0, IntTy::Int),
                cond: Cond::Cmp(CmpOp::Lt, i.clone(), AExpr::Var(0)),
                step: 1,
                body: vec![Stmt::Assign {
                    lhs: Lhs::Array(Access {
                        array: 1,
                        subs: vec![i.clone()],
                    }),
                    add: false,
                    rhs: VExpr::Add(
                        Box::new(VExpr::Read(Access {
                            array: 0,
                            subs: vec![i],
                        })),
                        Box::new(VExpr::Int(1)),
                    ),
                }],
            })],
            param_sets: vec![vec![4]],
            depth: 1,
        };
        // B = A + 1: the first element plus 1, 2, 3, 4 along the buffer.
        let l = layout(&p, 1, &[(0, 0), (1, 1)]);
        assert_eq!(l.buffers[0].name, "overlap1_A_B");
        assert_eq!(l.buffers[0].len, 5);
        let mut m = Machine::overlapping(&p, &[4], &l);
        m.run().unwrap();
        let first = match init_value(Elem::Long, 0, 0) {
            super::super::interp::Val::Long(x) => x,
            _ => unreachable!(),
        };
        let want: String = (0..5).map(|k| format!("{}\n", first + k)).collect();
        assert_eq!(
            m.dump(),
            format!("begin overlap1_A_B 5\n{want}end overlap1_A_B\n")
        );
        // Apart, B is A plus one element by element.
        let mut m = Machine::new(&p, &[4], true);
        m.run().unwrap();
        assert!(m.dump().starts_with("begin A 4\n"));
    }
}
