/**
 * Reads one DSH session log (`session.jsonl.zstd`, `session.v3.jsonl.zstd`, `session.v4.jsonl.zstd`,
 * or raw `session.jsonl` when DSH runs with `compression:'none'`) into its header and validated
 * events, tolerating bad input: a damaged zstd frame, a cut last frame, a malformed line or an event
 * that does not fit its schema each give a Diagnostic (file + 1-based line of the decompressed log)
 * and the rest is read. Event types outside DSH's known vocabulary are counted in `ignored`, with
 * one diagnostic per type at its first line.
 */
import { depthMessage, parseBounded } from '../../core/depth.js';
import type { Diagnostic } from '../../core/model.js';
import { bump, ownGet } from '../../core/own.js';
import { openRegular } from '../files.js';
import { describeIssues } from '../issues.js';
import { invalidUtf8Warning, readLines } from '../lines.js';
import { checkHostValues, hostValuesWarning, LineProblems } from '../numbers.js';
import { DSH_VALUES, DshEventSchema, DshHeaderSchema, PackedChunkSchema, QUIET_TYPES, type DshEvent, type DshHeader } from './schema.js';
import { isZstd, notZstdMessage, zstdLogLines, type LogLine } from './zstd.js';

/** One event with its place in the log. */
export interface DshEventRec {
  /** 1-based line of the decompressed log. */
  line: number;
  ev: DshEvent;
}

/** A read log. */
export interface DshRead {
  file: string;
  /** Line 1, or null when it is not a DSH session header. */
  header: DshHeader | null;
  /** True when the file is zstd-compressed. */
  compressed: boolean;
  /** Events in log order (packed chunk rows are not kept: the assistant message has their content). */
  events: DshEventRec[];
  diagnostics: Diagnostic[];
  /** Unknown event types, with counts. */
  ignored: Record<string, number>;
}

/** Event types this reader interprets (the others of DSH's vocabulary are in QUIET_TYPES). */
const USED_TYPES = new Set([
  'user/message',
  'assistant/message',
  'assistant/chunk',
  'tool/result',
  'request/header',
  'system/message',
  'compaction/summary',
  'compaction/end',
  'session/title',
  'request/context',
  'turn/start',
  'step/start',
]);

/** The file's first (up to) 4 bytes. */
async function headOf(file: string): Promise<Uint8Array> {
  const { handle, size } = await openRegular(file);
  try {
    const head = new Uint8Array(Math.min(4, size));
    await handle.read(head, 0, head.length, 0);
    return head;
  } finally {
    await handle.close();
  }
}

async function* plainLines(file: string): AsyncGenerator<LogLine> {
  for await (const l of readLines(file)) yield { line: l.line, text: l.oversized !== undefined ? '' : l.text, frame: null, invalidUtf8: l.invalidUtf8 };
}

/**
 * Reads a DSH session log.
 * @returns header, events and diagnostics; an unreadable file gives one error diagnostic and no events
 */
export async function readDshLog(file: string): Promise<DshRead> {
  const diagnostics: Diagnostic[] = [];
  const ignored: Record<string, number> = {};
  const events: DshEventRec[] = [];
  let header: DshHeader | null = null;
  let compressed = false;
  let first = true;
  // Bad lines past MAX_DIAGNOSTICS are only counted (numbers.ts LineProblems); frame problems are listed.
  const problems = new LineProblems(diagnostics, file);
  const bad = (line: number, severity: Diagnostic['severity'], message: string | (() => string)) => problems.add(line, severity, message);
  try {
    const head = await headOf(file);
    compressed = isZstd(head);
    // A log named `.zstd` that is not zstd (random bytes, a plain log renamed): one error, not a
    // diagnostic per line of its bytes read as text. Discovery claims it too (discover.ts).
    const notZstd = file.endsWith('.zstd') ? notZstdMessage(head) : null;
    if (notZstd) {
      diagnostics.push({ file, line: 1, severity: 'error', message: notZstd });
      return { file, header, compressed, events, diagnostics, ignored };
    }
    const lines = compressed ? zstdLogLines(file, diagnostics) : plainLines(file);
    for await (const l of lines) {
      if (l.text.trim() === '') continue;
      if (l.invalidUtf8 !== undefined) problems.push(invalidUtf8Warning(file, l.line, l.invalidUtf8));
      let value: unknown;
      try {
        const r = parseBounded(l.text);
        if (r.cut) bad(l.line, 'warning', depthMessage(r.cut));
        value = r.value;
      } catch (e) {
        bad(l.line, 'error', `malformed JSON line skipped: ${e instanceof Error ? e.message : String(e)}`);
        first = false;
        continue;
      }
      const values: string[] = [];
      checkHostValues(value, DSH_VALUES, '', values);
      if (values.length) problems.push(hostValuesWarning(file, l.line, values));
      if (first) {
        first = false;
        const h = DshHeaderSchema.safeParse(value);
        if (h.success) {
          header = h.data;
          continue;
        }
        bad(l.line, 'error', () => `line 1 is not a DSH session header: ${describeIssues(h.error)}`);
      }
      const obj = value as { type?: unknown } | null;
      if (obj && typeof obj === 'object' && typeof obj.type === 'string' && obj.type.endsWith('-chunks')) {
        const p = PackedChunkSchema.safeParse(value);
        if (!p.success) bad(l.line, 'warning', () => `packed chunk row does not fit its schema: ${describeIssues(p.error)}`);
        continue;
      }
      const ev = DshEventSchema.safeParse(value);
      if (!ev.success) {
        bad(l.line, 'error', () => `event does not fit the DSH event schema; skipped: ${describeIssues(ev.error)}`);
        continue;
      }
      const type = ev.data.type;
      if (!USED_TYPES.has(type) && !QUIET_TYPES.has(type)) {
        if (!ownGet(ignored, type)) {
          bad(l.line, 'info', `unknown DSH event type "${type}" ignored (further ones are counted)`);
        }
        bump(ignored, type);
        continue;
      }
      events.push({ line: l.line, ev: ev.data });
    }
  } catch (e) {
    diagnostics.push({ file, line: 1, severity: 'error', message: `cannot read file: ${e instanceof Error ? e.message : String(e)}` });
  }
  if (first) diagnostics.push({ file, line: 1, severity: 'warning', message: 'empty session log: no header, no events' });
  problems.close();
  return { file, header, compressed, events, diagnostics, ignored };
}
