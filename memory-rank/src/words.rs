//! Word lists: stopwords, everyday words, CJK stop characters.

use std::sync::OnceLock;

use rustc_hash::FxHashSet;

use crate::stem::stem_in_place;

/// Whether a stemmed word is the stem of an everyday word (so `takes` counts like `take`).
pub(crate) fn is_generic_stem(stem: &str) -> bool {
    static STEMS: OnceLock<FxHashSet<String>> = OnceLock::new();
    STEMS
        .get_or_init(|| {
            GENERIC
                .iter()
                .map(|w| {
                    let mut s = (*w).to_owned();
                    stem_in_place(&mut s);
                    s
                })
                .collect()
        })
        .contains(stem)
}

pub(crate) fn is_short_number(w: &str) -> bool {
    w.len() <= 2 && w.bytes().all(|b| b.is_ascii_digit())
}

pub(crate) fn is_stopword(w: &str) -> bool {
    static SET: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    // Every stopword is short ASCII: most tokens are rejected without hashing.
    w.len() <= 7
        && SET
            .get_or_init(|| STOPWORDS.iter().copied().collect())
            .contains(w)
}

/// English function words and chat filler (sorted, for review).
pub(crate) const STOPWORDS: &[&str] = &[
    "about", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been",
    "being", "but", "by", "can", "could", "did", "didn", "do", "does", "doesn", "doing", "don",
    "for", "from", "had", "has", "have", "he", "hello", "her", "here", "hey", "hi", "him", "his",
    "how", "if", "im", "in", "into", "is", "isn", "it", "its", "ll", "me", "might", "my", "no",
    "not", "now", "of", "ok", "okay", "on", "or", "our", "please", "re", "she", "should", "so",
    "some", "than", "thank", "thanks", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "those", "to", "too", "us", "ve", "very", "was", "we", "were", "what", "when",
    "where", "which", "who", "why", "will", "with", "would", "you", "your",
];

/// Everyday words of prompts (verbs of asking and doing, vague nouns and adjectives) and
/// common file extensions (`main.rs` keeps its full-weight whole token): kept,
/// but a query counts them [`GENERIC_WEIGHT`](crate::GENERIC_WEIGHT). A memory store is too small to learn that
/// "write" or "time" say little about the topic, so their IDF alone would overrate them
/// (sorted, for review; looked up through a set of their stems).
pub(crate) const GENERIC: &[&str] = &[
    "add",
    "another",
    "anything",
    "ask",
    "back",
    "bad",
    "best",
    "better",
    "big",
    "bit",
    "change",
    "check",
    "come",
    "convert",
    "create",
    "describe",
    "different",
    "done",
    "each",
    "easy",
    "enough",
    "even",
    "ever",
    "every",
    "example",
    "explain",
    "few",
    "find",
    "fine",
    "first",
    "fix",
    "follow",
    "get",
    "give",
    "go",
    "going",
    "good",
    "great",
    "happen",
    "help",
    "idea",
    "instead",
    "js",
    "keep",
    "kind",
    "know",
    "last",
    "later",
    "like",
    "little",
    "long",
    "look",
    "lot",
    "lots",
    "make",
    "many",
    "maybe",
    "md",
    "mean",
    "more",
    "most",
    "much",
    "need",
    "new",
    "next",
    "nice",
    "one",
    "only",
    "other",
    "out",
    "over",
    "own",
    "part",
    "put",
    "py",
    "quick",
    "quickly",
    "really",
    "right",
    "rs",
    "same",
    "say",
    "see",
    "seem",
    "seems",
    "set",
    "show",
    "simple",
    "since",
    "small",
    "something",
    "start",
    "still",
    "stuff",
    "sure",
    "take",
    "tell",
    "thing",
    "things",
    "think",
    "time",
    "try",
    "ts",
    "two",
    "txt",
    "understand",
    "up",
    "use",
    "used",
    "using",
    "want",
    "way",
    "well",
    "while",
    "work",
    "works",
    "write",
    "wrong",
];

/// Chinese single characters that carry no topic (particles, pronouns, question words).
pub(crate) const CJK_STOP_UNIGRAMS: &[char] = &[
    '的', '了', '是', '在', '我', '你', '他', '她', '它', '们', '这', '那', '有', '和', '与', '就',
    '不', '也', '都', '要', '把', '吗', '呢', '吧', '啊', '个', '一', '么', '什', '怎', '如', '何',
    '请', '帮', '能', '会', '可', '以', '到', '说', '对', '被', '给', '让', '还', '没', '很', '再',
    '又', '得', '地', '着', '过', '下', '上',
];

/// Chinese particles that end a word: no bigram spans them (`的超` in `MySQL的超时`).
pub(crate) const CJK_PARTICLES: &[char] = &['的', '了', '吗', '呢', '吧', '啊'];

/// Chinese two-character function words.
pub(crate) const CJK_STOP_BIGRAMS: &[&str] = &[
    "什么", "怎么", "如何", "可以", "我们", "你们", "他们", "这个", "那个", "一下", "帮我", "请问",
    "是不", "不是", "没有", "为什", "是什", "一个", "的时", "时候", "怎样", "能不", "不能", "的话",
];
