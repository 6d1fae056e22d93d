//! The one module that touches isl.
//!
//! isl-rs marks every type `Send + Sync` although isl is not
//! thread-safe, does not tie objects to their context's lifetime, leaks and
//! does not NULL-check strings. This module therefore declares the isl
//! functions it needs itself (linking against isl-rs's bundled isl) and
//! hands out wrappers that are `!Send`, borrow their [`Ctx`], check every
//! NULL, free every string, and turn isl's error state into [`IslError`].
//!
//! Why one file: about 1,150 lines, it is the safe side of the door, one
//! short wrapper per isl operation over the same macros and error capture,
//! and its `unsafe` calls are best checked in one reading.

mod ast;
mod ffi;

pub use ast::{AstExpr, AstNode, AstOp, build_ast, expr_from_set, max_of_dim, min_of_dim};

use std::ffi::{CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::os::raw::c_int;
use std::ptr::NonNull;

// Keep isl-rs linked: its build script compiles isl and emits the link
// directives our declarations resolve against.
use isl_rs as _;

/// An isl failure with isl's own message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("isl: {message}")]
pub struct IslError {
    pub message: String,
}

/// An isl context. Not `Send`: isl objects must stay on the thread that
/// made them, and every object borrows the context it lives in.
pub struct Ctx {
    raw: NonNull<ffi::isl_ctx>,
    _not_send: PhantomData<*mut ()>,
}

/// How the scheduler groups statements (fusion).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clustering {
    /// Each strongly connected component on its own (maximal distribution).
    SerializeSccs,
    /// isl's default incremental clustering: fuse where no parallelism or
    /// band depth is lost.
    Incremental,
    /// Schedule each connected component as a whole (maximal fusion).
    WholeComponent,
}

impl Ctx {
    /// A fresh context whose errors are reported as values, never printed
    /// and never fatal.
    pub fn new() -> Ctx {
        // SAFETY: isl_ctx_alloc has no preconditions.
        let raw = unsafe { ffi::isl_ctx_alloc() };
        let raw = NonNull::new(raw).expect("isl_ctx_alloc returned NULL (out of memory)");
        let ctx = Ctx {
            raw,
            _not_send: PhantomData,
        };
        // SAFETY: raw is a live context; option setters only store values.
        unsafe {
            ffi::isl_options_set_on_error(ctx.ptr(), ffi::ISL_ON_ERROR_CONTINUE);
            // Code generation choices that give compact, integer-exact C.
            ffi::isl_options_set_ast_build_atomic_upper_bound(ctx.ptr(), 1);
            ffi::isl_options_set_ast_build_prefer_pdiv(ctx.ptr(), 1);
            ffi::isl_options_set_ast_build_detect_min_max(ctx.ptr(), 1);
            ffi::isl_options_set_ast_build_allow_else(ctx.ptr(), 1);
            ffi::isl_options_set_ast_build_allow_or(ctx.ptr(), 1);
            // Tile loops count tiles (not scaled), point loops start at 0
            // within their tile: the usual shape of tiled code.
            ffi::isl_options_set_tile_scale_tile_loops(ctx.ptr(), 0);
            ffi::isl_options_set_tile_shift_point_loops(ctx.ptr(), 0);
            ffi::isl_options_set_schedule_outer_coincidence(ctx.ptr(), 1);
            ffi::isl_options_set_schedule_maximize_band_depth(ctx.ptr(), 1);
            ffi::isl_options_set_schedule_treat_coalescing(ctx.ptr(), 1);
            // Bound the scheduler's coefficients (see
            // transform::MAX_COEFFICIENT, which also checks the result).
            ffi::isl_options_set_schedule_max_coefficient(ctx.ptr(), 20);
        }
        ctx
    }

    fn ptr(&self) -> *mut ffi::isl_ctx {
        self.raw.as_ptr()
    }

    /// Selects how the next [`compute_schedule`] clusters statements.
    pub fn set_clustering(&self, c: Clustering) {
        let (serialize, whole) = match c {
            Clustering::SerializeSccs => (1, 0),
            Clustering::Incremental => (0, 0),
            Clustering::WholeComponent => (0, 1),
        };
        // SAFETY: the context is live.
        unsafe {
            ffi::isl_options_set_schedule_serialize_sccs(self.ptr(), serialize);
            ffi::isl_options_set_schedule_whole_component(self.ptr(), whole);
        }
    }

    /// Whether the next [`compute_schedule`] makes the outermost member
    /// of each band coincident where it can (the default, on): off, it
    /// keeps the statements of a time loop in one band, skewed where it
    /// must, so that the band can be tiled in time.
    pub fn set_outer_coincidence(&self, on: bool) {
        // SAFETY: the context is live.
        unsafe {
            ffi::isl_options_set_schedule_outer_coincidence(self.ptr(), on as c_int);
        }
    }

    /// Bounds the work of everything isl does from now on in this context
    /// to `limit` operations (isl counts allocations and the steps of its
    /// solvers); past it every isl call fails. The count starts at 0.
    pub fn limit_operations(&self, limit: u64) {
        // SAFETY: the context is live; these only store counters.
        unsafe {
            ffi::isl_ctx_reset_operations(self.ptr());
            ffi::isl_ctx_set_max_operations(
                self.ptr(),
                std::os::raw::c_ulong::try_from(limit).unwrap_or(std::os::raw::c_ulong::MAX),
            );
        }
    }

    /// Whether the limit of [`Ctx::limit_operations`] was reached. Once it
    /// is, isl refuses every further operation, so a tiny one tells. A
    /// result computed while the limit was hit must not be used even if
    /// it looks complete.
    pub fn operations_exhausted(&self) -> bool {
        Set::parse(self, "{ : }").is_err()
    }

