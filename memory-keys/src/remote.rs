//! Remote URL -> project key (PM-04, PM-05, PM-06).
//!
//! Two syntaxes reach a key:
//! * scheme URLs (the text contains `://`) are parsed with the WHATWG URL parser (the `url`
//!   crate implements the same standard as Node's `URL`, which the original uses): userinfo is
//!   split at the last `@`, the port, query and fragment are dropped, `.`/`..` segments are
//!   folded and the path is percent-encoded;
//! * scp-style `[user@]host:path` is split by hand and its path kept exactly as written.
//!
//! Either way the host is then normalised once more by parsing `https://<host>` (falling back
//! to lowercasing when that fails): `ssh://` and `git://` URLs have opaque hosts, and this
//! extra step gives `https://例子.com`, `ssh://例子.com` and `例子.com:` one key.

use url::Url;

use crate::Platform;
use memory_js::js_trim;

/// Schemes whose URLs name a remote repository (PM-04).
const SCHEMES: [&str; 4] = ["http", "https", "ssh", "git"];

/// Normalises a remote URL to a project key such as `github.com/owner/repo`, or `None` when
/// the remote is not usable for identity (PM-05): local paths, `file://`, other schemes, an
/// empty host or an empty repository path. On [`Platform::Windows`] a drive-letter path
/// (`Z:\repos\foo.git`) is local; on POSIX the same text is scp syntax with host `z`.
///
/// ```
/// use memory_keys::{normalize_remote_url, Platform};
/// let key = normalize_remote_url("ssh://git@gitlab.com:2222/grp/sub/repo.git", Platform::Posix);
/// assert_eq!(key.as_deref(), Some("gitlab.com/grp/sub/repo"));
/// assert_eq!(normalize_remote_url("file:///srv/repos/foo.git", Platform::Posix), None);
/// ```
pub fn normalize_remote_url(url: &str, platform: Platform) -> Option<String> {
    let text = js_trim(url);
    if text.is_empty() {
        return None;
    }
    let (host, path) = if text.contains("://") {
        scheme_parts(text)?
    } else {
        scp_parts(text, platform)?
    };
    let host = normalize_host(&host);
    // Decision: a remote without a host (`ssh:///o/r`, `:o/r`) names no repository that a
    // clone elsewhere could share, so it is unusable like an empty path.
    if host.is_empty() {
        return None;
    }
    let path = strip_git_suffix(path.trim_matches('/'));
    if path.is_empty() {
        return None;
    }
    Some(format!("{host}/{path}"))
}

/// Host and path of a scheme URL, or `None` for an unusable scheme or an unparsable URL.
fn scheme_parts(text: &str) -> Option<(String, String)> {
    let parsed = Url::parse(text).ok()?;
    let url = match parsed.scheme() {
        s if SCHEMES.contains(&s) => parsed,
        // Decision: exactly the two aliases PM-04 lists. Like the original, the `git+`
        // prefix is removed before parsing, so `git+https` gets the special-scheme rules of
        // `https` (backslash as separator, default port, IDN host).
        "git+ssh" | "git+https" => {
            let at = text.to_ascii_lowercase().find("git+")?;
            Url::parse(text.get(at + 4..)?).ok()?
        }
        _ => return None,
    };
    let host = url.host_str().unwrap_or_default().to_owned();
    Some((host, url.path().to_owned()))
}

/// Host and path of scp syntax `[user@]host:path`, or `None` when the text is a local path.
fn scp_parts(text: &str, platform: Platform) -> Option<(String, String)> {
    let bytes = text.as_bytes();
    if platform == Platform::Windows
        && bytes.len() >= 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
    {
        // git on Windows treats `X:` as a drive letter, so this is a local path (A36).
        return None;
    }
    let mut in_brackets = false;
    let mut colon = None;
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'[' => in_brackets = true,
            b']' => in_brackets = false,
            // A `/` before the first `:` makes it a path (`./foo:bar`, `/srv/x`, `../repo`).
            b'/' => return None,
            b':' if !in_brackets => {
                colon = Some(i);
                break;
            }
            _ => {}
        }
    }
    let colon = colon?;
    let authority = &text[..colon];
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    Some((host.to_owned(), text[colon + 1..].to_owned()))
}

/// The host as `new URL("https://" + host).hostname` gives it (lowercase, punycode, canonical
/// IP literals), or lowercased when that parse fails.
fn normalize_host(host: &str) -> String {
    match Url::parse(&format!("https://{host}")) {
        Ok(url) => url.host_str().unwrap_or_default().to_owned(),
        Err(_) => host.to_lowercase(),
    }
}

/// Removes one trailing `.git`, ASCII case-insensitively (`/\.git$/i`).
fn strip_git_suffix(path: &str) -> &str {
    let n = path.len();
    if n >= 4 && path.is_char_boundary(n - 4) && path[n - 4..].eq_ignore_ascii_case(".git") {
        &path[..n - 4]
    } else {
        path
    }
}
