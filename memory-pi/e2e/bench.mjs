#!/usr/bin/env node
// The `pi` benchmark group (`cargo xtask bench pi`): prints Markdown for BENCHMARKS.md.
//
// 1. pi startup to first model request, with and without the pimem extension: wall time from
//    spawning `pi -p -c <prompt>` to the fake model server receiving the first request, same
//    session for every run (continued with -c), runs alternating, BENCH_RUNS (25) pairs. The
//    added time is the median of the per-pair differences (robust against load drifting on a
//    shared machine), next to the two medians.
//    The store holds 50 memories, so "with" includes the sidecar spawn, the handshake,
//    session/start (config, store, frozen section) and lexical surfacing of the prompt.
//    Then BENCH_RUNS more runs with pimem and PIMEM_TRACE set: the extension and the sidecar
//    append timestamped steps to one file (extension/index.ts `mark`, src/serve/trace.rs),
//    printed as a timeline (median milliseconds after pi was spawned) and as pimem's time on
//    pi's critical path: the extension's factory, the sidecar's spawn() (synchronous, in
//    pi's thread), its synchronous session_start and the time pi waits in before_agent_start.
// 2. The per-turn agent/before_start round trip the extension makes (JSON line to
//    `pimem serve`, lexical surfacing over 200 memories, response parsed), measured from Node
//    over the same pipes the extension uses; every prompt surfaces a different memory.
//
// Env: PI_CLI, PIMEM_BIN (a release build), PATH starting with Node 22.
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const EXT = join(HERE, "..", "extension");
const { PI_CLI, PIMEM_BIN } = process.env;
const RUNS = Number(process.env.BENCH_RUNS ?? 25);
const W = mkdtempSync(join(tmpdir(), "pimem-bench-"));
const LOG = join(W, "requests.jsonl");
writeFileSync(LOG, "");

const quantile = (xs, q) => {
	const s = [...xs].sort((a, b) => a - b);
	return s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))];
};
const fmt = (ms) => (ms >= 100 ? `${ms.toFixed(0)} ms` : ms >= 1 ? `${ms.toFixed(1)} ms` : `${(ms * 1000).toFixed(0)} µs`);
const row = (name, xs) => `| ${name} | ${fmt(quantile(xs, 0.5))} | ${fmt(quantile(xs, 0.1))} | ${fmt(quantile(xs, 0.9))} | ${xs.length} |`;

