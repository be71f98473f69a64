/**
 * Reads one PI-Desktop transcript (`<data>/sessions/<id>.jsonl`) into its header and validated
 * rows, tolerating bad input: a malformed line, a row that does not fit its schema, a system row
 * whose `messageJson` is not a pi-ai SystemMessage each give a Diagnostic (file + 1-based line) and
 * the rest is read. Unknown row types are counted in `ignored`, with one diagnostic per type.
 *
 * System rows: `modelSystem` is taken from the line or from `meta` (the reference marks the
 * placement unverified); the first system row says in an `info` diagnostic which one the file uses,
 * and a file that mixes both says so once.
 * The archived regenerate branches (`<id>.revisions.jsonl`) are counted, not rebuilt: they are not
 * part of the live context (their row shape is not documented).
 */
import { depthMessage, parseBounded } from '../../core/depth.js';
import type { Diagnostic } from '../../core/model.js';
import { bump, ownGet } from '../../core/own.js';
import { describeIssues } from '../issues.js';
import { checkHostValues, hostValuesWarning, LineProblems } from '../numbers.js';
import { invalidUtf8Warning, readLines } from '../lines.js';
import { plural } from '../../plural.js';
import {
  CompactionLineSchema,
  HeaderSchema,
  PD_VALUES,
  MessageLineSchema,
  SystemMessageSchema,
  type ModelSystem,
  type PdCompaction,
  type PdHeader,
  type PdMessage,
  type SystemMessage,
} from './schema.js';

/** Where a file put `modelSystem`: on the transcript line or inside `meta`. */
export type SystemPlacement = 'line' | 'meta';

/** One row with its place in the file. */
export type PdRow =
  | { line: number; kind: 'message'; row: PdMessage }
  | { line: number; kind: 'system'; row: PdMessage; modelSystem: ModelSystem; message: SystemMessage; placement: SystemPlacement }
  | { line: number; kind: 'compaction'; row: PdCompaction; checkpoint: SystemMessage | null };

/** A read transcript. */
export interface PdRead {
  file: string;
  /** Line 1, or null when it is not a PI-Desktop transcript header. */
  header: PdHeader | null;
  rows: PdRow[];
  diagnostics: Diagnostic[];
  /** Unknown row types (and `revision` rows of the revisions file), with counts. */
  ignored: Record<string, number>;
  /** Placements of `modelSystem` the file used, in order of first use. */
  placements: SystemPlacement[];
}

const errText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * A pi-ai SystemMessage from `messageJson`, or a problem text.
 */
export function parseSystemMessage(json: string): { message: SystemMessage } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (e) {
    return { problem: `messageJson is not JSON: ${errText(e)}` };
  }
  const m = SystemMessageSchema.safeParse(value);
  return m.success ? { message: m.data } : { problem: `messageJson is not a pi-ai SystemMessage: ${describeIssues(m.error)}` };
}

/**
 * Reads a transcript (and counts its revisions file's rows when `revisions` is given).
 * @returns header, rows and diagnostics; an unreadable file gives one error diagnostic and no rows
 */
