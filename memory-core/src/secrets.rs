//! Secret detection on write (PA-48).
//!
//! Memories are plain Markdown files that are injected into model prompts every session, so a
//! credential stored by accident leaks into every future request. Every write path of the
//! [`Store`](crate::Store) (the tool, the CLI, extraction, the dream, and any later import or
//! edit path, since they all end in the same write pipeline) scans the name, description and
//! body; a hit rejects the write before any lock or file is touched, and the error names only
//! the *kind* of credential and its *position* (line and column in the field) — never the
//! value, not even a prefix.
//!
//! # How it works
//! One table of detectors, each a regular expression for one credential shape plus an
//! optional check of the captured value. The expressions are compiled once into a
//! [`regex::RegexSet`] (one pass over the text tells which detectors can match at all) and
//! individual [`regex::Regex`]es (run only for those, to find the position and validate the
//! value). [`kinds`] lists the credential kinds that can be reported (more than 25 kinds:
//! cloud provider keys, VCS and CI tokens, chat, payment and AI API keys, private keys,
//! JWTs, connection strings and URLs with a password, authorization headers, and assignments
//! of a concrete value to a secret-looking name).
//!
//! Decision: detectors are high-precision. Vendor tokens need their fixed prefix and the
//! exact alphabet and length; generic shapes (a password in a URL, `password = …`,
//! `Authorization: Bearer …`) need a value that is not a placeholder (`<password>`,
//! `${DB_PASSWORD}`, `changeme`, `***`), not a reference (`$VAR`, `process.env.X`,
//! `OPENAI_API_KEY`, `~/.ssh/id_ed25519`, `op://vault/item`) and looks random enough (several
//! character classes or a long value). Two corpora kept in the repository measure it:
//! `memory-core/tests/corpus/ordinary-memories.jsonl` (ordinary developer memories full of
//! look-alikes: commit hashes, UUIDs, base64 blobs, checksums, URLs without passwords,
//! placeholders) must give no hit, `memory-core/tests/corpus/fake-credentials.jsonl`
//! (realistic fake credentials of every kind) must be caught; the figures are in
//! RELIABILITY.md (test `secrets_corpus` in memory-core).
//!
//! # Limitations
//! A secret without a recognisable shape (a random password written as prose, a bare 40-char
//! key with no name beside it) is not detected. There is no exemption mechanism (PA-50):
//! rephrase the memory to reference where the secret lives instead.

use std::sync::OnceLock;

use regex::{Regex, RegexSet};

/// One detected secret: what kind it is and where (never the value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecretKind(pub &'static str);

/// A hit: the kind of credential and where it starts in the scanned text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecretHit {
    /// What kind of credential was recognised.
    pub kind: SecretKind,
    /// Byte offset of the start of the match.
    pub offset: usize,
    /// 1-based line of the start of the match (the value, for `name = value` shapes).
    pub line: usize,
    /// 1-based column (in characters) of the start of the match.
    pub column: usize,
}

/// A check of the value a detector captured (capture group `v`, else the whole match).
type Check = fn(&str) -> bool;

/// One credential shape.
struct Detector {
    kind: &'static str,
    pattern: &'static str,
    check: Option<Check>,
}

const fn d(kind: &'static str, pattern: &'static str) -> Detector {
    Detector {
        kind,
        pattern,
        check: None,
    }
}

const fn dc(kind: &'static str, pattern: &'static str, check: Check) -> Detector {
    Detector {
        kind,
        pattern,
        check: Some(check),
    }
}

/// Token boundaries: a vendor token is not part of a longer identifier.
macro_rules! tok {
    ($body:literal) => {
        concat!(
            r"(?:^|[^A-Za-z0-9_\-])(?P<v>",
            $body,
            r")(?:$|[^A-Za-z0-9_\-])"
        )
    };
}

