/**
 * The live tail's messages from the analysis worker to a Timeline panel. The worker keeps a
 * LiveAnalysis per followed session (src/live/session.ts); after an append judged alone it sends
 * a patch (the report's header and the new request entries) instead of the whole report, which for
 * a session of 40,000 requests is ~50 MB to clone on every append. Pure: no vscode, no fs.
 */
import type { LiveUpdate } from '../live/session.js';
import type { RequestReport, SessionReport } from '../report/json.js';

/**
 * What changed since the last step. `header`: the session report as it is now without its
 * requests (`requests: []`: sums, models, diagnostics, context stream); `added`: the requests the
 * previous report did not have, in order; `revised`: earlier requests judged again with a moved
 * token model (by `index`).
 */
export interface LivePatch {
  header: SessionReport;
  added: RequestReport[];
  revised: RequestReport[];
}

/** One step of a followed session: the whole report (opened, read again, or everything judged again), a patch, or nothing. */
export type LiveStep = { full: SessionReport; patch: null } | { full: null; patch: LivePatch } | { full: null; patch: null };

/** The step a LiveAnalysis update gives (the header only is built when the requests were judged alone). */
export function stepOf(u: LiveUpdate): LiveStep {
  if (u.change === 'unchanged' && !u.added.length && !u.revised.length) return { full: null, patch: null };
  // Read again, or every request judged again (e.g. a late captured body changed their evidence): whole.
  if (u.change === 'reset' || !u.continued) return { full: u.report, patch: null };
  if (!u.added.length && !u.revised.length) return { full: null, patch: null };
  return { full: null, patch: { header: { ...u.report, requests: [] }, added: u.added, revised: u.revised } };
}

/**
 * The report after `patch`, from the report of the step before it.
 * @throws Error when the patch does not follow `report` (a revised index it does not have, or added
 *   entries that do not continue its numbering): the caller then asks for the whole report
 */
export function applyPatch(report: SessionReport, patch: LivePatch): SessionReport {
  const requests = [...report.requests];
  const at = new Map(requests.map((r, i) => [r.index, i] as const));
  for (const r of patch.revised) {
    const i = at.get(r.index);
    if (i === undefined) throw new Error(`live patch: request #${r.index} is not in the report`);
    requests[i] = r;
  }
  const last = requests.at(-1)?.index ?? 0;
  if (patch.added.length && patch.added[0].index <= last) throw new Error(`live patch: request #${patch.added[0].index} does not follow #${last}`);
  requests.push(...patch.added);
  return { ...patch.header, requests };
}
