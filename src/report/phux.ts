/**
 * Attaches the phux context-stream analysis (ADR-0067 checks, replay, cost) to a session's report
 * when the session carries context messages.
 */
import type { Session } from '../core/model.js';
import { analyzeContextStream, toJson } from '../phux/stream.js';
import type { SessionReport } from './json.js';

/** Adds `phux` to the report when the session has at least one context event; returns the report. */
export function attachPhux(report: SessionReport, session: Session): SessionReport {
  if (!session.events.some((e) => e.kind === 'context')) return report;
  report.phux = toJson(analyzeContextStream(session.events, { turnLines: session.turnLines }));
  return report;
}
