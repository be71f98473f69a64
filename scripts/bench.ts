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
 *      (LiveAnalysis.update, in this process); and a new CLI run on the grown file (its output
 *      entry misses; continued from the state saved at the last complete line, src/cache/tail.ts),
 *      next to the same run with that state removed (a full read), output bytes compared
 *   5. peak RSS of `analyze --json --no-cache` over 1×, 2× and 8× the corpus (hard links)
 * Each CLI pass runs with the CLI's default worker count on this machine (src/cli/workers.ts
 * workersFor: none below 4 cores), its label says which; the corpus's cold and RSS passes also run
 * with 2 workers forced (`PREFIX_LENS_WORKERS=2`, the worker path) and in one thread
 * (`PREFIX_LENS_WORKERS=0`) when the default differs.
 * CPU = user + system time of the whole process (every thread), from a preloaded probe
 * (scripts/bench/probe.cjs). Each pass runs `--rounds` times (default 3); medians are printed.
 * Targets: cold ≤ 1.5× bare; warm ≤ 0.1× bare; append → verdict < 30 ms; RSS(8×) ≤ RSS(1×) + largest session.
 *
 * Usage: npm run bench [-- --rounds 3 --corpus-mib 72 --big-mib 100 --keep]
 *        npm run bench -- --only grown   (only the grown-session CLI runs of 4, on a new 100 MiB session: a few minutes)
 *        npm run bench -- --only append  (only the append → verdict series of 4: --watch and LiveAnalysis.update)
 *        npm run bench -- --only warm [--rounds 15]  (only 2 and 3's warm runs, alternating with `node -e 0`
 *                                     and the bare parse; again without NODE_EXTRA_CA_CERTS when it is set)
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { appendFileSync, linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { workersFor } from '../src/cli/workers.js';
import { findSessions } from '../src/hosts/registry.js';
import { LiveAnalysis } from '../src/live/session.js';
import { oneMoreRequest, writeCorpus, writeSession } from './bench/corpus.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    'corpus-mib': { type: 'string', default: '72' },
    'big-mib': { type: 'string', default: '100' },
    sessions: { type: 'string', default: '40' },
    keep: { type: 'boolean' },
    only: { type: 'string' },
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
function proc(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
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
/** What the CLI runs by default for these session sizes on this machine: "one thread" or "N workers". */
const defaultMode = (bytes: readonly number[]) => {
  const n = workersFor(availableParallelism(), bytes.length, bytes);
  return n ? `${n} workers` : 'one thread';
};
const row = (name: string, r: Run, base?: Run) =>
  `  ${name.padEnd(34)} wall ${f0(r.wallMs).padStart(7)} ms  CPU ${f0(r.cpuMs).padStart(7)} ms  peak RSS ${f0(r.maxRssMiB).padStart(5)} MiB` +
  (base ? `   ×bare: wall ${f2(r.wallMs / base.wallMs)}, CPU ${f2(r.cpuMs / base.cpuMs)}` : '');

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

/**
 * A new CLI run (`analyze --json`) on the grown file after one more request was appended: with
 * the state the previous run saved (continued from it), and with that state removed (the output
 * entry misses: a full read). `--rounds` of each, alternating; the continued output is compared
 * byte for byte with `--no-cache`'s. The cache must hold the file's entry and state from a run.
 */
async function grownRuns(big: string, env: Record<string, string>, cache: string): Promise<{ continued: Run; full: Run; same: boolean }> {
  const states = () => readdirSync(join(cache, 'prefix-lens', 'v2')).filter((f) => f.endsWith('.tail')).map((f) => join(cache, 'prefix-lens', 'v2', f));
  const cont: Run[] = [];
  const full: Run[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    appendFileSync(big, oneMoreRequest(big, 4000 + 2 * i));
    if (!states().length) throw new Error('no continuation state saved');
    cont.push(await proc([CLI, 'analyze', '--json', big], env));
    appendFileSync(big, oneMoreRequest(big, 4001 + 2 * i));
    for (const f of states()) rmSync(f);
    full.push(await proc([CLI, 'analyze', '--json', big], env));
  }
  // The continued output against a full analysis of the same bytes.
  appendFileSync(big, oneMoreRequest(big, 5000));
  const a = execFileSync(process.execPath, [CLI, 'analyze', '--json', big], { env: { ...process.env, ...env }, maxBuffer: 1 << 30 });
  const b = execFileSync(process.execPath, [CLI, 'analyze', '--json', '--no-cache', big], { env: { ...process.env, ...env }, maxBuffer: 1 << 30 });
  const med = (rs: Run[]): Run => ({ wallMs: median(rs.map((r) => r.wallMs)), cpuMs: median(rs.map((r) => r.cpuMs)), maxRssMiB: median(rs.map((r) => r.maxRssMiB)) });
  return { continued: med(cont), full: med(full), same: a.equals(b) };
}

/**
 * The append → verdict series on `big`: ROUNDS appends through `analyze --watch --json`, then
 * ROUNDS through LiveAnalysis.update in this process (`pauseMs` between those); printed and
 * returned, in ms.
 */
async function appendSeries(big: string, pauseMs: number): Promise<{ watchMs: number[]; libMs: number[] }> {
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
    if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
  }
  console.log(`  LiveAnalysis.update (in process):           ${libMs.map(f0).join(', ')} ms; median ${f0(median(libMs))} ms`);
  return { watchMs, libMs };
}

/**
 * `--only append`: the 100 MiB session, then `--rounds` appends of one request each through
 * `analyze --watch --json` (file event → its NDJSON line) and through LiveAnalysis.update.
 */
async function onlyAppend(): Promise<void> {
  await new Promise<void>((ok, fail) => execFile(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT }, (e) => (e ? fail(e) : ok())));
  const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-bench-'));
  const big = join(dir, 'big-session.jsonl');
  const bigW = await writeSession(big, { bytes: Number(values['big-mib']) * MiB, seed: 99, id: '019a0bbb-0000-7000-8000-000000000100', cwd: '/home/dev/big', startMs: Date.UTC(2026, 10, 20) });
  console.log(`big session: ${(bigW.bytes / MiB).toFixed(1)} MiB, ${bigW.requests} requests; rounds: ${ROUNDS}\n`);
  await appendSeries(big, 200);
  rmSync(dir, { recursive: true, force: true });
}