/// The detectors, most specific first: the first detector that matches names the kind.
fn detectors() -> Vec<Detector> {
    vec![
        d(
            "private key block",
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
        ),
        d(
            "AWS access key",
            tok!(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"),
        ),
        dc(
            "AWS secret access key",
            r#"(?i:aws_?secret_?access_?key|aws_?secret)["']?\s*(?:=|:|=>)\s*["']?(?P<v>[A-Za-z0-9/+=]{40})(?:$|[^A-Za-z0-9/+=])"#,
            random_enough,
        ),
        d(
            "GitHub token",
            tok!(r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"),
        ),
        d(
            "GitLab token",
            tok!(
                r"(?:glpat|glptt|gldt|glrt|glcbt|gloas|glft|glimt|glagent|glsoat)-[A-Za-z0-9_\-]{20,}"
            ),
        ),
        d("GitLab runner token", tok!(r"GR1348941[A-Za-z0-9_\-]{20,}")),
        d(
            "Bitbucket or Atlassian token",
            tok!(
                r"(?:ATBB[A-Za-z0-9_=.\-]{32,}|ATATT3[A-Za-z0-9_=\-]{150,}|ATCTT3[A-Za-z0-9_=\-]{150,})"
            ),
        ),
        d(
            "CircleCI token",
            tok!(r"CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}"),
        ),
        d("npm token", tok!(r"npm_[A-Za-z0-9]{36}")),
        d(
            "PyPI token",
            tok!(r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
        ),
        d("RubyGems API key", tok!(r"rubygems_[a-f0-9]{48}")),
        d(
            "Docker Hub token",
            tok!(r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{27,}"),
        ),
        d(
            "HashiCorp Vault token",
            tok!(r"(?:hvs|hvb)\.[A-Za-z0-9_\-]{24,}"),
        ),
        d(
            "Terraform Cloud token",
            tok!(r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}"),
        ),
        d(
            "Slack token",
            tok!(r"xox[abposre]-(?:[0-9]+-)*[A-Za-z0-9\-]{10,}"),
        ),
        d(
            "Slack webhook URL",
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,}",
        ),
        d(
            "Discord webhook URL",
            r"https://(?:canary\.|ptb\.)?discord(?:app)?\.com/api/webhooks/[0-9]{6,}/[A-Za-z0-9_\-]{40,}",
        ),
        d(
            "Discord bot token",
            tok!(r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}"),
        ),
        d(
            "Telegram bot token",
            r"(?:^|[^0-9A-Za-z_])(?P<v>[0-9]{8,10}:AA[A-Za-z0-9_\-]{33})(?:$|[^A-Za-z0-9_\-])",
        ),
        d(
            "Microsoft Teams webhook URL",
            r"https://[a-z0-9.\-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@\-]{30,}/IncomingWebhook/[A-Za-z0-9]{20,}/[A-Za-z0-9\-]{30,}",
        ),
        d(
            "Stripe key",
            tok!(r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{32,}"),
        ),
        d(
            "Square token",
            tok!(r"(?:sq0atp|sq0csp)-[A-Za-z0-9_\-]{22,43}|EAAA[A-Za-z0-9_\-]{60}"),
        ),
        d(
            "PayPal Braintree token",
            r"access_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}",
        ),
        d("Shopify token", tok!(r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}")),
        d(
            "Anthropic API key",
            tok!(r"sk-ant-(?:api|admin|sid)[0-9]{2}-[A-Za-z0-9_\-]{32,}"),
        ),
        d(
            "OpenAI API key",
            tok!(
                r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,}|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}"
            ),
        ),
        dc(
            "API key (sk-)",
            tok!(r"sk-[A-Za-z0-9_\-]{32,}"),
            random_enough,
        ),
        d("Groq API key", tok!(r"gsk_[A-Za-z0-9]{48,}")),
        d("xAI API key", tok!(r"xai-[A-Za-z0-9]{60,}")),
        d("Replicate API token", tok!(r"r8_[A-Za-z0-9]{37}")),
        d("Hugging Face token", tok!(r"hf_[A-Za-z0-9]{34,}")),
        d("Perplexity API key", tok!(r"pplx-[A-Za-z0-9]{48}")),
        d("Google API key", tok!(r"AIza[0-9A-Za-z_\-]{35}")),
        d(
            "Google OAuth secret or token",
            tok!(r"GOCSPX-[A-Za-z0-9_\-]{28}|ya29\.[0-9A-Za-z_\-]{30,}|1//0[0-9A-Za-z_\-]{40,}"),
        ),
        d(
            "Azure storage key",
            r"(?i:AccountKey|SharedAccessKey)\s*=\s*(?P<v>[A-Za-z0-9+/]{40,}={0,2})",
        ),
        dc(
            "Azure SAS token",
            r"[?&]sig=(?P<v>[A-Za-z0-9%+/=]{30,})",
            random_enough,
        ),
        d("DigitalOcean token", tok!(r"do[opr]_v1_[a-f0-9]{64}")),
        d("Linear API key", tok!(r"lin_(?:api|oauth)_[A-Za-z0-9]{40}")),
        d(
            "Notion token",
            tok!(r"(?:secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})"),
        ),
        d("Postman API key", tok!(r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}")),
        d(
            "SendGrid API key",
            tok!(r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}"),
        ),
        d("Twilio API key", tok!(r"SK[0-9a-f]{32}")),
        d(
            "Mailgun or Mailchimp key",
            tok!(r"key-[0-9a-f]{32}|[0-9a-f]{32}-us[0-9]{1,2}"),
        ),
        d(
            "New Relic key",
            tok!(r"NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9_\-]{32}"),
        ),
        d("Age secret key", tok!(r"AGE-SECRET-KEY-1[0-9A-Z]{58}")),
        d(
            "JSON Web Token",
            tok!(r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),
        ),
        dc(
            "URL with a password",
            r"\b[A-Za-z][A-Za-z0-9+.\-]{1,30}://(?P<u>[^\s:/@'\x22<>]{1,64}):(?P<v>[^\s@/'\x22<>]{3,})@[A-Za-z0-9\[\]._\-]+",
            concrete_password,
        ),
        dc(
            "connection string with a password",
            r"(?i:(?:^|[;\s\x22'])(?:password|pwd)\s*=\s*)(?P<v>[^;\s\x22']{4,})",
            concrete_password,
        ),
        dc(
            "authorization header",
            r"(?i:authorization\s*[:=]\s*[\x22']?(?:bearer|basic|token)\s+)(?P<v>[A-Za-z0-9._~+/\-]{16,}=*)",
            random_enough,
        ),
        dc(
            "netrc password",
            r"(?m:^\s*machine\s+\S+\s+login\s+\S+\s+password\s+)(?P<v>\S{4,})",
            concrete_password,
        ),
        dc(
            "credential assignment",
            concat!(
                r#"(?:^|[^A-Za-z0-9_])"#,
                r#"(?P<name>"#,
                r#"(?i:[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|pwd|secret|secret[_\-]?key|token|api[_\-]?key|apikey|access[_\-]?key|auth[_\-]?key|private[_\-]?key|client[_\-]?secret|signing[_\-]?key|encryption[_\-]?key|credentials?))"#,
                r#")["'`]?\s*(?:=|:=|=>|:)\s*(?:["'`])?"#,
                r#"(?P<v>[^\s"'`,;)\]}]{8,})"#
            ),
            assignment_value,
        ),
    ]
}

struct Compiled {
    set: RegexSet,
    each: Vec<Regex>,
    detectors: Vec<Detector>,
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let detectors = detectors();
        // The patterns are constants of this file; the unit tests compile every one of them.
        #[allow(clippy::expect_used)]
        let set = RegexSet::new(detectors.iter().map(|d| d.pattern))
            .expect("the secret patterns compile");
        #[allow(clippy::expect_used)]
        let each = detectors
            .iter()
            .map(|d| Regex::new(d.pattern).expect("each secret pattern compiles"))
            .collect();
        Compiled {
            set,
            each,
            detectors,
        }
    })
}

/// Every kind [`find_secret`] can report, in detection order.
pub fn kinds() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for d in &compiled().detectors {
        if !out.contains(&d.kind) {
            out.push(d.kind);
        }
    }
    out
}

/// The first secret found in `text` (the one starting earliest; among detectors matching at
/// the same place, the most specific), if any.
pub fn find_secret_at(text: &str) -> Option<SecretHit> {
    let c = compiled();
    let mut best: Option<(usize, usize)> = None; // (offset, detector index)
    for i in c.set.matches(text).iter() {
        let detector = &c.detectors[i];
        for caps in c.each[i].captures_iter(text) {
            let m = caps.name("v").or_else(|| caps.get(0));
            let Some(m) = m else { continue };
            // `user:user@host` (postgres:postgres, guest:guest) is a well-known default, not
            // a secret someone could leak.
            let same_as_user = caps.name("u").is_some_and(|u| u.as_str() == m.as_str());
            let ok = !same_as_user
                && match detector.check {
                    Some(check) => check(m.as_str()),
                    None => not_a_placeholder_token(m.as_str()),
                };
            if ok {
                // The value's start, so a vendor token inside an assignment is reported
                // as its own kind (the earlier, more specific detector wins a tie).
                let start = m.start();
                if best.is_none_or(|(o, _)| start < o) {
                    best = Some((start, i));
                }
                break;
            }
        }
    }
    let (offset, i) = best?;
    let (line, column) = position(text, offset);
    Some(SecretHit {
        kind: SecretKind(c.detectors[i].kind),
        offset,
        line,
        column,
    })
}

/// The kind of the first secret found in `text`, if any.
pub fn find_secret(text: &str) -> Option<SecretKind> {
    find_secret_at(text).map(|h| h.kind)
}

/// 1-based line and character column of a byte offset.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    (line, column)
}

