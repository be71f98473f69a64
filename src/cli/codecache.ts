/**
 * Loads the CLI's analysis bundle (dist/cli-main.js, 1.7 MB) through a V8 code cache kept in the
 * cache folder, so a run that needs it does not compile it again (measured: ~60 ms CPU of the
 * ~155 ms its load costs). Node 20 has no `module.enableCompileCache`; this is the same idea with
 * `vm.Script`'s `cachedData`.
 *
 * Entry: `<cacheDir>/v2/code/<hash of the bundle's path, size, mtime, Node version, arch>.bin`,
 * holding the SHA-256 of the V8 data (32 bytes) and the data. A file whose checksum does not match
 * is not handed to V8; data V8 rejects (another V8, other flags, another source) is replaced; in
 * either case the bundle is compiled from source and the entry written again at exit (temporary
 * name, renamed into place). A cache folder that cannot be written only costs the caching.
 */
import { mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import type ModuleType from 'node:module';
import { dirname, join } from 'node:path';

/** node:crypto's createHash, loaded on first use (the bin's warm entry, bundled with this module, never hashes: identity.ts sha256Hex). */
function createHash(algorithm: string): import('node:crypto').Hash {
  return (require('node:crypto') as typeof import('node:crypto')).createHash(algorithm);
}

/** What loadCached did, for tests: 'hit' (V8 took the cached data), 'miss' (none valid), 'rejected' (V8 refused it). */
export type CodeCacheResult = 'hit' | 'miss' | 'rejected';

/** File of the code cache entry of `file` as it is now (null when it cannot be stat'ed). */
export function codeCacheFile(cacheDir: string, file: string): string | null {
  let st;
  try {
    st = statSync(file);
  } catch {
    return null;
  }
  const key = createHash('sha256').update(JSON.stringify([file, st.size, st.mtimeMs, process.version, process.arch])).digest('hex').slice(0, 40);
  return join(cacheDir, 'v2', 'code', `${key}.bin`);
}

/** The V8 data of a valid entry, else undefined (missing, cut short, checksum mismatch). */
function readEntry(entry: string | null): Buffer | undefined {
  if (!entry) return undefined;
  try {
    const b = readFileSync(entry);
    if (b.length <= 32) return undefined;
    const data = b.subarray(32);
    return createHash('sha256').update(data).digest().equals(b.subarray(0, 32)) ? data : undefined;
  } catch {
    return undefined;
  }
}

function writeEntry(entry: string, data: Buffer): void {
  const tmp = `${entry}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    mkdirSync(dirname(entry), { recursive: true });
    writeFileSync(tmp, Buffer.concat([createHash('sha256').update(data).digest(), data]));
    renameSync(tmp, entry);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // not written
    }
  }
}

/**
 * `require(file)` of a CommonJS file through the code cache (see the module comment): the module
 * is registered in `require.cache` as `require` would.
 * @param given V8 data for this file handed over by another thread (a worker gets the main
 *   thread's `data`): used instead of the cache entry, and no entry is read or written
 * @returns the module's exports, what the cache did, `save`, which writes the entry when it was
 *   not a hit (the bin calls it at exit, off the run's way), and `data`, V8 data valid for this
 *   source and the flags of this moment (the data taken on a hit, else made now; null when none
 *   could be made), for the workers
 * @throws what the module's top level throws
 */
export function loadCached(
  file: string,
  cacheDir: string,
  given?: Uint8Array,
): { exports: unknown; result: CodeCacheResult; save: () => void; data: Buffer | null } {
  // Loaded here, not at the bin's top level: a warm run never loads the bundle (warm.ts).
  const Module = require('node:module') as typeof ModuleType;
  const { createRequire } = Module;
  const { Script } = require('node:vm') as typeof import('node:vm');
  const entry = given ? null : codeCacheFile(cacheDir, file);
  const cachedData = given ? Buffer.from(given.buffer, given.byteOffset, given.byteLength) : readEntry(entry);
  const source = readFileSync(file, 'utf8');
  const script = new Script(Module.wrap(source), { filename: file, cachedData });
  const result: CodeCacheResult = !cachedData ? 'miss' : script.cachedDataRejected ? 'rejected' : 'hit';
  const m = new Module(file, module);
  m.filename = file;
  m.paths = (Module as unknown as { _nodeModulePaths: (dir: string) => string[] })._nodeModulePaths(dirname(file));
  const cache = (Module as unknown as { _cache: Record<string, ModuleType> })._cache;
  cache[file] = m;
  const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: ModuleType, filename: string, dirname: string) => void;
  try {
    wrapper.call(m.exports, m.exports, createRequire(file), m, file, dirname(file));
  } catch (e) {
    delete cache[file];
    throw e;
  }
  m.loaded = true;
  // Data made now (after the top level ran) is what a worker of this run gets on a miss. The
  // entry is made at exit instead: V8 then also writes the bytecode of every function the run
  // compiled lazily, so the next process compiles none of them again (~25 ms CPU per process on
  // the Pi fixtures). V8 ties the data to the flags of the moment it is made: a flag the run
  // sets must be set back before exit (memory.ts sets --expose-gc for one new context and unsets
  // it), or the next process rejects the entry and writes it again.
  let made: Buffer | null = null;
  if (result !== 'hit' && !given) {
    try {
      made = script.createCachedData();
    } catch {
      made = null;
    }
  }
  const save = () => {
    if (!made || !entry) return;
    let full: Buffer;
    try {
      full = script.createCachedData();
    } catch {
      full = made;
    }
    writeEntry(entry, full);
  };
  return { exports: m.exports, result, save, data: result === 'hit' ? cachedData! : made };
}
