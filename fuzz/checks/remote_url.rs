//! Fuzzes remote-URL normalisation: it must never panic, and every key it produces must name
//! one safe directory strictly inside the memory root, on both platforms.

use std::path::Path;

use memory_keys::{
    Platform, ProjectIdentity, ProjectKind, dir_name, is_reserved_windows_name,
    normalize_remote_url, project_dir,
};

fn check_name(name: &str, platform: Platform) {
    assert!(!name.is_empty());
    assert!(name != "." && name != "..");
    assert!(!name.contains('/') && !name.contains('\0'));
    match platform {
        Platform::Posix => assert!(name.len() <= 120),
        Platform::Windows => {
            assert!(name.len() <= 123);
            assert!(!name.contains('\\'));
            assert!(!name.ends_with(['.', ' ']));
            assert!(!is_reserved_windows_name(name));
        }
    }
}

/// The fuzz target's checks; also run over the kept corpus by the workspace tests.
pub fn check(data: &[u8]) {
    let Ok(url) = std::str::from_utf8(data) else {
        return;
    };
    for (platform, root) in [(Platform::Posix, "/mem"), (Platform::Windows, r"C:\mem")] {
        let Some(key) = normalize_remote_url(url, platform) else {
            continue;
        };
        assert!(key.contains('/'), "key {key:?} has no host/path separator");
        let name = dir_name(&key, platform);
        check_name(&name, platform);
        assert_eq!(dir_name(&key, platform), name, "not deterministic");
        let identity = ProjectIdentity {
            kind: ProjectKind::Git,
            key,
        };
        let dir = project_dir(Path::new(root), &identity, platform)
            .expect("a derived name must stay inside the root");
        assert_eq!(dir.name, name);
    }
}
