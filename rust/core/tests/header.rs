//! The committed C header must equal what cbindgen generates from the crate now.
//! `SLUICE_BLESS=1 cargo test --release -p sluice-core --test header` rewrites it.

use std::path::PathBuf;

#[test]
fn header_is_fresh() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen could not read the crate")
        .write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();
    let path = crate_dir.join("include/sluice.h");
    if std::env::var_os("SLUICE_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/sluice.h is stale: regenerate it with `SLUICE_BLESS=1 cargo test --release -p sluice-core --test header` \
         and regenerate the Java bindings (ffm-bindings/generate.sh)"
    );
}
