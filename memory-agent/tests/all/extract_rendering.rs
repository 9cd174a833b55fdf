//! Extraction rendering and prompt: VECTORS R1–R10 as table tests, the pi message converter,
//! character units (§Z 8), properties, and snapshots of the task prompt.
#![allow(clippy::unwrap_used)]

use memory_agent::ConversationLimits;
use memory_agent::extract::{
    TranscriptMessage, TranscriptToolCall, build_extract_task, render_conversation,
};
use memory_agent::pi::project_instructions;
use memory_agent::pi::transcript::from_agent_messages;
use memory_js::js_stringify;
use proptest::prelude::*;
use serde_json::{Value, json};

fn render(messages: &[Value]) -> String {
    render_conversation(
        &from_agent_messages(messages),
        &ConversationLimits::default(),
    )
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1})
}

fn assistant(blocks: Value) -> Value {
    json!({"role": "assistant", "content": blocks, "stopReason": "stop"})
}

fn tool_result(text: &str, is_error: bool) -> Value {
    json!({"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
           "content": [{"type": "text", "text": text}], "isError": is_error})
}

/// R1–R3 in one conversation: numbering follows the kept messages.
#[test]
fn r1_r2_r3_user_assistant_tool_result_lines() {
    let out = render(&[
        user("hello"),
        assistant(json!([
            {"type": "text", "text": "hi"},
            {"type": "toolCall", "id": "t1", "name": "memory", "arguments": {"action": "list"}}
        ])),
        tool_result("boom", true),
    ]);
    assert_eq!(
        out,
        "[1] user: hello\n[2] assistant: hi | tool_call: memory({\"action\":\"list\"})\n[3] tool_result: [error] boom"
    );
}

#[test]
fn r1_user_string_content() {
    assert_eq!(
        render(&[json!({"role": "user", "content": "hello"})]),
        "[1] user: hello"
    );
}

#[test]
fn r3_successful_tool_result_has_no_prefix_and_empty_results_are_kept() {
    assert_eq!(
        render(&[tool_result("ok", false), tool_result("", false)]),
        "[1] tool_result: ok\n[2] tool_result: "
    );
}

#[test]
fn r4_assistant_text_cut_at_2000() {
    let text = "a".repeat(2500);
    let out = render(&[assistant(json!([{"type": "text", "text": text}]))]);
    assert_eq!(
        out,
        format!(
            "[1] assistant: {}\n[truncated: 500 chars omitted]",
            "a".repeat(2000)
        )
    );
}

#[test]
fn r4_tool_result_cut_at_500_counts_the_error_prefix() {
    let out = render(&[tool_result(&"e".repeat(600), true)]);
    let body = format!("[error] {}", "e".repeat(600));
    assert_eq!(
        out,
        format!(
            "[1] tool_result: {}\n[truncated: 108 chars omitted]",
            &body[..500]
        )
    );
}

#[test]
fn user_text_is_never_cut() {
    let text = "u".repeat(5000);
    assert_eq!(render(&[user(&text)]), format!("[1] user: {text}"));
}

#[test]
fn r5_tool_args_cut_at_120_inside_the_parentheses() {
    // {"q":"xxx…"} is exactly 200 characters.
    let q = "x".repeat(200 - 8);
    let args = json!({ "q": q });
    assert_eq!(js_stringify(&args).len(), 200);
    let out = render(&[assistant(
        json!([{"type": "toolCall", "id": "t", "name": "grep", "arguments": args}]),
    )]);
    let json_text = js_stringify(&args);
    assert_eq!(
        out,
        format!(
            "[1] assistant: tool_call: grep({}\n[truncated: 80 chars omitted])",
            &json_text[..120]
        )
    );
}

