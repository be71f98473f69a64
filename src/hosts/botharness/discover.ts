/**
 * BotHarness discovery: session logs → SessionRefs from file metadata, the log's first zstd frames
 * (at most 64 KiB read) and the ownership row in botharness.db; never a full read.
 *
 * The ref's `stamp` joins the log's size and mtime with the ownership row's persona snapshot
 * hash and time and the bot's memory-change count, so a cached result is dropped when either store
 * changes (the result cache compares the stamp instead of the log's bytes).
 */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { openRegular } from '../files.js';
import { LineSplitter, type Line } from '../linesplit.js';
import { nextLinesAre, objectOf as parse } from '../peek.js';
import type { SessionRef } from '../registry.js';
import { loadBotHarnessDb, type BotHarnessDb } from './db.js';
import { botharnessDbPath, decodeCwdDir, dshHomeOfLog, LOG_NAME } from './locate.js';
import { withHostValues } from '../numbers.js';
import { DSH_VALUES, DshHeaderSchema, type DshHeader } from './schema.js';
import { decodeFrame, frameEnd, isZstd, notZstdMessage } from './zstd.js';

/** Bytes read from the start of a log for discovery. */
const PEEK_BYTES = 64 * 1024;
/**
 * Decoded bytes a peek may produce from those (a 64 KiB start of zstd frames can expand to
 * gigabytes); the peek stops before the frame that would pass it.
 */
export const PEEK_DECODED_BYTES = 16 * 1024 * 1024;
/** Characters of the first prompt kept for display. */
const PROMPT_CHARS = 200;

/** A DSH event line (`{type:'<ns>/<event>', seq, time, data}`) or a chunk line (`{type:'…-chunks', data}`), as the recorded logs write them. */
function isDshEvent(o: Record<string, unknown>): boolean {
  if (typeof o.type !== 'string') return false;
  if (o.type.includes('/')) return typeof o.seq === 'number';
  return o.type.endsWith('-chunks') && !!o.data && typeof o.data === 'object';
}

/** What a peek at the start of a log found. */
export interface DshPeek {
  header: DshHeader | null;
  /** The file is named `.zstd` but is not zstd (zstd.ts notZstdMessage): claimed, its read says so. */
  notZstd?: boolean;
  /** No DSH header on line 1, but the lines after it are DSH events: a log whose line 1 is damaged. */
  eventsAfterDamagedHeader: boolean;
  title: string | null;
  firstPrompt: string | null;
}

/**
 * The header, title and first prompt found in the first PEEK_BYTES of a log (complete zstd frames
 * or complete lines only; zstd frames while their decoded bytes stay within `decodedBudget`: one that would pass it, or does
 * not decode, is passed over).
 * @throws when the file cannot be opened or read
 */
