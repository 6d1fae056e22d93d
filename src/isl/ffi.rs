//! Raw declarations of the isl functions polytune calls. They link against
//! the isl that isl-rs builds and bundles; nothing outside `crate::isl`
//! sees them.
#![allow(non_camel_case_types, dead_code)]

use std::os::raw::{c_char, c_int, c_long, c_uint, c_ulong, c_void};

macro_rules! opaque {
    ($($name:ident),* $(,)?) => {
        $(
            #[repr(C)]
            pub(crate) struct $name {
                _opaque: [u8; 0],
            }
        )*
    };
}

opaque!(
    isl_ctx,
    isl_set,
    isl_map,
    isl_union_set,
    isl_union_map,
    isl_val,
    isl_multi_val,
    isl_id,
    isl_space,
    isl_union_pw_aff,
    isl_pw_aff,
    isl_aff,
    isl_multi_union_pw_aff,
    isl_union_access_info,
    isl_union_flow,
    isl_schedule_constraints,
    isl_schedule,
    isl_schedule_node,
    isl_ast_build,
    isl_ast_node,
    isl_ast_node_list,
    isl_ast_expr,
);

/// `ISL_ON_ERROR_CONTINUE`: record the error and return NULL, print nothing.
pub(crate) const ISL_ON_ERROR_CONTINUE: c_int = 1;

pub(crate) type BeforeEachFor =
    unsafe extern "C" fn(build: *mut isl_ast_build, user: *mut c_void) -> *mut isl_id;