/// Character classes present: lower, upper, digit, other.
fn classes(value: &str) -> usize {
    let mut c = [false; 4];
    for ch in value.chars() {
        let k = if ch.is_ascii_lowercase() {
            0
        } else if ch.is_ascii_uppercase() {
            1
        } else if ch.is_ascii_digit() {
            2
        } else {
            3
        };
        c[k] = true;
    }
    c.iter().filter(|b| **b).count()
}

fn distinct(value: &str) -> usize {
    let mut seen: Vec<char> = value.chars().collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

/// Shannon entropy in bits per character.
fn entropy(value: &str) -> f64 {
    let chars: Vec<char> = value.chars().collect();
    if chars.is_empty() {
        return 0.0;
    }
    let mut sorted = chars.clone();
    sorted.sort_unstable();
    let n = chars.len() as f64;
    let mut e = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j < sorted.len() && sorted[j] == sorted[i] {
            j += 1;
        }
        let p = (j - i) as f64 / n;
        e -= p * p.log2();
        i = j;
    }
    e
}

/// A value that stands for a secret instead of being one: a placeholder (`<password>`,
/// `changeme`, `***`), a reference (`$VAR`, `${{ secrets.X }}`, `process.env.X`, an
/// environment variable name, a path, a secret manager reference) or code.
fn is_placeholder_or_reference(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    const STARTS: &[&str] = &[
        "$",
        "<",
        "{",
        "[",
        "(",
        "~",
        "/",
        "./",
        "../",
        "@",
        "&",
        "env:",
        "env.",
        "vault:",
        "op://",
        "ssm:",
        "arn:",
        "secretsmanager",
        "keychain",
        "process.env",
        "os.environ",
        "os.getenv",
        "getenv",
        "system.getenv",
        "env[",
        "env(",
        "secrets.",
        "config.",
        "settings.",
        "self.",
        "this.",
        "import",
        "require",
        "http://",
        "https://",
        "file:",
    ];
    if STARTS.iter().any(|p| lower.starts_with(p)) {
        return true;
    }
    // `%DB_PASSWORD%` (a Windows environment reference).
    if value.len() > 2 && value.starts_with('%') && value.ends_with('%') {
        return true;
    }
    const CONTAINS: &[&str] = &[
        "***",
        "xxx",
        "...",
        "…",
        "placeholder",
        "changeme",
        "change_me",
        "change-me",
        "example",
        "your_",
        "your-",
        "yourpass",
        "yourtoken",
        "yourkey",
        "dummy",
        "redacted",
        "<",
        ">",
        "${",
        "}}",
        "(",
        "notreal",
        "not-a-real",
        "goes-here",
        "goes_here",
    ];
    if CONTAINS.iter().any(|p| lower.contains(p)) {
        return true;
    }
    // An environment variable name (OPENAI_API_KEY) or a dotted code path (cfg.db.password).
    let env_name = value
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && value.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && (value.contains('_') || !value.chars().any(|c| c.is_ascii_digit()));
    let code_path = value.contains('.')
        && value
            .split('.')
            .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        && value.split('.').all(|s| {
            s.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        });
    // A file name (deploy_key.pem, creds.json).
    const FILE_EXT: &[&str] = &[
        ".pem", ".key", ".json", ".env", ".txt", ".yml", ".yaml", ".toml", ".p12", ".pfx", ".crt",
        ".cer", ".gpg", ".asc", ".ini", ".cfg", ".conf", ".md", ".sh", ".rs", ".ts", ".py",
    ];
    let file = FILE_EXT.iter().any(|e| lower.ends_with(e));
    env_name || code_path || file
}

