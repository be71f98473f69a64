/**
 * Claude Code discovery: transcript files → SessionRefs from file metadata and a peek at the head
 * and tail (never a full read): the session id, cwd and first prompt from the first lines, a title
 * from a `custom-title` / `summary` line in either window. The ref's `stamp` also covers the
 * session's sub-agent files, so a result cache entry is dropped when a sub-agent file changes.
 */
import { basename } from 'node:path';
import { objectOf, peekFile } from '../peek.js';
import type { SessionRef } from '../registry.js';
import { AGENT_FILE, claudeStamp, SESSION_FILE } from './locate.js';

/** Line types that only Claude Code writes at the start of a transcript (reference §1.2; 2.1.328 recordings). */
const CC_TYPES = new Set(['user', 'assistant', 'system', 'summary', 'file-history-snapshot', 'queue-operation', 'attachment', 'custom-title', 'permission-mode', 'progress', 'last-prompt', 'mode', 'api-request', 'api-request-shape', 'api-request-blob']);
const PROMPT_CHARS = 200;

/** True for the object of a Claude Code transcript line. */
export function isClaudeLine(o: Record<string, unknown> | undefined): boolean {
  return !!o && typeof o.type === 'string' && CC_TYPES.has(o.type) && (typeof o.sessionId === 'string' || typeof o.uuid === 'string' || o.type === 'summary');
}

function promptOf(o: Record<string, unknown>): string | null {
  if (o.type !== 'user' || o.isMeta === true || o.isCompactSummary === true) return null;
  const m = o.message as { content?: unknown } | undefined;
  const c = m?.content;
  const text = typeof c === 'string' ? c : Array.isArray(c) ? c.map((b) => (b && typeof b === 'object' && (b as { type?: unknown }).type === 'text' ? String((b as { text?: unknown }).text ?? '') : '')).join(' ') : '';
  const t = text.replace(/\s+/g, ' ').trim();
  return t && !t.startsWith('<') ? t.slice(0, PROMPT_CHARS) : null;
}

/**
 * The SessionRef of a Claude Code main transcript, or null when the file is not one. Sub-agent
 * files (`agent-*.jsonl`) are read with their session and never listed alone, unless named.
 * @param explicit the user named this file: any `.jsonl` whose first JSON line is a Claude Code line
 */
export async function claudeRef(file: string, explicit: boolean): Promise<SessionRef | null> {
  const name = basename(file);
  if (!name.endsWith('.jsonl') || (!explicit && (!SESSION_FILE.test(name) || AGENT_FILE.test(name)))) return null;
  const st = await peekFile(file);
  if (!st) return null;
  const { lines } = st;
  const objs = lines.head.map(objectOf);
  const first = objs.find((o) => o !== undefined);
  if (!isClaudeLine(first)) return null;
  let id: string | undefined;
  let cwd: string | undefined;
  let prompt: string | null = null;
  let title: string | null = null;
  const scan = (o: Record<string, unknown> | undefined) => {
    if (!o) return;
    if (!id && typeof o.sessionId === 'string') id = o.sessionId;
    if (!cwd && typeof o.cwd === 'string') cwd = o.cwd;
    prompt ??= promptOf(o);
    if (o.type === 'custom-title' && typeof o.customTitle === 'string') title = o.customTitle;
    else if (o.type === 'summary' && typeof o.summary === 'string' && !title) title = o.summary;
  };
  objs.forEach(scan);
  lines.tail.map(objectOf).forEach(scan);
  id ??= basename(file, '.jsonl');
  return {
    host: 'claude-code',
    key: file,
    path: file,
    id,
    title,
    firstPrompt: prompt,
    project: cwd ?? null,
    mtimeMs: st.mtimeMs,
    size: st.size,
    parentId: null,
    stamp: await claudeStamp(file, id, st.size, st.mtimeMs),
  };
}

