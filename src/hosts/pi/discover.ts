/**
 * Pi discovery: session files → SessionRefs from file metadata and a peek at the file's head and
 * tail (never a full read). Thousands of files are listed in well under a second: one `stat`, one
 * ≤ 16 KiB read of the head and one ≤ 16 KiB read of the tail per file.
 *
 * What a peek can tell (reference/pi.md §1): the header line (`{"type":"session","id","cwd",…}`),
 * the first user prompt (normally within the first few entries), and a session name
 * (`session_info` entry) when one lies in the head or tail window. A name set in the middle of a
 * long session is only known after analysis.
 */
import { stat } from 'node:fs/promises';
import { splitLines } from '../linesplit.js';
import { objectOf as parse, PEEK_BYTES, readAt, windowLines } from '../peek.js';
import { basename, dirname } from 'node:path';
import type { Claim, SessionRef } from '../registry.js';
import { decodeCwdDir, piSessionIdOfFile } from './locate.js';
import { withHostValues } from '../numbers.js';
import { HeaderSchema, PI_VALUES } from './schema.js';

/** Bytes read at each end of a file for discovery. */
/** Characters of the first prompt kept for display. */
const PROMPT_CHARS = 200;

/** What a peek at a Pi file found. `header` is null when line 1 is not a Pi session header. */
export interface PiPeek {
  header: { id: string; cwd?: string } | null;
  /** True when line 1 is JSON (whatever it holds); false for a garbage or empty first line. */
  firstLineIsJson: boolean;
  title: string | null;
  firstPrompt: string | null;
  /** True when the whole file is whitespace (0 bytes or only blank lines): nothing any host wrote. */
  blank: boolean;
}

function promptOf(entry: Record<string, unknown>): string | null {
  const m = entry.message as { role?: unknown; content?: unknown } | undefined;
  if (entry.type !== 'message' || !m || m.role !== 'user') return null;
  const text = typeof m.content === 'string'
    ? m.content
    : Array.isArray(m.content)
      ? m.content.map((c) => (c && typeof c === 'object' && (c as { type?: unknown }).type === 'text' ? String((c as { text?: unknown }).text ?? '') : '')).join(' ')
      : '';
  const t = text.replace(/\s+/g, ' ').trim();
  return t ? t.slice(0, PROMPT_CHARS) : null;
}

/** True when `b` holds only JSON whitespace after an optional UTF-8 BOM (stops at the first other byte). */
function isBlank(b: Uint8Array): boolean {
  const from = b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
  for (let i = from; i < b.length; i++) if (b[i] !== 0x20 && b[i] !== 0x0a && b[i] !== 0x0d && b[i] !== 0x09) return false;
  return true;
}

/**
 * Peeks at a Pi session file's head and tail.
 * @throws when the file cannot be opened or read
 */
export async function peekPiFile(file: string, size: number): Promise<PiPeek> {
  const head = await readAt(file, 0, Math.min(size, PEEK_BYTES));
  const headLines = windowLines(head, true);
  // A header line longer than the window: read it alone, up to 64 KiB.
  let first = headLines[0];
  if (first === undefined && size > 0) {
    const wide = await readAt(file, 0, Math.min(size, 64 * 1024));
    first = splitLines(wide)[0]?.text;
  }
  const h = first === undefined ? undefined : parse(first);
  const parsed = h ? HeaderSchema.safeParse(withHostValues(h, PI_VALUES)) : undefined;
  let title: string | null = null;
  let firstPrompt: string | null = null;
  const scan = (lines: string[]) => {
    for (const l of lines) {
      if (!firstPrompt && l.includes('"user"')) {
        const e = parse(l);
        if (e) firstPrompt = promptOf(e);
      }
      if (l.includes('"session_info"')) {
        const e = parse(l);
        if (e?.type === 'session_info') title = typeof e.name === 'string' && e.name.trim() ? e.name.trim() : null;
      }
    }
  };
  scan(headLines.slice(1));
  if (size > PEEK_BYTES) {
    const pos = Math.max(PEEK_BYTES, size - PEEK_BYTES);
    scan(windowLines(await readAt(file, pos, size - pos), false));
  }
  return {
    header: parsed?.success ? { id: parsed.data.id, cwd: parsed.data.cwd } : null,
    firstLineIsJson: h !== undefined,
    title,
    firstPrompt,
    blank: size <= PEEK_BYTES && isBlank(head),
  };
}

/**
 * The SessionRef of a Pi file, or null when the file is not one. `claim` (registry Claim): `named`
 * = the user named the file itself: then anything ending in `.jsonl` is read, and its problems
 * become diagnostics. When walking a folder (`walk`), a `.jsonl` whose first line is JSON but not a
 * Pi header belongs to another tool (e.g. Claude Code transcripts) and is not claimed, nor is an
 * empty one (0 bytes or only whitespace); one whose first line is not JSON at all is claimed, so a
 * damaged session is reported rather than hidden.
 * A file an editor opened (`opened`) is claimed only with a Pi header.
 * @param cwdFromDir working directory decoded from the `--<cwd>--` folder, when the header has none
 */
export async function piRef(file: string, claim: Claim): Promise<SessionRef | null> {
  const explicit = claim === 'named';
  let st;
  try {
    st = await stat(file);
  } catch {
    return null;
  }
  if (st.isDirectory()) return null;
  // A FIFO, socket or device named like a session, met in a walk, is claimed without a peek (which
  // could block or read forever): opening it reports what it is. Named by the user, the caller
  // says so itself (open.ts).
  const special = !st.isFile();
  if (special && claim !== 'walk') return null;
  let peek: PiPeek = { header: null, firstLineIsJson: false, title: null, firstPrompt: null, blank: false };
  if (!special) {
    try {
      peek = await peekPiFile(file, st.size);
    } catch {
      if (!explicit) return null;
    }
  }
  if (!explicit && !peek.header && (peek.firstLineIsJson || claim === 'opened')) return null;
  // An empty file met in a walk is no session of any host (a tool that crashed before its first
  // line, a placeholder): skipped, as another tool's file is. Named, it is read and reported.
  if (claim === 'walk' && peek.blank) return null;
  return {
    host: 'pi',
    key: file,
    path: file,
    id: peek.header?.id ?? piSessionIdOfFile(file),
    title: peek.title,
    firstPrompt: peek.firstPrompt,
    project: peek.header?.cwd ?? decodeCwdDir(basename(dirname(file))) ?? null,
    mtimeMs: st.mtimeMs,
    size: st.size,
    parentId: null,
  };
}