/** `--only grown`: the 100 MiB session, a cold run that saves the state, then grownRuns. */
async function onlyGrown(): Promise<void> {
  await new Promise<void>((ok, fail) => execFile(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT }, (e) => (e ? fail(e) : ok())));
  const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-bench-'));
  const big = join(dir, 'big-session.jsonl');
  const bigW = await writeSession(big, { bytes: Number(values['big-mib']) * MiB, seed: 99, id: '019a0bbb-0000-7000-8000-000000000100', cwd: '/home/dev/big', startMs: Date.UTC(2026, 10, 20) });
  console.log(`big session: ${(bigW.bytes / MiB).toFixed(1)} MiB, ${bigW.requests} requests; rounds: ${ROUNDS}\n`);
  const cache = join(dir, 'cache');
  const env = { XDG_CACHE_HOME: cache };
  const cold = await proc([CLI, 'analyze', '--json', big], env);
  console.log(row('cold analyze --json (saves the state)', cold));
  const v2 = join(cache, 'prefix-lens', 'v2');
  for (const f of readdirSync(v2).filter((x) => x.endsWith('.tail'))) console.log(`  state saved: ${(statSync(join(v2, f)).size / 1e6).toFixed(2)} MB`);
  const g = await grownRuns(big, env, cache);
  console.log(row('grown file, new CLI run: continued', g.continued));
  console.log(row('grown file, new CLI run: state removed', g.full));
  console.log(`  continued output = --no-cache output: ${g.same ? 'yes' : 'NO'}`);
  if (values.keep) console.log(`kept: ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

/**
 * `--only warm`: the corpus and the 100 MiB session (same seeds as the full run), one cold
 * `analyze --json` of each (writes the caches; its output is compared byte for byte with the warm
 * run's), then `--rounds` alternating rounds of `node -e 0`, the bare parse and the warm run per
 * input: medians, the warm/bare ratios, and what the warm run costs above `node -e 0`. When
 * NODE_EXTRA_CA_CERTS is set, all again with it unset: Node (20) then parses that bundle and builds
 * its root certificate store at every start before any script runs (nodejs/node#40524; ~45 ms CPU
 * with a 144-certificate bundle here), a floor of the machine's environment, not of the CLI.
 */
async function onlyWarm(): Promise<void> {
  await new Promise<void>((ok, fail) => execFile(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT }, (e) => (e ? fail(e) : ok())));
  const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-bench-'));
  const corpus = join(dir, 'corpus');
  const written = await writeCorpus(corpus, { sessions: Number(values.sessions), total: Number(values['corpus-mib']) * MiB, seed: 7 });
  mkdirSync(join(dir, 'big'));
  const big = join(dir, 'big', 'big-session.jsonl');
  const bigW = await writeSession(big, { bytes: Number(values['big-mib']) * MiB, seed: 99, id: '019a0bbb-0000-7000-8000-000000000100', cwd: '/home/dev/big', startMs: Date.UTC(2026, 10, 20) });
  console.log(`corpus: ${written.length} sessions, ${(written.reduce((a, w) => a + w.bytes, 0) / MiB).toFixed(1)} MiB; big session: ${(bigW.bytes / MiB).toFixed(1)} MiB; rounds: ${ROUNDS} (medians)`);
  const env = { XDG_CACHE_HOME: join(dir, 'cache') };
  const run = (args: string[]) => execFileSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, maxBuffer: 1 << 30 });
  const envs: Array<[string, Record<string, string | undefined>]> = [['', env]];
  if (process.env.NODE_EXTRA_CA_CERTS) envs.push([' (NODE_EXTRA_CA_CERTS unset)', { ...env, NODE_EXTRA_CA_CERTS: undefined }]);
  for (const [name, input] of [['corpus', corpus], ['100 MiB session', big]] as const) {
    const cold = run(['analyze', '--json', input]);
    const same = run(['analyze', '--json', input]).equals(cold);
    console.log(`\n${name}: ${(cold.length / 1e6).toFixed(1)} MB of --json; warm output = cold output: ${same ? 'yes' : 'NO'}`);
    for (const [label, e] of envs) {
      const rs: Record<'node' | 'bare' | 'warm', Run[]> = { node: [], bare: [], warm: [] };
      for (let i = 0; i < ROUNDS; i++) {
        const order = i % 2 ? (['warm', 'bare', 'node'] as const) : (['node', 'bare', 'warm'] as const);
        for (const k of order) rs[k].push(await proc(k === 'node' ? ['-e', '0'] : k === 'bare' ? [BARE, input] : [CLI, 'analyze', '--json', input], e));
      }
      const med = (k: keyof typeof rs): Run => ({ wallMs: median(rs[k].map((r) => r.wallMs)), cpuMs: median(rs[k].map((r) => r.cpuMs)), maxRssMiB: median(rs[k].map((r) => r.maxRssMiB)) });
      const [n, b, w] = [med('node'), med('bare'), med('warm')];
      console.log(`  ${label || 'environment as it is'}:`);
      console.log(row('node -e 0', n));
      console.log(row('bare parse', b));
      console.log(row('warm analyze --json', w, b));
      console.log(`  warm − node -e 0: ${f0(median(rs.warm.map((r, i) => r.cpuMs - rs.node[i].cpuMs)))} ms CPU (median of the rounds' differences); target: warm ≤ 0.1× bare`);
    }
  }
  if (values.keep) console.log(`kept: ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
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
  const mode = defaultMode(written.map((w) => w.bytes));
  const cold = await rounds(() => proc([CLI, 'analyze', '--json', corpus], env), fresh);
  console.log(row(`cold analyze --json (empty cache; ${mode})`, cold, bare));
  const cold2 = await rounds(() => proc([CLI, 'analyze', '--json', '--no-cache', corpus], { PREFIX_LENS_WORKERS: '2' }));
  console.log(row('  same, 2 workers, --no-cache', cold2, bare));
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
  const { watchMs, libMs } = await appendSeries(big, 0);
  const grown = await grownRuns(big, env, cache);
  console.log(`  grown file, new CLI run (continued from the saved state): ${f0(grown.continued.wallMs)} ms wall, ${f0(grown.continued.cpuMs)} ms CPU, ${f0(grown.continued.maxRssMiB)} MiB`);
  console.log(`  the same with the state removed (full read):             ${f0(grown.full.wallMs)} ms wall, ${f0(grown.full.cpuMs)} ms CPU, ${f0(grown.full.maxRssMiB)} MiB`);
  console.log(`  continued output = --no-cache output: ${grown.same ? 'yes' : 'NO'}`);

  console.log('\npeak RSS, analyze --json --no-cache over copies of the corpus (hard links):');
  const bytes = written.map((w) => w.bytes);
  const copiesOf = (k: number) => Array.from({ length: k }, () => bytes).flat();
  const modes: Array<{ label: string; env: Record<string, string> }> = [{ label: 'default', env: {} }, { label: '2 workers', env: { PREFIX_LENS_WORKERS: '2' } }];
  if ([1, 2, 8].some((k) => defaultMode(copiesOf(k)) !== 'one thread')) modes.push({ label: 'one thread', env: { PREFIX_LENS_WORKERS: '0' } });
  const rss: Record<string, Record<number, Run>> = {};
  for (const k of [1, 2, 8]) {
    const d = join(dir, `x${k}`);
    hardLinkCorpus(corpus, d, k);
    for (const m of modes) {
      (rss[m.label] ??= {})[k] = await proc([CLI, 'analyze', '--json', '--no-cache', d], m.env);
      const r = rss[m.label][k];
      const what = m.label === 'default' ? `default (${defaultMode(copiesOf(k))})` : m.label;
      console.log(`  ${String(k).padStart(2)}× (${((total * k) / MiB).toFixed(0)} MiB), ${what.padEnd(22)} peak RSS ${f0(r.maxRssMiB)} MiB, wall ${f0(r.wallMs)} ms, CPU ${f0(r.cpuMs)} ms`);
    }
  }
  const growth = modes.map((m) => `${f0(rss[m.label][8].maxRssMiB - rss[m.label][1].maxRssMiB)} MiB (${m.label})`).join(', ');
  console.log(`  8× − 1× = ${growth}; target ≤ largest session, ${(largest / MiB).toFixed(1)} MiB`);

  console.log('\ntargets: cold ≤ 1.5× bare; warm ≤ 0.1× bare; append → verdict < 30 ms; RSS(8×) ≤ RSS(1×) + largest session');
  console.log(
    `measured: cold (${mode}) ${f2(cold.wallMs / bare.wallMs)}× wall / ${f2(cold.cpuMs / bare.cpuMs)}× CPU; warm ${f2(warm.wallMs / bare.wallMs)}× wall / ${f2(warm.cpuMs / bare.cpuMs)}× CPU; ` +
      `append → verdict ${f0(median(watchMs))} ms (watch), ${f0(median(libMs))} ms (library); RSS 8× − 1× = ${growth}`,
  );
  if (values.keep) console.log(`kept: ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

void (values.only === 'grown' ? onlyGrown() : values.only === 'append' ? onlyAppend() : values.only === 'warm' ? onlyWarm() : main());