#[test]
fn r6_images_render_as_placeholder() {
    let out = render(&[json!({"role": "user", "content": [
        {"type": "text", "text": "look"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    ]})]);
    assert_eq!(out, "[1] user: look\n[image]");
    let only_image =
        render(&[json!({"role": "user", "content": [{"type": "image", "data": "AAAA"}]})]);
    assert_eq!(only_image, "[1] user: [image]");
}

#[test]
fn r7_whole_rendering_middle_cut() {
    // "[1] user: " is 10 characters: the rendering is exactly 10 000.
    let text: String = (0..9990)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let full = format!("[1] user: {text}");
    assert_eq!(full.len(), 10_000);
    let out = render(&[user(&text)]);
    let marker = "\n[truncated: 2051 chars omitted from the middle]\n";
    assert_eq!(
        out,
        format!("{}{marker}{}", &full[..3975], &full[10_000 - 3974..])
    );
    assert_eq!(out.len(), 3975 + marker.len() + 3974);
}

#[test]
fn r7_budget_zero_disables_the_cut_and_tiny_budget_keeps_only_the_marker() {
    let msgs = from_agent_messages(&[user(&"x".repeat(100))]);
    let none = ConversationLimits {
        max_context_tokens: 0,
        ..ConversationLimits::default()
    };
    assert_eq!(render_conversation(&msgs, &none).len(), 110);
    let tiny = ConversationLimits {
        max_context_tokens: 10, // 40 units < the 51-unit marker reserve
        ..ConversationLimits::default()
    };
    assert_eq!(
        render_conversation(&msgs, &tiny),
        "\n[truncated: 110 chars omitted from the middle]\n"
    );
}

#[test]
fn r8_assistant_without_text_or_tool_calls_is_dropped() {
    let out = render(&[
        user("q"),
        assistant(json!([{"type": "thinking", "thinking": "hmm"}])),
        assistant(json!([])),
        assistant(json!("")),
        user("r"),
    ]);
    assert_eq!(out, "[1] user: q\n[2] user: r");
}

#[test]
fn r9_unknown_roles_with_text_are_user() {
    let out = render(&[
        json!({"role": "custom", "customType": "x", "content": "custom text", "display": true}),
        json!({"role": "bashExecution", "command": "ls", "output": "a.txt\nb.txt", "exitCode": 0}),
        json!({"role": "somethingNew", "content": [{"type": "text", "text": "new"}]}),
        json!({"content": "no role"}),
    ]);
    assert_eq!(
        out,
        "[1] user: custom text\n[2] user: a.txt\nb.txt\n[3] user: new\n[4] user: no role"
    );
}

#[test]
fn r10_nothing_renderable() {
    let msgs = [
        json!({"role": "system", "content": "", "sections": {"memory_index": "x"}}),
        json!({"role": "compactionSummary", "summary": "s"}),
        json!(null),
        json!(42),
        json!({"role": "user", "content": ""}),
        assistant(json!([{"type": "thinking", "thinking": "…"}])),
    ];
    assert!(from_agent_messages(&msgs).is_empty());
}

#[test]
fn converter_keeps_tool_name_and_error_flag_only_when_true() {
    let t = from_agent_messages(&[
        json!({"role": "toolResult", "toolName": "memory", "content": [{"type": "text", "text": "x"}], "isError": "yes"}),
    ]);
    assert_eq!(
        t,
        vec![TranscriptMessage::ToolResult {
            text: "x".into(),
            tool_name: Some("memory".into()),
            is_error: false,
        }]
    );
}

#[test]
fn tool_call_arguments_are_stringified_like_javascript() {
    let t = from_agent_messages(&[assistant(json!([
        {"type": "toolCall", "id": "1", "name": "a", "arguments": {"n": 1.0, "big": 1e21, "small": 1e-7, "f": 0.5, "s": "q\"\n"}},
        {"type": "toolCall", "id": "2", "name": "b"},
        {"type": "toolCall", "id": "3", "name": "c", "arguments": "raw"},
        {"type": "toolCall", "id": "4", "arguments": {}}
    ]))]);
    let TranscriptMessage::Assistant { tool_calls, .. } = &t[0] else {
        panic!("not an assistant message: {t:?}");
    };
    let got: Vec<(&str, &str)> = tool_calls
        .iter()
        .map(|c| (c.name.as_str(), c.args.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "a",
                r#"{"big":1e+21,"f":0.5,"n":1,"s":"q\"\n","small":1e-7}"#
            ),
            ("b", "{}"),
            ("c", "\"raw\""),
        ]
    );
}

#[test]
fn javascript_number_formatting() {
    let cases = [
        (json!(0), "0"),
        (json!(-0.0), "0"),
        (json!(42), "42"),
        (json!(-3), "-3"),
        (json!(1.5), "1.5"),
        (json!(100.0), "100"),
        (json!(123456789012345680000.0), "123456789012345680000"),
        (json!(1e21), "1e+21"),
        (json!(1.25e22), "1.25e+22"),
        (json!(0.000001), "0.000001"),
        (json!(0.0000001), "1e-7"),
        (json!(-2.5e-8), "-2.5e-8"),
        (json!(0.1), "0.1"),
        (json!(u64::MAX), "18446744073709552000"),
    ];
    for (value, want) in cases {
        assert_eq!(js_stringify(&value), want, "{value:?}");
    }
}

