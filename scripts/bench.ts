/**
 * Benchmark (not a test; issue 9). Generates a realistic Pi corpus (scripts/bench/corpus.ts: ≥ 40
 * sessions, ≥ 70 MiB: many short requests, tool results mostly small and some 10–50 KB,
 * compactions, branches, errors, model switches) and one 100 MiB session, then measures side by
 * side, as whole processes (`node dist/cli.js`, the built CLI; a plain-JavaScript bare parse):
 *
 *   1. cold analysis (`analyze --json`, empty cache) / bare parse (every line JSON.parse'd): wall and CPU
 *   2. warm analysis (every session cached) / bare parse
 *   3. the same on the 100 MiB session
 *   4. append one request to the 100 MiB session → time to its verdict: the live tail
 *      (`analyze --watch --json`, end to end through file events) and the library call
 *      (LiveAnalysis.update, in this process); and a CLI re-run (a grown file misses the cache)
 *   5. peak RSS of `analyze --json --no-cache` over 1×, 2× and 8× the corpus (hard links)
 * CPU = user + system time of the whole process (every thread), from a preloaded probe
 * (scripts/bench/probe.cjs). Each pass runs `--rounds` times (default 3); medians are printed.
 * Targets: cold ≤ 1.5× bare; warm ≤ 0.1× bare; append → verdict < 30 ms; RSS(8×) ≤ RSS(1×) + largest session.
 *
 * Usage: npm run bench [-- --rounds 3 --corpus-mib 72 --big-mib 100 --keep]
 */
import { execFile, spawn } from 'node:child_process';
import { appendFileSync, closeSync, linkSync, openSync, readSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { findSessions } from '../src/hosts/registry.js';
import { LiveAnalysis } from '../src/live/session.js';
import { writeCorpus, writeSession } from './bench/corpus.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    'corpus-mib': { type: 'string', default: '72' },
    'big-mib': { type: 'string', default: '100' },
    sessions: { type: 'string', default: '40' },
    keep: { type: 'boolean' },
  },
});
const ROUNDS = Math.max(1, Number(values.rounds));
const MiB = 1024 * 1024;
const ROOT = resolve(__dirname, '..');
const CLI = join(ROOT, 'dist/cli.js');
const BARE = join(ROOT, 'scripts/bench/bare.mjs');
const PROBE = join(ROOT, 'scripts/bench/probe.cjs');

interface Run {
  wallMs: number;
  cpuMs: number;
  maxRssMiB: number;
}

