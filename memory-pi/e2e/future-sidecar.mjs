#!/usr/bin/env node
// Test-only stand-in for a pimem binary from a newer checkout that speaks protocol 2: it
// refuses `initialize` the way `pimem serve` does (-32002 with the tool in `data`), so the e2e
// suite can check what the extension does with a mismatch. Usage: PIMEM_BIN=<this file>.
import { execFileSync } from "node:child_process";

const tool = JSON.parse(execFileSync(process.env.PIMEM_REAL_BIN, ["tool-schema"], { encoding: "utf8" }));
let buf = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
	buf += chunk;
	let nl;
	while ((nl = buf.indexOf("\n")) !== -1) {
		const msg = JSON.parse(buf.slice(0, nl));
		buf = buf.slice(nl + 1);
		if (msg.id === undefined || !msg.method) continue;
		const error =
			msg.method === "initialize"
				? { code: -32002, message: `pimem 9.0.0 speaks protocol 2 but the pi extension speaks protocol ${msg.params.protocol}: rebuild and reinstall both from the same checkout (cargo xtask install)`, data: { protocol: 2, version: "9.0.0", tool } }
				: { code: -32601, message: `Method not found: ${msg.method}` };
		process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: msg.id, error })}\n`);
	}
});
process.stdin.on("end", () => process.exit(0));