    /// Runs `work`, aborting isl's computations in this context once
    /// `limit` has passed; returns its result and whether the deadline was
    /// reached, in which case the result must not be used (isl's calls
    /// failed from some point on). Counting operations
    /// ([`Ctx::limit_operations`]) does not bound time: some of isl's
    /// solvers work for minutes between two counted operations, but
    /// isl checks the abort flag there too.
    pub fn with_deadline<R>(
        &self,
        limit: std::time::Duration,
        work: impl FnOnce() -> R,
    ) -> (R, bool) {
        use std::sync::mpsc::{RecvTimeoutError, channel};
        struct Raw(NonNull<ffi::isl_ctx>);
        // SAFETY: the watchdog only calls isl_ctx_abort, which stores a
        // flag that isl polls; the context outlives the watchdog, which is
        // joined (by the scope) before this function returns.
        unsafe impl Send for Raw {}
        let raw = Raw(self.raw);
        let (done, wait) = channel::<()>();
        std::thread::scope(|s| {
            let watchdog = std::thread::Builder::new()
                .name("polytune-isl-deadline".into())
                .spawn_scoped(s, move || {
                    let raw = raw;
                    match wait.recv_timeout(limit) {
                        Err(RecvTimeoutError::Timeout) => {
                            // SAFETY: see `Raw`.
                            unsafe { ffi::isl_ctx_abort(raw.0.as_ptr()) };
                            true
                        }
                        _ => false,
                    }
                })
                .expect("cannot start the isl deadline thread");
            let r = work();
            drop(done);
            let late = watchdog.join().unwrap_or(true);
            if late {
                // SAFETY: the context is live; this clears the flag so
                // that the context can be used (and its objects freed).
                unsafe { ffi::isl_ctx_resume(self.ptr()) };
            }
            (r, late)
        })
    }

    /// Takes isl's last error message (or a generic one) and clears it.
    fn take_error(&self, what: &str) -> IslError {
        // SAFETY: the context is live; the message pointer is owned by isl
        // and copied before the reset.
        let message = unsafe {
            let msg = ffi::isl_ctx_last_error_msg(self.ptr());
            let text = if msg.is_null() {
                format!("{what} failed")
            } else {
                format!("{what}: {}", CStr::from_ptr(msg).to_string_lossy())
            };
            ffi::isl_ctx_reset_error(self.ptr());
            text
        };
        IslError { message }
    }

    fn c_string(&self, text: &str) -> Result<CString, IslError> {
        CString::new(text).map_err(|_| IslError {
            message: "input contains a NUL byte".into(),
        })
    }

    /// Turns an isl_bool into a result.
    fn boolean(&self, r: c_int, what: &str) -> Result<bool, IslError> {
        if r < 0 {
            Err(self.take_error(what))
        } else {
            Ok(r != 0)
        }
    }
}

impl Default for Ctx {
    fn default() -> Self {
        Ctx::new()
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: every object borrowing this context has been dropped
        // (the borrow checker guarantees it), so freeing is sound.
        unsafe { ffi::isl_ctx_free(self.ptr()) }
    }
}

/// Copies an isl-allocated string and frees it.
fn owned_string(raw: *mut std::os::raw::c_char) -> Option<String> {
    if raw.is_null() {
        return None;
    }
    // SAFETY: raw is a NUL-terminated string malloc'ed by isl; we own it.
    unsafe {
        let s = CStr::from_ptr(raw).to_string_lossy().into_owned();
        ffi::free(raw.cast());
        Some(s)
    }
}

macro_rules! isl_object {
    ($(#[$doc:meta])* $name:ident, $raw:ty, $copy:ident, $free:ident, $to_str:ident, $what:literal) => {
        $(#[$doc])*
        pub struct $name<'c> {
            raw: NonNull<$raw>,
            ctx: &'c Ctx,
        }

        impl<'c> $name<'c> {
            /// Wraps a pointer isl gave us, or turns NULL into isl's error.
            fn wrap(ctx: &'c Ctx, raw: *mut $raw, op: &str) -> Result<Self, IslError> {
                match NonNull::new(raw) {
                    Some(raw) => Ok($name { raw, ctx }),
                    None => Err(ctx.take_error(&format!(concat!("{} (", $what, ")"), op))),
                }
            }

            /// A new reference for a function that takes ownership.
            fn take(&self) -> *mut $raw {
                // SAFETY: the object is live; copy bumps a reference count.
                unsafe { ffi::$copy(self.raw.as_ptr()) }
            }

            #[allow(dead_code)]
            fn keep(&self) -> *mut $raw {
                self.raw.as_ptr()
            }
        }

        impl Clone for $name<'_> {
            fn clone(&self) -> Self {
                let raw = self.take();
                $name {
                    raw: NonNull::new(raw).expect(concat!($what, " copy returned NULL")),
                    ctx: self.ctx,
                }
            }
        }

        impl Drop for $name<'_> {
            fn drop(&mut self) {
                // SAFETY: we own one reference.
                unsafe { ffi::$free(self.raw.as_ptr()) };
            }
        }

        impl fmt::Display for $name<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // SAFETY: the object is live; the string is ours to free.
                let s = owned_string(unsafe { ffi::$to_str(self.raw.as_ptr()) });
                match s {
                    Some(s) => f.write_str(&s),
                    None => Err(fmt::Error),
                }
            }
        }

        impl fmt::Debug for $name<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(self, f)
            }
        }
    };
}