/// §Z 8: limits count UTF-16 units; an astral character is never split.
#[test]
fn z8_utf16_units_and_no_split_characters() {
    // 1999 ASCII + one emoji (2 units) = 2001 units: over 2000 by one. JavaScript would cut
    // inside the surrogate pair; we leave the emoji out whole and count 2 units omitted.
    let text = format!("{}😀", "a".repeat(1999));
    let out = render(&[assistant(json!([{"type": "text", "text": text}]))]);
    assert_eq!(
        out,
        format!(
            "[1] assistant: {}\n[truncated: 2 chars omitted]",
            "a".repeat(1999)
        )
    );
    // 2000 BMP non-ASCII characters are 2000 units: no cut (bytes would be 6000).
    let cjk = "字".repeat(2000);
    let out = render(&[assistant(json!([{"type": "text", "text": cjk}]))]);
    assert_eq!(out, format!("[1] assistant: {cjk}"));
    // 1000 emoji are 2000 units: no cut; 1001 are cut to 1000.
    let emoji = "😀".repeat(1001);
    let out = render(&[assistant(json!([{"type": "text", "text": emoji}]))]);
    assert_eq!(
        out,
        format!(
            "[1] assistant: {}\n[truncated: 2 chars omitted]",
            "😀".repeat(1000)
        )
    );
}

#[test]
fn agents_md_blocks_are_taken_verbatim_from_the_system_prompt() {
    let system = "You are pi.\n<project_instructions path=\"/w/AGENTS.md\">\nUse pnpm.\n</project_instructions>\nmiddle\n<project_instructions path=\"/w/sub/AGENTS.md\">\nNo mocks.\n</project_instructions>\n<project_instructions path=\"/broken\">never closed";
    assert_eq!(
        project_instructions(system),
        vec![
            "<project_instructions path=\"/w/AGENTS.md\">\nUse pnpm.\n</project_instructions>",
            "<project_instructions path=\"/w/sub/AGENTS.md\">\nNo mocks.\n</project_instructions>",
        ]
    );
    assert!(project_instructions("no blocks").is_empty());
}

fn sample_turn() -> Vec<TranscriptMessage> {
    from_agent_messages(&[
        user("Deploy to staging. The SSH port is 2222 there, not 22."),
        assistant(json!([
            {"type": "thinking", "thinking": "Let me check memory."},
            {"type": "text", "text": "Checking what I know about staging."},
            {"type": "toolCall", "id": "t1", "name": "memory", "arguments": {"action": "search", "query": "staging"}}
        ])),
        json!({"role": "toolResult", "toolCallId": "t1", "toolName": "memory",
               "content": [{"type": "text", "text": "No matches in memory."}], "isError": false}),
        assistant(json!([
            {"type": "toolCall", "id": "t2", "name": "bash", "arguments": {"command": "ssh -p 22 staging"}}
        ])),
        tool_result(
            "ssh: connect to host staging port 22: Connection refused",
            true,
        ),
        user("I told you: port 2222. Always use -p 2222 for staging."),
        assistant(json!([{"type": "text", "text": "Sorry — deployed with ssh -p 2222."}])),
    ])
}

#[test]
fn snapshot_extract_task_without_agents_md() {
    let task = build_extract_task(&sample_turn(), &[], &ConversationLimits::default());
    assert!(!task.contains("## AGENTS.md Rules"));
    insta::assert_snapshot!(task);
}

#[test]
fn snapshot_extract_task_with_agents_md() {
    let blocks = vec![
        "<project_instructions path=\"/w/app/AGENTS.md\">\nDeploy only with `make deploy`.\n</project_instructions>".to_owned(),
    ];
    let task = build_extract_task(&sample_turn(), &blocks, &ConversationLimits::default());
    let rules = task.find("## AGENTS.md Rules").unwrap();
    let conversation = task.find("=== Conversation ===").unwrap();
    assert!(rules < conversation, "rules come before the conversation");
    insta::assert_snapshot!(task);
}

