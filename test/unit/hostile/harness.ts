/**
 * The hostile-input corpus harness: runs the CLI on generated bad inputs and checks the promises
 * of the README for every run — no crash (exit codes as documented, nothing thrown), no hang
 * (a watchdog), `--json` valid JSON of the documented shape with finite numbers, no character a
 * terminal interprets in anything printed, every diagnostic with a file and a line, and nothing
 * written to the input files.
 *
 * In-process runs (`runCli`) are fast; subprocess runs (`runCliProcess`, the built dist/cli.js
 * that `npm test` makes first) are for inputs where a hang or a crash must be observable (a FIFO
 * open blocks a thread, a heap limit kills a process) — with a timeout and a heap cap.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { main } from '../../../src/cli/main.js';

/** Characters no printed line may hold (LF separates lines): C0, DEL, C1, U+2028/9, bidi marks. */
export const TERMINAL_UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/;

/** One CLI run. */
export interface CliRun {
  code: number;
  out: string;
  err: string;
  ms: number;
}

/** How long one in-process run may take before it counts as a hang, ms. */
const IN_PROCESS_WATCHDOG_MS = 15_000;

/**
 * Runs `prefix-lens <args>` in this process (the result cache off unless the args say otherwise).
 * @throws AssertionError when main throws (a crash) or does not settle within the watchdog (a hang)
 */
