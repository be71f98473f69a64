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
 * their cache identity is computed from), each with its output entry's file, its identity at the
 * end of the run and the bytes that identity's head/tail SHA-256 are of (identity.ts
 * identityWithSample). The warm entry answers only when the manifest is of the same build, every
 * stamp is unchanged, every ref is of a host in WARM_HOSTS and every ref's output entry is valid
 * for the session as it is now, the same check the full run makes: for a Pi or Codex session
 * (identified by its file) the file has the size and mtime of the manifest's identity and its
 * first and last 64 KiB are the manifest's bytes, byte for byte (so its head/tail SHA-256 are the
 * manifest's, without hashing); for a Claude Code session (identified by its stamp: the
 * transcript's and its sub-agent files' sizes and mtimes) the stamp is taken again
 * (claude-code/locate.ts claudeStamp, as discovery takes it); for a Codex fork its parent
 * rollout's stamp (codex/locate.ts codexBaseStamp: path, size, mtime, or absent) is taken again,
 * of the parent looked for now (one listing per Codex home for all forks, not the manifest's
 * basePath, which is the last run's: a parent may have appeared since);
 * the capture folders' stamp is taken again; and that identity is the one in the output entry's
 * trailer.
 * Anything else (another option, a `host:` argument, no path, a symbolic link below a path, more
 * than MAX_ENTRIES entries, a corrupt, cut or foreign manifest) is a miss: the full CLI runs and
 * writes the manifest again.
 *
 * No node:crypto here (with it come ~35 internal modules, the stream classes among them, and the
 * hashing: ~7 ms CPU of a warm run of the bench corpus): the stamps are kept as text and compared,
 * the manifest's file name is a short non-cryptographic hash of the paths (the paths are compared
 * too), the output entries' names are in the manifest.
 *
 * Manifest file: `<bytes><JSON>\n<length>\n`: per ref in order its head bytes and its tail bytes,
 * min(size, CHECK_BYTES) each, then the JSON (RunManifest) and a newline, then the byte length of
 * JSON and newline (16 decimal digits) and a newline, as an output entry's trailer. The writer
 * appends each ref's sample as it is taken (memory: one sample, not the run's: a folder of 2,000
 * sessions holds 256 MB of samples); the warm entry reads them per ref into one reused buffer.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { cachedOutputAt, copyBlockInto, DOC_EMPTY, DOC_END, DOC_START, outputFile, SESSION_END, type CachedOutput } from '../cache/output.js';
import { CACHE_VERSION, CHECK_BYTES, code, identityBySample, identityWithRules, identityWithSample, type RefIdentityFields } from '../cache/identity.js';
import { WALK_MAX_DEPTH, WALK_SKIP_DIRS } from '../hosts/files.js';
import { claudeStamp } from '../hosts/claude-code/locate.js';
import { RolloutLookup } from '../hosts/codex/locate.js';
import { LEN_FIELD, trailerAt, trailerBytes, writeAllSync } from '../cache/trailer.js';

const FORMAT = 'prefix-lens-run-manifest';
/** Version of the manifest layout (1: stamps hashed, JSON only; 2: Pi refs only). */
const VERSION = 3;
/** Entries below one path beyond which no manifest is kept (stamping them would cost more than it saves). */
const MAX_ENTRIES = 20_000;

/**
 * How the warm entry checks a ref of each host it answers for, as the full run's result cache
 * identifies it (identity.ts): `file` for a session identified by its one file (size, mtime, head
 * and tail: Pi reads only its own file; Codex too, and a fork's parent rollout, whose stamp the
 * identity holds: identity.ts identityBySample takes it again), `claude` for
 * a Claude Code session (its stamp: the transcript and its sub-agent files). The other hosts read
 * databases or several files per session (OpenCode, BotHarness, PI-Desktop): a miss.
 */
const WARM_HOSTS: ReadonlyMap<string, 'file' | 'claude'> = new Map([
  ['pi', 'file'],
  ['codex', 'file'],
  ['claude-code', 'claude'],
]);

