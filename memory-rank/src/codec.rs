//! The byte primitives of [`LexicalIndex::encode`](crate::LexicalIndex::encode): LEB128
//! varints, length-prefixed UTF-8 strings, and a reader that checks every length against
//! the bytes left. Public so a host persisting data around an index (memory-agent's live
//! index sidecar) encodes its own records the same way and decodes them with the same
//! checks, instead of keeping a second copy of the codec.
//!
//! Decision: the reader's errors are `&'static str` descriptions of the damage; each format
//! wraps them in its own error type (e.g. [`DecodeError::Damaged`](crate::DecodeError)).
//!
//! ```
//! use memory_rank::codec::{ByteReader, put_str, put_varint};
//! let mut out = Vec::new();
//! put_varint(&mut out, 300);
//! put_str(&mut out, "café");
//! let mut r = ByteReader::new(&out);
//! assert_eq!(r.varint(), Ok(300));
//! assert_eq!(r.str(), Ok("café"));
//! assert!(r.is_at_end());
//! ```

/// Appends `v` as an unsigned LEB128 varint (7 bits per byte, low bits first).
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `s` as its byte length (varint) followed by its UTF-8 bytes.
pub fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// Reads what [`put_varint`] and [`put_str`] wrote, failing (never panicking) on bytes that
/// end early, varints longer than 64 bits, counts larger than the input and invalid UTF-8.
#[derive(Debug, Clone)]
pub struct ByteReader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> ByteReader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        ByteReader { bytes, pos: 0 }
    }

    /// The offset of the next byte to read.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Whether every byte has been read.
    pub fn is_at_end(&self) -> bool {
        self.pos == self.bytes.len()
    }

    /// One byte.
    pub fn byte(&mut self) -> Result<u8, &'static str> {
        let b = *self.bytes.get(self.pos).ok_or("ends early")?;
        self.pos += 1;
        Ok(b)
    }

    /// One varint.
    pub fn varint(&mut self) -> Result<u64, &'static str> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("number too long")
    }

    /// One varint that must fit in a `u32`.
    pub fn u32(&mut self) -> Result<u32, &'static str> {
        u32::try_from(self.varint()?).map_err(|_| "number too large")
    }

    /// A count of items each at least `min_size` bytes long, so a damaged count cannot make
    /// the caller allocate more than the input could hold.
    pub fn count(&mut self, min_size: usize) -> Result<usize, &'static str> {
        let n = usize::try_from(self.varint()?).map_err(|_| "count too large")?;
        if n.saturating_mul(min_size.max(1)) > self.bytes.len() - self.pos {
            return Err("count larger than the input");
        }
        Ok(n)
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or("ends early")?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// A length-prefixed UTF-8 string.
    pub fn str(&mut self) -> Result<&'a str, &'static str> {
        let n = self.count(1)?;
        std::str::from_utf8(self.take(n)?).map_err(|_| "invalid UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn varints_and_strings_round_trip(nums in proptest::collection::vec(any::<u64>(), 0..20), s in ".*") {
            let mut out = Vec::new();
            for &n in &nums {
                put_varint(&mut out, n);
            }
            put_str(&mut out, &s);
            let mut r = ByteReader::new(&out);
            for &n in &nums {
                prop_assert_eq!(r.varint(), Ok(n));
            }
            prop_assert_eq!(r.str(), Ok(s.as_str()));
            prop_assert!(r.is_at_end());
        }

        #[test]
        fn any_bytes_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut r = ByteReader::new(&bytes);
            while !r.is_at_end() {
                if r.str().is_err() {
                    break;
                }
            }
        }
    }

    #[test]
    fn damage_is_named() {
        assert_eq!(ByteReader::new(&[0x80]).varint(), Err("ends early"));
        assert_eq!(
            ByteReader::new(&[0xff; 11]).varint(),
            Err("number too long")
        );
        assert_eq!(
            ByteReader::new(&[5, b'a']).str(),
            Err("count larger than the input")
        );
        assert_eq!(ByteReader::new(&[1, 0xff]).str(), Err("invalid UTF-8"));
        assert_eq!(
            ByteReader::new(&[0x80, 0x80, 0x80, 0x80, 0x10]).u32(),
            Err("number too large")
        );
    }
}
