//! Which working directories the session tools may read (PS-14..PS-17): the caller's own,
//! and those listed in `<caller-cwd>/.pi/pi-session/setting.json`.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Where the whitelist lives, relative to the caller's working directory.
pub const SETTINGS_FILE: &str = ".pi/pi-session/setting.json";

/// Why a `cwd` argument was refused. Every message names what to fix; those about the
/// whitelist name the file to edit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The argument is not a string.
    #[error("cwd must be a string (an absolute path), not {0}")]
    NotAString(String),
    /// The argument is a relative path (PS-15, PS-V8).
    #[error("cwd \"{0}\" must be an absolute path")]
    Relative(String),
    /// The directory does not exist or cannot be resolved.
    #[error("cwd {path} cannot be resolved: {reason}")]
    Unresolvable {
        /// The argument.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// No whitelist file.
    #[error(
        "cwd {cwd} is not authorized: {} does not exist. To allow it, create that file with {{\"externalDirectories\": [\"{cwd}\"]}}",
        file.display()
    )]
    NoSettings {
        /// The requested directory (resolved).
        cwd: String,
        /// The file to create.
        file: PathBuf,
    },
    /// The whitelist does not list the directory (PS-16, PS-V7).
    #[error(
        "cwd {cwd} is not authorized: it is not listed in \"externalDirectories\" of {} (entries must match exactly after resolving symlinks; subdirectories of a listed directory are not authorized)",
        file.display()
    )]
    NotListed {
        /// The requested directory (resolved).
        cwd: String,
        /// The file to edit.
        file: PathBuf,
    },
    /// The whitelist cannot be read.
    #[error("cannot read {}: {reason}", file.display())]
    Unreadable {
        /// The file.
        file: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// The whitelist is not `{"externalDirectories": [absolute paths]}`.
    #[error(
        "{} is malformed: {reason}; expected {{\"externalDirectories\": [\"/absolute/path\", ...]}} (\"~\" and \"$HOME\" may start a path)",
        file.display()
    )]
    Malformed {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// The directory a session tool works in, once admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    /// The directory as pi records it in session headers: the caller's cwd as given, or the
    /// resolved (realpath) external directory.
    pub cwd: PathBuf,
    /// Whether it is the caller's own directory.
    pub own: bool,
}

/// Admits the `cwd` argument of a session tool (PS-14..PS-16).
///
/// * absent, `null`, empty or blank → the caller's `caller_cwd`;
/// * not a string, relative → refused;
/// * resolving (realpath) to the caller's directory → admitted;
/// * otherwise it must resolve to exactly one of the `externalDirectories` of
///   `<caller_cwd>/.pi/pi-session/setting.json`, each expanded (`~`, `~/…`, `$HOME`,
///   `$HOME/…`, `${HOME}…` with `home`) and resolved. The file is read on every call.
///
/// Nothing of the other directory is read before it is admitted.
///
/// ```
/// use memory_agent::pi::session_tools::{admit_cwd, AuthError};
/// let tmp = tempfile::tempdir()?;
/// let caller = tmp.path().join("app");
/// let other = tmp.path().join("other");
/// std::fs::create_dir_all(caller.join(".pi/pi-session"))?;
/// std::fs::create_dir_all(other.join("sub"))?;
/// let arg = |p: &std::path::Path| serde_json::json!(p.to_str().unwrap());
/// assert!(admit_cwd(&caller, None, None)?.own);
/// assert!(matches!(admit_cwd(&caller, Some(&arg(&other)), None), Err(AuthError::NoSettings { .. })));
/// std::fs::write(caller.join(".pi/pi-session/setting.json"), serde_json::json!({"externalDirectories": [other]}).to_string())?;
/// assert_eq!(admit_cwd(&caller, Some(&arg(&other)), None)?.cwd, other.canonicalize()?);
/// assert!(matches!(admit_cwd(&caller, Some(&arg(&other.join("sub"))), None), Err(AuthError::NotListed { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// An [`AuthError`] naming what to fix.
pub fn admit_cwd(
    caller_cwd: &Path,
    requested: Option<&Value>,
    home: Option<&Path>,
) -> Result<Admitted, AuthError> {
    let own = || Admitted {
        cwd: caller_cwd.to_path_buf(),
        own: true,
    };
    let raw = match requested {
        None | Some(Value::Null) => return Ok(own()),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(own()),
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(AuthError::NotAString(other.to_string())),
    };
    if !Path::new(raw).is_absolute() {
        return Err(AuthError::Relative(raw.to_owned()));
    }
    let wanted = std::fs::canonicalize(raw).map_err(|e| AuthError::Unresolvable {
        path: raw.to_owned(),
        reason: e.to_string(),
    })?;
    if std::fs::canonicalize(caller_cwd).is_ok_and(|c| c == wanted) {
        return Ok(own());
    }
    let file = caller_cwd.join(SETTINGS_FILE);
    let shown = wanted.display().to_string();
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(AuthError::NoSettings { cwd: shown, file });
        }
        Err(e) => {
            return Err(AuthError::Unreadable {
                file,
                reason: e.to_string(),
            });
        }
    };
    let listed = external_directories(&text, home).map_err(|reason| AuthError::Malformed {
        file: file.clone(),
        reason,
    })?;
    // An entry that does not exist cannot match an existing directory.
    if listed
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .any(|p| p == wanted)
    {
        Ok(Admitted {
            cwd: wanted,
            own: false,
        })
    } else {
        Err(AuthError::NotListed { cwd: shown, file })
    }
}