/// Declares methods that call a unary/binary isl function on copies of
/// their operands and wrap the result.
macro_rules! isl_ops {
    ($ty:ident { $( $(#[$doc:meta])* fn $m:ident($($arg:ident : $aty:ident),*) -> $rty:ident = $f:ident; )* }) => {
        impl<'c> $ty<'c> {
            $(
                $(#[$doc])*
                pub fn $m(&self $(, $arg: &$aty<'c>)*) -> Result<$rty<'c>, IslError> {
                    // SAFETY: every operand is a fresh reference isl takes.
                    let r = unsafe { ffi::$f(self.take() $(, $arg.take())*) };
                    $rty::wrap(self.ctx, r, stringify!($m))
                }
            )*
        }
    };
}

/// Declares isl_bool predicates over kept operands.
macro_rules! isl_preds {
    ($ty:ident { $( $(#[$doc:meta])* fn $m:ident($($arg:ident : $aty:ident),*) = $f:ident; )* }) => {
        impl<'c> $ty<'c> {
            $(
                $(#[$doc])*
                pub fn $m(&self $(, $arg: &$aty<'c>)*) -> Result<bool, IslError> {
                    // SAFETY: isl only reads the operands.
                    let r = unsafe { ffi::$f(self.keep() $(, $arg.keep())*) };
                    self.ctx.boolean(r, stringify!($m))
                }
            )*
        }
    };
}

macro_rules! isl_parse {
    ($ty:ident, $f:ident) => {
        impl<'c> $ty<'c> {
            /// Parses isl's textual notation.
            pub fn parse(ctx: &'c Ctx, text: &str) -> Result<Self, IslError> {
                let c = ctx.c_string(text)?;
                // SAFETY: the context is live and `c` is NUL-terminated.
                let raw = unsafe { ffi::$f(ctx.ptr(), c.as_ptr()) };
                $ty::wrap(ctx, raw, "cannot read")
            }
        }
    };
}

isl_object!(
    /// A set of integer tuples of one space (parameter contexts).
    Set, ffi::isl_set, isl_set_copy, isl_set_free, isl_set_to_str, "set"
);
isl_object!(
    /// A union of integer sets (statement domains, dependence distances).
    UnionSet, ffi::isl_union_set, isl_union_set_copy, isl_union_set_free, isl_union_set_to_str, "union set"
);
isl_object!(
    /// A union of integer relations (accesses, schedules, dependences).
    UnionMap, ffi::isl_union_map, isl_union_map_copy, isl_union_map_free, isl_union_map_to_str, "union map"
);
isl_object!(
    /// A schedule tree.
    Schedule, ffi::isl_schedule, isl_schedule_copy, isl_schedule_free, isl_schedule_to_str, "schedule"
);
isl_object!(
    /// A position in a schedule tree; editing returns a new node.
    ScheduleNode, ffi::isl_schedule_node, isl_schedule_node_copy, isl_schedule_node_free, isl_schedule_node_to_str, "schedule node"
);
isl_object!(
    /// The members of a band: one piecewise affine function each.
    MultiUnionPwAff, ffi::isl_multi_union_pw_aff, isl_multi_union_pw_aff_copy, isl_multi_union_pw_aff_free,
    isl_multi_union_pw_aff_to_str, "multi union pw aff"
);
isl_object!(
    /// One band member: a piecewise affine function over statements.
    UnionPwAff, ffi::isl_union_pw_aff, isl_union_pw_aff_copy, isl_union_pw_aff_free, isl_union_pw_aff_to_str,
    "union pw aff"
);

isl_parse!(Set, isl_set_read_from_str);
isl_parse!(UnionSet, isl_union_set_read_from_str);
isl_parse!(UnionMap, isl_union_map_read_from_str);
isl_parse!(MultiUnionPwAff, isl_multi_union_pw_aff_read_from_str);

isl_ops!(Set {
    /// The same points in a flat space (nested tuples unwrapped).
    fn flatten() -> Set = isl_set_flatten;
    fn intersect(other: Set) -> Set = isl_set_intersect;
    fn subtract(other: Set) -> Set = isl_set_subtract;
    fn coalesce() -> Set = isl_set_coalesce;
    /// The set simplified where `context` holds (equal within it).
    fn gist(context: Set) -> Set = isl_set_gist;
});

/// Inclusive bounds on one coordinate of a [`Set::boxes_like`] box.
pub type Bound = (Option<i32>, Option<i32>);

impl<'c> Set<'c> {
    /// The union of boxes (per dimension an inclusive lower and upper
    /// bound, or none) in this set's space and parameters. Built through
    /// isl's API: parsing the same set is slow on wide spaces.
    pub fn boxes_like(&self, boxes: &[Vec<Bound>]) -> Result<Set<'c>, IslError> {
        let d = self.dims()?;
        // SAFETY: get_space returns a fresh space, consumed by empty; every
        // later call consumes its set operand and returns a new one (or
        // NULL, which `wrap` turns into an error and isl accepts as input).
        unsafe {
            let mut acc = ffi::isl_set_empty(ffi::isl_set_get_space(self.keep()));
            for b in boxes {
                assert!(b.len() <= d, "a box with more coordinates than the space");
                let mut piece = ffi::isl_set_universe(ffi::isl_set_get_space(self.keep()));
                for (pos, &(lo, hi)) in b.iter().enumerate() {
                    if let Some(v) = lo {
                        piece = ffi::isl_set_lower_bound_si(piece, 3, pos as u32, v);
                    }
                    if let Some(v) = hi {
                        piece = ffi::isl_set_upper_bound_si(piece, 3, pos as u32, v);
                    }
                }
                acc = ffi::isl_set_union(acc, piece);
            }
            Set::wrap(self.ctx, acc, "union of boxes")
        }
    }

    /// Number of set dimensions.
    pub fn dims(&self) -> Result<usize, IslError> {
        // SAFETY: isl only reads the set; 3 is isl_dim_set.
        let n = unsafe { ffi::isl_set_dim(self.keep(), 3) };
        usize::try_from(n).map_err(|_| self.ctx.take_error("set dimension"))
    }
}

/// The values one dimension of a set takes ([`Set::dim_range`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DimRange {
    /// The set has no point.
    Empty,
    /// No finite bound, or one that does not fit in an `i64`.
    Unbounded,
    /// The least and the greatest value, inclusive.
    Between(i64, i64),
}

impl<'c> Set<'c> {
    /// The least and greatest value of set dimension `pos` over every
    /// point of the set, whatever the parameters (fix them first for the
    /// range at given parameter values).
    pub fn dim_range(&self, pos: usize) -> Result<DimRange, IslError> {
        assert!(pos < self.dims()?, "dimension {pos} out of the set's space");
        let pos = pos as c_int;
        // SAFETY: each call takes a fresh reference of the set and returns
        // a value we own (or NULL, checked); `val_text` frees it.
        let lo = self.val_text(unsafe { ffi::isl_set_dim_min_val(self.take(), pos) })?;
        let hi = self.val_text(unsafe { ffi::isl_set_dim_max_val(self.take(), pos) })?;
        if lo == "NaN" || hi == "NaN" {
            return Ok(DimRange::Empty);
        }
        Ok(match (lo.parse::<i64>(), hi.parse::<i64>()) {
            (Ok(l), Ok(h)) => DimRange::Between(l, h),
            // infty, -infty, or too large.
            _ => DimRange::Unbounded,
        })
    }

    /// The text of a value isl returned, which is freed.
    fn val_text(&self, v: *mut ffi::isl_val) -> Result<String, IslError> {
        if v.is_null() {
            return Err(self.ctx.take_error("dimension bound"));
        }
        // SAFETY: `v` is a live value we own; to_str only reads it.
        let s = owned_string(unsafe { ffi::isl_val_to_str(v) });
        // SAFETY: we own `v` and free it once.
        unsafe { ffi::isl_val_free(v) };
        s.ok_or_else(|| self.ctx.take_error("print a value"))
    }
}

impl<'c> UnionSet<'c> {
    /// The number of spaces (statements) it has points in.
    pub fn n_sets(&self) -> Result<usize, IslError> {
        // SAFETY: isl only reads the set.
        let n = unsafe { ffi::isl_union_set_n_set(self.keep()) };
        usize::try_from(n).map_err(|_| self.ctx.take_error("number of sets"))
    }

    /// The set, when all its points live in one space.
    /// The parameter values for which the union has a point.
    pub fn params(&self) -> Result<Set<'c>, IslError> {
        // SAFETY: takes a fresh reference.
        let r = unsafe { ffi::isl_union_set_params(self.take()) };
        Set::wrap(self.ctx, r, "params")
    }

    pub fn to_set(&self) -> Result<Set<'c>, IslError> {
        // SAFETY: takes a fresh reference.
        let r = unsafe { ffi::isl_set_from_union_set(self.take()) };
        Set::wrap(self.ctx, r, "set from union set")
    }
}

isl_preds!(Set {
    fn is_empty() = isl_set_is_empty;
    fn is_subset(other: Set) = isl_set_is_subset;
    /// Whether both denote the same set of integer points.
    fn is_equal(other: Set) = isl_set_is_equal;
});

isl_preds!(UnionSet {
    /// Whether the set has no integer point.
    fn is_empty() = isl_union_set_is_empty;
    /// Whether both denote the same set of integer points.
    fn is_equal(other: UnionSet) = isl_union_set_is_equal;
    fn is_subset(other: UnionSet) = isl_union_set_is_subset;
});

isl_ops!(UnionSet {
    fn intersect(other: UnionSet) -> UnionSet = isl_union_set_intersect;
    fn union(other: UnionSet) -> UnionSet = isl_union_set_union;
    fn subtract(other: UnionSet) -> UnionSet = isl_union_set_subtract;
    fn intersect_params(params: Set) -> UnionSet = isl_union_set_intersect_params;
    fn coalesce() -> UnionSet = isl_union_set_coalesce;
    fn apply(map: UnionMap) -> UnionSet = isl_union_set_apply;
    /// The lexicographically least point of each space, for each value
    /// of the parameters.
    fn lexmin() -> UnionSet = isl_union_set_lexmin;
});

isl_preds!(UnionMap {
    fn is_empty() = isl_union_map_is_empty;
    /// Whether both denote the same relation.
    fn is_equal(other: UnionMap) = isl_union_map_is_equal;
    fn is_subset(other: UnionMap) = isl_union_map_is_subset;
});

isl_ops!(UnionMap {
    fn union(other: UnionMap) -> UnionMap = isl_union_map_union;
    fn subtract(other: UnionMap) -> UnionMap = isl_union_map_subtract;
    fn intersect(other: UnionMap) -> UnionMap = isl_union_map_intersect;
    fn apply_range(other: UnionMap) -> UnionMap = isl_union_map_apply_range;
    fn apply_domain(other: UnionMap) -> UnionMap = isl_union_map_apply_domain;
    fn reverse() -> UnionMap = isl_union_map_reverse;
    fn intersect_domain(set: UnionSet) -> UnionMap = isl_union_map_intersect_domain;
    fn intersect_range(set: UnionSet) -> UnionMap = isl_union_map_intersect_range;
    fn subtract_range(set: UnionSet) -> UnionMap = isl_union_map_subtract_range;
    fn intersect_params(params: Set) -> UnionMap = isl_union_map_intersect_params;
    fn coalesce() -> UnionMap = isl_union_map_coalesce;
    /// Differences range - domain of every pair.
    fn deltas() -> UnionSet = isl_union_map_deltas;
    fn domain() -> UnionSet = isl_union_map_domain;
    fn range() -> UnionSet = isl_union_map_range;
    /// Pairs (a, b) with self(a) lexicographically before other(b).
    fn lex_lt_union_map(other: UnionMap) -> UnionMap = isl_union_map_lex_lt_union_map;
});

impl UnionMap<'_> {
    /// Number of output dimensions when the relation has a single range
    /// space (as the schedule of a loop being generated does).
    pub fn range_dims(&self) -> Result<usize, IslError> {
        // SAFETY: range and set_from_union_set take fresh references; the
        // set is freed.
        unsafe {
            let r = ffi::isl_union_map_range(self.take());
            let s = ffi::isl_set_from_union_set(r);
            if s.is_null() {
                return Err(self.ctx.take_error("relation with one range space"));
            }
            let n = ffi::isl_set_dim(s, 3);
            ffi::isl_set_free(s);
            usize::try_from(n).map_err(|_| self.ctx.take_error("range dimension"))
        }
    }
}

/// Result of a dataflow analysis.
pub struct Flow<'c> {
    /// Dependences from must-sources (value-based: the last writer).
    pub must: UnionMap<'c>,
    /// Dependences from may-sources (memory-based: every earlier access).
    pub may: UnionMap<'c>,
}

/// isl's dataflow analysis: for every `sink` access, its sources among
/// `must_source` (killing) and `may_source` (non-killing) accesses that run
/// earlier under `schedule` (a tree: isl exploits its sequence nodes).
pub fn dataflow<'c>(
    sink: &UnionMap<'c>,
    must_source: Option<&UnionMap<'c>>,
    may_source: Option<&UnionMap<'c>>,
    schedule: &Schedule<'c>,
) -> Result<Flow<'c>, IslError> {
    let ctx = sink.ctx;
    // SAFETY: each call takes one fresh reference; the access info is
    // consumed by compute_flow; the flow is freed after both getters.
    unsafe {
        let mut ai = ffi::isl_union_access_info_from_sink(sink.take());
        if let Some(m) = must_source {
            ai = ffi::isl_union_access_info_set_must_source(ai, m.take());
        }
        if let Some(m) = may_source {
            ai = ffi::isl_union_access_info_set_may_source(ai, m.take());
        }
        ai = ffi::isl_union_access_info_set_schedule(ai, schedule.take());
        let flow = ffi::isl_union_access_info_compute_flow(ai);
        if flow.is_null() {
            return Err(ctx.take_error("dataflow analysis"));
        }
        let must = ffi::isl_union_flow_get_must_dependence(flow);
        let may = ffi::isl_union_flow_get_may_dependence(flow);
        ffi::isl_union_flow_free(flow);
        Ok(Flow {
            must: UnionMap::wrap(ctx, must, "must dependences")?,
            may: UnionMap::wrap(ctx, may, "may dependences")?,
        })
    }
}

/// The accesses of `sink` (instance to element) that read no value of a
/// `source` access running earlier under `schedule`: reads of what the
/// memory held before.
pub fn unsourced<'c>(
    sink: &UnionMap<'c>,
    source: &UnionMap<'c>,
    schedule: &Schedule<'c>,
) -> Result<UnionMap<'c>, IslError> {
    let ctx = sink.ctx;
    // SAFETY: as in `dataflow`: each call takes one fresh reference; the
    // access info is consumed by compute_flow; the flow is freed after
    // the getter.
    unsafe {
        let mut ai = ffi::isl_union_access_info_from_sink(sink.take());
        ai = ffi::isl_union_access_info_set_must_source(ai, source.take());
        ai = ffi::isl_union_access_info_set_schedule(ai, schedule.take());
        let flow = ffi::isl_union_access_info_compute_flow(ai);
        if flow.is_null() {
            return Err(ctx.take_error("dataflow analysis"));
        }
        let none = ffi::isl_union_flow_get_must_no_source(flow);
        ffi::isl_union_flow_free(flow);
        UnionMap::wrap(ctx, none, "accesses without a source")
    }
}

/// isl's scheduler (Pluto-inspired: outer parallelism, permutable bands)
/// under the context's clustering option. `conditional` is a pair
/// (conditions, conditional validity): isl respects a conditional
/// validity pair only where it is adjacent to a condition (a live range)
/// that the band does not keep within one iteration (live range
/// reordering, as in PPCG).
pub fn compute_schedule<'c>(
    domain: &UnionSet<'c>,
    context: &Set<'c>,
    validity: &UnionMap<'c>,
    coincidence: &UnionMap<'c>,
    proximity: &UnionMap<'c>,
    conditional: Option<(&UnionMap<'c>, &UnionMap<'c>)>,
) -> Result<Schedule<'c>, IslError> {
    let ctx = domain.ctx;
    // SAFETY: each setter takes the constraints and one fresh reference.
    unsafe {
        let mut sc = ffi::isl_schedule_constraints_on_domain(domain.take());
        sc = ffi::isl_schedule_constraints_set_context(sc, context.take());
        sc = ffi::isl_schedule_constraints_set_validity(sc, validity.take());
        sc = ffi::isl_schedule_constraints_set_coincidence(sc, coincidence.take());
        sc = ffi::isl_schedule_constraints_set_proximity(sc, proximity.take());
        if let Some((condition, validity)) = conditional {
            sc = ffi::isl_schedule_constraints_set_conditional_validity(
                sc,
                condition.take(),
                validity.take(),
            );
        }
        let s = ffi::isl_schedule_constraints_compute_schedule(sc);
        Schedule::wrap(ctx, s, "scheduling")
    }
}

