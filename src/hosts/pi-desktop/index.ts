/**
 * The PI-Desktop host reader (the public lineage of Nib; project reference `reference/botharness.md`
 * part B, Nib ADR 0337).
 *
 *   piDesktopDataDir(env, home)          → `$PI_DESKTOP_DATA_DIR` or `~/.pi-desktop` (locate.ts)
 *   piDesktopRef(file, explicit)         → SessionRef from a peek (discover.ts)
 *   readPiDesktopSession(file)           → the session and its sub-agents' sessions
 *                                           (read.ts → normalize.ts; db.ts for pi.sqlite)
 *
 * Requests are reconstructed (evidence `reconstructed`) with a known head: the system prompt and
 * tools replayed from the persisted system rows. Each request carries both system-message shapes
 * (`LlmRequest.systemShape`) and the system deltas it first carried (`systemDeltas`); the core
 * prices each delta both ways (core/shapes.ts).
 */
import { basename } from 'node:path';
import type { Diagnostic, Session } from '../../core/model.js';
import { loadPiDesktopDb } from './db.js';
import { dataDirOf, dbPathOf, revisionsOf } from './locate.js';
import { normalizePd } from './normalize.js';
import { readPdTranscript } from './read.js';

export { piDesktopDataDir, listTranscripts, dataDirOf, dbPathOf, revisionsOf, TRANSCRIPT_NAME } from './locate.js';
export { piDesktopRef } from './discover.js';
export { readPdTranscript, parseSystemMessage, type PdRead, type PdRow } from './read.js';
export { normalizePd, orderSections, PD_NOTE, UNKNOWN_ROUTE_NOTE } from './normalize.js';
export { loadPiDesktopDb, releasePiDesktopDbs, type PiDesktopDb } from './db.js';

export interface ReadPiDesktopOptions {
  /** pi.sqlite to read titles, models, turns and route flags from (default: the data dir's). */
  dbFile?: string;
}

/**
 * Reads one PI-Desktop transcript into its Session (host `pi-desktop`) and one Session per
 * sub-agent (`parentId` = the session id), in that order.
 *
 * - requests: one per assistant row of the parent (compaction rows with usage: summary requests);
 * - diagnostics: malformed lines, schema mismatches, bad `messageJson`, the `modelSystem` placement
 *   the file uses, unknown routes, archived revisions, pi.sqlite problems, turn-total mismatches;
 * - title: pi.sqlite `sessions.title`.
 * Never throws for bad content.
 */
export async function readPiDesktopSession(file: string, opts: ReadPiDesktopOptions = {}): Promise<Session[]> {
  const read = await readPdTranscript(file, revisionsOf(file));
  const id = read.header?.sessionId ?? basename(file, '.jsonl');
  const data = dataDirOf(file);
  const dbPath = opts.dbFile ?? (data ? dbPathOf(data) : null);
  const db = dbPath ? await loadPiDesktopDb(dbPath) : null;
  const row = db?.sessions.get(id);
  const norm = normalizePd(read, (p, m) => db?.routes.get(`${p}/${m}`), { provider: row?.providerId ?? null, model: row?.modelId ?? null });
  const diagnostics: Diagnostic[] = [...read.diagnostics, ...norm.diagnostics, ...(db?.diagnostics ?? [])];
  const turns = db?.turns.get(id);
  // Unknown sums (a row's count was not one) are not compared.
  if (db && turns && norm.sums.uncached !== null && norm.sums.output !== null && (turns.inputTokens !== norm.sums.uncached || turns.outputTokens !== norm.sums.output)) {
    diagnostics.push({
      file: db.file,
      line: 0,
      severity: 'info',
      message: `turns of ${id}: input ${turns.inputTokens} / output ${turns.outputTokens} tokens, the transcript's rows (with sub-agents) ${norm.sums.uncached} / ${norm.sums.output}`,
    });
  }
  const ignored = { ...read.ignored, ...norm.ignored };
  const session: Session = { host: 'pi-desktop', id, path: file, requests: norm.requests, diagnostics, ignored, events: norm.events, turnLines: norm.turnLines };
  if (row?.title) session.title = row.title;
  const subs: Session[] = norm.subagents.map((s) => ({
    host: 'pi-desktop',
    id: s.id,
    path: file,
    title: `sub-agent ${s.agentName} (${s.callId})`,
    requests: s.requests,
    diagnostics: [],
    ignored: {},
    events: [],
    parentId: id,
  }));
  return [session, ...subs];
}
