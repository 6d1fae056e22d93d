//! Raw declarations of the isl functions polytune calls. They link against
//! the isl that isl-rs builds and bundles; nothing outside `crate::isl`
//! sees them.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

#[repr(C)]
pub struct isl_ctx {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct isl_union_set {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct isl_union_map {
    _opaque: [u8; 0],
}

/// `ISL_ON_ERROR_CONTINUE`: record the error and return NULL, print nothing.
pub const ISL_ON_ERROR_CONTINUE: c_int = 1;

unsafe extern "C" {
    pub fn isl_ctx_alloc() -> *mut isl_ctx;
    pub fn isl_ctx_free(ctx: *mut isl_ctx);
    pub fn isl_ctx_last_error_msg(ctx: *mut isl_ctx) -> *const c_char;
    pub fn isl_ctx_reset_error(ctx: *mut isl_ctx);
    pub fn isl_options_set_on_error(ctx: *mut isl_ctx, val: c_int) -> c_int;

    pub fn isl_union_set_read_from_str(ctx: *mut isl_ctx, s: *const c_char) -> *mut isl_union_set;
    pub fn isl_union_set_copy(s: *mut isl_union_set) -> *mut isl_union_set;
    pub fn isl_union_set_free(s: *mut isl_union_set) -> *mut isl_union_set;
    pub fn isl_union_set_to_str(s: *mut isl_union_set) -> *mut c_char;
    pub fn isl_union_set_is_empty(s: *mut isl_union_set) -> c_int;
    pub fn isl_union_set_is_equal(a: *mut isl_union_set, b: *mut isl_union_set) -> c_int;

    pub fn isl_union_map_read_from_str(ctx: *mut isl_ctx, s: *const c_char) -> *mut isl_union_map;
    pub fn isl_union_map_copy(m: *mut isl_union_map) -> *mut isl_union_map;
    pub fn isl_union_map_free(m: *mut isl_union_map) -> *mut isl_union_map;
    pub fn isl_union_map_to_str(m: *mut isl_union_map) -> *mut c_char;
    pub fn isl_union_map_is_equal(a: *mut isl_union_map, b: *mut isl_union_map) -> c_int;

    pub fn free(p: *mut c_void);
}