impl<'c> Schedule<'c> {
    /// A schedule with a single domain node and no band.
    pub fn from_domain(domain: &UnionSet<'c>) -> Result<Self, IslError> {
        // SAFETY: takes a fresh reference.
        let r = unsafe { ffi::isl_schedule_from_domain(domain.take()) };
        Schedule::wrap(domain.ctx, r, "schedule from domain")
    }

    pub fn root(&self) -> Result<ScheduleNode<'c>, IslError> {
        // SAFETY: isl only reads the schedule.
        let r = unsafe { ffi::isl_schedule_get_root(self.keep()) };
        ScheduleNode::wrap(self.ctx, r, "schedule root")
    }

    /// The schedule flattened into one relation.
    pub fn map(&self) -> Result<UnionMap<'c>, IslError> {
        // SAFETY: isl only reads the schedule.
        let r = unsafe { ffi::isl_schedule_get_map(self.keep()) };
        UnionMap::wrap(self.ctx, r, "schedule map")
    }

    /// Puts a band with `partial` at the top of the tree.
    pub fn insert_partial_schedule(&self, partial: &MultiUnionPwAff<'c>) -> Result<Self, IslError> {
        // SAFETY: takes fresh references.
        let r = unsafe { ffi::isl_schedule_insert_partial_schedule(self.take(), partial.take()) };
        Schedule::wrap(self.ctx, r, "insert partial schedule")
    }

    /// `self` then `other` (disjoint domains).
    pub fn sequence(&self, other: &Schedule<'c>) -> Result<Self, IslError> {
        // SAFETY: takes fresh references.
        let r = unsafe { ffi::isl_schedule_sequence(self.take(), other.take()) };
        Schedule::wrap(self.ctx, r, "sequence")
    }
}

