// Links libzkpipe_c2 as `pkg-config --libs zkpipe_c2` says (PKG_CONFIG_PATH as usual; a zkpipe
// build tree's meson-uninstalled/ works too), with an rpath to its libdir. No crates needed.
use std::process::Command;

fn pkg_config(args: &[&str]) -> String {
    let out = Command::new("pkg-config")
        .args(args)
        .arg("zkpipe_c2")
        .output()
        .expect("supraseal-c2 (zkpipe): cannot run pkg-config");
    if !out.status.success() {
        panic!(
            "supraseal-c2 (zkpipe): pkg-config cannot find zkpipe_c2 (install zkpipe, or set PKG_CONFIG_PATH): {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8(out.stdout).expect("pkg-config output is not UTF-8")
}

fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    for flag in pkg_config(&["--libs"]).split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={}", dir);
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={}", lib);
        }
    }
}
