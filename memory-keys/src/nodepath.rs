//! Lexical path arithmetic of Node's `path.posix` / `path.win32` (`resolve`, `join`,
//! `relative`), selected by a [`Platform`] value so the Windows rules run on Linux too.
//!
//! Paths are handled as bytes: every separator is ASCII, so splitting never breaks a
//! multi-byte character, and on Unix non-UTF-8 paths survive unchanged. Nothing here touches
//! the file system; symlinks are not resolved (like Node).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::Platform;

/// The bytes of a path (exact on Unix, UTF-8 with replacement elsewhere).
pub(crate) fn path_bytes(path: &Path) -> Cow<'_, [u8]> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Cow::Borrowed(path.as_os_str().as_bytes())
    }
    #[cfg(not(unix))]
    {
        match path.to_string_lossy() {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        }
    }
}

/// The path made of `bytes` (the inverse of [`path_bytes`]).
pub(crate) fn path_from(bytes: Vec<u8>) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        PathBuf::from(std::ffi::OsString::from_vec(bytes))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(&bytes).into_owned())
    }
}

fn is_sep(platform: Platform, b: u8) -> bool {
    b == b'/' || (platform == Platform::Windows && b == b'\\')
}

fn sep(platform: Platform) -> u8 {
    match platform {
        Platform::Posix => b'/',
        Platform::Windows => b'\\',
    }
}

/// Node's `normalizeString`: drops empty and `.` segments and folds `..` (kept when the path
/// is relative and nothing is left to fold).
fn normalize_segments(path: &[u8], allow_above_root: bool, platform: Platform) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = Vec::new();
    for segment in path.split(|&b| is_sep(platform, b)) {
        match segment {
            b"" | b"." => {}
            b".." => {
                if out.last().is_some_and(|last| *last != b"..") {
                    out.pop();
                } else if allow_above_root {
                    out.push(b"..");
                }
            }
            _ => out.push(segment),
        }
    }
    out
}

fn join_segments(segments: &[&[u8]], platform: Platform) -> Vec<u8> {
    segments.join(&sep(platform))
}

/// Root of a Windows path: `(device, is_absolute, root_end)` as Node's win32 parser finds
/// it (`C:`, `C:\`, `\`, `\\server\share`).
fn win32_root(path: &[u8]) -> (Vec<u8>, bool, usize) {
    let sep = |b: u8| is_sep(Platform::Windows, b);
    let len = path.len();
    if len == 0 {
        return (Vec::new(), false, 0);
    }
    if sep(path[0]) {
        if len == 1 || !sep(path[1]) {
            return (Vec::new(), true, 1);
        }
        // Two separators: a UNC root `\\server\share` when both parts are present.
        let mut j = 2;
        let mut last = j;
        while j < len && !sep(path[j]) {
            j += 1;
        }
        if j < len && j != last {
            let server = &path[last..j];
            last = j;
            while j < len && sep(path[j]) {
                j += 1;
            }
            if j < len && j != last {
                last = j;
                while j < len && !sep(path[j]) {
                    j += 1;
                }
                let mut device = b"\\\\".to_vec();
                device.extend_from_slice(server);
                device.push(b'\\');
                device.extend_from_slice(&path[last..j]);
                return (device, true, j);
            }
        }
        return (Vec::new(), true, 0);
    }
    if len >= 2 && path[0].is_ascii_alphabetic() && path[1] == b':' {
        if len > 2 && sep(path[2]) {
            return (path[..2].to_vec(), true, 3);
        }
        return (path[..2].to_vec(), false, 2);
    }
    (Vec::new(), false, 0)
}

/// Whether `path` is absolute for `platform` (Node's `path.isAbsolute`).
pub(crate) fn is_absolute(path: &[u8], platform: Platform) -> bool {
    match platform {
        Platform::Posix => path.first() == Some(&b'/'),
        Platform::Windows => {
            path.first().is_some_and(|&b| is_sep(platform, b))
                || (path.len() > 2
                    && path[0].is_ascii_alphabetic()
                    && path[1] == b':'
                    && is_sep(platform, path[2]))
        }
    }
}

/// Node's `path.resolve(path)` with `cwd` standing in for `process.cwd()`: the absolute,
/// lexically normalised form, without a trailing separator.
pub(crate) fn resolve(cwd: &[u8], path: &[u8], platform: Platform) -> Vec<u8> {
    match platform {
        Platform::Posix => {
            let mut full = Vec::with_capacity(cwd.len() + path.len() + 1);
            if !is_absolute(path, platform) {
                full.extend_from_slice(cwd);
                full.push(b'/');
            }
            full.extend_from_slice(path);
            let absolute = is_absolute(&full, platform);
            let mut out = Vec::with_capacity(full.len());
            if absolute {
                out.push(b'/');
            }
            out.extend(join_segments(
                &normalize_segments(&full, !absolute, platform),
                platform,
            ));
            if out.is_empty() {
                out.push(b'.');
            }
            out
        }
        Platform::Windows => win32_resolve(cwd, path),
    }
}