/// Words that are never passwords.
fn is_common_word(value: &str) -> bool {
    const WORDS: &[&str] = &[
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "token",
        "none",
        "null",
        "true",
        "false",
        "required",
        "optional",
        "undefined",
        "disabled",
        "enabled",
        "string",
        "redacted",
        "hidden",
        "masked",
        "omitted",
        "unknown",
        "default",
        "password1",
        "password123",
        "secret123",
        "admin",
        "root",
        "test",
        "testing",
        "guest",
        "user",
        "username",
    ];
    let lower = value.to_ascii_lowercase();
    WORDS.contains(&lower.as_str())
}

/// A vendor-shaped token that is really a placeholder (`ghp_XXXX…`, `sk_live_0000…`).
fn not_a_placeholder_token(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    distinct(value) >= 6 && !lower.contains("xxxx") && !value.contains("0000000000")
}

/// A random-looking value (vendor-agnostic tokens, SAS signatures, bearer tokens).
fn random_enough(value: &str) -> bool {
    if is_placeholder_or_reference(value) {
        return false;
    }
    let len = value.chars().count();
    len >= 16 && distinct(value) >= 8 && classes(value) >= 2 && entropy(value) >= 3.0
}

/// A password that is concrete (in a URL, a connection string, a netrc line).
fn concrete_password(value: &str) -> bool {
    !is_placeholder_or_reference(value) && !is_common_word(value) && distinct(value) >= 3
}

