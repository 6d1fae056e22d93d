//! isl's AST generator, converted at once into a plain Rust tree so that
//! the C emitter (ours: isl's printer cannot place our pragmas) never sees
//! an isl pointer. A callback before each `for` lets the caller attach
//! facts computed from the loop's schedule (parallelism, permutability).

use super::{Ctx, IslError, Schedule, Set, UnionMap, ffi};
use std::ffi::CStr;
use std::os::raw::{c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Operators of isl's AST expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AstOp {
    And,
    AndThen,
    Or,
    OrElse,
    Max,
    Min,
    Minus,
    Add,
    Sub,
    Mul,
    /// Exact division.
    Div,
    /// Floor division.
    FdivQ,
    /// Division with a dividend known to be non-negative.
    PdivQ,
    /// Remainder with a dividend known to be non-negative.
    PdivR,
    /// Remainder only compared with zero.
    ZdivR,
    Cond,
    Select,
    Eq,
    Le,
    Lt,
    Ge,
    Gt,
    Call,
    Access,
    Member,
    AddressOf,
}

/// An expression of the generated AST.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AstExpr {
    Int(i64),
    Id(String),
    Op(AstOp, Vec<AstExpr>),
}

/// A node of the generated AST.
#[derive(Debug, Clone, PartialEq)]
pub enum AstNode {
    For {
        iterator: String,
        init: AstExpr,
        cond: AstExpr,
        inc: AstExpr,
        body: Box<AstNode>,
        /// Index into the facts returned by the `before each for` callback.
        info: Option<usize>,
    },
    If {
        cond: AstExpr,
        then: Box<AstNode>,
        other: Option<Box<AstNode>>,
    },
    Block(Vec<AstNode>),
    Mark {
        name: String,
        body: Box<AstNode>,
    },
    /// A statement instance: `S3(i0, i1, ...)` as a call expression.
    User(AstExpr),
}

/// What the callback sees of a loop being generated.
pub struct LoopBuild<'a, 'c> {
    /// Statement instances to schedule dimensions, the last one being the
    /// loop's own.
    pub schedule: &'a UnionMap<'c>,
}

struct State<'f, 'c, T> {
    ctx: &'c Ctx,
    on_for: &'f mut dyn FnMut(LoopBuild<'_, 'c>) -> Result<T, IslError>,
    infos: Vec<T>,
    error: Option<IslError>,
    panic: Option<Box<dyn std::any::Any + Send>>,
}

unsafe extern "C" fn before_each_for<T>(
    build: *mut ffi::isl_ast_build,
    user: *mut c_void,
) -> *mut ffi::isl_id {
    // SAFETY: `user` is the State passed to isl_ast_build_set_before_each_for
    // and outlives the AST generation that calls us.
    let state = unsafe { &mut *(user as *mut State<'_, '_, T>) };
    if state.error.is_some() || state.panic.is_some() {
        return std::ptr::null_mut();
    }
    // SAFETY: the build is live during the callback; the result is fresh.
    let raw = unsafe { ffi::isl_ast_build_get_schedule(build) };
    let schedule = match UnionMap::wrap(state.ctx, raw, "loop schedule") {
        Ok(s) => s,
        Err(e) => {
            state.error = Some(e);
            return std::ptr::null_mut();
        }
    };
    let on_for = &mut state.on_for;
    match catch_unwind(AssertUnwindSafe(|| {
        on_for(LoopBuild {
            schedule: &schedule,
        })
    })) {
        Ok(Ok(info)) => {
            let name = format!("polytune_loop_{}", state.infos.len());
            state.infos.push(info);
            let c = std::ffi::CString::new(name).expect("no NUL");
            // SAFETY: the context is live; isl copies the name.
            unsafe { ffi::isl_id_alloc(state.ctx.ptr(), c.as_ptr(), std::ptr::null_mut()) }
        }
        Ok(Err(e)) => {
            state.error = Some(e);
            std::ptr::null_mut()
        }
        Err(p) => {
            state.panic = Some(p);
            std::ptr::null_mut()
        }
    }
}

