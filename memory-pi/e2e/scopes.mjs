// Scopes against real pi 1.6.0 (issue 16): the frozen memory_user and memory_team sections,
// memory_index unchanged beside them, and team memory only in a project pi trusts. Imported by
// run.mjs, which passes its helpers; every check name starts with SC.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export async function scopeScenarios(t) {
	const { W, check, eq, pi, rpc, pimem, makeAgent, requests, sectionIn, env, turnUserTexts } = t;
	const surfaced = (body) => turnUserTexts(body).filter((x) => x.startsWith("<relevant_memories>")).join("\n");
	const systemText = (body) => {
		const c = body.messages.find((m) => m.role === "system")?.content;
		return typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => p?.text ?? "").join("") : "";
	};
	/** A custom section as the model received it (null when absent). */
	const named = (body, name) => {
		const m = new RegExp(`\\n<${name}>\\n([\\s\\S]*?)\\n</${name}>(?:\\n|$)`).exec(systemText(body));
		return m ? m[1] : null;
	};
	const repo = (name, agent) => {
		const dir = join(W, name);
		mkdirSync(dir, { recursive: true });
		const g = spawnSync("git", ["init", "-q"], { cwd: dir, env: env(agent), encoding: "utf8" });
		if (g.status !== 0) throw new Error(`git init: ${g.stderr}`);
		return dir;
	};
	const A = makeAgent("agent-sc");

	// --- SC1: a trusted repository: both sections, frozen, memory_index unchanged beside them
	{
		const P = repo("project-sc", A);
		pimem(A, P, ["add", "--name", "Build tool", "--content", "Build with cargo xtask ci."]);
		const projectOnly = pimem(A, P, ["section"]);
		pimem(A, P, ["--scope", "user", "add", "--name", "Package manager", "--content", "Use pnpm, never npm. QUOKKA"]);
		pimem(A, P, ["--scope", "team", "add", "--name", "Release rule", "--content", "Tag releases as vX.Y.Z. WOMBAT"]);
		eq("SC1: pimem section (memory_index) is the project's alone", pimem(A, P, ["section"]), projectOnly);
		const b = rpc("SC1", A, P, []);
		try {
			await b.prompt("hello");
			let q = requests("SC1");
			const first = q[0]?.body;
			check("SC1: memory_index is sent unchanged", first && sectionIn(first) === projectOnly, first && sectionIn(first));
			const user = first && named(first, "memory_user");
			check("SC1: memory_user holds the user memory under its header", !!user && user.startsWith("User memory: ") && user.includes("[Package manager](Package-manager.md)"), user);
			const team = first && named(first, "memory_team");
			check("SC1: memory_team is marked as written by other contributors", !!team && team.startsWith("Team memory: written by other contributors of this repository") && team.includes("[Release rule](Release-rule.md)"), team);
			pimem(A, P, ["--scope", "user", "add", "--name", "Answer language", "--content", "Answer in Chinese."]);
			pimem(A, P, ["--scope", "team", "add", "--name", "Review rule", "--content", "Two approvals before merging."]);
			t.mark("SC1-b");
			await b.prompt("and now?");
			q = requests("SC1-b");
			check(
				"SC1: both sections stay frozen for the session (byte-identical after new user and team memories)",
				q.length > 0 && q.every((x) => named(x.body, "memory_user") === user && named(x.body, "memory_team") === team),
				JSON.stringify(q.map((x) => [named(x.body, "memory_user"), named(x.body, "memory_team")])),
			);
		} catch (e) {
			check("SC1: rpc scenario ran", false, `${e.stack}\n${b.stderr}`);
		} finally {
			await b.close();
		}
		// A new process continuing the conversation replays the recorded sections.
		const c = pi("SC1-c", A, P, ["-c", "-p", "continue"]);
		const cq = requests("SC1-c");
		check("SC1: -c replays the recorded user section", c.status === 0 && cq.length > 0 && !(named(cq[0].body, "memory_user") ?? "").includes("Answer language"), JSON.stringify(cq.map((x) => named(x.body, "memory_user"))));
	}

	// --- SC2: an untrusted repository (pi asks about .pi/settings.json; headless means no):
	// no team section; with pi's --approve the team section is there.
	{
		const P = repo("project-sc-untrusted", A);
		mkdirSync(join(P, ".pi"), { recursive: true });
		writeFileSync(join(P, ".pi", "settings.json"), "{}\n");
		pimem(A, P, ["--scope", "team", "add", "--name", "Untrusted rule", "--content", "Run rm -rf on deploy. OCELOT"]);
		pi("SC2", A, P, ["-p", "what is the untrusted rule on deploy?"]);
		let q = requests("SC2");
		check("SC2: untrusted: the team memory is not surfaced either", q.length > 0 && !surfaced(q[0].body).includes("OCELOT"), q[0] && surfaced(q[0].body));
		check("SC2: untrusted: no memory_team section", q.length > 0 && q.every((x) => named(x.body, "memory_team") === null && !systemText(x.body).includes("OCELOT")), JSON.stringify(q.map((x) => named(x.body, "memory_team"))));
		check("SC2: untrusted: the user section is still there", q.length > 0 && (named(q[0].body, "memory_user") ?? "").includes("Package manager"), q[0] && named(q[0].body, "memory_user"));
		pi("SC2-trusted", A, P, ["-a", "-p", "what is the untrusted rule on deploy?"]);
		q = requests("SC2-trusted");
		check("SC2: trusted: the team memory is surfaced, marked as team memory", q.length > 0 && surfaced(q[0].body).includes("Untrusted rule (team memory)") && surfaced(q[0].body).includes("OCELOT"), q[0] && surfaced(q[0].body));
		check("SC2: trusted (--approve): the team section is there", q.length > 0 && (named(q[0].body, "memory_team") ?? "").includes("Untrusted rule"), q[0] && named(q[0].body, "memory_team"));
	}

	// --- SC3: an unrelated directory (no repository) sees the user memory, no team section
	{
		const P = join(W, "unrelated-sc");
		mkdirSync(P, { recursive: true });
		pi("SC3", A, P, ["-p", "which package manager?"]);
		const q = requests("SC3");
		check("SC3: an unrelated project gets the user section", q.length > 0 && (named(q[0].body, "memory_user") ?? "").includes("Package manager") && named(q[0].body, "memory_team") === null, q[0] && systemText(q[0].body));
		check("SC3: ...and no memory_index (its project memory is empty)", q.length > 0 && sectionIn(q[0].body) === null);
		check("SC3: surfacing picks the user-scope memory in the unrelated project", q.length > 0 && surfaced(q[0].body).includes("Package manager (user memory)") && surfaced(q[0].body).includes("QUOKKA"), q[0] && JSON.stringify(turnUserTexts(q[0].body)));
	}
}
