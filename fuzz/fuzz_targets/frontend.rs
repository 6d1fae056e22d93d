//! The front end on arbitrary text: it never panics, every error carries a
//! position inside the file, and whatever parses regenerates to text that
//! parses again to the same SCoPs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use polytune::frontend::{self, FrontendError, Options};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines = text.lines().count().max(1);
    match frontend::parse_source(Path::new("fuzz.c"), text.to_string(), &Options::default()) {
        Ok(src) => {
            let again =
                frontend::parse_source(Path::new("fuzz.c"), src.regenerated(), &Options::default())
                    .expect("regenerated text must parse");
            assert_eq!(again.scops.len(), src.scops.len());
            for (a, b) in src.scops.iter().zip(&again.scops) {
                assert_eq!(a.to_c(""), b.to_c(""), "regeneration changed a SCoP");
            }
        }
        Err(FrontendError::Source(d)) => {
            assert!(
                d.line >= 1 && d.line <= lines + 1,
                "line {} of {lines}",
                d.line
            );
            assert!(d.column >= 1 && !d.message.is_empty());
        }
        Err(e) => panic!("unexpected error class: {e}"),
    }
});
