//! The engine on whatever the front end accepts: the first two bytes pick
//! a configuration of the space, the rest is C text. Building the model,
//! scheduling and generating code may refuse a SCoP, but never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use polytune::config::Config;
use polytune::engine::pipeline;
use polytune::frontend::{self, Options};
use std::path::Path;
use std::sync::OnceLock;

fn configs() -> &'static [Config] {
    static ALL: OnceLock<Vec<Config>> = OnceLock::new();
    ALL.get_or_init(Config::all)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let pick = u16::from_le_bytes([data[0], data[1]]) as usize;
    let config = &configs()[pick % configs().len()];
    let Ok(text) = std::str::from_utf8(&data[2..]) else {
        return;
    };
    let Ok(src) =
        frontend::parse_source(Path::new("fuzz.c"), text.to_string(), &Options::default())
    else {
        return;
    };
    // Bound the work per input: the engine's cost grows quickly with the
    // number of statements and the depth, which the corpus seeds cover.
    if src.scops.iter().map(|s| s.statements.len()).sum::<usize>() > 12 {
        return;
    }
    let _ = pipeline::optimize(&src, config, None);
});
