/**
 * Memory benchmark (not a test; issue 9 "bounded memory"): the peak-RSS part of `npm run bench`
 * alone, in a few minutes instead of 15+. Generates (scripts/bench/corpus.ts, same seeds as the
 * full bench) one Pi session of `--big-mib` MiB and the `--corpus-mib` MiB corpus, then prints the
 * peak RSS (whole process, every thread; scripts/bench/probe.cjs) and CPU of
 * `node dist/cli.js analyze --json --no-cache` on the session and on 1×, 2× and 8× the corpus
 * (hard links), each `--rounds` times (median): with the CLI's default worker count on this machine
 * (src/cli/workers.ts workersFor: none below 4 cores; the label says which), with 2 workers forced
 * (`PREFIX_LENS_WORKERS=2`, the worker path) and, when the default starts workers, in one thread
 * (`PREFIX_LENS_WORKERS=0`). Targets: session RSS < ~4× its size; RSS(8×) ≤ RSS(1×) + the largest
 * session, for each of them.
 *
 * Usage: npm run bench:memory [-- --big-mib 100 --corpus-mib 72 --rounds 1 --copies 1,2,8 --keep]
 * Run `node scripts/build.mjs` first (it measures dist/).
 */
import { spawn } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { workersFor } from '../src/cli/workers.js';
import { writeCorpus, writeSession } from './bench/corpus.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '1' },
    'corpus-mib': { type: 'string', default: '72' },
    'big-mib': { type: 'string', default: '100' },
    sessions: { type: 'string', default: '40' },
    copies: { type: 'string', default: '1,2,8' },
    keep: { type: 'boolean' },
  },
});
const MiB = 1024 * 1024;
const ROOT = resolve(__dirname, '..');
const CLI = join(ROOT, 'dist/cli.js');
const PROBE = join(ROOT, 'scripts/bench/probe.cjs');

interface Run {
  cpuMs: number;
  maxRssMiB: number;
}

/** `node --require probe dist/cli.js analyze --json --no-cache <path>`, stdout discarded. */
function run(path: string, env: Record<string, string> = {}): Promise<Run> {
  const probe = join(tmpdir(), `prefix-lens-probe-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['--require', PROBE, CLI, 'analyze', '--json', '--no-cache', path], {
      env: { ...process.env, ...env, PREFIX_LENS_BENCH_PROBE: probe },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      if (code !== 0) return fail(new Error(`analyze ${path} exited ${code}: ${err.slice(0, 400)}`));
      const p = JSON.parse(readFileSync(probe, 'utf8')) as { cpuMs: number; maxRssKiB: number };
      rmSync(probe, { force: true });
      ok({ cpuMs: p.cpuMs, maxRssMiB: p.maxRssKiB / 1024 });
    });
  });
}

async function median(path: string, env?: Record<string, string>): Promise<Run> {
  const rs: Run[] = [];
  for (let i = 0; i < Math.max(1, Number(values.rounds)); i++) rs.push(await run(path, env));
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  return { cpuMs: mid(rs.map((r) => r.cpuMs)), maxRssMiB: mid(rs.map((r) => r.maxRssMiB)) };
}

function hardLinks(src: string, dst: string, copies: number): void {
  for (let c = 0; c < copies; c++) {
    for (const sub of readdirSync(join(src, 'sessions'))) {
      const d = join(dst, `copy${c}`, 'sessions', sub);
      mkdirSync(d, { recursive: true });
      for (const f of readdirSync(join(src, 'sessions', sub))) linkSync(join(src, 'sessions', sub, f), join(d, f));
    }
  }
}

const line = (name: string, r: Run, extra = '') => console.log(`  ${name.padEnd(44)} peak RSS ${r.maxRssMiB.toFixed(0).padStart(5)} MiB  CPU ${r.cpuMs.toFixed(0).padStart(7)} ms${extra}`);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-bench-memory-'));
  try {
    const big = join(dir, 'big', 'big-session.jsonl');
    mkdirSync(join(dir, 'big'));
    const bigW = await writeSession(big, { bytes: Number(values['big-mib']) * MiB, seed: 99, id: '019a0bbb-0000-7000-8000-000000000100', cwd: '/home/dev/big', startMs: Date.UTC(2026, 10, 20) });
    const written = await writeCorpus(join(dir, 'corpus'), { sessions: Number(values.sessions), total: Number(values['corpus-mib']) * MiB, seed: 7 });
    const total = written.reduce((a, w) => a + w.bytes, 0);
    const largest = Math.max(...written.map((w) => w.bytes));
    console.log(`session: ${(bigW.bytes / MiB).toFixed(1)} MiB, ${bigW.requests} requests; corpus: ${written.length} sessions, ${(total / MiB).toFixed(1)} MiB, largest ${(largest / MiB).toFixed(1)} MiB`);
    const s = await median(big);
    line('session', s, `  = ${(s.maxRssMiB / (bigW.bytes / MiB)).toFixed(2)}× its size (target < ~4×)`);
    const copies = values.copies.split(',').map(Number);
    const bytes = written.map((w) => w.bytes);
    const copiesOf = (k: number) => Array.from({ length: k }, () => bytes).flat();
    const defaultMode = (k: number) => {
      const n = workersFor(availableParallelism(), k * bytes.length, copiesOf(k));
      return n ? `${n} workers` : 'one thread';
    };
    const modes: Array<{ label: string; env: Record<string, string> }> = [{ label: 'default', env: {} }, { label: '2 workers', env: { PREFIX_LENS_WORKERS: '2' } }];
    if (copies.some((k) => defaultMode(k) !== 'one thread')) modes.push({ label: 'one thread', env: { PREFIX_LENS_WORKERS: '0' } });
    const rss: Record<string, Record<number, Run>> = {};
    for (const k of copies) {
      hardLinks(join(dir, 'corpus'), join(dir, `x${k}`), k);
      for (const m of modes) {
        (rss[m.label] ??= {})[k] = await median(join(dir, `x${k}`), m.env);
        line(`corpus ${k}× (${((total * k) / MiB).toFixed(0)} MiB), ${m.label === 'default' ? `default (${defaultMode(k)})` : m.label}`, rss[m.label][k]);
      }
    }
    const lo = Math.min(...copies);
    const hi = Math.max(...copies);
    const growth = modes.map((m) => `${(rss[m.label][hi].maxRssMiB - rss[m.label][lo].maxRssMiB).toFixed(0)} MiB (${m.label})`).join(', ');
    console.log(`  ${hi}× − ${lo}×: ${growth}; target ≤ largest session, ${(largest / MiB).toFixed(1)} MiB`);
  } finally {
    if (values.keep) console.log(`kept: ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

void main();