/// The kind of a schedule tree node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Band,
    Context,
    Domain,
    Expansion,
    Extension,
    Filter,
    Leaf,
    Guard,
    Mark,
    Sequence,
    Set,
}

impl<'c> ScheduleNode<'c> {
    pub fn kind(&self) -> Result<NodeKind, IslError> {
        // SAFETY: isl only reads the node.
        let t = unsafe { ffi::isl_schedule_node_get_type(self.keep()) };
        Ok(match t {
            0 => NodeKind::Band,
            1 => NodeKind::Context,
            2 => NodeKind::Domain,
            3 => NodeKind::Expansion,
            4 => NodeKind::Extension,
            5 => NodeKind::Filter,
            6 => NodeKind::Leaf,
            7 => NodeKind::Guard,
            8 => NodeKind::Mark,
            9 => NodeKind::Sequence,
            10 => NodeKind::Set,
            _ => return Err(self.ctx.take_error("schedule node type")),
        })
    }

    pub fn n_children(&self) -> Result<usize, IslError> {
        // SAFETY: isl only reads the node.
        let n = unsafe { ffi::isl_schedule_node_n_children(self.keep()) };
        usize::try_from(n).map_err(|_| self.ctx.take_error("number of children"))
    }

    pub fn child(&self, pos: usize) -> Result<Self, IslError> {
        // SAFETY: takes a fresh reference.
        let r = unsafe { ffi::isl_schedule_node_child(self.take(), pos as c_int) };
        ScheduleNode::wrap(self.ctx, r, "child")
    }

    pub fn parent(&self) -> Result<Self, IslError> {
        // SAFETY: takes a fresh reference.
        let r = unsafe { ffi::isl_schedule_node_parent(self.take()) };
        ScheduleNode::wrap(self.ctx, r, "parent")
    }