// ------------------------------------------------------------------ setup
const fake = spawn(process.execPath, [join(HERE, "fake-model.mjs"), LOG, join(W, "port")], { stdio: "ignore" });
for (let i = 0; i < 100 && !existsSync(join(W, "port")); i++) await new Promise((r) => setTimeout(r, 50));
const PORT = readFileSync(join(W, "port"), "utf8").trim();
const AGENT = join(W, "agent");
const HOME = join(W, "home");
const PROJECT = join(W, "project");
for (const d of [AGENT, HOME, PROJECT]) mkdirSync(d, { recursive: true });
writeFileSync(
	join(AGENT, "models.json"),
	JSON.stringify({ providers: { fake: { baseUrl: `http://127.0.0.1:${PORT}/v1`, api: "openai-completions", apiKey: "dummy", models: [{ id: "fake-model", name: "Fake", reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }] } } }),
);
writeFileSync(join(AGENT, "settings.json"), JSON.stringify({ defaultProvider: "fake", defaultModel: "fake-model", defaultThinkingLevel: "off", cacheWarming: "off", enableInstallTelemetry: false, retry: { enabled: false }, quietStartup: true }));
const env = { ...process.env, HOME, PI_CODING_AGENT_DIR: AGENT, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0", PIMEM_BIN };
delete env.PI_SESSION_ID;

const topics = ["deploy", "database", "cache", "queue", "auth", "billing", "search", "metrics", "backup", "gateway"];
const memory = (i) => ({
	action: "add",
	name: `Service ${topics[i % topics.length]} unit${i}`,
	content: `The ${topics[i % topics.length]} service unit${i} listens on port ${7000 + i} and is restarted with \`svc restart unit${i}\`.`,
});

/** A `pimem serve` speaking JSON-RPC, as the extension drives it. */
class Sidecar {
	constructor() {
		this.child = spawn(PIMEM_BIN, ["serve"], { cwd: PROJECT, env, stdio: ["pipe", "pipe", "inherit"] });
		this.pending = new Map();
		this.id = 0;
		let buf = "";
		this.child.stdout.setEncoding("utf8");
		this.child.stdout.on("data", (c) => {
			buf += c;
			let nl;
			while ((nl = buf.indexOf("\n")) !== -1) {
				const msg = JSON.parse(buf.slice(0, nl));
				buf = buf.slice(nl + 1);
				if (msg.method) continue; // notifications (none without a UI)
				this.pending.get(msg.id)?.(msg);
				this.pending.delete(msg.id);
			}
		});
	}
	call(method, params) {
		const id = ++this.id;
		return new Promise((resolve, reject) => {
			this.pending.set(id, (m) => (m.error ? reject(new Error(m.error.message)) : resolve(m.result)));
			this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
		});
	}
	close() {
		this.child.stdin.end();
		return new Promise((r) => this.child.on("exit", r));
	}
}
const startParams = { reason: "startup", cwd: PROJECT, agentDir: AGENT, trusted: true, hasUI: false, mode: "print", sessionId: "bench", sessionFile: join(W, "bench.jsonl"), child: false, recorded: null, sectionPatches: [] };

// ------------------------------------------------------------------ 1. startup
{
	const s = new Sidecar();
	await s.call("initialize", { protocol: 1 });
	await s.call("session/start", startParams);
	for (let i = 0; i < 50; i++) await s.call("tool/execute", { toolCallId: `seed${i}`, args: memory(i) });
	await s.close();
}
spawnSync(process.execPath, [PI_CLI, "-p", "-n", "bench", "hello"], { cwd: PROJECT, env, encoding: "utf8" });
// pi's own floor for loading any extension: one that does nothing
const EMPTY = join(W, "empty-extension.ts");
writeFileSync(EMPTY, "export default function () {}\n");
const firstRequestMs = (ext) => {
	const before = readFileSync(LOG, "utf8").length;
	const t0 = Date.now();
	const r = spawnSync(process.execPath, [PI_CLI, "-p", "-c", ...(ext ? ["-e", ext] : []), "how do I restart the billing service unit5?"], { cwd: PROJECT, env, encoding: "utf8" });
	if (r.status !== 0) throw new Error(`pi failed: ${r.stderr}`);
	const first = JSON.parse(readFileSync(LOG, "utf8").slice(before).split("\n")[0]);
	if (ext === EXT && !JSON.stringify(first.body).includes("<relevant_memories>")) throw new Error("bench: the extension did not surface");
	return first.at - t0;
};
for (const ext of [EXT, EMPTY, null]) firstRequestMs(ext); // warm-up (page cache, jiti cache)
const withExt = [];
const without = [];
const empty = [];
for (let i = 0; i < RUNS; i++) {
	without.push(firstRequestMs(null));
	withExt.push(firstRequestMs(EXT));
	empty.push(firstRequestMs(EMPTY));
}

// ------------------------------------------------------------------ 1b. startup timeline
const timelines = [];
for (let i = 0; i < RUNS; i++) {
	const trace = join(W, `trace-${i}.jsonl`);
	const before = readFileSync(LOG, "utf8").length;
	const t0 = performance.timeOrigin + performance.now();
	const r = spawnSync(process.execPath, [PI_CLI, "-p", "-c", "-e", EXT, "how do I restart the billing service unit5?"], { cwd: PROJECT, env: { ...env, PIMEM_TRACE: trace }, encoding: "utf8" });
	if (r.status !== 0) throw new Error(`pi failed: ${r.stderr}`);
	const first = JSON.parse(readFileSync(LOG, "utf8").slice(before).split("\n")[0]);
	const at = { "pi: spawned": 0, "fake model: first request received": first.atMs - t0 };
	for (const line of readFileSync(trace, "utf8").split("\n").filter(Boolean)) {
		const m = JSON.parse(line);
		const key = `${m.who}: ${m.ev}${m.method ? ` ${m.method}` : ""}`;
		if (!(key in at)) at[key] = m.t - t0; // the first occurrence (startup, not shutdown)
	}
	timelines.push(at);
}
const steps = [...new Set(timelines.flatMap((t) => Object.keys(t)))].filter((k) => timelines.every((t) => k in t));
steps.sort((a, b) => quantile(timelines.map((t) => t[a]), 0.5) - quantile(timelines.map((t) => t[b]), 0.5));
const span = (from, to) => timelines.map((t) => t[to] - t[from]);
// the early spawn (at load, on a later turn of pi's event loop) blocks pi's thread too
const spawnMs = (t) => ("extension: spawned" in t ? t["extension: spawned"] - t["extension: spawn"] : 0);
const critical = timelines.map(
	(t) =>
		spawnMs(t) +
		t["extension: factory:end"] -
		t["extension: factory"] +
		(t["extension: session_start:sent"] - t["extension: session_start"]) +
		(t["extension: before_agent_start:answered"] - t["extension: before_agent_start"]),
);

// ------------------------------------------------------------------ 2. before_start round trip
const trips = [];
const startTimes = [];
{
	const s = new Sidecar();
	await s.call("initialize", { protocol: 1 });
	let t = performance.now();
	await s.call("session/start", startParams);
	startTimes.push(performance.now() - t);
	for (let i = 50; i < 200; i++) await s.call("tool/execute", { toolCallId: `seed${i}`, args: memory(i) });
	let surfaced = 0;
	for (let i = 0; i < 200; i++) {
		t = performance.now();
		const r = await s.call("agent/before_start", { prompt: `how do I restart the ${topics[i % topics.length]} service unit${i}?`, messageType: "user", systemPrompt: "You are pi." });
		trips.push(performance.now() - t);
		if (r.message) surfaced++;
	}
	await s.close();
	if (surfaced < 150) throw new Error(`bench: only ${surfaced}/200 prompts surfaced a memory`);
	trips.surfaced = surfaced;
}

fake.kill();
rmSync(W, { recursive: true, force: true });

const added = quantile(withExt.map((w, i) => w - without[i]), 0.5);
const addedEmpty = quantile(empty.map((w, i) => w - without[i]), 0.5);
const node = process.version;
const piVersion = JSON.parse(readFileSync(join(dirname(PI_CLI), "..", "..", "package.json"), "utf8")).version;
console.log(`| benchmark | median | p10 | p90 | samples |
|---|---|---|---|---|
${row("pi -p -c: spawn to first model request, without pimem", without)}
${row("pi -p -c: spawn to first model request, with an empty extension", empty)}
${row("pi -p -c: spawn to first model request, with pimem (50 memories, surfacing)", withExt)}
${row("agent/before_start round trip, lexical surfacing over 200 memories", trips)}
${row("session/start (config, store, frozen section; 50 memories)", startTimes)}

Added by the extension at startup (median of the ${RUNS} paired differences): **${added.toFixed(1)} ms** (target < 30 ms); an empty extension adds ${addedEmpty.toFixed(1)} ms (pi loading any \`-e\` extension), so pimem's own share is ${(added - addedEmpty).toFixed(1)} ms.
before_start round trip median **${fmt(quantile(trips, 0.5))}**, p90 ${fmt(quantile(trips, 0.9))} (target < 5 ms); ${trips.surfaced}/200 prompts surfaced a memory.
pi ${piVersion}, Node ${node}, ${RUNS} alternating runs per startup row after one warm-up each.

Startup timeline with pimem (PIMEM_TRACE, ${RUNS} more runs; ms after pi was spawned):

| step | median | p10 | p90 |
|---|---|---|---|
${steps.map((k) => { const xs = timelines.map((t) => t[k]); return `| ${k} | ${xs.length ? quantile(xs, 0.5).toFixed(1) : "-"} | ${quantile(xs, 0.1).toFixed(1)} | ${quantile(xs, 0.9).toFixed(1)} |`; }).join("\n")}

| pimem on pi's critical path | median | p10 | p90 | samples |
|---|---|---|---|---|
${row("extension factory (tool, commands)", span("extension: factory", "extension: factory:end"))}
${row("spawn() of the sidecar at load, if it happened there", timelines.map(spawnMs))}
${row("session_start handler (synchronous part)", span("extension: session_start", "extension: session_start:sent"))}
${row("before_agent_start: waiting for session/start", span("extension: before_agent_start", "extension: before_agent_start:ready"))}
${row("before_agent_start: agent/before_start round trip", span("extension: before_agent_start:ready", "extension: before_agent_start:answered"))}
${row("**total: pimem's share of the path to the first request**", critical)}`);
process.exit(0);
