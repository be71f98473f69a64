/**
 * The Codex host reader (rollouts of `@openai/codex`; reference/claude-code-codex.md §2).
 *
 *   locateCodexRollouts(env, home)           → rollout files (locate.ts)
 *   readCodexSession(file, {requestsDir?})   → the session (read.ts → normalize.ts [→ wirematch.ts])
 *
 * A fork or a sub-agent is a rollout of its own with its own conversation id, so its own cache
 * key (Codex sends `prompt_cache_key` = conversation id); a sub-agent's parent (session_meta
 * `source.subagent.thread_spawn.parent_thread_id`) becomes `parentId`.
 */
import { basename } from 'node:path';
import type { Session } from '../../core/model.js';
import { withWire, type RequestSource, type Unmatched } from '../wirematch.js';
import { codexEvents, codexRequests } from './normalize.js';
import { readCodexFile, type CxRead } from './read.js';

export { codexHome, locateCodexRollouts } from './locate.js';

export interface ReadCodexOptions {
  /** Folder of captured request bodies of this session: wire evidence. */
  requestsDir?: RequestSource;
}

/** Parent conversation of a sub-agent rollout, if session_meta names one. */
export function parentOf(read: CxRead): string | undefined {
  const s = read.meta?.source as { subagent?: { thread_spawn?: { parent_thread_id?: unknown } } } | undefined;
  const p = s && typeof s === 'object' ? s.subagent?.thread_spawn?.parent_thread_id : undefined;
  return typeof p === 'string' ? p : undefined;
}

/**
 * Reads one rollout.
 * @returns [session]; never throws for bad content (diagnostics with file and line)
 */
export async function readCodexSession(file: string, opts: ReadCodexOptions = {}): Promise<Session[]> {
  const read = await readCodexFile(file);
  const s: Session = {
    host: 'codex',
    id: read.meta?.id ?? basename(file, '.jsonl'),
    path: file,
    requests: codexRequests(read),
    diagnostics: read.diagnostics,
    ignored: read.ignored,
    events: codexEvents(read),
  };
  if (read.meta?.cwd) s.cwd = read.meta.cwd;
  const parent = parentOf(read);
  if (parent) s.parentId = parent;
  if (read.meta?.forked_from_id) s.title = `fork of ${read.meta.forked_from_id}`;
  if (!opts.requestsDir) return [s];
  return withWire([s], opts.requestsDir, unmatchedCodex);
}

/** A body the rollout has no request for: a failed attempt (Codex records nothing for it), or another call. */
const unmatchedCodex: Unmatched = (b) => {
  const status = typeof b.meta?.status === 'number' ? b.meta.status : 200;
  return { kind: 'agent', provider: 'openai', note: status >= 400 ? 'failed attempt: Codex records nothing for it in the rollout' : 'no rollout request for this body' };
};
