/**
 * The warm entry of `analyze --json <path>…`: when nothing changed since the last run with the
 * same paths, the `--json` bytes are copied from the output cache (src/cache/output.ts) without
 * loading the analysis bundle (dist/cli-main.js: ~1.7 MB to compile, top-level zod schemas,
 * discovery's peeks). Node builtins and the cache's identity module only (src/cli/entry.ts
 * bundles it into the small dist/cli.js).
 *
 * A full run of those arguments leaves a run manifest: the paths, a stamp of what discovery could
 * look at below each of them (every entry's name and type, and each file's size, mtime and inode:
 * a session added, removed, renamed or changed changes it), and the refs discovery found (what
 * their cache identity is computed from). The warm entry answers only when the manifest is of the
 * same build, every stamp is unchanged, every ref is a Pi session (its reader reads only its own
 * file) and every ref's output entry is valid for the file as it is now (the same identity check
 * the full run makes: size, mtime, head/tail SHA-256, capture folders). Anything else (another
 * option, a `host:` argument, no path, a symbolic link below a path, more than MAX_ENTRIES
 * entries, a corrupt or foreign manifest) is a miss: the full CLI runs and writes the manifest again.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { cachedOutput, copyBlockInto, DOC_EMPTY, DOC_END, DOC_START, SESSION_END, type CachedOutput } from '../cache/output.js';
import { CACHE_VERSION, code, identityWithRules, type RefIdentityFields } from '../cache/identity.js';
import { WALK_MAX_DEPTH, WALK_SKIP_DIRS } from '../hosts/files.js';

const FORMAT = 'prefix-lens-run-manifest';
/** Entries below one path beyond which no manifest is kept (stamping them would cost more than it saves). */
const MAX_ENTRIES = 20_000;

/** What a full run stores for the warm entry (see the module comment). */
export interface RunManifest {
  format: typeof FORMAT;
  version: number;
  /** Identity of the analysis code (identity.ts code()). */
  code: string;
  /** Hash of the provider rules the run judged with (identity.ts rulesHash). */
  rules: string;
  /** The run's inputs: absolute paths, duplicates dropped, in argument order. */
  paths: string[];
  /** treeStamp of each path, taken before discovery. */
  trees: string[];
  /** The refs the run printed, in output order. */
  refs: RefIdentityFields[];
}

/**
 * The paths of an `analyze --json <path>…` run the warm entry may answer (made absolute,
 * duplicates dropped, as the CLI does), or null for any other command line.
 */
export function warmPaths(argv: string[], cwd: string): string[] | null {
  const [command, ...rest] = argv;
  if (command !== 'analyze') return null;
  let json = false;
  const paths: string[] = [];
  for (const a of rest) {
    if (a === '--json') json = true;
    else if (a.startsWith('-') || /^[a-z][a-z0-9-]+:/i.test(a)) return null;
    else paths.push(resolve(cwd, a));
  }
  return json && paths.length ? [...new Set(paths)] : null;
}

/**
 * A stamp of everything below `path` that discovery could look at: for a file its size, mtime and
 * inode; for a folder, recursively, every entry's name and type and each file's size, mtime and
 * inode. Null when it cannot be stamped (missing, a symbolic link below it, too many entries).
 */
export function treeStamp(path: string): string | null {
  const h = createHash('sha256');
  let entries = 0;
  const file = (rel: string, p: string): void => {
    const st = statSync(p);
    h.update(`f\0${rel}\0${st.size}\0${st.mtimeMs}\0${st.ino}\n`);
  };
  // What discovery's walk skips (hosts/files.ts) is not stamped either: a git operation in a
  // repository below the path does not change what is found.
  const dir = (rel: string, p: string, depth: number): boolean => {
    const list = readdirSync(p, { withFileTypes: true })
      .filter((e) => !(e.isDirectory() && (WALK_SKIP_DIRS.has(e.name) || depth >= WALK_MAX_DEPTH)))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    h.update(`d\0${rel}\0${list.length}\n`);
    for (const e of list) {
      if (++entries > MAX_ENTRIES || e.isSymbolicLink()) return false;
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (!dir(r, join(p, e.name), depth + 1)) return false;
      } else if (e.isFile()) file(r, join(p, e.name));
      else h.update(`o\0${r}\n`);
    }
    return true;
  };
  try {
    const st = statSync(path);
    if (st.isDirectory()) {
      if (!dir('', path, 0)) return null;
    } else if (st.isFile()) file('', path);
    else return null;
  } catch {
    return null;
  }
  return h.digest('hex');
}

