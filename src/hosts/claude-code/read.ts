/**
 * Reads one Claude Code transcript file (main session or sub-agent) into validated records,
 * tolerating bad input: a malformed or truncated line, or a line of a known type that does not fit
 * its schema, gives a Diagnostic with file and line, and the rest is read. Line types this reader
 * does not use are counted in `ignored` (reference/claude-code-codex.md §1.2: skip unknown types).
 */
import type { z } from 'zod';
import { readJsonLines } from '../lines.js';
import { describeIssues } from '../issues.js';
import type { Diagnostic } from '../../core/model.js';
import { bump, ownGet } from '../../core/own.js';
import {
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
  try {
    for await (const r of readJsonLines(file)) {
      if ('diagnostic' in r) {
        out.diagnostics.push(r.diagnostic);
        continue;
      }
      if (r.warnings) out.diagnostics.push(...r.warnings);
      const o = r.value;
      if (!o || typeof o !== 'object' || Array.isArray(o)) {
        out.diagnostics.push({ file, line: r.line, severity: 'warning', message: 'line is not a JSON object; skipped' });
        continue;
      }
      take(out, r.line, o as Record<string, unknown>);
    }
  } catch (e) {
    out.diagnostics.push({ file, line: 1, severity: 'error', message: `cannot read transcript: ${e instanceof Error ? e.message : String(e)}` });
  }
  return out;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function take(out: CcRead, line: number, o: Record<string, unknown>): void {
  const type = typeof o.type === 'string' ? o.type : '(no type)';
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
    out.diagnostics.push({ file: out.file, line, severity: 'warning', message: `${type} line does not match Claude Code's format (${describeIssues(parsed.error)}); skipped` });
    bump(out.ignored, type);
    return;
  }
  out.recs.push({ line, type: type as CcLineType, v: parsed.data } as CcRec);
}
