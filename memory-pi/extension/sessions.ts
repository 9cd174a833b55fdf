// pi-session in pimem: the `search-session` and `ask-session` tools and the `@s:` / `@as:`
// session references, as a thin shim over the sidecar's `sessions/*` methods (protocol in
// memory-pi/src/serve/mod.rs; the logic is memory-agent's pi::session_tools, the ask runner
// memory-pi/src/serve/ask.rs). This file decides nothing about sessions: it forwards the
// tool calls, the completion requests and the submitted input, and delivers the sidecar's
// `sessions/report` notifications with pi.sendMessage.
//
// - Tools: registered from ./session-tools.json (generated from the Rust definitions and kept
//   equal by a test) in every mode.
// - Completion: an autocomplete provider (TUI; a no-op in rpc, json and print) that answers
//   `@s:<query>` / `@as:<query>` tokens with the sidecar's candidates, never falls back to
//   file completion for them, and delegates everything else unchanged.
// - Expansion: pi's `input` event for sources `interactive` and `rpc` (never `extension`,
//   and never in a target pi running a background ask: PIMEM_ASK_TARGET).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AutocompleteProviderFactory, ExtensionAPI, ExtensionContext, ToolDefinition } from "@earendil-works/pi-coding-agent";
import type { PiRequests, RefPrefix, SessionCaller, SessionReport, SessionsToolResult, ToolRegistration } from "./protocol.ts";

/** A request to the sidecar, once it is ready (throws when it is not running). */
export type SidecarCall = <M extends keyof PiRequests>(method: M, params: PiRequests[M]["params"], timeoutMs?: number) => Promise<PiRequests[M]["result"]>;

export interface SessionHost {
	call: SidecarCall;
	/** pi's agent directory. */
	agentDir: () => string;
}

type AutocompleteProvider = ReturnType<AutocompleteProviderFactory>;

const HERE = typeof import.meta?.url === "string" ? dirname(fileURLToPath(import.meta.url)) : __dirname;
/** An `@s:` / `@as:` token being typed at the cursor: prefix letters, query. */
const REF_AT_CURSOR = /(?:^|\s)@(a?s):(\S*)$/;
/** Whether a text holds a reference worth asking the sidecar about. */
const HAS_REF = /(?:^|\s)@a?s:\S/;

function errorMessage(err: unknown): string {
	return typeof err === "object" && err !== null && "message" in err && err.message != null ? String(err.message) : String(err);
}

/** The command that starts this pi: node, its flags, pi's cli.js. */
function piCommand(): string[] {
	const script = process.argv[1];
	return script && existsSync(script) ? [process.execPath, ...process.execArgv, script] : [process.execPath];
}

function toolResult(r: SessionsToolResult) {
	return {
		content: [{ type: "text" as const, text: r.text }, ...(r.guidance ? [{ type: "text" as const, text: r.guidance }] : [])],
		details: r.details,
		isError: r.isError,
	};
}

