/**
 * The Pi host reader (`@mariozechner/pi-coding-agent` 0.73.x session files; reference/pi.md).
 *
 *   locatePiSessions(env, home)            → session files on disk (locate.ts)
 *   readPiSession(file, {requestsDir?})    → normalized Session (read.ts → normalize.ts [→ wire.ts])
 *
 * Without `requestsDir` every request is reconstructed from the session tree (evidence
 * `reconstructed`, head opaque). With it, the captured bodies give exact bytes (evidence `wire`).
 */
import type { Session } from '../../core/model.js';
import { piSessionId, readPiFile } from './read.js';
import { branchPoints, PiEncoder, reconstructRequests, transcriptEvents } from './normalize.js';
import { wireRequests } from './wire.js';
import { compactChains } from '../../core/wire.js';
import { releaseDeferred } from '../../memory.js';
import { sourceLabel, type RequestSource } from '../wirematch.js';

export { locatePiSessions, piAgentDir, decodeCwdDir, piSessionIdOfFile, type PiSessionFile } from './locate.js';
export { readPiFile, type PiRead, type PiEntryRec } from './read.js';
export { reconstructRequests, transcriptEvents, PiEncoder, HEAD_NOTE, type Reconstruction } from './normalize.js';
export { readPiBodies, matchBodies, isSummaryBody, type PiBody } from './wire.js';

export interface ReadPiOptions {
  /**
   * Folder of captured request bodies (`NNN-<api>.body.json`, optional `.meta.json` and
   * `index.ndjson`) for this session: requests are then built from the exact bytes.
   */
  requestsDir?: RequestSource;
}

/**
 * Reads one Pi session file into a Session (host `pi`).
 *
 * - requests: one per assistant entry, in file order (reconstructed), or one per captured body
 *   in send order (wire: summaries and bodies without an entry included);
 * - diagnostics: malformed/truncated lines, schema mismatches, dangling parents, unreadable bodies,
 *   each with file and line; the rest is still read;
 * - ignored: unknown entry types (and `message:<role>` for unknown roles) with counts;
 * - events: phux context messages, compactions, branches (tree movements), in file order;
 * - title: the latest `session_info` name; cwd: the header's.
 * Never throws for bad content; an unreadable session file gives a diagnostic and no requests.
 * @param file path of the session `.jsonl`
 */
export async function readPiSession(file: string, opts: ReadPiOptions = {}): Promise<Session> {
  const read = await readPiFile(file);
  // The whole tree is known: the encoder keeps only the states a later request can start from.
  const recon = reconstructRequests(read, new PiEncoder({ branches: branchPoints(read.entries) }));
  // A collection put off until this session was read runs here, while its entry tree and blocks
  // are alive (memory.ts: V8 keeps the optimized code built on their maps), not after.
  releaseDeferred();
  const diagnostics = [...read.diagnostics];
  let requests = recon.requests;
  if (opts.requestsDir) {
    try {
      requests = await wireRequests(read, recon, opts.requestsDir, diagnostics);
    } catch (e) {
      diagnostics.push({
        file: sourceLabel(opts.requestsDir),
        line: 1,
        severity: 'error',
        message: `cannot read captured request bodies: ${e instanceof Error ? e.message : String(e)}; requests reconstructed`,
      });
    }
  }
  let title: string | undefined;
  for (const rec of read.entries) if (rec.entry?.type === 'session_info') title = rec.entry.name?.trim() || undefined;
  const session: Session = {
    host: 'pi',
    id: piSessionId(read),
    path: file,
    requests,
    diagnostics,
    ignored: read.ignored,
    events: transcriptEvents(read),
  };
  // The entry tree is released when this returns: the blocks keep their long texts as bytes.
  if (requests === recon.requests) compactChains(requests.map((r) => r.tail));
  if (title) session.title = title;
  if (read.header?.cwd) session.cwd = read.header.cwd;
  return session;
}
