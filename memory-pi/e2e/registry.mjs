#!/usr/bin/env node
// A local npm registry on 127.0.0.1 serving the packages of one `cargo xtask dist` output, so
// `pi install npm:@pimem/pi` (which runs `npm install @pimem/pi --prefix <agentDir>/npm`)
// resolves the pi package and its platform optionalDependencies exactly as it would from the
// public registry, without the network. Used by `cargo xtask e2e --installed`.
//
// Usage: node registry.mjs <dist dir> <port file> <log file>
//
// Serves `GET /<name>` (scoped names arrive as `@pimem%2fpi`) as a packument built from each
// laid-out package.json plus `dist.tarball` / `dist.integrity` / `dist.shasum` computed from the
// tarball, and `GET /-/<tarball>`. Platforms the dist run did not build are still listed (from
// manifest.json's `platforms`, with their `os` / `cpu` / `libc`) but their tarballs answer 404:
// npm has to skip them by platform without fetching them. Every request is logged as a JSON
// line `{method, url, status}`, so the caller can check which tarballs npm fetched.
import { createHash } from "node:crypto";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { basename, join } from "node:path";

const [distDir, portFile, logFile] = process.argv.slice(2);
if (!distDir || !portFile || !logFile) {
	console.error("usage: node registry.mjs <dist dir> <port file> <log file>");
	process.exit(2);
}
const manifest = JSON.parse(readFileSync(join(distDir, "manifest.json"), "utf8"));

/** name -> { manifest (package.json), tarball bytes | null, file name } */
const packages = new Map();
for (const p of manifest.packages) {
	const pkg = JSON.parse(readFileSync(join(distDir, "packages", p.dir, "package.json"), "utf8"));
	const bytes = readFileSync(join(distDir, p.tarball));
	packages.set(pkg.name, { pkg, bytes, file: basename(p.tarball) });
}
for (const p of manifest.platforms) {
	if (packages.has(p.package)) continue;
	const pkg = { name: p.package, version: manifest.version, os: [p.os], cpu: [p.cpu], ...(p.libc ? { libc: [p.libc] } : {}) };
	packages.set(p.package, { pkg, bytes: null, file: `${p.package.slice(1).replace("/", "-")}-${manifest.version}.tgz` });
}

function packument(name, base) {
	const { pkg, bytes, file } = packages.get(name);
	const dist = { tarball: `${base}/-/${file}` };
	if (bytes) {
		dist.integrity = `sha512-${createHash("sha512").update(bytes).digest("base64")}`;
		dist.shasum = createHash("sha1").update(bytes).digest("hex");
	} else {
		// Never fetched when npm honours os/cpu/libc; a fetch gets 404 (and is logged).
		dist.integrity = `sha512-${createHash("sha512").update(name).digest("base64")}`;
	}
	const version = { ...pkg, _id: `${name}@${pkg.version}`, dist };
	return { name, "dist-tags": { latest: pkg.version }, versions: { [pkg.version]: version }, modified: new Date(0).toISOString() };
}

const server = createServer((req, res) => {
	const url = decodeURIComponent((req.url ?? "/").split("?")[0]);
	let status = 404;
	let body = JSON.stringify({ error: "not found" });
	let type = "application/json";
	if (req.method === "GET" && url.startsWith("/-/")) {
		const file = url.slice(3);
		const hit = [...packages.values()].find((p) => p.file === file && p.bytes);
		if (hit) {
			status = 200;
			body = hit.bytes;
			type = "application/octet-stream";
		}
	} else if (req.method === "GET" && packages.has(url.slice(1))) {
		status = 200;
		body = JSON.stringify(packument(url.slice(1), `http://${req.headers.host}`));
	}
	appendFileSync(logFile, `${JSON.stringify({ method: req.method, url, status })}\n`);
	res.writeHead(status, { "content-type": type });
	res.end(body);
});
server.listen(0, "127.0.0.1", () => writeFileSync(portFile, String(server.address().port)));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
