//! Secret detection on write (beyond the original; PA-48 semantics).
//!
//! Memories are plain Markdown files that are injected into model prompts every session, so a
//! credential stored by accident leaks into every future request. Every write path scans the
//! name, description and body; a hit rejects the write, leaves the disk untouched, and the
//! error names only the *kind* of secret and the field — never the value, not even a prefix.
//!
//! Detectors are deliberately high-precision (fixed vendor prefixes with length and alphabet
//! checks, PEM private-key blocks, JWTs, and `password = value`-style assignments with a
//! non-placeholder value) so that ordinary technical prose ("the key is in ~/.ssh/staging",
//! "use sk-learn") is never refused.
//!
//! # Limitations
//! A secret without a recognisable shape (a random 20-character password written as prose)
//! is not detected. There is no exemption mechanism: rephrase the memory to reference where
//! the secret lives instead.

/// One detected secret: what kind it is (never the value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecretKind(pub &'static str);

/// Returns the kind of the first secret found in `text`, if any.
pub fn find_secret(text: &str) -> Option<SecretKind> {
    if text.contains("-----BEGIN ") && text.contains("PRIVATE KEY-----") {
        return Some(SecretKind("private key block"));
    }
    let bytes = text.as_bytes();
    for (i, _) in text.char_indices() {
        if i > 0 && is_token_byte(bytes[i - 1]) {
            continue; // only look at token starts
        }
        let rest = &bytes[i..];
        if let Some(kind) = vendor_token(rest) {
            return Some(kind);
        }
    }
    assignment_secret(text)
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Length of the run of bytes at the start of `s` accepted by `ok`.
fn run(s: &[u8], ok: impl Fn(u8) -> bool) -> usize {
    s.iter().take_while(|b| ok(**b)).count()
}

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

fn upper_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

fn b64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// `prefix` followed by at least `min` bytes accepted by `ok`, ending at a token boundary.
fn prefixed(s: &[u8], prefix: &str, ok: impl Fn(u8) -> bool + Copy, min: usize) -> bool {
    let Some(tail) = s.strip_prefix(prefix.as_bytes()) else {
        return false;
    };
    let n = run(tail, ok);
    n >= min && tail.get(n).is_none_or(|b| !is_token_byte(*b))
}

fn vendor_token(s: &[u8]) -> Option<SecretKind> {
    const KINDS: &[(&str, &str)] = &[
        ("ghp_", "GitHub token"),
        ("gho_", "GitHub token"),
        ("ghu_", "GitHub token"),
        ("ghs_", "GitHub token"),
        ("ghr_", "GitHub token"),
    ];
    for (prefix, kind) in KINDS {
        if prefixed(s, prefix, alnum, 36) {
            return Some(SecretKind(kind));
        }
    }
    if prefixed(s, "github_pat_", b64url, 22) {
        return Some(SecretKind("GitHub token"));
    }
    if prefixed(s, "glpat-", b64url, 20) {
        return Some(SecretKind("GitLab token"));
    }
    if (prefixed(s, "AKIA", upper_digit, 16) || prefixed(s, "ASIA", upper_digit, 16))
        && run(&s[4..], upper_digit) == 16
    {
        return Some(SecretKind("AWS access key"));
    }
    if prefixed(s, "sk-ant-", b64url, 32) {
        return Some(SecretKind("Anthropic API key"));
    }
    if prefixed(s, "sk-", b64url, 32) {
        return Some(SecretKind("OpenAI-style API key"));
    }
    for p in ["sk_live_", "rk_live_", "sk_test_"] {
        if prefixed(s, p, alnum, 16) {
            return Some(SecretKind("Stripe key"));
        }
    }
    for p in ["xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"] {
        if prefixed(s, p, b64url, 10) {
            return Some(SecretKind("Slack token"));
        }
    }
    if prefixed(s, "AIza", b64url, 35) {
        return Some(SecretKind("Google API key"));
    }
    if s.starts_with(b"eyJ") && is_jwt(s) {
        return Some(SecretKind("JSON Web Token"));
    }
    None
}

fn is_jwt(s: &[u8]) -> bool {
    let a = run(s, b64url);
    if a < 10 || s.get(a) != Some(&b'.') {
        return false;
    }
    let s2 = &s[a + 1..];
    if !s2.starts_with(b"eyJ") {
        return false;
    }
    let b = run(s2, b64url);
    if b < 10 || s2.get(b) != Some(&b'.') {
        return false;
    }
    run(&s2[b + 1..], b64url) >= 10
}

/// `password = hunter2-ish`, `api_key: "..."`, `token=...` with a concrete value.
fn assignment_secret(text: &str) -> Option<SecretKind> {
    const KEYS: &[&str] = &[
        "password",
        "passwd",
        "api_key",
        "api-key",
        "apikey",
        "secret_key",
        "client_secret",
        "access_token",
        "auth_token",
        "private_key",
    ];
    let lower = text.to_ascii_lowercase();
    for key in KEYS {
        let mut from = 0;
        while let Some(pos) = lower[from..].find(key) {
            let start = from + pos;
            from = start + key.len();
            if start > 0 && is_token_byte(lower.as_bytes()[start - 1]) {
                continue;
            }
            let after = &text[from..];
            let trimmed = after.trim_start_matches([' ', '\t']);
            let Some(rest) = trimmed
                .strip_prefix('=')
                .or_else(|| trimmed.strip_prefix(':'))
            else {
                continue;
            };
            let rest = rest.trim_start_matches([' ', '\t']);
            let rest = rest.trim_start_matches(['"', '\'', '`']);
            let value: String = rest
                .chars()
                .take_while(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | '`' | ',' | ';'))
                .collect();
            if looks_concrete(&value) {
                return Some(SecretKind("credential assignment"));
            }
        }
    }
    None
}

