//! Streaming over session files: large buffered reads cut on line boundaries, the cheap
//! per-file probe (header + last activity), and the forward scan for the session name.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use jiff::Timestamp;
use memchr::{memchr, memmem, memrchr};

use super::entry::{Activity, ActivityWire, SessionEntry};

/// Size of one read. Large enough to amortise syscalls, small enough to stay in cache while
/// the prefilters run over it twice.
pub(crate) const CHUNK: usize = 1 << 20;

/// Bytes read from the end of a file when looking for its last activity (grows ×4 when the
/// window holds no user/assistant message).
const TAIL_WINDOW: usize = 64 << 10;

/// Bytes read first when looking for the header (grows ×4 for a longer first line).
const HEAD_WINDOW: usize = 8 << 10;

/// Reads `r` in [`CHUNK`]-sized reads and calls `f` with regions that end on a line boundary:
/// every region ends with `\n`, except the last one when the file does not (a partial last
/// line). Lines longer than the buffer grow it. `buf` is reused scratch space.
pub(crate) fn for_each_region<R: Read>(
    r: &mut R,
    buf: &mut Vec<u8>,
    mut f: impl FnMut(&[u8]) -> ControlFlow<()>,
) -> io::Result<()> {
    if buf.len() < CHUNK {
        buf.resize(CHUNK, 0);
    }
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            let bigger = buf.len() * 2;
            buf.resize(bigger, 0);
        }
        let n = match r.read(&mut buf[filled..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            if filled > 0 {
                let _ = f(&buf[..filled]);
            }
            return Ok(());
        }
        let end = filled + n;
        match memrchr(b'\n', &buf[filled..end]) {
            None => filled = end,
            Some(i) => {
                let cut = filled + i + 1;
                if f(&buf[..cut]).is_break() {
                    return Ok(());
                }
                buf.copy_within(cut..end, 0);
                filled = end - cut;
            }
        }
    }
}

/// Bounds `(start, end)` of the line of `region` containing byte `pos`; `end` excludes `\n`.
#[inline]
pub(crate) fn line_at(region: &[u8], pos: usize) -> (usize, usize) {
    let start = memrchr(b'\n', &region[..pos]).map_or(0, |i| i + 1);
    let end = memchr(b'\n', &region[pos..]).map_or(region.len(), |i| pos + i);
    (start, end)
}

/// Whether a line holds only JSON whitespace (pi skips such lines).
#[inline]
pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// What the listing knows about a session before reading its body.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    pub(crate) path: PathBuf,
    pub(crate) id: String,
    pub(crate) cwd: String,
    pub(crate) parent_session: Option<String>,
    pub(crate) created: Option<Timestamp>,
    pub(crate) modified: Timestamp,
}

/// Reads the header and the last activity of one file; `Ok(None)` when it is not a session
/// file (first non-blank line is not a `session` header with a string id).
pub(crate) fn probe(path: &Path, buf: &mut Vec<u8>) -> io::Result<Option<Probe>> {
    let mut file = File::open(path)?;
    let meta = file.metadata()?;
    let len = meta.len();
    let Some((header_end, header)) = read_header(&mut file, len, buf)? else {
        return Ok(None);
    };
    let created = header.timestamp.as_deref().and_then(parse_iso);
    let activity = last_activity(&mut file, len, header_end, buf)?;
    let modified = activity
        .or(created)
        .or_else(|| meta.modified().ok().and_then(from_system_time))
        .unwrap_or(Timestamp::UNIX_EPOCH);
    Ok(Some(Probe {
        path: path.to_path_buf(),
        id: header.id,
        cwd: header.cwd,
        parent_session: header.parent_session,
        created,
        modified,
    }))
}

/// The header fields a listing keeps.
pub(crate) struct OwnedHeader {
    pub(crate) id: String,
    pub(crate) cwd: String,
    pub(crate) parent_session: Option<String>,
    pub(crate) timestamp: Option<String>,
}

