/**
 * The stable machine interface of `prefix-lens analyze --json` (version 1) — also the view model
 * the timeline renders. Documented in README.md ("JSON output").
 */
import type { SessionAnalysis } from '../core/analyze.js';
import type { Cause } from '../core/classify.js';
import type { BreakSegment, Evidence, RequestKind, Usage } from '../core/model.js';
import type { PhuxSessionJson } from '../phux/stream.js';

/** One request in the report. Tokens are tokens, money USD, `time` ISO 8601. */
export interface RequestReport {
  /** 1-based send order within the session. */
  index: number;
  /** 1-based line of the transcript (0 for database rows; see `row`). */
  line: number;
  row?: string;
  file: string;
  responseId: string | null;
  provider: string;
  model: string;
  api: string;
  time: string | null;
  kind: RequestKind;
  evidence: Evidence;
  usage: Usage | null;
  prefixHash: string | null;
  segments: { tools: string | null; system: string | null; messages: string | null; head: string | null };
  verdict: string;
  causes: Cause[];
  break: { segment: BreakSegment; blockIndex: number; path: string; byteOffset: number; before: string; after: string } | null;
  costUSD: number | null;
  /** Index of the request whose cache entry this one was compared with. */
  matched: number | null;
  gapMs: number | null;
  promptTokens: number | null;
  expectedRead: number | null;
  observedRead: number | null;
  lostTokens: number;
  sameAsPrevious: boolean;
  error: string | null;
  notes: string[];
}

/** One session in the report. `phux` is present when the session carries a phux context stream. */
export interface SessionReport {
  host: string;
  id: string;
  path: string;
  title: string | null;
  parentId: string | null;
  diagnostics: Array<{ file: string; line: number; message: string; severity: string }>;
  ignored: Record<string, number>;
  totals: SessionAnalysis['totals'];
  tokenModel: SessionAnalysis['tokenModel'];
  requests: RequestReport[];
  phux?: PhuxSessionJson;
}

/** The whole report. */
export interface Report {
  version: 1;
  sessions: SessionReport[];
}

/** Builds the report entry of one analyzed session. `phux` is attached by the caller when present. */
export function sessionReport(a: SessionAnalysis): SessionReport {
  const s = a.session;
  return {
    host: s.host,
    id: s.id,
    path: s.path,
    title: s.title ?? null,
    parentId: s.parentId ?? null,
    diagnostics: s.diagnostics.map((d) => ({ file: d.file, line: d.line, message: d.message, severity: d.severity })),
    ignored: s.ignored,
    totals: a.totals,
    tokenModel: a.tokenModel,
    requests: a.requests.map((r) => {
      const q = r.request;
      const out: RequestReport = {
        index: q.index,
        line: q.source.line,
        file: q.source.file,
        responseId: q.responseId ?? null,
        provider: q.provider,
        model: q.model,
        api: q.api,
        // Readers check times at their boundary (hosts/numbers.ts); a library caller's session may not have been.
        time: q.timeMs !== null && Number.isFinite(q.timeMs) && Math.abs(q.timeMs) <= 8.64e15 ? new Date(q.timeMs).toISOString() : null,
        kind: q.kind,
        evidence: q.evidence,
        usage: q.usage,
        prefixHash: r.prefixHash,
        segments: { tools: r.segments.tools, system: r.segments.system, messages: r.segments.messages, head: r.segments.head },
        verdict: r.verdict,
        causes: r.causes,
        break: r.break
          ? {
              segment: r.break.segment,
              blockIndex: r.break.blockIndex,
              path: r.break.path,
              byteOffset: r.break.byteOffset,
              before: r.break.before,
              after: r.break.after,
            }
          : null,
        costUSD: r.costUSD,
        matched: r.matched,
        gapMs: r.gapMs,
        promptTokens: r.promptTokens,
        expectedRead: r.expectedRead,
        observedRead: r.observedRead,
        lostTokens: r.lostTokens,
        sameAsPrevious: r.sameAsPrevious,
        error: q.error ?? null,
        notes: q.notes ?? [],
      };
      if (q.source.row) out.row = q.source.row;
      return out;
    }),
  };
}