/** True for a ref the warm entry can check (WARM_HOSTS: a file ref without a stamp, a Claude Code ref with one). */
function warmable(r: { host?: unknown; stamp?: unknown }): boolean {
  const how = typeof r.host === 'string' ? WARM_HOSTS.get(r.host) : undefined;
  return how === 'file' ? r.stamp === undefined : how === 'claude' && typeof r.stamp === 'string';
}

/** A ref of a run manifest: what its identity is computed from, and what it was at the end of the run. */
export interface ManifestRef extends RefIdentityFields {
  /** File name of the ref's output entry in the cache's `v<CACHE_VERSION>` folder (output.ts outputFile). */
  out: string;
  /**
   * A file ref's identity fields at the end of the run (identity.ts identityWithSample): size in
   * bytes, mtime in ms, head/tail SHA-256 (hex). Absent for a stamped ref (Claude Code), whose
   * stamp is taken again instead (and which has no sample bytes in the manifest).
   */
  check?: { size: number; mtimeMs: number; head: string; tail: string };
}

/** What a full run stores for the warm entry (see the module comment), before the sample bytes. */
export interface RunManifest {
  format: typeof FORMAT;
  version: typeof VERSION;
  /** Identity of the analysis code (identity.ts code()). */
  code: string;
  /** Hash of the provider rules the run judged with (identity.ts rulesHash). */
  rules: string;
  /** The run's inputs: absolute paths, duplicates dropped, in argument order. */
  paths: string[];
  /** treeStamp of each path, taken before discovery. */
  trees: string[];
  /** The refs the run printed, in output order. */
  refs: ManifestRef[];
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
 * The text itself (one line per entry, ~100 bytes each, at most MAX_ENTRIES lines), not a digest:
 * compared as it is, nothing to hash.
 */
export function treeStamp(path: string): string | null {
  const h: string[] = [];
  let entries = 0;
  const file = (rel: string, p: string): void => {
    const st = statSync(p);
    h.push(`f\0${rel}\0${st.size}\0${st.mtimeMs}\0${st.ino}\n`);
  };
  // What discovery's walk skips (hosts/files.ts) is not stamped either: a git operation in a
  // repository below the path does not change what is found.
  const dir = (rel: string, p: string, depth: number): boolean => {
    const list = readdirSync(p, { withFileTypes: true })
      .filter((e) => !(e.isDirectory() && (WALK_SKIP_DIRS.has(e.name) || depth >= WALK_MAX_DEPTH)))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    h.push(`d\0${rel}\0${list.length}\n`);
    for (const e of list) {
      if (++entries > MAX_ENTRIES || e.isSymbolicLink()) return false;
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (!dir(r, join(p, e.name), depth + 1)) return false;
      } else if (e.isFile()) file(r, join(p, e.name));
      else h.push(`o\0${r}\n`);
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
  return h.join('');
}

/**
 * File of the manifest of a run with `paths`: named by a 64-bit non-cryptographic hash of them
 * (two 32-bit FNV-1a-style lanes; the manifest holds the paths and they are compared, so a
 * collision only makes two path lists share a file, each run's manifest replacing the other's).
 */
export function manifestFile(cacheDir: string, paths: string[]): string {
  const text = JSON.stringify(paths);
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  const hex = (x: number) => (x >>> 0).toString(16).padStart(8, '0');
  return join(cacheDir, `v${CACHE_VERSION}`, 'runs', `${hex(a)}${hex(b)}-${text.length}.manifest`);
}

/**
 * Stores the manifest of a full run (written to a temporary name and renamed into place), with
 * each ref's identity and sample taken now (identity.ts identityWithSample: after the output
 * entries were written; a file that changed since its entry was made has another identity than
 * the entry's trailer, so the warm entry misses until a full run makes them agree). Nothing is
 * stored (and an earlier manifest of these paths is removed) when a ref is of a host the warm
 * entry does not answer for (WARM_HOSTS) or cannot be checked; a write error only costs the warm
 * entry.
 * @param m.refs the refs the run printed, in output order
 */
export async function writeManifest(cacheDir: string, m: { rules: string; paths: string[]; trees: string[]; refs: RefIdentityFields[] }): Promise<void> {
  const file = manifestFile(cacheDir, m.paths);
  const drop = () => {
    try {
      unlinkSync(file);
    } catch {
      // none
    }
  };
  if (!m.refs.length || !m.refs.every(warmable)) return drop();
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  let fd: number | null = null;
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    fd = openSync(tmp, 'w');
    const writeAll = (b: Uint8Array) => writeAllSync(fd!, b);
    const refs: ManifestRef[] = [];
    for (const r of m.refs) {
      if (r.stamp !== undefined) {
        refs.push({ ...r, out: basename(outputFile(cacheDir, r.key)) });
        continue;
      }
      const s = await identityWithSample(r, m.rules);
      if (!s) throw new Error('not checkable');
      const { size, mtimeMs, head, tail } = s.id;
      refs.push({ ...r, out: basename(outputFile(cacheDir, r.key)), check: { size: size!, mtimeMs: mtimeMs!, head: head!, tail: tail! } });
      // The bytes those hashes are of, written before the next ref is read.
      writeAll(s.head);
      writeAll(s.tail);
    }
    const manifest: RunManifest = { format: FORMAT, version: VERSION, code: code(), rules: m.rules, paths: m.paths, trees: m.trees, refs };
    writeAll(trailerBytes(JSON.stringify(manifest)));
    closeSync(fd);
    fd = null;
    renameSync(tmp, file);
  } catch {
    if (fd !== null) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      // not written
    }
    // A ref that cannot be checked: no manifest (an earlier one of these paths would be stale).
    drop();
  }
}

