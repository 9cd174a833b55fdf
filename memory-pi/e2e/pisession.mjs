// pi-session in pimem (issue 10), end to end in real pi 1.6.0 with the scripted model:
// search-session in print, json and rpc modes; cwd authorization; @s:/@as: expansion in
// print and rpc mode (and not for extension input); ask-session (accepted → the target file
// gains the exchange → the caller receives the report turn; busy; steered; handled;
// refusals; a reload drops late reports); and the TUI in a real terminal (tmux): type
// `@s:` plus part of a name, see the candidates, select, submit, and find the sentence in
// the model request. Run by run.mjs, which passes its harness; the checks are prefixed PS.
//
// The test agent directory installs pimem and pisession-ext/ (an `input` handler consuming
// [[handle-me]], and /e2e-send for extension-sourced input) as packages, so that the target
// pi of an ask loads them by default, as a user's installed packages would be.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RpcPi } from "./rpc.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** A JSON string escape of every character of `s`, so that a prompt can carry text the
 * caller's own input handler and the scripted model must not see (`@s:`, `[[delay:…]]`). */
const hide = (s) => [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");

export async function run(h) {
	const { W, HERE, EXT, RELOAD_EXT, PI_CLI, check, eq, makeAgent, env, mark, requests, jsonl, textOf } = h;
	const A = makeAgent("agent-ps", { lock: { timeoutMs: 300 } });
	const settings = JSON.parse(readFileSync(join(A, "settings.json"), "utf8"));
	settings.packages = [EXT, join(HERE, "pisession-ext")];
	writeFileSync(join(A, "settings.json"), JSON.stringify(settings));
	const HOME = join(W, "home");
	const P = join(W, "ps-project");
	const Q = join(HOME, "proj-q");
	mkdirSync(join(Q, "sub"), { recursive: true });
	mkdirSync(P, { recursive: true });
	const root = join(A, "sessions");
	const enc = (cwd) => `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
	const dirOf = (cwd) => join(root, enc(cwd));
	const filesOf = (cwd) => (existsSync(dirOf(cwd)) ? readdirSync(dirOf(cwd)).map((f) => join(dirOf(cwd), f)) : []);
	const headerOf = (f) => jsonl(f)[0];
	const byName = (cwd, name) => filesOf(cwd).find((f) => jsonl(f).some((e) => e.type === "session_info" && e.name === name));

	/** pi with the installed packages (no -e), synchronously. */
	const pi = (step, cwd, args) => {
		mark(step);
		const r = spawnSync(process.execPath, [PI_CLI, ...args], { cwd, env: env(A), encoding: "utf8", timeout: 120000 });
		if (r.status !== 0) console.log(`      (${step}: pi exited ${r.status}; stderr: ${r.stderr.slice(0, 600)})`);
		return r;
	};
	const rpcPi = (step, cwd, args = []) => {
		mark(step);
		return new RpcPi([process.execPath, PI_CLI, "--mode", "rpc", ...args], { cwd, env: env(A) });
	};
	const callOf = (name, args) => `[[call:${name} ${JSON.stringify(args)}]]`;
	/** The first text block of each tool result of `name` in a session file, parsed. */
	const results = (file, name) =>
		jsonl(file)
			.filter((e) => e.type === "message" && e.message?.role === "toolResult" && e.message.toolName === name)
			.map((e) => ({ status: JSON.parse(e.message.content[0].text), details: e.message.details, isError: e.message.isError, text: e.message.content.map((c) => c.text) }));
	/** The tool results of one print/json run, as the model received them (JSON parsed). */
	const toolJson = (step) => {
		const main = requests(step).filter((q) => q.kind === "main");
		const msgs = main.at(-1)?.body.messages ?? [];
		return msgs.filter((m) => m.role === "tool").map((m) => JSON.parse(textOf(m.content)));
	};
	const userTexts = (step) => requests(step).flatMap((q) => q.body.messages.filter((m) => m.role === "user").map((m) => textOf(m.content)));

	// ------------------------------------------------------------ fixtures: real pi sessions
	pi("PS0", P, ["-p", "-n", "Refactor auth", "hello about zebra-alpha"]);
	pi("PS0", P, ["-p", "-n", "Target session", "hello target"]);
	pi("PS0", Q, ["-p", "-n", "Quasar notes", "zebra-alpha in the q project"]);
	// Tool output only: two bash calls, the model's reply echoes only the second result.
	pi("PS0", P, ["-p", "-n", "Tool output", `${callOf("bash", { command: "echo TOOLONLY-$((6*7))" })} ${callOf("bash", { command: "echo second" })}`]);
	const T1 = headerOf(byName(P, "Refactor auth"));
	const TF = byName(P, "Target session");
	const T = headerOf(TF);
	const QS = headerOf(byName(Q, "Quasar notes"));
	check("PS0: fixture sessions were written by pi", !!T1?.id && !!T?.id && !!QS?.id, JSON.stringify(filesOf(P)));
	// Synthetic pi-shaped sessions for the limits (older than the real ones).
	const iso = (ms) => new Date(ms).toISOString();
	const base = Date.parse("2026-01-01T00:00:00.000Z");
	const line = (o) => `${JSON.stringify(o)}\n`;
	const synth = (i, body) => {
		const id = `synth-${String(i).padStart(2, "0")}`;
		const ms = base + i * 60_000;
		const file = join(dirOf(P), `${iso(ms).replace(/[:.]/g, "-")}_${id}.jsonl`);
		let text = line({ type: "session", version: 3, id, timestamp: iso(ms), cwd: P });
		let n = 0;
		for (const [role, content] of body) {
			n++;
			text += line({ type: "message", id: `e${n}`, parentId: null, timestamp: iso(ms + n), message: { role, content, timestamp: ms + n } });
		}
		writeFileSync(file, text);
		return id;
	};
	const txt = (t) => [{ type: "text", text: t }];
	for (let i = 0; i < 25; i++) synth(i, [["user", txt(`synthetic zebra-limit ${i}`)]]);
	// Session 25 (newest synthetic): seven matching lines and a 5 000-character one.
	synth(25, [
		["user", txt(`${"a".repeat(3000)}zebra-limit${"b".repeat(1989)}`)],
		["assistant", txt(["zebra-limit 2", "zebra-limit 3", "no", "zebra-limit 4", "zebra-limit 5", "zebra-limit 6", "zebra-limit 7"].join("\n"))],
	]);
	// Session 26: the query only where search-session never looks.
	synth(26, [
		["assistant", [{ type: "thinking", thinking: "zebra-hidden" }, { type: "toolCall", id: "c1", name: "bash", arguments: { command: "zebra-hidden" } }]],
		["toolResult", txt("zebra-hidden")],
	]);

	// ------------------------------------------------------------ search-session
	let r = pi("PS1", P, ["-p", "--no-session", callOf("search-session", { query: "ZEBRA-LIMIT" })]);
	const declared = requests("PS1")[0]?.body.tools?.map((t) => t.function?.name) ?? [];
	check("PS1: print mode declares search-session and ask-session", declared.includes("search-session") && declared.includes("ask-session"), declared.join(","));
	const s1 = toolJson("PS1")[0] ?? {};
	eq("PS1: at most 20 sessions, newest activity first, truncated when more match", [s1.status, s1.sessions?.length, s1.truncated, s1.sessions?.[0]?.id, s1.sessions?.[19]?.id], ["ok", 20, true, "synth-25", "synth-06"]);
	const seg = s1.sessions?.[0]?.segments ?? [];
	eq("PS1: 5 segments per session with the session's truncated flag", [seg.length, s1.sessions?.[0]?.truncated], [5, true]);
	eq("PS1: a 5 000-character line is cut to 2 000 characters around the match, flagged", [seg[0]?.text?.length, seg[0]?.truncated, seg[0]?.text?.includes("zebra-limit"), seg[1]], [2000, true, true, { role: "assistant", text: "zebra-limit 2", truncated: false }]);
	check("PS1: each result has name, full ID, cwd, absolute path and activity", s1.sessions?.every((s) => s.name === null && s.cwd === P && s.path.startsWith(`${dirOf(P)}/`) && s.path.endsWith(`_${s.id}.jsonl`) && /^\d{4}-\d\d-\d\dT/.test(s.activity)));
	r = pi("PS1b", P, ["-p", "--no-session", `${callOf("search-session", { query: "zebra-hidden" })} ${callOf("search-session", { query: "TOOLONLY-42" })} ${callOf("search-session", { query: "zebra-alpha" })}`]);
	const [hidden, toolOnly, alpha] = toolJson("PS1b");
	eq("PS1b: thinking, tool-call arguments and tool output are never matched (synthetic and real pi)", [hidden?.sessions, toolOnly?.sessions], [[], []]);
	eq("PS1b: a real named session is found with its name and reply", alpha?.sessions?.map((s) => [s.name, s.id, s.segments.map((g) => g.text)]), [["Refactor auth", T1.id, ["hello about zebra-alpha", "ECHO: hello about zebra-alpha"]]]);

	r = pi("PS2", P, ["--mode", "json", "-p", "--no-session", callOf("search-session", { query: "zebra-alpha" })]);
	const ends = r.stdout.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l)).filter((e) => e.type === "tool_execution_end" && e.toolName === "search-session");
	const jr = ends[0]?.result;
	check("PS2: json mode: the first text block is the status JSON and details is the same object", !!jr && JSON.stringify(JSON.parse(jr.content[0].text)) === JSON.stringify(jr.details) && jr.content.length === 1 && jr.details.sessions.length === 1, JSON.stringify(ends));

	{
		const g = rpcPi("PS3", P, ["--no-session"]);
		try {
			await g.prompt(callOf("search-session", { query: "zebra-limit" }));
			const e = g.records.find((x) => x.type === "tool_execution_end" && x.toolName === "search-session");
			eq("PS3: rpc mode: the same limits and flags", [e?.isError, e?.result.details.sessions.length, e?.result.details.truncated, JSON.parse(e?.result.content[0].text ?? "{}").sessions?.[0]?.id], [false, 20, true, "synth-25"]);
		} catch (e) {
			check("PS3: rpc search-session ran", false, `${e.stack}\n${g.stderr}`);
		} finally {
			await g.close();
		}
	}

	// ------------------------------------------------------------ authorization
	const settingFile = join(P, ".pi", "pi-session", "setting.json");
	/** search-session with `cwd`, in json mode: the status object and the result's isError. */
	const searchQ = (step, cwd) => {
		const out = pi(step, P, ["--mode", "json", "-p", "--no-session", callOf("search-session", { query: "zebra-alpha", cwd })]);
		const end = out.stdout.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l)).find((e) => e.type === "tool_execution_end");
		return { ...(end?.result.details ?? {}), isError: end?.isError };
	};
	let a = searchQ("PS4a", Q);
	check("PS4: an unlisted cwd is refused as an error result, naming the file to create", a.isError === true && a.status === "error" && a.error.includes(settingFile) && a.error.includes("does not exist"), JSON.stringify(a));
	mkdirSync(join(P, ".pi", "pi-session"), { recursive: true });
	writeFileSync(settingFile, "{not json");
	a = searchQ("PS4b", Q);
	check("PS4: a malformed setting.json is refused, naming it", a.isError === true && a.error?.startsWith(`${settingFile} is malformed`), JSON.stringify(a));
	writeFileSync(settingFile, JSON.stringify({ externalDirectories: ["~/proj-q"] }));
	a = searchQ("PS4c", Q);
	eq("PS4: a listed cwd (~ expanded, realpath) is searched", [a.isError, a.sessions?.map((s) => [s.name, s.id, s.cwd])], [false, [["Quasar notes", QS.id, Q]]]);
	a = searchQ("PS4d", join(Q, "sub"));
	check("PS4: a child of a listed directory is refused", a.isError === true && a.error.includes("is not listed") && a.error.includes(settingFile), JSON.stringify(a));
	a = searchQ("PS4e", "proj-q");
	eq("PS4: a relative cwd is refused", [a.isError, a.status, a.error], [true, "error", 'cwd "proj-q" must be an absolute path']);

	// ------------------------------------------------------------ @s: / @as: expansion
	const sentence = (name, file) => `Read or search ${name} ${file} if more context is needed.`;
	const T1F = byName(P, "Refactor auth");
	const QF = byName(Q, "Quasar notes");
	pi("PS5", P, ["-p", "-n", "expansion check", `see @s:${T1.id} please @s:no-such-id @as:${QS.id} @s:${QS.id}`]);
	const want5 = `see ${sentence("Refactor auth", T1F)} please @s:no-such-id ${sentence("Quasar notes", QF)} @s:${QS.id}`;
	eq("PS5: print mode: @s:/@as: references become the sentence, unknown and other-project @s: stay", userTexts("PS5")[0], want5);
	const persisted = jsonl(byName(P, "expansion check")).find((e) => e.type === "message" && e.message.role === "user");
	eq("PS5: the persisted user message holds the sentence, not the token", textOf(persisted?.message.content), want5);
	check("PS5: nothing of the referenced conversation is injected", !requests("PS5")[0]?.body.messages.some((m) => textOf(m.content).includes("hello about zebra-alpha")));
	{
		const g = rpcPi("PS6", P, ["--no-session"]);
		try {
			await g.prompt(`rpc: @s:${T1.id}`);
			eq("PS6: rpc mode: a full-ID token submitted without completion is expanded", userTexts("PS6").at(-1), `rpc: ${sentence("Refactor auth", T1F)}`);
			mark("PS6b");
			const settled = g.waitFor((x) => x.type === "agent_settled", "agent_settled after /e2e-send", 60000);
			await g.send({ type: "prompt", message: `/e2e-send from an extension @s:${T1.id}` });
			await settled;
			eq("PS6: extension-sourced input is never expanded", userTexts("PS6b").at(-1), `from an extension @s:${T1.id}`);
		} catch (e) {
			check("PS6: rpc expansion ran", false, `${e.stack}\n${g.stderr}`);
		} finally {
			await g.close();
		}
	}

	// ------------------------------------------------------------ ask-session
	{
		const before = filesOf(P).length;
		const tBefore = jsonl(TF).length;
		const g = rpcPi("PS7", P, ["-e", RELOAD_EXT]);
		try {
			const state = await g.send({ type: "get_state" });
			const me = state.sessionId;
			const ask = (args) => callOf("ask-session", args);
			// The prompt arguments hide `@s:` and `[[delay:…]]` from the caller's own input handler
			// and from the scripted model's view of the caller's turn (JSON \u escapes).
			const raw = (s) => JSON.stringify({ id: "ID", prompt: "P" }).replace('"P"', `"${hide(s)}"`);
			const askRaw = (id, prompt, extra = "") => `[[call:ask-session ${raw(prompt).replace('"ID"', JSON.stringify(id)).replace(/}$/, `${extra}}`)}]]`;
			const turn = [
				askRaw(T.id, `question one [[delay:6000]] @s:${T1.id}`),
				ask({ id: T.id, prompt: "again" }),
				// Steering needs a running ask: wait until the target has started its run (its file
				// gains the question), then a little more for the sidecar to see pi's answer.
				callOf("bash", { command: `for i in $(seq 600); do grep -q "question one" '${TF}' && break; sleep 0.1; done; sleep 1` }),
				ask({ id: T.id, prompt: "steer one", steer: true }),
				askRaw(T.id, "[[handle-me]] steer two", ',"steer":true'),
				ask({ id: me, prompt: "myself" }),
				ask({ id: "Target session", prompt: "by name" }),
				ask({ id: T.id.slice(0, 8), prompt: "partial" }),
				ask({ id: TF, prompt: "path" }),
			].join(" ");
			const reported = g.waitFor((x) => x.type === "message_end" && x.message?.role === "custom" && x.message.customType === "session-report", "the session-report message", 90000);
			reported.catch(() => undefined);
			await g.prompt(turn);
			const callerFile = (await g.send({ type: "get_state" })).sessionFile;
			const res = results(callerFile, "ask-session");
			eq(
				"PS7: accepted, busy, steered, handled, then self/name/partial/path refused",
				res.map((x) => x.status.status),
				["accepted", "busy", "steered", "handled", "error", "error", "error", "error"],
			);
			check("PS7: accepted at once with the full ID and path, and guidance not to poll", res[0]?.status.id === T.id && res[0]?.status.path === TF && res[0]?.text[1]?.includes("Do not poll") && JSON.stringify(res[0]?.details) === JSON.stringify(res[0]?.status), JSON.stringify(res[0]));
			check("PS7: refusals say why", /itself/.test(res[4]?.status.error) && /is a session name/.test(res[5]?.status.error) && /partial ID/.test(res[6]?.status.error) && /is a path/.test(res[7]?.status.error) && res.slice(4).every((x) => x.isError), JSON.stringify(res.slice(4).map((x) => x.status)));
			mark("PS7r");
			const rep = await reported;
			const at = g.records.indexOf(rep);
			const end = Date.now() + 60000;
			while (Date.now() < end && !g.records.slice(at).some((x) => x.type === "agent_settled")) await sleep(50);
			check("PS7: the report arrives as a session-report message and starts a turn", g.records.slice(at).some((x) => x.type === "agent_settled") && rep.message.details?.status === "completed", JSON.stringify(rep.message));
			const reportText = textOf(rep.message.content);
			check("PS7: the report carries the full target ID, path and answer", reportText.includes(`ID: ${T.id}\nPath: ${TF}`) && reportText.includes("ECHO: steer one"), reportText);
			const turnReq = requests("PS7r").find((q) => q.kind === "main" && q.body.messages.some((m) => m.role === "user" && textOf(m.content).includes(`ID: ${T.id}\nPath: ${TF}`)));
			check("PS7: the caller's model received the report in a new turn", !!turnReq, JSON.stringify(requests("PS7r").map((q) => q.body.messages.map((m) => m.role))));
			const gained = jsonl(TF).slice(tBefore).filter((e) => e.type === "message" && ["user", "assistant"].includes(e.message.role)).map((e) => [e.message.role, textOf(e.message.content)]);
			eq("PS7: the ORIGINAL target file gained the question (references unexpanded), the answer and the steering; the handled steer is absent", gained, [
				["user", `question one [[delay:6000]] @s:${T1.id}`],
				["assistant", `ECHO: question one [[delay:6000]] @s:${T1.id}`],
				["user", "steer one"],
				["assistant", "ECHO: steer one"],
			]);
			eq("PS7: no fork: same header, and the only new session file is the caller's", [headerOf(TF).id, filesOf(P).length - before, filesOf(P).includes(callerFile)], [T.id, 1, true]);

			// A reload closes the caller's lifecycle: the running ask ends without a report.
			const tLen = jsonl(TF).length;
			await g.prompt(askRaw(T.id, "slow one [[delay:3000]]"));
			const slow = results(callerFile, "ask-session").at(-1);
			eq("PS8: a new ask is accepted once the first reported", slow?.status.status, "accepted");
			await sleep(800); // the target has sent its (delayed) model request
			const reloaded = await g.prompt("/e2e-reload");
			eq("PS8: the caller reloads (a command, handled)", reloaded?.disposition, "handled");
			await sleep(4500);
			const late = g.records.filter((x) => x.type === "message_end" && x.message?.customType === "session-report");
			eq("PS8: after a reload no late report reaches the replacement lifecycle", late.length, 1);
			let alive = true;
			try {
				process.kill(slow.status.pid, 0);
			} catch {
				alive = false;
			}
			check("PS8: the target pi was closed with the caller's lifecycle", !alive, `pid ${slow?.status.pid}`);
			// Closing the target may land after its model request started: pi then records an empty
			// assistant message with stopReason "aborted" (timing-dependent), which is not an answer.
			check("PS8: the closed target did not write an answer", !jsonl(TF).slice(tLen).some((e) => e.message?.role === "assistant" && e.message.stopReason !== "aborted"), JSON.stringify(jsonl(TF).slice(tLen)));
		} catch (e) {
			check("PS7: rpc ask-session ran", false, `${e.stack}\n${g.stderr}`);
		} finally {
			await g.close();
		}
	}

	// ------------------------------------------------------------ the TUI in a real terminal
	await tui(h, { A, P, T1, T1F, QS, QF, sentence, settingFile });
}

/** Interactive pi in tmux: completion of `@s:` / `@as:`, selection, submission. */
async function tui(h, { A, P, T1, T1F, QS, QF, sentence }) {
	const { W, PI_CLI, check, env, mark, requests, textOf } = h;
	if (spawnSync("tmux", ["-V"]).status !== 0) {
		check("PS9: tmux is installed (the TUI checks need it)", false, "install tmux and rerun");
		return;
	}
	const dir = join(W, "tui");
	mkdirSync(dir, { recursive: true });
	writeFileSync(join(P, "s:zzzz-notes.txt"), "a file the built-in completion would offer for @s:zzzz\n");
	writeFileSync(join(P, "README-ps.md"), "# readme\n");
	// pi's `@` file completion needs `fd`, which is not installed here (and PI_OFFLINE forbids
	// pi's download): a stand-in on PATH lists the project's files the way fd prints them.
	const bin = join(dir, "bin");
	mkdirSync(bin, { recursive: true });
	writeFileSync(
		join(bin, "fd"),
		'#!/bin/sh\n[ "$1" = "--version" ] && { echo "fd 10.2.0"; exit 0; }\nbase=.\nwhile [ $# -gt 0 ]; do [ "$1" = "--base-directory" ] && base="$2"; shift; done\ncd "$base" && find . -mindepth 1 -maxdepth 3 -not -path "./.git*" -not -path "./.pi*" | sed "s|^\\./||" | while IFS= read -r p; do if [ -d "$p" ]; then echo "$p/"; else echo "$p"; fi; done\n',
		{ mode: 0o755 },
	);
	const e = { ...env(A), PATH: `${bin}:${process.env.PATH}` };
	const script = join(dir, "run-pi.sh");
	const quote = (v) => `'${String(v).replace(/'/g, "'\\''")}'`;
	writeFileSync(
		script,
		[
			"#!/bin/bash",
			...Object.entries(e)
				.filter(([k]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
				.map(([k, v]) => `export ${k}=${quote(v)}`),
			"unset TMUX",
			`cd ${quote(P)}`,
			`exec ${quote(process.execPath)} ${quote(PI_CLI)}`,
		].join("\n"),
	);
	const session = `pimem-ps-${process.pid}`;
	const tmux = (...args) => spawnSync("tmux", args, { encoding: "utf8" });
	const screen = () => tmux("capture-pane", "-t", session, "-p").stdout ?? "";
	const shots = [];
	const keep = (label) => {
		const s = screen();
		const file = join(dir, `screen-${shots.length}-${label.replace(/[^a-z0-9]+/gi, "-")}.txt`);
		writeFileSync(file, s);
		shots.push(file);
		return s;
	};
	const waitScreen = async (pred, label, ms = 20000) => {
		const end = Date.now() + ms;
		while (Date.now() < end) {
			const s = screen();
			if (pred(s)) return { ok: true, s };
			await sleep(100);
		}
		return { ok: false, s: keep(`timeout-${label}`) };
	};
	const type = async (text) => {
		for (const c of text) {
			tmux("send-keys", "-t", session, "-l", c);
			await sleep(40);
		}
	};
	const key = (k) => tmux("send-keys", "-t", session, k);
	// The bottom of the screen (editor, menu, footer) fits the check's detail; the whole
	// screen is kept in a file.
	const failDetail = (s) => `screen bottom (whole screens kept in ${dir}):\n${s.split("\n").map((l) => l.trimEnd()).filter((l) => l).slice(-12).map((l) => l.slice(0, 110)).join("\n")}`;
	const waitRequest = async (step, pred, ms = 30000) => {
		const end = Date.now() + ms;
		while (Date.now() < end) {
			const q = requests(step).find(pred);
			if (q) return q;
			await sleep(100);
		}
		return undefined;
	};
	tmux("kill-session", "-t", session);
	const started = tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "50", `bash ${quote(script)}`);
	if (started.status !== 0) {
		check("PS9: tmux starts interactive pi", false, started.stderr);
		return;
	}
	try {
		const ready = await waitScreen((s) => /─{10,}/.test(s) && !/Loading/i.test(s), "editor");
		check("PS9: interactive pi shows its editor", ready.ok, failDetail(ready.s));
		await sleep(1500); // session_start: the sidecar and the completion provider

		// @s: + part of a name: the candidates show the name, activity, ID and cwd.
		await type("@s:refac");
		let w = await waitScreen((s) => s.includes("Refactor auth") && s.includes(T1.id.slice(0, 20)), "candidates");
		check("PS9: typing @s:refac lists the named session with its activity and ID", w.ok, failDetail(w.s));
		key("Enter"); // selects the candidate: inserts @s:<full-ID>, sends nothing
		w = await waitScreen((s) => s.includes(`@s:${T1.id}`), "inserted");
		check("PS9: selecting inserts @s:<full-ID> into the editor (nothing sent)", w.ok && requests("PS9").length === 0, failDetail(w.s));
		mark("PS9");
		await type("please");
		key("Enter");
		const q9 = await waitRequest("PS9", (q) => q.kind === "main");
		const sent9 = q9 ? textOf(q9.body.messages.filter((m) => m.role === "user").at(-1)?.content) : "";
		check("PS9: on submit the model request carries the sentence", sent9 === `${sentence("Refactor auth", T1F)} please`, `${sent9}\n${failDetail(keep("after-submit"))}`);
		await waitScreen((s) => s.includes("ECHO: Read or search"), "reply", 20000);

		// @as: lists other projects' named sessions.
		mark("PS10");
		await type("@as:quasar");
		w = await waitScreen((s) => s.includes("Quasar notes") && s.includes(QS.id.slice(0, 20)), "as-candidates");
		check("PS10: @as: lists named sessions of every project", w.ok, failDetail(w.s));
		key("Tab");
		w = await waitScreen((s) => s.includes(`@as:${QS.id}`), "as-inserted");
		key("Enter");
		const q10 = await waitRequest("PS10", (q) => q.kind === "main");
		const sent10 = q10 ? textOf(q10.body.messages.filter((m) => m.role === "user").at(-1)?.content) : "";
		check("PS10: Tab selects, Enter submits the sentence of the other project's session", w.ok && sent10 === sentence("Quasar notes", QF), `${sent10}\n${failDetail(keep("as-submit"))}`);
		await waitScreen((s) => s.includes("ECHO: Read or search Quasar"), "as-reply", 20000);

		// Everything else is delegated: @ + a file name still completes files (control: the
		// built-in completion offers s:zzzz-notes.txt for a token that is not reserved).
		await type("@zzzz-no");
		w = await waitScreen((s) => s.includes("s:zzzz-notes.txt"), "file-completion", 10000);
		check("PS11: other @ completions are delegated unchanged (pi's file completion)", w.ok, failDetail(w.s));
		key("Escape");
		for (let i = 0; i < 8; i++) key("BSpace");
		await sleep(300);
		// A reserved prefix with no matching session shows no menu, not even that file.
		await type("@s:zzzz");
		await sleep(1500);
		const none = keep("reserved-no-match");
		check("PS11: @s: with no matching session never falls back to file completion", !none.includes("s:zzzz-notes.txt") && none.includes("@s:zzzz"), failDetail(none));
		key("Tab");
		await sleep(1000);
		const tabbed = keep("reserved-no-match-tab");
		check("PS11: ...not even with Tab", !tabbed.includes("s:zzzz-notes.txt"), failDetail(tabbed));
		for (let i = 0; i < 8; i++) key("BSpace");
	} catch (err) {
		check("PS9: the TUI scenario ran", false, `${err.stack}\n${failDetail(keep("exception"))}`);
	} finally {
		tmux("kill-session", "-t", session);
		console.log(`      (TUI screen captures kept: ${shots.length ? shots.join(", ") : "none, every wait succeeded"})`);
	}
}
