/**
 * The host registry: the one list of host readers the CLI, the extension and the result cache go
 * through. A new host is added here (one `HostEntry`), nowhere else.
 *
 * Two steps, kept apart so a user's whole history can be listed in well under a second:
 *  - discover: SessionRefs from file metadata and cheap header reads only (never an analysis);
 *  - open: one ref → its normalized Session(s), read in full.
 *
 * A path given by the user may be a session file, a host's own folder (Pi's agent dir or its
 * `sessions/`, an OpenCode data dir or `storage/`, a capture folder), or any folder with sessions
 * somewhere below it: `findSessions` walks it and asks every host what it recognizes.
 */
import { missingPathText, WALK_DEEP_NAMED, WALK_MAX_DEPTH, WALK_SKIP_DIRS } from './files.js';
import { readdir, stat } from 'node:fs/promises';
import { join, normalize, sep } from 'node:path';
import type { Session } from '../core/model.js';
import { plural } from '../plural.js';
import { botharnessRef, dshHome, listDshLogs, logOfSessionDir, readBotHarnessSession, releaseBotHarnessDbs } from './botharness/index.js';
import { readCaptureSessions } from './capture/index.js';
import type { RequestSource } from './wirematch.js';
import { CAPTURE_JOINED, capturedBodiesFor, captureRoots } from './capturejoin.js';
import { checkSessionNumbers } from './numbers.js';
import { locateOpenCode } from './opencode/locate.js';
import { listJsonSessions, listSqliteSessions, openCodeRefsAt, openOpenCodeRef, releaseOpenCodeStores } from './opencode/discover.js';
import { piRef } from './pi/discover.js';
import { piAgentDir } from './pi/locate.js';
import { readPiSession } from './pi/index.js';
import { claudeRef } from './claude-code/discover.js';
import { claudeConfigDirs, locateClaudeSessions } from './claude-code/locate.js';
import { readClaudeSession } from './claude-code/index.js';
import { codexRef } from './codex/discover.js';
import { codexHome, listedForRollouts, locateCodexRollouts, resolveForkParents, RolloutLookup, type ListedDirs, type ListedEntry } from './codex/locate.js';
import { readCodexSession } from './codex/index.js';
import { listTranscripts, piDesktopDataDir, piDesktopRef, readPiDesktopSession, releasePiDesktopDbs } from './pi-desktop/index.js';

/** Ids of the hosts this version reads. */
export type HostId = 'pi' | 'opencode' | 'claude-code' | 'codex' | 'capture' | 'botharness' | 'pi-desktop';

/**
 * One session as discovery found it, before any analysis.
 * `key` is stable across runs: the file path for file-per-session hosts, `opencode:<sessionID>`
 * for sessions inside a database. `path` is the file (or folder) whose size and mtime identify the
 * data; for sessions sharing a database, `stamp` tells them apart.
 */
export interface SessionRef {
  host: HostId;
  key: string;
  /** Session file, database file, legacy storage folder or capture folder. */
  path: string;
  /** Host session id (Pi header id, OpenCode session id; the file/folder name when unknown). */
  id: string;
  /** Session name when the host stores one (Pi `session_info` found in the head/tail window, OpenCode title). */
  title: string | null;
  /** Start of the first user prompt (≤ 200 characters), when a head read finds it (Pi). */
  firstPrompt: string | null;
  /** Working directory of the session, when known. */
  project: string | null;
  /** Last modification, ms since epoch: the file's mtime, or the session row's update time (OpenCode). */
  mtimeMs: number;
  /** Bytes of `path` (OpenCode: database + WAL, shared by its sessions). */
  size: number;
  /** Parent session id (OpenCode child sessions), else null. */
  parentId: string | null;
  /** Session start, ms since epoch, when the listing knows it without reading the session (OpenCode `time_created`); the capture stamp's window starts there. */
  startMs?: number;
  /**
   * Content identity within a shared `path` (OpenCode: row counts and latest update times of the
   * session's messages and parts). Absent for file-per-session hosts.
   */
  stamp?: string;
  /**
   * A Codex 0.169 fork: the conversation id its `session_meta.history_base` names, whose rollout
   * it reads its first lines from; the result cache stamps that rollout (codex/locate.ts
   * codexBaseStamp). Absent for every other session.
   */
  baseThread?: string;
  /**
   * A Codex fork's parent rollout as discovery found it (one listing of the Codex home for all
   * forks of a discovery: codex/locate.ts RolloutLookup): its path, or null when there is none
   * (the reader then warns that the parent was not found, and nothing looks for it again until
   * the next discovery). The reader reads it and the result cache stamps it (codexBaseStamp);
   * a path whose file is gone by then is looked for again. Absent for a ref discovery did not
   * resolve (a ref made elsewhere: the reader and the stamp look for the parent themselves) and
   * for every session that is no fork.
   */
  basePath?: string | null;
}

