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
/** Default cap on stdout, bytes (1 MiB). Output beyond it kills the child and gives `invalid`/`too-large`. */
export const DEFAULT_FLEET_MAX_BYTES = 1_048_576;
/** Cap on stderr, bytes: prose only, the first lines are enough. */
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
  /** Local timeout, ms; the child is killed (SIGKILL) when it expires. Default 1 000. */
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
      encoding: 'buffer',
      stdin: 'ignore',
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      maxBuffer: { stdout: maxBytes, stderr: MAX_STDERR_BYTES },
      env: options.env,
      extendEnv: true,
      windowsHide: true,
      // Own process group, so a timeout can kill what phux (or a wrapper script) started too:
      // a grandchild holding stdout open would otherwise keep us waiting past the bound.
      detached: process.platform !== 'win32',
    });
  } catch (err) {
    // execa validates options synchronously; a bad option is a programming error, but stay calm.
    return invalid('exit', `could not start phux: ${errorText(err)}`, elapsed());
  }
  let killedGroup = false;
  const groupKill = setTimeout(() => {
    killedGroup = true;
    try {
      if (child.pid && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* the group is already gone */
    }
  }, timeoutMs);
  const r = await child;
  clearTimeout(groupKill);
  const stdout = Buffer.from(r.stdout ?? new Uint8Array()).toString('utf8');
  const stderr = Buffer.from(r.stderr ?? new Uint8Array()).toString('utf8');

  if (r.code === 'ENOENT' || r.code === 'EACCES') {
    const what = r.code === 'ENOENT' ? 'was not found' : 'is not executable';
    return {
      state: 'not-installed',
      panes: [],
      message: displayText(`phux executable "${bin}" ${what}; install phux or set PHUX_BIN / --phux-bin`),
      elapsedMs: elapsed(),
    };
  }
  if (r.timedOut || killedGroup) {
    return {
      state: 'timeout',
      panes: [],
      message: `phux did not answer in ${formatTimeout(timeoutMs)}`,
      timeoutMs,
      elapsedMs: elapsed(),
    };
  }
  if (r.isMaxBuffer) {
    return invalid('too-large', `phux output exceeded ${maxBytes} bytes and was cut off`, elapsed());
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
    warnings: stderr
      .split('\n')
      .map((l) => displayText(l, 400))
      .filter((l) => l.length > 0),
    elapsedMs: elapsed(),
  };
}

function invalid(cause: FleetInvalidCause, message: string, elapsedMs: number, issues: string[] = []): FleetResult {
  return { state: 'invalid', panes: [], cause, message, issues, elapsedMs };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