    /// The whole (edited) tree this node belongs to.
    pub fn schedule(&self) -> Result<Schedule<'c>, IslError> {
        // SAFETY: isl only reads the node.
        let r = unsafe { ffi::isl_schedule_node_get_schedule(self.keep()) };
        Schedule::wrap(self.ctx, r, "schedule of node")
    }

    pub fn band_n_member(&self) -> Result<usize, IslError> {
        // SAFETY: isl only reads the node.
        let n = unsafe { ffi::isl_schedule_node_band_n_member(self.keep()) };
        usize::try_from(n).map_err(|_| self.ctx.take_error("band size"))
    }

    /// Whether the band's members can be freely permuted (and tiled).
    pub fn band_permutable(&self) -> Result<bool, IslError> {
        // SAFETY: isl only reads the node.
        let r = unsafe { ffi::isl_schedule_node_band_get_permutable(self.keep()) };
        self.ctx.boolean(r, "band permutable")
    }

    /// Whether member `pos` carries no coincidence dependence (parallel).
    pub fn band_coincident(&self, pos: usize) -> Result<bool, IslError> {
        // SAFETY: isl only reads the node.
        let r =
            unsafe { ffi::isl_schedule_node_band_member_get_coincident(self.keep(), pos as c_int) };
        self.ctx.boolean(r, "band coincident")
    }

    pub fn band_set_permutable(&self, p: bool) -> Result<Self, IslError> {
        // SAFETY: takes a fresh reference.
        let r = unsafe { ffi::isl_schedule_node_band_set_permutable(self.take(), p as c_int) };
        ScheduleNode::wrap(self.ctx, r, "set permutable")
    }

    /// Asks isl to generate member `pos`'s loop separately for the
    /// iterations where every statement of the band runs and for the
    /// rest (`isl_ast_loop_separate`): the full part's body has no guard.
    pub fn band_separate(&self, pos: usize) -> Result<Self, IslError> {
        // SAFETY: takes a fresh reference; 3 is isl_ast_loop_separate.
        let r = unsafe {
            ffi::isl_schedule_node_band_member_set_ast_loop_type(self.take(), pos as c_int, 3)
        };
        ScheduleNode::wrap(self.ctx, r, "separate loop")
    }

    pub fn band_set_coincident(&self, pos: usize, c: bool) -> Result<Self, IslError> {
        // SAFETY: takes a fresh reference.
        let r = unsafe {
            ffi::isl_schedule_node_band_member_set_coincident(self.take(), pos as c_int, c as c_int)
        };
        ScheduleNode::wrap(self.ctx, r, "set coincident")
    }

    pub fn band_partial_schedule(&self) -> Result<MultiUnionPwAff<'c>, IslError> {
        // SAFETY: isl only reads the node.
        let r = unsafe { ffi::isl_schedule_node_band_get_partial_schedule(self.keep()) };
        MultiUnionPwAff::wrap(self.ctx, r, "partial schedule")
    }

    /// Tiles the band with one size per member; the node becomes the tile
    /// band and its child the point band.
    pub fn band_tile(&self, sizes: &[i64]) -> Result<Self, IslError> {
        let ctx = self.ctx;
        // SAFETY: the space and values are fresh; set_val and tile take
        // their arguments; NULLs propagate through isl and are caught.
        unsafe {
            let space = ffi::isl_schedule_node_band_get_space(self.keep());
            let mut mv = ffi::isl_multi_val_zero(space);
            for (i, &s) in sizes.iter().enumerate() {
                let v = ffi::isl_val_int_from_si(ctx.ptr(), s as std::os::raw::c_long);
                mv = ffi::isl_multi_val_set_val(mv, i as c_int, v);
            }
            if mv.is_null() {
                return Err(ctx.take_error("tile sizes"));
            }
            let r = ffi::isl_schedule_node_band_tile(self.take(), mv);
            ScheduleNode::wrap(ctx, r, "tile")
        }
    }

    /// Splits the band after its first `pos` members; the node keeps
    /// those, its new child band the rest.
    pub fn band_split(&self, pos: usize) -> Result<Self, IslError> {
        // SAFETY: takes a fresh reference.
        let r = unsafe { ffi::isl_schedule_node_band_split(self.take(), pos as c_int) };
        ScheduleNode::wrap(self.ctx, r, "split band")
    }

    /// The domain elements a filter node lets through.
    pub fn filter(&self) -> Result<UnionSet<'c>, IslError> {
        // SAFETY: isl only reads the node.
        let r = unsafe { ffi::isl_schedule_node_filter_get_filter(self.keep()) };
        UnionSet::wrap(self.ctx, r, "filter")
    }

    /// Removes this node; the result points at what replaced it.
    pub fn delete(&self) -> Result<Self, IslError> {
        // SAFETY: takes a fresh reference.
        let r = unsafe { ffi::isl_schedule_node_delete(self.take()) };
        ScheduleNode::wrap(self.ctx, r, "delete")
    }

    /// Inserts a band above this node; the result points at the new band.
    pub fn insert_partial_schedule(&self, partial: &MultiUnionPwAff<'c>) -> Result<Self, IslError> {
        // SAFETY: takes fresh references.
        let r =
            unsafe { ffi::isl_schedule_node_insert_partial_schedule(self.take(), partial.take()) };
        ScheduleNode::wrap(self.ctx, r, "insert band")
    }
}

impl<'c> MultiUnionPwAff<'c> {
    /// The relation from each domain element to its tuple of values.
    pub fn to_union_map(&self) -> Result<UnionMap<'c>, IslError> {
        // SAFETY: takes a fresh reference.
        let r = unsafe { ffi::isl_union_map_from_multi_union_pw_aff(self.take()) };
        UnionMap::wrap(self.ctx, r, "relation of a partial schedule")
    }

    pub fn size(&self) -> Result<usize, IslError> {
        // SAFETY: isl only reads.
        let n = unsafe { ffi::isl_multi_union_pw_aff_size(self.keep()) };
        usize::try_from(n).map_err(|_| self.ctx.take_error("size"))
    }

    pub fn get(&self, pos: usize) -> Result<UnionPwAff<'c>, IslError> {
        // SAFETY: isl only reads; the result is fresh.
        let r = unsafe { ffi::isl_multi_union_pw_aff_get_union_pw_aff(self.keep(), pos as c_int) };
        UnionPwAff::wrap(self.ctx, r, "member")
    }

    pub fn set(&self, pos: usize, member: &UnionPwAff<'c>) -> Result<Self, IslError> {
        // SAFETY: takes fresh references.
        let r = unsafe {
            ffi::isl_multi_union_pw_aff_set_union_pw_aff(self.take(), pos as c_int, member.take())
        };
        MultiUnionPwAff::wrap(self.ctx, r, "set member")
    }
}

/// What [`UnionPwAff::each_piece`] hands every piece to.
type Visit<'a> = &'a mut dyn FnMut(*mut ffi::isl_set, *mut ffi::isl_aff) -> bool;