export async function readPdTranscript(file: string, revisions?: string): Promise<PdRead> {
  const out: PdRead = { file, header: null, rows: [], diagnostics: [], ignored: {}, placements: [] };
  // Bad lines past MAX_DIAGNOSTICS are only counted (numbers.ts LineProblems).
  const problems = new LineProblems(out.diagnostics, file);
  const diag = (line: number, severity: Diagnostic['severity'], message: string | (() => string)) => problems.add(line, severity, message);
  let first = true;
  try {
    for await (const l of readLines(file)) {
      if (l.oversized !== undefined) {
        diag(l.line, 'error', `line of ${l.oversized} bytes skipped (over the line limit)`);
        first = false;
        continue;
      }
      if (l.text.trim() === '') continue;
      if (l.invalidUtf8 !== undefined) problems.push(invalidUtf8Warning(file, l.line, l.invalidUtf8));
      let value: unknown;
      try {
        const r = parseBounded(l.text);
        if (r.cut) diag(l.line, 'warning', depthMessage(r.cut));
        value = r.value;
      } catch (e) {
        diag(l.line, l.eol ? 'error' : 'warning', l.eol ? `malformed JSON line skipped: ${errText(e)}` : `last line incomplete (PI-Desktop may be writing it); skipped: ${errText(e)}`);
        first = false;
        continue;
      }
      const values: string[] = [];
      checkHostValues(value, PD_VALUES, '', values);
      if (values.length) problems.push(hostValuesWarning(file, l.line, values));
      if (first) {
        first = false;
        const h = HeaderSchema.safeParse(value);
        if (h.success) {
          out.header = h.data;
          if (h.data.schema !== 1) diag(l.line, 'warning', `transcript schema ${h.data.schema}; this reader knows schema 1 (TRANSCRIPT_SCHEMA): rows are read as schema 1`);
          continue;
        }
        diag(l.line, 'error', () => `line 1 is not a PI-Desktop transcript header: ${describeIssues(h.error)}`);
      }
      const type = (value as { type?: unknown } | null)?.type;
      if (type === 'message') {
        const m = MessageLineSchema.safeParse(value);
        if (!m.success) {
          diag(l.line, 'error', () => `message row does not fit its schema; skipped: ${describeIssues(m.error)}`);
          continue;
        }
        const ms = m.data.modelSystem ?? m.data.meta?.modelSystem;
        if (m.data.role === 'system' && ms) {
          const placement: SystemPlacement = m.data.modelSystem ? 'line' : 'meta';
          if (!out.placements.includes(placement)) {
            diag(
              l.line,
              'info',
              out.placements.length
                ? `this system row puts modelSystem ${placement === 'line' ? 'on the transcript line' : 'in meta'}, earlier ones ${placement === 'line' ? 'in meta' : 'on the line'}: both are read`
                : `system rows carry modelSystem ${placement === 'line' ? 'on the transcript line (row.modelSystem)' : 'in meta (row.meta.modelSystem)'}; the reference leaves the placement unverified, both are accepted`,
            );
            out.placements.push(placement);
          }
          const p = parseSystemMessage(ms.messageJson);
          if ('problem' in p) {
            diag(l.line, 'error', `system row ${m.data.id}: ${p.problem}; skipped`);
            continue;
          }
          if (ms.version !== 1) diag(l.line, 'warning', `system row ${m.data.id}: modelSystem version ${ms.version}; read as version 1`);
          out.rows.push({ line: l.line, kind: 'system', row: m.data, modelSystem: ms, message: p.message, placement });
          continue;
        }
        if (m.data.role === 'system') {
          diag(l.line, 'warning', `system row ${m.data.id} has no modelSystem (neither on the line nor in meta); not part of the model context`);
          bump(out.ignored, 'message:system-without-modelSystem');
          continue;
        }
        out.rows.push({ line: l.line, kind: 'message', row: m.data });
        continue;
      }
      if (type === 'compaction') {
        const c = CompactionLineSchema.safeParse(value);
        if (!c.success) {
          diag(l.line, 'error', () => `compaction row does not fit its schema; skipped: ${describeIssues(c.error)}`);
          continue;
        }
        let checkpoint: SystemMessage | null = null;
        if (c.data.details?.systemMessageJson !== undefined) {
          const p = parseSystemMessage(c.data.details.systemMessageJson);
          if ('problem' in p) diag(l.line, 'warning', `compaction ${c.data.id}: details.systemMessageJson: ${p.problem}; the checkpoint is folded from the system rows instead`);
          else checkpoint = p.message;
        }
        out.rows.push({ line: l.line, kind: 'compaction', row: c.data, checkpoint });
        continue;
      }
      const name = typeof type === 'string' ? type : '(no type)';
      if (!ownGet(out.ignored, name)) diag(l.line, 'info', `unknown row type "${name}" ignored (further ones are counted)`);
      bump(out.ignored, name);
    }
  } catch (e) {
    // Not a bad line: said whatever the count of bad lines so far (LineProblems may be counting).
    out.diagnostics.push({ file, line: 1, severity: 'error', message: `cannot read file: ${errText(e)}` });
  }
  if (first) out.diagnostics.push({ file, line: 1, severity: 'warning', message: 'empty transcript: no header, no rows' });
  problems.close();
  if (revisions) await countRevisions(revisions, out);
  return out;
}

/** Counts the archived regenerate rows of `<id>.revisions.jsonl` (absent = none). */
async function countRevisions(file: string, out: PdRead): Promise<void> {
  let n = 0;
  let firstLine = 0;
  try {
    for await (const l of readLines(file)) {
      if (l.text.trim() === '' && l.oversized === undefined) continue;
      n++;
      firstLine ||= l.line;
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    out.diagnostics.push({ file, line: 1, severity: 'warning', message: `cannot read the archived regenerate branches: ${errText(e)}` });
    return;
  }
  if (!n) return;
  out.ignored.revision = n;
  out.diagnostics.push({
    file,
    line: firstLine,
    severity: 'info',
    message: `${plural(n, 'archived regenerate row')} (a regenerated response's earlier branch): not part of the live context, so not rebuilt as requests`,
  });
}
