/**
 * Benchmark (not a test): builds a large Pi session by repeating the structure of the recorded
 * main scenario (≥ 100 MB, ≥ 5,000 requests), then in one run measures
 *   1. a bare pass: the same streaming line reader + JSON.parse of every line, nothing else;
 *   2. the analysis: read → normalize → hash → diverge → judge (what `prefix-lens analyze` does);
 * and prints MB/s of each, the ratio analysis/parse, and peak RSS after each phase. Round 1 is
 * cold (as `prefix-lens analyze` runs); `--rounds N` repeats both passes (warm) and prints the
 * median ratio. On Linux the main thread's on-CPU time is printed too (steadier on a busy machine).
 * Target (README): ratio ≤ 1.5, memory bounded (no full-file string).
 *
 * Usage: npm run bench [-- --mb 100 --rounds 3 --keep]
 */
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { analyzeSession, type SessionAnalysis } from '../src/core/analyze.js';
import { readLines } from '../src/hosts/lines.js';
import { readPiSession } from '../src/hosts/pi/index.js';

const { values } = parseArgs({ options: { mb: { type: 'string', default: '100' }, rounds: { type: 'string', default: '1' }, keep: { type: 'boolean' } } });
const targetBytes = Number(values.mb) * 1024 * 1024;
const MIN_REQUESTS = 5000;

