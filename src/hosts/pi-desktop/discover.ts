/**
 * PI-Desktop discovery: transcripts → SessionRefs from file metadata, the head of the file (≤ 16 KiB:
 * the header and the first user prompt) and the `sessions` row of pi.sqlite; never a full read.
 * The ref's `stamp` joins the transcript's size and mtime with its revisions file's and pi.sqlite's
 * (titles and route flags live there), so a cached result is dropped when any of them changes.
 */
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { nextLinesAre, objectOf, peekFile } from '../peek.js';
import type { SessionRef } from '../registry.js';
import { loadPiDesktopDb } from './db.js';
import { dataDirOf, dbPathOf, revisionsOf, TRANSCRIPT_NAME } from './locate.js';
import { withHostValues } from '../numbers.js';
import { HeaderSchema, PD_VALUES } from './schema.js';

const PROMPT_CHARS = 200;

/** A PI-Desktop message or compaction line (schema.ts): Pi's lines carry `message`, never `blocks`. */
function isPdLine(o: Record<string, unknown>): boolean {
  return (o.type === 'message' && typeof o.role === 'string' && Array.isArray(o.blocks)) || (o.type === 'compaction' && typeof o.throughMessageId === 'string');
}

async function stampOf(file: string): Promise<string> {
  try {
    const s = await stat(file);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return '-';
  }
}

/**
 * The SessionRef of a PI-Desktop transcript, or null when the file is not one: a `<id>.jsonl`
 * (not `.revisions.jsonl`) whose line 1 is a PI-Desktop header (`{"type":"session","schema",
 * "sessionId"}`), in a `sessions/` folder unless the user named it (`explicit`). Pi's headers have
 * `id`, not `sessionId`, so the two never claim each other's files.
 */
export async function piDesktopRef(file: string, explicit: boolean): Promise<SessionRef | null> {
  if (!TRANSCRIPT_NAME.test(basename(file))) return null;
  const st = await peekFile(file);
  if (!st) return null;
  const lines = st.lines.head;
  const h = lines[0] !== undefined ? HeaderSchema.safeParse(withHostValues(objectOf(lines[0]), PD_VALUES)) : undefined;
  // A damaged line 1 (the header): still a transcript when the next lines are PI-Desktop's; the
  // reader reports line 1 and takes the id from the file name, as here.
  const sessionId = h?.success ? h.data.sessionId : nextLinesAre(lines, isPdLine) ? TRANSCRIPT_NAME.exec(basename(file))![1] : null;
  if (sessionId === null) return null;
  // PI-Desktop keeps transcripts in `<data>/sessions/`: a walk claims only those; a file the user names is read wherever it is.
  if (!explicit && dataDirOf(file) === null) return null;
  let firstPrompt: string | null = null;
  for (const l of lines.slice(1)) {
    if (!l.includes('"user"')) continue;
    const o = objectOf(l);
    const meta = o?.meta as { parentToolCallId?: unknown } | undefined;
    if (o?.type !== 'message' || o.role !== 'user' || meta?.parentToolCallId !== undefined) continue;
    const text = (Array.isArray(o.blocks) ? o.blocks : [])
      .map((b) => (b && typeof b === 'object' && (b as { type?: unknown }).type === 'text' ? String((b as { text?: unknown }).text ?? '') : ''))
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim();
    if (text) {
      firstPrompt = text.slice(0, PROMPT_CHARS);
      break;
    }
  }
  const data = dataDirOf(file);
  const dbFile = data ? dbPathOf(data) : null;
  const db = dbFile ? await loadPiDesktopDb(dbFile) : null;
  const row = db?.sessions.get(sessionId);
  return {
    host: 'pi-desktop',
    key: file,
    path: file,
    id: sessionId,
    title: row?.title ?? null,
    firstPrompt,
    project: row?.projectPath ?? null,
    mtimeMs: st.mtimeMs,
    size: st.size,
    parentId: null,
    stamp: `${st.size}:${st.mtimeMs}:${await stampOf(revisionsOf(file))}:${dbFile ? await stampOf(dbFile) : '-'}`,
  };
}
