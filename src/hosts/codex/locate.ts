/**
 * Where Codex keeps its rollouts (reference/claude-code-codex.md §2.1): `$CODEX_HOME` (default
 * `~/.codex`), `sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl` and `archived_sessions/`.
 */
import type { Stats } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import type { SessionRef } from '../registry.js';

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

/** One entry of a directory listing: its name and whether it is a directory (a symbolic link is not). */
export interface ListedEntry {
  name: string;
  dir: boolean;
}

/**
 * Directories a folder walk (registry.ts) has just listed, by path, each with its entries in
 * name order as `readdir(…, { withFileTypes: true })` gave them, keeping at least those
 * listedForRollouts keeps: what the parent search takes instead of listing a Codex home again.
 * A directory the walk did not list (not entered: claimed by a host, too deep, skipped) is absent.
 */
export type ListedDirs = ReadonlyMap<string, readonly ListedEntry[]>;

/**
 * The entries a walk must keep of a listed directory for locateCodexRollouts to go by it: every
 * directory, every `.jsonl` file (rollouts), and anything named `sessions` or `archived_sessions`
 * that is no directory (a symbolic link there is listed through, which the walk does not enter).
 */
export function listedForRollouts(name: string, dir: boolean): boolean {
  return dir || name.endsWith('.jsonl') || name === 'sessions' || name === 'archived_sessions';
}

/**
 * A directory's entries in name order (none when it cannot be listed): from `listed` when the
 * walk listed it; none, without a look, when the walk listed its parent and that has no entry of
 * its name (a Codex home without `archived_sessions/`); else listed now.
 */
async function entries(dir: string, listed?: ListedDirs): Promise<ListedEntry[]> {
  const known = listed?.get(dir);
  if (known) return known as ListedEntry[];
  const up = listed?.get(dirname(dir));
  if (up && !up.some((e) => e.name === basename(dir))) return [];
  try {
    return (await readdir(dir, { withFileTypes: true })).map((e) => ({ name: e.name, dir: e.isDirectory() })).sort((a, b) => (a.name < b.name ? -1 : 1));
  } catch {
    return [];
  }
}

/**
 * Rollout files below `sessions/` (three date levels) and in `archived_sessions/` (any depth ≤ 3).
 * @param listed directories a walk has just listed (their listing is taken, not made again)
 */
export async function locateCodexRollouts(env: NodeJS.ProcessEnv, home: string, listed?: ListedDirs): Promise<string[]> {
  const root = codexHome(env, home);
  const out: string[] = [];
  const walk = async (dir: string, depth: number) => {
    for (const e of await entries(dir, listed)) {
      if (e.dir && depth < 3) await walk(join(dir, e.name), depth + 1);
      else if (!e.dir && ROLLOUT_FILE.test(e.name)) out.push(join(dir, e.name));
    }
  };
  await walk(join(root, 'sessions'), 0);
  await walk(join(root, 'archived_sessions'), 0);
  return out;
}

/** A conversation id as Codex writes it (a UUID): rollouts are indexed by the one their name ends with. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NAME_UUID = /-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/**
 * Where findRolloutOf looks beside `file`: the Codex home whose `sessions/` or
 * `archived_sessions/` tree holds it (the last such folder of its path), or, outside one, its own
 * folder. `key` names the scope in a RolloutLookup.
 */
function scopeOf(file: string): { key: string; home: string } | { key: string; dir: string } {
  const parts = file.split(sep);
  const at = Math.max(parts.lastIndexOf('sessions'), parts.lastIndexOf('archived_sessions'));
  if (at > 0) {
    const home = parts.slice(0, at).join(sep);
    return { key: `home\0${home}`, home };
  }
  const dir = dirname(file);
  return { key: `dir\0${dir}`, dir };
}

/** The candidates of one scope, in search order, and those whose name ends in `-<UUID>.jsonl` by that UUID. */
interface Listing {
  files: string[];
  byId: Map<string, string[]>;
}

function listingOf(files: string[]): Listing {
  const byId = new Map<string, string[]>();
  for (const f of files) {
    const id = NAME_UUID.exec(basename(f))?.[1];
    if (id === undefined) continue;
    const same = byId.get(id);
    if (same) same.push(f);
    else byId.set(id, [f]);
  }
  return { files, byId };
}

/**
 * The search for a fork's parent rollout, memoized for one run (a discovery, a warm entry's
 * check, a folder read): each scope (a Codex home's sessions/ and archived_sessions/ trees, or a
 * folder outside one) is listed at most once, then indexed by conversation id, so N forks cost one
 * listing, not one per fork and per look (a cold `analyze --json` of one fork listed its Codex home
 * 6 times: the reader and each cache identity searched). Make one per run and let it go with the
 * run: it holds every path of the scopes it listed (no bound of its own). Node builtins only (the
 * CLI's warm entry uses it).
 */
export class RolloutLookup {
  private readonly listings = new Map<string, Promise<Listing>>();

