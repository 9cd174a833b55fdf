#!/usr/bin/env node
// End-to-end suite: real pi 1.6.0 (headless: print, json and rpc modes) with the pimem
// extension and sidecar, a scripted fake model, and assertions on the request bodies the model
// received and on the files written. Run through `cargo xtask e2e`, which installs the pinned
// host (install.sh) and sets:
//   PI_CLI     pi's dist/bundle/cli.js        PIMEM_BIN  the pimem binary under test
//   PATH       starting with Node 22
// Everything happens in a fresh temp dir (HOME, PI_CODING_AGENT_DIR): the real ~/.pi is never
// touched. Exit status 0 = every check passed. E2E_KEEP=1 keeps the work dir.
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { paScenarios } from "./pa.mjs";
import { packageScenarios } from "./packages.mjs";
import { RpcPi } from "./rpc.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
// `cargo xtask e2e --installed` sets PIMEM_E2E_INSTALLED to the agent dir `pi install
// npm:@pimem/pi` installed into: the suite then loads that copy and gives pi no PIMEM_BIN (the
// runner's own PIMEM_BIN is the installed binary, for its direct `pimem` calls).
const INSTALLED = process.env.PIMEM_E2E_INSTALLED;
const EXT = INSTALLED ? join(INSTALLED, "npm", "node_modules", "@pimem", "pi") : join(HERE, "..", "extension");
const RELOAD_EXT = join(HERE, "reload-ext.ts");
const { PI_CLI, PIMEM_BIN } = process.env;
if (!PI_CLI || !PIMEM_BIN) {
	console.error("run.mjs: set PI_CLI and PIMEM_BIN (cargo xtask e2e does)");
	process.exit(2);
}
const W = mkdtempSync(join(tmpdir(), "pimem-e2e-"));
const LOG = join(W, "requests.jsonl");
const t0 = Date.now();

// ------------------------------------------------------------------ checks
let failed = 0;
let passed = 0;
function check(name, cond, detail = "") {
	if (cond) passed++;
	else failed++;
	console.log(`${cond ? "PASS" : "FAIL"}  ${name}${!cond && detail ? `\n      ${String(detail).slice(0, 1500).replace(/\n/g, "\n      ")}` : ""}`);
}
const eq = (name, got, want) => check(name, JSON.stringify(got) === JSON.stringify(want), `got:  ${JSON.stringify(got)}\n      want: ${JSON.stringify(want)}`);

// ------------------------------------------------------------------ fake model
writeFileSync(LOG, "");
const fake = spawn(process.execPath, [join(HERE, "fake-model.mjs"), LOG, join(W, "port")], { stdio: ["ignore", "inherit", "inherit"] });
// (non-empty: the file exists a moment before the port is written into it)
for (let i = 0; i < 100 && !(existsSync(join(W, "port")) && readFileSync(join(W, "port"), "utf8").trim()); i++) await new Promise((r) => setTimeout(r, 50));
const PORT = readFileSync(join(W, "port"), "utf8").trim();

const jsonl = (p) => (existsSync(p) ? readFileSync(p, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l)) : []);
const textOf = (c) => (typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => p?.text ?? "").join("") : "");

/** Requests logged since the marker of `step`. */
function requests(step) {
	const out = [];
	let cur = null;
	for (const r of jsonl(LOG)) {
		if (r.n === 0) cur = r.step;
		else if (cur === step) out.push(r);
	}
	return out;
}
const systemText = (body) => textOf(body.messages.find((m) => m.role === "system")?.content);
/** The memory_index section as the model received it (null when absent). */
function sectionIn(body) {
	const m = /\n<memory_index>\n([\s\S]*?)\n<\/memory_index>(?:\n|$)/.exec(systemText(body));
	return m ? m[1] : null;
}
/** User messages of the current turn (the prompt plus hidden messages after it). */
function turnUserTexts(body) {
	const msgs = body.messages;
	const last = msgs.map((m) => m.role).lastIndexOf("user");
	let first = last;
	while (first > 0 && msgs[first - 1].role === "user") first--;
	return msgs.slice(first, last + 1).map((m) => textOf(m.content));
}
/** Tool results of the current turn, as the model received them in the run's last request. */
const toolTexts = (reqs) => {
	const msgs = reqs.filter((q) => q.kind === "main").at(-1)?.body.messages ?? [];
	const lastUser = msgs.map((m) => m.role).lastIndexOf("user");
	return msgs.slice(lastUser + 1).filter((m) => m.role === "tool").map((m) => textOf(m.content));
};