/** An output entry's file name (output.ts outputFile): nothing that could name another folder. */
const OUT_NAME = /^[0-9a-f]{40}\.out$/;

/** A manifest read by readManifest: its JSON, and where each ref's sample bytes are in the open file. */
interface OpenManifest {
  m: RunManifest;
  fd: number;
  /** Offset of the first ref's sample bytes in the file. */
  samplesAt: number;
}

/**
 * The manifest for `paths` when it is one of ours, of this build, well formed and of the size its
 * JSON says (nothing cut, nothing appended), open for its sample bytes (the caller closes `fd`);
 * else null.
 */
function readManifest(cacheDir: string, paths: string[]): OpenManifest | null {
  let fd: number;
  try {
    fd = openSync(manifestFile(cacheDir, paths), 'r');
  } catch {
    return null;
  }
  let m: Partial<RunManifest>;
  let samplesEnd: number;
  try {
    const size = fstatSync(fd).size;
    const lenBuf = Buffer.allocUnsafe(LEN_FIELD);
    if (size < lenBuf.length || readSync(fd, lenBuf, 0, lenBuf.length, size - lenBuf.length) !== lenBuf.length) throw new Error('cut');
    const at = trailerAt(lenBuf, size);
    if (!at) throw new Error('not a manifest');
    const { len } = at;
    samplesEnd = at.start;
    const json = Buffer.allocUnsafe(len);
    if (readSync(fd, json, 0, len, samplesEnd) !== len || json[len - 1] !== 0x0a) throw new Error('cut');
    m = JSON.parse(json.toString('utf8', 0, len - 1)) as Partial<RunManifest>;
  } catch {
    closeSync(fd);
    return null;
  }
  const valid = ((): boolean => {
    if (!m || m.format !== FORMAT || m.version !== VERSION || m.code !== code() || typeof m.rules !== 'string') return false;
    if (!Array.isArray(m.paths) || m.paths.length !== paths.length || m.paths.some((p, i) => p !== paths[i])) return false;
    if (!Array.isArray(m.trees) || m.trees.length !== paths.length || !m.trees.every((t) => typeof t === 'string')) return false;
    if (!Array.isArray(m.refs) || !m.refs.length) return false;
    let bytes = 0;
    for (const r of m.refs as Array<Partial<ManifestRef>>) {
      if (!r || !warmable(r) || typeof r.key !== 'string' || typeof r.path !== 'string' || typeof r.id !== 'string') return false;
      if (typeof r.mtimeMs !== 'number' || (r.parentId !== null && typeof r.parentId !== 'string')) return false;
      if (r.startMs !== undefined && typeof r.startMs !== 'number') return false;
      if (r.baseThread !== undefined && typeof r.baseThread !== 'string') return false;
      if (r.basePath !== undefined && r.basePath !== null && typeof r.basePath !== 'string') return false;
      if (typeof r.out !== 'string' || !OUT_NAME.test(r.out)) return false;
      const c = r.check;
      if (r.stamp !== undefined) {
        if (c !== undefined) return false;
        continue;
      }
      if (!c || !Number.isSafeInteger(c.size) || c.size < 0 || typeof c.mtimeMs !== 'number' || typeof c.head !== 'string' || typeof c.tail !== 'string') return false;
      bytes += 2 * Math.min(c.size, CHECK_BYTES);
    }
    // Samples cut short or with bytes between them and the JSON: not what was written.
    return bytes === samplesEnd;
  })();
  if (!valid) {
    closeSync(fd);
    return null;
  }
  return { m: m as RunManifest, fd, samplesAt: 0 };
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

/**
 * Bytes read per chunk when blocks are copied (one buffer for the whole run). The buffer and the
 * page-cache pages being copied must stay in the CPU's L2 cache between the read and the write:
 * on this machine (AMD EPYC, 512 KiB L2 per core) reading 148 MiB of entries took ~32 ms CPU in
 * 128 KiB chunks, ~105 ms in 192 or 256 KiB chunks and ~45 ms in 64 KiB ones (a readSync loop,
 * 4 runs each, alternated); the bench corpus's warm run: ~13 % less CPU than with 256 KiB (15
 * alternated whole-process runs, output read through a pipe).
 */
const COPY_CHUNK = 128 * 1024;

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
  const read = readManifest(o.cacheDir, paths);
  if (!read) return null;
  const { m, fd } = read;
  const outputs: CachedOutput[] = [];
  try {
    for (let i = 0; i < paths.length; i++) if (treeStamp(paths[i]) !== m.trees[i]) return null;
    const sampleBuf = Buffer.allocUnsafe(2 * CHECK_BYTES);
    let at = read.samplesAt;
    // A fork's parent as the full run would find it now (the manifest's basePath is the last
    // run's: a parent that appeared, or a copy found first, since): one listing per Codex home.
    const lookup = new RolloutLookup();
    for (const ref of m.refs) {
      let id;
      if (ref.check) {
        const n = Math.min(ref.check.size, CHECK_BYTES);
        if (readSync(fd, sampleBuf, 0, 2 * n, at) !== 2 * n) return null;
        at += 2 * n;
        id = await identityBySample({ ...ref, basePath: undefined }, m.rules, o.env, ref.check, { head: sampleBuf.subarray(0, n), tail: sampleBuf.subarray(n, 2 * n) }, lookup);
      } else {
        // A Claude Code ref: its stamp as discovery would take it now, or a miss.
        const st = statSync(ref.path);
        if (!st.isFile() || (await claudeStamp(ref.path, ref.id, st.size, st.mtimeMs)) !== ref.stamp) return null;
        id = await identityWithRules(ref, m.rules, o.env);
      }
      const out = id && cachedOutputAt(join(o.cacheDir, `v${CACHE_VERSION}`, ref.out), id);
      if (!out) return null;
      outputs.push(out);
    }
  } catch {
    return null;
  } finally {
    closeSync(fd);
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
