#!/usr/bin/env node
// record.mjs: write a Mastra storage database the way a production agent would, offline.
//
// Drives @mastra/memory's ObservationalMemoryProcessor (as an Agent runs it) over a seeded
// conversation with a deterministic mock Observer/Reflector, storing everything through
// @mastra/libsql (or @mastra/pg), so omlab's importer reads a database written by Mastra's own
// storage code. One thread per process (the engine keeps process-global buffering state):
//
//   node record.mjs --store libsql --url file:out.db --thread T --resource R --seed N \
//        --messages N --start ISO [--config JSON] [--tools] [--attachments]
//
// The mock model follows ../shared/tools/mastra-replay's contract (omlab's tests mirror it):
// Observer: one `* 🔴 (HH:MM) User said: <first 60>` line per message handed to it (text parts
// joined with a space, whitespace collapsed, first 60 UTF-16 units), `Assistant said` for replies.
// Reflector: keeps the non-blank lines whose index is a multiple of max(2, level + 1).
// Usage: ceil(promptChars/4) in, ceil(outputChars/4) out.
import { createRequire, syncBuiltinESMExports } from 'node:module';

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const has = (name) => argv.includes(name);
const storeKind = opt('--store', 'libsql');
const url = opt('--url');
const threadId = opt('--thread', 'thread-1');
const resourceId = opt('--resource', 'resource-1');
const SEED = Number(opt('--seed', 1));
const N = Number(opt('--messages', 40));
const START = Date.parse(opt('--start', '2025-03-03T09:00:00Z'));
const config = JSON.parse(opt('--config', '{"observation":{"messageTokens":3000,"bufferTokens":0.2,"bufferActivation":0.8,"blockAfter":1.2},"reflection":{"observationTokens":4000,"bufferActivation":0.5}}'));
const tools = has('--tools'); // step-start and tool-invocation parts on replies
const attachments = has('--attachments'); // file parts on some user messages, reasoning on some replies
if (!url) throw new Error('--url is required');

// ------------------------------------------------------------------ virtual clock, seeded ids
const require = createRequire(import.meta.url);
const RealDate = Date;
let virtualNow = START;
function VDate(...args) {
  if (!new.target) return new RealDate(virtualNow).toString();
  if (args.length === 0) return Reflect.construct(RealDate, [virtualNow], new.target);
  return Reflect.construct(RealDate, args, new.target);
}
VDate.prototype = RealDate.prototype;
VDate.now = () => virtualNow;
VDate.parse = RealDate.parse;
VDate.UTC = RealDate.UTC;
globalThis.Date = VDate;
let seed = 0x9e3779b9 ^ SEED;
Math.random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
let uuidCounter = 0;
const fakeUUID = () => `00000000-0000-4000-8000-${(SEED * 1_000_000 + ++uuidCounter).toString(16).padStart(12, '0')}`;
require('node:crypto').randomUUID = fakeUUID;
syncBuiltinESMExports();
try {
  Object.defineProperty(globalThis.crypto, 'randomUUID', { value: fakeUUID, configurable: true, writable: true });
} catch {}

const { Memory } = await import('@mastra/memory');
const { ObservationalMemoryProcessor } = await import('@mastra/memory/processors');
const { MessageList } = await import('@mastra/core/agent');
const { RequestContext } = await import('@mastra/core/request-context');

