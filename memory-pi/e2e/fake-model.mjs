#!/usr/bin/env node
// A scripted OpenAI-compatible chat-completions server for the pimem e2e suite.
//
// Usage: node fake-model.mjs <request-log.jsonl> <port-file>
//   Listens on 127.0.0.1 (random port, written to <port-file>). Every POST .../chat/completions
//   body is appended to the log as {n, kind, body}. Replies stream as SSE (what pi sends for),
//   or plain JSON for stream:false.
//
// Replies are decided from the request body alone (never from a call counter), by kind:
//   surfacing  system prompt of pimem's side query ("relevant to a user's request"):
//              {"selected_files": [...]} = manifest files sharing a word of >= 4 letters
//              with the user query.
//   extract    pimem's extraction task ("memory extraction agent"): the first turn saves
//              the text after "REMEMBER:" in the conversation with memory add; then "Done.".
//              Without a REMEMBER: line it answers "Nothing to save.".
//   dream      pimem's dream ("memory consolidation agent"): turn 1 lists, turn 2 removes
//              the second of two entries with the same description, then summarises.
//   main       everything else. The user text after the last assistant turn may hold
//              markers [[call:NAME {json}]]; the k-th marker becomes a tool call after k-1
//              tool results, but only for tools the request declares (compaction requests
//              declare none and quote old markers). Then "TOOL_RESULT_SEEN: <last result>";
//              without markers "ECHO: <last user text>". A [[delay:MS]] marker in the current
//              turn's user text delays every reply of that turn by MS milliseconds (a long run
//              for the pi-session steering checks). Run-log markers in the turn's text:
//              [[fail]] answers HTTP 500 (pi: stopReason error), [[length]] ends with
//              finish_reason "length", [[slow:MS]] waits MS ms before answering (abort, kill).
//   tidy       /experience prepare's message ("Merge them into experiences with the
//              `experience` tool"): creates one experience from every run it lists, then
//              answers "TIDY: <tool result>".
import { appendFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";

const [logPath, portFile] = process.argv.slice(2);
let n = 0;

const textOf = (c) =>
	typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => (p && p.type === "text" ? p.text : "")).join("") : "";

