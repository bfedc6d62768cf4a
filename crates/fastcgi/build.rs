//! Sets `cfg(php_fpm)` when Debian's PHP-FPM is installed, so the interop
//! test (tests/php_fpm.rs) runs where it can and is ignored, saying why,
//! where it cannot. Installing or removing packages touches /usr/sbin.

const PHP_FPM: &str = "/usr/sbin/php-fpm8.2";

fn main() {
    println!("cargo::rustc-check-cfg=cfg(php_fpm)");
    println!("cargo::rerun-if-changed=/usr/sbin");
    if std::path::Path::new(PHP_FPM).exists() {
        println!("cargo::rustc-cfg=php_fpm");
    }
}
