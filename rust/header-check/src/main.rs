//! `sluice-header-check [check|bless]`: generates the C header of sluice-core with cbindgen and
//! compares it with the committed `core/include/sluice.h` (check, the default) or rewrites it
//! (bless). Run by ci/test.sh; see rust/core/cbindgen.toml for the header's shape.
//!
//! The header also declares the test-only exports of rust/debug-exports, inside
//! `#if defined(SLUICE_DEBUG_EXPORTS)` (cbindgen.toml's `[defines]`): the production library
//! lacks them, the engine's tests load the library that has them.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "check".to_string());
    // `cargo run` sets CARGO_MANIFEST_DIR for the process: prefer it to the compile-time value,
    // which names whichever checkout first built this (shared) binary.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_string());
    let core = PathBuf::from(manifest_dir).join("../core");
    let config = match cbindgen::Config::from_file(core.join("cbindgen.toml")) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("header-check: cannot read cbindgen.toml: {e}");
            return ExitCode::from(2);
        }
    };
    let mut generated = Vec::new();
    let debug_exports = core.join("../debug-exports/src/lib.rs");
    match cbindgen::Builder::new().with_src(debug_exports).with_crate(&core).with_config(config).generate() {
        Ok(bindings) => bindings.write(&mut generated),
        Err(e) => {
            eprintln!("header-check: cbindgen could not read the crate: {e}");
            return ExitCode::from(2);
        }
    };
    let path = core.join("include/sluice.h");
    match mode.as_str() {
        "bless" => {
            std::fs::write(&path, &generated).expect("write sluice.h");
            println!("header-check: wrote {}", path.display());
            ExitCode::SUCCESS
        }
        "check" => {
            let committed = std::fs::read(&path).unwrap_or_default();
            if committed == generated {
                println!("header-check: rust/core/include/sluice.h is up to date");
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "header-check: rust/core/include/sluice.h is stale; regenerate it with \
                     `cargo run --release --manifest-path rust/header-check/Cargo.toml -- bless` \
                     and the Java bindings with ffm-bindings/generate.sh"
                );
                ExitCode::FAILURE
            }
        }
        other => {
            eprintln!("usage: sluice-header-check [check|bless] (got {other})");
            ExitCode::from(2)
        }
    }
}