/** File of the manifest of a run with `paths`. */
export function manifestFile(cacheDir: string, paths: string[]): string {
  return join(cacheDir, `v${CACHE_VERSION}`, 'runs', `${createHash('sha256').update(JSON.stringify(paths)).digest('hex').slice(0, 40)}.json`);
}

/**
 * Stores the manifest of a full run (written to a temporary name and renamed into place). Nothing
 * is stored when a ref is not a Pi session file; a write error only costs the warm entry.
 */
export function writeManifest(cacheDir: string, m: Omit<RunManifest, 'format' | 'version' | 'code'>): void {
  const file = manifestFile(cacheDir, m.paths);
  if (!m.refs.every((r) => r.host === 'pi' && r.stamp === undefined)) {
    try {
      unlinkSync(file);
    } catch {
      // none
    }
    return;
  }
  const manifest: RunManifest = { format: FORMAT, version: 1, code: code(), ...m };
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(tmp, JSON.stringify(manifest));
    renameSync(tmp, file);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // not written
    }
  }
}

/** The manifest for `paths` when it is one of ours, of this build, and well formed; else null. */
function readManifest(cacheDir: string, paths: string[]): RunManifest | null {
  let m: Partial<RunManifest>;
  try {
    m = JSON.parse(readFileSync(manifestFile(cacheDir, paths), 'utf8')) as Partial<RunManifest>;
  } catch {
    return null;
  }
  if (!m || m.format !== FORMAT || m.version !== 1 || m.code !== code() || typeof m.rules !== 'string') return null;
  if (!Array.isArray(m.paths) || m.paths.length !== paths.length || m.paths.some((p, i) => p !== paths[i])) return null;
  if (!Array.isArray(m.trees) || m.trees.length !== paths.length || !m.trees.every((t) => typeof t === 'string')) return null;
  if (!Array.isArray(m.refs) || !m.refs.length) return null;
  for (const r of m.refs as Array<Partial<RefIdentityFields>>) {
    if (!r || r.host !== 'pi' || r.stamp !== undefined || typeof r.key !== 'string' || typeof r.path !== 'string' || typeof r.id !== 'string') return null;
    if (typeof r.mtimeMs !== 'number' || (r.parentId !== null && typeof r.parentId !== 'string')) return null;
    if (r.startMs !== undefined && typeof r.startMs !== 'number') return null;
  }
  return m as RunManifest;
}

/**
 * Where the warm entry writes: text (one line, the newline added) and bytes (as they are); both
 * awaited (backpressure). A `bytes` chunk is valid only until the call returns or its promise
 * resolves (one buffer is reused for every read): a sink that keeps it longer must copy it.
 */
export interface WarmSink {
  line: (text: string) => void | Promise<void>;
  bytes: (b: Uint8Array) => void | Promise<void>;
}

/** Bytes read per chunk when blocks are copied (one buffer for the whole run). */
const COPY_CHUNK = 4 * 1024 * 1024;

/**
 * Answers `analyze --json <path>…` from the caches when nothing changed (see the module comment):
 * writes the document to `sink` and returns the exit code the full CLI would (2 when every
 * session printed was unreadable, else 0), or returns null, having written nothing, when it cannot.
 * @throws when a cached block cannot be copied after it was checked (removed meanwhile): part of
 *   the document may have been written
 */
export async function warmJson(argv: string[], o: { cwd: string; env: NodeJS.ProcessEnv; cacheDir: string; sink: WarmSink }): Promise<number | null> {
  const paths = warmPaths(argv, o.cwd);
  if (!paths) return null;
  const m = readManifest(o.cacheDir, paths);
  if (!m) return null;
  for (let i = 0; i < paths.length; i++) if (treeStamp(paths[i]) !== m.trees[i]) return null;
  const outputs: CachedOutput[] = [];
  for (const ref of m.refs) {
    const out = await cachedOutput(ref, { cacheDir: o.cacheDir, id: await identityWithRules(ref, m.rules, o.env) });
    if (!out) return null;
    outputs.push(out);
  }
  let sessions = 0;
  let unreadable = 0;
  const buf = Buffer.allocUnsafeSlow(COPY_CHUNK);
  for (const out of outputs) {
    for (let i = 0; i < out.blocks.length; i++) {
      await o.sink.line(sessions === 0 ? DOC_START : `${SESSION_END},`);
      await copyBlockInto(out, i, o.sink.bytes, buf);
      sessions++;
      if (out.blocks[i].unreadable) unreadable++;
    }
  }
  if (sessions === 0) await o.sink.line(DOC_EMPTY);
  else {
    await o.sink.line(SESSION_END);
    await o.sink.line(DOC_END);
  }
  return sessions > 0 && unreadable === sessions ? 2 : 0;
}
