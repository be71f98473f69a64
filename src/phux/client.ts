/**
 * The fleet client: runs `phux [--socket S] agent list --json` once and turns whatever happens into
 * a calm `FleetResult` value. It never throws for anything phux (or its absence) does.
 *
 * External facts (reference/phux.md):
 * - §1.1/§1.5: the command, its JSON on stdout, and its failure modes — no server ⇒ exit 1 with
 *   prose on stderr from `report_no_server` (`crates/phux/src/commands/mod.rs`), `agent list` is not
 *   in the JSON-error contract; a partial federation view prints rows, warns on stderr, exits 0.
 * - §2.2/§4: the integrations run it with a 1 000 ms local timeout and kill the child; the CLI itself
 *   has no timeout and does not auto-start a server.
 * - §4: `--socket P` is a global flag accepted either side of the verb; `PHUX_SOCKET` is honoured.
 *   `PHUX_BIN` names the executable (used by the OMP integration; we honour it the same way).
 */
import { parseAgentList, type PhuxAgentList, type PhuxAgentRow } from './agentList.js';
import { displayText } from './sanitize.js';

/** Default local timeout for one `agent list` call, ms (phux `DEFAULT_CONTEXT_TIMEOUT_MS`, reference/phux.md §2.2). */
export const DEFAULT_FLEET_TIMEOUT_MS = 1_000;
/** Default cap on stdout, bytes (1 MiB). Output beyond it kills the child's group and gives `invalid`/`too-large`. */
export const DEFAULT_FLEET_MAX_BYTES = 1_048_576;
/** Cap on stderr, bytes: prose only, the first lines are enough; the rest is drained and dropped (never `too-large`). */
const MAX_STDERR_BYTES = 64 * 1024;

/** The calm states a fleet query ends in. */
export type FleetState = 'ok' | 'not-installed' | 'not-running' | 'timeout' | 'invalid';

/** Why an answer was `invalid`: not JSON, JSON of another shape, stdout over the cap, or an exit code other than 0/1 (or a signal). */
export type FleetInvalidCause = 'json' | 'schema' | 'too-large' | 'exit';

/**
 * The outcome of one fleet query. Every variant carries `panes` (empty unless `ok`) and
 * `elapsedMs` (wall time of the query, ms, rounded). `message` is single-line, control-free text
 * fit for display (phux stderr is untrusted).
 */
export type FleetResult =
  | {
      state: 'ok';
      /** Rows as phux sorted them (byte order of `terminal`), unknown keys kept. */
      panes: PhuxAgentRow[];
      /** The whole validated document (unknown top-level keys kept). */
      document: PhuxAgentList;
      /** stderr lines of a successful call (e.g. the federation "satellite unreachable" warning, reference/phux.md §1.5). */
      warnings: string[];
      elapsedMs: number;
    }
  | { state: 'not-installed'; panes: []; message: string; elapsedMs: number }
  | { state: 'not-running'; panes: []; message: string; exitCode: 1; elapsedMs: number }
  | { state: 'timeout'; panes: []; message: string; timeoutMs: number; elapsedMs: number }
  | { state: 'invalid'; panes: []; cause: FleetInvalidCause; message: string; issues: string[]; elapsedMs: number };

/** Options of `fetchFleet`. All optional. */
export interface FleetClientOptions {
  /** Executable path or name. Default: `env.PHUX_BIN`, else `phux` looked up on PATH. */
  bin?: string;
  /** Server socket passed as `--socket S`. Default: `env.PHUX_SOCKET` when set (else phux picks its own default). */
  socket?: string;
  /**
   * Local timeout, ms. Default 1 000. It holds whatever the process tree does: when it expires the
   * child's process group is killed (SIGKILL) and our ends of the pipes are closed.
   */
  timeoutMs?: number;
  /** stdout cap, bytes; beyond it the child is killed and the result is `invalid` (`too-large`). Default 1 MiB. */
  maxBytes?: number;
  /** Environment for option defaults and for the child (merged over `process.env`). Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Monotonic clock, ms, for `elapsedMs`. Default `performance.now`. */
  now?: () => number;
}

/** `1000` → `"1 s"`, `1500` → `"1.5 s"`, `250` → `"250 ms"`. */
export function formatTimeout(ms: number): string {
  return ms >= 1000 ? `${Number((ms / 1000).toFixed(2))} s` : `${ms} ms`;
}

/** The argv `fetchFleet` passes to phux: `[--socket S] agent list --json`. */
export function agentListArgs(socket?: string): string[] {
  return [...(socket ? ['--socket', socket] : []), 'agent', 'list', '--json'];
}

/**
 * Runs `phux agent list --json` once (execa, stdin ignored, stdout capped, killed on timeout) and
 * classifies the outcome:
 * - exit 0 + valid JSON → `ok`; exit 0 + bad JSON/shape → `invalid` (`json`/`schema`);
 * - exit 1 → `not-running` (phux prints prose to stderr: "phux: no server running at <socket> …";
 *   the other exit-1 arms, "server closed the connection …", land here too, message kept);
 * - spawn ENOENT/EACCES → `not-installed`;
 * - timeout → `timeout` ("phux did not answer in 1 s");
 * - phux exited but a descendant keeps stdout open → after 100 ms what phux wrote is the answer;
 * - stdout over `maxBytes` → `invalid` (`too-large`); any other exit code or signal → `invalid` (`exit`).
 * Never throws.
 */