unsafe extern "C" {
    pub(crate) fn free(p: *mut c_void);

    // context and options
    pub(crate) fn isl_ctx_alloc() -> *mut isl_ctx;
    pub(crate) fn isl_ctx_free(ctx: *mut isl_ctx);
    pub(crate) fn isl_ctx_last_error_msg(ctx: *mut isl_ctx) -> *const c_char;
    pub(crate) fn isl_ctx_reset_error(ctx: *mut isl_ctx);
    pub(crate) fn isl_ctx_set_max_operations(ctx: *mut isl_ctx, max_operations: c_ulong);
    pub(crate) fn isl_ctx_reset_operations(ctx: *mut isl_ctx);
    pub(crate) fn isl_ctx_abort(ctx: *mut isl_ctx);
    pub(crate) fn isl_ctx_resume(ctx: *mut isl_ctx);
    pub(crate) fn isl_options_set_on_error(ctx: *mut isl_ctx, val: c_int) -> c_int;
    pub(crate) fn isl_options_set_schedule_serialize_sccs(ctx: *mut isl_ctx, val: c_int) -> c_int;
    pub(crate) fn isl_options_set_schedule_whole_component(ctx: *mut isl_ctx, val: c_int) -> c_int;
    pub(crate) fn isl_options_set_schedule_outer_coincidence(
        ctx: *mut isl_ctx,
        val: c_int,
    ) -> c_int;
    pub(crate) fn isl_options_set_schedule_maximize_band_depth(
        ctx: *mut isl_ctx,
        val: c_int,
    ) -> c_int;
    pub(crate) fn isl_options_set_schedule_max_coefficient(ctx: *mut isl_ctx, val: c_int) -> c_int;
    pub(crate) fn isl_options_set_schedule_max_constant_term(
        ctx: *mut isl_ctx,
        val: c_int,
    ) -> c_int;
    pub(crate) fn isl_options_set_schedule_treat_coalescing(ctx: *mut isl_ctx, val: c_int)
    -> c_int;
    pub(crate) fn isl_options_set_tile_scale_tile_loops(ctx: *mut isl_ctx, val: c_int) -> c_int;
    pub(crate) fn isl_options_set_tile_shift_point_loops(ctx: *mut isl_ctx, val: c_int) -> c_int;
    pub(crate) fn isl_options_set_ast_build_atomic_upper_bound(
        ctx: *mut isl_ctx,
        val: c_int,
    ) -> c_int;
    pub(crate) fn isl_options_set_ast_build_prefer_pdiv(ctx: *mut isl_ctx, val: c_int) -> c_int;
    pub(crate) fn isl_options_set_ast_build_detect_min_max(ctx: *mut isl_ctx, val: c_int) -> c_int;
    pub(crate) fn isl_options_set_ast_build_allow_else(ctx: *mut isl_ctx, val: c_int) -> c_int;
    pub(crate) fn isl_options_set_ast_build_allow_or(ctx: *mut isl_ctx, val: c_int) -> c_int;

    // values and identifiers
    pub(crate) fn isl_val_free(v: *mut isl_val) -> *mut isl_val;
    pub(crate) fn isl_val_int_from_si(ctx: *mut isl_ctx, i: c_long) -> *mut isl_val;
    pub(crate) fn isl_val_to_str(v: *mut isl_val) -> *mut c_char;
    pub(crate) fn isl_multi_val_free(v: *mut isl_multi_val) -> *mut isl_multi_val;
    pub(crate) fn isl_multi_val_zero(space: *mut isl_space) -> *mut isl_multi_val;
    pub(crate) fn isl_multi_val_set_val(
        mv: *mut isl_multi_val,
        pos: c_int,
        v: *mut isl_val,
    ) -> *mut isl_multi_val;
    pub(crate) fn isl_id_alloc(
        ctx: *mut isl_ctx,
        name: *const c_char,
        user: *mut c_void,
    ) -> *mut isl_id;
    pub(crate) fn isl_id_free(id: *mut isl_id) -> *mut isl_id;
    pub(crate) fn isl_id_get_name(id: *mut isl_id) -> *const c_char;

    // sets
    pub(crate) fn isl_set_read_from_str(ctx: *mut isl_ctx, s: *const c_char) -> *mut isl_set;
    pub(crate) fn isl_set_copy(s: *mut isl_set) -> *mut isl_set;
    pub(crate) fn isl_set_free(s: *mut isl_set) -> *mut isl_set;
    pub(crate) fn isl_set_to_str(s: *mut isl_set) -> *mut c_char;
    pub(crate) fn isl_set_is_equal(a: *mut isl_set, b: *mut isl_set) -> c_int;
    pub(crate) fn isl_set_is_empty(s: *mut isl_set) -> c_int;
    pub(crate) fn isl_set_flatten(s: *mut isl_set) -> *mut isl_set;
    pub(crate) fn isl_set_intersect(a: *mut isl_set, b: *mut isl_set) -> *mut isl_set;
    pub(crate) fn isl_set_union(a: *mut isl_set, b: *mut isl_set) -> *mut isl_set;
    pub(crate) fn isl_set_get_space(s: *mut isl_set) -> *mut isl_space;
    pub(crate) fn isl_set_universe(space: *mut isl_space) -> *mut isl_set;
    pub(crate) fn isl_set_empty(space: *mut isl_space) -> *mut isl_set;
    pub(crate) fn isl_set_subtract(a: *mut isl_set, b: *mut isl_set) -> *mut isl_set;
    pub(crate) fn isl_set_params(s: *mut isl_set) -> *mut isl_set;
    pub(crate) fn isl_set_gist(s: *mut isl_set, context: *mut isl_set) -> *mut isl_set;
    pub(crate) fn isl_set_coalesce(s: *mut isl_set) -> *mut isl_set;
    pub(crate) fn isl_set_is_subset(a: *mut isl_set, b: *mut isl_set) -> c_int;
    pub(crate) fn isl_union_set_params(s: *mut isl_union_set) -> *mut isl_set;
    pub(crate) fn isl_set_lower_bound_si(
        s: *mut isl_set,
        t: c_int,
        pos: c_uint,
        v: c_int,
    ) -> *mut isl_set;
    pub(crate) fn isl_set_upper_bound_si(
        s: *mut isl_set,
        t: c_int,
        pos: c_uint,
        v: c_int,
    ) -> *mut isl_set;

    pub(crate) fn isl_map_from_union_map(m: *mut isl_union_map) -> *mut isl_map;
    pub(crate) fn isl_set_from_union_set(s: *mut isl_union_set) -> *mut isl_set;
    pub(crate) fn isl_set_dim(s: *mut isl_set, t: c_int) -> c_int;
    pub(crate) fn isl_set_dim_min_val(s: *mut isl_set, pos: c_int) -> *mut isl_val;
    pub(crate) fn isl_set_dim_max_val(s: *mut isl_set, pos: c_int) -> *mut isl_val;
    pub(crate) fn isl_map_dim(m: *mut isl_map, t: c_int) -> c_int;
    pub(crate) fn isl_map_free(m: *mut isl_map) -> *mut isl_map;

    // union sets
    pub(crate) fn isl_union_set_read_from_str(
        ctx: *mut isl_ctx,
        s: *const c_char,
    ) -> *mut isl_union_set;
    pub(crate) fn isl_union_set_copy(s: *mut isl_union_set) -> *mut isl_union_set;
    pub(crate) fn isl_union_set_free(s: *mut isl_union_set) -> *mut isl_union_set;
    pub(crate) fn isl_union_set_to_str(s: *mut isl_union_set) -> *mut c_char;
    pub(crate) fn isl_union_set_is_empty(s: *mut isl_union_set) -> c_int;
    pub(crate) fn isl_union_set_is_equal(a: *mut isl_union_set, b: *mut isl_union_set) -> c_int;
    pub(crate) fn isl_union_set_is_subset(a: *mut isl_union_set, b: *mut isl_union_set) -> c_int;
    pub(crate) fn isl_union_set_intersect(
        a: *mut isl_union_set,
        b: *mut isl_union_set,
    ) -> *mut isl_union_set;
    pub(crate) fn isl_union_set_n_set(s: *mut isl_union_set) -> c_int;
    pub(crate) fn isl_union_set_union(
        a: *mut isl_union_set,
        b: *mut isl_union_set,
    ) -> *mut isl_union_set;
    pub(crate) fn isl_union_set_intersect_params(
        a: *mut isl_union_set,
        b: *mut isl_set,
    ) -> *mut isl_union_set;
    pub(crate) fn isl_union_set_subtract(
        a: *mut isl_union_set,
        b: *mut isl_union_set,
    ) -> *mut isl_union_set;
    pub(crate) fn isl_union_set_coalesce(a: *mut isl_union_set) -> *mut isl_union_set;
    pub(crate) fn isl_union_set_lexmin(a: *mut isl_union_set) -> *mut isl_union_set;
    pub(crate) fn isl_union_set_apply(
        a: *mut isl_union_set,
        m: *mut isl_union_map,
    ) -> *mut isl_union_set;

    // union maps
    pub(crate) fn isl_union_map_read_from_str(
        ctx: *mut isl_ctx,
        s: *const c_char,
    ) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_copy(m: *mut isl_union_map) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_free(m: *mut isl_union_map) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_to_str(m: *mut isl_union_map) -> *mut c_char;
    pub(crate) fn isl_union_map_is_equal(a: *mut isl_union_map, b: *mut isl_union_map) -> c_int;
    pub(crate) fn isl_union_map_is_empty(m: *mut isl_union_map) -> c_int;
    pub(crate) fn isl_union_map_is_subset(a: *mut isl_union_map, b: *mut isl_union_map) -> c_int;
    pub(crate) fn isl_union_map_union(
        a: *mut isl_union_map,
        b: *mut isl_union_map,
    ) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_subtract(
        a: *mut isl_union_map,
        b: *mut isl_union_map,
    ) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_intersect(
        a: *mut isl_union_map,
        b: *mut isl_union_map,
    ) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_apply_range(
        a: *mut isl_union_map,
        b: *mut isl_union_map,
    ) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_apply_domain(
        a: *mut isl_union_map,
        b: *mut isl_union_map,
    ) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_reverse(a: *mut isl_union_map) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_intersect_domain(
        a: *mut isl_union_map,
        s: *mut isl_union_set,
    ) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_intersect_range(
        a: *mut isl_union_map,
        s: *mut isl_union_set,
    ) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_subtract_range(
        a: *mut isl_union_map,
        s: *mut isl_union_set,
    ) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_intersect_params(
        a: *mut isl_union_map,
        s: *mut isl_set,
    ) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_coalesce(a: *mut isl_union_map) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_deltas(a: *mut isl_union_map) -> *mut isl_union_set;
    pub(crate) fn isl_union_map_from_multi_union_pw_aff(
        m: *mut isl_multi_union_pw_aff,
    ) -> *mut isl_union_map;
    pub(crate) fn isl_union_map_domain(a: *mut isl_union_map) -> *mut isl_union_set;
    pub(crate) fn isl_union_map_range(a: *mut isl_union_map) -> *mut isl_union_set;
    pub(crate) fn isl_union_map_lex_lt_union_map(
        a: *mut isl_union_map,
        b: *mut isl_union_map,
    ) -> *mut isl_union_map;

    // dataflow
    pub(crate) fn isl_union_access_info_from_sink(
        sink: *mut isl_union_map,
    ) -> *mut isl_union_access_info;
    pub(crate) fn isl_union_access_info_set_must_source(
        a: *mut isl_union_access_info,
        s: *mut isl_union_map,
    ) -> *mut isl_union_access_info;
    pub(crate) fn isl_union_access_info_set_may_source(
        a: *mut isl_union_access_info,
        s: *mut isl_union_map,
    ) -> *mut isl_union_access_info;
    pub(crate) fn isl_union_access_info_set_schedule_map(
        a: *mut isl_union_access_info,
        s: *mut isl_union_map,
    ) -> *mut isl_union_access_info;
    pub(crate) fn isl_union_access_info_set_schedule(
        a: *mut isl_union_access_info,
        s: *mut isl_schedule,
    ) -> *mut isl_union_access_info;
    pub(crate) fn isl_schedule_sequence(
        a: *mut isl_schedule,
        b: *mut isl_schedule,
    ) -> *mut isl_schedule;
    pub(crate) fn isl_union_access_info_compute_flow(
        a: *mut isl_union_access_info,
    ) -> *mut isl_union_flow;
    pub(crate) fn isl_union_flow_get_must_dependence(f: *mut isl_union_flow) -> *mut isl_union_map;
    pub(crate) fn isl_union_flow_get_may_dependence(f: *mut isl_union_flow) -> *mut isl_union_map;
    pub(crate) fn isl_union_flow_get_must_no_source(
        flow: *mut isl_union_flow,
    ) -> *mut isl_union_map;
    pub(crate) fn isl_union_flow_free(f: *mut isl_union_flow) -> *mut isl_union_flow;

    // scheduling
    pub(crate) fn isl_schedule_constraints_on_domain(
        d: *mut isl_union_set,
    ) -> *mut isl_schedule_constraints;
    pub(crate) fn isl_schedule_constraints_set_context(
        sc: *mut isl_schedule_constraints,
        s: *mut isl_set,
    ) -> *mut isl_schedule_constraints;
    pub(crate) fn isl_schedule_constraints_set_validity(
        sc: *mut isl_schedule_constraints,
        m: *mut isl_union_map,
    ) -> *mut isl_schedule_constraints;
    pub(crate) fn isl_schedule_constraints_set_coincidence(
        sc: *mut isl_schedule_constraints,
        m: *mut isl_union_map,
    ) -> *mut isl_schedule_constraints;
    pub(crate) fn isl_schedule_constraints_set_proximity(
        sc: *mut isl_schedule_constraints,
        m: *mut isl_union_map,
    ) -> *mut isl_schedule_constraints;
    pub(crate) fn isl_schedule_constraints_set_conditional_validity(
        sc: *mut isl_schedule_constraints,
        condition: *mut isl_union_map,
        validity: *mut isl_union_map,
    ) -> *mut isl_schedule_constraints;
    pub(crate) fn isl_schedule_constraints_compute_schedule(
        sc: *mut isl_schedule_constraints,
    ) -> *mut isl_schedule;
    pub(crate) fn isl_schedule_constraints_free(
        sc: *mut isl_schedule_constraints,
    ) -> *mut isl_schedule_constraints;

    pub(crate) fn isl_schedule_copy(s: *mut isl_schedule) -> *mut isl_schedule;
    pub(crate) fn isl_schedule_free(s: *mut isl_schedule) -> *mut isl_schedule;
    pub(crate) fn isl_schedule_to_str(s: *mut isl_schedule) -> *mut c_char;
    pub(crate) fn isl_schedule_get_root(s: *mut isl_schedule) -> *mut isl_schedule_node;
    pub(crate) fn isl_schedule_get_map(s: *mut isl_schedule) -> *mut isl_union_map;
    pub(crate) fn isl_schedule_from_domain(d: *mut isl_union_set) -> *mut isl_schedule;
    pub(crate) fn isl_schedule_insert_partial_schedule(
        s: *mut isl_schedule,
        p: *mut isl_multi_union_pw_aff,
    ) -> *mut isl_schedule;

    pub(crate) fn isl_schedule_node_copy(n: *mut isl_schedule_node) -> *mut isl_schedule_node;
    pub(crate) fn isl_schedule_node_free(n: *mut isl_schedule_node) -> *mut isl_schedule_node;
    pub(crate) fn isl_schedule_node_to_str(n: *mut isl_schedule_node) -> *mut c_char;
    pub(crate) fn isl_schedule_node_get_type(n: *mut isl_schedule_node) -> c_int;
    pub(crate) fn isl_schedule_node_n_children(n: *mut isl_schedule_node) -> c_int;
    pub(crate) fn isl_schedule_node_child(
        n: *mut isl_schedule_node,
        pos: c_int,
    ) -> *mut isl_schedule_node;
    pub(crate) fn isl_schedule_node_parent(n: *mut isl_schedule_node) -> *mut isl_schedule_node;
    pub(crate) fn isl_schedule_node_get_schedule(n: *mut isl_schedule_node) -> *mut isl_schedule;
    pub(crate) fn isl_schedule_node_band_n_member(n: *mut isl_schedule_node) -> c_int;
    pub(crate) fn isl_schedule_node_band_get_permutable(n: *mut isl_schedule_node) -> c_int;
    pub(crate) fn isl_schedule_node_band_set_permutable(
        n: *mut isl_schedule_node,
        p: c_int,
    ) -> *mut isl_schedule_node;
    pub(crate) fn isl_schedule_node_band_member_get_coincident(
        n: *mut isl_schedule_node,
        pos: c_int,
    ) -> c_int;
    pub(crate) fn isl_schedule_node_band_member_set_ast_loop_type(
        n: *mut isl_schedule_node,
        pos: c_int,
        t: c_int,
    ) -> *mut isl_schedule_node;
    pub(crate) fn isl_schedule_node_band_member_set_coincident(
        n: *mut isl_schedule_node,
        pos: c_int,
        c: c_int,
    ) -> *mut isl_schedule_node;
    pub(crate) fn isl_schedule_node_band_get_partial_schedule(
        n: *mut isl_schedule_node,
    ) -> *mut isl_multi_union_pw_aff;
    pub(crate) fn isl_schedule_node_band_get_space(n: *mut isl_schedule_node) -> *mut isl_space;
    pub(crate) fn isl_schedule_node_band_tile(
        n: *mut isl_schedule_node,
        sizes: *mut isl_multi_val,
    ) -> *mut isl_schedule_node;
    pub(crate) fn isl_schedule_node_delete(n: *mut isl_schedule_node) -> *mut isl_schedule_node;
    pub(crate) fn isl_schedule_node_band_split(
        n: *mut isl_schedule_node,
        pos: c_int,
    ) -> *mut isl_schedule_node;
    pub(crate) fn isl_schedule_node_filter_get_filter(
        n: *mut isl_schedule_node,
    ) -> *mut isl_union_set;
    pub(crate) fn isl_union_map_from_union_pw_aff(u: *mut isl_union_pw_aff) -> *mut isl_union_map;
    pub(crate) fn isl_schedule_node_insert_partial_schedule(
        n: *mut isl_schedule_node,
        s: *mut isl_multi_union_pw_aff,
    ) -> *mut isl_schedule_node;

    pub(crate) fn isl_multi_union_pw_aff_copy(
        m: *mut isl_multi_union_pw_aff,
    ) -> *mut isl_multi_union_pw_aff;
    pub(crate) fn isl_multi_union_pw_aff_free(
        m: *mut isl_multi_union_pw_aff,
    ) -> *mut isl_multi_union_pw_aff;
    pub(crate) fn isl_multi_union_pw_aff_to_str(m: *mut isl_multi_union_pw_aff) -> *mut c_char;
    pub(crate) fn isl_multi_union_pw_aff_size(m: *mut isl_multi_union_pw_aff) -> c_int;
    pub(crate) fn isl_multi_union_pw_aff_get_union_pw_aff(
        m: *mut isl_multi_union_pw_aff,
        pos: c_int,
    ) -> *mut isl_union_pw_aff;
    pub(crate) fn isl_multi_union_pw_aff_set_union_pw_aff(
        m: *mut isl_multi_union_pw_aff,
        pos: c_int,
        u: *mut isl_union_pw_aff,
    ) -> *mut isl_multi_union_pw_aff;
    pub(crate) fn isl_multi_union_pw_aff_read_from_str(
        ctx: *mut isl_ctx,
        s: *const c_char,
    ) -> *mut isl_multi_union_pw_aff;
    pub(crate) fn isl_union_pw_aff_copy(u: *mut isl_union_pw_aff) -> *mut isl_union_pw_aff;
    pub(crate) fn isl_union_pw_aff_free(u: *mut isl_union_pw_aff) -> *mut isl_union_pw_aff;
    pub(crate) fn isl_union_pw_aff_add(
        a: *mut isl_union_pw_aff,
        b: *mut isl_union_pw_aff,
    ) -> *mut isl_union_pw_aff;
    pub(crate) fn isl_union_pw_aff_sub(
        a: *mut isl_union_pw_aff,
        b: *mut isl_union_pw_aff,
    ) -> *mut isl_union_pw_aff;
    pub(crate) fn isl_union_pw_aff_to_str(u: *mut isl_union_pw_aff) -> *mut c_char;
    pub(crate) fn isl_union_pw_aff_foreach_pw_aff(
        u: *mut isl_union_pw_aff,
        f: unsafe extern "C" fn(pa: *mut isl_pw_aff, user: *mut c_void) -> c_int,
        user: *mut c_void,
    ) -> c_int;
    pub(crate) fn isl_pw_aff_free(pa: *mut isl_pw_aff) -> *mut isl_pw_aff;
    pub(crate) fn isl_pw_aff_involves_nan(pa: *mut isl_pw_aff) -> c_int;
    pub(crate) fn isl_set_dim_max(s: *mut isl_set, pos: c_int) -> *mut isl_pw_aff;
    pub(crate) fn isl_set_dim_min(s: *mut isl_set, pos: c_int) -> *mut isl_pw_aff;
    pub(crate) fn isl_pw_aff_foreach_piece(
        pa: *mut isl_pw_aff,
        f: unsafe extern "C" fn(set: *mut isl_set, aff: *mut isl_aff, user: *mut c_void) -> c_int,
        user: *mut c_void,
    ) -> c_int;
    pub(crate) fn isl_aff_free(aff: *mut isl_aff) -> *mut isl_aff;
    pub(crate) fn isl_aff_neg(aff: *mut isl_aff) -> *mut isl_aff;
    pub(crate) fn isl_aff_get_constant_val(aff: *mut isl_aff) -> *mut isl_val;
    pub(crate) fn isl_aff_set_constant_val(aff: *mut isl_aff, v: *mut isl_val) -> *mut isl_aff;
    pub(crate) fn isl_pw_aff_alloc(set: *mut isl_set, aff: *mut isl_aff) -> *mut isl_pw_aff;
    pub(crate) fn isl_union_pw_aff_from_pw_aff(pa: *mut isl_pw_aff) -> *mut isl_union_pw_aff;
    pub(crate) fn isl_union_pw_aff_union_add(
        a: *mut isl_union_pw_aff,
        b: *mut isl_union_pw_aff,
    ) -> *mut isl_union_pw_aff;
    pub(crate) fn isl_aff_dim(aff: *mut isl_aff, t: c_int) -> c_int;
    pub(crate) fn isl_aff_get_coefficient_val(
        aff: *mut isl_aff,
        t: c_int,
        pos: c_int,
    ) -> *mut isl_val;
    pub(crate) fn isl_val_get_d(v: *mut isl_val) -> f64;

    pub(crate) fn isl_space_free(s: *mut isl_space) -> *mut isl_space;

    // AST generation
    pub(crate) fn isl_ast_build_from_context(s: *mut isl_set) -> *mut isl_ast_build;
    pub(crate) fn isl_ast_build_free(b: *mut isl_ast_build) -> *mut isl_ast_build;
    pub(crate) fn isl_ast_build_set_before_each_for(
        b: *mut isl_ast_build,
        f: Option<BeforeEachFor>,
        user: *mut c_void,
    ) -> *mut isl_ast_build;
    pub(crate) fn isl_ast_build_get_schedule(b: *mut isl_ast_build) -> *mut isl_union_map;
    pub(crate) fn isl_ast_build_expr_from_set(
        b: *mut isl_ast_build,
        s: *mut isl_set,
    ) -> *mut isl_ast_expr;
    pub(crate) fn isl_ast_build_expr_from_pw_aff(
        b: *mut isl_ast_build,
        pa: *mut isl_pw_aff,
    ) -> *mut isl_ast_expr;
    pub(crate) fn isl_ast_build_node_from_schedule(
        b: *mut isl_ast_build,
        s: *mut isl_schedule,
    ) -> *mut isl_ast_node;

    pub(crate) fn isl_ast_node_free(n: *mut isl_ast_node) -> *mut isl_ast_node;
    pub(crate) fn isl_ast_node_get_type(n: *mut isl_ast_node) -> c_int;
    pub(crate) fn isl_ast_node_get_annotation(n: *mut isl_ast_node) -> *mut isl_id;
    pub(crate) fn isl_ast_node_for_get_iterator(n: *mut isl_ast_node) -> *mut isl_ast_expr;
    pub(crate) fn isl_ast_node_for_get_init(n: *mut isl_ast_node) -> *mut isl_ast_expr;
    pub(crate) fn isl_ast_node_for_get_cond(n: *mut isl_ast_node) -> *mut isl_ast_expr;
    pub(crate) fn isl_ast_node_for_get_inc(n: *mut isl_ast_node) -> *mut isl_ast_expr;
    pub(crate) fn isl_ast_node_for_get_body(n: *mut isl_ast_node) -> *mut isl_ast_node;
    pub(crate) fn isl_ast_node_if_get_cond(n: *mut isl_ast_node) -> *mut isl_ast_expr;
    pub(crate) fn isl_ast_node_if_get_then_node(n: *mut isl_ast_node) -> *mut isl_ast_node;
    pub(crate) fn isl_ast_node_if_has_else_node(n: *mut isl_ast_node) -> c_int;
    pub(crate) fn isl_ast_node_if_get_else_node(n: *mut isl_ast_node) -> *mut isl_ast_node;
    pub(crate) fn isl_ast_node_block_get_children(n: *mut isl_ast_node) -> *mut isl_ast_node_list;
    pub(crate) fn isl_ast_node_mark_get_id(n: *mut isl_ast_node) -> *mut isl_id;
    pub(crate) fn isl_ast_node_mark_get_node(n: *mut isl_ast_node) -> *mut isl_ast_node;
    pub(crate) fn isl_ast_node_user_get_expr(n: *mut isl_ast_node) -> *mut isl_ast_expr;
    pub(crate) fn isl_ast_node_list_size(l: *mut isl_ast_node_list) -> c_int;
    pub(crate) fn isl_ast_node_list_get_at(
        l: *mut isl_ast_node_list,
        i: c_int,
    ) -> *mut isl_ast_node;
    pub(crate) fn isl_ast_node_list_free(l: *mut isl_ast_node_list) -> *mut isl_ast_node_list;

    pub(crate) fn isl_ast_expr_free(e: *mut isl_ast_expr) -> *mut isl_ast_expr;
    pub(crate) fn isl_ast_expr_get_type(e: *mut isl_ast_expr) -> c_int;
    pub(crate) fn isl_ast_expr_get_val(e: *mut isl_ast_expr) -> *mut isl_val;
    pub(crate) fn isl_ast_expr_get_id(e: *mut isl_ast_expr) -> *mut isl_id;
    pub(crate) fn isl_ast_expr_op_get_type(e: *mut isl_ast_expr) -> c_int;
    pub(crate) fn isl_ast_expr_op_get_n_arg(e: *mut isl_ast_expr) -> c_int;
    pub(crate) fn isl_ast_expr_op_get_arg(e: *mut isl_ast_expr, pos: c_int) -> *mut isl_ast_expr;
}