/// A value that is a real credential rather than a placeholder or a reference.
fn looks_concrete(value: &str) -> bool {
    if value.chars().count() < 8 {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    let placeholder = value.starts_with('$')
        || value.starts_with('<')
        || value.starts_with('{')
        || value.starts_with('%')
        || value.starts_with("~/")
        || value.starts_with('/')
        || value.contains("***")
        || lower.contains("xxxx")
        || lower.starts_with("env:")
        || lower.starts_with("process.env")
        || lower.starts_with("os.environ")
        || lower.contains("placeholder")
        || lower.contains("changeme")
        || lower.contains("example")
        || lower.contains("your_")
        || lower.contains("your-");
    if placeholder {
        return false;
    }
    let distinct: std::collections::BTreeSet<char> = value.chars().collect();
    distinct.len() >= 5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_tokens_are_found() {
        let cases = [
            (
                "token ghp_0123456789abcdefghijABCDEFGHIJ012345 here",
                "GitHub token",
            ),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
                "GitHub token",
            ),
            ("AKIAIOSFODNN7EXAMPLE", "AWS access key"),
            (
                "key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
                "OpenAI-style API key",
            ),
            (
                "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
                "Anthropic API key",
            ),
            ("xoxb-1234567890-abcdefghij", "Slack token"),
            ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "Google API key"),
            ("sk_live_0123456789abcdefABCD", "Stripe key"),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "JSON Web Token",
            ),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
                "private key block",
            ),
            ("DB password: hunter2hunter2", "credential assignment"),
            ("api_key=\"9f8e7d6c5b4a\"", "credential assignment"),
        ];
        for (text, kind) in cases {
            assert_eq!(find_secret(text), Some(SecretKind(kind)), "{text}");
        }
    }

    #[test]
    fn ordinary_prose_is_not_a_secret() {
        let cases = [
            "staging SSH listens on 2222, key at ~/.ssh/staging",
            "use sk-learn for the classifier",
            "password: $DB_PASSWORD from the environment",
            "password = <your password>",
            "api_key: ${OPENAI_API_KEY}",
            "the password is rotated monthly",
            "AKIA prefixes mark AWS keys",
            "ghp_short",
            "set password=changeme-in-prod only in examples",
            "集成测试必须连真实 PostgreSQL",
            "token=abc",
        ];
        for text in cases {
            assert_eq!(find_secret(text), None, "{text}");
        }
    }
}
