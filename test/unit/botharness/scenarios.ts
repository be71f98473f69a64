/**
 * The BotHarness scenarios the tests analyze, built into temporary DSH homes (dsh-fixture.ts).
 * Persona bodies are rendered the way `renderStandingPrompt` does (ADR-0134: SOUL.md and
 * MEMORY.md in one snapshot; `## Soul (SOUL.md) [P% — N/5,000 chars]`). The system prompt puts the
 * BotHarness persona section (order 10400) after DSH's own sections, joined by blank lines.
 * Usage numbers are synthetic (a prompt of 2100 tokens growing by 150 per request; cache reads as
 * DeepSeek's 64-token units would give them).
 *
 * Sessions (home `main`; each its own bot: ada, cleo, dora, blank, bea, mira, nora, dan):
 *  - `bh-stable`: persona taken on the first assembly; SOUL.md edited mid-session (an Inbox notice
 *    at the bottom), the section unchanged; a cold resume re-sends the same header; one unknown
 *    event type;
 *  - `bh-compaction`: a compaction, then the header re-sent with the refreshed snapshot;
 *  - `bh-drift`: the header re-sent mid-session with an edited SOUL.md body (drift), then with an
 *    edited MEMORY.md body (memory into the head);
 *  - `bh-empty`: bot `blank` without SOUL.md: an empty snapshot;
 *  - `bh-reowned`: re-owned from `ada` to `bea` (provenance `repair`) between requests 2 and 3;
 *  - `bh-memory`: a MEMORY.md change delivered through the Inbox at the bottom;
 *  - `bh-none`: an owned Session whose repository was not ready: persona_snapshot NULL;
 *  - `bh-damaged`: frame #2 corrupt, the last frame cut short.
 * usage_daily: ada's day covers bh-stable; dora's day is smaller than bh-drift's own reads.
 * Home `old`: a generation-6 database (no snapshot columns) and one session `bh-old`.
 */
import { writeFileSync } from 'node:fs';
import { frame, logBytes, tempHome, writeDb, writeLog, zstdReady, type Batch } from './dsh-fixture.js';

/** 2026-10-08T08:00:00.000Z, the fixture's first event. */
export const T0 = Date.UTC(2026, 9, 8, 8, 0, 0);
export const CWD = '/home/user/botlab';
export const CWD_DIR = '--home-user-botlab--';

/** `renderStandingPrompt` (packages/core/src/memory/soul.ts): both files with their usage headers. */
export function standing(soul: string, memory: string): string {
  const n = [...soul].length;
  const m = [...memory].length;
  const pct = (x: number, of: number) => Math.round((x / of) * 100);
  return `## Soul (SOUL.md) [${pct(n, 5000)}% — ${n}/5,000 chars]\n\n${soul}\n\n## Core Memory (MEMORY.md) [${pct(m, 3000)}% — ${m}/3,000 chars]\n\n${memory}`;
}

export const SOUL_ADA = 'You are Ada. You answer in short, exact sentences.';
export const SOUL_ADA_EDITED = 'You are Ada. You answer in short, exact sentences, and you cite files.';
export const MEMORY_ADA = "The user's project is Prefix Lens.";
export const MEMORY_ADA_EDITED = "The user's project is Prefix Lens. Releases go out on Fridays.";
export const SOUL_BEA = 'You are Bea. You review pull requests.';
export const MEMORY_BEA = 'Reviews follow the checklist in REVIEW.md.';

export const PERSONA_ADA = standing(SOUL_ADA, MEMORY_ADA);
export const PERSONA_ADA_SOUL2 = standing(SOUL_ADA_EDITED, MEMORY_ADA);
export const PERSONA_ADA_MEM2 = standing(SOUL_ADA_EDITED, MEMORY_ADA_EDITED);
export const PERSONA_BEA = standing(SOUL_BEA, MEMORY_BEA);

