//! Where the two scopes beyond the project live (issue 16): the `user` directory under the
//! memory root and the `team` directory inside the repository's work tree.
//!
//! Decision: the user scope is `<memory root>/user/`, a sibling of `git/` and `local/`. A
//! project directory is always `<memory root>/<git|local>/<name>` (PM-02): two levels deep,
//! under one of two fixed names. `user` is neither, so no project key, however chosen, can
//! name it, and no user-scope file can be inside a project directory (a test pins it).

use std::path::{Path, PathBuf};

use crate::env::GitEnv;
use crate::gitcmd;
use crate::identity::absolute;
use crate::native::{self, Repo};

/// The user scope's directory name under the memory root.
pub const USER_DIR_NAME: &str = "user";

/// The team scope's directory relative to the repository root (committed with the code).
pub const TEAM_DIR: [&str; 2] = [".pi", "memory"];

/// `<memory root>/user`: the memory shared by every project of this user.
///
/// ```
/// use std::path::Path;
/// assert_eq!(memory_keys::user_dir(Path::new("/m")), Path::new("/m/user"));
/// ```
pub fn user_dir(memory_root: &Path) -> PathBuf {
    memory_root.join(USER_DIR_NAME)
}

/// `<repository root>/.pi/memory`: the team memory of the work tree `cwd` is in, or `None`
/// outside a work tree (bare repositories and git directories included).
pub fn team_dir(cwd: &Path) -> Option<PathBuf> {
    repository_root(cwd, &GitEnv::from_process())
        .map(|top| TEAM_DIR.iter().fold(top, |p, c| p.join(c)))
}

/// The work-tree root of the repository containing `cwd` (what `git rev-parse
/// --show-toplevel` prints), read natively like [`crate::identify_with`] and asking git only
/// when the native reader cannot be sure. `None` outside a work tree or when git fails.
pub fn repository_root(cwd: &Path, env: &GitEnv) -> Option<PathBuf> {
    let cwd = absolute(cwd);
    match native::discover(&cwd, env) {
        Ok(Repo::WorkTree(tree)) => Some(tree.toplevel),
        Ok(Repo::Outside | Repo::NoWorkTree) => None,
        Err(native::Defer(_)) => gitcmd::toplevel(&cwd, env).map(PathBuf::from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProjectKind;

    #[test]
    fn the_user_directory_is_beside_the_project_kinds_never_inside_one() {
        let root = Path::new("/m");
        let user = user_dir(root);
        assert_eq!(user.parent(), Some(root));
        for kind in [ProjectKind::Git, ProjectKind::Local] {
            let kind_dir = root.join(kind.as_str());
            assert_ne!(user, kind_dir);
            assert!(!user.starts_with(&kind_dir), "{kind}");
        }
    }

    #[test]
    fn the_team_directory_is_at_the_work_tree_root() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("repo");
        std::fs::create_dir_all(top.join("src/deep")).unwrap();
        let git = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&top)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir.path())
            .status()
            .unwrap();
        assert!(git.success());
        let env = GitEnv::hermetic(dir.path(), &dir.path().join("gitconfig"));
        let root = repository_root(&top.join("src/deep"), &env).unwrap();
        assert_eq!(
            std::fs::canonicalize(&root).unwrap(),
            std::fs::canonicalize(&top).unwrap()
        );
        let outside = dir.path().join("plain");
        std::fs::create_dir_all(&outside).unwrap();
        assert_eq!(repository_root(&outside, &env), None);
    }
}
