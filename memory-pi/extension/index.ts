// pimem for pi: a thin shim over the `pimem serve` sidecar (Rust).
//
// This file holds no memory logic. It spawns `pimem serve` for each session runtime, forwards
// pi's events, the `memory` tool and the `/memory` and `/dream` commands to it over
// newline-delimited JSON-RPC 2.0 (protocol 1, documented in memory-pi/src/serve/mod.rs),
// and answers the sidecar's requests for model calls and UI dialogs through pi.
//
// pi-session (the search-session and ask-session tools, @s:/@as: references) is ./sessions.ts,
// registered from here and forwarding to the same sidecar.
//
// The binary is found via $PIMEM_BIN, then the npm platform package (@pimem/<platform>, an
// optional dependency of this package, resolved from this file with createRequire), then
// ./bin/pimem next to this file (put there by `cargo xtask install`), then `pimem` on PATH.
// A shipped binary that lost its exec bit (some unpackers drop it) gets it back.
//
// Startup cost matters (it is paid before every first model request), so this file imports
// nothing from pi at run time (importing the pi package costs ~10 ms; the agent directory is
// computed like pi's getAgentDir), registers the tool from ./tool.json (`pimem tool-schema`,
// kept equal by a test) without waiting for the sidecar, and never blocks session_start: the
// sidecar starts while pi finishes its own startup.
//
// The run log (/experience): pi's run events are forwarded as `run/event` notifications, which
// are never answered, so a handler costs one JSON line written to a pipe; the extension measures
// that cost and `/experience debug` shows it. The panel draws the lines the sidecar sends.
//
// Types: the protocol's messages come from ./protocol.ts, generated from the sidecar's Rust
// types (memory-pi/src/serve/protocol.rs) and kept equal by a test; pi's from its own type
// declarations. Both are imported as types only, so nothing is loaded at run time.
// `cargo xtask e2e` type-checks this file (tsc --noEmit, ./tsconfig.json).
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, appendFileSync, chmodSync, constants, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type {
	AgentEndEvent,
	ExtensionAPI,
	ExtensionCommandContext,
	ExtensionContext,
	ToolDefinition,
} from "@earendil-works/pi-coding-agent";
import type {
	CommandResult,
	ConfirmParams,
	ExperienceRunResult,
	ForwardingStats,
	PanelParams,
	PanelResult,
	PiNotifications,
	RunEvent,
	ConfirmResult,
	Level,
	MemoryOpenResult,
	MemoryWriteResult,
	ModelCompleteParams,
	ModelCompletion,
	ModelMessage,
	ModelsResolveParams,
	ModelsResolveResult,
	ModelStopReason,
	Notification,
	PiRequests,
	SessionStartResult,
	SidecarNotifications,
	SidecarRequests,
	StatusParams,
	ToolRegistration,
} from "./protocol.ts";
import { registerSessionTools } from "./sessions.ts";

/**
 * The startup timeline (`cargo xtask bench pi`): with PIMEM_TRACE=<file>, one JSON line per
 * step, next to the sidecar's lines in the same file (memory-pi/src/serve/trace.rs).
 */
const TRACE = process.env.PIMEM_TRACE;
function mark(ev: string) {
	if (!TRACE) return;
	try {
		appendFileSync(TRACE, `${JSON.stringify({ who: "extension", ev, t: performance.timeOrigin + performance.now() })}\n`);
	} catch {
		// a measurement aid only
	}
}
mark("module");

const PROTOCOL = 1;
const SECTION = "memory_index";
const RECORD_TYPE = "pimem-memory-index";
const BIN_NAME = process.platform === "win32" ? "pimem.exe" : "pimem";
/** pi's built-in file tools that `files/guard` checks. */
const GUARDED_TOOLS = new Set(["read", "write", "edit", "grep", "find", "ls"]);
/** Time the sidecar gets beyond `lock.timeoutMs` to answer `session/shutdown`. */
const SHUTDOWN_GRACE_MS = 2000;

// pi's types this file needs, named through the pi-coding-agent API (the one package it may
// import; pi-ai's types are reached through it).
type ModelRegistry = ExtensionContext["modelRegistry"];
type PiModel = NonNullable<ReturnType<ModelRegistry["find"]>>;
type PiContext = Parameters<ModelRegistry["streamSimple"]>[1];
type PiMessage = PiContext["messages"][number];
type PiTool = NonNullable<PiContext["tools"]>[number];
type PiStreamOptions = NonNullable<Parameters<ModelRegistry["streamSimple"]>[2]>;
type PiAssistantMessage = Extract<PiMessage, { role: "assistant" }>;
type PiToolCall = Extract<PiAssistantMessage["content"][number], { type: "toolCall" }>;
type AgentMessage = AgentEndEvent["messages"][number];

/** The JSON-RPC messages the sidecar writes, as far as this file reads them. */
type Incoming = {
	id?: number | string | null;
	method?: unknown;
	params?: unknown;
	result?: unknown;
	error?: { code?: unknown; message?: unknown; data?: unknown } | null;
};

