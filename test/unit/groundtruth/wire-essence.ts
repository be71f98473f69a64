/**
 * Helpers of the capture-join ground truth: the CLI's `--json` report of some arguments, and the
 * part of a request report that wire evidence must reproduce exactly.
 */
import assert from 'node:assert/strict';
import { main } from '../../../src/cli/main.js';
import type { Report, RequestReport } from '../../../src/report/json.js';

/** `analyze --json --no-cache ARGS`, parsed; fails the test on a non-zero exit. */
export async function analyzeJson(args: string[]): Promise<Report> {
  const out: string[] = [];
  const err: string[] = [];
  assert.equal(await main(['analyze', '--json', '--no-cache', ...args], (s) => out.push(s), (s) => err.push(s)), 0, err.join('\n'));
  return JSON.parse(out.join('\n')) as Report;
}

/** Index, kind, model, evidence, verdict, hashes, usage, break point and cause kinds of a request. */
export const essence = (r: RequestReport) => [r.index, r.kind, r.model, r.evidence, r.verdict, r.prefixHash, r.segments, r.usage, r.break && [r.break.segment, r.break.path, r.break.byteOffset], r.causes.map((c) => c.kind)];