/// Finds the first non-blank line and parses it as the header. Returns the file offset just
/// after that line too.
pub(crate) fn read_header(
    file: &mut File,
    len: u64,
    buf: &mut Vec<u8>,
) -> io::Result<Option<(u64, OwnedHeader)>> {
    let mut want = HEAD_WINDOW;
    loop {
        let n = read_at(file, 0, want, buf)?;
        let data = &buf[..n];
        let complete = n as u64 >= len;
        let mut from = 0;
        while from < data.len() {
            let nl = memchr(b'\n', &data[from..]).map(|i| from + i);
            let Some(end) = nl.or(if complete { Some(data.len()) } else { None }) else {
                break;
            };
            let line = &data[from..end];
            if !is_blank(line) {
                let header = match SessionEntry::parse(line) {
                    Ok(SessionEntry::Header(h)) => Some((
                        (end + 1).min(data.len()) as u64,
                        OwnedHeader {
                            id: h.id.into_owned(),
                            cwd: h.cwd.map(Cow::into_owned).unwrap_or_default(),
                            parent_session: h.parent_session.map(Cow::into_owned),
                            timestamp: h.timestamp.map(Cow::into_owned),
                        },
                    )),
                    _ => None,
                };
                return Ok(header);
            }
            from = end + 1;
        }
        if complete {
            return Ok(None);
        }
        want = want.saturating_mul(4);
    }
}

/// pi's "last activity": the time of the last user/assistant message with content, scanning
/// backwards from the end of the file (see the module docs of `sessions` for why the last
/// rather than the maximum).
fn last_activity(
    file: &mut File,
    len: u64,
    body_start: u64,
    buf: &mut Vec<u8>,
) -> io::Result<Option<Timestamp>> {
    let mut window = TAIL_WINDOW as u64;
    loop {
        let start = len.saturating_sub(window).max(body_start);
        let n = read_at(file, start, (len - start) as usize, buf)?;
        let mut region = &buf[..n];
        if start > body_start {
            // The first line of the window is probably cut.
            region = match memchr(b'\n', region) {
                Some(i) => &region[i + 1..],
                None => &[],
            };
        }
        if let Some(t) = last_activity_in(region) {
            return Ok(Some(t));
        }
        if start <= body_start {
            return Ok(None);
        }
        window = window.saturating_mul(4);
    }
}

/// The time of the last user/assistant message with content among the complete lines of
/// `region` (pi's activity rule, scanning backwards), if there is one.
pub(crate) fn last_activity_in(region: &[u8]) -> Option<Timestamp> {
    let mut end = region.len();
    loop {
        let line_start = memrchr(b'\n', &region[..end]).map_or(0, |i| i + 1);
        let line = &region[line_start..end];
        if !is_blank(line)
            && let Ok(w) = serde_json::from_slice::<ActivityWire<'_>>(line)
            && let Activity::Message {
                time_ms,
                entry_time,
            } = w.activity()
        {
            let t = match time_ms {
                Some(ms) => from_millis(ms),
                None => entry_time.and_then(parse_iso),
            };
            if let Some(t) = t.filter(|t| *t > Timestamp::UNIX_EPOCH) {
                return Some(t);
            }
        }
        if line_start == 0 {
            return None;
        }
        end = line_start - 1;
    }
}

