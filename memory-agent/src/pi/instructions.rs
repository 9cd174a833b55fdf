//! The `<project_instructions>` blocks (AGENTS.md and friends) of a pi system prompt, which
//! extraction quotes (PM-67).

/// The `<project_instructions path="…">\n…</project_instructions>` blocks of a rendered
/// system prompt, verbatim and in order (PM-67).
pub fn project_instructions(system_prompt: &str) -> Vec<String> {
    const OPEN: &str = "<project_instructions";
    const CLOSE: &str = "</project_instructions>";
    let mut out = Vec::new();
    let mut rest = system_prompt;
    while let Some(start) = rest.find(OPEN) {
        let tail = &rest[start..];
        let Some(end) = tail.find(CLOSE) else { break };
        let block = &tail[..end + CLOSE.len()];
        if is_instructions_block(block) {
            out.push(block.to_owned());
            rest = &tail[end + CLOSE.len()..];
        } else {
            rest = &tail[OPEN.len()..];
        }
    }
    out
}

/// `<project_instructions` + whitespace + `path="<non-empty, no quote>">\n`.
fn is_instructions_block(block: &str) -> bool {
    let Some(after) = block.strip_prefix("<project_instructions") else {
        return false;
    };
    let trimmed = after.trim_start();
    if trimmed.len() == after.len() {
        return false; // no whitespace before path=
    }
    let Some(path_and_rest) = trimmed.strip_prefix("path=\"") else {
        return false;
    };
    match path_and_rest.find('"') {
        Some(0) | None => false,
        Some(q) => path_and_rest[q + 1..].starts_with(">\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Blocks found are verbatim substrings, in order.
        #[test]
        fn instruction_blocks_are_substrings(text in "(<project_instructions path=\"[a-z/]{0,6}\">\n[a-z ]{0,8}</project_instructions>|[a-z<>\n ]{0,10}){0,6}") {
            let blocks = project_instructions(&text);
            let mut from = 0;
            for b in &blocks {
                let at = text[from..].find(b.as_str());
                proptest::prop_assert!(at.is_some());
                from += at.unwrap_or(0) + b.len();
            }
        }
    }

    #[test]
    fn project_instruction_blocks_are_taken_verbatim() {
        let prompt = "pre\n<project_instructions path=\"/p/AGENTS.md\">\nUse tabs.\n</project_instructions>\nmid <project_instructions>bad</project_instructions>\n<project_instructions  path=\"/p/sub/AGENTS.md\">\nB\n</project_instructions>";
        assert_eq!(
            project_instructions(prompt),
            vec![
                "<project_instructions path=\"/p/AGENTS.md\">\nUse tabs.\n</project_instructions>"
                    .to_owned(),
                "<project_instructions  path=\"/p/sub/AGENTS.md\">\nB\n</project_instructions>"
                    .to_owned(),
            ]
        );
        assert!(project_instructions("none").is_empty());
        assert!(
            project_instructions("<project_instructions path=\"\">\nx</project_instructions>")
                .is_empty()
        );
    }
}
