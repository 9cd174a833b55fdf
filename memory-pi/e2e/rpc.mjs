// Drives `pi --mode rpc` over stdin/stdout JSONL for the e2e suite.
// Extension dialogs are answered like a user would (confirm -> `confirm` option, default yes);
// every stdout record is kept, and notifications are collected for assertions.
import { spawn } from "node:child_process";

export class RpcPi {
	/**
	 * @param {string[]} argv  command line (node, cli.js, --mode, rpc, ...)
	 * @param {{cwd: string, env: object, confirm?: boolean}} opts
	 */
	constructor(argv, { cwd, env, confirm = true }) {
		this.child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
		this.records = [];
		this.confirms = []; // the confirm dialogs shown
		this.confirmAnswer = confirm;
		this.stderr = "";
		this.waiters = [];
		this.nextId = 0;
		let buf = "";
		this.child.stdout.setEncoding("utf8");
		this.child.stdout.on("data", (chunk) => {
			buf += chunk;
			let nl;
			while ((nl = buf.indexOf("\n")) !== -1) {
				const line = buf.slice(0, nl).replace(/\r$/, "");
				buf = buf.slice(nl + 1);
				if (line.trim()) this.onRecord(JSON.parse(line));
			}
		});
		this.child.stderr.setEncoding("utf8");
		this.child.stderr.on("data", (c) => (this.stderr += c));
		this.exited = new Promise((r) => this.child.on("exit", (code) => r(code)));
	}

	onRecord(rec) {
		this.records.push(rec);
		if (rec.type === "extension_ui_request" && rec.method === "confirm") {
			this.confirms.push({ title: rec.title, message: rec.message });
			this.child.stdin.write(`${JSON.stringify({ type: "extension_ui_response", id: rec.id, confirmed: this.confirmAnswer })}\n`);
		} else if (rec.type === "extension_ui_request" && ["select", "input", "editor"].includes(rec.method)) {
			this.child.stdin.write(`${JSON.stringify({ type: "extension_ui_response", id: rec.id, cancelled: true })}\n`);
		}
		for (const w of [...this.waiters]) {
			if (w.pred(rec)) {
				this.waiters.splice(this.waiters.indexOf(w), 1);
				clearTimeout(w.timer);
				w.resolve(rec);
			}
		}
	}

	/** Resolves with the first record (already seen or future) matching `pred`. */
	waitFor(pred, what, ms = 30000, { includeSeen = false } = {}) {
		if (includeSeen) {
			const seen = this.records.find(pred);
			if (seen) return Promise.resolve(seen);
		}
		return new Promise((resolve, reject) => {
			const w = { pred, resolve };
			w.timer = setTimeout(() => {
				this.waiters.splice(this.waiters.indexOf(w), 1);
				reject(new Error(`rpc: timeout waiting for ${what}`));
			}, ms);
			this.waiters.push(w);
		});
	}

	async send(cmd) {
		const id = `r${++this.nextId}`;
		const p = this.waitFor((r) => r.type === "response" && r.id === id, `response to ${cmd.type}`);
		this.child.stdin.write(`${JSON.stringify({ ...cmd, id })}\n`);
		const res = await p;
		if (!res.success) throw new Error(`${cmd.type} failed: ${res.error}`);
		return res.data;
	}

	/** Sends a prompt; waits for the run to settle when one started. */
	async prompt(message) {
		const settled = this.waitFor((r) => r.type === "agent_settled", "agent_settled", 60000);
		settled.catch(() => undefined);
		const data = await this.send({ type: "prompt", message });
		if (data?.disposition === "started") await settled;
		return data;
	}

	/** Notifications (extension_ui_request notify) seen so far. */
	notifications() {
		return this.records.filter((r) => r.type === "extension_ui_request" && r.method === "notify").map((r) => ({ message: r.message, level: r.notifyType ?? "info" }));
	}

	/** Waits for a notification whose message matches `re`. */
	waitNotification(re, ms = 30000) {
		return this.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify" && re.test(r.message), `notification ${re}`, ms, { includeSeen: true });
	}

	async close() {
		this.child.stdin.end();
		const timer = setTimeout(() => this.child.kill(), 15000);
		const code = await this.exited;
		clearTimeout(timer);
		return code;
	}
}