/** DSH's own sections before the persona (identity, role, model line). */
export function system(bot: string, persona: string): string {
  const base = [
    'You are an AI agent powered by DeepSeek Harness.',
    `You are the Orchestrator of the BotHarness bot "${bot}". Reply through channel_send.`,
    `You are a coding agent powered by the deepseek-v4-flash model. Your working directory is ${CWD}.`,
  ];
  return [...base, ...(persona ? [persona] : [])].join('\n\n');
}

export const TOOLS = [
  { name: 'read', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'channel_send', description: 'Send a message to the channel.', parameters: { type: 'object', properties: { body: { type: 'string' } }, required: ['body'] } },
];

const ROUTE = { provider: 'deepseek-official', model: 'deepseek-v4-flash' };

/** Writes DSH events batch by batch, with increasing seq and time (1 s apart). */
export class LogBuilder {
  private seq = 0;
  time = T0;
  private turn = 0;
  private step = 0;
  readonly batches: Batch[] = [];
  private cur: Batch = [];
  /** Prompt tokens of the last request (synthetic usage). */
  private prompt = 0;

  constructor(readonly id: string) {}

  header(): Record<string, unknown> {
    return { type: 'session', version: 0, id: this.id, createdAt: T0 - 1000, cwd: CWD };
  }

  ev(type: string, data: unknown, extra: Record<string, unknown> = {}): this {
    this.cur.push({ type, seq: this.seq++, time: this.time, data, ...extra });
    this.time += 1000;
    return this;
  }

  /** Ends the current write batch (one zstd frame). */
  flush(): this {
    if (this.cur.length) this.batches.push(this.cur);
    this.cur = [];
    return this;
  }

  requestHeader(sys: string, reason: 'initial' | 'resume' | 'change'): this {
    return this.ev('request/header', { header: { config: ROUTE, system: sys, tools: TOOLS }, reason });
  }

  user(text: string): this {
    this.turn++;
    this.step = 0;
    this.ev('turn/start', { turn: this.turn });
    return this.ev('user/message', { content: [{ type: 'text', text }], source: { kind: 'user' } }, { surfaceOp: 'append' });
  }

  /** One model call: step/start, the assistant message with synthetic usage, step/end. */
  call(text: string, read: 'hit' | number = 'hit', sys?: { text: string; reason: 'initial' | 'resume' | 'change' }): this {
    this.step++;
    this.ev('step/start', { turn: this.turn, step: this.step });
    if (sys) this.requestHeader(sys.text, sys.reason);
    const prompt = this.prompt ? this.prompt + 150 : 2100;
    const cacheRead = read === 'hit' ? Math.floor(this.prompt / 64) * 64 : read;
    this.prompt = prompt;
    this.ev(
      'assistant/message',
      { turn: this.turn, step: this.step, content: [{ type: 'text', text }], provenance: ROUTE, usage: { inputTokens: prompt - cacheRead, outputTokens: 12, cacheReadTokens: cacheRead, reasoningTokens: 0 } },
      { surfaceOp: 'append' },
    );
    return this.ev('step/end', { turn: this.turn, step: this.step });
  }

  /** A compaction boundary with its summary. */
  compaction(summary: string): this {
    this.ev('compaction/start', { reason: 'threshold' });
    this.ev('compaction/summary', { summary });
    return this.ev('compaction/end', {});
  }