impl<'c> UnionPwAff<'c> {
    /// Hands every piece of every piecewise expression to `f`, its domain
    /// and its expression both owned by `f`; `f` returns false when an
    /// isl call failed, which ends the walk with isl's error.
    fn each_piece(&self, f: Visit<'_>, what: &str) -> Result<(), IslError> {
        unsafe extern "C" fn piece(
            set: *mut ffi::isl_set,
            aff: *mut ffi::isl_aff,
            user: *mut std::os::raw::c_void,
        ) -> c_int {
            // SAFETY: `user` is the `Visit` of `each_piece`, alive for the
            // walk; isl passes ownership of `set` and `aff` on to it.
            let f = unsafe { &mut *(user as *mut Visit<'_>) };
            if f(set, aff) { 0 } else { -1 }
        }
        unsafe extern "C" fn pw(
            pa: *mut ffi::isl_pw_aff,
            user: *mut std::os::raw::c_void,
        ) -> c_int {
            // SAFETY: isl passes ownership of `pa`; `user` goes on to `piece`.
            unsafe {
                let r = ffi::isl_pw_aff_foreach_piece(pa, piece, user);
                ffi::isl_pw_aff_free(pa);
                r
            }
        }
        let mut visit = f;
        // SAFETY: isl only reads the union; `visit` outlives the call.
        let r = unsafe {
            ffi::isl_union_pw_aff_foreach_pw_aff(
                self.keep(),
                pw,
                &mut visit as *mut Visit<'_> as *mut std::os::raw::c_void,
            )
        };
        if r < 0 {
            return Err(self.ctx.take_error(what));
        }
        Ok(())
    }

    /// Every piece's affine expression with its coefficients (of the
    /// input dimensions and the parameters) negated and its constant
    /// term kept: `x + 2t + 1` becomes `−x − 2t + 1`. A schedule member
    /// mirrored this way keeps each statement's shift.
    pub fn reflect_linear(&self) -> Result<UnionPwAff<'c>, IslError> {
        let mut out: *mut ffi::isl_union_pw_aff = std::ptr::null_mut();
        let walked = self.each_piece(
            &mut |set, aff| {
                // SAFETY: `set` and `aff` are ours; every call takes its
                // arguments, and a NULL propagates to `out`, checked.
                unsafe {
                    let c = ffi::isl_aff_get_constant_val(aff);
                    let mirrored = ffi::isl_aff_set_constant_val(ffi::isl_aff_neg(aff), c);
                    let upa =
                        ffi::isl_union_pw_aff_from_pw_aff(ffi::isl_pw_aff_alloc(set, mirrored));
                    out = if out.is_null() {
                        upa
                    } else {
                        ffi::isl_union_pw_aff_union_add(out, upa)
                    };
                }
                !out.is_null()
            },
            "mirrored expression",
        );
        if let Err(e) = walked {
            if !out.is_null() {
                // SAFETY: `out` is ours.
                unsafe { ffi::isl_union_pw_aff_free(out) };
            }
            return Err(e);
        }
        UnionPwAff::wrap(self.ctx, out, "mirrored expression")
    }

    /// The largest absolute value of a coefficient of a parameter or of
    /// an input dimension in any piece (constant terms and integer
    /// divisions aside), as a float: schedules straight from the
    /// scheduler have no divisions, and a float holds any magnitude.
    pub fn max_abs_coefficient(&self) -> Result<f64, IslError> {
        let mut max = 0.0f64;
        self.each_piece(
            &mut |set, aff| {
                // SAFETY: `set` and `aff` are ours and freed here; isl
                // only reads `aff` in between.
                unsafe {
                    ffi::isl_set_free(set);
                    let mut ok = true;
                    // 1 is isl_dim_param, 2 is isl_dim_in.
                    'types: for t in [1, 2] {
                        let n = ffi::isl_aff_dim(aff, t);
                        if n < 0 {
                            ok = false;
                            break;
                        }
                        for pos in 0..n {
                            let v = ffi::isl_aff_get_coefficient_val(aff, t, pos);
                            if v.is_null() {
                                ok = false;
                                break 'types;
                            }
                            max = max.max(ffi::isl_val_get_d(v).abs());
                            ffi::isl_val_free(v);
                        }
                    }
                    ffi::isl_aff_free(aff);
                    ok
                }
            },
            "coefficients",
        )?;
        Ok(max)
    }
}

isl_ops!(UnionPwAff {
    /// The expression as a relation from each domain element to its value.
    fn to_union_map() -> UnionMap = isl_union_map_from_union_pw_aff;
    fn add(other: UnionPwAff) -> UnionPwAff = isl_union_pw_aff_add;
    fn sub(other: UnionPwAff) -> UnionPwAff = isl_union_pw_aff_sub;
});

/// Words isl's parser reads as keywords whatever their case (isl_stream.c):
/// a C variable with one of these names cannot be written as is.
pub const RESERVED: &[&str] = &[
    "exists", "and", "or", "implies", "not", "infty", "infinity", "nan", "min", "max", "rat",
    "true", "false", "ceild", "floord", "mod", "ceil", "floor",
];

/// The suffix that marks a mangled name.
const MANGLE_SUFFIX: &str = "_pt";

