// The Chinese UI against real pi 1.6.0 (issue 12, PA-03): `/memory` status, `/memory off|on`
// notifications and `/memory doctor` in Simplified Chinese with `"language": "zh-CN"` in
// memory.json and with a zh_CN locale, while the model still reads pi-memory's English; and
// the same screens in pi's TUI (tmux, docs/pi-host.md §k). Imported by run.mjs, which passes
// its helpers; every check name starts with ZH.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export async function zhScenarios(t) {
	const { W, EXT, PI_CLI, env, check, eq, pi, pimem, makeAgent, requests, toolTexts } = t;
	const tool = (name, args) => `[[call:${name} ${JSON.stringify(args)}]]`;
	const A = makeAgent("agent-zh", { language: "zh-CN" });
	const P = join(W, "project-zh");
	mkdirSync(P, { recursive: true });
	pimem(A, P, ["add", "--name", "Deploy rule", "--content", "Deploy with make ship, never by hand."]);

	// --- ZH1: print mode with "language": "zh-CN"
	{
		let r = pi("ZH1", A, P, ["-p", "/memory"]);
		check("ZH1: /memory status is in Chinese", ["目录：", "索引：", "注入：", "条目：1", "模块：", "锁：空闲"].every((s) => r.stderr.includes(s)), r.stderr);
		check("ZH1: ...with no English label left", !/^(Dir|Index|Inject|Entries|Lock): /m.test(r.stderr), r.stderr);
		r = pi("ZH1-off", A, P, ["-p", "/memory off"]);
		check("ZH1: the /memory off notification is in Chinese", r.stderr.includes("已为此 pi agent 目录下的所有项目关闭记忆") && r.stderr.includes("运行 /memory on（或 `pimem on`）即可重新启用。"), r.stderr);
		r = pi("ZH1-tool", A, P, ["-p", `remember ${tool("memory", { action: "list" })}`]);
		eq("ZH1: the model still reads `Memory is off` in English", toolTexts(requests("ZH1-tool")), ["Memory is off"]);
		r = pi("ZH1-status-off", A, P, ["-p", "/memory"]);
		check("ZH1: /memory while off starts with the Chinese switch line", r.stderr.includes("记忆：已关闭——运行 /memory on"), r.stderr);
		r = pi("ZH1-on", A, P, ["-p", "/memory on"]);
		check("ZH1: the /memory on notification is in Chinese", r.stderr.includes("记忆已开启（已保存到 "), r.stderr);
		r = pi("ZH1-unlock", A, P, ["-p", "/memory unlock"]);
		check("ZH1: /memory unlock without a lock answers in Chinese", r.stderr.includes("没有锁。"), r.stderr);
		r = pi("ZH1-dream", A, P, ["-p", "/dream"]);
		check("ZH1: /dream in print mode says in Chinese why it did not start", r.stderr.includes("未开始整理：需要确认，而 print 和 json 模式无法确认。"), r.stderr);
		r = pi("ZH1-doctor", A, P, ["-p", "/memory doctor"]);
		check("ZH1: /memory doctor's summary is in Chinese", /^记忆诊断：\d+ 项正常，\d+ 项警告，0 项失败，\d+ 项未检查$/m.test(r.stderr), r.stderr);
		check("ZH1: ...its check ids and states stay English", /^ok +protocol +扩展与二进制 .* 均使用协议 1$/m.test(r.stderr) && /^ok +index\.capacity +MEMORY\.md：/m.test(r.stderr), r.stderr);
	}

	// --- ZH2: the locale chooses when memory.json does not
	{
		// Its own project: pimem's store belongs to the project, not to the agent directory.
		const B = makeAgent("agent-zh-locale");
		const P = join(W, "project-zh-locale");
		mkdirSync(P, { recursive: true });
		pimem(B, P, ["add", "--name", "Test rule", "--content", "Run cargo xtask ci."]);
		let r = pi("ZH2", B, P, ["-p", "/memory"], { extraEnv: { LANG: "zh_CN.UTF-8", LC_ALL: undefined } });
		check("ZH2: LANG=zh_CN.UTF-8 gives the Chinese status", r.stderr.includes("条目：1"), r.stderr);
		r = pi("ZH2-c", B, P, ["-p", "/memory"], { extraEnv: { LANG: "C.UTF-8", LC_ALL: undefined } });
		check("ZH2: another locale gives PM-75's English", r.stderr.includes("Entries: 1") && !r.stderr.includes("条目"), r.stderr);
		writeFileSync(join(B, "memory.json"), JSON.stringify({ language: "en" }));
		r = pi("ZH2-en", B, P, ["-p", "/memory"], { extraEnv: { LANG: "zh_CN.UTF-8", LC_ALL: undefined } });
		check("ZH2: \"language\": \"en\" wins over a Chinese locale", r.stderr.includes("Entries: 1"), r.stderr);
	}

	// --- ZH3: the same screens in pi's TUI (tmux)
	if (spawnSync("tmux", ["-V"]).status !== 0) {
		console.log("      (ZH3 skipped: tmux is not installed)");
		return;
	}
	{
		const e = env(A);
		const script = join(W, "tui-zh.sh");
		const q = (v) => `'${String(v).replaceAll("'", "'\\''")}'`;
		const exports = Object.entries(e)
			.filter(([k]) => /^[A-Z_][A-Z0-9_]*$/.test(k))
			.map(([k, v]) => `export ${k}=${q(v)}`)
			.join("\n");
		writeFileSync(script, `${exports}\nunset PI_SESSION_ID PI_SESSION_FILE\ncd ${q(P)}\nexec ${q(process.execPath)} ${q(PI_CLI)} -e ${q(EXT)}\n`);
		const session = `pimem-zh-${process.pid}`;
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
			check("ZH3: pi's TUI starts with the extension", ready, screen());
			tmux("send-keys", "-t", session, "/memory off", "Enter");
			check("ZH3: the /memory off notification is shown in Chinese in the TUI", await waitFor(/已为此 pi agent 目录下的所有项目关闭记忆/), screen());
			tmux("send-keys", "-t", session, "/memory", "Enter");
			check("ZH3: /memory shows the Chinese switch line above the Chinese status", await waitFor(/记忆：已关闭——运行 \/memory on[\s\S]*目录：/), screen());
			tmux("send-keys", "-t", session, "/memory on", "Enter");
			check("ZH3: /memory on is shown in Chinese", await waitFor(/记忆已开启（已保存到 /), screen());
			tmux("send-keys", "-t", session, "-l", `remember ${tool("memory", { action: "add", name: "Release day", content: "Releases go out on Thursdays." })}`);
			tmux("send-keys", "-t", session, "Enter");
			check("ZH3: the notification of a memory the model saved is in Chinese", await waitFor(/已保存：Release day/), screen());
		} finally {
			tmux("kill-session", "-t", session);
		}
	}
}
