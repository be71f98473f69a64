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
  const carrierOf = carriers(session, candidates);
  report.phux = { ...json, messages: json.messages.map((m, i) => ({ ...m, request: carrierOf(stream.messages[i]) })) };
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
  return carriers(session, requests)(m);
}

/**
 * `carrier` for many messages of one session: the requests are scanned once, then each message
 * costs a binary search (a scan of every request per message was quadratic on phux sessions).
 * The first request in order whose line (time) passes the message's is the first at which the
 * running maximum of the lines (times) passes it, and those maxima never decrease.
 */
export function carriers(session: Session, requests: readonly CarrierCandidate[] = session.requests): (m: ContextStreamMessage) => number | null {
  const agents = requests.filter((r) => r.kind === 'agent');
  const byLine = agents.length > 0 && agents.every((r) => r.source.file === session.path && r.source.line > 0);
  const maxima: number[] = [];
  let top = -Infinity;
  for (const r of agents) {
    const key = byLine ? r.source.line : (r.timeMs ?? -Infinity);
    if (key > top) top = key;
    maxima.push(top);
  }
  /** Index of the first request whose running maximum passes `passes` (upward-closed), or null. */
  const first = (passes: (key: number) => boolean): number | null => {
    let lo = 0;
    let hi = maxima.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (passes(maxima[mid])) hi = mid;
      else lo = mid + 1;
    }
    return lo < agents.length ? agents[lo].index : null;
  };
  return (m) => {
    if (byLine) return first((line) => line > m.line);
    const t = m.timeMs;
    return t === null ? null : first((time) => time >= t);
  };
}