  /** @param listed directories a folder walk has just listed (registry.ts): a Codex home among them is not listed again */
  constructor(private readonly listed?: ListedDirs) {}

  /**
   * Makes `files` (locateCodexRollouts of Codex home `root`, just taken: discovery's listing) the
   * candidates of that home, so a fork in it is resolved without listing it again. Ignored when
   * `root` is not the home a rollout path below it gives (scopeOf), e.g. a relative `.`.
   */
  seed(root: string, files: string[]): void {
    const scope = scopeOf(join(root, 'sessions', 'x.jsonl'));
    if (!('home' in scope) || join(scope.home, 'sessions') !== join(root, 'sessions') || join(scope.home, 'archived_sessions') !== join(root, 'archived_sessions')) return;
    this.listings.set(scope.key, Promise.resolve(listingOf(files)));
  }

  /**
   * A rollout of conversation `id` in the same Codex home as `file` (its sessions/ and
   * archived_sessions/ trees, in locateCodexRollouts order; a file outside them: its own folder,
   * any name), not `file` itself; null when there is none. A name that ends in `-<id>.jsonl`.
   */
  async find(file: string, id: string): Promise<string | null> {
    const scope = scopeOf(file);
    let listing = this.listings.get(scope.key);
    if (!listing) {
      listing = ('home' in scope ? locateCodexRollouts({ CODEX_HOME: scope.home }, scope.home, this.listed) : readdir(scope.dir).then((ns) => ns.map((n) => join(scope.dir, n)), () => [] as string[])).then(listingOf);
      this.listings.set(scope.key, listing);
    }
    const { files, byId } = await listing;
    const named = UUID.test(id) ? (byId.get(id) ?? []) : files.filter((f) => basename(f).endsWith(`-${id}.jsonl`));
    return named.find((f) => f !== file) ?? null;
  }
}

/**
 * A rollout of conversation `id` in the same Codex home as `file` (RolloutLookup.find), looked
 * for now: one listing of that home per call unless `lookup` (the run's) has it already.
 */
export function findRolloutOf(file: string, id: string, lookup: RolloutLookup = new RolloutLookup()): Promise<string | null> {
  return lookup.find(file, id);
}

/**
 * The parent rollout a fork reads (`session_meta.history_base.thread_id` = `threadId`), the one
 * file the reader (index.ts historyBase) and the cache stamp (codexBaseStamp) both take, with its
 * stat (null when it cannot be stat-ed). `basePath` is SessionRef.basePath: a path (discovery
 * found the parent there: taken as it is while it exists; gone, the parent moved since the ref
 * was listed: looked for again), null (discovery looked and found none: no search), undefined
 * (a ref not resolved by discovery: looked for now, through `lookup` when given).
 * @returns null when there is no parent rollout
 */
export async function parentRollout(file: string, threadId: string, basePath?: string | null, lookup?: RolloutLookup): Promise<{ path: string; st: Stats | null } | null> {
  if (basePath === null) return null;
  if (basePath !== undefined) {
    const st = await stat(basePath).catch(() => null);
    if (st) return { path: basePath, st };
  }
  const path = await findRolloutOf(file, threadId, lookup);
  return path === null ? null : { path, st: await stat(path).catch(() => null) };
}

/**
 * Sets SessionRef.basePath on every Codex fork of `refs` (one with `baseThread`) that has none:
 * its parent rollout's path, or null when there is none, all through one `lookup` (the
 * discovery's: a scope is listed at most once for all of them, a seeded one not at all). In place.
 */
export async function resolveForkParents(refs: ReadonlyArray<Pick<SessionRef, 'host' | 'path' | 'baseThread' | 'basePath'>>, lookup: RolloutLookup): Promise<void> {
  for (const r of refs) {
    if (r.host === 'codex' && typeof r.baseThread === 'string' && r.basePath === undefined) r.basePath = await lookup.find(r.path, r.baseThread);
  }
}

/**
 * The cache stamp of a fork's parent rollout (SessionRef.baseThread): `<path>:<size>:<mtime ms>`
 * of the rollout parentRollout gives now (the one the reader reads: SessionRef.basePath, else
 * looked for), or `absent`. A fork reads its parent's first lines, so its result is dropped when
 * the parent is removed, moved, rewritten or grows (growth is not told apart from a rewrite: any
 * change of size or mtime), or when a parent appears (a ref whose basePath is null: at the next
 * discovery, which looks again). Node builtins only: the CLI's warm entry (src/cli/warm.ts)
 * takes it again through identity.ts.
 * @param file the fork's rollout; @param threadId its `session_meta.history_base.thread_id`
 * @param basePath SessionRef.basePath; @param lookup the run's search (a ref without basePath)
 */
export async function codexBaseStamp(file: string, threadId: string, basePath?: string | null, lookup?: RolloutLookup): Promise<string> {
  const parent = await parentRollout(file, threadId, basePath, lookup);
  return parent?.st?.isFile() ? `${parent.path}:${parent.st.size}:${parent.st.mtimeMs}` : 'absent';
}
