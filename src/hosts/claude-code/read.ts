/**
 * Reads one Claude Code transcript file (main session or sub-agent) into validated records,
 * tolerating bad input: a malformed or truncated line, or a line of a known type that does not fit
 * its schema, gives a Diagnostic with file and line, and the rest is read. Line types this reader
 * does not use are counted in `ignored` (reference/claude-code-codex.md §1.2: skip unknown types).
 *
 * A line is one entry of the transcript, named by its `uuid` (an `api-request` line by its `id`;
 * blobs and shapes are named by their content's hash, so a repeat of one changes nothing): a second line with the same name is a warning at its line and is
 * skipped, the first kept (saying whether it repeats the first byte for byte or differs), so a
 * transcript appended to itself is not read as twice the requests. A line whose `parentUuid`, or an
 * assistant line whose `requestRef`, names an entry on a later line is reported as out of file
 * order (the tree is still followed).
 */
import { hash } from 'node:crypto';
import type { z } from 'zod';
import { parseJsonLine, readLines } from '../lines.js';
import { describeIssues } from '../issues.js';
import { checkHostValues, hostValuesWarning, LineProblems } from '../numbers.js';
import type { Diagnostic } from '../../core/model.js';
import { bump, ownGet } from '../../core/own.js';
import {
  CC_VALUES,
  LINE_SCHEMAS,
  type ApiRequestLine,
  type AssistantLine,
  type BlobLine,
  type CcLineType,
  type ShapeLine,
  type SystemLine,
  type UserLine,
} from './schema.js';

/** One validated line, tagged by type, with its 1-based line number. */
export type CcRec =
  | { line: number; type: 'assistant'; v: AssistantLine }
  | { line: number; type: 'user'; v: UserLine }
  | { line: number; type: 'system'; v: SystemLine }
  | { line: number; type: 'api-request-shape'; v: ShapeLine }
  | { line: number; type: 'api-request-blob'; v: BlobLine }
  | { line: number; type: 'api-request'; v: ApiRequestLine }
  | { line: number; type: 'progress'; v: { data?: { type?: string; agentId?: string; message?: unknown } } }
  /** Any other line with a `uuid`: kept as a tree node (attachments, other node types). */
  | { line: number; type: 'node'; v: { uuid: string; parentUuid?: string | null; type: string } };

/** A read transcript file. */
export interface CcRead {
  file: string;
  recs: CcRec[];
  diagnostics: Diagnostic[];
  ignored: Record<string, number>;
  /** From the first line that has them. */
  sessionId?: string;
  cwd?: string;
  version?: string;
  entrypoint?: string;
  /** `agentId` of a sub-agent file's lines. */
  agentId?: string;
  /** Title: the last `custom-title` / `summary` line. */
  title?: string;
}

/**
 * Reads a transcript file.
 * @returns the records; an unreadable file gives one error diagnostic and no records (never throws)
 */
export async function readCcFile(file: string): Promise<CcRead> {
  const out: CcRead = { file, recs: [], diagnostics: [], ignored: {} };
  const seen: Seen = new Map();
  // Bad lines past MAX_DIAGNOSTICS are only counted (numbers.ts LineProblems).
  const problems = new LineProblems(out.diagnostics, file);
  try {
    for await (const l of readLines(file)) {
      if (l.oversized === undefined && l.text.trim() === '') continue;
      const r = parseJsonLine(file, l);
      if (!r.ok) {
        problems.push(r.diagnostic);
        continue;
      }
      if (r.warnings) for (const w of r.warnings) problems.push(w);
      const o = r.value;
      if (!o || typeof o !== 'object' || Array.isArray(o)) {
        problems.add(l.line, 'warning', 'line is not a JSON object; skipped');
        continue;
      }
      if (repeated(out, seen, l.line, l.text, o as Record<string, unknown>)) continue;
      take(out, l.line, o as Record<string, unknown>, problems);
    }
  } catch (e) {
    out.diagnostics.push({ file, line: 1, severity: 'error', message: `cannot read transcript: ${e instanceof Error ? e.message : String(e)}` });
  }
  problems.close();
  outOfOrder(out, seen);
  return out;
}