export function registerSessionTools(pi: ExtensionAPI, host: SessionHost): { onReport: (r: SessionReport) => void } {
	/** Whether this extension instance's session is live (reports are dropped otherwise). */
	let live = false;
	/** A target pi running a background ask: its prompts are extension input (PS-10). */
	const backgroundTarget = !!process.env.PIMEM_ASK_TARGET;

	const caller = (ctx: ExtensionContext): SessionCaller => ({
		cwd: ctx.cwd,
		agentDir: host.agentDir(),
		// `--no-session` reports "" (no directory): absent.
		sessionDir: ctx.sessionManager.getSessionDir() || null,
		sessionId: ctx.sessionManager.getSessionId(),
		sessionFile: ctx.sessionManager.getSessionFile() ?? null,
	});

	/** A best-effort warning: a failing UI never blocks anything. */
	const warn = (ctx: ExtensionContext, text: string) => {
		try {
			if (ctx.hasUI) ctx.ui.notify(text, "warning");
			else process.stderr.write(`${text}\n`);
		} catch {
			// nothing more to do
		}
	};

	const defs: ToolRegistration[] = JSON.parse(readFileSync(join(HERE, "session-tools.json"), "utf8"));
	for (const def of defs) {
		pi.registerTool({
			name: def.name,
			label: def.label,
			description: def.description,
			promptSnippet: def.promptSnippet,
			// The JSON schema from the Rust definitions: a plain JSON-schema object, which pi accepts as
			// the TypeBox schema it stands for.
			parameters: def.parameters as ToolDefinition["parameters"],
			async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
				const args: unknown = params;
				if (def.name === "ask-session") {
					return toolResult(await host.call("sessions/ask", { caller: caller(ctx), args, piCommand: piCommand() }, 60_000));
				}
				return toolResult(await host.call("sessions/search", { caller: caller(ctx), args }, 120_000));
			},
		});
	}

	const provider = (ctx: ExtensionContext): AutocompleteProviderFactory => (current: AutocompleteProvider): AutocompleteProvider => ({
		...(current.triggerCharacters ? { triggerCharacters: current.triggerCharacters } : {}),
		async getSuggestions(lines, cursorLine, cursorCol, options) {
			const m = REF_AT_CURSOR.exec((lines[cursorLine] ?? "").slice(0, cursorCol));
			if (!m) return current.getSuggestions(lines, cursorLine, cursorCol, options);
			const letters = m[1] ?? "s";
			const prefix: RefPrefix = letters === "as" ? "as" : "s";
			try {
				const r = await host.call("sessions/candidates", { caller: caller(ctx), prefix, query: m[2] ?? "" }, 10_000);
				// A reserved prefix never falls back to file completion (PS-13): no candidates, no menu.
				if (options.signal.aborted || r.items.length === 0) return null;
				return {
					prefix: `@${letters}:${m[2] ?? ""}`,
					items: r.items.map((c) => ({ value: `@${letters}:${c.id}`, label: c.name, description: `${c.activity}  ${c.id}  ${c.cwd}` })),
				};
			} catch {
				return null;
			}
		},
		applyCompletion(lines, cursorLine, cursorCol, item, prefix) {
			if (!/^@a?s:/.test(prefix)) return current.applyCompletion(lines, cursorLine, cursorCol, item, prefix);
			// `@s:<full-ID>` replaces the token (PS-08), followed by one space to keep typing
			// (Decision, VECTORS §Z 18); nothing is sent.
			const line = lines[cursorLine] ?? "";
			const before = line.slice(0, cursorCol - prefix.length);
			const after = line.slice(cursorCol);
			const space = /^\s/.test(after) ? "" : " ";
			const next = [...lines];
			next[cursorLine] = `${before}${item.value}${space}${after}`;
			return { lines: next, cursorLine, cursorCol: before.length + item.value.length + space.length };
		},
		shouldTriggerFileCompletion(lines, cursorLine, cursorCol) {
			// Tab on a reference asks this provider (which lists sessions), not the file finder.
			if (REF_AT_CURSOR.test((lines[cursorLine] ?? "").slice(0, cursorCol))) return true;
			return current.shouldTriggerFileCompletion?.(lines, cursorLine, cursorCol) ?? true;
		},
	});

	pi.on("session_start", (_event, ctx) => {
		live = true;
		try {
			// Registered in every mode (PS-04); only the TUI shows completions.
			ctx.ui.addAutocompleteProvider(provider(ctx));
		} catch (e) {
			warn(ctx, `pimem: session completion is unavailable: ${errorMessage(e)}`);
		}
	});

	pi.on("session_shutdown", () => {
		// Before anything is awaited: a report arriving from now on belongs to no lifecycle (PS-30).
		live = false;
	});

	pi.on("input", async (event, ctx) => {
		if (event.source === "extension" || backgroundTarget || !HAS_REF.test(event.text)) return { action: "continue" };
		try {
			const r = await host.call("sessions/expand", { caller: caller(ctx), text: event.text }, 15_000);
			if (r.warning) warn(ctx, r.warning);
			if (typeof r.text === "string") return { action: "transform", text: r.text, ...(event.images ? { images: event.images } : {}) };
		} catch (e) {
			warn(ctx, `Session references were not expanded (the input is sent unchanged): ${errorMessage(e)}`);
		}
		return { action: "continue" };
	});

	return {
		onReport(r: SessionReport) {
			if (!live) return;
			try {
				pi.sendMessage({ customType: r.customType, content: r.content, display: true, details: r.details }, { deliverAs: "steer", triggerTurn: true });
			} catch {
				// this instance was replaced meanwhile: the report belongs to no lifecycle any more
			}
		},
	};
}
