//! What this binary is, for installers and for the pi extension: its version text, the npm
//! platform package that ships it, and the hint for reinstalling matching versions.
//!
//! pimem is published on npm as one pi package, [`MAIN_PACKAGE`] (the extension, `tool.json`,
//! the protocol types), whose `optionalDependencies` name one binary package per platform,
//! `@pimem/<key>` with the keys of [`PLATFORM_KEYS`]; npm installs only the one whose `os` /
//! `cpu` / `libc` match (README.md, "Install"). The same keys appear in `package.json`, in the
//! extension's lookup (`extension/index.ts`) and in `cargo xtask dist`; a tidy test keeps the
//! four lists equal.

use crate::serve::PROTOCOL;

/// The npm scope of every pimem package.
pub const NPM_SCOPE: &str = "@pimem";

/// The pi package users install: `pi install npm:@pimem/pi`.
pub const MAIN_PACKAGE: &str = "@pimem/pi";

/// The platform keys, one npm package `@pimem/<key>` each: `<os>-<cpu>[-<libc>]` in npm's
/// names (`process.platform`, `process.arch`, `gnu`/`musl`).
pub const PLATFORM_KEYS: &[&str] = &[
    "linux-x64-gnu",
    "linux-x64-musl",
    "linux-arm64-gnu",
    "linux-arm64-musl",
    "darwin-x64",
    "darwin-arm64",
];

/// This build's platform key (one of [`PLATFORM_KEYS`]), or `None` for a platform no package
/// is published for (a source build elsewhere).
///
/// Decision: no Windows package. memory-lock and memory-core are Unix-only (file modes, inode
/// identity, `O_NOFOLLOW`; memory-lock's Limitations), so pimem does not build for Windows;
/// there the extension says to run pi under WSL, where the Linux package installs.
pub const fn platform_key() -> Option<&'static str> {
    if cfg!(all(
        target_os = "linux",
        target_arch = "x86_64",
        target_env = "gnu"
    )) {
        Some("linux-x64-gnu")
    } else if cfg!(all(
        target_os = "linux",
        target_arch = "x86_64",
        target_env = "musl"
    )) {
        Some("linux-x64-musl")
    } else if cfg!(all(
        target_os = "linux",
        target_arch = "aarch64",
        target_env = "gnu"
    )) {
        Some("linux-arm64-gnu")
    } else if cfg!(all(
        target_os = "linux",
        target_arch = "aarch64",
        target_env = "musl"
    )) {
        Some("linux-arm64-musl")
    } else if cfg!(all(target_os = "macos", target_arch = "x86_64")) {
        Some("darwin-x64")
    } else if cfg!(all(target_os = "macos", target_arch = "aarch64")) {
        Some("darwin-arm64")
    } else {
        None
    }
}

/// The npm package that ships this build (`@pimem/linux-x64-gnu`), when there is one.
pub fn platform_package() -> Option<String> {
    platform_key().map(|key| format!("{NPM_SCOPE}/{key}"))
}

/// What `pimem --version` prints after `pimem `: the version, the sidecar protocol and the
/// platform, e.g. `0.1.0 (protocol 1, linux-x64-gnu)`.
pub fn version_text() -> String {
    let platform = match platform_key() {
        Some(key) => key.to_owned(),
        None => format!(
            "{}-{} (no npm package)",
            std::env::consts::OS,
            std::env::consts::ARCH
        ),
    };
    format!(
        "{} (protocol {PROTOCOL}, {platform})",
        env!("CARGO_PKG_VERSION")
    )
}

/// How to get an extension and a binary of one version: the npm command for `version`
/// (which brings this platform's package at that version), or a checkout's install.
pub fn reinstall_hint(version: &str) -> String {
    let npm = match platform_package() {
        Some(package) => format!(
            "`pi install npm:{MAIN_PACKAGE}@{version}` installs the extension with {package}@{version}"
        ),
        None => format!("`pi install npm:{MAIN_PACKAGE}@{version}`"),
    };
    format!("{npm}; from a checkout, `cargo xtask install` builds and installs both")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_build_has_a_key_from_the_list_and_says_so_in_its_version() {
        // The machines that build and test pimem are all packaged platforms.
        let key = platform_key().expect("a packaged platform");
        assert!(PLATFORM_KEYS.contains(&key));
        assert_eq!(
            platform_package().as_deref(),
            Some(&*format!("@pimem/{key}"))
        );
        assert_eq!(
            version_text(),
            format!("{} (protocol 1, {key})", env!("CARGO_PKG_VERSION"))
        );
    }

    #[test]
    fn the_hint_names_the_main_package_the_platform_package_and_the_version() {
        let hint = reinstall_hint("9.9.9");
        assert!(hint.contains("`pi install npm:@pimem/pi@9.9.9`"), "{hint}");
        let package = platform_package().expect("a packaged platform");
        assert!(hint.contains(&format!("{package}@9.9.9")), "{hint}");
        assert!(hint.contains("cargo xtask install"), "{hint}");
    }
}
