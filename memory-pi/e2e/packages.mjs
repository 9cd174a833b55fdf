// Scenarios of the npm packaging (issue 14), imported by run.mjs: the pi package finds its
// binary in the platform package npm installed next to it (@pimem/<platform>, resolved with
// createRequire), restores a lost exec bit, and says in one message what to install when that
// package is missing, of another version, or does not run here.
//
// Under `cargo xtask e2e` the node_modules tree is built here from the checkout's extension and
// the binary under test; under `cargo xtask e2e --installed` (PIMEM_E2E_INSTALLED = the agent
// dir `pi install npm:@pimem/pi` installed into) it is the real installed tree, and one more
// check runs pi with the package loaded from settings.json, as a user would.
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The platform key as npm and the extension pick it. */
function platformKey() {
	const base = `${process.platform}-${process.arch}`;
	if (process.platform !== "linux") return base;
	return `${base}-${process.report.getReport().header.glibcVersionRuntime ? "gnu" : "musl"}`;
}

/**
 * @param {object} h  run.mjs' helpers and fixtures: W, EXT, PIMEM_BIN, INSTALLED, pi, makeAgent,
 *                    check, eq, requests, toolTexts, call, agent (A1), project (P1)
 */
export async function packageScenarios(h) {
	const { W, pi, check, eq, requests, toolTexts, call, agent, project } = h;
	const key = platformKey();
	const platformPkg = `@pimem/${key}`;
	const exe = process.platform === "win32" ? "pimem.exe" : "pimem";
	const version = JSON.parse(readFileSync(join(h.EXT, "package.json"), "utf8")).version;
	const noBin = { PIMEM_BIN: undefined, PATH: dirname(process.execPath) };

	// The node_modules root holding @pimem/pi and @pimem/<key>.
	let tree;
	if (h.INSTALLED) {
		tree = join(h.INSTALLED, "npm", "node_modules");
	} else {
		tree = join(W, "npm-tree", "node_modules");
		const main = join(tree, "@pimem", "pi");
		cpSync(h.EXT, main, { recursive: true, filter: (src) => !src.startsWith(join(h.EXT, "bin")) && !src.includes("node_modules") });
		const plat = join(tree, "@pimem", key);
		mkdirSync(join(plat, "bin"), { recursive: true });
		writeFileSync(join(plat, "package.json"), JSON.stringify({ name: platformPkg, version }));
		cpSync(h.PIMEM_BIN, join(plat, "bin", exe));
	}
	const mainDir = join(tree, "@pimem", "pi");
	const binary = join(tree, "@pimem", key, "bin", exe);
	const search = call({ action: "search", query: "deploy" });
	const found = (step) => toolTexts(requests(step))[0]?.startsWith("## Deploy command\n");

	check("P0: the pi package ships no binary of its own", !existsSync(join(mainDir, "bin")));

	// --- P1: the platform package's binary, with no PIMEM_BIN and no pimem on PATH
	let r = pi("P1", agent, project, ["-p", "--no-session", "-e", mainDir, search], { withExt: false, extraEnv: noBin });
	check(`P1: the pi package runs the binary of ${platformPkg} next to it`, found("P1"), `${JSON.stringify(toolTexts(requests("P1")))}\n${r.stderr}`);

	// --- P2: a binary that lost its exec bit gets it back
	if (process.platform !== "win32") {
		chmodSync(binary, 0o644);
		r = pi("P2", agent, project, ["-p", "--no-session", "-e", mainDir, search], { withExt: false, extraEnv: noBin });
		check("P2: a platform binary without its exec bit is made executable and runs", found("P2") && (statSync(binary).mode & 0o111) !== 0, `${(statSync(binary).mode & 0o777).toString(8)} ${r.stderr}`);
	}

	/** A copy of the tree, changed by `edit`; returns the copy's @pimem/pi. */
	const variant = (name, edit) => {
		const root = join(W, name, "node_modules");
		cpSync(tree, root, { recursive: true });
		edit(root);
		return join(root, "@pimem", "pi");
	};

	// --- P3: the platform package is missing (npm --omit=optional, an unsupported platform)
	const missing = variant("npm-missing", (root) => rmSync(join(root, "@pimem", key), { recursive: true }));
	r = pi("P3", agent, project, ["-p", "--no-session", "-e", missing, "hello"], { withExt: false, extraEnv: noBin });
	check(
		"P3: no platform package: one message naming it and how to install it, and pi still works",
		r.status === 0 && r.stdout.includes("ECHO: hello") && r.stderr.includes(`It comes in the npm package ${platformPkg}`) && r.stderr.includes("`pi install npm:@pimem/pi`") && r.stderr.split("pimem: ").length === 2,
		r.stderr,
	);

	// --- P4: a platform package of another version: refused at the handshake
	const older = variant("npm-mismatch", (root) => {
		const file = join(root, "@pimem", "pi", "package.json");
		writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), version: "0.0.1" }));
	});
	r = pi("P4", agent, project, ["-p", "--no-session", "-e", older, search], { withExt: false, extraEnv: noBin });
	const mismatch = `pimem ${version} does not match the pi extension 0.0.1: install one version of both (\`pi install npm:@pimem/pi@0.0.1\` installs the extension with ${platformPkg}@0.0.1; from a checkout, \`cargo xtask install\` builds and installs both)`;
	check("P4: extension and binary of different versions: refused at the handshake, naming both and the platform package", r.status === 0 && r.stderr.includes(mismatch), r.stderr);
	eq("P4: ...and the memory tool answers with that message", toolTexts(requests("P4")), [mismatch]);

	// --- P5: a platform binary that does not run on this machine: another CPU (the kernel
	// refuses the file; the spawn falls back to a shell, which fails) or another libc (its
	// loader is missing: the spawn itself fails, simulated by a missing interpreter)
	const foreignCases = [
		["P5a", "another CPU", "\x7fELF not for this machine"],
		["P5b", "another libc", "#!/nonexistent/ld-musl-x86_64.so.1\n"],
	];
	for (const [step, what, bytes] of foreignCases) {
		if (process.platform === "win32") break;
		const foreign = variant(`npm-foreign-${step}`, (root) => writeFileSync(join(root, "@pimem", key, "bin", exe), bytes, { mode: 0o755 }));
		r = pi(step, agent, project, ["-p", "--no-session", "-e", foreign, "hello"], { withExt: false, extraEnv: noBin });
		check(
			`${step}: a platform binary for ${what}: one message naming its package, and pi still works`,
			r.status === 0 && r.stdout.includes("ECHO: hello") && r.stderr.split(`is from ${platformPkg}, which does not run here`).length === 2 && r.stderr.includes("`pi install npm:@pimem/pi`"),
			r.stderr,
		);
	}

	if (!h.INSTALLED) return;
	// --- P6: the package as `pi install npm:@pimem/pi` registered it (settings.json), no -e
	const template = h.makeAgent("agent-npm-template", null);
	const settingsFile = join(h.INSTALLED, "settings.json");
	const installed = JSON.parse(readFileSync(settingsFile, "utf8"));
	eq("P6: pi install recorded the npm source", installed.packages, ["npm:@pimem/pi"]);
	writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(readFileSync(join(template, "settings.json"), "utf8")), packages: installed.packages }));
	cpSync(join(template, "models.json"), join(h.INSTALLED, "models.json"));
	r = pi("P6", h.INSTALLED, project, ["-p", "--no-session", search], { withExt: false, extraEnv: noBin });
	check("P6: pi loads the npm-installed package from settings and it finds its platform binary", found("P6"), `${JSON.stringify(toolTexts(requests("P6")))}\n${r.stderr}`);
}