function isExecutable(path: string): boolean {
	try {
		if (!statSync(path).isFile()) return false;
		accessSync(path, constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

/**
 * A binary this package ships: executable, or made so when it lost its exec bit (an unpacker
 * or a copy that dropped the mode). False when it is missing or cannot be made executable.
 */
function shippedExecutable(path: string): boolean {
	if (isExecutable(path)) return true;
	try {
		const st = statSync(path);
		if (!st.isFile()) return false;
		chmodSync(path, st.mode | 0o111);
	} catch {
		return false;
	}
	return isExecutable(path);
}

const HERE = typeof import.meta?.url === "string" ? dirname(fileURLToPath(import.meta.url)) : __dirname;

/** pi's agent directory, as pi's getAgentDir computes it. */
function agentDir(): string {
	const dir = process.env.PI_CODING_AGENT_DIR;
	if (dir) return dir === "~" ? homedir() : dir.startsWith("~/") ? join(homedir(), dir.slice(2)) : dir;
	return join(homedir(), ".pi", "agent");
}

/** This package on npm; the binaries are in `@pimem/<platform key>`, one package each. */
const MAIN_PACKAGE = "@pimem/pi";
/** The platforms a binary package is published for (package.json optionalDependencies). */
const PLATFORM_KEYS = ["linux-x64-gnu", "linux-x64-musl", "linux-arm64-gnu", "linux-arm64-musl", "darwin-x64", "darwin-arm64"];

/**
 * Whether this Node runs on musl, as npm decides for a package's `libc`: a glibc build of Node
 * reports its glibc version. Costs ~50 ms, so it is asked only when the installed packages do
 * not settle the question.
 */
function isMusl(): boolean {
	try {
		const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: unknown } } | undefined;
		return !report?.header?.glibcVersionRuntime;
	} catch {
		return false;
	}
}

/** The platform keys that may fit this machine, best first (Linux: either libc until asked). */
function platformCandidates(): string[] {
	const base = `${process.platform}-${process.arch}`;
	return process.platform === "linux" ? [`${base}-gnu`, `${base}-musl`] : [base];
}

/** This machine's platform key, e.g. `linux-x64-gnu`. */
function platformKey(): string {
	const base = `${process.platform}-${process.arch}`;
	return process.platform === "linux" ? `${base}-${isMusl() ? "musl" : "gnu"}` : base;
}

/** Where the binary is (and the platform package it came from), or why it is not there. */
type Found = { path?: string; pkg?: string; error?: string };

/** `@pimem/<key>/bin/pimem` of the platform packages npm installed next to this one. */
function fromPlatformPackage(): Found {
	let require: NodeJS.Require;
	try {
		require = createRequire(typeof import.meta?.url === "string" ? import.meta.url : join(HERE, "index.ts"));
	} catch {
		return {};
	}
	const installed: { key: string; bin: string }[] = [];
	for (const key of platformCandidates()) {
		try {
			installed.push({ key, bin: join(dirname(require.resolve(`@pimem/${key}/package.json`)), "bin", BIN_NAME) });
		} catch {
			// not installed: npm skips the platform packages that do not match this machine
		}
	}
	// Both libc builds installed by hand: the one npm would have chosen.
	const chosen = installed.length > 1 ? (installed.find((p) => p.key === platformKey()) ?? installed[0]) : installed[0];
	if (!chosen) return {};
	if (shippedExecutable(chosen.bin)) return { path: chosen.bin, pkg: `@pimem/${chosen.key}` };
	return {
		error: `pimem: the platform package @pimem/${chosen.key} is installed but ${chosen.bin} is missing or cannot be made executable, so memory is off for this session. Reinstall it: \`pi install npm:${MAIN_PACKAGE}\`, or set PIMEM_BIN to a pimem binary.`,
	};
}

/** $PIMEM_BIN, then the platform package, then <this package>/bin/pimem, then PATH. */
function findBinary(): Found {
	// Decision: an explicit PIMEM_BIN wins over the platform package (as ESBUILD_BINARY_PATH
	// does for esbuild): it is how a user runs a self-built pimem with an npm-installed
	// extension, and how the e2e suite substitutes broken or foreign sidecars.
	const fromEnv = process.env.PIMEM_BIN;
	if (fromEnv) {
		if (isExecutable(fromEnv)) return { path: fromEnv };
		return { error: `pimem: PIMEM_BIN=${fromEnv} is not an executable file. Point it at the pimem binary, or unset it and run \`cargo xtask install\` in the pimem checkout.` };
	}
	const packaged = fromPlatformPackage();
	if (packaged.path) return packaged;
	const local = join(HERE, "bin", BIN_NAME);
	if (shippedExecutable(local)) return { path: local };
	for (const dir of (process.env.PATH ?? "").split(delimiter)) {
		if (dir && isExecutable(join(dir, BIN_NAME))) return { path: join(dir, BIN_NAME) };
	}
	if (packaged.error) return packaged;
	const key = platformKey();
	const version = clientVersion();
	const install = PLATFORM_KEYS.includes(key)
		? `It comes in the npm package @pimem/${key}, an optional dependency of ${MAIN_PACKAGE} that npm installs on this platform: reinstall with \`pi install npm:${MAIN_PACKAGE}\` (with optional dependencies; not --omit=optional), or add it next to ${MAIN_PACKAGE} with \`npm install @pimem/${key}@${version}\`.`
		: process.platform === "win32"
			? "pimem does not run on Windows yet (its file locking is Unix-only): run pi under WSL, where npm installs the Linux package."
			: `No npm package ships pimem for ${key}: build it from source (\`cargo xtask install\` in the pimem checkout) or set PIMEM_BIN to it.`;
	return {
		error: `pimem: the pimem binary was not found (checked $PIMEM_BIN, @pimem/${key}, ${local} and PATH), so memory is off for this session. ${install} From a checkout: \`cargo xtask install\`, or set PIMEM_BIN to the binary.`,
	};
}

/** This package's version (the `clientVersion` of `initialize`). */
function clientVersion(): string {
	try {
		const pkg: { version?: unknown } = JSON.parse(readFileSync(join(HERE, "package.json"), "utf8"));
		return typeof pkg.version === "string" ? pkg.version : "unknown";
	} catch {
		return "unknown";
	}
}

class RpcFailure extends Error {
	constructor(
		message: string,
		readonly code: number,
		readonly data?: unknown,
	) {
		super(message);
	}
}

/** The JSON-RPC `code` of a failure: its own numeric `code`, else -32603. */
function errorCode(err: unknown): number {
	return typeof err === "object" && err !== null && "code" in err && typeof err.code === "number" ? err.code : -32603;
}

/** The text of a failure: its `message`, else the value itself. */
function errorMessage(err: unknown): string {
	return typeof err === "object" && err !== null && "message" in err && err.message != null ? String(err.message) : String(err);
}

/** One `pimem serve` process and the JSON-RPC connection to it. */
class Sidecar {
	private readonly child: ChildProcess;
	private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer?: NodeJS.Timeout }>();
	private nextId = 1;
	private buf = "";
	private dead: string | undefined;
	/** Whether the sidecar has written a line yet. */
	private heard = false;
	private closing = false;
	private detached = false;
	private readonly exited: Promise<void>;

	constructor(
		bin: string,
		/** The platform package `bin` came from, if any (named when it cannot run). */
		pkg: string | undefined,
		readonly cwd: string,
		private readonly serveRequest: (method: string, params: unknown) => Promise<unknown>,
		private readonly onNotification: (method: string, params: unknown) => void,
		private onDeath: (reason: string) => void,
	) {
		this.child = spawn(bin, ["serve"], { cwd, stdio: ["pipe", "pipe", "inherit"] });
		this.exited = new Promise((resolve) => this.child.once("close", () => resolve()));
		// A platform package's binary that cannot start here (another CPU or libc): the spawn
		// fails, or a shell fallback exits before the sidecar says anything.
		const foreign = (why: string) =>
			`pimem: ${bin} is from ${pkg}, which does not run here (${why}): reinstall with \`pi install npm:${MAIN_PACKAGE}\` so npm picks this machine's platform package (${platformKey()}), or set PIMEM_BIN to a pimem binary; memory is off for this session`;
		this.child.once("error", (e) => this.die(pkg ? foreign(e.message) : `pimem: cannot run ${bin}: ${e.message}; memory is off for this session`));
		this.child.once("exit", (code, signal) => {
			const how = signal ?? `code ${code}`;
			this.die(pkg && !this.heard ? foreign(`it exited with ${how} before answering`) : `pimem: the sidecar exited (${how}); memory is off for the rest of this session`);
		});
		this.child.stdin?.on("error", () => undefined); // EPIPE after the sidecar died: reported via "exit"
		this.child.stdout?.setEncoding("utf8");
		this.child.stdout?.on("data", (chunk: string) => this.onData(chunk));
	}

	/**
	 * Started before any session (at extension load): the process and its pipes must not keep
	 * pi alive (`pi --help`, `pi install` load extensions and exit without a session; the
	 * sidecar then sees end of input and exits), and a death is only recorded, to be reported
	 * by the session that adopts it.
	 */
	detach() {
		this.detached = true;
		this.child.unref();
		for (const pipe of [this.child.stdin, this.child.stdout]) (pipe as { unref?: () => void } | null)?.unref?.();
	}

	/** Adopted by a session: it keeps pi alive again, and an unexpected death calls `onDeath`. */
	attach(onDeath: (reason: string) => void) {
		this.detached = false;
		this.onDeath = onDeath;
		this.child.ref();
		for (const pipe of [this.child.stdin, this.child.stdout]) (pipe as { ref?: () => void } | null)?.ref?.();
		for (const w of this.pending.values()) w.timer?.ref();
	}

	/** Why the sidecar is unusable (it died or was stopped), if it is. */
	get deadReason(): string | undefined {
		return this.dead;
	}

	private onData(chunk: string) {
		this.buf += chunk;
		let nl: number;
		while ((nl = this.buf.indexOf("\n")) !== -1) {
			const line = this.buf.slice(0, nl);
			this.buf = this.buf.slice(nl + 1);
			if (line.trim()) this.onLine(line);
		}
	}

	private onLine(line: string) {
		this.heard = true;
		let msg: Incoming;
		try {
			msg = JSON.parse(line);
		} catch {
			return;
		}
		if (typeof msg !== "object" || msg === null) return;
		const method = msg.method;
		if (typeof method === "string") {
			if (msg.id === undefined || msg.id === null) {
				this.onNotification(method, msg.params ?? {});
				return;
			}
			const id = msg.id;
			Promise.resolve()
				.then(() => this.serveRequest(method, msg.params ?? {}))
				.then(
					(result) => this.write({ jsonrpc: "2.0", id, result }),
					(err: unknown) => this.write({ jsonrpc: "2.0", id, error: { code: errorCode(err), message: errorMessage(err) } }),
				);
			return;
		}
		if (typeof msg.id !== "number") return; // our ids are numbers
		const waiter = this.pending.get(msg.id);
		if (!waiter) return;
		this.pending.delete(msg.id);
		if (waiter.timer) clearTimeout(waiter.timer);
		if (msg.error) waiter.reject(new RpcFailure(String(msg.error.message), Number(msg.error.code), msg.error.data));
		else waiter.resolve(msg.result);
	}

	private write(msg: object) {
		if (this.dead || !this.child.stdin?.writable) return;
		this.child.stdin.write(`${JSON.stringify(msg)}\n`);
	}

	/** An exit nobody asked for: fail every call and tell the user once. */
	private die(reason: string) {
		const unexpected = !this.closing && !this.dead;
		this.fail(reason);
		if (unexpected && !this.detached) this.onDeath(reason);
	}

	private fail(reason: string) {
		if (this.dead) return;
		this.dead = reason;
		for (const w of this.pending.values()) {
			if (w.timer) clearTimeout(w.timer);
			w.reject(new Error(reason));
		}
		this.pending.clear();
	}

	/** Sends a notification: nothing is awaited (run events). */
	notify<M extends keyof PiNotifications>(method: M, params: PiNotifications[M]["params"]) {
		this.write({ jsonrpc: "2.0", method, params });
	}

	/** Calls `method`; the result is the method's result type (the sidecar's types are this file's). */
	call<M extends keyof PiRequests>(method: M, params: PiRequests[M]["params"], timeoutMs?: number): Promise<PiRequests[M]["result"]> {
		if (this.dead) return Promise.reject(new Error(this.dead));
		const id = this.nextId++;
		return new Promise((resolve, reject) => {
			const timer = timeoutMs
				? setTimeout(() => {
						this.pending.delete(id);
						reject(new Error(`pimem: ${method} got no answer within ${timeoutMs} ms`));
					}, timeoutMs)
				: undefined;
			if (this.detached) timer?.unref();
			this.pending.set(id, { resolve: (v) => resolve(v as PiRequests[M]["result"]), reject, timer });
			this.write({ jsonrpc: "2.0", id, method, params });
		});
	}

	/** Closes stdin (the sidecar exits at end of input), then kills it if it lingers. */
	async close(graceMs: number) {
		this.closing = true;
		this.child.stdin?.end();
		let timer: NodeJS.Timeout | undefined;
		await Promise.race([this.exited, new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
		if (timer) clearTimeout(timer);
		if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill();
		this.fail("pimem: the sidecar was stopped");
	}
}

const ZERO_USAGE: PiAssistantMessage["usage"] = {
	input: 0,
	output: 0,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 0,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/** The sidecar's model messages -> pi-ai messages. */
function toPiMessages(messages: ModelMessage[], model: PiModel): PiMessage[] {
	const now = Date.now();
	return messages.map((m): PiMessage => {
		if (m.role === "assistant") {
			const calls = m.toolCalls.map(
				// The arguments are the JSON object the model produced (through pi) on an earlier turn.
				(c): PiToolCall => ({ type: "toolCall", id: c.id, name: c.name, arguments: (c.arguments ?? {}) as PiToolCall["arguments"] }),
			);
			return {
				role: "assistant",
				content: [...(m.text ? [{ type: "text" as const, text: m.text }] : []), ...calls],
				api: model.api,
				provider: model.provider,
				model: model.id,
				usage: ZERO_USAGE,
				stopReason: calls.length > 0 ? "toolUse" : "stop",
				timestamp: now,
			};
		}
		if (m.role === "toolResult") {
			return { role: "toolResult", toolCallId: m.toolCallId, toolName: m.toolName, content: [{ type: "text", text: m.content }], isError: m.isError, timestamp: now };
		}
		return { role: "user", content: m.content, timestamp: now };
	});
}

/** Drops image payloads (extraction renders them as `[image]`) to keep lines small. */
function withoutImageData(messages: readonly AgentMessage[]): unknown[] {
	return messages.map((m) => {
		const content: unknown = "content" in m ? m.content : undefined;
		if (!Array.isArray(content)) return m;
		return { ...m, content: content.map((b: unknown) => (isImage(b) ? { type: "image" } : b)) };
	});
}

function isImage(block: unknown): boolean {
	return typeof block === "object" && block !== null && "type" in block && block.type === "image";
}


/** Cap of a forwarded tool result's text (the run log keeps 2000 characters of it). */
const MAX_FORWARDED_TEXT = 8192;

/** The text blocks of a message or tool result content, joined. */
function textOf(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	let out = "";
	for (const b of content) {
		if (typeof b === "object" && b !== null && "type" in b && b.type === "text" && "text" in b && typeof b.text === "string") out += b.text;
	}
	return out;
}

/** How long forwarding run events took in this process (microseconds per event). */
class ForwardTimes {
	private readonly samples = new Float64Array(16384);
	private count = 0;
	private max = 0;
	add(us: number) {
		this.samples[this.count % this.samples.length] = us;
		this.count++;
		if (us > this.max) this.max = us;
	}
	stats(): ForwardingStats {
		const n = Math.min(this.count, this.samples.length);
		const sorted = Array.from(this.samples.subarray(0, n)).sort((a, b) => a - b);
		const at = (q: number) => (n === 0 ? 0 : sorted[Math.min(n - 1, Math.floor(q * n))] ?? 0);
		return { events: this.count, p50Us: at(0.5), p99Us: at(0.99), maxUs: this.max };
	}
}

/** Terminal columns of one code point (wide East Asian and emoji count 2). */
function columns(cp: number): number {
	return (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0xffe0 && cp <= 0xffe6) || cp >= 0x1f300 ? 2 : 1;
}

/** A plain line cut to `width` terminal columns. */
function fit(line: string, width: number): string {
	let used = 0;
	let out = "";
	for (const ch of line) {
		const w = columns(ch.codePointAt(0) ?? 0);
		if (used + w > width) break;
		used += w;
		out += ch;
	}
	return out;
}

export default function pimem(pi: ExtensionAPI) {
	mark("factory");
	let sidecar: Sidecar | undefined;
	/** Why memory is off in this session (binary missing, protocol mismatch, sidecar died). */
	let inert: string | undefined;
	/** The frozen memory_index value, set on every run. */
	let section = "";
	let batch: AgentMessage[] = [];
	const forwardTimes = new ForwardTimes();
	/** Forwards one run event to the run log; never waits (PX-05: recording never delays a turn). */
	const forward = (event: RunEvent) => {
		const s = sidecar;
		if (!s) return;
		const t0 = performance.now();
		s.notify("run/event", { at: Date.now(), event });
		forwardTimes.add((performance.now() - t0) * 1000);
	};
	let host: { hasUI: boolean; ui: ExtensionContext["ui"]; registry: ModelRegistry } | undefined;
	/**
	 * Settles when session/start has been answered (with its result) or failed (undefined). With
	 * a result, `sidecar` is set unless the sidecar died since.
	 */
	let ready: Promise<SessionStartResult | undefined> = Promise.resolve(undefined);

	// pi-session (search-session, ask-session, @s:/@as:): registered first, so that its
	// session_shutdown handler drops late ask reports before this file's awaits the sidecar.
	const sessionTools = registerSessionTools(pi, {
		agentDir,
		call: async (method, params, timeoutMs) => {
			await ready;
			if (!sidecar) throw new Error(inert ?? "pimem: the sidecar is not running");
			return sidecar.call(method, params, timeoutMs);
		},
	});

	const notify = (message: string, level: Level) => {
		if (host?.hasUI) host.ui.notify(message, level);
	};
	/** Command output: a notification with a UI, stderr in print and json modes. */
	const show = (ctx: ExtensionContext, text: string, level: Level) => {
		if (ctx.hasUI) ctx.ui.notify(text, level);
		else process.stderr.write(`${text}\n`);
	};
	/** A problem that turns memory off: a notification with a UI, stderr headless. */
	const report = (text: string) => {
		if (host?.hasUI) host.ui.notify(text, "error");
		else process.stderr.write(`${text}\n`);
	};

	async function modelComplete(p: ModelCompleteParams): Promise<ModelCompletion> {
		const registry = host?.registry;
		const spec = p.model;
		const slash = spec.indexOf("/");
		const model = registry && slash > 0 ? registry.find(spec.slice(0, slash), spec.slice(slash + 1)) : undefined;
		if (!registry || !model) throw new RpcFailure(`model "${spec}" is not resolvable (unknown id or missing credentials)`, -32010);
		const timeoutMs = Math.max(1, p.timeoutMs || 30_000);
		// The JSON schemas of memory-agent's tools: objects, as pi-ai's tools want.
		const tools = p.tools.map((t): PiTool => ({ name: t.name, description: t.description, parameters: t.parameters as PiTool["parameters"] }));
		// memory.json's thinkLevel, passed on as it is: pi checks it.
		const reasoning = p.thinkLevel && p.thinkLevel !== "off" ? { reasoning: p.thinkLevel as PiStreamOptions["reasoning"] } : {};
		const msg = await registry
			.streamSimple(
				model,
				{ systemPrompt: p.system, messages: toPiMessages(p.messages, model), ...(tools.length > 0 ? { tools } : {}) },
				{ ...reasoning, signal: AbortSignal.timeout(timeoutMs), timeoutMs },
			)
			.result();
		if (msg.stopReason === "error" || msg.stopReason === "aborted") throw new RpcFailure(msg.errorMessage ?? `model call ${msg.stopReason}`, -32011);
		const stopReason: ModelStopReason = msg.stopReason === "length" || msg.stopReason === "toolUse" ? msg.stopReason : "stop";
		return {
			text: msg.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join(""),
			toolCalls: msg.content.flatMap((b) => (b.type === "toolCall" ? [{ id: b.id, name: b.name, arguments: b.arguments ?? {} }] : [])),
			stopReason,
		};
	}

	function modelsResolve(p: ModelsResolveParams): ModelsResolveResult {
		return {
			resolvable: p.specs.map((spec) => {
				const slash = spec.indexOf("/");
				const model = slash > 0 ? host?.registry.find(spec.slice(0, slash), spec.slice(slash + 1)) : undefined;
				return !!model && !!host?.registry.hasConfiguredAuth(model);
			}),
		};
	}

	async function confirm(p: ConfirmParams): Promise<ConfirmResult> {
		return { confirmed: host?.hasUI ? !!(await host.ui.confirm(p.title, p.body)) : false };
	}

	/** Answers the sidecar's requests. `params` is what the sidecar sent for `method`. */
	async function serveRequest(method: string, params: unknown): Promise<SidecarRequests[keyof SidecarRequests]["result"]> {
		switch (method) {
			case "model/complete":
				return modelComplete(params as SidecarRequests["model/complete"]["params"]);
			case "models/resolve":
				return modelsResolve(params as SidecarRequests["models/resolve"]["params"]);
			case "ui/confirm":
				return confirm(params as SidecarRequests["ui/confirm"]["params"]);
			default:
				throw new RpcFailure(`Method not found: ${method}`, -32601);
		}
	}

	/** Handles the sidecar's notifications. `params` is what the sidecar sent for `method`. */
	function onNotification(method: string, params: unknown) {
		if (method === "ui/notify") {
			const n: Notification = params as SidecarNotifications["ui/notify"]["params"];
			notify(n.message, n.level);
		} else if (method === "ui/status" && host?.hasUI) {
			const s: StatusParams = params as SidecarNotifications["ui/status"]["params"];
			host.ui.setStatus(s.key, s.text ?? undefined);
		} else if (method === "sessions/report") {
			sessionTools.onReport(params as SidecarNotifications["sessions/report"]["params"]);
		}
	}

	function registerTool(def: ToolRegistration) {
		pi.registerTool({
			name: def.name,
			label: def.label,
			description: def.description,
			...(def.promptSnippet ? { promptSnippet: def.promptSnippet } : {}),
			// The JSON schema `pimem tool-schema` prints: a plain JSON-schema object, which pi accepts as
			// the TypeBox schema it stands for.
			parameters: def.parameters as ToolDefinition["parameters"],
			async execute(toolCallId, params) {
				await ready;
				if (!sidecar) throw new Error(inert ?? "Memory not initialized (no session_start yet)");
				const r = await sidecar.call("tool/execute", { toolCallId, args: params }, 120_000);
				return { content: [{ type: "text", text: r.text }], details: r.details, isError: r.isError };
			},
		});
	}

	async function runCommand(name: "memory" | "dream", args: string, ctx: ExtensionCommandContext) {
		await ready;
		if (!sidecar) {
			show(ctx, inert ?? "Memory not initialized.", inert ? "error" : "info");
			return;
		}
		try {
			const r = await sidecar.call("command/run", { name, args: args ?? "" });
			if (typeof r.text === "string") show(ctx, r.text, r.level);
		} catch (e) {
			show(ctx, errorMessage(e), "error");
		}
	}

	const initialize = (s: Sidecar) => s.call("initialize", { protocol: PROTOCOL, client: "pimem-pi", clientVersion: clientVersion() }, 10_000);
	const binary = findBinary();
	// Decision (issue 17, part 5): the sidecar is spawned at load, on the next turn of pi's
	// event loop, not in session_start: its process start and handshake then overlap pi's own
	// startup (≈ 100 ms between loading extensions and session_start), so session/start is
	// answered before pi asks for the first turn. Until a session adopts it, it is detached
	// (keeps no pi alive: `pi --help` and `pi install` load extensions too); a session_start
	// that comes first, or in another cwd, spawns its own as before.
	let early: { s: Sidecar; init: ReturnType<typeof initialize> } | undefined;
	const spawnEarly = () => {
		if (!binary.path) return;
		mark("spawn");
		const s = new Sidecar(binary.path, binary.pkg, process.cwd(), serveRequest, onNotification, () => undefined);
		s.detach();
		mark("spawned");
		const init = initialize(s);
		init.catch(() => undefined); // reported by the session that adopts it
		early = { s, init };
	};
	let pending: NodeJS.Immediate | undefined = setImmediate(() => {
		pending = undefined;
		spawnEarly();
	});
	pending.unref();
	/** The early sidecar for a session in `cwd`, spawning it now if its turn has not come. */
	const takeEarly = (cwd: string) => {
		if (pending) {
			clearImmediate(pending);
			pending = undefined;
			spawnEarly();
		}
		const e = early;
		early = undefined;
		if (e && e.s.cwd !== cwd) {
			void e.s.close(0);
			return undefined;
		}
		return e;
	};

	// The tool is declared now, from the schema `pimem tool-schema` prints (tests keep the two
	// equal), so nothing has to wait for the sidecar before pi builds its first request.
	registerTool(JSON.parse(readFileSync(join(HERE, "tool.json"), "utf8")));

	// ------------------------------------------------------- /memory list: browse, view, edit, delete
	// The sidecar decides and words everything (serve/curate.rs); this block only drives pi's UI:
	// ctx.ui.select for the list, a read-only custom view, ctx.ui.editor for an edit.

	/** The read-only view of one file (PA-31): e edit, d delete, ↑/↓ scroll, Esc back. */
	function viewFile(ctx: ExtensionCommandContext, view: MemoryOpenResult): Promise<"edit" | "delete" | "close"> {
		const lines = view.text.split("\n");
		return ctx.ui.custom<"edit" | "delete" | "close">((tui, theme, keybindings, done) => {
			let top = 0;
			const height = () => Math.max(5, (process.stdout.rows || 24) - 12);
			return {
				render(width: number): string[] {
					const shown = lines.slice(top, top + height()).map((l) => fit(l, width));
					const more = top + height() < lines.length ? [theme.fg("dim", fit(`… ${lines.length - top - height()} more`, width))] : [];
					return [theme.fg("accent", fit(view.title, width)), "", ...shown, ...more, "", theme.fg("dim", fit(view.keys, width))];
				},
				invalidate() {},
				handleInput(data: string) {
					const key = data.length === 1 ? data.toLowerCase() : "";
					if (keybindings.matches(data, "tui.select.up")) top = Math.max(0, top - 1);
					else if (keybindings.matches(data, "tui.select.down")) top = Math.min(Math.max(0, lines.length - height()), top + 1);
					else if (key === "e") return done("edit");
					else if (key === "d" && view.deletable) return done("delete");
					else if (key === "q" || keybindings.matches(data, "tui.select.cancel")) return done("close");
					tui.requestRender();
				},
			};
		});
	}

	/** `/memory list` in the TUI (PA-30..32): list → view → edit/delete; closing a view lists again. */
	async function browseMemory(ctx: ExtensionCommandContext) {
		await ready;
		const s = sidecar;
		if (!s) {
			show(ctx, inert ?? "Memory not initialized.", inert ? "error" : "info");
			return;
		}
		for (;;) {
			const list = await s.call("memory/list", {}, 30_000);
			if (list.empty !== null) {
				ctx.ui.notify(list.empty, "info");
				return;
			}
			const labels = list.items.map((i) => i.label);
			const picked = await ctx.ui.select(list.title, labels);
			const item = picked === undefined ? undefined : list.items[labels.indexOf(picked)];
			if (!item) return; // cancelling the list leaves
			for (;;) {
				const view = await s.call("memory/open", { file: item.file }, 30_000);
				if (view.error !== null) {
					ctx.ui.notify(view.error, "error");
					break;
				}
				const action = await viewFile(ctx, view);
				if (action === "close") break;
				let r: MemoryWriteResult;
				if (action === "edit") {
					const text = await ctx.ui.editor(view.editTitle, view.text);
					if (text === undefined) continue; // cancelled: back to the view
					// The sidecar refuses a view of an older session (PA-46); a replaced sidecar
					// means this instance's session is gone, and nothing may be saved.
					if (sidecar !== s) {
						try {
							ctx.ui.notify(view.invalidated, "error");
						} catch {
							// this instance's context is stale: pi has moved on
						}
						return;
					}
					r = await s.call("memory/save", { file: view.file, version: view.version, token: view.token, text }, 120_000);
				} else {
					r = await s.call("memory/delete", { file: view.file, version: view.version, token: view.token }, 24 * 60 * 60 * 1000);
				}
				if (r.text !== null) ctx.ui.notify(r.text, r.level);
				if (r.done) break; // saved or deleted: the list again (a rename changes the file)
			}
		}
	}

	pi.registerCommand("memory", {
		description:
			"Memory status; /memory list browses, views, edits and deletes memories; /memory reload refreshes the index at the next turn; /memory on|off switches memory for every project; /memory doctor checks the setup; /memory unlock removes a left-behind lock",
		getArgumentCompletions: (prefix) =>
			["status", "list", "reload", "on", "off", "doctor", "unlock"].filter((s) => s.startsWith(prefix)).map((s) => ({ value: s, label: s })),
		handler: async (args, ctx) => {
			if ((args ?? "").trim() === "list" && ctx.mode === "tui" && ctx.hasUI) {
				try {
					await browseMemory(ctx);
				} catch (e) {
					show(ctx, errorMessage(e), "error");
				}
			} else await runCommand("memory", args, ctx);
		},
	});
	pi.registerCommand("dream", {
		description: "Consolidate memory files with a headless agent (asks first)",
		handler: (args, ctx) => runCommand("dream", args, ctx),
	});
	mark("factory:end");

	// ---------------------------------------------------------------- /experience and its tool
	const experienceTool: ToolRegistration = JSON.parse(readFileSync(join(HERE, "experience-tool.json"), "utf8"));
	pi.registerTool({
		name: experienceTool.name,
		label: experienceTool.label,
		description: experienceTool.description,
		promptSnippet: experienceTool.promptSnippet,
		parameters: experienceTool.parameters as ToolDefinition["parameters"],
		async execute(toolCallId, params) {
			await ready;
			if (!sidecar) throw new Error(inert ?? "Memory not initialized (no session_start yet)");
			const r = await sidecar.call("experience/tool", { toolCallId, args: params }, 60_000);
			return { content: [{ type: "text", text: r.text }], details: {}, isError: r.isError };
		},
	});

	/** Runs `/experience <args>`; a `prompt` in the answer goes to the agent as a user message. */
	async function runExperience(args: string, ctx: ExtensionCommandContext, confirmed = false) {
		await ready;
		if (!sidecar) {
			show(ctx, inert ?? "Memory not initialized.", inert ? "error" : "info");
			return;
		}
		try {
			const debug = args.trim().startsWith("debug");
			const r: ExperienceRunResult = await sidecar.call("experience/run", { args, ...(confirmed ? { confirmed } : {}), ...(debug ? { forwarding: forwardTimes.stats() } : {}) }, 120_000);
			if (typeof r.text === "string") show(ctx, r.text, r.level);
			if (r.prompt) await pi.sendUserMessage(r.prompt);
		} catch (e) {
			show(ctx, errorMessage(e), "error");
		}
	}

	/** The read-only panel (PX-10): R refresh, L browse runs, S ask the agent to tidy, D diagnostics. */
	async function openPanel(ctx: ExtensionCommandContext) {
		await ready;
		const s = sidecar;
		if (!s) {
			show(ctx, inert ?? "Memory not initialized.", inert ? "error" : "info");
			return;
		}
		const load = (params: PanelParams) => s.call("experience/panel", params, 30_000);
		let view: PanelResult = await load({ view: "overview" });
		const tidy = await ctx.ui.custom<boolean>((tui, theme, keybindings, done) => {
			let mode: PanelParams["view"] = "overview";
			let selected = 0;
			let back: PanelParams["view"] = "overview";
			const go = (params: PanelParams) => {
				void load(params).then(
					(v) => {
						view = v;
						mode = params.view;
						selected = Math.min(selected, Math.max(0, v.runs.length - 1));
						tui.requestRender();
					},
					(e: unknown) => {
						view = { ...view, lines: [errorMessage(e)] };
						tui.requestRender();
					},
				);
			};
			return {
				render(width: number): string[] {
					const lines = view.lines.map((l, i) => (mode === "runs" ? `${i === selected ? "> " : "  "}${l}` : l));
					return [theme.fg("accent", fit(view.title, width)), "", ...lines.map((l) => fit(l, width)), "", theme.fg("dim", fit(view.keys, width))];
				},
				invalidate() {},
				handleInput(data: string) {
					const key = data.length === 1 ? data.toLowerCase() : "";
					const cancel = keybindings.matches(data, "tui.select.cancel");
					if (mode === "runs") {
						if (keybindings.matches(data, "tui.select.up")) selected = Math.max(0, selected - 1);
						else if (keybindings.matches(data, "tui.select.down")) selected = Math.min(view.runs.length - 1, selected + 1);
						else if (keybindings.matches(data, "tui.select.confirm") && view.runs[selected]) {
							back = "runs";
							go({ view: "run", run: view.runs[selected] });
							return;
						} else if (cancel || key === "q") go({ view: "overview" });
						tui.requestRender();
						return;
					}
					if (mode === "run" || mode === "debug") {
						if (cancel || key === "q") go({ view: mode === "run" ? back : "overview" });
						return;
					}
					if (key === "r") go({ view: "overview" });
					else if (key === "l") go({ view: "runs" });
					else if (key === "d") go({ view: "debug" });
					else if (key === "s") done(true);
					else if (cancel || key === "q") done(false);
				},
			};
		});
		if (tidy) await runExperience("prepare", ctx);
	}

	pi.registerCommand("experience", {
		description: "Recorded runs and experiences: runs, show R01, raw R01, search <words>, prepare, remember E1, debug",
		getArgumentCompletions: (prefix) =>
			["runs", "show", "raw", "search", "prepare", "remember", "debug"].filter((s) => s.startsWith(prefix)).map((s) => ({ value: s, label: s })),
		handler: async (args, ctx) => {
			if ((args ?? "").trim() === "" && ctx.mode === "tui" && ctx.hasUI) await openPanel(ctx);
			else await runExperience(args ?? "", ctx);
		},
	});

	// Run events for the run log (docs/pi-host.md §e): forwarded as they happen, never awaited.
	pi.on("agent_start", () => forward({ kind: "runStart" }));
	pi.on("message_end", (event) => {
		const m = event.message;
		if (m.role === "user") forward({ kind: "prompt", text: textOf(m.content) });
		else if (m.role === "assistant")
			forward({ kind: "assistant", text: textOf(m.content), stopReason: m.stopReason ?? null, error: m.errorMessage ?? null, model: `${m.provider}/${m.model}` });
	});
	pi.on("tool_execution_start", (event) => forward({ kind: "toolCall", id: event.toolCallId, name: event.toolName, args: event.args as unknown }));
	pi.on("tool_execution_end", (event) => {
		const result: unknown = event.result;
		const content = typeof result === "object" && result !== null && "content" in result ? result.content : result;
		forward({ kind: "toolResult", id: event.toolCallId, name: event.toolName, text: textOf(content).slice(0, MAX_FORWARDED_TEXT), isError: event.isError });
	});
	pi.on("model_select", (event) => forward({ kind: "modelChange", model: `${event.model.provider}/${event.model.id}` }));
	pi.on("user_bash", (event) => {
		forward({ kind: "userBash", command: event.command, excludeFromContext: event.excludeFromContext });
	});

	pi.on("session_start", async (event, ctx) => {
		mark("session_start");
		host = { hasUI: ctx.hasUI, ui: ctx.ui, registry: ctx.modelRegistry };
		const found = binary;
		if (!found.path) {
			inert = found.error;
			report(inert ?? "pimem: binary not found");
			return;
		}
		const onDeath = (reason: string) => {
			inert = reason;
			if (sidecar === s) sidecar = undefined;
			report(reason);
		};
		const pre = takeEarly(ctx.cwd);
		const s = pre?.s ?? new Sidecar(found.path, found.pkg, ctx.cwd, serveRequest, onNotification, onDeath);
		s.attach(onDeath);
		let recorded: unknown = null;
		const sectionPatches: unknown[] = [];
		for (const e of ctx.sessionManager.getBranch()) {
			if (e.type === "custom" && e.customType === RECORD_TYPE) recorded = e.data ?? null;
			else if (e.type === "message" && e.message?.role === "system" && e.message.sections) sectionPatches.push(e.message.sections);
			else if (e.type === "compaction" && e.systemMessage?.sections) sectionPatches.push(e.systemMessage.sections);
		}
		const sessionFile = ctx.sessionManager.getSessionFile() ?? null;
		const child = (!sessionFile && !ctx.hasUI) || !!process.env.PI_MEMORY_PARENT || !!process.env.PI_SESSION_ID;
		// Both requests go out at once and nothing is awaited here: the sidecar starts while pi
		// finishes its own startup; the tool, commands and events wait on `ready` instead.
		const init = pre?.init ?? initialize(s);
		const start = s.call(
			"session/start",
			{
				reason: event.reason,
				cwd: ctx.cwd,
				agentDir: agentDir(),
				trusted: ctx.isProjectTrusted(),
				hasUI: ctx.hasUI,
				mode: ctx.mode,
				sessionId: ctx.sessionManager.getSessionId(),
				sessionFile,
				sessionDir: ctx.sessionManager.getSessionDir() || null, // "" with --no-session
				child,
				recorded,
				sectionPatches,
			},
			30_000,
		);
		start.catch(() => undefined);
		const ui = ctx.ui;
		const hasUI = ctx.hasUI;
		const fail = (e: unknown): undefined => {
			const message = errorMessage(e);
			if (inert !== message) report(message); // a death was reported already
			inert = message;
			if (sidecar === s) sidecar = undefined;
			void s.close(1000);
			return undefined;
		};
		sidecar = s;
		mark("session_start:sent");
		ready = init.then(
			() =>
				start.then((r) => {
					mark("ready");
					section = r.section;
					if (r.record) pi.appendEntry(RECORD_TYPE, r.record);
					for (const n of r.notifications) notify(n.message, n.level);
					const nudge = r.nudge;
					if (nudge && hasUI) {
						// Not awaited: the question must not hold up the session.
						void Promise.resolve(ui.confirm(nudge.title, nudge.body)).then(async (ok) => {
							if (!ok || !sidecar) return;
							const d = await sidecar
								.call("command/run", { name: "dream", args: "", confirmed: true })
								.catch((e: unknown): CommandResult => ({ text: errorMessage(e), level: "error" }));
							if (typeof d.text === "string") notify(d.text, d.level);
						});
					}
					return r;
				}, fail),
			fail,
		);
	});

	pi.on("before_agent_start", async (event, _ctx) => {
		// Set before anything can fail: pi diffs sections, an omitted key would delete it.
		mark("before_agent_start");
		event.systemPromptOptions.sections[SECTION] = section;
		await ready;
		mark("before_agent_start:ready");
		event.systemPromptOptions.sections[SECTION] = section;
		if (!sidecar) return;
		try {
			const r = await sidecar.call(
				"agent/before_start",
				{ prompt: event.messageType === "user" ? event.prompt : null, messageType: event.messageType, systemPrompt: event.systemPrompt },
				60_000,
			);
			// The switch is checked at every turn start: "" while memory is off, the index read
			// again once it is back on (recorded like a fresh section).
			if (typeof r.section === "string") {
				section = r.section;
				event.systemPromptOptions.sections[SECTION] = section;
			}
			if (r.record) pi.appendEntry(RECORD_TYPE, r.record);
			mark("before_agent_start:answered");
			if (r.notify) notify(r.notify, "info");
			if (r.message) return { message: r.message };
		} catch {
			// PM-60: a failed surfacing injects nothing.
		}
		return undefined;
	});

	// Protected memory files: pi's built-in file tools are checked by the sidecar before they
	// run (write/edit never under the memory directory, no internals for read/ls, grep/find
	// narrowed). Without a sidecar nothing is known about memory and the tools run unchanged.
	pi.on("tool_call", async (event, ctx) => {
		if (!GUARDED_TOOLS.has(event.toolName)) return undefined;
		await ready;
		if (!sidecar) return undefined;
		const r = await sidecar.call("files/guard", { toolName: event.toolName, input: event.input, cwd: ctx.cwd }, 10_000).catch(() => undefined);
		if (r?.block) return { block: true, reason: r.block };
		return undefined;
	});

	pi.on("agent_end", (event) => {
		for (const m of event.messages) if (m?.role !== "system") batch.push(m);
	});

	pi.on("agent_settled", async (event) => {
		forward({ kind: "settled", aborted: event.aborted });
		const messages = batch;
		batch = [];
		await ready;
		if (!sidecar) return;
		await sidecar.call("agent/settled", { messages: withoutImageData(messages), aborted: event.aborted }, 10_000).catch(() => undefined);
	});

	// Tree navigation keeps this instance: views opened before can no longer write (PA-46).
	pi.on("session_tree", async () => {
		await ready;
		await sidecar?.call("session/tree", {}, 10_000).catch(() => undefined);
	});

	pi.on("session_compact", async (event) => {
		forward({ kind: "compaction", reason: event.reason, tokensBefore: event.compactionEntry.tokensBefore ?? null });
		await ready;
		if (!sidecar) return;
		try {
			const r = await sidecar.call("session/compact", {}, 10_000);
			if (typeof r.section === "string") section = r.section;
			if (r.record) pi.appendEntry(RECORD_TYPE, r.record);
		} catch {
			// keep the old section: still a valid, cached value
		}
	});

	pi.on("session_shutdown", async () => {
		const started = await ready;
		const s = sidecar;
		if (!s || !started) return;
		// The sidecar waits up to `lock.timeoutMs` for work in flight before it answers.
		await s.call("session/shutdown", {}, started.lockTimeoutMs + SHUTDOWN_GRACE_MS).catch(() => undefined);
		sidecar = undefined;
		await s.close(1000);
	});
}
