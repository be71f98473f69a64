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
import type { Diagnostic, Session } from '../../core/model.js';
import { codexIdOfFile, parentRollout, type RolloutLookup } from './locate.js';
import { withWire, type RequestSource, type Unmatched } from '../wirematch.js';
import { codexEvents, codexRequests } from './normalize.js';
import { readCodexFile, type CxRead } from './read.js';

export { codexHome, locateCodexRollouts } from './locate.js';

export interface ReadCodexOptions {
  /** Folder of captured request bodies of this session: wire evidence. */
  requestsDir?: RequestSource;
  /**
   * A fork's parent rollout as discovery resolved it (SessionRef.baseThread and basePath: a path,
   * or null for none found), used when `thread` is the one the rollout's history_base names.
   */
  base?: { thread: string; path: string | null };
  /** The run's parent search (locate.ts RolloutLookup) for a fork without `base`: a run reading several rollouts lists each Codex home once. */
  lookup?: RolloutLookup;
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
  const base = await historyBase(read, opts);
  const s: Session = {
    host: 'codex',
    id: read.meta?.id ?? codexIdOfFile(file),
    path: file,
    requests: codexRequests(read, base.read),
    diagnostics: [...read.diagnostics, ...base.diagnostics],
    ignored: read.ignored,
    events: codexEvents(read),
  };
  if (read.meta?.cwd) s.cwd = read.meta.cwd;
  const parent = parentOf(read);
  if (parent) s.parentId = parent;
  if (read.meta?.forked_from_id) {
    s.title = `fork of ${read.meta.forked_from_id}`;
    s.parentId ??= read.meta.forked_from_id;
  }
  if (!opts.requestsDir) return [s];
  return withWire([s], opts.requestsDir, unmatchedCodex(s.id));
}

/**
 * The parent rollout of a 0.169 fork (`session_meta.history_base.thread_id`): the rollout whose
 * name ends in `-<thread id>.jsonl` in the fork's own sessions tree (`sessions/YYYY/MM/DD`,
 * `archived_sessions`), as discovery found it (`opts.base`) or looked for now (locate.ts
 * parentRollout), read up to `end_ordinal_exclusive` lines. The result cache stamps that file
 * (SessionRef.baseThread, basePath).
 * @returns the base read, or a diagnostic when the parent is not found (the fork is then read alone)
 */
async function historyBase(read: CxRead, opts: ReadCodexOptions): Promise<{ read?: CxRead; diagnostics: Diagnostic[] }> {
  const hb = read.meta?.history_base;
  if (!hb) return { diagnostics: [] };
  const known = opts.base?.thread === hb.thread_id ? opts.base.path : undefined;
  const parent = (await parentRollout(read.file, hb.thread_id, known, opts.lookup))?.path;
  if (!parent) {
    return { diagnostics: [{ file: read.file, line: read.metaLine || 1, severity: 'warning', message: `fork of ${hb.thread_id}: its parent rollout (the history it goes on from) was not found beside it; the fork's requests hold only its own items` }] };
  }
  const base = await readCodexFile(parent, hb.end_ordinal_exclusive ?? Infinity);
  return { read: base, diagnostics: base.diagnostics.filter((d) => d.severity === 'error') };
}

/**
 * A body the rollout has no request for: a failed attempt (Codex records nothing for it), or
 * another call. A body sent for another conversation (its `client_metadata.thread_id`: a
 * sub-agent, a fork, the parent) belongs to that conversation's rollout and is left out.
 */
const unmatchedCodex = (id: string): Unmatched => (b) => {
  if (b.wire?.thread !== undefined && b.wire.thread !== id) return null;
  const status = typeof b.meta?.status === 'number' ? b.meta.status : 200;
  return { kind: 'agent', provider: 'openai', note: status >= 400 ? 'failed attempt: Codex records nothing for it in the rollout' : 'no rollout request for this body' };
};