/// Reads up to `want` bytes at `offset` into `buf[..n]`, returning `n` (short at EOF).
pub(crate) fn read_at(
    file: &mut File,
    offset: u64,
    want: usize,
    buf: &mut Vec<u8>,
) -> io::Result<usize> {
    if buf.len() < want {
        buf.resize(want, 0);
    }
    file.seek(SeekFrom::Start(offset))?;
    let mut n = 0;
    while n < want {
        match file.read(&mut buf[n..want]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The name set by the latest `session_info` line of a region sequence.
#[derive(Debug, Default, Clone)]
pub(crate) struct NameTracker {
    name: Option<String>,
}

impl NameTracker {
    fn finder() -> &'static memmem::Finder<'static> {
        static F: std::sync::OnceLock<memmem::Finder<'static>> = std::sync::OnceLock::new();
        F.get_or_init(|| memmem::Finder::new(b"\"session_info\""))
    }

    /// Feeds one region (lines in file order).
    pub(crate) fn feed(&mut self, region: &[u8]) {
        let finder = Self::finder();
        let mut from = 0;
        while let Some(p) = finder.find(&region[from..]) {
            let (s, e) = line_at(region, from + p);
            if let Ok(SessionEntry::SessionInfo { name, .. }) = SessionEntry::parse(&region[s..e]) {
                // Latest wins; an empty or absent name clears it (docs/pi-host.md §h).
                self.name = name.map(|n| n.trim().to_owned()).filter(|n| !n.is_empty());
            }
            from = e + 1;
            if from >= region.len() {
                break;
            }
        }
    }

    /// Continues from a known name (a cached listing reading only appended lines).
    pub(crate) fn starting_with(name: Option<String>) -> NameTracker {
        NameTracker { name }
    }

    /// The current name.
    pub(crate) fn into_name(self) -> Option<String> {
        self.name
    }
}

/// The session name of a whole file (latest `session_info` wins).
pub(crate) fn read_name(path: &Path, buf: &mut Vec<u8>) -> io::Result<Option<String>> {
    let mut file = File::open(path)?;
    let mut names = NameTracker::default();
    for_each_region(&mut file, buf, |region| {
        names.feed(region);
        ControlFlow::Continue(())
    })?;
    Ok(names.into_name())
}

/// Parses an ISO 8601 / RFC 3339 instant as pi writes it (`Date.toISOString()`).
pub(crate) fn parse_iso(s: &str) -> Option<Timestamp> {
    s.parse().ok()
}

/// An epoch-milliseconds number as JavaScript's `new Date(ms)` reads it (truncated).
pub(crate) fn from_millis(ms: f64) -> Option<Timestamp> {
    if !ms.is_finite() {
        return None;
    }
    Timestamp::from_millisecond(ms.trunc() as i64).ok()
}

pub(crate) fn from_system_time(t: SystemTime) -> Option<Timestamp> {
    Timestamp::try_from(t).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regions(data: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for_each_region(&mut &data[..], &mut buf, |r| {
            out.push(r.to_vec());
            ControlFlow::Continue(())
        })
        .unwrap();
        out
    }

    #[test]
    fn regions_end_on_newlines_and_keep_partial_tail() {
        let data = b"a\nbb\nccc";
        let r = regions(data);
        assert_eq!(r.concat(), data);
        assert!(r[..r.len() - 1].iter().all(|x| x.ends_with(b"\n")));
        assert_eq!(r.last().unwrap(), b"ccc");
    }

    #[test]
    fn lines_longer_than_a_chunk_grow_the_buffer() {
        let mut data = vec![b'x'; CHUNK * 3 + 17];
        data.push(b'\n');
        data.extend_from_slice(b"tail\n");
        let r = regions(&data);
        assert_eq!(r.concat(), data);
        assert!(r.iter().all(|x| x.ends_with(b"\n")));
    }

    #[test]
    fn line_at_finds_bounds() {
        let region = b"one\ntwo\nthree";
        assert_eq!(line_at(region, 5), (4, 7));
        assert_eq!(line_at(region, 0), (0, 3));
        assert_eq!(line_at(region, 10), (8, 13));
    }

    #[test]
    fn millis_truncate_like_javascript() {
        let t = from_millis(1_795_988_245_400.9).unwrap();
        assert_eq!(t.as_millisecond(), 1_795_988_245_400);
        assert!(from_millis(f64::NAN).is_none());
    }
}