  bytes(): Buffer {
    this.flush();
    return logBytes(this.header(), this.batches);
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

/** What the scenarios wrote. */
export interface Built {
  main: string;
  old: string;
  logs: Record<string, string>;
  /** Times (ms) the tests refer to. */
  times: Record<string, number>;
}

/** Builds both homes. */
export async function buildScenarios(): Promise<Built> {
  await zstdReady();
  const main = tempHome('main');
  const old = tempHome('old');
  const logs: Record<string, string> = {};
  const times: Record<string, number> = {};
  const write = (b: LogBuilder) => (logs[b.id] = writeLog(main, CWD_DIR, b.id, b.bytes()));

  // bh-stable
  const stable = new LogBuilder('bh-stable');
  stable.user('Say hello.').call('Hello.', 0, { text: system('ada', PERSONA_ADA), reason: 'initial' }).flush();
  times.stableTaken = T0 + 2000;
  stable.ev('telemetry/ping', { n: 1 }).flush();
  times.soulEdit = stable.time;
  stable.time += 1000;
  stable.user('[Source Event se-soul-1] Memory changed between turns: SOUL.md').call('Noted.').flush();
  stable.user('Summarize.').call('Done.', 'hit', { text: system('ada', PERSONA_ADA), reason: 'resume' }).flush();
  write(stable);

  // bh-compaction
  const comp = new LogBuilder('bh-compaction');
  comp.user('Start.').call('Started.', 0, { text: system('ada', PERSONA_ADA), reason: 'initial' });
  comp.user('Go on.').call('Going.').flush();
  comp.compaction('The user asked to start and go on.').flush();
  times.refresh = comp.time;
  comp.user('Next.').call('Next done.', 1024, { text: system('ada', PERSONA_ADA_SOUL2), reason: 'change' }).flush();
  write(comp);

  // bh-drift
  const drift = new LogBuilder('bh-drift');
  drift.user('One.').call('1.', 0, { text: system('ada', PERSONA_ADA), reason: 'initial' });
  drift.user('Two.').call('2.').flush();
  drift.user('Three.').call('3.', 1024, { text: system('ada', PERSONA_ADA_SOUL2), reason: 'change' }).flush();
  drift.user('Four.').call('4.', 1024, { text: system('ada', PERSONA_ADA_MEM2), reason: 'change' }).flush();
  write(drift);

  // bh-empty
  const empty = new LogBuilder('bh-empty');
  empty.user('Hi.').call('Hi.', 0, { text: system('blank', ''), reason: 'initial' });
  empty.user('Again.').call('Again.').flush();
  times.emptyTaken = T0 + 2000;
  write(empty);

  // bh-reowned
  const re = new LogBuilder('bh-reowned');
  re.user('A.').call('a', 0, { text: system('ada', PERSONA_ADA), reason: 'initial' });
  re.user('B.').call('b').flush();
  times.reowned = re.time;
  re.time += 1000;
  re.user('C.').call('c', 1024, { text: system('bea', PERSONA_BEA), reason: 'change' }).flush();
  write(re);

  // bh-memory
  const mem = new LogBuilder('bh-memory');
  mem.user('Plan.').call('Planned.', 0, { text: system('ada', PERSONA_ADA), reason: 'initial' }).flush();
  times.memoryChange = mem.time;
  mem.time += 1000;
  mem.user('[Source Event se-mem-1] Memory changed between turns: MEMORY.md (+1 line)').call('Thanks.').flush();
  write(mem);

  // bh-none
  const none = new LogBuilder('bh-none');
  none.user('Hello?').call('Hello.', 0, { text: system('nora', ''), reason: 'initial' }).flush();
  write(none);

  // bh-damaged: frames 0 header, 1 first call, 2 corrupt, 3 good, 4 cut short.
  const dmg = new LogBuilder('bh-damaged');
  dmg.user('X.').call('x', 0, { text: system('ada', PERSONA_ADA), reason: 'initial' }).flush();
  dmg.user('Y.').call('y').flush();
  dmg.user('Z.').call('z').flush();
  dmg.user('W.').call('w').flush();
  const frames = [frame([dmg.header()]), ...dmg.batches.map(frame)];
  const bad = Buffer.from(frames[2]);
  // Block header after the 4-byte magic and the frame header: set its type to 3 (reserved).
  bad[bad.length - (bad.length - 4 - frameHeaderBytes(bad))] |= 0b110;
  frames[2] = bad;
  frames[4] = frames[4].subarray(0, frames[4].length - 5);
  logs[dmg.id] = writeLog(main, CWD_DIR, dmg.id, Buffer.concat(frames));

  const ada = { created_at: iso(T0 - 1000), cwd_reference: CWD };
  await writeDb(main, {
    generation: 57,
    ownership: [
      { session_id: 'bh-stable', bot_slug: 'ada', ...ada, persona_snapshot: PERSONA_ADA, persona_snapshot_at: iso(times.stableTaken) },
      { session_id: 'bh-compaction', bot_slug: 'cleo', ...ada, persona_snapshot: PERSONA_ADA_SOUL2, persona_snapshot_at: iso(times.refresh) },
      { session_id: 'bh-drift', bot_slug: 'dora', ...ada, persona_snapshot: PERSONA_ADA, persona_snapshot_at: iso(T0 + 2000) },
      { session_id: 'bh-empty', bot_slug: 'blank', created_at: iso(T0 - 1000), persona_snapshot: '', persona_snapshot_at: iso(times.emptyTaken) },
      { session_id: 'bh-reowned', bot_slug: 'bea', created_at: iso(T0 - 1000), provenance: 'repair', persona_snapshot: PERSONA_BEA, persona_snapshot_at: iso(times.reowned) },
      { session_id: 'bh-memory', bot_slug: 'mira', ...ada, persona_snapshot: PERSONA_ADA, persona_snapshot_at: iso(T0 + 2000) },
      { session_id: 'bh-none', bot_slug: 'nora', ...ada, persona_snapshot: null, persona_snapshot_at: null },
      { session_id: 'bh-damaged', bot_slug: 'dan', ...ada, persona_snapshot: PERSONA_ADA, persona_snapshot_at: iso(T0 + 2000) },
    ],
    memoryChanges: [
      { id: 'se-soul-1', bot: 'ada', body: 'Memory changed between turns: SOUL.md', payload: { paths: ['SOUL.md'] }, observedAt: iso(times.soulEdit) },
      { id: 'se-mem-1', bot: 'mira', body: 'Memory changed between turns: MEMORY.md (+1 line)', payload: { paths: ['MEMORY.md'] }, observedAt: iso(times.memoryChange) },
    ],
    usage: [
      { bot: 'ada', day: '2026-10-08', provider: 'deepseek-official', model: 'deepseek-v4-flash', input: 20000, output: 500, cacheRead: 40000, cacheWrite: 0 },
      { bot: 'dora', day: '2026-10-08', provider: 'deepseek-official', model: 'deepseek-v4-flash', input: 3000, output: 40, cacheRead: 1000, cacheWrite: 0 },
    ],
  });

  // Home `old`: a database of generation 6, before the snapshot columns.
  const o = new LogBuilder('bh-old');
  o.user('Old.').call('old', 0, { text: system('ada', PERSONA_ADA), reason: 'initial' }).flush();
  logs[o.id] = writeLog(old, CWD_DIR, o.id, o.bytes());
  await writeDb(old, { generation: 6, ownership: [{ session_id: 'bh-old', bot_slug: 'ada', created_at: iso(T0 - 1000) }] });
  return { main, old, logs, times };
}

/** Bytes of a zstd frame header after the magic (descriptor, window, dictionary id, content size). */
export function frameHeaderBytes(f: Uint8Array): number {
  const fhd = f[4];
  const single = (fhd >> 5) & 1;
  const fcs = fhd >> 6;
  return 1 + (single ? 0 : 1) + [0, 1, 2, 4][fhd & 3] + (fcs === 0 ? single : [0, 2, 4, 8][fcs]);
}

/** Writes a raw (uncompressed) log, as DSH does with `compression:'none'`. */
export function writeRawLog(file: string, b: LogBuilder): void {
  b.flush();
  writeFileSync(file, [b.header(), ...b.batches.flat()].map((l) => `${JSON.stringify(l)}\n`).join(''));
}