fn win32_resolve(cwd: &[u8], path: &[u8]) -> Vec<u8> {
    struct State {
        device: Vec<u8>,
        tail: Vec<u8>,
        absolute: bool,
    }
    // One step of Node's right-to-left loop; true when the result is complete.
    fn step(state: &mut State, current: &[u8]) -> bool {
        let (device, is_abs, root_end) = win32_root(current);
        if !device.is_empty() {
            if state.device.is_empty() {
                state.device = device;
            } else if !device.eq_ignore_ascii_case(&state.device) {
                return false;
            }
        }
        if state.absolute {
            return !state.device.is_empty();
        }
        let mut tail = current[root_end..].to_vec();
        tail.push(b'\\');
        tail.extend_from_slice(&state.tail);
        state.tail = tail;
        state.absolute = is_abs;
        is_abs && !state.device.is_empty()
    }
    let mut state = State {
        device: Vec::new(),
        tail: Vec::new(),
        absolute: false,
    };
    let done = !path.is_empty() && step(&mut state, path);
    if !done {
        // `process.cwd()`, or the root of the path's drive when cwd is on another drive
        // (Node would consult the per-drive `=X:` variable, which we do not model).
        let other_drive = !state.device.is_empty()
            && cwd.len() > 2
            && !cwd[..2].eq_ignore_ascii_case(&state.device)
            && cwd[2] == b'\\';
        if other_drive {
            let mut root = state.device.clone();
            root.push(b'\\');
            step(&mut state, &root);
        } else {
            step(&mut state, cwd);
        }
    }
    let tail = join_segments(
        &normalize_segments(&state.tail, !state.absolute, Platform::Windows),
        Platform::Windows,
    );
    let mut out = state.device;
    if state.absolute {
        out.push(b'\\');
    }
    out.extend(tail);
    if out.is_empty() {
        out.push(b'.');
    }
    out
}

/// Node's `path.join(...parts)`: non-empty parts joined by the separator, then normalised
/// (a trailing separator is kept).
pub(crate) fn join(parts: &[&[u8]], platform: Platform) -> Vec<u8> {
    let joined = parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(&sep(platform));
    normalize(&joined, platform)
}

/// Node's `path.normalize`.
pub(crate) fn normalize(path: &[u8], platform: Platform) -> Vec<u8> {
    if path.is_empty() {
        return b".".to_vec();
    }
    let trailing = path.last().is_some_and(|&b| is_sep(platform, b));
    let (device, absolute, root_end) = match platform {
        Platform::Posix => (Vec::new(), path[0] == b'/', 0),
        Platform::Windows => win32_root(path),
    };
    let mut tail = join_segments(
        &normalize_segments(&path[root_end..], !absolute, platform),
        platform,
    );
    if tail.is_empty() && !absolute {
        tail.push(b'.');
    }
    if !tail.is_empty() && trailing {
        tail.push(sep(platform));
    }
    let mut out = device;
    if absolute {
        out.push(sep(platform));
    }
    out.extend(tail);
    out
}

/// PM-11: whether `candidate` lies strictly inside `root`, by the original's test on Node's
/// `relative(root, candidate)`: not empty, not starting with `..`, not absolute. Both paths
/// are resolved against `root` first; Windows compares case-insensitively (like
/// `path.win32.relative`), POSIX byte for byte.
pub(crate) fn is_strictly_inside(root: &[u8], candidate: &[u8], platform: Platform) -> bool {
    let root = resolve(b"/", root, platform);
    let candidate = resolve(&root, candidate, platform);
    let (root_device, root_rest) = split_device(&root, platform);
    let (cand_device, cand_rest) = split_device(&candidate, platform);
    let same = |a: &[u8], b: &[u8]| match platform {
        Platform::Posix => a == b,
        Platform::Windows => {
            String::from_utf8_lossy(a).to_lowercase() == String::from_utf8_lossy(b).to_lowercase()
        }
    };
    if !same(root_device, cand_device) {
        // Different drive or share: `relative` returns the absolute candidate.
        return false;
    }
    let root_parts: Vec<&[u8]> = root_rest
        .split(|&b| is_sep(platform, b))
        .filter(|s| !s.is_empty())
        .collect();
    let cand_parts: Vec<&[u8]> = cand_rest
        .split(|&b| is_sep(platform, b))
        .filter(|s| !s.is_empty())
        .collect();
    if cand_parts.len() <= root_parts.len() {
        return false;
    }
    if !root_parts.iter().zip(&cand_parts).all(|(a, b)| same(a, b)) {
        return false;
    }
    !cand_parts[root_parts.len()].starts_with(b"..")
}