/**
 * Where to look. `env` and `home` locate each host's default folders (Pi: `PI_CODING_AGENT_DIR`,
 * `PI_CODING_AGENT_SESSION_DIR`; OpenCode: `XDG_DATA_HOME`, `OPENCODE_DB`). `paths[host]`, when
 * set, replaces that host's default locations (e.g. the extension's per-host path settings); each
 * path is walked like a CLI argument.
 */
export interface DiscoverOptions {
  env: NodeJS.ProcessEnv;
  home: string;
  paths?: Partial<Record<HostId, string[]>>;
  /** Told what a folder walk left out (folders deeper than WALK_MAX_DEPTH), one message each; unset: not told. */
  onWarning?: (message: string) => void;
}

/**
 * Options of `open`. `requestsDir`: captured request bodies of that session (wire evidence).
 * `env`: the environment the ref was discovered with (readers of this version do not need it).
 */
export interface OpenRefOptions {
  requestsDir?: RequestSource;
  env?: NodeJS.ProcessEnv;
}

/** One host reader, as the registry lists it. */
export interface HostEntry {
  id: HostId;
  /** Display name. */
  label: string;
  /** Other names of the host in `<host>:<id prefix>` arguments (Claude Code: `claude`). */
  aliases?: readonly string[];
  /** Sessions in the host's default locations (or `opts.paths[id]`), from metadata and header reads only. */
  discover(opts: DiscoverOptions): Promise<SessionRef[]>;
  /**
   * Sessions this host recognizes at a path, or null when the path is not this host's. `claim`: how
   * the path came (see Claim); `named` lets e.g. any `.jsonl` be read as Pi.
   */
  refsAt(path: string, isDir: boolean, claim: Claim): Promise<SessionRef[] | null>;
  /** Reads one ref in full into normalized Session(s). Never throws for bad content (diagnostics). */
  open(ref: SessionRef, opts?: OpenRefOptions): Promise<Session[]>;
  /**
   * Completes the refs of one discovery (a walk, a named path) with what needs more than their
   * own file, in place: Codex resolves each fork's parent rollout (SessionRef.basePath), one
   * listing per Codex home for all of them, none for a home the walk has listed (`listed`: the
   * directories it listed). `discover` does it itself.
   */
  settle?(refs: SessionRef[], listed?: ListedDirs): Promise<void>;
  /** Folders to watch for new or changed sessions (they may not exist yet). */
  watchRoots(opts: DiscoverOptions): string[];
  /** Environment variables that move the host's default locations (named when `<host>:` finds nothing). */
  locatedBy?: readonly string[];
}

/**
 * How a path reached a host, which sets how much its name and content must say before the host
 * claims it: `named` (the user named this very path: a named `.jsonl` is read as Pi, its problems
 * become diagnostics), `walk` (met below a folder: only files that look like the host's; a damaged
 * Pi session whose first line does not parse is still claimed, so it is reported), `opened` (an
 * editor opened some file: as `walk`, but Pi's only with a Pi header, since any `.jsonl` may be open).
 */
export type Claim = 'named' | 'walk' | 'opened';

/** Alias of hostOf (the name the extension uses). */
export const hostEntry = (id: string): HostEntry => hostOf(id);

/** Runs `fn` over `items` with at most `limit` calls in flight; results in input order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Parallel file peeks during discovery (each is a stat and two ≤ 16 KiB reads). */
const PEEK_CONCURRENCY = 32;