/// The `externalDirectories` of a whitelist's text, expanded; `Err` says what is malformed.
fn external_directories(text: &str, home: Option<&Path>) -> Result<Vec<PathBuf>, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let Some(obj) = value.as_object() else {
        return Err("the top level is not an object".to_owned());
    };
    let entries = match obj.get("externalDirectories") {
        None => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => return Err("\"externalDirectories\" is not an array".to_owned()),
    };
    entries
        .iter()
        .map(|e| {
            let Some(s) = e.as_str() else {
                return Err(format!("entry {e} is not a string"));
            };
            let path = expand_home(s, home).ok_or_else(|| {
                format!("entry \"{s}\" needs the home directory, which is not set")
            })?;
            // Decision (VECTORS §Z 18): a relative entry makes the file malformed.
            if path.is_absolute() {
                Ok(path)
            } else {
                Err(format!("entry \"{s}\" is not an absolute path"))
            }
        })
        .collect()
}

/// `~`, `~/rest`, `$HOME`, `$HOME/rest`, `${HOME}`, `${HOME}/rest` → under `home`; other
/// strings unchanged. `None` when the string needs `home` and there is none.
fn expand_home(s: &str, home: Option<&Path>) -> Option<PathBuf> {
    for prefix in ["~", "$HOME", "${HOME}"] {
        if let Some(rest) = s.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            let home = home?;
            let rest = rest.trim_start_matches('/');
            return Some(if rest.is_empty() {
                home.to_path_buf()
            } else {
                home.join(rest)
            });
        }
    }
    Some(PathBuf::from(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Fx {
        _tmp: tempfile::TempDir,
        home: PathBuf,
        caller: PathBuf,
    }

    fn fx() -> Fx {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().canonicalize().unwrap().join("home");
        let caller = home.join("app");
        std::fs::create_dir_all(caller.join(".pi/pi-session")).unwrap();
        std::fs::create_dir_all(home.join("proj/sub")).unwrap();
        Fx {
            _tmp: tmp,
            home,
            caller,
        }
    }

    impl Fx {
        fn settings(&self, v: &str) {
            std::fs::write(self.caller.join(SETTINGS_FILE), v).unwrap();
        }
        fn admit(&self, p: &Path) -> Result<Admitted, AuthError> {
            admit_cwd(
                &self.caller,
                Some(&json!(p.to_str().unwrap())),
                Some(&self.home),
            )
        }
    }

    #[test]
    fn own_cwd_when_absent_null_or_blank_ps_14() {
        let f = fx();
        for v in [None, Some(json!(null)), Some(json!("")), Some(json!("  "))] {
            let a = admit_cwd(&f.caller, v.as_ref(), Some(&f.home)).unwrap();
            assert_eq!((a.cwd, a.own), (f.caller.clone(), true));
        }
        // The caller's own directory given explicitly needs no whitelist.
        assert!(f.admit(&f.caller).unwrap().own);
    }

    #[test]
    fn ps_v7_children_of_a_listed_directory_are_refused() {
        let f = fx();
        f.settings(r#"{"externalDirectories": ["~/proj"]}"#);
        assert_eq!(
            f.admit(&f.home.join("proj")).unwrap().cwd,
            f.home.join("proj")
        );
        let e = f.admit(&f.home.join("proj/sub")).unwrap_err();
        assert!(matches!(e, AuthError::NotListed { .. }), "{e}");
        assert!(e.to_string().contains(".pi/pi-session/setting.json"));
        assert!(e.to_string().contains("subdirectories"));
    }

    #[test]
    fn ps_v8_relative_and_non_string_arguments_are_refused() {
        let f = fx();
        let e = admit_cwd(&f.caller, Some(&json!("proj")), Some(&f.home)).unwrap_err();
        assert_eq!(e.to_string(), "cwd \"proj\" must be an absolute path");
        let e = admit_cwd(&f.caller, Some(&json!(3)), Some(&f.home)).unwrap_err();
        assert_eq!(e, AuthError::NotAString("3".into()));
    }

    #[test]
    fn home_forms_and_symlinks_resolve_to_the_same_directory() {
        let f = fx();
        for entry in ["$HOME/proj", "${HOME}/proj/", "~/proj/"] {
            f.settings(&json!({ "externalDirectories": [entry] }).to_string());
            assert!(f.admit(&f.home.join("proj")).is_ok(), "{entry}");
        }
        #[cfg(unix)]
        {
            let link = f.home.join("link");
            std::os::unix::fs::symlink(f.home.join("proj"), &link).unwrap();
            f.settings(&json!({ "externalDirectories": [link] }).to_string());
            assert_eq!(
                f.admit(&f.home.join("proj")).unwrap().cwd,
                f.home.join("proj")
            );
            assert_eq!(f.admit(&link).unwrap().cwd, f.home.join("proj"));
        }
    }

    #[test]
    fn missing_and_malformed_files_name_the_file() {
        let f = fx();
        let target = f.home.join("proj");
        let e = f.admit(&target).unwrap_err();
        assert!(matches!(e, AuthError::NoSettings { .. }));
        assert!(
            e.to_string()
                .contains(&format!("{}", f.caller.join(SETTINGS_FILE).display()))
        );
        for (text, why) in [
            ("{bad", "not JSON"),
            ("[]", "top level is not an object"),
            (r#"{"externalDirectories": "/x"}"#, "is not an array"),
            (r#"{"externalDirectories": [1]}"#, "entry 1 is not a string"),
            (
                r#"{"externalDirectories": ["proj"]}"#,
                "entry \"proj\" is not an absolute path",
            ),
        ] {
            f.settings(text);
            let e = f.admit(&target).unwrap_err();
            let msg = e.to_string();
            assert!(matches!(e, AuthError::Malformed { .. }), "{text}: {msg}");
            assert!(msg.contains(why) && msg.contains("setting.json"), "{msg}");
        }
        f.settings("{}");
        assert!(matches!(
            f.admit(&target).unwrap_err(),
            AuthError::NotListed { .. }
        ));
        let e = f.admit(&f.home.join("nope")).unwrap_err();
        assert!(matches!(e, AuthError::Unresolvable { .. }));
    }

    #[test]
    fn the_file_is_read_again_on_every_call_ps_16() {
        let f = fx();
        let target = f.home.join("proj");
        f.settings(&json!({ "externalDirectories": [target] }).to_string());
        assert!(f.admit(&target).is_ok());
        f.settings(r#"{"externalDirectories": []}"#);
        assert!(f.admit(&target).is_err());
    }

    #[test]
    fn expand_home_only_at_the_start() {
        let h = Path::new("/h");
        assert_eq!(expand_home("~", Some(h)).unwrap(), Path::new("/h"));
        assert_eq!(expand_home("~/a", Some(h)).unwrap(), Path::new("/h/a"));
        assert_eq!(expand_home("$HOME/a", Some(h)).unwrap(), Path::new("/h/a"));
        assert_eq!(
            expand_home("~user/a", Some(h)).unwrap(),
            Path::new("~user/a")
        );
        assert_eq!(expand_home("/x/~/a", Some(h)).unwrap(), Path::new("/x/~/a"));
        assert_eq!(expand_home("$HOMEX", Some(h)).unwrap(), Path::new("$HOMEX"));
        assert_eq!(expand_home("~/a", None), None);
    }
}
