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
export function attachPhux(report: SessionReport, session: Session): SessionReport {
  if (!session.events.some((e) => e.kind === 'context')) return report;
  const stream = analyzeContextStream(session.events, { turnLines: session.turnLines });
  const json = toJson(stream);
  report.phux = { ...json, messages: json.messages.map((m, i) => ({ ...m, request: carrier(stream.messages[i], session) })) };
  return report;
}

/**
 * The 1-based index of the first agent request sent after a context message was appended: by
 * transcript line when the requests have lines in the session file (Pi), else by time (OpenCode
 * rows, whose event lines are message ordinals). Null when no request follows it.
 */
export function carrier(m: ContextStreamMessage, session: Session): number | null {
  const agents = session.requests.filter((r) => r.kind === 'agent');
  const byLine = (r: LlmRequest) => r.source.file === session.path && r.source.line > 0;
  if (agents.length && agents.every(byLine)) return agents.find((r) => r.source.line > m.line)?.index ?? null;
  if (m.timeMs === null) return null;
  return agents.find((r) => r.timeMs !== null && r.timeMs >= m.timeMs!)?.index ?? null;
}