/** Runs `node --require probe <args>` with stdout discarded; wall time measured here. */
function proc(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const probe = join(tmpdir(), `prefix-lens-probe-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  return new Promise((ok, fail) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['--require', PROBE, ...args], { env: { ...process.env, ...env, PREFIX_LENS_BENCH_PROBE: probe }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      const wallMs = performance.now() - t0;
      if (code !== 0) return fail(new Error(`${args.join(' ')} exited ${code}: ${err.slice(0, 400)}`));
      const p = JSON.parse(readFileSync(probe, 'utf8')) as { cpuMs: number; maxRssKiB: number };
      rmSync(probe, { force: true });
      ok({ wallMs, cpuMs: p.cpuMs, maxRssMiB: p.maxRssKiB / 1024 });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
async function rounds(make: () => Promise<Run>, before?: () => void): Promise<Run> {
  const rs: Run[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    before?.();
    rs.push(await make());
  }
  return { wallMs: median(rs.map((r) => r.wallMs)), cpuMs: median(rs.map((r) => r.cpuMs)), maxRssMiB: median(rs.map((r) => r.maxRssMiB)) };
}

const f0 = (x: number) => x.toFixed(0);
const f2 = (x: number) => x.toFixed(2);
const row = (name: string, r: Run, base?: Run) =>
  `  ${name.padEnd(34)} wall ${f0(r.wallMs).padStart(7)} ms  CPU ${f0(r.cpuMs).padStart(7)} ms  peak RSS ${f0(r.maxRssMiB).padStart(5)} MiB` +
  (base ? `   ×bare: wall ${f2(r.wallMs / base.wallMs)}, CPU ${f2(r.cpuMs / base.cpuMs)}` : '');

/** A Pi user + assistant pair continuing the session's last entry (one more request). */
function oneMoreRequest(file: string, n: number): string {
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

/** `analyze --watch --json` on a file: ms from appending a request to its `request` event. */
async function watchAppend(file: string, n: number): Promise<number[]> {
  const child = spawn(process.execPath, [CLI, 'analyze', '--watch', '--json', file], { stdio: ['ignore', 'pipe', 'ignore'] });
  const waiters: Array<(e: { event: string; request?: { responseId: string | null } }) => void> = [];
  // Lines are split as they complete: the first event is the whole report on one line (~100 MB for
  // this session), which a re-split of everything read at each chunk made quadratic.
  const parts: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => {
    let at = 0;
    for (let nl = d.indexOf(10); nl >= 0; nl = d.indexOf(10, at)) {
      parts.push(d.subarray(at, nl));
      const l = Buffer.concat(parts).toString();
      parts.length = 0;
      at = nl + 1;
      if (l) for (const w of waiters.splice(0)) w(JSON.parse(l));
    }
    if (at < d.length) parts.push(Buffer.from(d.subarray(at)));
  });
  const next = (pred: (e: { event: string; request?: { responseId: string | null } }) => boolean) =>
    new Promise<void>((ok) => {
      const w = (e: { event: string; request?: { responseId: string | null } }) => (pred(e) ? ok() : waiters.push(w));
      waiters.push(w);
    });
  const times: number[] = [];
  try {
  await next((e) => e.event === 'session');
  for (let i = 0; i < n; i++) {
    const text = oneMoreRequest(file, 1000 + i);
    const id = `bench-appended-${1000 + i}`;
    const seen = next((e) => e.event === 'request' && e.request?.responseId === id);
    const t0 = performance.now();
    appendFileSync(file, text);
    await seen;
    times.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 200));
  }
  } finally {
    child.kill('SIGINT');
  }
  return times;
}

function hardLinkCorpus(src: string, dst: string, copies: number): void {
  for (let c = 0; c < copies; c++) {
    for (const sub of readdirSync(join(src, 'sessions'))) {
      const d = join(dst, `copy${c}`, 'sessions', sub);
      mkdirSync(d, { recursive: true });
      for (const f of readdirSync(join(src, 'sessions', sub))) linkSync(join(src, 'sessions', sub, f), join(d, f));
    }
  }
}

async function main(): Promise<void> {
  await new Promise<void>((ok, fail) => execFile(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT }, (e) => (e ? fail(e) : ok())));
  const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-bench-'));
  const corpus = join(dir, 'corpus');
  const t0 = performance.now();
  const written = await writeCorpus(corpus, { sessions: Number(values.sessions), total: Number(values['corpus-mib']) * MiB, seed: 7 });
  const bigDir = join(dir, 'big');
  mkdirSync(bigDir);
  const big = join(bigDir, 'big-session.jsonl');
  const bigW = await writeSession(big, { bytes: Number(values['big-mib']) * MiB, seed: 99, id: '019a0bbb-0000-7000-8000-000000000100', cwd: '/home/dev/big', startMs: Date.UTC(2026, 10, 20) });
  const total = written.reduce((a, w) => a + w.bytes, 0);
  const largest = Math.max(...written.map((w) => w.bytes));
  console.log(`corpus: ${written.length} sessions, ${(total / MiB).toFixed(1)} MiB, ${written.reduce((a, w) => a + w.requests, 0)} requests, ${written.reduce((a, w) => a + w.lines, 0)} lines; largest ${(largest / MiB).toFixed(1)} MiB`);
  console.log(`big session: ${(bigW.bytes / MiB).toFixed(1)} MiB, ${bigW.requests} requests, ${bigW.lines} lines (generated in ${f0(performance.now() - t0)} ms)`);
  console.log(`rounds: ${ROUNDS} (medians)\n`);

  const cache = join(dir, 'cache');
  const fresh = () => rmSync(cache, { recursive: true, force: true });
  const env = { XDG_CACHE_HOME: cache };

  console.log('corpus:');
  const bare = await rounds(() => proc([BARE, corpus]));
  console.log(row('bare parse', bare));
  const cold = await rounds(() => proc([CLI, 'analyze', '--json', corpus], env), fresh);
  console.log(row('cold analyze --json (empty cache)', cold, bare));
  const cold1 = await rounds(() => proc([CLI, 'analyze', '--json', '--no-cache', corpus], { PREFIX_LENS_WORKERS: '0' }));
  console.log(row('  same, one thread, --no-cache', cold1, bare));
  const warm = await rounds(() => proc([CLI, 'analyze', '--json', corpus], env));
  console.log(row('warm analyze --json (all cached)', warm, bare));

  console.log('\n100 MiB session:');
  const bareBig = await rounds(() => proc([BARE, big]));
  console.log(row('bare parse', bareBig));
  const coldBig = await rounds(() => proc([CLI, 'analyze', '--json', big], env), fresh);
  console.log(row('cold analyze --json', coldBig, bareBig));
  const warmBig = await rounds(() => proc([CLI, 'analyze', '--json', big], env));
  console.log(row('warm analyze --json', warmBig, bareBig));
  console.log(`  peak RSS / session size: ${(coldBig.maxRssMiB / (bigW.bytes / MiB)).toFixed(2)}× (target < ~4×)`);

  console.log('\nappend one request to the 100 MiB session → its verdict:');
  const watchMs = await watchAppend(big, ROUNDS);
  console.log(`  analyze --watch (file event → NDJSON line): ${watchMs.map(f0).join(', ')} ms; median ${f0(median(watchMs))} ms`);
  const [ref] = await findSessions(big);
  const live = await LiveAnalysis.open(ref);
  const libMs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    appendFileSync(big, oneMoreRequest(big, 2000 + i));
    const t = performance.now();
    const u = await live.update();
    libMs.push(performance.now() - t);
    if (u.added.length !== 1) throw new Error(`expected one new request, got ${u.added.length}`);
  }
  console.log(`  LiveAnalysis.update (in process):           ${libMs.map(f0).join(', ')} ms; median ${f0(median(libMs))} ms`);
  appendFileSync(big, oneMoreRequest(big, 3000));
  const rerun = await proc([CLI, 'analyze', '--json', big], env);
  console.log(`  CLI re-run (grown file: cache miss, full read): ${f0(rerun.wallMs)} ms wall, ${f0(rerun.cpuMs)} ms CPU`);

  console.log('\npeak RSS, analyze --json --no-cache over copies of the corpus (hard links):');
  const rss: Record<number, Run> = {};
  for (const k of [1, 2, 8]) {
    const d = join(dir, `x${k}`);
    hardLinkCorpus(corpus, d, k);
    rss[k] = await proc([CLI, 'analyze', '--json', '--no-cache', d]);
    console.log(`  ${String(k).padStart(2)}× (${((total * k) / MiB).toFixed(0)} MiB): peak RSS ${f0(rss[k].maxRssMiB)} MiB, wall ${f0(rss[k].wallMs)} ms, CPU ${f0(rss[k].cpuMs)} ms`);
  }
  console.log(`  8× − 1× = ${f0(rss[8].maxRssMiB - rss[1].maxRssMiB)} MiB (target ≤ largest session, ${(largest / MiB).toFixed(1)} MiB)`);

  console.log('\ntargets: cold ≤ 1.5× bare; warm ≤ 0.1× bare; append → verdict < 30 ms; RSS(8×) ≤ RSS(1×) + largest session');
  console.log(
    `measured: cold ${f2(cold.wallMs / bare.wallMs)}× wall / ${f2(cold.cpuMs / bare.cpuMs)}× CPU; warm ${f2(warm.wallMs / bare.wallMs)}× wall / ${f2(warm.cpuMs / bare.cpuMs)}× CPU; ` +
      `append → verdict ${f0(median(watchMs))} ms (watch), ${f0(median(libMs))} ms (library); RSS 8× − 1× = ${f0(rss[8].maxRssMiB - rss[1].maxRssMiB)} MiB`,
  );
  if (values.keep) console.log(`kept: ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

void main();
