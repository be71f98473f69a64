/**
 * Synthetic Pi 0.73 sessions with realistic shapes, for the benchmark (and the fast-path
 * equivalence test, at small sizes). Deterministic for a seed.
 *
 * Shapes, from the recorded sessions (test/fixtures/pi) and what long real sessions hold: many
 * short user/assistant turns; tool calls (1–3 per assistant message) whose results are mostly
 * 0.2–4 KB, sometimes 10–50 KB (a whole file, a test log); text with quotes, tabs, newlines and
 * non-ASCII characters (JSON escapes); errored requests (HTTP 500, zero usage) followed by a retry
 * on the error entry; compactions (summary + kept entries); branches (tree navigation with a
 * branch summary); model switches between Anthropic Messages, OpenAI Responses and Chat
 * Completions; thinking-level changes. Usage is what a prefix cache would report.
 */
import { closeSync, createWriteStream, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Models a session switches between: [api, provider, model, USD per M input, output]. */
const MODELS: Array<[string, string, string, number, number]> = [
  ['anthropic-messages', 'anthropic', 'claude-sonnet-4-5', 3, 15],
  ['openai-responses', 'openai', 'gpt-5', 1.25, 10],
  ['openai-completions', 'deepseek', 'deepseek-chat', 0.27, 1.1],
];

const WORDS = 'the a file function test value read write error build cache prefix request session token line result change module import export return const type string number'.split(' ');
const SOURCE = [
  'export function example(value: number): number {',
  '  return value * 2; // doubles "value"',
  '}',
  '\tconst map = new Map<string, number>();',
  "  if (x === 'ä') throw new Error(`bad ${x}`);",
  '  // TODO: handle the “edge” case — see #123',
  'import { readFile } from "node:fs/promises";',
  '    expect(result).toEqual({ ok: true, items: [1, 2, 3] });',
];

/** Options of one generated session. */
export interface SessionShape {
  /** Stop once the file holds at least this many bytes. */
  bytes: number;
  seed: number;
  /** Session id (header) and prefix of entry ids. */
  id: string;
  cwd: string;
  /** Start time, ms since epoch. */
  startMs: number;
}

/** What was written. */
export interface Written {
  file: string;
  bytes: number;
  requests: number;
  lines: number;
}

/**
 * Writes one session file.
 * @returns its size, number of assistant entries (requests) and lines
 */
export async function writeSession(file: string, shape: SessionShape): Promise<Written> {
  const rand = rng(shape.seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  const source = (bytes: number) => {
    const out: string[] = [];
    let n = 0;
    for (let i = 0; n < bytes; i++) {
      const l = `${pick(SOURCE)} ${i}`;
      out.push(l);
      n += l.length + 1;
    }
    return out.join('\n');
  };
  const out = createWriteStream(file);
  let bytes = 0;
  let lines = 0;
  const write = (o: unknown) => {
    const line = `${JSON.stringify(o)}\n`;
    bytes += Buffer.byteLength(line);
    lines++;
    return out.write(line) ? Promise.resolve() : new Promise<void>((r) => out.once('drain', () => r()));
  };
  let t = shape.startMs;
  let n = 0;
  const nextId = () => `${shape.id.slice(0, 4)}${(n++).toString(16).padStart(8, '0')}`;
  const iso = () => new Date(t).toISOString();
  await write({ type: 'session', version: 3, id: shape.id, timestamp: iso(), cwd: shape.cwd });

  let model = MODELS[0];
  let parent: string | null = null;
  const entry = async (o: Record<string, unknown>) => {
    t += 200 + Math.floor(rand() * 4000);
    const id = nextId();
    await write({ type: o.type ?? 'message', id, parentId: parent, timestamp: iso(), ...o });
    parent = id;
    return id;
  };
  await entry({ type: 'model_change', provider: model[1], modelId: model[2] });
  await entry({ type: 'thinking_level_change', thinkingLevel: 'off' });

  // Prefix-cache usage: the previous prompt is read back, the growth written.
  let prompt = 3000;
  let cached = 0;
  const usage = (added: number, error = false) => {
    if (error) return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    prompt += Math.ceil(added / 4);
    const read = Math.min(cached, prompt);
    const out = 20 + Math.floor(rand() * 400);
    const anthropic = model[0] === 'anthropic-messages';
    const u = anthropic
      ? { input: 3, cacheRead: read, cacheWrite: prompt - read - 3 }
      : { input: prompt - read, cacheRead: read, cacheWrite: 0 };
    cached = prompt;
    const cost = {
      input: (u.input * model[3]) / 1e6,
      output: (out * model[4]) / 1e6,
      cacheRead: (u.cacheRead * model[3] * 0.1) / 1e6,
      cacheWrite: (u.cacheWrite * model[3] * 1.25) / 1e6,
      total: 0,
    };
    cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
    // Pi's key order (pi-ai usage objects): input, output, cacheRead, cacheWrite, totalTokens, cost.
    return { input: u.input, output: out, cacheRead: u.cacheRead, cacheWrite: u.cacheWrite, totalTokens: prompt + out, cost };
  };
  let requests = 0;
  const assistant = async (content: unknown[], stopReason: string, added: number) => {
    requests++;
    const error = stopReason === 'error';
    const m: Record<string, unknown> = {
      role: 'assistant',
      content,
      api: model[0],
      provider: model[1],
      model: model[2],
      usage: usage(added, error),
      stopReason,
      timestamp: t,
    };
    if (error) m.errorMessage = '500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}';
    else m.responseId = `${model[0] === 'anthropic-messages' ? 'msg' : 'resp'}_${shape.id.slice(0, 8)}_${requests}`;
    return entry({ message: m });
  };
  const assistantEntries: string[] = [];
  let sinceCompaction = 0;
  for (let turn = 0; bytes < shape.bytes; turn++) {
    const r = rand();
    if (sinceCompaction > 120 + Math.floor(rand() * 120)) {
      sinceCompaction = 0;
      await entry({
        type: 'compaction',
        summary: `## Goal\n${words(30)}\n\n## Progress\n- ${words(12)}\n- ${words(9)}\n\n## Next Steps\n- ${words(10)}`,
        firstKeptEntryId: assistantEntries[assistantEntries.length - 2] ?? parent,
        tokensBefore: prompt,
        details: { readFiles: ['src/a.ts'], modifiedFiles: [] },
        fromHook: false,
      });
      prompt = 4000;
      cached = 0;
    } else if (r < 0.01 && assistantEntries.length > 10) {
      // Tree navigation: back to an earlier assistant entry, with a branch summary.
      parent = assistantEntries[assistantEntries.length - 1 - Math.floor(rand() * 8)];
      await entry({ type: 'branch_summary', fromId: parent, summary: `The user explored a different branch.\n\n## Goal\n${words(20)}`, details: { readFiles: [], modifiedFiles: [] }, fromHook: false });
      cached = 0;
    } else if (r < 0.02) {
      model = pick(MODELS);
      await entry({ type: 'model_change', provider: model[1], modelId: model[2] });
      cached = 0;
    } else if (r < 0.025) {
      await entry({ type: 'thinking_level_change', thinkingLevel: pick(['off', 'low', 'medium', 'high']) });
    }
    sinceCompaction++;
    const ask = `${words(3 + Math.floor(rand() * 40))}${rand() < 0.2 ? ` — "quoted" \t${pick(['ü', '→', '✓', '日本'])}` : ''}?`;
    await entry({ message: { role: 'user', content: [{ type: 'text', text: ask }], timestamp: t } });
    if (rand() < 0.02) {
      await assistant([], 'error', ask.length);
      // Pi retries on the error entry (its child), as in the recording.
    }
    if (rand() < 0.55) {
      const calls = 1 + Math.floor(rand() * rand() * 3);
      const callContent: unknown[] = [{ type: 'text', text: `I'll ${words(6)}.` }];
      const ids: string[] = [];
      for (let c = 0; c < calls; c++) {
        const id = model[0] === 'openai-responses' ? `call_${turn}_${c}|fc_${turn}${c}` : model[0] === 'anthropic-messages' ? `toolu_${turn}_${c}` : `call_${turn}_${c}`;
        ids.push(id);
        callContent.push({ type: 'toolCall', id, name: pick(['read', 'bash', 'edit', 'grep']), arguments: { path: `src/${pick(WORDS)}${turn}.ts`, ...(rand() < 0.3 ? { command: `npm test -- ${words(2)}` } : {}) } });
      }
      const a = await assistant(callContent, 'toolUse', ask.length + 80);
      assistantEntries.push(a);
      let resultBytes = 0;
      for (const id of ids) {
        const big = rand() < 0.06;
        const size = big ? 10_000 + Math.floor(rand() * 40_000) : 200 + Math.floor(rand() * rand() * 4000);
        const text = source(size);
        resultBytes += text.length;
        await entry({ message: { role: 'toolResult', toolCallId: id, toolName: 'read', content: [{ type: 'text', text }], isError: rand() < 0.03, timestamp: t } });
      }
      assistantEntries.push(await assistant([{ type: 'text', text: `${words(5 + Math.floor(rand() * 60))}.` }], 'stop', resultBytes + 100));
    } else {
      assistantEntries.push(await assistant([{ type: 'text', text: `${words(5 + Math.floor(rand() * 80))}.` }], 'stop', ask.length + 200));
    }
  }
  await new Promise<void>((r) => out.end(r));
  return { file, bytes, requests, lines };
}

/**
 * Writes a corpus of sessions in Pi's layout (`<dir>/sessions/--<cwd>--/<time>_<id>.jsonl`):
 * sizes spread from ~50 KB to several MB (a few large ones, many small ones), `total` bytes at least.
 */
export async function writeCorpus(dir: string, o: { sessions: number; total: number; seed: number }): Promise<Written[]> {
  const rand = rng(o.seed);
  // Log-uniform weights over 50 KB … 8 MB, scaled so the sizes sum to the total.
  const weights = Array.from({ length: o.sessions }, () => Math.exp(Math.log(50e3) + rand() * (Math.log(8e6) - Math.log(50e3))));
  const sum = weights.reduce((a, b) => a + b, 0);
  const out: Written[] = [];
  for (let i = 0; i < o.sessions; i++) {
    const cwd = `/home/dev/project-${i % 7}`;
    const sub = join(dir, 'sessions', `--${cwd.slice(1).replace(/\//g, '-')}--`);
    mkdirSync(sub, { recursive: true });
    const id = `019a${(o.seed + i).toString(16).padStart(4, '0')}-0000-7000-8000-${i.toString(16).padStart(12, '0')}`;
    const startMs = Date.UTC(2026, 10, 1) + i * 3_600_000;
    const file = join(sub, `${new Date(startMs).toISOString().replace(/[:.]/g, '-')}_${id}.jsonl`);
    out.push(await writeSession(file, { bytes: Math.ceil((weights[i] / sum) * o.total), seed: o.seed * 1000 + i, id, cwd, startMs }));
  }
  return out;
}

/** A Pi user + assistant pair continuing the session's last entry (one more request). */
export function oneMoreRequest(file: string, n: number): string {
  const size = statSync(file).size;
  const from = Math.max(0, size - 256 * 1024);
  const buf = Buffer.alloc(size - from);
  const fd = openSync(file, 'r');
  readSync(fd, buf, 0, buf.length, from);
  closeSync(fd);
  const tail = buf.toString('utf8').trimEnd().split('\n').slice(from > 0 ? 1 : 0);
  const last = JSON.parse(tail[tail.length - 1]) as { id: string };
  const assistant = [...tail].reverse().map((l) => JSON.parse(l) as Record<string, any>).find((e) => e.type === 'message' && e.message.role === 'assistant')!;
  const t = Date.parse('2027-01-01T00:00:00Z') + n * 1000;
  const user = { type: 'message', id: `bench-u${n}`, parentId: last.id, timestamp: new Date(t).toISOString(), message: { role: 'user', content: [{ type: 'text', text: `appended question ${n}?` }], timestamp: t } };
  const a = structuredClone(assistant);
  Object.assign(a, { id: `bench-a${n}`, parentId: user.id, timestamp: new Date(t + 900).toISOString() });
  a.message.timestamp = t + 900;
  a.message.responseId = `bench-appended-${n}`;
  a.message.content = [{ type: 'text', text: `answer ${n}.` }];
  return `${JSON.stringify(user)}\n${JSON.stringify(a)}\n`;
}