// ------------------------------------------------------------------ the seeded conversation
function mulberry32(a) {
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = mulberry32(SEED);
const pick = (a) => a[Math.floor(rnd() * a.length)];
const topics = ['the garden irrigation plan', "my sister Ana's wedding in Lisbon", 'the Rust rewrite of the billing service', 'training for the Berlin half marathon', 'the kitchen renovation budget', 'learning Japanese with flashcards', 'adopting a rescue greyhound', 'the apartment lease renewal'];
const verbs = ['need to', 'want to', 'decided to', 'am planning to', 'forgot to', 'already managed to'];
const objects = ['compare three quotes', 'book the venue', 'write the integration tests', 'call the landlord on Tuesday', 'move the deadline to May 14', 'ask Priya for the spreadsheet', 'order 40 meters of drip line', 'schedule the vet appointment'];
const extras = ['because last time it went badly', 'since the budget is about $4,200', 'before the end of the month', 'and my partner agrees', 'unless the weather is terrible'];
const sentence = () => `I ${pick(verbs)} ${pick(objects)} for ${pick(topics)} ${pick(extras)}.`;
const reply = () => `${pick(['That makes sense.', 'Good question.', 'Here is a suggestion.', 'Understood.'])} You could ${pick(objects)} ${pick(extras)}.`;

const script = [];
let t = START;
for (let i = 0; i < N; i++) {
  const role = i % 2 === 0 ? 'user' : 'assistant';
  const n = 2 + Math.floor(rnd() * (rnd() < 0.15 ? 30 : 8));
  const sentences = Array.from({ length: n }, () => (role === 'user' ? sentence() : reply()));
  const text = `(${threadId} msg ${i + 1}) ${sentences.join(' ')}`;
  t += role === 'user' ? 60_000 + Math.floor(rnd() * 19 * 60_000) : 5_000 + Math.floor(rnd() * 50_000);
  const parts = [];
  if (tools && role === 'assistant') parts.push({ type: 'step-start' });
  parts.push({ type: 'text', text });
  if (tools && role === 'assistant' && i % 6 === 1) {
    parts.push({
      type: 'tool-invocation',
      toolInvocation: { state: 'result', toolCallId: `call-${i}`, toolName: 'lookupWeather', args: { city: 'Lisbon', day: i }, result: { tempC: 10 + (i % 15), sky: pick(['clear', 'rain', 'fog']) } },
    });
  }
  if (attachments && role === 'user' && i % 10 === 4) {
    parts.push({ type: 'file', mimeType: 'text/plain', data: Buffer.from(`notes for message ${i + 1}`).toString('base64') });
  }
  if (attachments && role === 'assistant' && i % 8 === 3) parts.push({ type: 'reasoning', reasoning: 'The user wants a plan.', details: [{ type: 'text', text: 'The user wants a plan.' }] });
  script.push({ id: `${threadId}-m${String(i + 1).padStart(3, '0')}`, role, createdAtMs: t, content: { format: 2, parts } });
}

// ------------------------------------------------------------------ the mock model
const pad2 = (n) => String(n).padStart(2, '0');
let lastObserverInput = null;
function messageText(msg) {
  const parts = msg.content?.parts ?? [];
  const texts = parts.filter((p) => p?.type === 'text' && typeof p.text === 'string').map((p) => p.text);
  if (texts.length) return texts.join(' ');
  return typeof msg.content?.content === 'string' ? msg.content.content : '';
}
function first60(text) {
  let s = text.replace(/\s+/g, ' ').trim().slice(0, 60);
  const last = s.charCodeAt(s.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) s = s.slice(0, -1);
  return s;
}
function promptText(prompt) {
  const out = [];
  for (const m of prompt ?? []) {
    if (typeof m.content === 'string') out.push(m.content);
    else for (const p of m.content ?? []) if (p?.type === 'text') out.push(p.text);
  }
  return out.join('\n');
}
const HEAD = '## OBSERVATIONS TO REFLECT ON\n\n';
const TAIL = '\n\n---\n\nPlease analyze these observations';
function respond(options) {
  const all = promptText(options.prompt);
  let text = 'ok';
  const r = all.indexOf(HEAD);
  if (r >= 0) {
    const start = r + HEAD.length;
    const end = all.indexOf(TAIL, start);
    const after = end >= 0 ? all.slice(end) : '';
    const level = after.includes('## EXTREME COMPRESSION REQUIRED') ? 4 : after.includes('## CRITICAL COMPRESSION REQUIRED') ? 3 : after.includes('## AGGRESSIVE COMPRESSION REQUIRED') ? 2 : after.includes('## COMPRESSION REQUIRED') ? 1 : 0;
    const lines = all.slice(start, end >= 0 ? end : undefined).split('\n').filter((l) => l.trim() !== '');
    const every = Math.max(2, level + 1);
    text = `<observations>\n${lines.filter((_, i) => i % every === 0).join('\n')}\n</observations>`;
  } else if (all.includes('## New Message History to Observe') && lastObserverInput) {
    const lines = [];
    for (const m of lastObserverInput) {
      const body = first60(messageText(m));
      if (!body) continue;
      const d = new RealDate(m.createdAt instanceof RealDate ? m.createdAt.getTime() : RealDate.parse(m.createdAt));
      lines.push(`* 🔴 (${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}) ${m.role === 'user' ? 'User' : 'Assistant'} said: ${body}`);
    }
    text = `<observations>\n${lines.join('\n')}\n</observations>`;
  }
  const usage = { inputTokens: Math.ceil(all.length / 4), outputTokens: Math.ceil(text.length / 4), totalTokens: Math.ceil(all.length / 4) + Math.ceil(text.length / 4) };
  return { text, usage };
}
const mockModel = {
  specificationVersion: 'v2',
  provider: 'mock',
  modelId: 'mock-om',
  supportedUrls: {},
  async doGenerate(options) {
    const { text, usage } = respond(options);
    return { content: [{ type: 'text', text }], finishReason: 'stop', usage, warnings: [] };
  },
  async doStream(options) {
    const { text, usage } = respond(options);
    const stream = new ReadableStream({
      start(c) {
        c.enqueue({ type: 'stream-start', warnings: [] });
        c.enqueue({ type: 'text-start', id: 't0' });
        c.enqueue({ type: 'text-delta', id: 't0', delta: text });
        c.enqueue({ type: 'text-end', id: 't0' });
        c.enqueue({ type: 'finish', finishReason: 'stop', usage });
        c.close();
      },
    });
    return { stream };
  },
};

// ------------------------------------------------------------------ storage and engine
let storage;
if (storeKind === 'libsql') {
  const { LibSQLStore } = await import('@mastra/libsql');
  storage = new LibSQLStore({ id: 'omlab-recorder', url });
} else if (storeKind === 'pg') {
  const { PostgresStore } = await import('@mastra/pg');
  storage = new PostgresStore({ id: 'omlab-recorder', connectionString: url });
} else throw new Error(`--store must be libsql or pg, got ${storeKind}`);
await storage.init();
const hooks = { beforeObservation: ({ messages }) => void (lastObserverInput = messages) };
const memory = new Memory({ storage, options: { observationalMemory: { ...config, model: mockModel, hooks } } });
const om = await memory.omEngine;
if (!om) throw new Error('observational memory engine was not created');
const processor = new ObservationalMemoryProcessor(om, memory, { temporalMarkers: false });
const writer = { async custom() {} };
const actorModel = { specificationVersion: 'v2', provider: 'mock-actor', modelId: 'mock-actor' };

virtualNow = script[0]?.createdAtMs ?? START;
await memory.saveThread({ thread: { id: threadId, resourceId, title: `recorded ${threadId}`, createdAt: new Date(), updatedAt: new Date(), metadata: { seed: SEED } } });

let turn = null;
const base = () => ({ writer, model: actorModel, abort: (r) => { throw new Error(`abort: ${r}`); }, rotateResponseMessageId: () => undefined });
function newTurn() {
  const messageList = new MessageList({ threadId, resourceId });
  const requestContext = new RequestContext();
  requestContext.set('MastraMemory', { thread: { id: threadId }, resourceId });
  return { messageList, requestContext, state: {}, assistantCount: 0 };
}
const inputStep = (stepNumber) => processor.processInputStep({ ...base(), messageList: turn.messageList, requestContext: turn.requestContext, stepNumber, state: turn.state });
async function endTurn() {
  await processor.processOutputResult({ ...base(), messageList: turn.messageList, requestContext: turn.requestContext, state: turn.state });
  turn = null;
}
const Coordinator = om.buffering.constructor;
async function settle() {
  for (let i = 0; i < 50; i++) {
    await om.settled();
    await om.waitForBuffering(threadId, resourceId);
    if ([...(Coordinator.asyncBufferingOps?.keys?.() ?? [])].length === 0) return;
  }
}
const toDb = (m) => ({ id: m.id, role: m.role, type: 'text', createdAt: new RealDate(m.createdAtMs), threadId, resourceId, content: JSON.parse(JSON.stringify(m.content)) });

for (let i = 0; i < script.length; i++) {
  const m = script[i];
  const next = script[i + 1];
  virtualNow = m.createdAtMs;
  for (const p of m.content.parts) if (p.createdAt === undefined) p.createdAt = m.createdAtMs;
  if (m.role === 'user') {
    if (turn) await endTurn();
    turn = newTurn();
    turn.messageList.add(toDb(m), 'input');
    await inputStep(0);
    if (!next || next.role === 'user') await endTurn();
  } else {
    if (!turn) {
      turn = newTurn();
      await inputStep(0);
    } else if (turn.assistantCount > 0) await inputStep(turn.assistantCount);
    turn.messageList.add(toDb(m), 'response');
    turn.assistantCount++;
    if (!next || next.role !== 'assistant') await endTurn();
  }
  await settle();
}
await settle();
if (!script.length) {
  process.stderr.write(`${threadId}: a thread without messages\n`);
  process.exit(0);
}
const record = await om.getOrCreateRecord(threadId, resourceId);
process.stderr.write(`${threadId}: ${script.length} messages, generation ${record.generationCount}, ${record.observationTokenCount} observation tokens\n`);
process.exit(0);
