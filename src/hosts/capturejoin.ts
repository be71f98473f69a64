/**
 * The capture join: finds, in the capture proxy's folders (src/capture/store.ts), the request
 * bodies of a session read from its transcript, so the session is analyzed in wire mode without
 * `--requests`. The host's own wire matcher (pi/wire.ts, wirematch.ts) then pairs bodies with
 * requests; this module only decides which bodies are the session's.
 *
 * Looked at: the folder `session-<id>` of each session id, and the day folders (`YYYY-MM-DD`,
 * UTC) that the session's request times touch. A body is the session's when
 *  1. it is in the folder of one of the session ids or of a parent session's id, or its meta's
 *     `sessionId` is one of the session ids (the host sent its session header), or
 *  2. its meta's `responseId` is the response id of one of the session's requests, or
 *  3. it was sent within the session's time window (first request − 15 min … last + 5 min), on a
 *     model the session used, and its first message is byte-identical to the first message of one
 *     of the session's requests (the transcript's messages are rebuilt as sent), or
 *  4. it lies, in its folder, between two bodies taken by 1–3, in a run of refused bodies (a
 *     summary or retry the transcript has no entry for), same window and model, none of them
 *     sent with a session header and no two of them with the same first message.
 * Rule 3 and 4 keep another session's bodies out of a shared day folder: a body of another
 * conversation has another first message, and its neighbours are that conversation's.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { folderName } from '../capture/store.js';
import type { Session } from '../core/model.js';
import { checkedWireBody } from '../core/wire.js';
import { FILE_LIMITS, readRegularFile } from './files.js';
import { readMetaObject } from './meta.js';
import { AFTER_MS, BEFORE_MS, daysBetween } from './capturestamp.js';
import { bodyFirstMessageHash, firstMessageHash } from './wirematch.js';

// The roots, the join's time window and the cache stamp live in capturestamp.ts (no parser: the
// CLI's warm entry checks cache identities with it).
export { CAPTURE_JOINED, captureRoots, captureStamp, headStartMs } from './capturestamp.js';

/** What the join needs of one saved body (from its meta; the body itself only for rule 3). */
interface Entry {
  file: string;
  n: number;
  receivedAtMs: number | null;
  model: string | null;
  responseId: string | null;
  sessionId: string | null;
}

const BODY = /^(\d+)-[a-z-]+\.body\.json$/;
/** Folder listings with their metas, by folder and mtime (a process analyzes many sessions of one day). */
const folderCache = new Map<string, { mtimeMs: number; entries: Entry[] }>();

async function folderEntries(dir: string): Promise<Entry[]> {
  let st;
  try {
    st = await stat(dir);
  } catch {
    return [];
  }
  if (!st.isDirectory()) return [];
  const hit = folderCache.get(dir);
  if (hit && hit.mtimeMs === st.mtimeMs) return hit.entries;
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => BODY.test(n)).sort();
  const entries: Entry[] = [];
  const ignored: never[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const meta = await readMetaObject(file.replace(/\.body\.json$/, '.meta.json'), ignored);
    const str = (v: unknown) => (typeof v === 'string' && v ? v : null);
    const t = str(meta?.receivedAt) ? Date.parse(meta!.receivedAt as string) : NaN;
    entries.push({ file, n: Number(BODY.exec(name)![1]), receivedAtMs: Number.isFinite(t) ? t : null, model: str(meta?.model), responseId: str(meta?.responseId), sessionId: str(meta?.sessionId) });
  }
  folderCache.set(dir, { mtimeMs: st.mtimeMs, entries });
  return entries;
}

/**
 * First-message hashes by body file and send time (a saved body is never rewritten; a name reused
 * after pruning emptied its folder belongs to a request with another send time). At most
 * MAX_HASHES kept (then cleared): a long-lived extension host does not grow without bound.
 */
const firstHashes = new Map<string, string | null>();
const MAX_HASHES = 100_000;

async function entryFirstMessageHash(e: Entry): Promise<string | null> {
  const key = `${e.receivedAtMs}\u0000${e.file}`;
  if (firstHashes.has(key)) return firstHashes.get(key)!;
  const h = await hashFirstMessage(e.file);
  if (firstHashes.size >= MAX_HASHES) firstHashes.clear();
  firstHashes.set(key, h);
  return h;
}

