//! Property tests: every directory name is one safe path component inside the root, on both
//! platforms, for arbitrary keys; equivalent remote spellings share one key.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use memory_keys::{
    Platform, ProjectIdentity, ProjectKind, dir_name, is_reserved_windows_name,
    normalize_remote_url, project_dir,
};
use proptest::prelude::*;

/// Keys mixing separators, dots, reserved names, control characters, escapes, emoji and
/// combining sequences, long and short.
fn key_strategy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("/".to_owned()),
        Just("\\".to_owned()),
        Just(".".to_owned()),
        Just("..".to_owned()),
        Just(" ".to_owned()),
        Just("con".to_owned()),
        Just("NUL".to_owned()),
        Just("C:".to_owned()),
        Just("_".to_owned()),
        Just("\u{0}".to_owned()),
        Just("👨‍👩‍👧".to_owned()),
        Just("🇯🇵".to_owned()),
        Just("e\u{301}".to_owned()),
        "[a-zA-Z0-9<>:\"|?*\\-]{1,12}",
        "\\PC{1,8}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

fn assert_safe_component(name: &str, platform: Platform) {
    assert!(!name.is_empty());
    assert!(name != "." && name != "..", "{name:?}");
    assert!(!name.contains('/'), "{name:?}");
    assert!(!name.contains('\0'), "{name:?}");
    match platform {
        Platform::Posix => assert!(name.len() <= 120, "{} bytes", name.len()),
        Platform::Windows => {
            // The trailing escape and device prefix come after the 120-byte cut.
            assert!(name.len() <= 123, "{} bytes", name.len());
            assert!(!name.contains('\\'), "{name:?}");
            assert!(!name.ends_with(['.', ' ']), "{name:?}");
            assert!(!is_reserved_windows_name(name), "{name:?}");
        }
    }
    assert!(
        !name
            .chars()
            .any(|c| c <= '\u{1f}' || "<>:\"|?*".contains(c)),
        "{name:?} keeps a character that must be escaped"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn names_are_one_safe_component_inside_the_root(key in key_strategy(), git in any::<bool>()) {
        let kind = if git { ProjectKind::Git } else { ProjectKind::Local };
        let identity = ProjectIdentity { kind, key: key.clone() };
        for (platform, root) in [(Platform::Posix, "/mem"), (Platform::Windows, r"C:\mem")] {
            let name = dir_name(&key, platform);
            assert_safe_component(&name, platform);
            prop_assert_eq!(&dir_name(&key, platform), &name, "deterministic");
            let dir = project_dir(Path::new(root), &identity, platform).unwrap();
            prop_assert_eq!(&dir.name, &name);
            prop_assert!(memory_keys::is_strictly_inside(Path::new(root), &dir.path, platform));
            let sep = if platform == Platform::Posix { "/" } else { "\\" };
            let expected = format!("{root}{sep}{}{sep}{name}", kind.as_str());
            prop_assert_eq!(dir.path, Path::new(&expected));
        }
    }

    #[test]
    fn shortened_names_keep_a_prefix_and_the_key_hash(key in "[a-z/]{121,300}") {
        let name = dir_name(&key, Platform::Posix);
        let full: String = key
            .split('/')
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("__");
        if full.len() > 120 {
            prop_assert_eq!(name.len(), 110);
            prop_assert!(full.starts_with(&name[..100]));
            prop_assert_eq!(&name[100..102], "__");
            prop_assert!(name[102..].bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        } else {
            prop_assert_eq!(name, full);
        }
    }

    #[test]
    fn remote_keys_always_give_safe_names(url in "\\PC{0,80}") {
        for platform in [Platform::Posix, Platform::Windows] {
            if let Some(key) = normalize_remote_url(&url, platform) {
                prop_assert!(key.contains('/'));
                assert_safe_component(&dir_name(&key, platform), platform);
            }
        }
    }

    /// PM-12: https, scp (with and without user), ssh, git and git+ssh spellings of one
    /// repository give one key, whatever the host's case, port or credentials.
    #[test]
    fn equivalent_remote_spellings_share_a_key(
        host in "[a-z][a-z0-9-]{0,10}(\\.[a-z][a-z0-9]{0,6}){0,2}",
        path in prop::collection::vec("[A-Za-z0-9_-]{1,10}", 1..4),
        port in 1u16..65535,
    ) {
        // A label starting with `xn--` is punycode, which the WHATWG parser (like Node)
        // rejects unless it decodes: not a spelling of an ordinary host.
        prop_assume!(!host.split('.').any(|label| label.starts_with("xn--")));
        let path = path.join("/");
        let upper = host.to_uppercase();
        let expected = format!("{host}/{path}");
        for url in [
            format!("https://{host}/{path}.git"),
            format!("https://user:secret@{upper}:{port}/{path}"),
            format!("git@{upper}:{path}.git"),
            format!("{host}:/{path}/"),
            format!("ssh://git@{host}:{port}/{path}.git"),
            format!("git://{upper}/{path}.GIT"),
            format!("git+ssh://git@{host}/{path}.git"),
        ] {
            let key = normalize_remote_url(&url, Platform::Posix);
            prop_assert_eq!(key.as_deref(), Some(expected.as_str()), "{}", url);
        }
    }
}