async function names(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}

async function isDir(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

const notNull = <T>(x: T | null): x is T => x !== null;

/** Pi's folders for an environment: the per-cwd tree and the flat `PI_CODING_AGENT_SESSION_DIR`. */
function piRoots(opts: DiscoverOptions): string[] {
  const roots = [join(piAgentDir(opts.env, opts.home), 'sessions')];
  if (opts.env.PI_CODING_AGENT_SESSION_DIR) roots.push(opts.env.PI_CODING_AGENT_SESSION_DIR);
  return roots;
}

const pi: HostEntry = {
  id: 'pi',
  label: 'Pi',
  async discover(opts) {
    if (opts.paths?.pi) return walkAll(opts.paths.pi, [pi], opts.onWarning);
    // reference/pi.md §1: <agentDir>/sessions/--<cwd>--/*.jsonl, and the flat override folder.
    const [tree, flat] = piRoots(opts);
    const files: string[] = [];
    if (flat) for (const n of await names(flat)) if (n.endsWith('.jsonl')) files.push(join(flat, n));
    for (const d of await names(tree)) for (const n of await names(join(tree, d))) if (n.endsWith('.jsonl')) files.push(join(tree, d, n));
    const refs = (await mapLimit([...new Set(files)], PEEK_CONCURRENCY, (f) => piRef(f, 'named'))).filter(notNull);
    return newestFirst(refs);
  },
  async refsAt(path, dir, claim) {
    if (dir || !path.endsWith('.jsonl')) return null;
    const ref = await piRef(path, claim);
    return ref ? [ref] : null;
  },
  async open(ref, opts = {}) {
    return [await readPiSession(ref.path, { requestsDir: opts.requestsDir })];
  },
  watchRoots: piRoots,
  locatedBy: ['PI_CODING_AGENT_DIR', 'PI_CODING_AGENT_SESSION_DIR'],
};

const opencode: HostEntry = {
  id: 'opencode',
  label: 'OpenCode',
  async discover(opts) {
    if (opts.paths?.opencode) return walkAll(opts.paths.opencode, [opencode], opts.onWarning);
    const loc = locateOpenCode({ HOME: opts.home, ...opts.env });
    const refs: SessionRef[] = [];
    for (const db of [loc.db, ...loc.channelDbs]) if (db) refs.push(...(await listSqliteSessions(db)));
    if (loc.storage) {
      const known = new Set(refs.map((r) => r.id));
      refs.push(...(await listJsonSessions(loc.storage)).filter((r) => !known.has(r.id)));
    }
    return newestFirst(refs);
  },
  async refsAt(path, dir, claim) {
    if (dir) {
      const ns = await names(path);
      const dataDir = ns.includes('opencode.db') || ns.some((n) => /^opencode-.+\.db$/.test(n)) || (ns.includes('storage') && (await isDir(join(path, 'storage', 'session'))));
      const storage = !dataDir && ns.includes('session') && ns.includes('message') && (await isDir(join(path, 'session')));
      return dataDir || storage ? openCodeRefsAt(path) : null;
    }
    const name = path.slice(path.lastIndexOf('/') + 1);
    if (claim === 'named' ? !/\.(db|sqlite)$/.test(name) : !/^opencode(-.+)?\.db$/.test(name)) return null;
    return openCodeRefsAt(path);
  },
  open: (ref, opts) => openOpenCodeRef(ref, { requestsDir: opts?.requestsDir }),
  watchRoots(opts) {
    if (opts.paths?.opencode) return opts.paths.opencode;
    return [locateOpenCode({ HOME: opts.home, ...opts.env }).dataDir];
  },
  locatedBy: ['XDG_DATA_HOME', 'OPENCODE_DB'],
};

const claudeCode: HostEntry = {
  id: 'claude-code',
  label: 'Claude Code',
  aliases: ['claude'],
  async discover(opts) {
    if (opts.paths?.['claude-code']) return walkAll(opts.paths['claude-code'], [claudeCode], opts.onWarning);
    // reference/claude-code-codex.md §1.1: <config dir>/projects/<encoded cwd>/<session>.jsonl
    const files = await locateClaudeSessions(opts.env, opts.home);
    return newestFirst((await mapLimit(files, PEEK_CONCURRENCY, (f) => claudeRef(f, false))).filter(notNull));
  },
  async refsAt(path, dir, claim) {
    if (dir) return null;
    const ref = await claudeRef(path, claim === 'named');
    return ref ? [ref] : null;
  },
  async open(ref, opts = {}) {
    return readClaudeSession(ref.path, { requestsDir: opts.requestsDir });
  },
  watchRoots(opts) {
    return opts.paths?.['claude-code'] ?? claudeConfigDirs(opts.env, opts.home).map((d) => join(d, 'projects'));
  },
  locatedBy: ['CLAUDE_CONFIG_DIR'],
};

const codex: HostEntry = {
  id: 'codex',
  label: 'Codex',
  async discover(opts) {
    if (opts.paths?.codex) return walkAll(opts.paths.codex, [codex], opts.onWarning);
    // reference/claude-code-codex.md §2.1: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl, archived_sessions/
    const files = await locateCodexRollouts(opts.env, opts.home);
    const refs = (await mapLimit(files, PEEK_CONCURRENCY, (f) => codexRef(f, false))).filter(notNull);
    // Forks' parents from this very listing: the Codex home is not listed again.
    const lookup = new RolloutLookup();
    lookup.seed(codexHome(opts.env, opts.home), files);
    await resolveForkParents(refs, lookup);
    return newestFirst(refs);
  },
  async refsAt(path, dir, claim) {
    if (dir) return null;
    const ref = await codexRef(path, claim === 'named');
    return ref ? [ref] : null;
  },
  settle: (refs, listed) => resolveForkParents(refs, new RolloutLookup(listed)),
  async open(ref, opts = {}) {
    const base = ref.baseThread !== undefined && ref.basePath !== undefined ? { thread: ref.baseThread, path: ref.basePath } : undefined;
    return readCodexSession(ref.path, { requestsDir: opts.requestsDir, base });
  },
  watchRoots(opts) {
    if (opts.paths?.codex) return opts.paths.codex;
    const root = codexHome(opts.env, opts.home);
    return [join(root, 'sessions'), join(root, 'archived_sessions')];
  },
  locatedBy: ['CODEX_HOME'],
};

const capture: HostEntry = {
  id: 'capture',
  label: 'Captured requests',
  async discover(opts) {
    return opts.paths?.capture ? walkAll(opts.paths.capture, [capture], opts.onWarning) : [];
  },
  async refsAt(path, dir, claim) {
    // Only a folder the user names: the recorder keeps a session's bodies beside its transcript,
    // and a walk must not report them a second time as a session of their own.
    if (!dir || claim !== 'named') return null;
    const ns = await names(path);
    const bodies = ns.filter((n) => n.endsWith('.body.json'));
    if (!bodies.length) return null;
    const st = await stat(path);
    let size = 0;
    for (const n of bodies) size += (await stat(join(path, n)).catch(() => ({ size: 0 }))).size;
    return [{ host: 'capture', key: path, path, id: path.slice(path.lastIndexOf('/') + 1), title: null, firstPrompt: null, project: null, mtimeMs: st.mtimeMs, size, parentId: null, stamp: `${bodies.length}:${bodies[bodies.length - 1]}` }];
  },
  async open(ref) {
    return readCaptureSessions(ref.path);
  },
  watchRoots: (opts) => opts.paths?.capture ?? [],
};

/** DSH's session folders for an environment (BotHarness Sessions are DSH Sessions). */
function dshRoots(opts: DiscoverOptions): string[] {
  return opts.paths?.botharness ?? [join(dshHome(opts.env, opts.home), 'sessions')];
}

const botharness: HostEntry = {
  id: 'botharness',
  label: 'BotHarness (DSH)',
  async discover(opts) {
    if (opts.paths?.botharness) return walkAll(opts.paths.botharness, [botharness], opts.onWarning);
    // reference/botharness.md A.1: $DSH_HOME/sessions/--<cwd>--/<session dir>/session[.vN].jsonl[.zstd].
    const logs = await listDshLogs(dshHome(opts.env, opts.home));
    const refs = (await mapLimit(logs, PEEK_CONCURRENCY, (f) => botharnessRef(f, false))).filter(notNull);
    return newestFirst(refs);
  },
  async refsAt(path, dir, claim) {
    if (!dir) {
      const ref = await botharnessRef(path, claim === 'named');
      return ref ? [ref] : null;
    }
    // A DSH home (has sessions/ and botharness/ or sessions/--<cwd>--/), or one session's folder.
    const ns = await names(path);
    if (ns.includes('sessions') && (ns.includes('botharness') || (await names(join(path, 'sessions'))).some((n) => /^--.*--$/.test(n)))) {
      const refs = (await mapLimit(await listDshLogs(path), PEEK_CONCURRENCY, (f) => botharnessRef(f, false))).filter(notNull);
      return refs.length ? refs : null;
    }
    const log = ns.some((n) => /^session(\.v\d+)?\.jsonl(\.zstd)?$/.test(n)) ? await logOfSessionDir(path) : null;
    const ref = log ? await botharnessRef(log, false) : null;
    return ref ? [ref] : null;
  },
  async open(ref) {
    return [await readBotHarnessSession(ref.path)];
  },
  watchRoots: dshRoots,
  locatedBy: ['DSH_HOME'],
};

const piDesktop: HostEntry = {
  id: 'pi-desktop',
  label: 'PI-Desktop',
  aliases: ['pidesktop'],
  async discover(opts) {
    if (opts.paths?.['pi-desktop']) return walkAll(opts.paths['pi-desktop'], [piDesktop], opts.onWarning);
    // reference/botharness.md B.1: $PI_DESKTOP_DATA_DIR (or ~/.pi-desktop)/sessions/<id>.jsonl
    const files = await listTranscripts(piDesktopDataDir(opts.env, opts.home));
    return newestFirst((await mapLimit(files, PEEK_CONCURRENCY, (f) => piDesktopRef(f, false))).filter(notNull));
  },
  async refsAt(path, dir, claim) {
    if (!dir) {
      const ref = await piDesktopRef(path, claim === 'named');
      return ref ? [ref] : null;
    }
    // A data dir (pi.sqlite and sessions/) or its sessions/ folder with PI-Desktop transcripts.
    const ns = await names(path);
    const sessions = ns.includes('pi.sqlite') && ns.includes('sessions') ? join(path, 'sessions') : null;
    if (!sessions) return null;
    const refs = (await mapLimit(await listTranscripts(path), PEEK_CONCURRENCY, (f) => piDesktopRef(f, false))).filter(notNull);
    return refs.length ? refs : null;
  },
  async open(ref) {
    return readPiDesktopSession(ref.path);
  },
  watchRoots(opts) {
    return opts.paths?.['pi-desktop'] ?? [join(piDesktopDataDir(opts.env, opts.home), 'sessions')];
  },
  locatedBy: ['PI_DESKTOP_DATA_DIR'],
};

/**
 * Every host this version reads, in display order. BotHarness, Claude Code and Codex come before Pi: a
 * raw DSH `session.jsonl` has a header Pi's schema would also accept, and Pi reads any `.jsonl`
 * it is explicitly given; the BotHarness entry claims only logs whose header is DSH's
 * (`createdAt`), the Claude Code, Codex and PI-Desktop entries only files whose lines are their own
 * (PI-Desktop: a `sessionId` header); the rest goes on to Pi.
 */
export const HOSTS: readonly HostEntry[] = [botharness, claudeCode, codex, piDesktop, pi, opencode, capture];

/** The registry entry of a host id. @throws Error for an id no host has */
export function hostOf(id: string): HostEntry {
  const h = HOSTS.find((x) => x.id === id);
  if (!h) throw new Error(`unknown host "${id}"`);
  return h;
}

function newestFirst(refs: SessionRef[]): SessionRef[] {
  return refs.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * Every session of every host in its default locations (or `opts.paths`), newest first.
 * Metadata and header reads only. Missing folders yield nothing; never throws for unreadable entries.
 */
export async function discoverSessions(opts: DiscoverOptions): Promise<SessionRef[]> {
  const all = await Promise.all(HOSTS.map((h) => h.discover(opts)));
  const seen = new Set<string>();
  return newestFirst(all.flat().filter((r) => !seen.has(r.key) && seen.add(r.key)));
}

/**
 * The folders discoverSessions looks in without `opts.paths` (each host's default locations for
 * `opts.env` and `opts.home`, HostEntry.watchRoots), with the variables that move them: one entry
 * per host that has default folders (captured requests have none), in HOSTS order. For saying
 * where nothing was found.
 */
export function defaultFolders(opts: DiscoverOptions): Array<{ label: string; folders: string[]; locatedBy: readonly string[] }> {
  const defaults: DiscoverOptions = { env: opts.env, home: opts.home };
  return HOSTS.map((h) => ({ label: h.label, folders: h.watchRoots(defaults), locatedBy: h.locatedBy ?? [] })).filter((f) => f.folders.length > 0);
}


/**
 * The folders to watch when `opts.paths` ADD to each host's default locations (the extension's
 * folder settings) instead of replacing them: every host's default roots, then its configured
 * folders, deduplicated in that order. An empty list for a host means "no extra folders", never
 * "watch nothing" (`HostEntry.watchRoots` takes a set `paths[host]` as the whole list).
 */
export function watchRootsAdding(opts: DiscoverOptions): string[] {
  const defaults: DiscoverOptions = { env: opts.env, home: opts.home };
  return [...new Set(HOSTS.flatMap((h) => [...h.watchRoots(defaults), ...(opts.paths?.[h.id] ?? [])]))];
}

async function walkAll(paths: string[], hosts: readonly HostEntry[], onWarning?: (message: string) => void): Promise<SessionRef[]> {
  const out: SessionRef[] = [];
  const listed: Listed = new Map();
  for (const p of paths) out.push(...(await unsettledAt(p, hosts, onWarning, listed)));
  return settled(out, listed);
}

/**
 * The directories a walk listed, by path, with the entries a host's settle goes by
 * (codex/locate.ts listedForRollouts): given to the settle, so a Codex home the walk has listed
 * is not listed again for its forks' parents. Let go with the call.
 */
type Listed = Map<string, ListedEntry[]>;

/** `refs` after each host's settle (HostEntry.settle) over its own refs among them, in place. */
async function settled(refs: SessionRef[], listed?: ListedDirs): Promise<SessionRef[]> {
  for (const h of HOSTS) {
    const own = h.settle ? refs.filter((r) => r.host === h.id) : [];
    if (own.length) await h.settle!(own, listed);
  }
  return refs;
}

/**
 * The sessions at or below a path, in path order (a database's sessions in creation order).
 * The path itself may be anything a host recognizes (Claim `named`: a named `.jsonl` is always read as
 * Pi, a named `.db` as OpenCode); below it, each file and folder is offered to every host, and
 * folders no host claims are entered (symbolic links to folders are not entered, so a walk cannot loop),
 * down to WALK_MAX_DEPTH levels; each folder left out below that is named to `onWarning` (the first
 * WALK_DEEP_NAMED, then one message counting the rest). The refs are settled (HostEntry.settle: a
 * Codex fork's parent rollout resolved, one listing per Codex home for the whole call).
 * @returns [] when nothing is recognized (the caller says why)
 * @throws Error "<path>: <reason>" (missingPathText) when the path cannot be stat-ed
 */
export async function findSessions(path: string, hosts: readonly HostEntry[] = HOSTS, onWarning?: (message: string) => void): Promise<SessionRef[]> {
  const listed: Listed = new Map();
  return settled(await unsettledAt(path, hosts, onWarning, listed), listed);
}

/** findSessions before the hosts' settle; the directories the walk lists go to `listed`. */
async function unsettledAt(path: string, hosts: readonly HostEntry[], onWarning: ((message: string) => void) | undefined, listed: Listed): Promise<SessionRef[]> {
  let st;
  try {
    st = await stat(path);
  } catch (e) {
    throw new Error(missingPathText(path, e));
  }
  for (const h of hosts) {
    const refs = await h.refsAt(path, st.isDirectory(), 'named');
    if (refs) return refs;
  }
  if (!st.isDirectory()) return [];
  const out: SessionRef[] = [];
  const deep: string[] = [];
  // Keyed as the paths below it are joined (normalized, no trailing separator).
  const root = normalize(path);
  await walk(root.length > 1 && root.endsWith(sep) ? root.slice(0, -1) : root, 0, hosts, out, deep, listed);
  if (onWarning) {
    for (const d of deep.slice(0, WALK_DEEP_NAMED)) onWarning(`${d}: folder not entered: more than ${WALK_MAX_DEPTH} levels below ${path} (name it, or a folder nearer to it, to read the sessions in it)`);
    if (deep.length > WALK_DEEP_NAMED) onWarning(`${path}: ${plural(deep.length - WALK_DEEP_NAMED, 'more folder')} more than ${WALK_MAX_DEPTH} levels below it not entered`);
  }
  return out;
}

async function walk(dir: string, depth: number, hosts: readonly HostEntry[], out: SessionRef[], deep: string[], listed: Listed): Promise<void> {
  let entries;
  try {
    entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return;
  }
  listed.set(dir, entries.filter((e) => listedForRollouts(e.name, e.isDirectory())).map((e) => ({ name: e.name, dir: e.isDirectory() })));
  // Everything but folders is offered: symlinks (hosts follow them to files only, so a walk cannot
  // loop) and special files named like a session, which then give a diagnostic instead of vanishing.
  const files = entries.filter((e) => !e.isDirectory()).map((e) => join(dir, e.name));
  const found = await mapLimit(files, PEEK_CONCURRENCY, async (f) => {
    for (const h of hosts) {
      const refs = await h.refsAt(f, false, 'walk');
      if (refs) return refs;
    }
    return [];
  });
  for (const refs of found) out.push(...refs);
  for (const e of entries) {
    if (!e.isDirectory() || WALK_SKIP_DIRS.has(e.name)) continue;
    const sub = join(dir, e.name);
    if (depth >= WALK_MAX_DEPTH) {
      deep.push(sub);
      continue;
    }
    let claimed: SessionRef[] | null = null;
    for (const h of hosts) {
      claimed = await h.refsAt(sub, true, 'walk');
      if (claimed) break;
    }
    if (claimed) out.push(...claimed);
    else await walk(sub, depth + 1, hosts, out, deep, listed);
  }
}

/**
 * Resolves a CLI argument to refs: `<host>:<id prefix>` (Pi, BotHarness, Claude Code `claude:`,
 * Codex `codex:`, PI-Desktop `pidesktop:` / `pi-desktop:`, OpenCode `opencode:`; every session whose id starts with the prefix; the prefix
 * alone = the newest session, for OpenCode every session) in the host's default locations, or a path (see findSessions).
 * @returns [] when nothing matched (the caller reports why)
 * @throws Error for a path that does not exist
 */
export async function resolveArg(arg: string, opts: DiscoverOptions): Promise<SessionRef[]> {
  const named = hostArg(arg);
  if (named) {
    const refs = await named.host.discover({ ...opts, paths: undefined });
    const id = named.prefix;
    if (!id) return named.host.id === 'opencode' ? refs.reverse() : refs.slice(0, 1);
    return refs.filter((r) => r.id.startsWith(id));
  }
  return findSessions(arg, HOSTS, opts.onWarning);
}

/** The host and id prefix a `<host>:<id prefix>` argument names (id or alias), or null for anything else (a path). */
export function hostArg(arg: string): { host: HostEntry; prefix: string } | null {
  const m = /^([a-z][a-z0-9-]*):(.*)$/.exec(arg);
  const host = m ? HOSTS.find((h) => h.id === m[1] || h.aliases?.includes(m[1])) : undefined;
  return m && host ? { host, prefix: m[2] } : null;
}

/** The variables that move a host's default folders, as messages name them: `CODEX_HOME sets where to look`, `A, B set where to look`; '' for none. */
export function locatedByText(vars: readonly string[]): string {
  return vars.length ? `${vars.join(', ')} set${vars.length === 1 ? 's' : ''} where to look` : '';
}

/**
 * Why a `<host>:<id prefix>` argument matched no session, in one line that names the folders
 * searched (the host's default locations for `opts`) and the variables that move them, e.g.
 * `pi: no Pi session in /home/u/.pi/agent/sessions (PI_CODING_AGENT_DIR, PI_CODING_AGENT_SESSION_DIR
 * set where to look)` or `codex:zz: no Codex session whose id starts with "zz" in …, … (2 sessions
 * there; CODEX_HOME sets where to look)`. Lists the host's sessions again to count them; null when
 * `arg` is no `host:` argument.
 */
export async function noSessionText(arg: string, opts: DiscoverOptions): Promise<string | null> {
  const named = hostArg(arg);
  if (!named) return null;
  const { host, prefix } = named;
  const defaults: DiscoverOptions = { env: opts.env, home: opts.home };
  const found = prefix ? (await host.discover(defaults)).length : 0;
  const vars = host.locatedBy ?? [];
  const hint = [found ? `${plural(found, 'session')} there` : '', locatedByText(vars)].filter(Boolean).join('; ');
  const what = prefix ? `no ${host.label} session whose id starts with "${prefix}"` : `no ${host.label} session`;
  return `${arg.endsWith(':') ? arg : `${arg}:`} ${what} in ${host.watchRoots(defaults).join(', ')}${hint ? ` (${hint})` : ''}`;
}

/**
 * The sessions a host recognizes in one file by its name, place and content, as a walk below a
 * folder would (never a `.jsonl` taken for Pi only because it was named): what an editor that
 * opened some `.jsonl` may ask. Checks the hosts in registry order; [] when none claims it or the
 * file cannot be read.
 */
export async function recognizeFile(path: string): Promise<SessionRef[]> {
  for (const h of HOSTS) {
    const refs = await h.refsAt(path, false, 'opened').catch(() => null);
    if (refs?.length) return settled(refs);
  }
  return [];
}

export { CAPTURE_JOINED } from './capturestamp.js';

/**
 * Reads one ref with its host's reader; times and token counts are checked at this boundary
 * (numbers.ts). Without `requestsDir`, a Pi, Claude Code, Codex or OpenCode session whose bodies the capture
 * proxy saved (capture roots of `opts.env`, see capturejoin.ts) is read again with them: wire
 * evidence, with an info diagnostic naming how many bodies were joined from where.
 */
export async function openRef(ref: SessionRef, opts: OpenRefOptions = {}): Promise<Session[]> {
  let sessions = await hostOf(ref.host).open(ref, opts);
  if (opts.requestsDir === undefined && CAPTURE_JOINED.has(ref.host)) sessions = (await withCapturedBodies(ref, sessions, opts)) ?? sessions;
  return sessions.map(checkSessionNumbers);
}

/**
 * `sessions` (read from `ref` without bodies) read again with the bodies the capture proxy saved
 * for them (capture roots of `opts.env`), with an info diagnostic naming how many were joined
 * from where; null when it saved none. The numbers are not checked (openRef does).
 */
export async function withCapturedBodies(ref: SessionRef, sessions: Session[], opts: OpenRefOptions = {}): Promise<Session[] | null> {
  const roots = captureRoots(opts.env ?? process.env);
  const files = roots.length ? await capturedBodiesFor(sessions, roots) : [];
  if (!files.length) return null;
  const label = roots.join(', ');
  const joined = await hostOf(ref.host).open(ref, { ...opts, requestsDir: { label, files } });
  const wire = joined.reduce((n, s) => n + s.requests.filter((r) => r.evidence === 'wire').length, 0);
  joined[0]?.diagnostics.push({ file: label, line: 0, severity: 'info', message: `capture proxy: ${plural(files.length, 'captured request body')} joined (${plural(wire, 'request')} with wire evidence)` });
  return joined;
}

/** Frees what readers keep open between `open` calls (OpenCode's database). Call after a batch. */
export function releaseReaders(): void {
  releaseOpenCodeStores();
  releaseBotHarnessDbs();
  releasePiDesktopDbs();
}