/** The recorded session the synthetic one repeats. */
async function recordedEntries(): Promise<Array<Record<string, unknown>>> {
  const dir = 'test/fixtures/pi/main/agent/sessions';
  const sub = (await readdir(dir))[0];
  const file = (await readdir(join(dir, sub))).find((f) => f.endsWith('.jsonl'))!;
  const text = await readFile(join(dir, sub, file), 'utf8');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/**
 * Writes a long linear session: turns of user → assistant(toolCall) → toolResult → assistant,
 * copied from the recording's shapes with fresh ids, a file-sized tool result per turn, and a
 * compaction every 150 turns (as a real long session would have), until both targets are met.
 */
async function generate(file: string): Promise<{ bytes: number; requests: number }> {
  const entries = await recordedEntries();
  const header = entries[0];
  const pick = (pred: (e: Record<string, any>) => boolean) => entries.find(pred) as Record<string, any>;
  const user = pick((e) => e.type === 'message' && e.message.role === 'user');
  const toolCall = pick((e) => e.type === 'message' && e.message.role === 'assistant' && e.message.stopReason === 'toolUse');
  const toolResult = pick((e) => e.type === 'message' && e.message.role === 'toolResult');
  const answer = pick((e) => e.type === 'message' && e.message.role === 'assistant' && e.message.stopReason === 'stop');
  const out = createWriteStream(file);
  let bytes = 0;
  const write = (o: unknown) => {
    const line = `${JSON.stringify(o)}\n`;
    bytes += Buffer.byteLength(line);
    return out.write(line) ? Promise.resolve() : new Promise<void>((r) => out.once('drain', () => r()));
  };
  await write(header);
  let parent: string | null = null;
  let id = 0;
  let requests = 0;
  let t = Date.parse(String(header.timestamp));
  const filler = 'export function example(value: number): number {\n  return value * 2; // line of a source file\n}\n';
  const next = async (template: Record<string, any>, patch: (m: any) => void) => {
    const e = structuredClone(template);
    e.id = (id++).toString(16).padStart(8, '0');
    e.parentId = parent;
    t += 1500;
    e.timestamp = new Date(t).toISOString();
    if (e.message) {
      e.message.timestamp = t;
      patch(e.message);
    } else patch(e);
    parent = e.id;
    await write(e);
    return e;
  };
  // Usage as a prefix cache would report it: the history since the last compaction is read back,
  // the rest is written (Anthropic-style fields, as Pi records them). Roughly 4 bytes per token.
  let prompt = 1500;
  let cached = 0;
  const usage = (m: any, addedBytes: number) => {
    prompt += Math.ceil(addedBytes / 4);
    m.usage = { ...m.usage, input: 0, cacheRead: cached, cacheWrite: prompt - cached, output: 12, totalTokens: prompt + 12 };
    cached = prompt;
  };
  for (let turn = 0; bytes < targetBytes || requests < MIN_REQUESTS; turn++) {
    if (turn > 0 && turn % 150 === 0) {
      await next({ type: 'compaction', summary: `Summary of turns up to ${turn}.`, firstKeptEntryId: parent, tokensBefore: 100000 }, () => {});
      prompt = 1500;
      cached = 1500;
    }
    await next(user, (m) => (m.content = [{ type: 'text', text: `Turn ${turn}: please read file${turn}.ts` }]));
    await next(toolCall, (m) => {
      m.responseId = `chatcmpl-bench-${++requests}`;
      usage(m, 80);
      m.content = m.content.map((c: any) => (c.type === 'toolCall' ? { ...c, id: `call_${turn}`, arguments: { path: `file${turn}.ts` } } : c));
    });
    await next(toolResult, (m) => {
      m.toolCallId = `call_${turn}`;
      m.content = [{ type: 'text', text: filler.repeat(220 + (turn % 40)) }];
    });
    await next(answer, (m) => {
      m.responseId = `chatcmpl-bench-${++requests}`;
      usage(m, filler.length * (220 + (turn % 40)) + 200);
      m.content = [{ type: 'text', text: `file${turn}.ts doubles its input.` }];
    });
  }
  await new Promise<void>((r) => out.end(r));
  return { bytes, requests };
}

const mb = (b: number) => b / 1024 / 1024;
const rssMb = () => process.resourceUsage().maxRSS / 1024;
/**
 * On-CPU time of the main thread (ms), Linux only (/proc/thread-self/schedstat): unlike wall time
 * it does not count time waiting for a core, so it moves less when other jobs share the machine.
 */
const cpuMs = (): number | null => {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
};

interface Pass {
  wall: number;
  cpu: number | null;
}

async function measure(run: () => Promise<void>): Promise<Pass> {
  global.gc?.();
  const c0 = cpuMs();
  const t0 = performance.now();
  await run();
  const wall = performance.now() - t0;
  const c1 = cpuMs();
  return { wall, cpu: c0 !== null && c1 !== null ? c1 - c0 : null };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function main(): Promise<void> {
  const rounds = Math.max(1, Number(values.rounds));
  const dir = await mkdtemp(join(tmpdir(), 'prefix-lens-bench-'));
  const file = join(dir, 'bench-session.jsonl');
  const gen = await generate(file);
  const size = (await stat(file)).size;
  console.log(`session: ${mb(size).toFixed(1)} MB, ${gen.requests} requests (${file})`);

  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    let lines = 0;
    const parse = await measure(async () => {
      for await (const l of readLines(file)) {
        JSON.parse(l.text);
        lines++;
      }
    });
    const parseRss = rssMb();
    let analysis: SessionAnalysis | undefined;
    const analyze = await measure(async () => {
      analysis = analyzeSession(await readPiSession(file));
    });
    const analyzeRss = rssMb();
    const ratio = analyze.wall / parse.wall;
    const cpuRatio = parse.cpu && analyze.cpu !== null ? analyze.cpu / parse.cpu : null;
    ratios.push(ratio);
    if (cpuRatio !== null) cpuRatios.push(cpuRatio);
    const cpu = (p: Pass) => (p.cpu === null ? '' : `, main-thread CPU ${p.cpu.toFixed(0)} ms`);
    const breaks = analysis!.requests.filter((r) => r.verdict === 'break').length;
    console.log(`round ${round}${round === 1 ? ' (cold, as the CLI runs)' : ' (warm)'}:`);
    console.log(`  bare parse: ${lines} lines in ${parse.wall.toFixed(0)} ms = ${(mb(size) / (parse.wall / 1000)).toFixed(1)} MB/s${cpu(parse)}; peak RSS ${parseRss.toFixed(0)} MB`);
    console.log(
      `  analysis:   ${analysis!.requests.length} requests (${breaks} breaks) in ${analyze.wall.toFixed(0)} ms = ${(mb(size) / (analyze.wall / 1000)).toFixed(1)} MB/s${cpu(analyze)}; peak RSS ${analyzeRss.toFixed(0)} MB`,
    );
    console.log(`  ratio analysis/parse: ${ratio.toFixed(2)}${cpuRatio === null ? '' : ` (main-thread CPU: ${cpuRatio.toFixed(2)})`}`);
    analysis = undefined;
  }
  if (rounds > 1) {
    console.log(`median ratio over ${rounds} rounds: ${median(ratios).toFixed(2)}${cpuRatios.length ? ` (main-thread CPU: ${median(cpuRatios).toFixed(2)})` : ''}`);
  }
  console.log(`target: ratio ≤ 1.5`);
  if (!values.keep) await rm(dir, { recursive: true, force: true });
}

void main();
