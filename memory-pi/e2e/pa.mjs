// pi-auto-memory's behaviours against real pi 1.6.0 (issue 11): the persistent switch seen
// across pi processes, the corrupt switch file, protected memory files through pi's
// `tool_call` event, and /memory doctor in print mode. Imported by run.mjs, which passes its
// helpers; every check name starts with PA.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export async function paScenarios(t) {
	const { W, HOME, EXT, PI_CLI, env, check, eq, pi, rpc, pimem, mark, makeAgent, requests, sectionIn, turnUserTexts, toolTexts, dirState } = t;
	const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
	const tool = (name, args) => `[[call:${name} ${JSON.stringify(args)}]]`;
	const A = makeAgent("agent-pa", { lock: { timeoutMs: 2000 } });
	const P = join(W, "project-pa");
	mkdirSync(P, { recursive: true });
	const MEM = pimem(A, P, ["dir"]).trim();
	const ROOT = join(HOME, ".pi", "memory");
	const SWITCH = join(A, "auto-memory.json");
	pimem(A, P, ["add", "--name", "Deploy rule", "--content", "Deploy with make ship ZEBRAFISH, never by hand."]);
	pimem(A, P, ["add", "--name", "Test rule", "--content", "Run cargo xtask ci before pushing."]);

	// --- PA1: off in one pi process is seen by the next turn of another
	{
		const b = rpc("PA1", A, P, []);
		try {
			await b.prompt("how do I deploy with make ship?");
			let q = requests("PA1");
			check("PA1: memory on: the section is sent", q.length === 1 && (sectionIn(q[0].body) ?? "").includes("Deploy rule"), JSON.stringify(q.map((x) => sectionIn(x.body))));
			check("PA1: memory on: a memory is surfaced", q.length === 1 && turnUserTexts(q[0].body).some((s) => s.startsWith("<relevant_memories>")));
			const before = dirState(MEM);
			const off = pi("PA1-off", A, P, ["-p", "/memory off"]);
			check("PA1: /memory off in another pi process confirms", off.stderr.includes("Memory is off for every project"), off.stderr);
			eq("PA1: the switch file is pi-auto-memory's", sorted(JSON.parse(readFileSync(SWITCH, "utf8"))), { enabled: false, version: 1 });
			mark("PA1-b");
			await b.prompt(`how do I deploy with make ship? ${tool("memory", { action: "list" })}`);
			const afterOff = requests("PA1-b");
			check("PA1: the next turn of the running process has no memory_index section", afterOff.length === 2 && afterOff.every((x) => sectionIn(x.body) === null), JSON.stringify(afterOff.map((x) => sectionIn(x.body))));
			check("PA1: ...and nothing surfaced", afterOff.length > 0 && turnUserTexts(afterOff[0].body).length === 1, JSON.stringify(afterOff.map((x) => turnUserTexts(x.body))));
			eq("PA1: the memory tool answers `Memory is off`", toolTexts(afterOff), ["Memory is off"]);
			eq("PA1: files are kept", dirState(MEM), before);
			const on = pi("PA1-on", A, P, ["-p", "/memory on"]);
			check("PA1: /memory on confirms", on.stderr.includes("Memory is on"), on.stderr);
			mark("PA1-c");
			await b.prompt("and the tests?");
			q = requests("PA1-c");
			check("PA1: back on: the section is read again at the next turn", (sectionIn(q.at(-1).body) ?? "").includes("Deploy rule"), sectionIn(q.at(-1).body));
		} catch (e) {
			check("PA1: rpc scenario ran", false, `${e.stack}\n${b.stderr}`);
		} finally {
			await b.close();
		}
	}

	// --- PA2: a corrupt switch file pauses memory, is reported and never rewritten
	{
		const bad = '{"version": 1, "enabled": "yes"}';
		writeFileSync(SWITCH, bad);
		let r = pi("PA2", A, P, ["-p", "/memory"]);
		check("PA2: /memory reports the pause and the fix", r.stderr.includes("Memory: paused") && r.stderr.includes('"enabled": "yes"; it must be true or false') && r.stderr.includes("delete it (a missing file means on)"), r.stderr);
		r = pi("PA2-tool", A, P, ["-p", `remember this ${tool("memory", { action: "add", name: "X", content: "y" })}`]);
		const texts = toolTexts(requests("PA2-tool"));
		check("PA2: the tool answers that memory is paused", texts[0]?.startsWith("Memory is paused: "), JSON.stringify(texts));
		check("PA2: no section while paused", requests("PA2-tool").every((x) => sectionIn(x.body) === null));
		r = pi("PA2-on", A, P, ["-p", "/memory on"]);
		check("PA2: /memory on refuses to overwrite it", r.stderr.includes("Memory switch not changed"), r.stderr);
		eq("PA2: the corrupt file is untouched", readFileSync(SWITCH, "utf8"), bad);
		writeFileSync(SWITCH, JSON.stringify({ version: 1, enabled: true, note: "kept" }));
	}

	// --- PA3: pi's file tools at the memory tree
	{
		const link = join(P, "memlink");
		symlinkSync(MEM, link);
		mkdirSync(join(P, "sub"), { recursive: true });
		const rel = `../home/.pi/memory/${MEM.slice(ROOT.length + 1)}`;
		const entry = readdirSync(MEM).find((f) => f.startsWith("Deploy"));
		const backup = readdirSync(join(MEM, ".backups"))[0];
		const before = dirState(MEM);
		const calls = [
			tool("write", { path: `${rel}/evil1.md`, content: "x" }),
			tool("write", { path: `@${MEM}/evil2.md`, content: "x" }),
			tool("edit", { path: `sub/../${rel}/MEMORY.md`, edits: [{ oldText: "Deploy", newText: "Hacked" }] }),
			tool("write", { path: "memlink/evil3.md", content: "x" }),
			tool("read", { path: `memlink/.backups/${backup}/MEMORY.md` }),
			tool("read", { path: `memlink/${entry}` }),
			tool("ls", { path: "memlink" }),
			tool("grep", { pattern: "ZEBRAFISH", path: W, glob: "**/.backups/**" }),
			tool("grep", { pattern: "ZEBRAFISH", path: W }),
			tool("find", { pattern: "*", path: "memlink/.backups" }),
			tool("find", { pattern: "*.md", path: W }),
		];
		// grep, find and ls are not in pi's default tool set.
		pi("PA3", A, P, ["-p", "--tools", "read,write,edit,grep,find,ls,memory", `touch memory ${calls.join(" ")}`]);
		const texts = toolTexts(requests("PA3"));
		eq("PA3: eleven tool results", texts.length, 11);
		const blocked = (i) => (texts[i] ?? "").startsWith("Blocked:");
		check("PA3: write with a relative path is blocked", blocked(0) && texts[0].includes("memory tool"), texts[0]);
		check("PA3: write with an @-prefixed path is blocked", blocked(1), texts[1]);
		check("PA3: edit through `..` is blocked", blocked(2), texts[2]);
		check("PA3: write through a symlink is blocked", blocked(3), texts[3]);
		check("PA3: read of a backup (internals) is blocked", blocked(4), texts[4]);
		check("PA3: read of an entry file stays allowed", (texts[5] ?? "").includes("ZEBRAFISH"), texts[5]);
		check("PA3: ls of a memory directory is blocked", blocked(6), texts[6]);
		check("PA3: a grep glob into .backups is blocked", blocked(7), texts[7]);
		check("PA3: grep from a parent directory was narrowed before it ran (.ignore in place)", existsSync(join(ROOT, ".ignore")) && readFileSync(join(ROOT, ".ignore"), "utf8").includes(".backups/"));
		// With rg installed the scan runs: entries are found, no path under .backups/ is listed.
		const grepOut = texts[8] ?? "";
		const ran = !grepOut.includes("ripgrep (rg) is not available");
		const internalPaths = grepOut.split("\n").filter((l) => /^[^:]*\.pi\/memory\/[^:]*\/(\.backups|sessions|\.lock|\.dream-meta)/.test(l));
		check("PA3: ...and shows no internals", !blocked(8) && (!ran || (grepOut.includes("Deploy-rule.md:") && internalPaths.length === 0)), grepOut.slice(0, 800));
		check("PA3: find inside the internals (through a symlink) is blocked", blocked(9), texts[9]);
		// find from a parent directory is narrowed by the same .ignore (fd reads it); offline pi
		// has no fd to download, so the scan itself only runs where fd is installed.
		const findOut = texts[10] ?? "";
		const fdRan = !findOut.includes("fd is not available");
		const findInternal = findOut.split("\n").filter((l) => /\.pi\/memory\/.*\/(\.backups|sessions|\.lock|\.dream-meta|\.experience)/.test(l));
		check("PA3: find from a parent directory is narrowed, not blocked", !blocked(10) && (!fdRan || (findOut.includes("Deploy-rule.md") && findInternal.length === 0)), findOut.slice(0, 800));
		eq("PA3: nothing was written to the memory directory", dirState(MEM), before);
		check("PA3: no stray files", !["evil1.md", "evil2.md", "evil3.md"].some((f) => existsSync(join(MEM, f))));
	}

	// --- PA4: /memory doctor in print mode
	{
		const r = pi("PA4", A, P, ["-p", "/memory doctor"]);
		check("PA4: /memory doctor prints its summary", /^Memory doctor: \d+ ok, \d+ warning, 0 failure, \d+ unchecked$/m.test(r.stderr), r.stderr);
		for (const id of ["config.agent", "switch", "root.reachable", "root.private", "project.identity", "index.parse", "index.agreement", "index.capacity", "index.window", "lock", "models", "protocol", "layout.legacy", "snapshots", "git.merge"]) {
			check(`PA4: doctor check ${id}`, new RegExp(`^(ok|warning|failure|unchecked) +${id.replace(".", "\\.")} `, "m").test(r.stderr), r.stderr);
		}
		check("PA4: the extension's protocol is compared", /^ok +protocol +extension and binary .* speak protocol 1$/m.test(r.stderr), r.stderr);
		eq("PA4: the switch kept its extra field", JSON.parse(readFileSync(SWITCH, "utf8")).note, "kept");
	}

	// --- PA5: what a person sees in pi's terminal UI (tmux, docs/pi-host.md §k)
	if (spawnSync("tmux", ["-V"]).status !== 0) {
		console.log("      (PA5 skipped: tmux is not installed)");
		return;
	}
	{
		const e = env(A);
		const script = join(W, "tui-pa.sh");
		const q = (v) => `'${String(v).replaceAll("'", "'\\''")}'`;
		const exports = Object.entries(e)
			.filter(([k]) => /^[A-Z_][A-Z0-9_]*$/.test(k))
			.map(([k, v]) => `export ${k}=${q(v)}`)
			.join("\n");
		writeFileSync(script, `${exports}\nunset PI_SESSION_ID PI_SESSION_FILE\ncd ${q(P)}\nexec ${q(process.execPath)} ${q(PI_CLI)} -e ${q(EXT)}\n`);
		const session = `pimem-pa-${process.pid}`;
		const tmux = (...args) => spawnSync("tmux", args, { encoding: "utf8" });
		const screen = () => tmux("capture-pane", "-t", session, "-p", "-J", "-S", "-200").stdout ?? "";
		const waitFor = async (re) => {
			for (let i = 0; i < 100; i++) {
				if (re.test(screen())) return true;
				await new Promise((r) => setTimeout(r, 200));
			}
			return false;
		};
		tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "60", `bash ${q(script)}`);
		try {
			const ready = await waitFor(/fake-model/);
			check("PA5: pi's TUI starts with the extension", ready, screen());
			tmux("send-keys", "-t", session, "/memory off", "Enter");
			check("PA5: /memory off is shown in the TUI", await waitFor(/Memory is off for every project/), screen());
			tmux("send-keys", "-t", session, "/memory", "Enter");
			check("PA5: /memory shows `Memory: off` above the status", await waitFor(/Memory: off — Run \/memory on[\s\S]*Dir: /), screen());
			tmux("send-keys", "-t", session, "/memory doctor", "Enter");
			check("PA5: /memory doctor is shown in the TUI with the switch warning", await waitFor(/Memory doctor: \d+ ok[\s\S]*warning +switch +memory is off/), screen());
			tmux("send-keys", "-t", session, "/memory on", "Enter");
			check("PA5: /memory on is shown in the TUI", await waitFor(/Memory is on \(saved in /), screen());
		} finally {
			tmux("kill-session", "-t", session);
		}
	}
}
