//! Detection (libclang, then the front end on the marked text) on arbitrary
//! text: never a panic, and the marked text is the input plus pragma lines
//! (and the line breaks that put a pragma on its own line when a region
//! starts or ends beside other code).
#![no_main]

use libfuzzer_sys::fuzz_target;
use polytune::frontend;
use polytune::frontend::detect::{DetectOptions, detect_file};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("fuzz.c");
    std::fs::write(&path, text).expect("write the input");
    if let Ok(d) = detect_file(&path, &DetectOptions::default()) {
        let squeeze = |t: &str| t.split_whitespace().collect::<String>();
        assert_eq!(
            squeeze(&frontend::strip_scop_pragmas(&d.marked)),
            squeeze(&d.text)
        );
    }
});