export async function runCli(args: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const watchdog = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: prefix-lens ${args.join(' ')} did not finish in ${IN_PROCESS_WATCHDOG_MS} ms`)), IN_PROCESS_WATCHDOG_MS);
  });
  let code: number;
  try {
    code = await Promise.race([main(args, (s) => out.push(s), (s) => err.push(s), process.cwd()), watchdog]);
  } catch (e) {
    throw new assert.AssertionError({ message: `crash or hang: prefix-lens ${args.join(' ')}: ${(e as Error).stack ?? String(e)}` });
  } finally {
    clearTimeout(timer);
  }
  return { code, out: out.join('\n'), err: err.join('\n'), ms: performance.now() - started };
}

/**
 * Runs the built CLI as a child process with a heap cap, killed (and failed) after `timeoutMs`.
 * @returns the run; `code` is the exit code (a signal or an uncaught exception shows as ≠ 0/1/2)
 */
export function runCliProcess(args: string[], opts: { timeoutMs?: number; heapMb?: number; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun & { signal: string | null; timedOut: boolean; peakKb: number | null }> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [`--max-old-space-size=${opts.heapMb ?? 512}`, 'dist/cli.js', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...opts.env },
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    let timedOut = false;
    let peakKb: number | null = null;
    // Peak resident memory of the child (Linux), sampled: a runaway allocation shows before the heap cap kills it.
    const sampler = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) peakKb = Math.max(peakKb ?? 0, Number(m[1]));
      } catch {
        /* exited */
      }
    }, 50);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearInterval(sampler);
      resolve({
        code: code ?? -1,
        signal,
        timedOut,
        peakKb,
        out: Buffer.concat(out).toString('utf8'),
        err: Buffer.concat(err).toString('utf8'),
        ms: performance.now() - started,
      });
    });
  });
}

const finite = z.number().refine(Number.isFinite, 'a finite number');
const count = z.number().int().nonnegative();
const UsageShape = z.object({ uncached: count.nullable(), cacheRead: count.nullable(), cacheWrite: count.nullable(), output: count.nullable() });
const DiagnosticShape = z.object({ file: z.string().min(1), line: z.number().int().nonnegative(), message: z.string().min(1), severity: z.enum(['error', 'warning', 'info']) });
const RequestShape = z.looseObject({
  index: z.number().int().positive(),
  number: z.string().regex(/^(?:[1-9]\d*|\d+\.[1-9]\d*)$/),
  line: z.number().int().nonnegative(),
  file: z.string(),
  responseId: z.string().nullable(),
  provider: z.string(),
  model: z.string(),
  api: z.string(),
  time: z.iso.datetime().nullable(),
  kind: z.enum(['agent', 'summary', 'title']),
  evidence: z.enum(['wire', 'reconstructed']),
  usage: UsageShape.nullable(),
  prefixHash: z.string().regex(/^[0-9a-f]{12}$/).nullable(),
  verdict: z.enum(['cold', 'hit', 'break', 'ttl-expired', 'below-minimum', 'model-switch', 'unexplained-miss', 'unknown']),
  causes: z.array(z.looseObject({ kind: z.string(), detail: z.string(), certainty: z.enum(['certain', 'likely']) })),
  break: z.looseObject({ segment: z.string(), blockIndex: count, path: z.string(), byteOffset: count, before: z.string(), after: z.string() }).nullable(),
  costUSD: finite.nullable(),
  matched: z.number().int().positive().nullable(),
  matchedNumber: z.string().nullable(),
  lostTokens: finite,
  sameAsPrevious: z.boolean(),
  error: z.string().nullable(),
  notes: z.array(z.string()),
});
const SessionShape = z.looseObject({
  host: z.enum(['pi', 'opencode', 'capture']),
  id: z.string(),
  path: z.string(),
  title: z.string().nullable(),
  parentId: z.string().nullable(),
  diagnostics: z.array(DiagnosticShape),
  ignored: z.record(z.string(), count),
  totals: z.looseObject({ requests: count, breaks: count, cacheRead: finite, cacheWrite: finite, uncached: finite, output: finite, lostTokens: finite, costUSD: finite, hitRate: finite.nullable() }),
  tokenModel: z.looseObject({ base: z.record(z.string(), finite), perByte: finite, calibrated: z.boolean() }),
  requests: z.array(RequestShape),
});
/** `--json` version 1, as docs/json.md documents it (the fields a consumer relies on; more may follow). */
export const ReportShape = z.object({ version: z.literal(1), sessions: z.array(SessionShape) });
export type ShapedReport = z.infer<typeof ReportShape>;

/** `fleet --json`, as docs/json.md documents it. */
export const FleetShape = z.looseObject({
  state: z.enum(['ok', 'not-installed', 'not-running', 'timeout', 'invalid']),
  panes: z.array(z.unknown()),
  elapsedMs: count,
});

/** Text output: exit code as documented, nothing a terminal interprets, no stack trace. */
export function checkText(run: CliRun, codes: number[], what: string): void {
  assert.ok(codes.includes(run.code), `${what}: exit code ${run.code} (expected ${codes.join('/')}); stderr: ${run.err.slice(0, 500)}`);
  for (const [name, text] of [['stdout', run.out], ['stderr', run.err]] as const) {
    const m = TERMINAL_UNSAFE.exec(text);
    assert.equal(m, null, `${what}: ${name} holds U+${m?.[0].charCodeAt(0).toString(16).padStart(4, '0')} at ${m?.index}: ${JSON.stringify(text.slice(Math.max(0, (m?.index ?? 0) - 40), (m?.index ?? 0) + 40))}`);
  }
  assert.doesNotMatch(run.err, /\n\s+at .+:\d+:\d+\)?\n/, `${what}: a stack trace on stderr`);
}

/** `analyze --json`: valid JSON of the documented shape (finite numbers where numbers are documented). */
export function checkJson(run: CliRun, what: string): ShapedReport {
  checkText(run, [0, 2], what);
  let doc: unknown;
  try {
    doc = JSON.parse(run.out);
  } catch (e) {
    assert.fail(`${what}: --json output is not JSON (${(e as Error).message}): ${run.out.slice(0, 300)}`);
  }
  const parsed = ReportShape.safeParse(doc);
  assert.ok(parsed.success, `${what}: --json does not have the documented shape: ${parsed.success ? '' : JSON.stringify(parsed.error.issues.slice(0, 3))}`);
  // The document as parsed, not zod's copy: a record copy would turn an own `__proto__` key into a prototype.
  return doc as ShapedReport;
}

/** Content hashes of every file below `dir` (symlinks and special files by their link or type only). */
export function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) out.set(p, `${st.size}:${st.mtimeMs}:${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
      else out.set(p, `special:${st.mode}`);
    }
  };
  walk(dir);
  return out;
}

/** Nothing below `dir` was created, changed or removed since `before`. */
export function checkUnwritten(before: Map<string, string>, dir: string, what: string): void {
  assert.deepEqual(snapshot(dir), before, `${what}: the input files were written`);
}