/// The value of `name = value` with a secret-looking name.
fn assignment_value(value: &str) -> bool {
    if is_placeholder_or_reference(value) || is_common_word(value) {
        return false;
    }
    let len = value.chars().count();
    if value.chars().all(|c| c.is_ascii_digit()) {
        return false;
    }
    // Plain lower-case words (`password: required-for-login`, `token: refreshed-hourly`) are
    // prose; a value needs two character classes, or to be long and varied.
    let varied = distinct(value) >= 6;
    let mixed = classes(value) >= 2;
    varied && (mixed && len >= 8 || len >= 20 && entropy(value) >= 3.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles_and_there_are_more_than_25_kinds() {
        let _ = compiled();
        assert!(kinds().len() >= 25, "{}", kinds().len());
    }

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
                "key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmn",
                "OpenAI API key",
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
            (
                "postgres://app:Zq8vT2pL@db.internal:5432/app",
                "URL with a password",
            ),
        ];
        for (text, kind) in cases {
            assert_eq!(find_secret(text), Some(SecretKind(kind)), "{text}");
        }
    }

    #[test]
    fn the_position_is_line_and_character_column() {
        let text = "first line\nnext: é ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let hit = find_secret_at(text).unwrap();
        assert_eq!((hit.line, hit.column), (2, 9));
        assert_eq!(hit.kind, SecretKind("GitHub token"));
        assert_eq!(&text[hit.offset..hit.offset + 4], "ghp_");
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
            "api_key_env: OPENAI_API_KEY",
            "connect with postgres://app@localhost:5432/app",
            "git@github.com:owner/repo.git",
            "max_tokens: 4096",
            "commit 3f9a2c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
        ];
        for text in cases {
            assert_eq!(find_secret(text), None, "{text}");
        }
    }
}
