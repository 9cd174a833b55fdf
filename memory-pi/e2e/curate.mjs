// Curating memory in pi (issue 12, part A) against real pi 1.6.0: `/memory list` printed in
// print and rpc modes, the session usage summary of `/memory` over rpc, and in a real terminal
// (tmux, docs/pi-host.md §k) the list, the read-only view, delete with confirmation, edit and
// save, an edit that another process overtook, and the same screens in Simplified Chinese.
// Imported by run.mjs, which passes its helpers; every check name starts with CU.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export async function curateScenarios(t) {
	const { W, EXT, PI_CLI, env, check, pi, rpc, pimem, makeAgent } = t;
	const tool = (name, args) => `[[call:${name} ${JSON.stringify(args)}]]`;
	const A = makeAgent("agent-cu", { lock: { timeoutMs: 2000 } });
	const P = join(W, "project-cu");
	mkdirSync(P, { recursive: true });
	const MEM = pimem(A, P, ["dir"]).trim();
	const seed = () => {
		pimem(A, P, ["add", "--name", "Deploy rule", "--content", "Deploy with make ship, never by hand."]);
		pimem(A, P, ["add", "--name", "Test rule", "--content", "Run cargo xtask ci before pushing."]);
		pimem(A, P, ["add", "--name", "Style rule", "--content", "Indent with tabs in the extension."]);
	};

	// --- CU1: /memory list in print mode (an empty directory says so)
	{
		let r = pi("CU1-empty", A, P, ["-p", "/memory list"]);
		check("CU1: an empty memory directory says so", r.stderr.includes("No memory files yet."), r.stderr);
		seed();
		r = pi("CU1", A, P, ["-p", "/memory list"]);
		check("CU1: print mode prints the listing on stderr", r.stderr.includes(`Memory files in ${MEM} (4):\n  MEMORY.md · index · modified `), r.stderr);
		check("CU1: ...one line per entry with name, type, modified, size and file", /\n {2}Deploy rule · feedback · modified \d{4}-\d\d-\d\d \d\d:\d\d · \d+ B · Deploy-rule\.md\n/.test(r.stderr), r.stderr);
		check("CU1: ...and no body", !r.stderr.includes("never by hand"), r.stderr);
	}

	// --- CU2: rpc mode: the listing and the session usage summary
	{
		const b = rpc("CU2", A, P, []);
		try {
			await b.prompt("/memory list");
			const listed = await b.waitNotification(/^Memory files in /);
			check("CU2: rpc mode shows the listing as a notification", listed.message.includes("\n  Test rule · feedback · modified "), listed.message);
			await b.prompt(`remember this ${tool("memory", { action: "add", name: "Rpc note", content: "Script pi through the rpc mode." })}`);
			await b.prompt("how do I deploy with make ship?");
			await b.prompt(`show me the deploy rule ${tool("read", { path: join(MEM, "Deploy-rule.md") })}`);
			await b.prompt("/memory");
			const status = await b.waitNotification(/Session usage:/);
			const m = status.message;
			check("CU2: /memory keeps pi-memory's status first", m.startsWith(`Dir: ${MEM}\n`), m);
			check("CU2: the summary lists the tool's save with its turn", m.includes("\n  Saves (1): Rpc note (tool, turn 1)"), m);
			check("CU2: ...the memory surfaced, how often and when last", /\n {2}Surfaced \(\d+\): [^\n]*Deploy rule ×1 \(last turn 2\)/.test(m), m);
			check("CU2: ...and the entry file the model read", m.includes("\n  Read by the model (1): Deploy-rule.md ×1 (last turn 3)"), m);
			check("CU2: ...and no body", !m.includes("never by hand") && !m.includes("Script pi through"), m);
		} catch (e) {
			check("CU2: rpc scenario ran", false, `${e.stack}\n${b.stderr}`);
		} finally {
			await b.close();
		}
		const b2 = rpc("CU2-new", A, P, []);
		try {
			await b2.prompt("/memory");
			const s = await b2.waitNotification(/^Dir: /);
			check("CU2: a new session starts without a summary", !s.message.includes("Session usage"), s.message);
		} catch (e) {
			check("CU2: second rpc scenario ran", false, `${e.stack}\n${b2.stderr}`);
		} finally {
			await b2.close();
		}
	}

	// --- CU3/CU4: the TUI in a real terminal (tmux)
	if (spawnSync("tmux", ["-V"]).status !== 0) {
		check("CU3: tmux is installed for the TUI test", false);
		return;
	}
	const q = (v) => `'${String(v).replaceAll("'", "'\\''")}'`;
	const tmux = (...args) => spawnSync("tmux", args, { encoding: "utf8" });
	const startTui = (name, agent) => {
		const script = join(W, `tui-${name}.sh`);
		const exports = Object.entries(env(agent))
			.filter(([k]) => /^[A-Z_][A-Z0-9_]*$/.test(k))
			.map(([k, v]) => `export ${k}=${q(v)}`)
			.join("\n");
		writeFileSync(script, `${exports}\nunset PI_SESSION_ID PI_SESSION_FILE\ncd ${q(P)}\nexec ${q(process.execPath)} ${q(PI_CLI)} -e ${q(EXT)}\n`);
		const session = `pimem-${name}-${process.pid}`;
		tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "50", `bash ${q(script)}`);
		const screen = () => tmux("capture-pane", "-t", session, "-p", "-J").stdout ?? "";
		const waitFor = async (re) => {
			for (let i = 0; i < 100; i++) {
				if (re.test(screen())) return true;
				await new Promise((r) => setTimeout(r, 200));
			}
			return false;
		};
		const waitGone = async (re) => {
			for (let i = 0; i < 100; i++) {
				if (!re.test(screen())) return true;
				await new Promise((r) => setTimeout(r, 200));
			}
			return false;
		};
		const keys = (...k) => tmux("send-keys", "-t", session, ...k);
		const type = (text) => tmux("send-keys", "-t", session, "-l", text);
		/** Types a command and submits it: an Enter that only accepted pi's argument completion
		 * (the command still in the editor) is followed by a second one. */
		const submit = async (text) => {
			type(text);
			await new Promise((r) => setTimeout(r, 400));
			keys("Enter");
			const still = new RegExp(`^${text.replace(/[/]/g, "\\/")}\\s*$`, "m");
			for (let i = 0; i < 5; i++) {
				await new Promise((r) => setTimeout(r, 200));
				if (!still.test(screen())) return;
			}
			keys("Enter");
		};
		return { session, screen, waitFor, waitGone, keys, type, submit, kill: () => tmux("kill-session", "-t", session) };
	};
	const entry = (f) => readFileSync(join(MEM, f), "utf8");
	/** Keys that move the list's cursor from MEMORY.md to `name` (entries oldest first, as listed). */
	const downTo = (keys, name) => {
		const names = JSON.parse(pimem(A, P, ["list", "--json"])).map((e) => e.name);
		for (let i = 0; i <= names.indexOf(name); i++) keys("Down");
	};
	const snapshotsWith = (f) => (existsSync(join(MEM, ".backups")) ? readdirSync(join(MEM, ".backups")).filter((d) => existsSync(join(MEM, ".backups", d, f))) : []);

	{
		const tui = startTui("cu", A);
		const { screen, waitFor, waitGone, keys, type, submit } = tui;
		try {
			check("CU3: pi's TUI starts with the extension", await waitFor(/fake-model/), screen());
			type("/memory list");
			keys("Enter");
			check("CU3: /memory list opens the list with MEMORY.md and every entry", await waitFor(/Memory files — [\s\S]*MEMORY\.md · index[\s\S]*Deploy rule · feedback[\s\S]*Test rule · feedback[\s\S]*Style rule · feedback/), screen());
			downTo(keys, "Deploy rule");
			keys("Enter");
			check("CU3: moving down and selecting opens the read-only view", await waitFor(/Deploy-rule\.md \(read-only\)[\s\S]*Deploy with make ship, never by hand\.[\s\S]*e edit · d delete/), screen());
			keys("Escape");
			check("CU3: closing the view lists again", await waitFor(/Memory files — [\s\S]*Style rule · feedback/), screen());

			// delete with confirmation
			downTo(keys, "Test rule");
			keys("Enter");
			check("CU3: the second entry's view", await waitFor(/Test-rule\.md \(read-only\)/), screen());
			keys("d");
			check("CU3: delete asks with the name", await waitFor(/Delete memory[\s\S]*Delete "Test rule" \(Test-rule\.md\)\?[\s\S]*Yes[\s\S]*No/), screen());
			const snapsBefore = snapshotsWith("Test-rule.md").length;
			keys("Enter");
			check("CU3: the deletion is confirmed on screen", await waitFor(/Deleted "Test rule"\./), screen());
			check("CU3: the file is gone", !existsSync(join(MEM, "Test-rule.md")));
			check("CU3: its index line is gone", !entry("MEMORY.md").includes("Test-rule.md") && entry("MEMORY.md").includes("Deploy-rule.md"), entry("MEMORY.md"));
			check("CU3: a snapshot holds the deleted entry", snapshotsWith("Test-rule.md").length > snapsBefore);

			// edit and save
			check("CU3: after the delete the list is shown again", await waitFor(/Memory files — [\s\S]*Deploy rule · feedback/), screen());
			downTo(keys, "Deploy rule");
			keys("Enter");
			check("CU3: the view again", await waitFor(/Deploy-rule\.md \(read-only\)/), screen());
			keys("e");
			check("CU3: e opens pi's editor on the entry", await waitFor(/Edit Deploy-rule\.md[\s\S]*name: Deploy rule/), screen());
			type("EDITED-IN-TUI");
			keys("Enter");
			check("CU3: saving says so", await waitFor(/Saved Deploy-rule\.md\./), screen());
			check("CU3: the edit is on disk", entry("Deploy-rule.md").includes("EDITED-IN-TUI") && entry("Deploy-rule.md").includes("never by hand"), entry("Deploy-rule.md"));

			// an edit overtaken by another process
			check("CU3: back at the list", await waitFor(/Memory files — [\s\S]*Deploy rule · feedback/), screen());
			downTo(keys, "Deploy rule");
			keys("Enter");
			await waitFor(/Deploy-rule\.md \(read-only\)[\s\S]*EDITED-IN-TUI/);
			keys("e");
			check("CU3: the editor is open again", await waitFor(/Edit Deploy-rule\.md/), screen());
			pimem(A, P, ["replace", "--name", "Deploy rule", "--content", "Deploy through the pipeline, CHANGED-OUTSIDE."]);
			const outside = entry("Deploy-rule.md");
			type("MINE-NOT-SAVED");
			keys("Enter");
			check("CU3: a concurrent change is a conflict on screen", await waitFor(/Not saved: Memory conflict: stale version/), screen());
			check("CU3: ...and nothing was saved", entry("Deploy-rule.md") === outside && !entry("Deploy-rule.md").includes("MINE-NOT-SAVED"), entry("Deploy-rule.md"));
			check("CU3: the view shows the file as it is now", await waitFor(/Deploy-rule\.md \(read-only\)[\s\S]*CHANGED-OUTSIDE/), screen());
			keys("Escape");
			await waitFor(/Memory files — /);
			keys("Escape");
			// An Escape followed at once by more keys would be read as Alt+key.
			check("CU3: Esc on the list leaves it", await waitGone(/Memory files — /), screen());
			type("/memory");
			keys("Enter");
			check("CU3: /memory shows the session's edits and delete", await waitFor(/Session usage:\s+Saves \(2\): Deploy rule \(edit, turn 0\), Test rule \(delete, turn 0\)/), screen());
			check("CU3: ...and that the delete changed the index", /Index changed: run \/memory reload to refresh it at the next turn\s+Session usage:/.test(screen()), screen());
			await submit("/memory reload");
			check("CU3: /memory reload schedules the refresh", await waitFor(/The memory index will be read again at the next turn\./), screen());
			await submit("/memory");
			check("CU3: /memory then marks the refresh at the next turn", await waitFor(/Index changed, refresh at the next turn\s+Session usage:/), screen());
		} finally {
			tui.kill();
		}
	}

	{
		const Z = makeAgent("agent-cu-zh", { lock: { timeoutMs: 2000 }, language: "zh-CN" });
		const tui = startTui("cu-zh", Z);
		const { screen, waitFor, waitGone, keys, type } = tui;
		const MEMZ = pimem(Z, P, ["dir"]).trim();
		try {
			check("CU4: pi's TUI starts (zh-CN)", await waitFor(/fake-model/), screen());
			type("/memory list");
			keys("Enter");
			check("CU4: the list in Simplified Chinese", await waitFor(/记忆文件 — [\s\S]*MEMORY\.md · 索引 · 修改于 [\s\S]*Deploy rule · feedback · 修改于 /), screen());
			downTo(keys, "Deploy rule");
			keys("Enter");
			check("CU4: the read-only view in Simplified Chinese", await waitFor(/Deploy-rule\.md（只读）[\s\S]*e 编辑 · d 删除/), screen());
			keys("d");
			check("CU4: the delete confirmation in Simplified Chinese", await waitFor(/删除记忆[\s\S]*删除“Deploy rule”（Deploy-rule\.md）？/), screen());
			keys("Down");
			keys("Enter"); // No
			check("CU4: declining keeps the file", await waitFor(/Deploy-rule\.md（只读）/) && existsSync(join(MEMZ, "Deploy-rule.md")), screen());
			keys("e");
			check("CU4: the editor's title in Simplified Chinese", await waitFor(/编辑 Deploy-rule\.md/), screen());
			type("ZH-EDIT");
			keys("Enter");
			check("CU4: saved, in Simplified Chinese", await waitFor(/已保存 Deploy-rule\.md。[\s\S]*记忆文件 — /), screen());
			keys("Escape");
			check("CU4: Esc on the list leaves it", await waitGone(/记忆文件 — /), screen());
			type("/memory");
			keys("Enter");
			check("CU4: the usage summary in Simplified Chinese", await waitFor(/本会话的记忆使用：\s+保存（1）：Deploy rule（编辑，第 0 轮）/), screen());
		} finally {
			tui.kill();
		}
	}
}
