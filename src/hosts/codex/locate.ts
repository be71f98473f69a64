/**
 * Where Codex keeps its rollouts (reference/claude-code-codex.md §2.1): `$CODEX_HOME` (default
 * `~/.codex`), `sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl` and `archived_sessions/`.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';

export function codexHome(env: NodeJS.ProcessEnv, home: string): string {
  return env.CODEX_HOME || join(home, '.codex');
}

/** A rollout file name. */
export const ROLLOUT_FILE = /^rollout-.*\.jsonl$/;

/** `rollout-<local time>-<conversation id>.jsonl`: the id is the UUID the name ends with. */
const ROLLOUT_ID = /^rollout-.*-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/**
 * The conversation id a rollout's file name gives: the UUID after `rollout-<local time>-`, else
 * the name without `.jsonl` (a file Codex did not name). The one rule for a rollout whose
 * session_meta is missing or damaged (the reader, discovery, `codex:<id prefix>`).
 * @param file path or name of the `.jsonl` file
 */
export function codexIdOfFile(file: string): string {
  const stem = basename(file, '.jsonl');
  return ROLLOUT_ID.exec(stem)?.[1] ?? stem;
}

async function entries(dir: string): Promise<Array<{ name: string; dir: boolean }>> {
  try {
    return (await readdir(dir, { withFileTypes: true })).map((e) => ({ name: e.name, dir: e.isDirectory() })).sort((a, b) => (a.name < b.name ? -1 : 1));
  } catch {
    return [];
  }
}

/** Rollout files below `sessions/` (three date levels) and in `archived_sessions/` (any depth ≤ 3). */
export async function locateCodexRollouts(env: NodeJS.ProcessEnv, home: string): Promise<string[]> {
  const root = codexHome(env, home);
  const out: string[] = [];
  const walk = async (dir: string, depth: number) => {
    for (const e of await entries(dir)) {
      if (e.dir && depth < 3) await walk(join(dir, e.name), depth + 1);
      else if (!e.dir && ROLLOUT_FILE.test(e.name)) out.push(join(dir, e.name));
    }
  };
  await walk(join(root, 'sessions'), 0);
  await walk(join(root, 'archived_sessions'), 0);
  return out;
}

/**
 * A rollout of conversation `id` in the same Codex home as `file` (its sessions/ and
 * archived_sessions/ trees; a file outside them: its own folder), not `file` itself; null when
 * there is none. The one search for a fork's parent rollout (index.ts historyBase reads it,
 * codexBaseStamp stamps it), so the reader and the cache agree on which file it is.
 */
export async function findRolloutOf(file: string, id: string): Promise<string | null> {
  const parts = file.split(sep);
  const at = Math.max(parts.lastIndexOf('sessions'), parts.lastIndexOf('archived_sessions'));
  const home = at > 0 ? parts.slice(0, at).join(sep) : dirname(file);
  const candidates = at > 0 ? await locateCodexRollouts({ CODEX_HOME: home }, home) : (await readdir(home).catch(() => [] as string[])).map((n) => join(home, n));
  return candidates.find((f) => basename(f).endsWith(`-${id}.jsonl`) && f !== file) ?? null;
}

/**
 * The cache stamp of a fork's parent rollout (SessionRef.baseThread): `<path>:<size>:<mtime ms>`
 * of the rollout findRolloutOf finds now, or `absent`. A fork reads its parent's first lines, so
 * its result is dropped when the parent is removed, moved, rewritten or grows (growth is not told
 * apart from a rewrite: any change of size or mtime), or when a parent appears. Node builtins
 * only: the CLI's warm entry (src/cli/warm.ts) takes it again through identity.ts.
 * @param file the fork's rollout; @param threadId its `session_meta.history_base.thread_id`
 */
export async function codexBaseStamp(file: string, threadId: string): Promise<string> {
  const parent = await findRolloutOf(file, threadId);
  const st = parent ? await stat(parent).catch(() => null) : null;
  return parent && st?.isFile() ? `${parent}:${st.size}:${st.mtimeMs}` : 'absent';
}
