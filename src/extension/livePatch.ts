/**
 * The live tail's messages from the analysis worker to a Timeline panel. The worker keeps a
 * LiveAnalysis per followed session (src/live/session.ts); after an append judged alone it sends
 * a patch (protocol.ts LivePatch: the report's header and the new request entries) instead of the
 * whole report, which for a session of 40,000 requests is ~50 MB to clone on every append; the
 * panel passes it on to the webview the same way. Pure: no vscode, no fs.
 */
import type { LiveUpdate } from '../live/session.js';
import type { LivePatch } from '../protocol.js';
import type { SessionReport } from '../report/json.js';

/** One step of a followed session: the whole report (opened, read again, or everything judged again), a patch, or nothing. */
export type LiveStep = { full: SessionReport; patch: null } | { full: null; patch: LivePatch } | { full: null; patch: null };

/**
 * The step a LiveAnalysis update gives. A patch's header is the session report with its kept
 * request entries left out; an append judged alone that added no request gives a header-only patch.
 */
export function stepOf(u: LiveUpdate): LiveStep {
  if (u.change === 'unchanged' && !u.added.length && !u.revised.length) return { full: null, patch: null };
  // Read again, or every request judged again (e.g. a late captured body changed their evidence): whole.
  if (u.change === 'reset' || !u.continued) return { full: u.report, patch: null };
  // Lines that add no request (a user message, a title, a bad line) still move the header: patch it alone.
  return { full: null, patch: { header: { ...u.report, requests: [] }, added: u.added, revised: u.revised } };
}
