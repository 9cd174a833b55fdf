// The run log (/experience, pi-experience PX-02..PX-20) against real pi 1.6.0: run.mjs imports
// this file and calls `run` with its helpers. Scenario EX: completed, errored, length, aborted
// (rpc `abort`) and killed runs, --no-session, /experience in print mode equal to `pimem
// experience`, summaries by the scripted model, no-model notes, /experience prepare → the
// agent's `experience` tool, /experience remember, and the panel in a real terminal (tmux).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `f` until it returns a truthy value (or `ms` passed); returns the last value. */
async function until(f, ms = 10000, every = 100) {
	const end = Date.now() + ms;
	let v = f();
	while (!v && Date.now() < end) {
		await sleep(every);
		v = f();
	}
	return v;
}

export async function run(h) {
	const { pi, rpc, pimem, makeAgent, check, eq, W, requests, textOf, env, PI_CLI, EXT, P1, A1 } = h;
	const exp = (agent, cwd, args) => pimem(agent, cwd, ["experience", ...args]);
	const expJson = (agent, cwd, args) => JSON.parse(pimem(agent, cwd, ["--json", "experience", ...args]));

	// --- EX0: scenario 1 ran without a model: its runs are recorded, the summary says why not
	{
		const r1 = expJson(A1, P1, ["show", "R01"]).run;
		check("EX0: runs are recorded from the first prompt on (R01 completed)", r1?.status === "completed" && /^seed /.test(r1.title), JSON.stringify(r1));
		eq("EX0: without a model the summary says why it is missing", [r1?.summaryState, r1?.summaryNote], ["unavailable", 'no model for experience — set "experience.model" or "defaults.model" in memory.json']);
		const noSession = expJson(A1, P1, ["runs"]).runs.find((r) => r.title.startsWith("How do I deploy the staging stack with make ship? [[call"));
		check("EX0: a --no-session run (I1) is recorded with no session file", noSession?.status === "completed" && noSession.sessionFile === null, JSON.stringify(noSession));
	}

	const AX = makeAgent("agent-experience", { defaults: { model: "fake/fake-model" }, autoSurfacing: { selector: "lexical" } });
	const PX = join(W, "project-experience");
	mkdirSync(PX);

	// --- EX1: a completed run, summarized by the scripted model in the background
	let r = pi("EX1", AX, PX, ["-p", "-n", "experience", "hello run one"]);
	let runs = expJson(AX, PX, ["runs"]).runs;
	eq("EX1: agent_start opens R01, agent_settled confirms it: completed", runs.map((x) => [x.number, x.status]), [[1, "completed"]]);
	const x1 = runs[0];
	check("EX1: R01 has a UUID, a start, a confirmed end and its session file", /^[0-9a-f-]{36}$/.test(x1.uuid) && x1.endedAt >= x1.startedAt && typeof x1.sessionFile === "string", JSON.stringify(x1));
	const summaryReq = requests("EX1").find((q) => q.kind === "summary");
	check("EX1: the summary is asked through pi's model registry, without tools", !!summaryReq && !summaryReq.body.tools?.length && textOf(summaryReq.body.messages.at(-1).content).includes("User: hello run one"), JSON.stringify(summaryReq?.body.messages?.map((m) => textOf(m.content)).join(" | ").slice(0, 400)));
	eq("EX1: the summary written by the scripted model is stored", [x1.summaryState, x1.summary], ["done", "SUMMARY: the user talked about memory."]);
	const events1 = expJson(AX, PX, ["raw", "R01"]).events.map((e) => e.kind);
	eq("EX1: raw events in order", events1, ["runStart", "prompt", "assistant", "settled"]);

	// --- EX2/EX3: errored and length-stopped runs → failed
	r = pi("EX2", AX, PX, ["-p", "-c", "boom [[fail]]"]);
	r = pi("EX3", AX, PX, ["-p", "-c", "cut short [[length]]"]);
	runs = expJson(AX, PX, ["runs"]).runs;
	const byNo = (n) => runs.find((x) => x.number === n);
	eq("EX2: stopReason error → failed, with pi's error message", [byNo(2)?.status, byNo(2)?.stopReason, !!byNo(2)?.error], ["failed", "error", true]);
	eq("EX3: stopReason length → failed", [byNo(3)?.status, byNo(3)?.stopReason], ["failed", "length"]);

	// --- EX4: rpc `abort` mid-run → interrupted; `bash` (the user's !cmd) is stored as its initiation only
	{
		const g = rpc("EX4", AX, PX, ["-c"]);
		try {
			const settled = g.waitFor((x) => x.type === "agent_settled", "agent_settled", 30000);
			await g.send({ type: "prompt", message: "slow one [[slow:5000]]" });
			await until(() => requests("EX4").some((q) => q.kind === "main"), 10000);
			await g.send({ type: "abort" });
			const s = await settled;
			check("EX4: pi reports the run aborted", s.aborted === true, JSON.stringify(s));
			await g.prompt("/experience debug"); // flushes the sidecar's queue
			const before = expJson(AX, PX, ["debug"]).diagnostics.events;
			await g.send({ type: "bash", command: "echo from-bang" });
			await g.prompt("/experience debug");
			const after = expJson(AX, PX, ["debug"]).diagnostics.events;
			eq("EX4: a user bash command adds exactly one (session) event", after - before, 1);
		} catch (e) {
			check("EX4: rpc abort scenario ran", false, `${e.stack}\n${g.stderr}`);
		} finally {
			await g.close();
		}
		const x4 = expJson(AX, PX, ["show", "R04"]).run;
		eq("EX4: an aborted run is interrupted, with its end confirmed", [x4?.status, typeof x4?.endedAt], ["interrupted", "number"]);
	}

	// --- EX5: pi killed mid-run → recovery_required at the next start, no invented end time
	{
		mark("EX5");
		const child = spawn(process.execPath, [PI_CLI, "-e", EXT, "-p", "-c", "about to be killed [[slow:20000]]"], { cwd: PX, env: env(AX), stdio: "ignore" });
		await until(() => requests("EX5").some((q) => q.kind === "main" && JSON.stringify(q.body).includes("about to be killed")), 20000);
		child.kill("SIGKILL");
		await new Promise((res) => child.once("exit", res));
		// the orphaned sidecar sees end of input and closes the run log
		const x5 = await until(() => {
			const v = expJson(AX, PX, ["show", "R05"]).run;
			return v?.status !== "running" ? v : null;
		}, 10000);
		eq("EX5: a killed run is recovery_required with no end time, keeping its number and events", [x5?.status, x5?.endedAt ?? null, x5?.events >= 2], ["recovery_required", null, true]);
		r = pi("EX5b", AX, PX, ["-p", "-c", "next start"]);
		runs = expJson(AX, PX, ["runs"]).runs;
		eq("EX5: the next start continues the numbering (R06 completed)", [byNoIn(runs, 6)?.status, byNoIn(runs, 5)?.status], ["completed", "recovery_required"]);
	}

	// --- EX6: --no-session
	r = pi("EX6", AX, PX, ["-p", "--no-session", "no session file here"]);
	const x6 = expJson(AX, PX, ["runs"]).runs.find((x) => x.title === "no session file here");
	check("EX6: --no-session runs are recorded (no session file) and complete", x6?.status === "completed" && x6.sessionFile === null, JSON.stringify(x6));

	// --- EX7: /experience in print mode prints what `pimem experience` prints
	for (const [sub, cli] of [
		["runs", ["runs"]],
		["show R01", ["show", "R01"]],
		["raw R02", ["raw", "R02"]],
		["search hello", ["search", "hello"]],
	]) {
		const want = exp(AX, PX, cli).trimEnd();
		r = pi(`EX7 ${sub}`, AX, PX, ["-p", "--no-session", `/experience ${sub}`]);
		check(`EX7: /experience ${sub} in print mode = pimem experience ${cli.join(" ")}`, r.stderr.includes(want) && want.length > 20, `stderr: ${r.stderr.slice(0, 600)}\nwant: ${want.slice(0, 400)}`);
	}
	// PA-03: a zh_* locale (no "language" key in memory.json) turns the texts Chinese
	r = pi("EX7 zh", AX, PX, ["-p", "--no-session", "/experience runs"], { extraEnv: { LANG: "zh_CN.UTF-8", LC_ALL: undefined } });
	check("EX7: with a zh_CN locale /experience runs speaks Simplified Chinese", /运行，最新的在前（\d+ 次中的 \d+ 次）：\nR\d+ /.test(r.stderr), r.stderr.slice(0, 400));
	check("EX7: search finds the run by its prompt", exp(AX, PX, ["search", "hello"]).startsWith("R01   hello run one — [hello] run one"), exp(AX, PX, ["search", "hello"]));
	// a run with three tool calls, then /experience debug in the same pi process: the forwarding
	// cost of every event of that run, as pi's handlers saw it
	const list = `[[call:memory ${JSON.stringify({ action: "list" })}]]`;
	r = pi("EX7 debug", AX, PX, ["-p", "--no-session", `measure forwarding ${list} ${list} ${list}`, "/experience debug"]);
	const fwd = /Forwarding in pi: (\d+) events · p50 ([\d.]+) µs · p99 ([\d.]+) µs · max ([\d.]+) µs/.exec(r.stderr);
	check("EX7: /experience debug shows WAL, synchronous=FULL and pi's forwarding cost", r.stderr.includes("journal_mode=wal · synchronous=2 · integrity ok") && !!fwd && Number(fwd[1]) >= 12, r.stderr.slice(0, 800));

	// --- EX8: prepare (audit, confirm) → the agent merges with the experience tool; remember
	{
		const g = rpc("EX8", AX, PX, ["-c"]);
		try {
			await g.prompt("/experience prepare");
			const settled = await g.waitFor((x) => x.type === "agent_settled", "the agent's tidy run", 30000, { includeSeen: true });
			check("EX8: prepare asked the user to confirm the audited summaries", g.confirms[0]?.title === "Experience" && /Hand these \d+ audited runs to the agent/.test(g.confirms[0]?.message ?? ""), JSON.stringify(g.confirms));
			check("EX8: the agent's run settled", settled.aborted === false);
			const tidy = requests("EX8").filter((q) => q.kind === "tidy");
			const declared = tidy[0]?.body.tools?.some((t) => t.function?.name === "experience");
			check("EX8: the agent got the audited runs and the experience tool", tidy.length === 2 && declared, JSON.stringify(tidy.map((q) => q.kind)));
		} catch (e) {
			check("EX8: rpc prepare scenario ran", false, `${e.stack}\n${g.stderr}`);
		} finally {
			await g.close();
		}
		const e1 = expJson(AX, PX, ["show", "E1"]).experience;
		check("EX8: E1 was created from the summarized runs", e1?.title === "E2E lessons" && e1.sources.length > 0, JSON.stringify(e1));
		check("EX8: its time range is inherited from its settled runs", typeof e1?.range.start === "number" && typeof e1?.range.end === "number" && e1.range.runs === e1.sources.length, JSON.stringify(e1?.range));
		r = pi("EX8 remember", AX, PX, ["-p", "--no-session", "/experience remember E1"]);
		const MEMX = pimem(AX, PX, ["dir"]).trim();
		check("EX8: /experience remember E1 saves a memory through the store", r.stderr.includes('E1 is now a memory: Saved "E2E lessons" (E2E-lessons.md).') && existsSync(join(MEMX, "E2E-lessons.md")) && readFileSync(join(MEMX, "MEMORY.md"), "utf8").includes("[E2E lessons](E2E-lessons.md)"), r.stderr.slice(0, 400));
		check("EX8: the run log stays out of pi-memory's files (a dot directory)", existsSync(join(MEMX, ".experience", "runlog.db")) && !pimem(AX, PX, ["list"]).includes("runlog"));
	}

	// --- EX10: two pi processes recording into one database at once
	{
		const before = expJson(AX, PX, ["runs"]).runs.length;
		const list = `[[call:memory ${JSON.stringify({ action: "list" })}]]`;
		const runPi = (text) =>
			new Promise((res) => {
				const c = spawn(process.execPath, [PI_CLI, "-e", EXT, "-p", "--no-session", `${text} ${list} ${list} ${list}`], { cwd: PX, env: env(AX), stdio: ["ignore", "pipe", "pipe"] });
				let err = "";
				c.stderr.on("data", (d) => (err += d));
				c.once("exit", (code) => res({ code, err }));
			});
		h.mark("EX10");
		const both = await Promise.all([runPi("parallel one"), runPi("parallel two")]);
		const after = expJson(AX, PX, ["runs"]).runs;
		const mine = after.filter((x) => /^parallel (one|two) /.test(x.title));
		check("EX10: two pi processes at once both exit cleanly, no SQLITE_BUSY shown", both.every((b) => b.code === 0 && !/busy|locked/i.test(b.err)), JSON.stringify(both));
		check("EX10: ...and both runs are recorded completely", after.length === before + 2 && mine.length === 2 && mine.every((x) => x.status === "completed" && x.events === 13), JSON.stringify(mine));
	}

	// --- EX9: the panel in a real terminal (tmux): R, L, Enter, D, Esc
	await panel(h, AX, PX);
	return fwd ? { events: Number(fwd[1]), p50: Number(fwd[2]), p99: Number(fwd[3]), max: Number(fwd[4]) } : null;

	function mark(step) {
		h.mark(step);
	}
}

