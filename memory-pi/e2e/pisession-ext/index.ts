// Test-only pi package for the pi-session e2e checks (memory-pi/e2e/pisession.mjs), installed
// next to pimem in the test agent directory so that target sessions load it by default:
// - an `input` handler that consumes any input containing [[handle-me]] (ask-session's
//   `handled` status, for prompts and steering alike);
// - `/e2e-send <text>`, which submits <text> with pi.sendUserMessage: input of source
//   `extension`, which @s: references never expand.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("input", (event) => (event.text.includes("[[handle-me]]") ? { action: "handled" } : { action: "continue" }));
	pi.registerCommand("e2e-send", {
		description: "Submit the text as extension-sourced input",
		handler: async (args) => {
			pi.sendUserMessage(args);
		},
	});
}