fn split_device(path: &[u8], platform: Platform) -> (&[u8], &[u8]) {
    match platform {
        Platform::Posix => (&[], path),
        Platform::Windows => {
            let (device, _, _) = win32_root(path);
            path.split_at(device.len())
        }
    }
}

/// PM-01: the memory root for a configured `memoryDir` value. `~` and `~/...` expand to
/// `home` on every platform, `~\...` only on Windows (on POSIX `~\foo` is an ordinary
/// relative name); a relative result is resolved against `cwd`. The result is absolute and
/// lexically normalised like Node's `path.resolve` (symlinks are not resolved).
///
/// ```
/// use std::path::Path;
/// use memory_keys::{expand_memory_dir, Platform};
/// let home = Path::new("/home/u");
/// let cwd = Path::new("/work/proj");
/// assert_eq!(expand_memory_dir("~", home, cwd, Platform::Posix), Path::new("/home/u"));
/// assert_eq!(expand_memory_dir("~/.pi/memory", home, cwd, Platform::Posix), Path::new("/home/u/.pi/memory"));
/// assert_eq!(expand_memory_dir("mem/../m", home, cwd, Platform::Posix), Path::new("/work/proj/m"));
/// assert_eq!(expand_memory_dir(r"~\m", home, cwd, Platform::Posix), Path::new(r"/work/proj/~\m"));
/// ```
pub fn expand_memory_dir(value: &str, home: &Path, cwd: &Path, platform: Platform) -> PathBuf {
    let home = path_bytes(home);
    let cwd = path_bytes(cwd);
    let expanded: Vec<u8> = if value == "~" {
        home.to_vec()
    } else if value.starts_with("~/") || (platform == Platform::Windows && value.starts_with("~\\"))
    {
        join(&[&home, &value.as_bytes()[2..]], platform)
    } else {
        value.as_bytes().to_vec()
    };
    path_from(resolve(&cwd, &expanded, platform))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posix_resolve(cwd: &str, p: &str) -> String {
        String::from_utf8(resolve(cwd.as_bytes(), p.as_bytes(), Platform::Posix)).unwrap()
    }

    fn win_resolve(cwd: &str, p: &str) -> String {
        String::from_utf8(resolve(cwd.as_bytes(), p.as_bytes(), Platform::Windows)).unwrap()
    }

    #[test]
    fn posix_resolve_matches_node() {
        assert_eq!(posix_resolve("/a/b", "c/../d/"), "/a/b/d");
        assert_eq!(posix_resolve("/a/b", "/x//y/./z/.."), "/x/y");
        assert_eq!(posix_resolve("/a", "../../.."), "/");
        assert_eq!(posix_resolve("/", ""), "/");
        assert_eq!(posix_resolve("/a/b/", ""), "/a/b");
        assert_eq!(posix_resolve("/a", "~\\m"), "/a/~\\m");
    }

    #[test]
    fn win32_resolve_matches_node() {
        assert_eq!(win_resolve(r"C:\work", r"mem\..\m"), r"C:\work\m");
        assert_eq!(win_resolve(r"C:\work", r"D:\x/y\"), r"D:\x\y");
        assert_eq!(win_resolve(r"C:\work", r"\top"), r"C:\top");
        assert_eq!(win_resolve(r"C:\work", "D:rel"), r"D:\rel");
        assert_eq!(win_resolve(r"C:\work", "c:rel"), r"c:\work\rel");
        assert_eq!(
            win_resolve(r"C:\work", r"\\srv\share\a\..\b"),
            r"\\srv\share\b"
        );
        assert_eq!(win_resolve(r"C:\work", r"C:\"), r"C:\");
    }

    #[test]
    fn normalize_and_join_match_node() {
        let n = |p: &str, pl| String::from_utf8(normalize(p.as_bytes(), pl)).unwrap();
        assert_eq!(n("", Platform::Posix), ".");
        assert_eq!(n("a/../..", Platform::Posix), "..");
        assert_eq!(n("/a//b/", Platform::Posix), "/a/b/");
        assert_eq!(n(r"C:/a\\b\..", Platform::Windows), r"C:\a");
        assert_eq!(n("C:", Platform::Windows), "C:.");
        let j = String::from_utf8(join(&[b"/mem/", b"git", b"x"], Platform::Posix)).unwrap();
        assert_eq!(j, "/mem/git/x");
        let j = String::from_utf8(join(&[br"C:\mem", b"local", b"x"], Platform::Windows)).unwrap();
        assert_eq!(j, r"C:\mem\local\x");
    }
}