function kindOf(body) {
	const all = (body.messages ?? []).map((m) => textOf(m.content)).join("\n");
	const sys = (body.messages ?? []).filter((m) => m.role === "system").map((m) => textOf(m.content)).join("\n");
	if (/relevant to a user's request/.test(sys) || /memory relevance selector/.test(all)) return "surfacing";
	if (/memory consolidation agent/.test(sys)) return "dream";
	if (/memory extraction agent/.test(all)) return "extract";
	if (!(body.tools ?? []).length && /summar/i.test(all)) return "summary";
	if (/Merge them into experiences with the `experience` tool/.test(all)) return "tidy";
	return "main";
}

/** Tool results after the last user message, in order. */
function toolResultsSinceUser(msgs) {
	const lastUser = msgs.map((m) => m.role).lastIndexOf("user");
	return msgs.slice(lastUser + 1).filter((m) => m.role === "tool").map((m) => textOf(m.content));
}

const words = (s) => new Set((s.toLowerCase().match(/[a-z]{4,}/g) ?? []));

function decide(body, kind) {
	const msgs = body.messages ?? [];
	const declared = new Set((body.tools ?? []).map((t) => t.function?.name));
	const results = toolResultsSinceUser(msgs);
	const lastUserText = textOf([...msgs].reverse().find((m) => m.role === "user")?.content);
	switch (kind) {
		case "surfacing": {
			const prompt = lastUserText;
			const query = prompt.split("=== User Query ===")[1]?.split("Respond with")[0] ?? prompt;
			const manifest = prompt.split("=== Memory Files ===")[1]?.split("=== User Query ===")[0] ?? "";
			const q = words(query);
			const picked = manifest
				.split("\n")
				.map((line) => /^\[[a-z]+\] (\S+\.md) — (.*)$/.exec(line.trim()))
				.filter((m) => m && [...words(m[2])].some((w) => q.has(w)))
				.map((m) => m[1]);
			return { kind: "text", text: JSON.stringify({ selected_files: picked }) };
		}
		case "extract": {
			if (results.length > 0) return { kind: "text", text: "Done." };
			const fact = /REMEMBER:\s*([^\n"]+)/.exec(lastUserText)?.[1]?.trim();
			if (!fact || !declared.has("memory")) return { kind: "text", text: "Nothing to save." };
			const name = fact.split(/\s+/).slice(0, 3).join(" ").replace(/[^A-Za-z0-9 ]/g, "");
			return { kind: "tool", name: "memory", args: JSON.stringify({ action: "add", name, content: `${fact}.`, type: "project" }) };
		}
		case "dream": {
			if (!declared.has("memory")) return { kind: "text", text: "No tools." };
			if (results.length === 0) return { kind: "tool", name: "memory", args: JSON.stringify({ action: "list" }) };
			if (results.length === 1) {
				// "- NAME (type, modified ISO) — description [file]"
				const seen = new Map();
				for (const line of results[0].split("\n")) {
					const m = /^- (.+) \([a-z]+, modified [^)]+\) — (.*) \[[^\]]+\]$/.exec(line);
					if (!m) continue;
					if (seen.has(m[2])) return { kind: "tool", name: "memory", args: JSON.stringify({ action: "remove", name: m[1] }) };
					seen.set(m[2], m[1]);
				}
				return { kind: "text", text: "Nothing to consolidate." };
			}
			return { kind: "text", text: `Dream: merged duplicates. ${results[results.length - 1]}` };
		}
		case "summary":
			return { kind: "text", text: "SUMMARY: the user talked about memory." };
		case "tidy": {
			if (results.length > 0 || !declared.has("experience")) return { kind: "text", text: `TIDY: ${results[results.length - 1] ?? "no tool"}` };
			const runs = [...new Set([...lastUserText.matchAll(/^(R\d+) \(/gm)].map((m) => m[1]))];
			return { kind: "tool", name: "experience", args: JSON.stringify({ action: "create", title: "E2E lessons", summary: "Runs recorded by the e2e suite.", runs }) };
		}
		default: {
			// The current turn's user text: the prompt plus any hidden message right after it.
			const lastUser = msgs.map((m) => m.role).lastIndexOf("user");
			let first = lastUser;
			while (first > 0 && msgs[first - 1].role === "user") first--;
			const prompt = msgs.slice(first, lastUser + 1).map((m) => textOf(m.content)).join("\n");
			const markers = [...prompt.matchAll(/\[\[call:([A-Za-z0-9_-]+)\s*(\{.*?\})?\]\]/gs)];
			const next = markers[results.length];
			if (next && declared.has(next[1])) return { kind: "tool", name: next[1], args: next[2] ?? "{}" };
			if (results.length > 0) return { kind: "text", text: `TOOL_RESULT_SEEN: ${results[results.length - 1]}` };
			return { kind: "text", text: `ECHO: ${lastUserText.slice(0, 120)}` };
		}
	}
}

const sse = (res, obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);

const server = createServer((req, res) => {
	let raw = "";
	req.on("data", (c) => (raw += c));
	req.on("end", () => {
		if (req.method !== "POST" || !/\/chat\/completions$/.test(req.url)) {
			res.writeHead(404, { "content-type": "application/json" });
			res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
			return;
		}
		let body;
		try {
			body = JSON.parse(raw);
		} catch {
			res.writeHead(400);
			res.end("bad json");
			return;
		}
		n += 1;
		const kind = kindOf(body);
		appendFileSync(logPath, `${JSON.stringify({ n, kind, at: Date.now(), atMs: performance.timeOrigin + performance.now(), body })}\n`);
		const d = decide(body, kind);
		const turn = kind === "main" ? turnText(body) : "";
		if (/\[\[fail\]\]/.test(turn)) {
			res.writeHead(500, { "content-type": "application/json" });
			res.end(JSON.stringify({ error: { message: "fake model failure on purpose", type: "server_error" } }));
			return;
		}
		const finish = /\[\[length\]\]/.test(turn) ? "length" : null;
		const slow = Number(/\[\[slow:(\d+)\]\]/.exec(turn)?.[1] ?? 0);
		const delay = kind === "main" ? Number(/\[\[delay:(\d+)\]\]/.exec(currentTurnText(body.messages ?? []))?.[1] ?? 0) : 0;
		const num = n;
		res.on("error", () => undefined); // pi killed or aborted mid-answer
		setTimeout(() => reply(res, body, d, finish, num), Math.max(slow, delay));
	});
});

/**
 * The current prompt's text before any tool result: the last user message, or the one before
 * it when the last is a hidden `<relevant_memories>` message. (Earlier prompts whose answer
 * failed sit right before it too, without an assistant message between: they do not count.)
 */
function turnText(body) {
	const msgs = body.messages ?? [];
	const lastUser = msgs.map((m) => m.role).lastIndexOf("user");
	if (lastUser < 0 || msgs.slice(lastUser + 1).some((m) => m.role === "tool")) return "";
	const last = textOf(msgs[lastUser].content);
	if (last.startsWith("<relevant_memories>") && msgs[lastUser - 1]?.role === "user") return textOf(msgs[lastUser - 1].content);
	return last;
}

function reply(res, body, d, finish, num) {
	{
		const id = `chatcmpl-fake-${num}`;
		const created = Math.floor(Date.now() / 1000);
		const model = body.model ?? "fake-model";
		const usage = { prompt_tokens: 100, completion_tokens: 7, total_tokens: 107 };
		const callId = `call_fake_${num}`;
		if (body.stream === false) {
			const message =
				d.kind === "tool"
					? { role: "assistant", content: null, tool_calls: [{ id: callId, type: "function", function: { name: d.name, arguments: d.args } }] }
					: { role: "assistant", content: d.text };
			res.writeHead(200, { "content-type": "application/json" });
			res.end(JSON.stringify({ id, object: "chat.completion", created, model, choices: [{ index: 0, message, finish_reason: d.kind === "tool" ? "tool_calls" : "stop" }], usage }));
			return;
		}
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
		const base = { id, object: "chat.completion.chunk", created, model };
		sse(res, { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
		if (d.kind === "tool") {
			sse(res, { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: callId, type: "function", function: { name: d.name, arguments: "" } }] }, finish_reason: null }] });
			const half = Math.floor(d.args.length / 2);
			for (const part of [d.args.slice(0, half), d.args.slice(half)]) {
				sse(res, { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: part } }] }, finish_reason: null }] });
			}
			sse(res, { ...base, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] });
		} else {
			sse(res, { ...base, choices: [{ index: 0, delta: { content: d.text }, finish_reason: null }] });
			sse(res, { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish ?? "stop" }] });
		}
		sse(res, { ...base, choices: [], usage });
		res.write("data: [DONE]\n\n");
		res.end();
	}
}

/** The current turn's user text: the last user message and the user messages right before it. */
function currentTurnText(msgs) {
	const lastUser = msgs.map((m) => m.role).lastIndexOf("user");
	let first = lastUser;
	while (first > 0 && msgs[first - 1].role === "user") first--;
	return msgs.slice(first, lastUser + 1).map((m) => textOf(m.content)).join("\n");
}


server.listen(0, "127.0.0.1", () => {
	writeFileSync(portFile, String(server.address().port));
});
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => server.close(() => process.exit(0)));