export async function peekDshLog(file: string, decodedBudget = PEEK_DECODED_BYTES): Promise<DshPeek> {
  const { handle, size } = await openRegular(file);
  let buf: Buffer;
  try {
    buf = Buffer.alloc(Math.min(size, PEEK_BYTES));
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    buf = buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  // The head's lines (linesplit.ts, as the full read splits them): of every frame that decodes, or
  // of the plain bytes, a partial last line dropped when the file goes on past the window.
  const splitter = new LineSplitter();
  const lines: string[] = [];
  const take = (ls: Line[]) => {
    for (const l of ls) lines.push(l.text);
  };
  if (isZstd(buf)) {
    let budget = decodedBudget;
    for (let pos = 0; pos < buf.length; ) {
      const f = frameEnd(buf, pos);
      if (f.kind !== 'frame') break;
      if (!f.skippable) {
        const before = splitter.mark();
        const frameLines: Line[] = [];
        const r = decodeFrame(buf.subarray(pos, f.end), f, budget, (chunk) => {
          for (const l of splitter.push(chunk)) frameLines.push(l);
        });
        // A frame that fails or passes the budget is passed over (the full read reports it).
        if (r.kind === 'ok') {
          budget -= r.bytes;
          take(frameLines);
        } else splitter.restore(before);
      }
      pos = f.end;
    }
    take(splitter.end());
  } else {
    take(splitter.push(buf));
    if (size <= buf.length) take(splitter.end());
  }
  const h = lines[0] !== undefined ? parse(lines[0]) : undefined;
  const header = h ? DshHeaderSchema.safeParse(withHostValues(h, DSH_VALUES)) : undefined;
  const peek: DshPeek = { header: header?.success ? header.data : null, eventsAfterDamagedHeader: false, title: null, firstPrompt: null };
  if (file.endsWith('.zstd') && notZstdMessage(buf) !== null) peek.notZstd = true;
  if (!peek.header) peek.eventsAfterDamagedHeader = nextLinesAre(lines, isDshEvent);
  for (const l of lines.slice(1)) {
    if (l.includes('"session/title"')) {
      const e = parse(l);
      const t = (e?.data as { title?: unknown } | undefined)?.title;
      if (typeof t === 'string' && t.trim()) peek.title = t.trim();
    }
    if (!peek.firstPrompt && l.includes('"user/message"')) {
      const d = parse(l)?.data as { content?: unknown; text?: unknown } | undefined;
      const parts = Array.isArray(d?.content) ? d.content : [];
      const t = (typeof d?.text === 'string' ? d.text : parts.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join(' '))
        .replace(/\s+/g, ' ')
        .trim();
      if (t) peek.firstPrompt = t.slice(0, PROMPT_CHARS);
    }
  }
  return peek;
}

/** The ownership-derived part of a stamp (12 hex), or '-' when the Session has no row. */
function dbStamp(db: BotHarnessDb | null, id: string): string {
  const row = db?.ownership.get(id);
  if (!db || !row) return db ? `db:${db.snapshotColumns ? 1 : 0}:-` : 'nodb';
  const mc = row.botSlug ? (db.memoryChanges.get(row.botSlug)?.length ?? 0) : 0;
  const h = createHash('sha256').update(JSON.stringify([row.botSlug, row.provenance, row.body, row.takenAt, mc, db.snapshotColumns])).digest('hex');
  return h.slice(0, 12);
}

/**
 * The SessionRef of a DSH session log, or null when the file is not one. A file named like a log
 * (`session[.vN].jsonl[.zstd]`) is claimed when its header is a DSH header, or always when the user
 * named it (`explicit`; its problems then become diagnostics), or when line 1 is damaged but the lines
 * after it are DSH events. A raw `session.jsonl` whose header is not DSH's and whose lines are not DSH
 * events is left to the other hosts.
 * @param dbFile botharness.db to look the Session up in (default: the one of the log's DSH home)
 */
export async function botharnessRef(file: string, explicit: boolean, dbFile?: string): Promise<SessionRef | null> {
  const name = basename(file);
  if (!LOG_NAME.test(name)) return null;
  let st;
  try {
    st = await stat(file);
  } catch {
    return null;
  }
  if (!st.isFile()) return null;
  let peek: DshPeek;
  try {
    peek = await peekDshLog(file);
  } catch {
    if (!explicit) return null;
    peek = { header: null, eventsAfterDamagedHeader: false, title: null, firstPrompt: null };
  }
  // A `.zstd` log that is not zstd is claimed as a named one is: its read says so (read.ts), in a walk too.
  if (!peek.header && !peek.eventsAfterDamagedHeader && !peek.notZstd && (!explicit || !name.endsWith('.zstd'))) {
    if (!explicit || name === 'session.jsonl') return null;
  }
  const home = dshHomeOfLog(file);
  const dbPath = dbFile ?? (home ? botharnessDbPath(home) : null);
  const db = dbPath ? await loadBotHarnessDb(dbPath) : null;
  const id = peek.header?.id ?? basename(dirname(file));
  const row = db?.ownership.get(id);
  return {
    host: 'botharness',
    key: file,
    path: file,
    id,
    title: peek.title,
    firstPrompt: peek.firstPrompt,
    project: peek.header?.cwd ?? row?.cwdReference ?? decodeCwdDir(basename(dirname(dirname(file)))) ?? null,
    mtimeMs: st.mtimeMs,
    size: st.size,
    parentId: row?.parentSessionId ?? null,
    stamp: `${st.size}:${st.mtimeMs}:${dbStamp(db, id)}`,
  };
}
