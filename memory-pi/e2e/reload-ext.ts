// Test-only helper loaded with `-e` by the e2e suite: `/e2e-reload` reloads the extension
// runtime (pi emits session_shutdown(reload) then session_start(reload) on new instances),
// which RPC mode cannot trigger by itself.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerCommand("e2e-reload", {
		description: "Reload the extension runtime (e2e)",
		handler: async (_args, ctx) => {
			await ctx.reload();
		},
	});
}
