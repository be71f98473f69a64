/**
 * What `prefix-lens check` fails on. A break is an agent request whose prefix changed (verdict
 * `break`); it fails the gate when it re-billed at least `minTokens` tokens (estimated,
 * RequestReport.lostTokens), cost at least `minUsd` when that is set (RequestReport.costUSD; a
 * break whose cost is unknown is not let through by it), and has a cause outside `ignore`.
 * The default fails on any break that re-billed a token: a compaction or a branch that re-billed
 * nothing costs nothing, and a gate that fails on it is a gate a team learns to ignore;
 * `--min-tokens 0` fails on every break.
 */
import { CAUSE_KINDS, type CauseKind } from '../core/classify.js';
import type { RequestReport } from '../report/json.js';
import { plural } from '../plural.js';

/** The thresholds of `check` (see the module comment). */
export interface Gate {
  /** Tokens a break must re-bill to fail (≥ 0; default 1). */
  minTokens: number;
  /** USD a break must cost to fail, or null for no cost threshold. */
  minUsd: number | null;
  /** Causes that do not fail: a break fails unless every one of its causes is in here. */
  ignore: ReadonlySet<CauseKind>;
}

/** The gate with no options: a break fails when it re-billed at least one token. */
export const DEFAULT_GATE: Gate = { minTokens: 1, minUsd: null, ignore: new Set() };

/**
 * The gate of `--min-tokens N`, `--min-usd X` and `--ignore CAUSE` (repeatable, or comma-separated),
 * or the problem with them (one line, for a usage error).
 */
export function parseGate(v: { 'min-tokens'?: string; 'min-usd'?: string; ignore?: string[] }): Gate | string {
  const gate: Gate = { ...DEFAULT_GATE, ignore: new Set() };
  const tokens = v['min-tokens'];
  if (tokens !== undefined) {
    // Digits only: Number() also takes "0x3", "1e3" and " 3 ".
    if (!/^\d+$/.test(tokens) || !Number.isSafeInteger(Number(tokens))) return `--min-tokens takes a whole number of tokens (0 or more), got ${JSON.stringify(tokens)}`;
    gate.minTokens = Number(tokens);
  }
  const usd = v['min-usd'];
  if (usd !== undefined) {
    const x = usd.replace(/^\$/, '');
    if (!/^\d+(\.\d+)?$/.test(x) || !Number.isFinite(Number(x))) return `--min-usd takes an amount of US dollars such as 0.01, got ${JSON.stringify(usd)}`;
    gate.minUsd = Number(x);
  }
  const ignore = gate.ignore as Set<CauseKind>;
  for (const arg of v.ignore ?? []) {
    for (const name of arg.split(',').map((s) => s.trim()).filter(Boolean)) {
      if (!(CAUSE_KINDS as readonly string[]).includes(name)) return `--ignore: unknown cause ${JSON.stringify(name)} (causes: ${CAUSE_KINDS.join(', ')})`;
      ignore.add(name as CauseKind);
    }
  }
  return gate;
}

/**
 * Why a break passes the gate (`under --min-tokens 1`, `under --min-usd 0.01`,
 * `history-rewritten ignored`), or null when it fails it.
 */
export function passReason(r: Pick<RequestReport, 'causes' | 'lostTokens' | 'costUSD'>, gate: Gate): string | null {
  if (r.causes.length && r.causes.every((c) => gate.ignore.has(c.kind))) return `${[...new Set(r.causes.map((c) => c.kind))].join(', ')} ignored`;
  if (r.lostTokens < gate.minTokens) return `under --min-tokens ${gate.minTokens}`;
  if (gate.minUsd !== null && r.costUSD !== null && r.costUSD < gate.minUsd) return `under --min-usd ${gate.minUsd}`;
  return null;
}

/**
 * The gate in words, for check's last line: `re-billed ≥ 1 token`, `re-billed ≥ 500 tokens,
 * cost ≥ $0.01, history-rewritten ignored`; `every break` for `--min-tokens 0` alone.
 */
export function gateText(gate: Gate): string {
  const parts: string[] = [];
  if (gate.minTokens > 0) parts.push(`re-billed ≥ ${plural(gate.minTokens, 'token')}`);
  if (gate.minUsd !== null) parts.push(`cost ≥ $${gate.minUsd}`);
  if (gate.ignore.size) parts.push(`${[...gate.ignore].join(', ')} ignored`);
  return parts.join(', ') || 'every break';
}
