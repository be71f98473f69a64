/**
 * Attaches the phux context-stream analysis (ADR-0067 checks, replay, cost) to a session's report
 * when the session carries context messages.
 */
import type { LlmRequest, Session } from '../core/model.js';
import { analyzeContextStream, toJson, type ContextStreamMessage } from '../phux/stream.js';
import type { SessionReport } from './json.js';

/**
 * Adds `phux` to the report when the session has at least one context event; returns the report.
 * Each message gets `request`: the first agent request that carried it (see `carrier`).
 */
export function attachPhux(report: SessionReport, session: Session, candidates: readonly CarrierCandidate[] = session.requests): SessionReport {
  if (!session.events.some((e) => e.kind === 'context')) return report;
  const stream = analyzeContextStream(session.events, { turnLines: session.turnLines });
  const json = toJson(stream);
  report.phux = { ...json, messages: json.messages.map((m, i) => ({ ...m, request: carrier(stream.messages[i], session, candidates) })) };
  return report;
}

/**
 * What `carrier` reads of a request. attachPhux's `candidates` default to the session's requests;
 * the persisted tail (cache/tail.ts) passes the earlier carriers and the appended requests, among
 * which every message's carrier is found again.
 */
export type CarrierCandidate = Pick<LlmRequest, 'index' | 'kind' | 'source' | 'timeMs'>;

/**
 * The 1-based index of the first agent request sent after a context message was appended: by
 * transcript line when the requests have lines in the session file (Pi), else by time (OpenCode
 * rows, whose event lines are message ordinals). Null when no request follows it.
 */
export function carrier(m: ContextStreamMessage, session: Session, requests: readonly CarrierCandidate[] = session.requests): number | null {
  const agents = requests.filter((r) => r.kind === 'agent');
  const byLine = (r: CarrierCandidate) => r.source.file === session.path && r.source.line > 0;
  if (agents.length && agents.every(byLine)) return agents.find((r) => r.source.line > m.line)?.index ?? null;
  if (m.timeMs === null) return null;
  return agents.find((r) => r.timeMs !== null && r.timeMs >= m.timeMs!)?.index ?? null;
}