/// Generates the AST of `schedule` under the parameter `context`, calling
/// `on_for` before each loop; returns the tree and the collected facts.
pub fn build_ast<'c, T>(
    schedule: &Schedule<'c>,
    context: &Set<'c>,
    on_for: &mut dyn FnMut(LoopBuild<'_, 'c>) -> Result<T, IslError>,
) -> Result<(AstNode, Vec<T>), IslError> {
    let ctx = schedule.ctx;
    let mut state = State {
        ctx,
        on_for,
        infos: Vec::new(),
        error: None,
        panic: None,
    };
    // SAFETY: the build takes a fresh context reference; the callback's
    // user pointer is `state`, alive until the build is freed below.
    let root = unsafe {
        let mut build = ffi::isl_ast_build_from_context(context.take());
        build = ffi::isl_ast_build_set_before_each_for(
            build,
            Some(before_each_for::<T>),
            &mut state as *mut State<'_, 'c, T> as *mut c_void,
        );
        let node = ffi::isl_ast_build_node_from_schedule(build, schedule.take());
        ffi::isl_ast_build_free(build);
        node
    };
    if let Some(p) = state.panic.take() {
        if !root.is_null() {
            // SAFETY: we own the node.
            unsafe { ffi::isl_ast_node_free(root) };
        }
        std::panic::resume_unwind(p);
    }
    if let Some(e) = state.error.take() {
        if !root.is_null() {
            // SAFETY: we own the node.
            unsafe { ffi::isl_ast_node_free(root) };
        }
        return Err(e);
    }
    if root.is_null() {
        return Err(ctx.take_error("AST generation"));
    }
    // SAFETY: root is a live node we own; convert reads it and we free it.
    let tree = unsafe {
        let t = convert_node(ctx, root);
        ffi::isl_ast_node_free(root);
        t?
    };
    Ok((tree, state.infos))
}

/// A C condition (isl's AST expression) that holds exactly for the
/// parameter values in `set`, a set of parameters only.
pub fn expr_from_set<'c>(set: &Set<'c>) -> Result<AstExpr, IslError> {
    let ctx = set.ctx;
    // SAFETY: the build starts from a fresh universe of the set's
    // parameter space; expr_from_set keeps the build and takes the set.
    let e = unsafe {
        let space = ffi::isl_set_get_space(set.keep());
        let build = ffi::isl_ast_build_from_context(ffi::isl_set_universe(space));
        let e = ffi::isl_ast_build_expr_from_set(build, set.take());
        ffi::isl_ast_build_free(build);
        e
    };
    let e = expr_ptr(ctx, e)?;
    // SAFETY: `e` is a live expression we own; `Owned` frees it.
    unsafe { convert_expr(ctx, e.0) }
}

/// The greatest value of dimension `pos` of `set` as an expression of its
/// parameters, valid wherever the set has a point (isl's `dim_max`);
/// `None` when it has no greatest value for some parameters.
pub fn max_of_dim<'c>(set: &Set<'c>, pos: usize) -> Result<Option<AstExpr>, IslError> {
    extreme_of_dim(set, pos, Extreme::Max)
}

/// The least value of dimension `pos` of `set` as an expression of its
/// parameters, valid wherever the set has a point (isl's `dim_min`);
/// `None` when it has no least value for some parameters.
pub fn min_of_dim<'c>(set: &Set<'c>, pos: usize) -> Result<Option<AstExpr>, IslError> {
    extreme_of_dim(set, pos, Extreme::Min)
}

#[derive(Clone, Copy)]
enum Extreme {
    Min,
    Max,
}

fn extreme_of_dim<'c>(
    set: &Set<'c>,
    pos: usize,
    which: Extreme,
) -> Result<Option<AstExpr>, IslError> {
    let ctx = set.ctx;
    assert!(pos < set.dims()?, "dimension {pos} out of the set's space");
    let what = match which {
        Extreme::Min => "dimension minimum",
        Extreme::Max => "dimension maximum",
    };
    // SAFETY: `dim_min`/`dim_max` and `params` take fresh references of
    // the set; the piecewise expression is checked, then consumed by the
    // build's conversion (or freed), and the build freed once.
    let e = unsafe {
        let value = match which {
            Extreme::Min => ffi::isl_set_dim_min(set.take(), pos as c_int),
            Extreme::Max => ffi::isl_set_dim_max(set.take(), pos as c_int),
        };
        if value.is_null() {
            return Err(ctx.take_error(what));
        }
        match ffi::isl_pw_aff_involves_nan(value) {
            0 => {}
            1 => {
                ffi::isl_pw_aff_free(value);
                return Ok(None);
            }
            _ => {
                ffi::isl_pw_aff_free(value);
                return Err(ctx.take_error(what));
            }
        }
        let build = ffi::isl_ast_build_from_context(ffi::isl_set_params(set.take()));
        let e = ffi::isl_ast_build_expr_from_pw_aff(build, value);
        ffi::isl_ast_build_free(build);
        e
    };
    let e = expr_ptr(ctx, e)?;
    // SAFETY: `e` is a live expression we own; `Owned` frees it.
    unsafe { convert_expr(ctx, e.0) }.map(Some)
}