function byNoIn(runs, n) {
	return runs.find((x) => x.number === n);
}

async function panel(h, agent, cwd) {
	const { check, W, env, PI_CLI, EXT } = h;
	if (spawnSync("tmux", ["-V"]).status !== 0) {
		check("EX9: tmux is installed for the panel test", false);
		return;
	}
	const session = `pimem-exp-${process.pid}`;
	const script = join(W, "run-pi-tui.sh");
	const e = env(agent);
	const exports = Object.entries(e)
		.filter(([k]) => /^[A-Z_][A-Z0-9_]*$/.test(k))
		.map(([k, v]) => `export ${k}=${JSON.stringify(String(v))}`)
		.join("\n");
	writeFileSync(script, `${exports}\ncd ${JSON.stringify(cwd)}\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(PI_CLI)} -e ${JSON.stringify(EXT)} -c\n`);
	const tmux = (...args) => spawnSync("tmux", args, { encoding: "utf8" });
	const screen = () => tmux("capture-pane", "-t", session, "-p").stdout ?? "";
	const waitScreen = (re, ms = 15000) => until(() => re.test(screen()), ms, 150);
	tmux("new-session", "-d", "-s", session, "-x", "140", "-y", "45", `bash ${script}`);
	try {
		const ready = await waitScreen(/─{10}/, 20000);
		check("EX9: pi's TUI starts in tmux", !!ready, screen());
		tmux("send-keys", "-t", session, "/experience", "Enter");
		const shown = await waitScreen(/Experience — recorded runs and what was learned/);
		check("EX9: /experience opens the panel with its title, counts and keys", shown && /\d+ runs · \d+ running · \d+ need recovery/.test(screen()) && screen().includes("R refresh · L browse runs · S ask the agent to tidy · D diagnostics · Esc close"), screen());
		check("EX9: the overview lists the latest runs and the experiences", /R0\d\s+completed/.test(screen()) && screen().includes("E1 E2E lessons"), screen());
		tmux("send-keys", "-t", session, "l");
		const browsing = await waitScreen(/> R\d+/);
		check("EX9: L browses runs (a selection marker)", browsing && screen().includes("↑/↓ choose · Enter show · Esc back"), screen());
		tmux("send-keys", "-t", session, "Enter");
		const detail = await waitScreen(/UUID: [0-9a-f-]{36}/);
		check("EX9: Enter shows the selected run", !!detail, screen());
		tmux("send-keys", "-t", session, "Escape");
		await waitScreen(/> R\d+/);
		tmux("send-keys", "-t", session, "Escape");
		await waitScreen(/R refresh · L browse runs/);
		tmux("send-keys", "-t", session, "d");
		const diag = await waitScreen(/Run log diagnostics/);
		check("EX9: D shows the diagnostics", diag && screen().includes("synchronous=2"), screen());
		tmux("send-keys", "-t", session, "Escape");
		await waitScreen(/R refresh · L browse runs/);
		tmux("send-keys", "-t", session, "r");
		const refreshed = await waitScreen(/R refresh · L browse runs/);
		check("EX9: R refreshes the overview", !!refreshed, screen());
		tmux("send-keys", "-t", session, "Escape");
		const closed = await until(() => !screen().includes("R refresh · L browse runs"), 5000, 150);
		check("EX9: Esc closes the panel", !!closed, screen());
	} finally {
		tmux("kill-session", "-t", session);
	}
}
