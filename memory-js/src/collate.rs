//! `String.prototype.localeCompare`: the Unicode Collation Algorithm with the CLDR root
//! table, as Node's ICU applies it by default.

use std::cell::RefCell;
use std::cmp::Ordering;

use feruca::{Collator, Locale, Tailoring};

use crate::string::utf16_cmp;

thread_local! {
    /// The collator keeps caches between calls (`collate` takes `&mut self`): one per thread.
    static COLLATOR: RefCell<Collator> = RefCell::new(Collator::new(
        Tailoring::Cldr(Locale::Root),
        // ICU's default is "non-ignorable": punctuation and symbols are compared, not
        // skipped (`_x.md` sorts before `a.md`, `a-2.md` before `a.md`).
        false,
        // Full ties are broken below, the way a stable JavaScript sort would keep them.
        false,
    ));
}

/// `a.localeCompare(b)` as Node 22 computes it with its default (root/English) locale:
/// letters case-insensitively first (`a.md`, `B.md`, `c.md`, `Z.md`), lower case before
/// upper case on a tie (`a.md` < `A.md`), punctuation before digits before letters
/// (`_x.md` < `1.md` < `a.md`), accents after the base letter. Strings the collation cannot
/// tell apart (canonically equivalent spellings) fall back to UTF-16 order, which is what a
/// stable sort of an already UTF-16-sorted list (a `readdir().sort()` result) leaves them in.
///
/// Decision: the root collation, whatever the user's locale. pi-memory sorts with the
/// locale of the Node process, so a user with, say, a Swedish locale sees `å` files after
/// `z` there; the files on disk are the same either way, only `rebuild_index`'s order of
/// entries with an identical `modified` can differ.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    COLLATOR
        .with(|c| c.borrow_mut().collate(a, b))
        .then_with(|| utf16_cmp(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(names: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        v.sort_by(|a, b| locale_compare(a, b));
        v
    }

    #[test]
    fn file_names_sort_like_node() {
        // Node 22: ["c.md","a.md","Z.md","B.md","_x.md"].sort((a,b)=>a.localeCompare(b))
        assert_eq!(
            sorted(&["c.md", "a.md", "Z.md", "B.md", "_x.md"]),
            ["_x.md", "a.md", "B.md", "c.md", "Z.md"]
        );
        assert_eq!(
            sorted(&[
                "Z.md", "a.md.md", "c.md", "A.md", "a.md", "B.md", "a-2.md", "_x.md"
            ]),
            [
                "_x.md", "a-2.md", "a.md", "A.md", "a.md.md", "B.md", "c.md", "Z.md"
            ]
        );
    }
}