/// Frees an owned pointer when dropped.
struct Owned<T>(*mut T, unsafe extern "C" fn(*mut T) -> *mut T);

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: we own the pointer.
            unsafe { (self.1)(self.0) };
        }
    }
}

fn node_ptr(ctx: &Ctx, p: *mut ffi::isl_ast_node) -> Result<Owned<ffi::isl_ast_node>, IslError> {
    if p.is_null() {
        Err(ctx.take_error("AST node"))
    } else {
        Ok(Owned(p, ffi::isl_ast_node_free))
    }
}

fn expr_ptr(ctx: &Ctx, p: *mut ffi::isl_ast_expr) -> Result<Owned<ffi::isl_ast_expr>, IslError> {
    if p.is_null() {
        Err(ctx.take_error("AST expression"))
    } else {
        Ok(Owned(p, ffi::isl_ast_expr_free))
    }
}

/// Name of an id we own (then freed).
unsafe fn take_id_name(ctx: &Ctx, id: *mut ffi::isl_id) -> Result<String, IslError> {
    if id.is_null() {
        return Err(ctx.take_error("identifier"));
    }
    // SAFETY: id is live; the name is owned by the id and copied.
    unsafe {
        let name = ffi::isl_id_get_name(id);
        let s = if name.is_null() {
            String::new()
        } else {
            CStr::from_ptr(name).to_string_lossy().into_owned()
        };
        ffi::isl_id_free(id);
        Ok(s)
    }
}

unsafe fn convert_node(ctx: &Ctx, n: *mut ffi::isl_ast_node) -> Result<AstNode, IslError> {
    // SAFETY (whole function): `n` is live; every getter returns a fresh
    // reference that `Owned` frees.
    unsafe {
        match ffi::isl_ast_node_get_type(n) {
            1 => {
                let iterator = expr_ptr(ctx, ffi::isl_ast_node_for_get_iterator(n))?;
                let iterator = match convert_expr(ctx, iterator.0)? {
                    AstExpr::Id(s) => s,
                    other => {
                        return Err(IslError {
                            message: format!("loop iterator is not a name: {other:?}"),
                        });
                    }
                };
                let init = convert_expr(ctx, expr_ptr(ctx, ffi::isl_ast_node_for_get_init(n))?.0)?;
                let cond = convert_expr(ctx, expr_ptr(ctx, ffi::isl_ast_node_for_get_cond(n))?.0)?;
                let inc = convert_expr(ctx, expr_ptr(ctx, ffi::isl_ast_node_for_get_inc(n))?.0)?;
                let body = node_ptr(ctx, ffi::isl_ast_node_for_get_body(n))?;
                let body = Box::new(convert_node(ctx, body.0)?);
                let ann = ffi::isl_ast_node_get_annotation(n);
                let info = if ann.is_null() {
                    ffi::isl_ctx_reset_error(ctx.ptr());
                    None
                } else {
                    take_id_name(ctx, ann)?
                        .strip_prefix("polytune_loop_")
                        .and_then(|k| k.parse().ok())
                };
                Ok(AstNode::For {
                    iterator,
                    init,
                    cond,
                    inc,
                    body,
                    info,
                })
            }
            2 => {
                let cond = convert_expr(ctx, expr_ptr(ctx, ffi::isl_ast_node_if_get_cond(n))?.0)?;
                let then = node_ptr(ctx, ffi::isl_ast_node_if_get_then_node(n))?;
                let then = Box::new(convert_node(ctx, then.0)?);
                let has_else = ctx.boolean(ffi::isl_ast_node_if_has_else_node(n), "if has else")?;
                let other = if has_else {
                    let e = node_ptr(ctx, ffi::isl_ast_node_if_get_else_node(n))?;
                    Some(Box::new(convert_node(ctx, e.0)?))
                } else {
                    None
                };
                Ok(AstNode::If { cond, then, other })
            }
            3 => {
                let list = ffi::isl_ast_node_block_get_children(n);
                if list.is_null() {
                    return Err(ctx.take_error("block children"));
                }
                let list = Owned(list, ffi::isl_ast_node_list_free);
                let k = ffi::isl_ast_node_list_size(list.0);
                if k < 0 {
                    return Err(ctx.take_error("block size"));
                }
                let mut out = Vec::with_capacity(k as usize);
                for i in 0..k {
                    let c = node_ptr(ctx, ffi::isl_ast_node_list_get_at(list.0, i as c_int))?;
                    out.push(convert_node(ctx, c.0)?);
                }
                Ok(AstNode::Block(out))
            }
            4 => {
                let name = take_id_name(ctx, ffi::isl_ast_node_mark_get_id(n))?;
                let body = node_ptr(ctx, ffi::isl_ast_node_mark_get_node(n))?;
                Ok(AstNode::Mark {
                    name,
                    body: Box::new(convert_node(ctx, body.0)?),
                })
            }
            5 => {
                let e = expr_ptr(ctx, ffi::isl_ast_node_user_get_expr(n))?;
                Ok(AstNode::User(convert_expr(ctx, e.0)?))
            }
            _ => Err(ctx.take_error("AST node type")),
        }
    }
}