/** First line of each named entry (see readCcFile): its line and the SHA-1 of its text. */
type Seen = Map<string, { line: number; digest: string }>;

/** The name of a line's entry (`uuid`, an `api-request` line's `id`), or undefined for lines without one. */
function entryName(o: Record<string, unknown>): string | undefined {
  if (typeof o.uuid === 'string') return `uuid ${o.uuid}`;
  if (o.type === 'api-request' && typeof o.id === 'string') return `api-request id ${o.id}`;
  return undefined;
}

/** True (with a warning) when the line names an entry an earlier line already gave: it is skipped. */
function repeated(out: CcRead, seen: Seen, line: number, text: string, o: Record<string, unknown>): boolean {
  const name = entryName(o);
  if (name === undefined) return false;
  const digest = hash('sha1', text, 'base64');
  const first = seen.get(name);
  if (!first) {
    seen.set(name, { line, digest });
    return false;
  }
  const how = first.digest === digest ? 'repeats line' : 'has the name of line';
  const kept = first.digest === digest ? '' : ' with other content (that line is kept)';
  out.diagnostics.push({ file: out.file, line, severity: 'warning', message: `duplicate entry: ${how} ${first.line} (${name})${kept}; skipped` });
  return true;
}

/** A warning at each line whose parent (`parentUuid`) or request (`requestRef`) is on a later line. */
function outOfOrder(out: CcRead, seen: Seen): void {
  const later: Diagnostic[] = [];
  for (const r of out.recs) {
    const v = r.v as { parentUuid?: unknown; requestRef?: unknown };
    const refs: Array<[string, string]> = [];
    if ((r.type === 'user' || r.type === 'assistant' || r.type === 'system' || r.type === 'node') && typeof v.parentUuid === 'string') refs.push(['parentUuid', `uuid ${v.parentUuid}`]);
    if (r.type === 'assistant' && typeof v.requestRef === 'string') refs.push(['requestRef', `api-request id ${v.requestRef}`]);
    for (const [field, name] of refs) {
      const target = seen.get(name);
      if (target && target.line > r.line) later.push({ file: out.file, line: r.line, severity: 'warning', message: `lines out of file order: ${field} names line ${target.line}, after this one (${name}); the entry is still read with it` });
    }
  }
  for (const d of later) out.diagnostics.push(d);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function take(out: CcRead, line: number, o: Record<string, unknown>, problems: LineProblems): void {
  const type = typeof o.type === 'string' ? o.type : '(no type)';
  const values: string[] = [];
  checkHostValues(o, CC_VALUES, '', values);
  if (values.length) problems.push(hostValuesWarning(out.file, line, values));
  out.sessionId ??= str(o.sessionId);
  out.cwd ??= str(o.cwd);
  out.version ??= str(o.version);
  out.entrypoint ??= str(o.entrypoint);
  out.agentId ??= str(o.agentId);
  if (type === 'custom-title') out.title = str(o.customTitle) ?? str(o.title) ?? out.title;
  else if (type === 'summary' && !out.title) out.title = str(o.summary);
  const schema = ownGet(LINE_SCHEMAS as Record<string, z.ZodType>, type);
  if (!schema) {
    if (typeof o.uuid === 'string') out.recs.push({ line, type: 'node', v: { uuid: o.uuid, parentUuid: typeof o.parentUuid === 'string' ? o.parentUuid : null, type } });
    bump(out.ignored, type);
    return;
  }
  const parsed = schema.safeParse(o);
  if (!parsed.success) {
    problems.add(line, 'warning', () => `${type} line does not match Claude Code's format (${describeIssues(parsed.error)}); skipped`);
    bump(out.ignored, type);
    return;
  }
  out.recs.push({ line, type: type as CcLineType, v: parsed.data } as CcRec);
}
