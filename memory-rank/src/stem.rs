//! The light English stemmer.

/// How words are reduced to stems (the same at index and query time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Stemmer {
    /// No stemming: words are matched as written (lowercased).
    None,
    /// The light suffix stripper (one suffix, see `stem_light`).
    #[default]
    Light,
}

/// Stems `w` (lowercase) in place.
pub(crate) fn stem_in_place(w: &mut String, stemmer: Stemmer) {
    match stemmer {
        Stemmer::None => {}
        Stemmer::Light => stem_light(w),
    }
}

/// A light suffix stripper for lowercase ASCII words; other words are left alone.
///
/// One suffix at most (`-ies`→`-y`, `-sses`→`-ss`, `-xes`/`-ches`/`-shes`/`-zes`→ drop `es`,
/// `-s` unless `-ss`/`-us`/`-is`, `-ing`, `-ed` unless `-eed`; the stem keeps a vowel), then a
/// doubled final consonant is undoubled after `-ing`/`-ed` (`running`→`run`, but `installed`
/// keeps `ll`), then a final `-e` is dropped, so `cache`, `caches`, `caching` and `cached` all
/// become `cach`. Consistency between index and query matters, not linguistics.
fn stem_light(w: &mut String) {
    if w.len() < 3 || !w.bytes().all(|b| b.is_ascii_lowercase()) {
        return;
    }
    let has_vowel = |s: &str| s.bytes().any(|b| b"aeiouy".contains(&b));
    let mut verbal = false;
    if w.len() == 3 {
        // Only a plural `s` (`ids`, `ops`); then the final-e rule below.
        if w.ends_with('s') && !["ss", "us", "is"].iter().any(|s| w.ends_with(s)) {
            w.pop();
        }
    } else if w.ends_with("ies") && w.len() > 4 {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if ["sses", "xes", "ches", "shes", "zes"]
        .iter()
        .any(|s| w.ends_with(s))
    {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !["ss", "us", "is"].iter().any(|s| w.ends_with(s)) {
        w.truncate(w.len() - 1);
    } else if w.ends_with("ing") && has_vowel(&w[..w.len() - 3]) && w.len() >= 5 {
        w.truncate(w.len() - 3);
        verbal = true;
    } else if w.ends_with("ed") && !w.ends_with("eed") && has_vowel(&w[..w.len() - 2]) {
        w.truncate(w.len() - 2);
        verbal = true;
    }
    let b = w.as_bytes();
    if verbal
        && b.len() >= 3
        && b[b.len() - 1] == b[b.len() - 2]
        && !b"aeioulsz".contains(&b[b.len() - 1])
    {
        w.pop();
    }
    // `use` is the one frequent three-letter word whose inflections (`using`, `used`) would
    // otherwise stem differently.
    if (w.len() > 3 || w == "use") && w.ends_with('e') && !w.ends_with("ee") {
        w.pop();
    }
}
