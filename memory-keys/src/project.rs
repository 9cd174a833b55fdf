//! Identity + memory root -> the project's memory directory (PM-02, PM-11).

use std::path::{Path, PathBuf};

use crate::identity::{ProjectIdentity, absolute, identify};
use crate::{KeysError, Platform, ProjectKind, dir_name, nodepath};

/// A project's memory directory: `<memory root>/<kind>/<name>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectDir {
    /// `git` or `local`.
    pub kind: ProjectKind,
    /// The project key the name was derived from.
    pub key: String,
    /// The directory name (one path component).
    pub name: String,
    /// The absolute, lexically normalised directory path.
    pub path: PathBuf,
}

/// Joins `memory_root`, the kind and the derived name, and checks that the result is strictly
/// inside the root (PM-11, fail closed). A relative root is resolved against the process cwd
/// first, like the original resolves `memoryDir`.
///
/// ```
/// use std::path::Path;
/// use memory_keys::{project_dir, Platform, ProjectIdentity, ProjectKind};
/// let id = ProjectIdentity { kind: ProjectKind::Git, key: "github.com/o/r".into() };
/// let dir = project_dir(Path::new("/mem"), &id, Platform::Posix).unwrap();
/// assert_eq!(dir.path, Path::new("/mem/git/github.com__o__r"));
/// ```
pub fn project_dir(
    memory_root: &Path,
    identity: &ProjectIdentity,
    platform: Platform,
) -> Result<ProjectDir, KeysError> {
    let name = dir_name(&identity.key, platform);
    let root_bytes = nodepath::path_bytes(memory_root);
    let cwd = if nodepath::is_absolute(&root_bytes, platform) {
        Vec::new()
    } else {
        let cwd = std::env::current_dir().map_err(|source| KeysError::CurrentDir {
            memory_dir: memory_root.to_path_buf(),
            source,
        })?;
        nodepath::path_bytes(&cwd).into_owned()
    };
    let root = nodepath::resolve(&cwd, &root_bytes, platform);
    let joined = nodepath::join(
        &[&root, identity.kind.as_str().as_bytes(), name.as_bytes()],
        platform,
    );
    if !nodepath::is_strictly_inside(&root, &joined, platform) {
        return Err(KeysError::Escapes {
            memory_dir: memory_root.to_path_buf(),
            kind: identity.kind,
            name,
        });
    }
    Ok(ProjectDir {
        kind: identity.kind,
        key: identity.key.clone(),
        name,
        path: nodepath::path_from(joined),
    })
}

/// PM-11's check on its own: whether `candidate` is strictly inside `root` (Windows:
/// case-insensitively), judged like the original on Node's `path.relative(root, candidate)`.
///
/// ```
/// use std::path::Path;
/// use memory_keys::{is_strictly_inside, Platform};
/// assert!(is_strictly_inside(Path::new("/mem"), Path::new("/mem/git/x"), Platform::Posix));
/// assert!(!is_strictly_inside(Path::new("/mem"), Path::new("/mem/../etc"), Platform::Posix));
/// assert!(is_strictly_inside(Path::new(r"C:\mem"), Path::new(r"C:\MEM\local\x"), Platform::Windows));
/// ```
pub fn is_strictly_inside(root: &Path, candidate: &Path, platform: Platform) -> bool {
    nodepath::is_strictly_inside(
        &nodepath::path_bytes(root),
        &nodepath::path_bytes(candidate),
        platform,
    )
}

/// [`identify`] + [`project_dir`] for the platform this runs on.
pub fn resolve(cwd: &Path, memory_root: &Path) -> Result<ProjectDir, KeysError> {
    let identity = identify(&absolute(cwd));
    project_dir(memory_root, &identity, Platform::current())
}
