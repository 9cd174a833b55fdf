//! Word lists: stopwords, everyday words, CJK stop characters.

use std::sync::OnceLock;

use rustc_hash::FxHashSet;

use crate::stem::{Stemmer, stem_in_place};

/// Whether a stemmed word is the stem of an everyday word (so `takes` counts like `take`).
pub(crate) fn is_generic_stem(stem: &str, stemmer: Stemmer) -> bool {
    static STEMS: [OnceLock<FxHashSet<String>>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = match stemmer {
        Stemmer::None => 0,
        Stemmer::Light => 1,
    };
    STEMS[slot]
        .get_or_init(|| {
            GENERIC
                .iter()
                .map(|w| {
                    let mut s = (*w).to_owned();
                    stem_in_place(&mut s, stemmer);
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

/// Groups of words that stand for each other in coding-agent prompts and memories (general
/// software vocabulary, not any one project's): a query word also matches its group's other
/// words, at [`SYNONYM_WEIGHT`](crate::SYNONYM_WEIGHT). A multi-word member counts by its
/// last word.
pub(crate) const SYNONYMS: &[&[&str]] = &[
    &["database", "db"],
    &["postgres", "postgresql", "psql"],
    &["kubernetes", "k8s", "kubectl"],
    &["release", "tag"],
    &["config", "configuration", "settings"],
    &["env", "environment"],
    &["pr", "mr"],
    &[
        "login",
        "signin",
        "sso",
        "authenticate",
        "authentication",
        "auth",
    ],
    &["secret", "credential", "password"],
    &["error", "exception"],
    &["slow", "latency", "performance", "perf"],
    &["doc", "documentation", "wiki", "readme"],
    &["install", "setup"],
    &["upgrade", "bump"],
    &["delete", "remove", "erase", "purge"],
    &["worker", "consumer"],
    &["cron", "schedule", "scheduler", "periodic"],
    &["email", "mail"],
    &["notification", "notify"],
    &["message", "msg"],
    &["log", "logger", "logging"],
    &["trace", "tracing", "span"],
    &["alert", "pager", "pagerduty", "oncall"],
    &["rollback", "revert", "undo"],
    &["ci", "pipeline"],
    &["docker", "container"],
    &["endpoint", "route", "handler"],
    &[
        "translation",
        "i18n",
        "internationalization",
        "locale",
        "localization",
        "l10n",
    ],
    &["permission", "role", "authorization", "acl"],
    &["tenant", "organization", "org"],
    &["limit", "quota", "throttle"],
    &["retry", "backoff"],
    &["timeout", "deadline"],
    &["memory", "ram"],
    &["accessibility", "a11y", "aria"],
    &["pagination", "paging", "paginate"],
    &["export", "download"],
    &["webhook", "callback"],
    &["payment", "charge"],
    &["invoice", "billing", "receipt"],
    &["signature", "hmac"],
    &["flaky", "intermittent"],
    &["benchmark", "bench"],
    &["font", "typeface"],
    &["format", "formatting", "formatter"],
    &["test", "spec"],
    &["mock", "fake", "stub"],
    &["token", "jwt"],
    &["ssh", "bastion"],
    &["migration", "schema"],
    &["queue", "broker"],
];

/// Chinese words of software work and their English translations: a Chinese query also
/// asks for the English words and an English query for the Chinese ones, at
/// [`TRANSLATION_WEIGHT`](crate::TRANSLATION_WEIGHT).
pub(crate) const GLOSSARY: &[(&str, &[&str])] = &[
    ("数据库", &["database", "db"]),
    ("部署", &["deploy"]),
    ("发版", &["release"]),
    ("测试", &["test"]),
    ("环境", &["environment"]),
    ("生产", &["production", "prod"]),
    ("线上", &["production", "prod"]),
    ("日志", &["log", "logging"]),
    ("报错", &["error"]),
    ("错误", &["error"]),
    ("超时", &["timeout"]),
    ("迁移", &["migration"]),
    ("配置", &["config"]),
    ("注释", &["comment"]),
    ("代码", &["code"]),
    ("接口", &["api", "endpoint"]),
    ("权限", &["permission"]),
    ("用户", &["user"]),
    ("邮件", &["email"]),
    ("邮箱", &["email"]),
    ("手续费", &["fee"]),
    ("费用", &["fee", "cost"]),
    ("金额", &["amount", "money"]),
    ("价格", &["price"]),
    ("司机", &["driver"]),
    ("乘客", &["rider"]),
    ("地图", &["map"]),
    ("模拟器", &["emulator", "simulator"]),
    ("安卓", &["android"]),
    ("队列", &["queue"]),
    ("任务", &["task", "job"]),
    ("时区", &["timezone"]),
    ("本地", &["local"]),
    ("启动", &["start"]),
    ("后端", &["backend"]),
    ("依赖", &["dependency"]),
    ("升级", &["upgrade"]),
    ("回滚", &["rollback"]),
    ("监控", &["monitoring", "metrics"]),
    ("告警", &["alert"]),
    ("报警", &["alert"]),
    ("备份", &["backup"]),
    ("恢复", &["restore"]),
    ("上传", &["upload"]),
    ("下载", &["download"]),
    ("导出", &["export"]),
    ("报表", &["report"]),
    ("模型", &["model"]),
    ("训练", &["training", "train"]),
    ("数据集", &["dataset"]),
    ("分支", &["branch"]),
    ("合并", &["merge"]),
    ("评审", &["review"]),
    ("重试", &["retry"]),
    ("性能", &["performance"]),
    ("密码", &["password"]),
    ("密钥", &["secret", "key"]),
    ("加密", &["encryption"]),
    ("签名", &["signature"]),
    ("支付", &["payment"]),
    ("退款", &["refund"]),
    ("汇率", &["fx", "exchange"]),
    ("余额", &["balance"]),
    ("账户", &["account"]),
    ("文件", &["file"]),
    ("服务", &["service"]),
    ("消费", &["consumer"]),
    ("离线", &["offline"]),
    ("位置", &["location"]),
    ("网络", &["network"]),
    ("中文", &["chinese"]),
    ("英文", &["english"]),
    ("脱敏", &["mask", "pii"]),
    ("手机号", &["phone"]),
    ("排队", &["queue"]),
    ("链路", &["trace"]),
    ("面板", &["dashboard"]),
];