unsafe fn convert_expr(ctx: &Ctx, e: *mut ffi::isl_ast_expr) -> Result<AstExpr, IslError> {
    // SAFETY (whole function): `e` is live; getters return fresh references.
    unsafe {
        match ffi::isl_ast_expr_get_type(e) {
            0 => {
                let op = match ffi::isl_ast_expr_op_get_type(e) {
                    0 => AstOp::And,
                    1 => AstOp::AndThen,
                    2 => AstOp::Or,
                    3 => AstOp::OrElse,
                    4 => AstOp::Max,
                    5 => AstOp::Min,
                    6 => AstOp::Minus,
                    7 => AstOp::Add,
                    8 => AstOp::Sub,
                    9 => AstOp::Mul,
                    10 => AstOp::Div,
                    11 => AstOp::FdivQ,
                    12 => AstOp::PdivQ,
                    13 => AstOp::PdivR,
                    14 => AstOp::ZdivR,
                    15 => AstOp::Cond,
                    16 => AstOp::Select,
                    17 => AstOp::Eq,
                    18 => AstOp::Le,
                    19 => AstOp::Lt,
                    20 => AstOp::Ge,
                    21 => AstOp::Gt,
                    22 => AstOp::Call,
                    23 => AstOp::Access,
                    24 => AstOp::Member,
                    25 => AstOp::AddressOf,
                    _ => return Err(ctx.take_error("AST operator")),
                };
                let n = ffi::isl_ast_expr_op_get_n_arg(e);
                if n < 0 {
                    return Err(ctx.take_error("AST operator arity"));
                }
                let mut args = Vec::with_capacity(n as usize);
                for i in 0..n {
                    let a = expr_ptr(ctx, ffi::isl_ast_expr_op_get_arg(e, i))?;
                    args.push(convert_expr(ctx, a.0)?);
                }
                Ok(AstExpr::Op(op, args))
            }
            1 => Ok(AstExpr::Id(take_id_name(ctx, ffi::isl_ast_expr_get_id(e))?)),
            2 => {
                let v = ffi::isl_ast_expr_get_val(e);
                if v.is_null() {
                    return Err(ctx.take_error("AST integer"));
                }
                let v = Owned(v, ffi::isl_val_free);
                let text = super::owned_string(ffi::isl_val_to_str(v.0)).unwrap_or_default();
                text.parse::<i64>().map(AstExpr::Int).map_err(|_| IslError {
                    message: format!("integer {text} does not fit in 64 bits"),
                })
            }
            _ => Err(ctx.take_error("AST expression type")),
        }
    }
}