export async function fetchFleet(options: FleetClientOptions = {}): Promise<FleetResult> {
  const env = options.env ?? process.env;
  const bin = options.bin ?? (env.PHUX_BIN || 'phux');
  const socket = options.socket ?? (env.PHUX_SOCKET || undefined);
  const timeoutMs = options.timeoutMs ?? DEFAULT_FLEET_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_FLEET_MAX_BYTES;
  const now = options.now ?? (() => performance.now());
  const started = now();
  const elapsed = (): number => Math.round(now() - started);

  // execa is ESM-only; a dynamic import keeps this module loadable from the CommonJS bundle and tsx.
  const { execa } = await import('execa');
  let child;
  try {
    child = execa(bin, agentListArgs(socket), {
      reject: false,
      // The streams are read here, each with its own cap, so a flood on stderr is not "stdout too large".
      buffer: false,
      stdin: 'ignore',
      killSignal: 'SIGKILL',
      env: options.env,
      extendEnv: true,
      windowsHide: true,
      // Own process group, so the deadline can kill what phux (or a wrapper script) started too.
      detached: process.platform !== 'win32',
    });
  } catch (err) {
    // execa validates options synchronously; a bad option is a programming error, but stay calm.
    return invalid('exit', `could not start phux: ${errorText(err)}`, elapsed());
  }
  const out = capture(child.stdout, maxBytes);
  const err = capture(child.stderr, MAX_STDERR_BYTES);
  const killGroup = (): void => {
    try {
      if (child.pid && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
      else child.kill('SIGKILL');
    } catch {
      /* the group is already gone */
    }
  };
  // The bound holds whatever the process tree does: at the deadline the group is killed and the
  // pipes are closed on our side, even if a grandchild in another session still holds them.
  let timedOut = false;
  let deadline: NodeJS.Timeout | undefined;
  const expired = new Promise<void>((resolve) => {
    deadline = setTimeout(() => {
      timedOut = true;
      resolve();
    }, timeoutMs);
  });
  // Once phux itself has exited, a descendant that keeps its stdout open gets a short grace, then
  // what was written is taken as the answer.
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const drained = Promise.all([out.done, err.done]).then(() => undefined);
  const tooLarge = out.overflow.then(() => undefined);
  await Promise.race([
    expired,
    tooLarge,
    Promise.race([drained, exited.then(() => Promise.race([drained, sleep(EXIT_GRACE_MS)]))]),
  ]);
  clearTimeout(deadline);
  const overflowed = out.overflowed();
  if (timedOut || overflowed || !out.ended() || !err.ended()) killGroup();
  out.stop();
  err.stop();
  const r = await child;
  const stdout = out.text();
  const stderr = err.text();

  if (r.code === 'ENOENT' || r.code === 'EACCES') {
    const what = r.code === 'ENOENT' ? 'was not found' : 'is not executable';
    return {
      state: 'not-installed',
      panes: [],
      message: displayText(`phux executable "${bin}" ${what}; install phux or set PHUX_BIN / --phux-bin`),
      elapsedMs: elapsed(),
    };
  }
  if (timedOut) {
    return {
      state: 'timeout',
      panes: [],
      message: `phux did not answer in ${formatTimeout(timeoutMs)}`,
      timeoutMs,
      elapsedMs: elapsed(),
    };
  }
  if (overflowed) {
    return invalid('too-large', `phux output exceeded ${maxBytes} bytes on stdout and was cut off`, elapsed());
  }
  if (r.exitCode === 1) {
    return {
      state: 'not-running',
      panes: [],
      message: displayText(stderr || 'phux agent list exited with code 1', 400),
      exitCode: 1,
      elapsedMs: elapsed(),
    };
  }
  if (r.exitCode !== 0) {
    const how = r.signal ? `was killed by ${r.signal}` : r.exitCode === undefined ? `failed: ${r.shortMessage ?? 'unknown error'}` : `exited with code ${r.exitCode}`;
    return invalid('exit', displayText(`phux agent list ${how}${stderr ? `: ${stderr}` : ''}`, 400), elapsed());
  }
  const parsed = parseAgentList(stdout);
  if (!parsed.ok) return invalid(parsed.cause, displayText(parsed.message, 400), elapsed(), parsed.issues);
  return {
    state: 'ok',
    panes: parsed.list.agents,
    document: parsed.list,
    warnings: [
      ...stderr
        .split('\n')
        .map((l) => displayText(l, 400))
        .filter((l) => l.length > 0),
      ...(err.overflowed() ? [`(stderr cut at ${MAX_STDERR_BYTES / 1024} KiB)`] : []),
    ],
    elapsedMs: elapsed(),
  };
}

/** How long stdout may stay open after phux exited (a descendant holding it), ms. */
const EXIT_GRACE_MS = 100;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Collects a child's stream up to `cap` bytes. Beyond the cap the bytes are dropped (stderr keeps
 * draining, so the child never blocks on a full pipe) and `overflow` resolves; `stop` closes our end.
 */
function capture(stream: NodeJS.ReadableStream & { destroy(): void }, cap: number) {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let over = false;
  let end = false;
  let onOverflow: () => void = () => {};
  const overflow = new Promise<void>((resolve) => (onOverflow = resolve));
  const done = new Promise<void>((resolve) => {
    stream.on('data', (c: Buffer) => {
      if (bytes + c.length > cap) {
        if (bytes < cap) chunks.push(c.subarray(0, cap - bytes));
        bytes = cap;
        if (!over) {
          over = true;
          onOverflow();
        }
        return;
      }
      chunks.push(c);
      bytes += c.length;
    });
    stream.on('end', () => {
      end = true;
      resolve();
    });
    stream.on('close', () => resolve());
    stream.on('error', () => resolve());
  });
  return {
    done,
    overflow,
    overflowed: () => over,
    ended: () => end,
    stop: () => stream.destroy(),
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
}

function invalid(cause: FleetInvalidCause, message: string, elapsedMs: number, issues: string[] = []): FleetResult {
  return { state: 'invalid', panes: [], cause, message, issues, elapsedMs };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
