//! The memory tool's text for `search` with `scope: "sessions"`.

use std::fmt::Write as _;

use super::search::{Segment, SessionHit, SessionSearch};

/// Text returned when nothing matched (PM-41).
pub const NO_MATCHES: &str = "No matches in sessions.";

/// Output cap, as pi's `truncateHead` was applied by the original (50 000 bytes, 2 000 lines).
const MAX_BYTES: usize = 50_000;
const MAX_LINES: usize = 2_000;

/// Renders a search result as the tool's text.
///
/// Layout (extends pi-memory 1.3.4's `Found N match(es):` / `## Session <file> (<date>)` /
/// `…matched: "<text>"…` blocks; the ±50-message `context:` listing is replaced by the
/// session's metadata, and each segment is one whole matching line):
///
/// ```text
/// Found 2 match(es) in 1 session(s):
///
/// ## Session 2026-11-29T21-37-25-309Z_01a2….jsonl (2026-11-29)
/// name: auth refactor            (only for named sessions)
/// id: 01a2293d-cb3c-7247-8f6b-aff8ab192f13
/// cwd: /home/u/app
/// path: /home/u/.pi/agent/sessions/--home-u-app--/2026-11-29T21-37-25-309Z_01a2….jsonl
/// activity: 2026-11-29T21:40:02.118Z
/// …matched (user): "fix the deadlock in payment"…
/// …matched (assistant; chars 1003-3002 of 5000): "…"…
/// (more matches in this session not shown)
/// ```
///
/// A final `(Stopped after N sessions with matches; M older session(s) not searched.)` line
/// marks a search that hit `max_sessions`. Output beyond 50 000 bytes or 2 000 lines is cut
/// at a line boundary and ends with an `[Output truncated …]` line.
pub fn render_session_results(result: &SessionSearch) -> String {
    if result.hits.is_empty() {
        return NO_MATCHES.to_owned();
    }
    let total: usize = result.hits.iter().map(|h| h.segments.len()).sum();
    let mut out = format!(
        "Found {total} match(es) in {} session(s):",
        result.hits.len()
    );
    for hit in &result.hits {
        out.push_str("\n\n");
        render_hit(&mut out, hit);
    }
    if result.limit_reached {
        let _ = write!(
            out,
            "\n\n(Stopped after {} sessions with matches; {} older session(s) not searched.)",
            result.hits.len(),
            result.sessions_total - result.sessions_searched
        );
    }
    cap(out)
}

fn render_hit(out: &mut String, hit: &SessionHit) {
    let info = &hit.info;
    let file = info
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let _ = write!(out, "## Session {file} ({})", date(info.modified));
    if let Some(name) = &info.name {
        let _ = write!(out, "\nname: {name}");
    }
    let _ = write!(
        out,
        "\nid: {}\ncwd: {}\npath: {}\nactivity: {}",
        info.id,
        info.cwd,
        info.path.display(),
        iso_millis(info.modified)
    );
    for s in &hit.segments {
        out.push('\n');
        render_segment(out, s);
    }
    if hit.truncated {
        out.push_str("\n(more matches in this session not shown)");
    }
}

fn render_segment(out: &mut String, s: &Segment) {
    if s.truncated {
        let shown = s.text.chars().count();
        let _ = write!(
            out,
            "…matched ({}; chars {}-{} of {}): \"{}\"…",
            s.source,
            s.char_offset + 1,
            s.char_offset + shown,
            s.line_chars,
            s.text
        );
    } else {
        let _ = write!(out, "…matched ({}): \"{}\"…", s.source, s.text);
    }
}

pub(crate) use memory_core::clock::{iso_date as date, iso_millis};

/// Keeps whole lines from the start within [`MAX_BYTES`] and [`MAX_LINES`].
fn cap(out: String) -> String {
    let lines = out.split('\n').count();
    if out.len() <= MAX_BYTES && lines <= MAX_LINES {
        return out;
    }
    let mut end = 0;
    let mut kept = 0;
    for (i, line) in out.split('\n').enumerate() {
        let next = if i == 0 {
            line.len()
        } else {
            end + 1 + line.len()
        };
        if next > MAX_BYTES || i >= MAX_LINES {
            break;
        }
        end = next;
        kept = i + 1;
    }
    let mut s = out[..end].to_owned();
    let _ = write!(
        s,
        "\n[Output truncated: showing {kept} of {lines} lines; narrow the query to see more.]"
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;

    #[test]
    fn iso_millis_matches_javascript() {
        let t = Timestamp::from_millisecond(1_795_988_245_400).unwrap();
        assert_eq!(iso_millis(t), "2026-11-29T21:37:25.400Z");
        assert_eq!(date(t), "2026-11-29");
        assert_eq!(
            iso_millis(Timestamp::UNIX_EPOCH),
            "1970-01-01T00:00:00.000Z"
        );
    }

    #[test]
    fn cap_keeps_whole_lines() {
        let long = vec!["x".repeat(99); 1000].join("\n");
        let c = cap(long);
        assert!(c.len() <= MAX_BYTES + 100);
        let body: Vec<&str> = c.lines().collect();
        assert!(body[..body.len() - 1].iter().all(|l| l.len() == 99));
        assert_eq!(body.len() - 1, 500);
        assert!(
            body.last()
                .unwrap()
                .starts_with("[Output truncated: showing 500 of 1000")
        );
        let many = vec!["y"; 2500].join("\n");
        let c = cap(many);
        assert_eq!(c.lines().count(), MAX_LINES + 1);
    }
}