async function hashFirstMessage(file: string): Promise<string | null> {
  try {
    return bodyFirstMessageHash(checkedWireBody(await readRegularFile(file, FILE_LIMITS.body)).wire.blocks);
  } catch {
    return null;
  }
}

/** True when no two bodies of `run` have the same (known) first message. */
async function distinctFirstMessages(run: Entry[]): Promise<boolean> {
  const seen = new Set<string>();
  for (const e of run) {
    const h = await entryFirstMessageHash(e);
    if (h === null) continue;
    if (seen.has(h)) return false;
    seen.add(h);
  }
  return true;
}

/**
 * The captured body files of the sessions of one ref (a main session and its sub-agents), in send
 * order (receive time, then folder and number). Empty when there are none (or no root exists).
 * Never throws: unreadable folders and files are skipped.
 */
export async function capturedBodiesFor(sessions: Session[], roots: string[]): Promise<string[]> {
  const requests = sessions.flatMap((s) => s.requests);
  const ids = new Set(sessions.map((s) => s.id).filter(Boolean));
  const parents = sessions.map((s) => s.parentId).filter((x): x is string => !!x);
  const responseIds = new Set(requests.map((r) => r.responseId).filter((x): x is string => !!x));
  const models = new Set(requests.map((r) => r.model));
  let lo = Infinity;
  let hi = -Infinity;
  for (const r of requests) {
    if (r.timeMs === null) continue;
    lo = Math.min(lo, r.timeMs);
    hi = Math.max(hi, r.timeMs);
  }
  const from = lo <= hi ? lo - BEFORE_MS : null;
  const to = lo <= hi ? hi + AFTER_MS : null;
  const inWindow = (e: Entry) => from !== null && to !== null && e.receivedAtMs !== null && e.receivedAtMs >= from && e.receivedAtMs <= to;
  let firsts: Set<string> | null = null;
  const firstMessages = () => (firsts ??= new Set(requests.map((r) => firstMessageHash(r.tail)).filter((x): x is string => x !== null)));

  const taken: Entry[] = [];
  for (const root of roots) {
    // 1: the session's own folders, and its parent's (a Codex sub-agent sends its parent's session
    // id; the host's matcher then keeps only the bodies of its own conversation).
    for (const id of new Set([...ids, ...parents])) for (const e of await folderEntries(join(root, folderName(id, 0)))) taken.push(e);
    if (from === null || to === null) continue;
    for (const day of daysBetween(from, to)) {
      const entries = await folderEntries(join(root, day));
      const state = new Map<Entry, boolean>();
      for (const e of entries) {
        if ((e.sessionId && ids.has(e.sessionId)) || (e.responseId && responseIds.has(e.responseId))) state.set(e, true);
        else if (!inWindow(e) || !e.model || !models.has(e.model)) continue;
        else {
          const h = await entryFirstMessageHash(e);
          state.set(e, h !== null && firstMessages().has(h));
        }
      }
      // 4: runs of refused bodies between two taken ones, none of them sent with another session's
      // header, and no two of them with the same first message (that is another conversation of
      // its own, e.g. a session resumed after others ran: its summaries and retries are one-offs).
      const seq = entries.filter((e) => state.has(e));
      for (let i = 1; i < seq.length; i++) {
        if (state.get(seq[i]) || !state.get(seq[i - 1])) continue;
        let j = i;
        while (j < seq.length && !state.get(seq[j])) j++;
        const run = seq.slice(i, j);
        if (j < seq.length && run.every((e) => !e.sessionId) && (await distinctFirstMessages(run))) for (const e of run) state.set(e, true);
        i = j;
      }
      for (const e of entries) if (state.get(e)) taken.push(e);
    }
  }
  const seen = new Set<string>();
  return taken
    .filter((e) => !seen.has(e.file) && seen.add(e.file))
    .sort((a, b) => (a.receivedAtMs ?? 0) - (b.receivedAtMs ?? 0) || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
    .map((e) => e.file);
}