/// The isl name of a C identifier. Reserved words, the names isl gives
/// the loops of the ASTs it builds (`c0`, `c1`, ...: a program's own
/// `c1` would read as a loop counter), and names that already end in the
/// mangling suffix (so that the mapping stays one to one), get the
/// suffix; every other name is itself.
pub fn mangle(name: &str) -> std::borrow::Cow<'_, str> {
    let reserved = RESERVED.iter().any(|w| w.eq_ignore_ascii_case(name))
        || name
            .strip_prefix('c')
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    if reserved || name.ends_with(MANGLE_SUFFIX) {
        std::borrow::Cow::Owned(format!("{name}{MANGLE_SUFFIX}"))
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

/// The C identifier of an isl name made by [`mangle`].
pub fn unmangle(name: &str) -> &str {
    name.strip_suffix(MANGLE_SUFFIX).unwrap_or(name)
}

/// isl text with every identifier unmangled (for messages and printing).
pub fn unmangle_text(text: &str) -> String {
    map_words(text, &|w| unmangle(w).to_string())
}

/// Text the user wrote in isl notation (`--context`) with C names: the
/// words that are one of `names` are mangled, every other word (isl's
/// own `and`, `max`, ...) is left alone.
pub fn mangle_names_in(text: &str, names: &[String]) -> String {
    map_words(text, &|w| {
        if names.iter().any(|n| n == w) {
            mangle(w).into_owned()
        } else {
            w.to_string()
        }
    })
}

/// `text` with every identifier-like word replaced by `f(word)`.
fn map_words(text: &str, f: &dyn Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if !word.is_empty() {
            if word.starts_with(|c: char| c.is_ascii_digit()) {
                out.push_str(word);
            } else {
                out.push_str(&f(word));
            }
            word.clear();
        }
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Parses `text` as a union set and prints it back in isl's normal form,
/// with the C names [`mangle`] changed back.
pub fn normalize_set(ctx: &Ctx, text: &str) -> Result<String, IslError> {
    Ok(unmangle_text(&UnionSet::parse(ctx, text)?.to_string()))
}

/// Parses `text` as a union map and prints it back in isl's normal form,
/// with the C names [`mangle`] changed back.
pub fn normalize_map(ctx: &Ctx, text: &str) -> Result<String, IslError> {
    Ok(unmangle_text(&UnionMap::parse(ctx, text)?.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_of_a_dimension_at_fixed_parameters() {
        let ctx = Ctx::new();
        let s = Set::parse(
            &ctx,
            "[n] -> { A[i, j] : n = 10 and 0 <= i < n and -1 <= j <= i + 2 }",
        )
        .unwrap();
        assert_eq!(s.dim_range(0).unwrap(), DimRange::Between(0, 9));
        assert_eq!(s.dim_range(1).unwrap(), DimRange::Between(-1, 11));
        let open = Set::parse(&ctx, "[n] -> { A[i] : 0 <= i < n }").unwrap();
        assert_eq!(open.dim_range(0).unwrap(), DimRange::Unbounded);
        let none = Set::parse(&ctx, "{ A[i] : 0 <= i < 0 }").unwrap();
        assert_eq!(none.dim_range(0).unwrap(), DimRange::Empty);
        let huge = Set::parse(&ctx, "{ A[i] : 0 <= i <= 100000000000000000000 }").unwrap();
        assert_eq!(huge.dim_range(0).unwrap(), DimRange::Unbounded);
    }

    #[test]
    fn largest_coefficient_of_a_schedule_member() {
        let ctx = Ctx::new();
        let m = MultiUnionPwAff::parse(
            &ctx,
            "[n] -> [{ S0[i, j] -> [(3i - 25j + 100)]; S1[k] -> [(n + 2k)] }]",
        )
        .unwrap();
        // The constant 100 is not a coefficient.
        assert_eq!(m.get(0).unwrap().max_abs_coefficient().unwrap(), 25.0);
        let big =
            MultiUnionPwAff::parse(&ctx, "[n] -> [{ S0[i] -> [(2147483649n + i)] }]").unwrap();
        assert_eq!(
            big.get(0).unwrap().max_abs_coefficient().unwrap(),
            2147483649.0
        );
    }

    #[test]
    fn parses_and_prints_sets_and_maps() {
        let ctx = Ctx::new();
        let s = UnionSet::parse(&ctx, "[n] -> { S0[i] : 0 <= i < n }").unwrap();
        assert_eq!(s.to_string(), "[n] -> { S0[i] : 0 <= i < n }");
        let m = UnionMap::parse(&ctx, "[n] -> { S0[i] -> A[i + 1] }").unwrap();
        assert_eq!(m.to_string(), "[n] -> { S0[i] -> A[1 + i] }");
        assert!(!s.is_empty().unwrap());
        let t = UnionSet::parse(&ctx, "[n] -> { S0[i] : i >= 0 and n - 1 - i >= 0 }").unwrap();
        assert!(s.is_equal(&t).unwrap());
        assert!(s.clone().is_equal(&s).unwrap());
    }

    #[test]
    fn every_reserved_word_is_mangled_and_comes_back() {
        let ctx = Ctx::new();
        let mut names: Vec<String> = RESERVED.iter().map(|w| w.to_string()).collect();
        names.extend(RESERVED.iter().map(|w| w.to_uppercase()));
        names
            .extend(["NaN", "Max", "x_pt", "x_pt_pt", "n", "c1", "c0_pt", "c1x"].map(String::from));
        // isl's loop counter names are mangled, other names that start
        // like them are not.
        assert_eq!(mangle("c12"), "c12_pt");
        assert_eq!(mangle("c"), "c");
        assert_eq!(mangle("c1x"), "c1x");
        for w in &names {
            let m = mangle(w);
            assert_eq!(unmangle(&m), w.as_str());
            let text = format!("[{m}] -> {{ S0[i, {m}] : 0 <= {m} < i }}");
            // Unmangled, the reserved word itself does not parse.
            if RESERVED.iter().any(|r| r.eq_ignore_ascii_case(w)) {
                let raw = format!("[{w}] -> {{ S0[i] : 0 <= i < {w} }}");
                assert!(UnionSet::parse(&ctx, &raw).is_err(), "{raw}");
            }
            let s = UnionSet::parse(&ctx, &text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let back = unmangle_text(&s.to_string());
            assert!(back.contains(&format!("[{w}] ->")), "{w}: {back}");
            assert!(
                !back.contains(&format!("{w}_pt")) || w.ends_with("_pt"),
                "{back}"
            );
        }
        // Distinct C names stay distinct.
        assert_ne!(mangle("max"), mangle("max_pt"));
        assert_eq!(mangle("n"), "n");
    }

    #[test]
    fn syntax_errors_are_values_not_crashes() {
        let ctx = Ctx::new();
        let e = UnionSet::parse(&ctx, "{ S0[i] : i >= }").unwrap_err();
        assert!(e.message.contains("cannot read (union set)"), "{e}");
        assert!(UnionMap::parse(&ctx, "nonsense").is_err());
        assert!(UnionSet::parse(&ctx, "a\0b").is_err());
        // The context is still usable after errors.
        assert!(UnionSet::parse(&ctx, "{ S[i] : 0 <= i <= 3 }").is_ok());
    }

    #[test]
    fn repeated_use_does_not_grow_memory() {
        // Parse/print/copy many times; a leak of the printed strings or of
        // copies would show up under valgrind/ASan, and here as a sanity
        // bound on resident memory.
        let ctx = Ctx::new();
        let before = resident_kib();
        for _ in 0..20_000 {
            let s =
                UnionSet::parse(&ctx, "[n] -> { S0[i, j] : 0 <= i < n and 0 <= j <= i }").unwrap();
            let c = s.clone();
            assert!(!c.to_string().is_empty());
        }
        let after = resident_kib();
        if let (Some(b), Some(a)) = (before, after) {
            assert!(
                a < b + 20_000,
                "resident memory grew from {b} KiB to {a} KiB"
            );
        }
    }

    fn resident_kib() -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }
}
