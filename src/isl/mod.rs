//! The one module that touches isl.
//!
//! isl-rs (DESIGN.md §6) marks every type `Send + Sync` although isl is not
//! thread-safe, does not tie objects to their context's lifetime, leaks and
//! does not NULL-check strings. This module therefore declares the isl
//! functions it needs itself (linking against isl-rs's bundled isl) and
//! hands out wrappers that are `!Send`, borrow their [`Ctx`], check every
//! NULL, free every string, and turn isl's error state into [`IslError`].

mod ffi;

use std::ffi::{CStr, CString};
use std::fmt;
use std::marker::PhantomData;
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

impl Ctx {
    /// A fresh context whose errors are reported as values, never printed
    /// and never fatal.
    pub fn new() -> Ctx {
        // SAFETY: isl_ctx_alloc has no preconditions.
        let raw = unsafe { ffi::isl_ctx_alloc() };
        let raw = NonNull::new(raw).expect("isl_ctx_alloc returned NULL (out of memory)");
        // SAFETY: raw is a live context.
        unsafe { ffi::isl_options_set_on_error(raw.as_ptr(), ffi::ISL_ON_ERROR_CONTINUE) };
        Ctx {
            raw,
            _not_send: PhantomData,
        }
    }

    fn ptr(&self) -> *mut ffi::isl_ctx {
        self.raw.as_ptr()
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
    ($(#[$doc:meta])* $name:ident, $raw:ty, $read:ident, $copy:ident, $free:ident, $to_str:ident, $equal:ident, $what:literal) => {
        $(#[$doc])*
        pub struct $name<'c> {
            raw: NonNull<$raw>,
            ctx: &'c Ctx,
        }

        impl<'c> $name<'c> {
            /// Parses isl's textual notation.
            pub fn parse(ctx: &'c Ctx, text: &str) -> Result<Self, IslError> {
                let c = ctx.c_string(text)?;
                // SAFETY: the context is live and `c` is NUL-terminated.
                let raw = unsafe { ffi::$read(ctx.ptr(), c.as_ptr()) };
                match NonNull::new(raw) {
                    Some(raw) => Ok($name { raw, ctx }),
                    None => Err(ctx.take_error(concat!("cannot read ", $what))),
                }
            }

            /// Whether both denote the same set of integer points.
            pub fn is_equal(&self, other: &Self) -> Result<bool, IslError> {
                // SAFETY: both objects are live; isl only reads them.
                let r = unsafe { ffi::$equal(self.raw.as_ptr(), other.raw.as_ptr()) };
                if r < 0 {
                    Err(self.ctx.take_error(concat!("comparing ", $what)))
                } else {
                    Ok(r == 1)
                }
            }
        }

        impl Clone for $name<'_> {
            fn clone(&self) -> Self {
                // SAFETY: the object is live; copy only bumps a refcount.
                let raw = unsafe { ffi::$copy(self.raw.as_ptr()) };
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

isl_object!(
    /// A union of integer sets (statement domains).
    UnionSet,
    ffi::isl_union_set,
    isl_union_set_read_from_str,
    isl_union_set_copy,
    isl_union_set_free,
    isl_union_set_to_str,
    isl_union_set_is_equal,
    "union set"
);

isl_object!(
    /// A union of integer relations (accesses, schedules, dependences).
    UnionMap,
    ffi::isl_union_map,
    isl_union_map_read_from_str,
    isl_union_map_copy,
    isl_union_map_free,
    isl_union_map_to_str,
    isl_union_map_is_equal,
    "union map"
);

impl UnionSet<'_> {
    /// Whether the set has no integer point.
    pub fn is_empty(&self) -> Result<bool, IslError> {
        // SAFETY: the object is live.
        let r = unsafe { ffi::isl_union_set_is_empty(self.raw.as_ptr()) };
        if r < 0 {
            Err(self.ctx.take_error("emptiness test"))
        } else {
            Ok(r == 1)
        }
    }
}

/// Parses `text` as a union set and prints it back in isl's normal form.
pub fn normalize_set(ctx: &Ctx, text: &str) -> Result<String, IslError> {
    Ok(UnionSet::parse(ctx, text)?.to_string())
}

/// Parses `text` as a union map and prints it back in isl's normal form.
pub fn normalize_map(ctx: &Ctx, text: &str) -> Result<String, IslError> {
    Ok(UnionMap::parse(ctx, text)?.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn syntax_errors_are_values_not_crashes() {
        let ctx = Ctx::new();
        let e = UnionSet::parse(&ctx, "{ S0[i] : i >= }").unwrap_err();
        assert!(e.message.contains("cannot read union set"), "{e}");
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
