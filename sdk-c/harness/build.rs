//! Writes the C header of the harness (`wasmkeep_harness.h`) into OUT_DIR with
//! cbindgen. A unit test compares it with the committed
//! `sdk-c/include/wasmkeep_harness.h`; `sdk-c/scripts/gen.sh` copies it there
//! (it sets WASMKEEP_HARNESS_HEADER to the committed path).

fn main() {
    let crate_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let config = cbindgen::Config::from_file(format!("{crate_dir}/cbindgen.toml")).expect("reading cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen could not read the harness's extern \"C\" items");
    bindings.write_to_file(format!("{out_dir}/wasmkeep_harness.h"));
    println!("cargo::rerun-if-env-changed=WASMKEEP_HARNESS_HEADER");
    if let Ok(dest) = std::env::var("WASMKEEP_HARNESS_HEADER") {
        bindings.write_to_file(dest);
    }
    println!("cargo::rerun-if-changed=src");
    println!("cargo::rerun-if-changed=cbindgen.toml");
}