#[test]
fn snapshot_rendering_of_a_cut_conversation() {
    let mut msgs = sample_turn();
    msgs.insert(
        4,
        TranscriptMessage::ToolResult {
            text: "log line\n".repeat(300),
            tool_name: Some("bash".into()),
            is_error: false,
        },
    );
    msgs.push(TranscriptMessage::Assistant {
        text: String::new(),
        tool_calls: vec![TranscriptToolCall {
            name: "memory".into(),
            args: js_stringify(&json!({"action": "add", "name": "Staging SSH port",
                "content": "staging SSH listens on 2222, not 22. Always pass -p 2222; port 22 is closed and the connection is refused."})),
        }],
    });
    let limits = ConversationLimits {
        max_context_tokens: 150, // 600 units: forces the middle cut
        ..ConversationLimits::default()
    };
    insta::assert_snapshot!(render_conversation(&msgs, &limits));
}

fn units(s: &str) -> usize {
    s.encode_utf16().count()
}

proptest! {
    /// The per-message cut keeps a prefix of whole characters and counts exactly what it
    /// dropped, in UTF-16 units.
    #[test]
    fn assistant_cut_is_an_exact_prefix(text in "\\PC{0,60}", max in 1usize..40) {
        let msgs = vec![TranscriptMessage::Assistant { text: text.clone(), tool_calls: vec![] }];
        let limits = ConversationLimits { max_assistant_chars: max, max_tool_result_chars: 0, max_context_tokens: 0 };
        let out = render_conversation(&msgs, &limits);
        let body = out.strip_prefix("[1] assistant: ").unwrap();
        if units(&text) <= max {
            prop_assert_eq!(body, text.as_str());
        } else {
            let (head, marker) = body.rsplit_once("\n[truncated: ").unwrap();
            prop_assert!(text.starts_with(head));
            prop_assert!(units(head) <= max && units(head) + 1 >= max);
            let omitted: usize = marker.strip_suffix(" chars omitted]").unwrap().parse().unwrap();
            prop_assert_eq!(units(head) + omitted, units(&text));
        }
    }

    /// The middle cut keeps a head and a tail of the full rendering, stays within the budget
    /// (for budgets above the marker reserve) and counts the omitted units exactly.
    #[test]
    fn middle_cut_keeps_head_and_tail(texts in prop::collection::vec("\\PC{0,80}", 1..6), tokens in 13usize..60) {
        let msgs: Vec<TranscriptMessage> = texts.iter().map(|t| TranscriptMessage::User { text: t.clone() }).collect();
        let full = render_conversation(&msgs, &ConversationLimits { max_context_tokens: 0, ..ConversationLimits::default() });
        let limits = ConversationLimits { max_context_tokens: tokens, ..ConversationLimits::default() };
        let out = render_conversation(&msgs, &limits);
        let max = tokens * 4;
        if units(&full) <= max {
            prop_assert_eq!(out, full);
        } else {
            prop_assert!(units(&out) <= max);
            let (head, rest) = out.split_once("\n[truncated: ").unwrap();
            let (count, tail) = rest.split_once(" chars omitted from the middle]\n").unwrap();
            prop_assert!(full.starts_with(head));
            prop_assert!(full.ends_with(tail));
            let omitted: usize = count.parse().unwrap();
            prop_assert_eq!(units(head) + omitted + units(tail), units(&full));
        }
    }

    /// JavaScript number spelling round-trips exactly (parsed with Rust's correctly rounded
    /// float parser).
    #[test]
    fn js_numbers_round_trip(f in any::<f64>().prop_filter("finite", |f| f.is_finite())) {
        let s = js_stringify(&json!(f));
        let back: f64 = s.parse().unwrap();
        prop_assert!(back == f, "{} -> {} -> {}", f, s, back);
        prop_assert!(!s.contains(".0e") && !s.ends_with(".0"), "{}", s);
    }

    /// Every JSON value stringifies to JSON that parses back to an equal value (numbers
    /// compared to the last bit or two: serde_json's default float parser is not correctly
    /// rounded; the exact property is the one above).
    #[test]
    fn js_stringify_round_trips(v in arb_json()) {
        let s = js_stringify(&v);
        let back: Value = serde_json::from_str(&s).unwrap();
        prop_assert!(json_eq(&v, &back), "{} vs {}", v, back);
    }
}

fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            // Subnormals carry fewer significant bits, so a relative bound cannot hold there.
            x == y
                || (x - y).abs() <= x.abs().max(y.abs()) * 4.0 * f64::EPSILON
                || (x - y).abs() <= f64::MIN_POSITIVE
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{0,4}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
