/**
 * Where the capture proxy saves: one folder per host session (when the host sends a session
 * header) or per UTC day, below a root (`$XDG_STATE_HOME/prefix-lens/captures` by default). Each
 * model request is `NNN-<api>.body.json` (the body byte for byte) and `NNN-<api>.meta.json` (the
 * capture format the readers accept: src/hosts/capture/index.ts), numbered in arrival order per
 * folder. Folders are 0700, files 0600. Above the size cap the oldest requests are deleted first.
 *
 * Saving never stands in the agent's way: every method reports failure by its result, never by
 * throwing, and the first failure of each kind is passed to `onWarn` once.
 */
import { chmod, mkdir, readdir, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Default size cap of a capture root, bytes (bodies + metas of every folder). */
export const DEFAULT_MAX_BYTES = 2 * 1024 * 1024 * 1024;
/** After pruning the root holds at most this share of the cap (so pruning is rare, not per request). */
const PRUNE_TO = 0.9;

/** The capture root for an environment: `$XDG_STATE_HOME/prefix-lens/captures`, default `~/.local/state/…`. */
export function defaultCaptureDir(env: NodeJS.ProcessEnv, home: string): string {
  const state = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/') ? env.XDG_STATE_HOME : join(home, '.local', 'state');
  return join(state, 'prefix-lens', 'captures');
}

/** The folder name of a request: `session-<id>` for a session id (unsafe characters become `_`), else its UTC day `YYYY-MM-DD`. */
export function folderName(sessionId: string | null, receivedAtMs: number): string {
  if (sessionId) return `session-${sessionId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120)}`;
  return new Date(receivedAtMs).toISOString().slice(0, 10);
}

/** One request's place in the store. */
export interface Slot {
  dir: string;
  /** `NNN-<api>`: the body is `<base>.body.json`, the meta `<base>.meta.json`. */
  base: string;
  n: number;
}

/** Options of a store. */
export interface StoreOptions {
  root: string;
  /** Size cap, bytes (default DEFAULT_MAX_BYTES). */
  maxBytes?: number;
  /** Called once per kind of failure (`folder`, `body`, `meta`, `prune`) with a message naming the path. */
  onWarn?: (message: string) => void;
}

const NAME = /^(\d+)-[a-z-]+\.(body|meta)\.json$/;

/** The capture store of one root. */
export class CaptureStore {
  readonly root: string;
  readonly maxBytes: number;
  /** Requests saved (body written) since the store was opened. */
  saved = 0;
  /** Failed writes since the store was opened. */
  failures = 0;
  private next = new Map<string, number>();
  private total = 0;
  private warned = new Set<string>();
  private inFlight = new Set<string>();
  private chains = new Map<string, Promise<void>>();
  private pruning: Promise<void> | null = null;
  private readonly onWarn: (m: string) => void;

  constructor(opts: StoreOptions) {
    this.root = opts.root;
    this.maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
    this.onWarn = opts.onWarn ?? (() => {});
  }

  /** Sums what the root already holds (for the cap). Never throws (a missing root holds nothing). */
  async open(): Promise<void> {
    this.total = 0;
    for (const f of await this.files()) this.total += f.size;
  }

  /** Bytes the root holds, as far as this store knows (what it found at `open` plus what it wrote, minus what it pruned). */
  get bytes(): number {
    return this.total;
  }

  /**
   * A numbered place for a request in `folder` (created 0700 with the root when missing). Numbers
   * follow the order of the calls (one chain of allocations per folder); the folder is made and
   * listed without blocking the event loop, so a request is forwarded before its slot exists.
   * Resolves null when the folder cannot be made (warned once). Never rejects.
   */
  allocate(folder: string, api: string): Promise<Slot | null> {
    const dir = join(this.root, folder);
    const prev = this.chains.get(dir) ?? Promise.resolve();
    const mine = prev.then(async (): Promise<Slot | null> => {
      let n = this.next.get(dir);
      if (n === undefined) {
        try {
          await mkdirPrivate(this.root);
          await mkdirPrivate(dir);
          n = 0;
          for (const name of await readdir(dir)) {
            const m = NAME.exec(name);
            if (m) n = Math.max(n, Number(m[1]));
          }
        } catch (e) {
          this.fail('folder', `cannot create ${dir}: ${(e as Error).message}`);
          return null;
        }
      }
      n++;
      this.next.set(dir, n);
      const base = `${String(n).padStart(6, '0')}-${api}`;
      this.inFlight.add(join(dir, base));
      return { dir, base, n };
    });
    const tail = mine.then(() => undefined);
    this.chains.set(dir, tail);
    // The chain of a folder is dropped once idle (a long-running proxy sees many session folders).
    void tail.then(() => {
      if (this.chains.get(dir) === tail) this.chains.delete(dir);
    });
    return mine;
  }

  /** Writes the body bytes (0600, never over an existing file). @returns false when it failed (warned once) */
  async saveBody(slot: Slot, bytes: Uint8Array): Promise<boolean> {
    return this.write('body', join(slot.dir, `${slot.base}.body.json`), bytes);
  }

  /** Writes the meta (JSON, 0600, once per slot, never over an existing file) and releases the slot. @returns false when it failed */
  async saveMeta(slot: Slot, meta: Record<string, unknown>): Promise<boolean> {
    const ok = await this.write('meta', join(slot.dir, `${slot.base}.meta.json`), `${JSON.stringify(meta, null, 2)}\n`);
    this.inFlight.delete(join(slot.dir, slot.base));
    return ok;
  }

  private async write(kind: 'body' | 'meta', file: string, data: Uint8Array | string): Promise<boolean> {
    try {
      await writeFile(file, data, { mode: 0o600, flag: 'wx' });
      this.total += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
      if (kind === 'body') this.saved++;
    } catch (e) {
      this.fail(kind, `cannot save ${file}: ${(e as Error).message}`);
      return false;
    }
    if (this.total > this.maxBytes) await this.prune();
    return true;
  }

  private fail(kind: string, message: string): void {
    this.failures++;
    if (this.warned.has(kind)) return;
    this.warned.add(kind);
    this.onWarn(`${message} (the request is still forwarded; further ${kind} failures are not reported)`);
  }

  /** Deletes the oldest requests (body and meta, by the body's mtime) until the root is under 90 % of the cap. */
  prune(): Promise<void> {
    this.pruning ??= this.pruneNow().finally(() => (this.pruning = null));
    return this.pruning;
  }

  private async pruneNow(): Promise<void> {
    const files = await this.files();
    this.total = files.reduce((s, f) => s + f.size, 0);
    const groups = new Map<string, { mtimeMs: number; size: number; paths: string[]; dir: string }>();
    for (const f of files) {
      const key = join(f.dir, f.name.replace(/\.(body|meta)\.json$/, ''));
      if (this.inFlight.has(key)) continue;
      const g = groups.get(key) ?? { mtimeMs: Infinity, size: 0, paths: [], dir: f.dir };
      g.mtimeMs = Math.min(g.mtimeMs, f.mtimeMs);
      g.size += f.size;
      g.paths.push(join(f.dir, f.name));
      groups.set(key, g);
    }
    const oldest = [...groups.values()].sort((a, b) => a.mtimeMs - b.mtimeMs);
    const touched = new Set<string>();
    for (const g of oldest) {
      if (this.total <= this.maxBytes * PRUNE_TO) break;
      try {
        for (const p of g.paths) await rm(p, { force: true });
        this.total -= g.size;
        touched.add(g.dir);
      } catch (e) {
        this.fail('prune', `cannot delete ${g.paths[0]}: ${(e as Error).message}`);
        return;
      }
    }
    // Folders left empty go too (never the root itself).
    for (const dir of touched) if (!(await readdir(dir).catch(() => ['?'])).length) await rmdir(dir).catch(() => {});
  }

  /** Every saved file below the root (one level of folders). */
  private async files(): Promise<Array<{ dir: string; name: string; size: number; mtimeMs: number }>> {
    const out: Array<{ dir: string; name: string; size: number; mtimeMs: number }> = [];
    const folders = await readdir(this.root, { withFileTypes: true }).catch(() => []);
    for (const d of folders) {
      if (!d.isDirectory()) continue;
      const dir = join(this.root, d.name);
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (!NAME.test(name)) continue;
        const st = await stat(join(dir, name)).catch(() => null);
        if (st?.isFile()) out.push({ dir, name, size: st.size, mtimeMs: st.mtimeMs });
      }
    }
    return out;
  }
}

/**
 * mkdir -p with 0700 on the folders it creates; an existing folder is left as it is. Walks up
 * itself (at most 64 levels) instead of `mkdir({recursive})`, which never returns on a file system
 * that answers ENOENT for a folder that exists (Node 20 on /proc).
 * @throws the first error that is not "exists" or "parent missing"
 */
async function mkdirPrivate(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let d = dir; missing.length < 64; d = dirname(d)) {
    const st = await stat(d).catch(() => null);
    if (st) break; // a folder, or something else: then the mkdir below it fails with the system's reason (ENOTDIR)
    missing.push(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    await mkdir(d, { mode: 0o700 }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    });
    await chmod(d, 0o700);
  }
}
