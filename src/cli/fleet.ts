/**
 * `prefix-lens fleet [--json] [--phux-bin PATH] [--socket S] [--timeout-ms N]` — the live phux
 * fleet, once (one `phux agent list --json`, see src/phux/client.ts).
 *
 * Output: a table (TERMINAL, SESSION/WINDOW, AGENT = label (kind), STATE, ATTENTION, TITLE) with
 * every untrusted string made single-line and control-free, or one calm line for the other states;
 * with `--json`: `{"state", "panes", "elapsedMs", "message"?, "warnings"?, "cause"?, "issues"?}`.
 *
 * Exit code: 0 for every calm state (`ok`, `not-installed`, `not-running`, `timeout`, `invalid`):
 * phux being absent, stopped or wrong is information, not a failure of this command (DESIGN.md:
 * "absent binary or server = a calm 'phux not running' state"). 2 for a usage error.
 */
import { parseArgs } from 'node:util';
import { fetchFleet, type FleetClientOptions, type FleetResult } from '../phux/client.js';
import { displayText, jsonText, safe } from '../sanitize.js';
import { argsErrorText } from './text.js';

/** The options `fleet` accepts (each is in its usage and the README; test/unit/cli/usage-flags.test.ts). */
export const FLEET_OPTIONS = {
  json: { type: 'boolean' },
  'phux-bin': { type: 'string' },
  socket: { type: 'string' },
  'timeout-ms': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const FLEET_USAGE = 'usage: prefix-lens fleet [--json] [--phux-bin PATH] [--socket S] [--timeout-ms N]';

/** Test seams of `fleetCommand`: the environment used for PHUX_BIN/PHUX_SOCKET defaults and the child. */
export interface FleetCommandDeps {
  env?: NodeJS.ProcessEnv;
  /** Where usage errors go (default: `out`); the CLI passes stderr so `--json` stdout stays JSON. */
  err?: (s: string) => void;
}

/**
 * Runs the fleet command. `argv` are the arguments after `fleet` (a leading `fleet` is ignored).
 * Writes with `out` (one call per line, no trailing newline) and resolves to the exit code.
 */
export async function fleetCommand(argv: string[], out: (s: string) => void, deps: FleetCommandDeps = {}): Promise<number> {
  const args = argv[0] === 'fleet' ? argv.slice(1) : argv;
  const err = deps.err ?? out;
  let values: { json?: boolean; 'phux-bin'?: string; socket?: string; 'timeout-ms'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: FLEET_OPTIONS,
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    err(`prefix-lens fleet: ${argsErrorText(e)}`);
    err(FLEET_USAGE);
    return 2;
  }
  if (values.help) {
    out(FLEET_USAGE);
    return 0;
  }
  const options: FleetClientOptions = { env: deps.env };
  if (values['phux-bin'] !== undefined) options.bin = values['phux-bin'];
  if (values.socket !== undefined) options.socket = values.socket;
  if (values['timeout-ms'] !== undefined) {
    const n = Number(values['timeout-ms']);
    if (!Number.isInteger(n) || n < 1 || n > 60_000) {
      err(`prefix-lens fleet: --timeout-ms must be an integer from 1 to 60000, got ${safe(JSON.stringify(values['timeout-ms']))}`);
      return 2;
    }
    options.timeoutMs = n;
  }
  const result = await fetchFleet(options);
  if (values.json) out(jsonText(JSON.stringify(fleetJson(result))));
  else for (const line of fleetLines(result)) out(line);
  return 0;
}

/** The `--json` document: `{state, panes, elapsedMs}` plus `message`/`cause`/`issues`/`warnings` when present. */
export function fleetJson(result: FleetResult): Record<string, unknown> {
  const doc: Record<string, unknown> = { state: result.state, panes: result.panes, elapsedMs: result.elapsedMs };
  if (result.state === 'ok') {
    if (result.warnings.length > 0) doc.warnings = result.warnings;
  } else {
    doc.message = result.message;
    if (result.state === 'invalid') {
      doc.cause = result.cause;
      if (result.issues.length > 0) doc.issues = result.issues;
    }
  }
  return doc;
}

/** Human lines: the table for `ok` (or "phux: no panes"), one calm line otherwise. */
export function fleetLines(result: FleetResult): string[] {
  switch (result.state) {
    case 'not-installed':
      return [`phux not installed: ${result.message}`];
    case 'not-running':
      return [`phux not running: ${result.message}`];
    case 'timeout':
      return [result.message];
    case 'invalid':
      return [`phux answered with invalid output (${result.cause}): ${result.message}`];
    case 'ok': {
      const warnings = result.warnings.map((w) => `warning: ${w}`);
      if (result.panes.length === 0) return ['phux: no panes', ...warnings];
      const rows = result.panes.map((p) => [
        displayText(p.terminal, 40),
        `${displayText(p.session, 40)}/${displayText(p.window, 30)}`,
        `${displayText(p.agent.label, 30)} (${displayText(p.agent.kind, 20)})`,
        displayText(p.state, 12),
        displayText(p.attention, 10),
        displayText(p.title, 60),
      ]);
      return [...table(['TERMINAL', 'SESSION/WINDOW', 'AGENT', 'STATE', 'ATTENTION', 'TITLE'], rows), ...warnings];
    }
  }
}

/** Left-aligned columns separated by two spaces; the last column is not padded. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r: string[]): string =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [fmt(header), ...rows.map(fmt)];
}