// ------------------------------------------------------------------ pi environment
function makeAgent(name, memoryJson) {
	const dir = join(W, name);
	mkdirSync(dir, { recursive: true });
	writeFileSync(
		join(dir, "models.json"),
		JSON.stringify({
			providers: {
				fake: {
					baseUrl: `http://127.0.0.1:${PORT}/v1`,
					api: "openai-completions",
					apiKey: "dummy-not-a-secret",
					models: [{ id: "fake-model", name: "Fake", reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
				},
			},
		}),
	);
	writeFileSync(
		join(dir, "settings.json"),
		JSON.stringify({ defaultProvider: "fake", defaultModel: "fake-model", defaultThinkingLevel: "off", cacheWarming: "off", enableInstallTelemetry: false, retry: { enabled: false }, compaction: { keepRecentTokens: 10 }, quietStartup: true }),
	);
	if (memoryJson) writeFileSync(join(dir, "memory.json"), JSON.stringify(memoryJson));
	return dir;
}

const HOME = join(W, "home");
mkdirSync(HOME);
function env(agent, extra = {}) {
	const e = { ...process.env };
	for (const k of ["PI_SESSION_ID", "PI_SESSION_FILE", "PI_MEMORY_PARENT", "XDG_CONFIG_HOME", ...(INSTALLED ? ["PIMEM_BIN"] : [])]) delete e[k];
	Object.assign(e, { HOME, PI_CODING_AGENT_DIR: agent, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0", ...(INSTALLED ? {} : { PIMEM_BIN }) }, extra);
	for (const [k, v] of Object.entries(extra)) if (v === undefined) delete e[k];
	return e;
}
const mark = (step) => appendFileSync(LOG, `${JSON.stringify({ n: 0, step })}\n`);

/** Runs pi once, synchronously. */
function pi(step, agent, cwd, args, { extraEnv = {}, withExt = true } = {}) {
	mark(step);
	const argv = [PI_CLI, ...(withExt ? ["-e", EXT] : []), ...args];
	const r = spawnSync(process.execPath, argv, { cwd, env: env(agent, extraEnv), encoding: "utf8", timeout: 120000 });
	if (r.status !== 0) console.log(`      (${step}: pi exited ${r.status}; stderr: ${r.stderr.slice(0, 600)})`);
	return r;
}
function rpc(step, agent, cwd, args, opts = {}) {
	mark(step);
	return new RpcPi([process.execPath, PI_CLI, "--mode", "rpc", "-e", EXT, ...args], { cwd, env: env(agent), ...opts });
}
function pimem(agent, cwd, args) {
	const r = spawnSync(PIMEM_BIN, ["--agent-dir", agent, ...args], { cwd, env: env(agent), encoding: "utf8" });
	if (r.status !== 0) throw new Error(`pimem ${args.join(" ")}: ${r.stderr}`);
	return r.stdout;
}
const sessionFiles = (agent) => {
	const root = join(agent, "sessions");
	if (!existsSync(root)) return [];
	return readdirSync(root).flatMap((d) => readdirSync(join(root, d)).map((f) => join(root, d, f)));
};
const sessionById = (agent, id) => sessionFiles(agent).find((f) => f.endsWith(`_${id}.jsonl`));
const newestSession = (agent) => sessionFiles(agent).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
/** Every file of a memory directory except snapshots, with contents. */
function dirState(dir) {
	if (!existsSync(dir)) return {};
	return Object.fromEntries(
		readdirSync(dir)
			.filter((f) => f !== ".backups" && statSync(join(dir, f)).isFile())
			.sort()
			.map((f) => [f, readFileSync(join(dir, f), "utf8")]),
	);
}
const call = (args) => `[[call:memory ${JSON.stringify(args)}]]`;

// ================================================================== scenario 1: no model
// (memory.json only shortens the lock wait: store, tool, index and lexical surfacing need no model)
const A1 = makeAgent("agent", { lock: { timeoutMs: 300 } });
const P1 = join(W, "project");
mkdirSync(P1);
const MEM1 = pimem(A1, P1, ["dir"]).trim();

// --- A: print mode, new session, three tool calls
const toolSchema = JSON.parse(spawnSync(PIMEM_BIN, ["tool-schema"], { encoding: "utf8" }).stdout);
let r = pi("A", A1, P1, [
	"-p",
	"-n",
	"main",
	`seed ${call({ action: "add", name: "Deploy command", description: "Deploy staging with make ship", content: "Deploy the staging stack with `make ship STAGE=staging`." })} ${call({ action: "add", name: "Database port", content: "The local Postgres database listens on port 5433." })} ${call({ action: "add", name: "Lint rules", content: "Run clippy with warnings denied before committing." })}`,
]);
let reqs = requests("A");
eq("A: three `memory add` calls return pi-memory's exact texts", toolTexts(reqs), [
	'Saved "Deploy command" (Deploy-command.md).',
	'Saved "Database port" (Database-port.md).',
	'Saved "Lint rules" (Lint-rules.md).',
]);
check("A: each add created its entry file", ["Deploy-command.md", "Database-port.md", "Lint-rules.md"].every((f) => existsSync(join(MEM1, f))));
eq("A: MEMORY.md has one index line per entry", readFileSync(join(MEM1, "MEMORY.md"), "utf8"), "- [Deploy command](Deploy-command.md) — Deploy staging with make ship\n- [Database port](Database-port.md) — The local Postgres database listens on port 5433.\n- [Lint rules](Lint-rules.md) — Run clippy with warnings denied before committing.\n");
const declared = reqs[0]?.body.tools?.find((t) => t.function?.name === "memory")?.function;
eq("A: the tool pi declares to the model equals `pimem tool-schema`", { name: declared?.name, description: declared?.description, parameters: declared?.parameters }, { name: toolSchema.name, description: toolSchema.description, parameters: toolSchema.parameters });
check("A: an empty index sends no memory_index section", reqs.length > 0 && reqs.every((q) => sectionIn(q.body) === null));
const statusAfterA = pimem(A1, P1, ["status"]);
const sectionAfterA = pimem(A1, P1, ["section"]);

// --- B: new session: section from disk, lexical surfacing of a relevant memory
r = pi("B", A1, P1, ["-p", "-n", "second", "How do I deploy the staging stack with make ship?"]);
reqs = requests("B");
const sectionB = reqs[0] && sectionIn(reqs[0].body);
eq("B: the frozen section reaches the model (= `pimem section`)", sectionB, sectionAfterA);
const hiddenB = reqs[0] ? turnUserTexts(reqs[0].body) : [];
check("B: a relevant prompt surfaces the memory as a hidden message after the prompt", hiddenB.length === 2 && hiddenB[1].startsWith("<relevant_memories>\n## Deploy command\nDeploy the staging stack") && hiddenB[1].endsWith("\n</relevant_memories>"), JSON.stringify(hiddenB));
const fileB = newestSession(A1);
const entriesB = jsonl(fileB);
const surfacedEntry = entriesB.find((e) => e.type === "custom_message" && e.customType === "memory-auto-surfacing");
check("B: stored as custom_message display:false with details.files", surfacedEntry?.display === false && JSON.stringify(surfacedEntry?.details?.files) === '["Deploy-command.md"]', JSON.stringify(surfacedEntry));
check("B: the section is recorded with pi.appendEntry (pimem-memory-index)", entriesB.some((e) => e.type === "custom" && e.customType === "pimem-memory-index" && e.data?.value === sectionAfterA));
const systemMsgCount = (entries) => entries.filter((e) => e.type === "message" && e.message?.role === "system").length;
const sysB = systemMsgCount(entriesB);

// --- C: -c in a new process: same bytes on every request, even after a write; unrelated prompt
r = pi("C", A1, P1, ["-p", "-c", `${call({ action: "add", name: "Weather note", content: "It is sunny on Mars today." })} what is the weather on mars`]);
reqs = requests("C");
check("C: -c replays the recorded section, byte-identical on every request of the run", reqs.length === 2 && reqs.every((q) => sectionIn(q.body) === sectionB), reqs.map((q) => sectionIn(q.body)).join(" | "));
eq("C: an unrelated prompt surfaces nothing", reqs[0] ? turnUserTexts(reqs[0].body).length : -1, 1);
check("C: the add in this session created Weather-note.md", existsSync(join(MEM1, "Weather-note.md")));
eq("C: pi appended no system-prompt patch (section unchanged)", systemMsgCount(jsonl(fileB)), sysB);

// --- D: json mode: /memory to stderr (7 lines, frozen Inject), list text, stdout pure JSONL
const listNow = pimem(A1, P1, ["list"]).trimEnd();
r = pi("D", A1, P1, ["--mode", "json", "-c", "/memory", `list please ${call({ action: "list" })}`]);
// the disk now, except Inject: the window frozen when session B started (= the disk after A)
const frozenInject = statusAfterA.split("\n").find((l) => l.startsWith("Inject:"));
const expectedStatus = pimem(A1, P1, ["status"])
	.trimEnd()
	.split("\n")
	.map((l) => (l.startsWith("Inject:") ? frozenInject : l))
	.join("\n");
const statusLines = r.stderr.split("\n").filter((l) => /^(Dir|Index|Inject|Entries|Modules|Last dream|Lock): /.test(l));
eq("D: /memory prints the 7-line status on stderr in json mode (Inject = the frozen window)", statusLines.join("\n"), expectedStatus);
check("D: /memory says which modules are off and why", statusLines.includes("Modules: dream=off(no model) extractMemories=off autoSurfacing=on(lexical)"));
check("D: json-mode stdout is JSONL only", r.stdout.trim().split("\n").every((l) => { try { JSON.parse(l); return true; } catch { return false; } }));
reqs = requests("D");
eq("D: `list` returns the exact list text", toolTexts(reqs), [listNow]);
check("D: section still byte-identical", reqs.length > 0 && reqs.every((q) => sectionIn(q.body) === sectionB));

// --- E: search, replace, remove texts; a bad call changes nothing
const searchNow = pimem(A1, P1, ["search", "postgres"]).trimEnd();
r = pi("E", A1, P1, ["-p", "-c", `${call({ action: "search", query: "postgres" })} ${call({ action: "replace", name: "Database port", content: "The local Postgres database listens on port 5434." })} ${call({ action: "remove", name: "Lint rules" })}`]);
eq("E: search, replace and remove return the exact texts", toolTexts(requests("E")), [searchNow, 'Replaced "Database port" (Database-port.md).', 'Removed "Lint rules".']);
check("E: replace rewrote the body, remove deleted the file and its index line", readFileSync(join(MEM1, "Database-port.md"), "utf8").includes("port 5434.") && !existsSync(join(MEM1, "Lint-rules.md")) && !readFileSync(join(MEM1, "MEMORY.md"), "utf8").includes("Lint rules"));
const beforeBad = dirState(MEM1);
r = pi("E2", A1, P1, ["-p", "-c", `${call({ action: "remove", name: "nope" })} ${call({ action: "add", name: "No content" })}`]);
reqs = requests("E2");
eq("E2: bad calls return error results", toolTexts(reqs), ['Entry "nope" not found', "content is required for add"]);
const badResults = jsonl(fileB).filter((e) => e.type === "message" && e.message?.role === "toolResult").slice(-2);
check("E2: ...marked isError in the transcript", badResults.length === 2 && badResults.every((e) => e.message.isError === true), JSON.stringify(badResults.map((e) => e.message.isError)));
eq("E2: ...and change nothing on disk", dirState(MEM1), beforeBad);

// --- F: a held lock: exact error, /memory shows the holder
const lockPid = process.pid;
writeFileSync(join(MEM1, ".lock"), JSON.stringify({ pid: lockPid, hostname: hostname(), startedAt: "2026-10-02T00:00:00.000Z", op: "dream" }));
r = pi("F", A1, P1, ["-p", "-c", call({ action: "add", name: "Blocked", content: "x" })]);
eq("F: a write under a held lock fails with the exact error", toolTexts(requests("F")), [`Memory is locked by dream (pid ${lockPid}, started 2026-10-02T00:00:00.000Z)`]);
check("F: ...and writes nothing", !existsSync(join(MEM1, "Blocked.md")));
r = pi("F2", A1, P1, ["-p", "-c", "/memory"]);
check("F2: /memory names the holder", r.stderr.includes(`\nLock: held by dream (pid ${lockPid} on ${hostname()}, started 2026-10-02T00:00:00.000Z)`), r.stderr);

// --- G: rpc mode: notifications, unlock, dream without model, compaction, fork, reload, new
{
	const g = rpc("G", A1, P1, ["-c", "-e", RELOAD_EXT]);
	try {
		await g.prompt("rpc turn: how do I deploy the staging stack with make ship?");
		let gq = requests("G");
		check("G: rpc -c keeps the recorded section", gq.length === 1 && sectionIn(gq[0].body) === sectionB);
		await g.waitNotification(/^Recalled: /).then(
			(n) => eq("G: surfacing notifies `Recalled: N entries` with a UI", n.message, "Recalled: 1 entries"),
			(e) => check("G: surfacing notifies `Recalled: N entries` with a UI", false, e.message),
		);
		await g.prompt("/memory unlock");
		const unlocked = await g.waitNotification(/lock/i).catch((e) => ({ message: e.message }));
		eq("G: /memory unlock asks with the holder named", g.confirms[0], { title: "Memory lock", message: `Remove the memory lock file? It is held by dream (pid ${lockPid} on ${hostname()}, started 2026-10-02T00:00:00.000Z). Only do this if no memory operation is running.` });
		check("G: ...and removes the lock when confirmed", unlocked.message === "Memory lock removed." && !existsSync(join(MEM1, ".lock")), unlocked.message);
		await g.prompt("/dream");
		const dreamMsg = await g.waitNotification(/^Dream/).catch((e) => ({ message: e.message }));
		eq("G: /dream without a model explains what to configure", dreamMsg.message, 'Dream failed: no model for dream — set "dream.model" or "defaults.model" in memory.json');
		const beforeCompact = pimem(A1, P1, ["section"]);
		await g.send({ type: "compact", customInstructions: "keep memory facts" });
		await g.prompt("rpc turn after compaction");
		gq = requests("G");
		const afterCompact = sectionIn(gq[gq.length - 1].body);
		check("G: compaction refreshes the section from disk", afterCompact === beforeCompact && afterCompact !== sectionB, `${afterCompact}`);
		const forkable = await g.send({ type: "get_fork_messages" });
		await g.send({ type: "fork", entryId: forkable.messages[forkable.messages.length - 1].entryId });
		await g.prompt(`rpc turn in the fork ${call({ action: "add", name: "Fork note", content: "Written in the fork." })}`);
		gq = requests("G");
		check("G: a fork replays the section (identical on both requests)", gq.slice(-2).every((q) => sectionIn(q.body) === afterCompact));
		await g.prompt("/e2e-reload");
		await g.prompt("rpc turn after reload");
		gq = requests("G");
		check("G: a reload replays the section", sectionIn(gq[gq.length - 1].body) === afterCompact);
		await g.send({ type: "new_session" });
		await g.prompt("rpc turn in a new session");
		gq = requests("G");
		const fresh = sectionIn(gq[gq.length - 1].body);
		check("G: a new session reads the index fresh", fresh === pimem(A1, P1, ["section"]) && fresh.includes("Fork note") && fresh !== afterCompact, fresh);
	} catch (e) {
		check("G: rpc scenario ran", false, `${e.stack}\n${g.stderr}`);
	} finally {
		await g.close();
	}
}

// --- I: headless child sessions (a subagent's `pi -p --no-session`, or pi started from a pi
// bash tool): the tool works, nothing is surfaced
r = pi("I1", A1, P1, ["-p", "--no-session", `How do I deploy the staging stack with make ship? ${call({ action: "search", query: "staging" })}`]);
reqs = requests("I1");
check("I1: --no-session print run (a child) surfaces nothing but the tool works", reqs.length === 2 && turnUserTexts(reqs[0].body).length === 1 && toolTexts(reqs)[0]?.startsWith("## Deploy command\n"), JSON.stringify(reqs.map((q) => turnUserTexts(q.body))));
r = pi("I2", A1, P1, ["-p", "-n", "child-of-bash", "How do I deploy the staging stack with make ship?"], { extraEnv: { PI_SESSION_ID: "parent-session" } });
reqs = requests("I2");
check("I2: a pi started from a pi bash tool (PI_SESSION_ID set) surfaces nothing", reqs.length === 1 && turnUserTexts(reqs[0].body).length === 1);

// --- H: finding the binary
r = pi("H1", A1, P1, ["-p", "--no-session", "hello"], { extraEnv: { PIMEM_BIN: "/nonexistent/pimem" } });
check("H1: a wrong PIMEM_BIN is reported clearly and pi still works", r.status === 0 && r.stdout.includes("ECHO: hello") && r.stderr.includes("PIMEM_BIN=/nonexistent/pimem is not an executable file"), r.stderr);
r = pi("H4", A1, P1, ["-p", "--no-session", "hello"], { extraEnv: { PIMEM_BIN: "/bin/false" } });
check("H4: a sidecar that dies is reported once and pi still works", r.status === 0 && r.stdout.includes("ECHO: hello") && r.stderr.split("pimem: the sidecar exited (code 1)").length === 2, r.stderr);
r = pi("H5", A1, P1, ["-p", "--no-session", call({ action: "list" })], { extraEnv: { PIMEM_BIN: join(HERE, "future-sidecar.mjs"), PIMEM_REAL_BIN: PIMEM_BIN } });
const rebuild = "pimem 9.0.0 speaks protocol 2 but the pi extension speaks protocol 1: rebuild and reinstall both from the same checkout (cargo xtask install)";
check("H5: a protocol mismatch tells the user what to rebuild", r.status === 0 && r.stderr.includes(rebuild), r.stderr);
eq("H5: ...and the memory tool answers with that message", toolTexts(requests("H5")), [rebuild]);
const pkgNoBin = join(W, "pkg-nobin");
cpSync(EXT, pkgNoBin, { recursive: true, filter: (src) => !src.includes(`${EXT}/bin`) });
r = pi("H2", A1, P1, ["-p", "--no-session", "-e", pkgNoBin, "hello"], { withExt: false, extraEnv: { PIMEM_BIN: undefined, PATH: dirname(process.execPath) } });
check("H2: no binary anywhere: a clear message naming `cargo xtask install`", r.status === 0 && r.stderr.includes("the pimem binary was not found") && r.stderr.includes("cargo xtask install"), r.stderr);
const pkg = join(W, "pkg");
cpSync(EXT, pkg, { recursive: true, filter: (src) => !src.includes(`${EXT}/bin`) });
mkdirSync(join(pkg, "bin"));
cpSync(PIMEM_BIN, join(pkg, "bin", "pimem"));
const A3 = makeAgent("agent-installed", null);
r = pi("H3", A3, P1, ["install", pkg], { withExt: false });
check("H3: `pi install <path>` registers the package", r.status === 0 && JSON.parse(readFileSync(join(A3, "settings.json"), "utf8")).packages?.length === 1, r.stderr);
r = pi("H3b", A3, P1, ["-p", "--no-session", call({ action: "search", query: "deploy" })], { withExt: false, extraEnv: { PIMEM_BIN: undefined, PATH: dirname(process.execPath) } });
check("H3: the installed package finds bin/pimem next to itself", toolTexts(requests("H3b"))[0]?.startsWith("## Deploy command\nfile: Deploy-command.md\n"), JSON.stringify(toolTexts(requests("H3b"))));

// ================================================================== scenario 2: with a model
const A2 = makeAgent("agent-model", { defaults: { model: "fake/fake-model" }, extractMemories: { enabled: true, thinkLevel: "off" }, dream: { thinkLevel: "off" } });
const P2 = join(W, "project2");
mkdirSync(P2);
const MEM2 = pimem(A2, P2, ["dir"]).trim();

// --- X1: extraction after a settled run (print mode: the sidecar finishes before pi exits)
r = pi("X1", A2, P2, ["-p", "-n", "extract", "REMEMBER: staging SSH port is 2222"]);
const x1 = requests("X1");
const ex = x1.find((q) => q.kind === "extract");
check("X1: extraction asks the model through pi with the conversation", !!ex && textOf(ex.body.messages.find((m) => m.role === "user")?.content).includes("REMEMBER: staging SSH port is 2222"));
eq("X1: ...and offers only the five main actions", ex?.body.tools?.map((t) => t.function.parameters.properties.action.enum), [["add", "replace", "remove", "list", "search"]]);
check("X1: extraction wrote the memory and its index line", existsSync(join(MEM2, "staging-SSH-port.md")) && readFileSync(join(MEM2, "MEMORY.md"), "utf8").includes("- [staging SSH port](staging-SSH-port.md) — staging SSH port is 2222."), existsSync(join(MEM2, "MEMORY.md")) ? readFileSync(join(MEM2, "MEMORY.md"), "utf8") : "no MEMORY.md");

// --- X2/X3: model-assisted surfacing: side query through pi, relevant vs unrelated
r = pi("X2", A2, P2, ["-p", "-n", "surf", "what is the staging ssh port?"]);
const x2 = requests("X2");
const side = x2.find((q) => q.kind === "surfacing");
check("X2: surfacing runs a side query through pi's model registry", !!side && !side.body.tools?.length);
const x2main = x2.find((q) => q.kind === "main");
check("X2: the selected memory is injected as a hidden message", !!x2main && turnUserTexts(x2main.body)[1]?.startsWith("<relevant_memories>\n## staging SSH port\n"), x2main && JSON.stringify(turnUserTexts(x2main.body)));
r = pi("X3", A2, P2, ["-p", "-c", "tell me about bananas"]);
const x3main = requests("X3").find((q) => q.kind === "main");
eq("X3: an unrelated prompt surfaces nothing", x3main ? turnUserTexts(x3main.body).length : -1, 1);

// --- X4: /dream with the scripted model merges two duplicates
r = pi("X4", A2, P2, ["-p", "-c", `${call({ action: "add", name: "Build command", description: "Build with cargo build --release", content: "Build with cargo build --release." })} ${call({ action: "add", name: "Release build", description: "Build with cargo build --release", content: "Build with cargo build --release." })}`]);
check("X4: two duplicates exist", existsSync(join(MEM2, "Build-command.md")) && existsSync(join(MEM2, "Release-build.md")));
{
	const d = rpc("X5", A2, P2, ["-c"]);
	try {
		await d.prompt("/dream");
		const done = await d.waitNotification(/^Dream/, 60000);
		eq("X5: /dream asks first", d.confirms[0], { title: "Dream", message: "Consolidate all memory files? This rewrites them in-place." });
		check("X5: the dream's summary is shown", done.message.startsWith("Dream: merged duplicates."), done.message);
		check("X5: the duplicate is gone, the original kept, the index updated", !existsSync(join(MEM2, "Release-build.md")) && existsSync(join(MEM2, "Build-command.md")) && !readFileSync(join(MEM2, "MEMORY.md"), "utf8").includes("Release build"));
		check("X5: .dream-meta.json and a dream snapshot were written", existsSync(join(MEM2, ".dream-meta.json")) && readdirSync(join(MEM2, ".backups")).some((b) => b.endsWith("-dream")));
		const dreamReqs = requests("X5").filter((q) => q.kind === "dream");
		eq("X5: the dream gets the seven actions", dreamReqs[0]?.body.tools?.map((t) => t.function.parameters.properties.action.enum), [["add", "replace", "remove", "list", "search", "rename", "rebuild_index"]]);
	} catch (e) {
		check("X5: rpc dream ran", false, `${e.stack}\n${d.stderr}`);
	} finally {
		await d.close();
	}
}

// ================================================================== scenario 3: the run log
// (/experience; memory-pi/e2e/experience.mjs)
{
	const { run } = await import("./experience.mjs");
	const fwd = await run({ pi, rpc, pimem, makeAgent, check, eq, W, requests, textOf, env, mark, PI_CLI, EXT, P1, A1 }).catch((e) => {
		check("EX: the run-log scenario ran", false, e.stack);
		return null;
	});
	if (fwd) console.log(`      (run/event forwarding in pi: ${fwd.events} events, p50 ${fwd.p50} µs, p99 ${fwd.p99} µs, max ${fwd.max} µs)`);
}

// ================================================================== pi-session (issue 10)
// search-session, @s:/@as:, ask-session and the TUI: memory-pi/e2e/pisession.mjs.
await (await import("./pisession.mjs")).run({ W, HERE, EXT, RELOAD_EXT, PI_CLI, check, eq, makeAgent, env, mark, requests, jsonl, textOf });

// --- S: startup (issue 17, part 5): the sidecar is spawned at load, detached, and adopted
{
	const traceOf = (file) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);
	const t1 = join(W, "trace-s1.jsonl");
	r = pi("S1", A1, P1, ["-p", "--no-session", "how do I deploy?"], { extraEnv: { PIMEM_TRACE: t1 } });
	const s1 = traceOf(t1);
	const ev = (who, e, method) => s1.findIndex((m) => m.who === who && m.ev === e && (method === undefined || m.method === method));
	check("S1: one sidecar per run: spawned at load and adopted by session_start", r.status === 0 && s1.filter((m) => m.who === "sidecar" && m.ev === "start").length === 1 && ev("extension", "spawned") >= 0, JSON.stringify(s1.map((m) => `${m.who}:${m.ev}:${m.method ?? ""}`)));
	check("S1: the timeline has the steps the benchmark reads", ["module", "factory", "factory:end", "spawn", "session_start", "session_start:sent", "before_agent_start", "before_agent_start:ready"].every((e) => ev("extension", e) >= 0) && ev("sidecar", "answered", "session/start") >= 0 && ev("sidecar", "exit") >= 0);
	const t2 = join(W, "trace-s2.jsonl");
	r = pi("S2", A1, P1, ["--help"], { extraEnv: { PIMEM_TRACE: t2 } }); // a hang: killed at spawnSync's timeout, signal set
	// The early sidecar (if pi's event loop got to spawning it) sees end of input when pi exits.
	let s2 = traceOf(t2);
	for (let i = 0; i < 40 && s2.some((m) => m.who === "sidecar" && m.ev === "start") && !s2.some((m) => m.who === "sidecar" && m.ev === "exit"); i++) {
		await new Promise((res) => setTimeout(res, 50));
		s2 = traceOf(t2);
	}
	const spawned = s2.some((m) => m.who === "sidecar" && m.ev === "start");
	check("S2: `pi --help` (no session) is not kept alive by the detached sidecar, which exits with it", r.status === 0 && r.signal === null && (!spawned || s2.some((m) => m.who === "sidecar" && m.ev === "exit")), `status ${r.status}, signal ${r.signal}, ${JSON.stringify(s2)}`);
}

// ================================================================== pi-auto-memory (pa.mjs)
await paScenarios({ W, HOME, EXT, PI_CLI, env, check, eq, pi, rpc, pimem, mark, makeAgent, requests, sectionIn, turnUserTexts, toolTexts, dirState });

// ================================================================== curating memory (curate.mjs, issue 12)
await (await import("./curate.mjs")).curateScenarios({ W, EXT, PI_CLI, env, check, pi, rpc, pimem, makeAgent }).catch((e) => check("CU: the curation scenarios ran", false, e.stack));

// ================================================================== npm packaging (packages.mjs)
await packageScenarios({ W, EXT, PIMEM_BIN, INSTALLED, pi, makeAgent, check, eq, requests, toolTexts, call, agent: A1, project: P1 });

// ------------------------------------------------------------------ done
fake.kill();
console.log(`\n${passed} passed, ${failed} failed in ${((Date.now() - t0) / 1000).toFixed(1)} s (work dir ${W})`);
if (!process.env.E2E_KEEP && failed === 0) rmSync(W, { recursive: true, force: true });
process.exit(failed === 0 ? 0 : 1);
