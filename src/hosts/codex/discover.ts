/**
 * Codex discovery: rollout files → SessionRefs from file metadata and the head/tail windows
 * (never a full read): the conversation id and cwd from `session_meta`, the first prompt from the
 * first user message event (`user_message`, or 0.169's `item_completed` UserMessage; Codex's own
 * context items are not prompts). A fork's parent rollout (SessionRef.basePath) is resolved after,
 * for all refs of a listing at once (locate.ts resolveForkParents: the registry's Codex discover,
 * from its own listing, and its settle after a walk).
 */
import { basename } from 'node:path';
import { nextLinesAre, objectOf, peekFile, readAt } from '../peek.js';
import type { SessionRef } from '../registry.js';
import { codexIdOfFile, ROLLOUT_FILE } from './locate.js';

const PROMPT_CHARS = 200;
/** Head window of a rollout, bytes: the session_meta line holds the whole instructions text (~20 KB on 0.169). */
const HEAD_BYTES = 64 * 1024;
/**
 * Head window for a session_meta line longer than HEAD_BYTES, bytes: Codex writes the whole
 * instructions text and `dynamic_tools` (every MCP tool's schema) into it, so it has no bound of
 * its own. A line longer still is recognized by its start (META_START) and read in full by the reader.
 */
const LONG_HEAD_BYTES = 4 * 1024 * 1024;
/** The start of a rollout line of type session_meta, as Codex writes it (`{"timestamp":…,"type":"session_meta",…`; 0.169 puts `ordinal` between). */
const META_START = /^(?:\xef\xbb\xbf)?\{"timestamp":(?:"[^"]{0,64}"|[^",{}]{0,64}),(?:"ordinal":\d{1,12},)?"type":"session_meta","payload":\{/;

/** A rollout line as the recorded rollouts write it: `{timestamp, type, payload: {…}}`. */
function isCodexLine(o: Record<string, unknown>): boolean {
  return typeof o.timestamp === 'string' && typeof o.type === 'string' && !!o.payload && typeof o.payload === 'object' && !Array.isArray(o.payload);
}

/** True when a file starts as a session_meta line (META_START). */
async function startsAsSessionMeta(file: string): Promise<boolean> {
  try {
    return META_START.test((await readAt(file, 0, 256)).toString('latin1'));
  } catch {
    return false;
  }
}

/**
 * The SessionRef of a Codex rollout, or null when the file is not one. Walking a folder, only
 * `rollout-*.jsonl` files are looked at; a file the user names may have any `.jsonl` name.
 */
export async function codexRef(file: string, explicit: boolean): Promise<SessionRef | null> {
  const name = basename(file);
  if (!name.endsWith('.jsonl') || (!explicit && !ROLLOUT_FILE.test(name))) return null;
  // The session_meta line holds the whole instructions text (~20 KB): a wider head window.
  let st = await peekFile(file, HEAD_BYTES);
  if (!st) return null;
  // Line 1 did not end in the window (a long session_meta): again with one that holds it.
  if (!st.lines.head.length && st.size > HEAD_BYTES) st = (await peekFile(file, Math.min(st.size, LONG_HEAD_BYTES))) ?? st;
  const { lines } = st;
  const first = lines.head.length ? objectOf(lines.head[0]) : undefined;
  let meta = first?.type === 'session_meta' ? (first.payload as Record<string, unknown> | undefined) : first && typeof first.id === 'string' && 'instructions' in first ? first : undefined;
  if (!meta || typeof meta !== 'object' || typeof meta.id !== 'string') {
    // A damaged line 1 (the session_meta): a rollout still, when the next lines are Codex's; the
    // reader reports line 1 and takes the id from the file name, as here. A session_meta longer
    // than LONG_HEAD_BYTES: a rollout by its start (the reader reads it whole; its id, cwd, first
    // prompt and fork parent are unknown to the listing).
    if (!nextLinesAre(lines.head, isCodexLine) && !(lines.head.length === 0 && (await startsAsSessionMeta(file)))) return null;
    meta = {};
  }
  const id = typeof meta.id === 'string' ? meta.id : codexIdOfFile(file);
  let prompt: string | null = null;
  for (const l of lines.head) {
    if (!l.includes('"user_message"') && !l.includes('"UserMessage"')) continue;
    const p = objectOf(l)?.payload as { type?: unknown; message?: unknown; item?: { type?: unknown; content?: unknown } } | undefined;
    // Older CLIs: a `user_message` event; 0.169: `item_completed` with a UserMessage item.
    let text: unknown = p?.type === 'user_message' ? p.message : undefined;
    if (p?.type === 'item_completed' && p.item?.type === 'UserMessage' && Array.isArray(p.item.content)) {
      text = (p.item.content as Array<{ text?: unknown }>).map((c) => (typeof c?.text === 'string' ? c.text : '')).join(' ');
    }
    if (typeof text === 'string' && text.trim()) {
      prompt = text.replace(/\s+/g, ' ').trim().slice(0, PROMPT_CHARS);
      break;
    }
  }
  const src = meta.source as { subagent?: { thread_spawn?: { parent_thread_id?: unknown } } } | undefined;
  const parent = src && typeof src === 'object' ? src.subagent?.thread_spawn?.parent_thread_id : undefined;
  // A 0.169 fork reads its history from the parent's rollout: the cache stamps that file too.
  const base = meta.history_base && typeof meta.history_base === 'object' ? (meta.history_base as { thread_id?: unknown }) : undefined;
  return {
    host: 'codex',
    key: file,
    path: file,
    id,
    title: null,
    firstPrompt: prompt,
    project: typeof meta.cwd === 'string' ? meta.cwd : null,
    mtimeMs: st.mtimeMs,
    size: st.size,
    // A sub-agent's parent, or the conversation a fork goes on from.
    parentId: typeof parent === 'string' ? parent : typeof meta.forked_from_id === 'string' ? meta.forked_from_id : null,
    ...(typeof base?.thread_id === 'string' && { baseThread: base.thread_id }),
  };
}
