/**
 * Reads one Codex rollout into validated records, tolerating bad input: a malformed or truncated
 * line, or a line of a used type that does not fit its schema, gives a Diagnostic with file and
 * line; the rest is read. Line types this reader does not use are counted in `ignored`.
 * Legacy rollouts (a bare meta object on line 1, then bare ResponseItems) are read too.
 */
import { readJsonLines } from '../lines.js';
import { describeIssues } from '../issues.js';
import { checkHostValues, hostValuesWarning, LineProblems } from '../numbers.js';
import type { Diagnostic } from '../../core/model.js';
import { bump } from '../../core/own.js';
import { CODEX_VALUES, CompactedSchema, LineSchema, ResponseItemSchema, SessionMetaSchema, TokenCountSchema, TokenUsageRecordSchema, TurnContextSchema, type SessionMeta, type TokenUsage } from './schema.js';
import { codexIdOfFile } from './locate.js';

export type CxRec =
  | { line: number; time?: string; type: 'item'; item: Record<string, unknown> }
  /** turn_context: the model and the reasoning effort (`effort`, else the collaboration mode's `reasoning_effort`; null = the model's default). */
  | { line: number; time?: string; type: 'turn'; model?: string; effort?: string | null }
  | { line: number; time?: string; type: 'usage'; responseId?: string; usage: TokenUsage }
  | { line: number; time?: string; type: 'count'; total?: TokenUsage; last?: TokenUsage }
  | { line: number; time?: string; type: 'compacted'; history: Array<Record<string, unknown>> };

export interface CxRead {
  file: string;
  meta: SessionMeta | null;
  metaLine: number;
  recs: CxRec[];
  diagnostics: Diagnostic[];
  ignored: Record<string, number>;
  /** True when line 1 is a bare meta object (legacy format). */
  legacy: boolean;
}

/**
 * Reads a rollout file.
 * @param maxLines read only the first `maxLines` lines (a fork's history base)
 * @returns the records; an unreadable file gives one error diagnostic (never throws)
 */
export async function readCodexFile(file: string, maxLines = Infinity): Promise<CxRead> {
  const out: CxRead = { file, meta: null, metaLine: 0, recs: [], diagnostics: [], ignored: {}, legacy: false };
  // Bad lines past MAX_DIAGNOSTICS are only counted (a million of them must not cost a million messages).
  const problems = new LineProblems(out.diagnostics, file);
  const warn = (line: number, message: string | (() => string)) => problems.add(line, 'warning', message);
  try {
    for await (const r of readJsonLines(file)) {
      if (r.line > maxLines) break;
      if ('diagnostic' in r) {
        problems.push(r.diagnostic);
        continue;
      }
      if (r.warnings) for (const w of r.warnings) problems.push(w);
      const o = r.value as Record<string, unknown>;
      if (!o || typeof o !== 'object' || Array.isArray(o)) {
        warn(r.line, 'line is not a JSON object; skipped');
        continue;
      }
      const values: string[] = [];
      checkHostValues(o, CODEX_VALUES, '', values);
      if (values.length) problems.push(hostValuesWarning(file, r.line, values));
      const l = LineSchema.safeParse(o);
      if (!l.success || !('payload' in o)) {
        // Legacy rollouts: a bare meta object first, then bare ResponseItems.
        if (r.line === 1 && typeof o.id === 'string') {
          const m = SessionMetaSchema.safeParse(o);
          if (m.success) {
            out.meta = m.data;
            out.metaLine = 1;
            out.legacy = true;
            continue;
          }
        }
        if (out.legacy && ResponseItemSchema.safeParse(o).success) out.recs.push({ line: r.line, type: 'item', item: o });
        else warn(r.line, () => `not a Codex rollout line (${l.success ? 'no payload' : describeIssues(l.error)}); skipped`);
        continue;
      }
      const { type, payload } = l.data;
      const time = l.data.timestamp ?? undefined;
      const p = payload as Record<string, unknown>;
      const bad = (e: { error: Parameters<typeof describeIssues>[0] }) => {
        warn(r.line, () => `${type} line does not match Codex's format (${describeIssues(e.error)}); skipped`);
        bump(out.ignored, type);
      };
      switch (type) {
        case 'session_meta': {
          const m = SessionMetaSchema.safeParse(p);
          if (!m.success) bad(m);
          else if (!out.meta) {
            out.meta = m.data;
            out.metaLine = r.line;
          }
          break;
        }
        case 'response_item': {
          const it = ResponseItemSchema.safeParse(p);
          if (!it.success) bad(it);
          else out.recs.push({ line: r.line, time, type: 'item', item: p });
          break;
        }
        case 'turn_context': {
          const t = TurnContextSchema.safeParse(p);
          if (!t.success) bad(t);
          else {
            const effort = t.data.effort ?? t.data.collaboration_mode?.settings?.reasoning_effort;
            out.recs.push({ line: r.line, time, type: 'turn', model: t.data.model, effort: typeof effort === 'string' ? effort : null });
          }
          break;
        }
        case 'token_usage_record': {
          const t = TokenUsageRecordSchema.safeParse(p);
          if (!t.success) bad(t);
          else out.recs.push({ line: r.line, time, type: 'usage', responseId: t.data.response_id, usage: t.data.usage });
          break;
        }
        case 'compacted': {
          const c = CompactedSchema.safeParse(p);
          if (!c.success) bad(c);
          else out.recs.push({ line: r.line, time, type: 'compacted', history: (c.data.replacement_history ?? []) as Array<Record<string, unknown>> });
          break;
        }
        case 'event_msg': {
          if (p?.type === 'token_count') {
            const t = TokenCountSchema.safeParse(p);
            if (!t.success) bad(t);
            else if (t.data.info) out.recs.push({ line: r.line, time, type: 'count', total: t.data.info.total_token_usage, last: t.data.info.last_token_usage });
          } else bump(out.ignored, `event_msg:${typeof p?.type === 'string' ? p.type : '?'}`);
          break;
        }
        default:
          bump(out.ignored, type);
      }
    }
  } catch (e) {
    out.diagnostics.push({ file, line: 1, severity: 'error', message: `cannot read rollout: ${e instanceof Error ? e.message : String(e)}` });
  }
  problems.close();
  if (!out.meta) out.diagnostics.push({ file, line: 1, severity: 'warning', message: `no session_meta line: instructions unknown, session id from the file name: ${codexIdOfFile(file)}` });
  return out;
}
