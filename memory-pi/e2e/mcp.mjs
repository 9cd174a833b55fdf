#!/usr/bin/env node
// `pimem mcp` driven by a real MCP client: the official TypeScript SDK
// (@modelcontextprotocol/sdk, installed by install.sh into the e2e cache). Run through
// `cargo xtask e2e`, which sets:
//   PIMEM_BIN  the pimem binary under test      MCP_SDK  the SDK's package directory
// Everything happens in a fresh temp dir (HOME, memory dir, agent dir, projects); nothing
// touches the real ~/.pi. Prints PASS/FAIL per check and "N passed, N failed"; exit 1 on any
// failure. E2E_KEEP=1 keeps the work dir.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const { PIMEM_BIN, MCP_SDK } = process.env;
if (!PIMEM_BIN || !MCP_SDK) {
	console.error("mcp.mjs: set PIMEM_BIN and MCP_SDK (cargo xtask e2e does)");
	process.exit(2);
}
const sdk = (p) => import(pathToFileURL(join(MCP_SDK, "dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { ListRootsRequestSchema, ResourceListChangedNotificationSchema } = await sdk("types.js");

const W = mkdtempSync(join(tmpdir(), "pimem-mcp-e2e-"));
const HOME = join(W, "home");
const MEM = join(W, "memory");
const AGENT = join(W, "agent");
const PROJ = join(W, "proj");
const ROOTED = join(W, "rooted project");
for (const d of [HOME, MEM, AGENT, PROJ, ROOTED]) mkdirSync(d, { recursive: true });
const ENV = { PATH: process.env.PATH, HOME, PI_CODING_AGENT_DIR: AGENT };
const GLOBAL = ["--memory-dir", MEM, "--agent-dir", AGENT];

let failed = 0;
let passed = 0;
function check(name, cond, detail = "") {
	if (cond) passed++;
	else failed++;
	console.log(`${cond ? "PASS" : "FAIL"}  mcp: ${name}${!cond && detail ? `\n      ${String(detail).slice(0, 1500).replace(/\n/g, "\n      ")}` : ""}`);
}
const eq = (name, got, want) => check(name, JSON.stringify(got) === JSON.stringify(want), `got:  ${JSON.stringify(got)}\n      want: ${JSON.stringify(want)}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function pimem(args, cwd = PROJ) {
	const r = spawnSync(PIMEM_BIN, ["--cwd", cwd, ...GLOBAL, ...args], { env: ENV, encoding: "utf8" });
	if (r.status !== 0) throw new Error(`pimem ${args.join(" ")} failed: ${r.stderr}`);
	return r.stdout;
}
const dirOf = (cwd) => pimem(["dir"], cwd).trim();

/** A digest of every file under `dir` (names and bytes), to prove nothing changed. */
function treeDigest(dir) {
	const h = createHash("sha256");
	const walk = (d) => {
		if (!existsSync(d)) return;
		for (const name of readdirSync(d).sort()) {
			const p = join(d, name);
			if (statSync(p).isDirectory()) walk(p);
			else h.update(`${p}\0`).update(readFileSync(p));
		}
	};
	walk(dir);
	return h.digest("hex");
}

/** A stdio client; `roots` (paths) makes it announce the roots capability. */
async function stdioClient(name, { roots = null, cwd = PROJ } = {}) {
	const capabilities = roots ? { roots: { listChanged: true } } : {};
	const client = new Client({ name, version: "1.0.0" }, { capabilities });
	if (roots) {
		client.setRequestHandler(ListRootsRequestSchema, async () => ({
			roots: roots.map((p) => ({ uri: pathToFileURL(p).href, name: "project" })),
		}));
	}
	const changes = { count: 0 };
	client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => {
		changes.count++;
	});
	const transport = new StdioClientTransport({
		command: PIMEM_BIN,
		args: ["mcp", "--cwd", cwd, ...GLOBAL, "--watch-interval-ms", "200"],
		env: ENV,
		stderr: "pipe",
	});
	await client.connect(transport);
	return { client, changes };
}

async function rpcError(promise) {
	try {
		await promise;
		return null;
	} catch (e) {
		return { code: e.code, message: String(e.message), data: e.data };
	}
}
const text = (r) => r.content.map((c) => c.text).join("");
async function waitFor(cond, ms = 5000) {
	for (let t = 0; t < ms && !cond(); t += 25) await sleep(25);
	return cond();
}

try {
	// ------------------------------------------------------------------ stdio, one client
	const { client, changes } = await stdioClient("e2e");
	const info = client.getServerVersion();
	eq("initialize: server name", info?.name, "pimem");
	const caps = client.getServerCapabilities();
	check("initialize: tools, resources (listChanged) and prompts", caps?.tools && caps?.resources?.listChanged === true && caps?.prompts, JSON.stringify(caps));

	const toolList = (await client.listTools()).tools;
	const tools = toolList.map((t) => t.name);
	eq("tools/list", tools, ["memory_add", "memory_replace", "memory_remove", "memory_list", "memory_search", "session_search"]);
	eq("tools/list: read-only hints", toolList.map((t) => t.annotations?.readOnlyHint), [false, false, false, true, true, true]);
	eq("tools/list: memory_add's schema requires name and content", toolList[0].inputSchema.required, ["name", "content"]);
	const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
	eq("prompts/list", prompts, ["memory_index", "relevant_memories"]);
	const before = (await client.listResources()).resources.map((r) => r.uri);
	eq("resources/list: only the index before any memory", before, ["pimem://index"]);
	eq("memory_list on an empty project", text(await client.callTool({ name: "memory_list", arguments: {} })), "No memories yet.");

	const added = await client.callTool({ name: "memory_add", arguments: { name: "Test command", content: "Run `cargo xtask ci` before pushing, not `cargo test`." } });
	eq("memory_add: pi's text", text(added), 'Saved "Test command" (Test-command.md).');
	const v1 = added.structuredContent?.version;
	check("memory_add: structuredContent carries the version", /^[0-9a-f]{16}$/.test(v1 ?? ""), JSON.stringify(added.structuredContent));
	check("resources/list_changed after the add", await waitFor(() => changes.count >= 1), `notifications: ${changes.count}`);
	const after = (await client.listResources()).resources;
	eq("resources/list: the index and the new entry", after.map((r) => r.uri), ["pimem://index", "pimem://entry/Test-command.md"]);
	eq("resources/list: entry metadata", [after[1].name, after[1]._meta?.version], ["Test command", v1]);
	const dir = dirOf(PROJ);
	const entryPath = join(dir, "Test-command.md");
	const read = await client.readResource({ uri: "pimem://entry/Test-command.md" });
	eq("resources/read: bytes equal the entry file", read.contents[0].text, readFileSync(entryPath, "utf8"));
	eq("resources/read: _meta.version", read.contents[0]._meta?.version, v1);
	const index = await client.readResource({ uri: "pimem://index" });
	eq("resources/read: the index equals MEMORY.md", index.contents[0].text, readFileSync(join(dir, "MEMORY.md"), "utf8"));

	// compare-and-swap
	const entryBefore = readFileSync(entryPath, "utf8");
	const stale = await client.callTool({ name: "memory_replace", arguments: { name: "Test command", content: "something else", expected_version: "0000000000000000" } });
	check("memory_replace with a stale version: conflict", stale.isError === true && text(stale) === "Memory conflict: stale version", JSON.stringify(stale));
	eq("memory_replace with a stale version: file unchanged", readFileSync(entryPath, "utf8"), entryBefore);
	const replaced = await client.callTool({ name: "memory_replace", arguments: { name: "Test command", content: "Run `cargo xtask ci` (fmt, clippy, tests, e2e) before pushing.", expected_version: v1 } });
	eq("memory_replace with the current version", text(replaced), 'Replaced "Test command" (Test-command.md).');
	const v2 = replaced.structuredContent?.version;
	check("memory_replace: a new version", v2 && v2 !== v1, JSON.stringify(replaced.structuredContent));
	// The session's own book: list, then a change from outside, then replace without a version.
	await client.callTool({ name: "memory_list", arguments: {} });
	pimem(["replace", "--name", "Test command", "--content", "changed by the CLI meanwhile"]);
	const implicit = await client.callTool({ name: "memory_replace", arguments: { name: "Test command", content: "the session's stale view" } });
	check("memory_replace after another writer changed what memory_list showed: conflict", implicit.isError === true && text(implicit) === "Memory conflict: stale version", JSON.stringify(implicit));
	check("resources/list_changed for a change made outside the server", await waitFor(() => changes.count >= 3), `notifications: ${changes.count}`);

	// secrets
	const secretDigest = treeDigest(MEM);
	const secret = "sk-ant-api03-" + "Q".repeat(40);
	const refused = await client.callTool({ name: "memory_add", arguments: { name: "Anthropic key", content: `the key is ${secret}` } });
	check("memory_add with a secret: refused", refused.isError === true && text(refused).startsWith("Refusing to store a secret"), text(refused));
	check("memory_add with a secret: the secret is not echoed", !text(refused).includes(secret) && !JSON.stringify(refused).includes("QQQQQQQQ"));
	eq("memory_add with a secret: nothing written", treeDigest(MEM), secretDigest);

	// malformed requests: JSON-RPC errors naming the field, nothing on disk changes
	const digest = treeDigest(MEM);
	const bad = [
		["non-string name", client.callTool({ name: "memory_add", arguments: { name: 5, content: "x" } }), "name", "name must be a string"],
		["missing name", client.callTool({ name: "memory_add", arguments: { content: "x" } }), "name", "name is required for add"],
		["missing content", client.callTool({ name: "memory_add", arguments: { name: "x" } }), "content", "content is required for add"],
		["unknown argument", client.callTool({ name: "memory_add", arguments: { name: "x", content: "y", colour: "red" } }), "colour", 'unknown argument "colour"'],
		["bad type", client.callTool({ name: "memory_add", arguments: { name: "x", content: "y", type: "note" } }), "type", "type must be one of"],
		["bad expected_version", client.callTool({ name: "memory_remove", arguments: { name: "Test command", expected_version: "xyz" } }), "expected_version", "invalid version"],
		["missing query", client.callTool({ name: "memory_search", arguments: {} }), "query", "query is required for search"],
		["unknown tool", client.callTool({ name: "memory_wipe", arguments: {} }), "name", 'unknown tool "memory_wipe"'],
		["resource outside the directory", client.readResource({ uri: "pimem://entry/..%2Fsecrets.md" }), "uri", "uri:"],
		["prompt without its text", client.getPrompt({ name: "relevant_memories", arguments: {} }), "text", "text is required"],
	];
	// The requests run at once; one may fail before the loop awaits it, which Node would report
	// as an unhandled rejection and exit: mark each handled now (awaiting it still throws).
	for (const [, promise] of bad) promise.catch(() => {});
	for (const [what, promise, field, message] of bad) {
		const e = await rpcError(promise);
		check(`malformed (${what}): JSON-RPC -32602 naming ${field}`, e && e.code === -32602 && e.data?.field === field && e.message.includes(message), JSON.stringify(e));
	}
	const missing = await rpcError(client.readResource({ uri: "pimem://entry/No-such.md" }));
	check("resources/read of a missing entry: resource not found", missing && [-32002, -32602].includes(missing.code) && missing.data?.field === "uri", JSON.stringify(missing));
	eq("malformed requests: nothing on disk changed", treeDigest(MEM), digest);

	// search, list, prompts, sessions
	const found = await client.callTool({ name: "memory_search", arguments: { query: "cli" } });
	check("memory_search: pi's result block and count", text(found).startsWith("## Test command\nfile: Test-command.md\n") && found.structuredContent?.count === 1, JSON.stringify(found));
	const listed = await client.callTool({ name: "memory_list", arguments: {} });
	eq("memory_list: pi's line", text(listed), pimem(["list"]).trimEnd());
	const section = await client.getPrompt({ name: "memory_index", arguments: {} });
	eq("prompt memory_index: the frozen section", section.messages[0].content.text, pimem(["section"]));
	pimem(["add", "--name", "Later", "--content", "added after the section froze"]);
	const again = await client.getPrompt({ name: "memory_index", arguments: {} });
	eq("prompt memory_index: frozen for the session", again.messages[0].content.text, section.messages[0].content.text);
	pimem(["add", "--name", "Staging SSH", "--content", "staging SSH listens on port 2222, not 22."]);
	const relevant = await client.getPrompt({ name: "relevant_memories", arguments: { text: "which port does staging ssh use?" } });
	check("prompt relevant_memories: the lexical selection", relevant.messages[0].content.text.includes("<relevant_memories>") && relevant.messages[0].content.text.includes("2222"), relevant.messages[0].content.text);
	const sessions = await client.callTool({ name: "session_search", arguments: { query: "deadlock" } });
	check("session_search answers with pi's text", typeof text(sessions) === "string" && text(sessions).length > 0, JSON.stringify(sessions));
	const removed = await client.callTool({ name: "memory_remove", arguments: { name: "Later" } });
	eq("memory_remove", text(removed), 'Removed "Later".');
	await client.close();

	// ------------------------------------------------------------------ roots
	const rooted = await stdioClient("rooted", { roots: [ROOTED] });
	const viaRoots = await rooted.client.callTool({ name: "memory_add", arguments: { name: "Rooted", content: "this memory belongs to the root's project" } });
	eq("roots: add lands in the root's project", text(viaRoots), 'Saved "Rooted" (Rooted.md).');
	check("roots: the file is in the root's memory directory, not --cwd's", existsSync(join(dirOf(ROOTED), "Rooted.md")) && !existsSync(join(dir, "Rooted.md")));
	await rooted.client.close();

	// ------------------------------------------------------------------ two clients writing at once
	const a = await stdioClient("writer-a");
	const b = await stdioClient("writer-b");
	const N = 15;
	const writes = [];
	for (let i = 0; i < N; i++) {
		writes.push(a.client.callTool({ name: "memory_add", arguments: { name: `A ${i}`, content: `fact ${i} from client A` } }));
		writes.push(b.client.callTool({ name: "memory_add", arguments: { name: `B ${i}`, content: `fact ${i} from client B` } }));
	}
	const results = await Promise.all(writes);
	const errors = results.filter((r) => r.isError).map(text);
	eq("two clients writing at once: every write succeeded", errors, []);
	const names = JSON.parse(pimem(["--json", "list"])).map((e) => e.name);
	const expected = [...Array(N).keys()].flatMap((i) => [`A ${i}`, `B ${i}`]);
	eq("two clients writing at once: nothing lost (files)", expected.filter((n) => !names.includes(n)), []);
	const indexText = readFileSync(join(dir, "MEMORY.md"), "utf8");
	eq("two clients writing at once: nothing lost (index lines)", expected.filter((n) => !indexText.includes(`[${n}]`)), []);
	await a.client.close();
	await b.client.close();

	// ------------------------------------------------------------------ HTTP
	const refusedBind = spawnSync(PIMEM_BIN, ["mcp", "--cwd", PROJ, ...GLOBAL, "--http", "0.0.0.0:0"], { env: ENV, encoding: "utf8" });
	check("http: a non-loopback address is refused at start", refusedBind.status !== 0 && refusedBind.stderr.includes("only loopback"), refusedBind.stderr);
	const tokenFile = join(W, "token");
	const server = spawn(PIMEM_BIN, ["mcp", "--cwd", PROJ, ...GLOBAL, "--http", "127.0.0.1:0", "--token-file", tokenFile], { env: ENV, stdio: ["ignore", "ignore", "pipe"] });
	let stderr = "";
	server.stderr.on("data", (d) => (stderr += d));
	await waitFor(() => /listening on (http:\/\/\S+)/.test(stderr) && existsSync(tokenFile), 10000);
	const url = stderr.match(/listening on (http:\/\/\S+)/)?.[1];
	const token = existsSync(tokenFile) ? readFileSync(tokenFile, "utf8").trim() : "";
	check("http: listening on a loopback address with a token", url?.startsWith("http://127.0.0.1:") && /^[0-9a-f]{64}$/.test(token), stderr);
	check("http: the token file is private (0600)", existsSync(tokenFile) && (statSync(tokenFile).mode & 0o777) === 0o600);
	const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
	const post = (headers) => fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body: init });
	eq("http: no token → 401", (await post({})).status, 401);
	eq("http: a wrong token → 401", (await post({ authorization: "Bearer " + "0".repeat(64) })).status, 401);
	eq("http: a foreign Origin → 403", (await post({ authorization: `Bearer ${token}`, origin: "http://evil.example" })).status, 403);
	eq("http: a foreign Origin → 403 even on 127.0.0.1's other ports", (await post({ authorization: `Bearer ${token}`, origin: "http://127.0.0.1:1" })).status, 403);
	const port = new URL(url).port;
	const rebound = await new Promise((resolve) => {
		const req = httpRequest({ host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { host: `evil.example:${port}`, authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" } }, (res) => {
			res.resume();
			resolve(res.statusCode);
		});
		req.on("error", () => resolve(-1));
		req.end(init);
	});
	check("http: a rebinding Host header is refused", rebound >= 400 && rebound < 500, `status ${rebound}`);
	const httpClient = new Client({ name: "http", version: "1.0.0" });
	await httpClient.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
	const httpList = await httpClient.callTool({ name: "memory_list", arguments: {} });
	check("http: the SDK client with the token lists memories", text(httpList).startsWith("- Test command (feedback, modified "), text(httpList));
	const httpAdd = await httpClient.callTool({ name: "memory_add", arguments: { name: "Via HTTP", content: "added over streamable HTTP" } });
	eq("http: memory_add", text(httpAdd), 'Saved "Via HTTP" (Via-HTTP.md).');
	await httpClient.close();
	server.kill("SIGINT");
	await new Promise((r) => server.once("exit", r));
} catch (e) {
	check("the suite ran without an exception", false, e?.stack ?? String(e));
} finally {
	if (!process.env.E2E_KEEP) rmSync(W, { recursive: true, force: true });
	else console.log(`kept ${W}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
