/**
 * What the capture join depends on outside a transcript, without the join itself (capturejoin.ts):
 * which hosts it applies to, the capture roots of an environment, the join's time window and the
 * cache stamp of what the join can look at. Node builtins only, so the CLI's warm entry
 * (src/cli/warm.ts) checks a cache identity without loading the parsers.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { defaultCaptureDir, folderName } from '../capture/store.js';
import type { HostId } from './registry.js';

/** Hosts whose transcripts the capture join applies to (their readers take captured bodies). */
export const CAPTURE_JOINED: ReadonlySet<HostId> = new Set<HostId>(['pi', 'claude-code', 'codex', 'opencode']);

/** Time window around a session's requests, ms: a request is sent before its transcript entry is written. */
export const BEFORE_MS = 15 * 60 * 1000;
export const AFTER_MS = 5 * 60 * 1000;

/**
 * The user's home folder exactly as os.homedir() gives it (libuv: `$HOME` when it is set, else the
 * password database), with node:os loaded only when `$HOME` is not set (the CLI's warm entry
 * loads no module it can do without).
 */
export function homeDir(): string {
  return process.env.HOME || (require('node:os') as typeof import('node:os')).homedir();
}

/**
 * The capture roots for an environment: `PREFIX_LENS_CAPTURE_DIRS` (`:`-separated; set by
 * `analyze --captures DIR`), else the proxy's default `$XDG_STATE_HOME/prefix-lens/captures`.
 * `PREFIX_LENS_CAPTURE_DIRS=` (empty) turns the join off.
 */
export function captureRoots(env: NodeJS.ProcessEnv, home: string = homeDir()): string[] {
  const v = env.PREFIX_LENS_CAPTURE_DIRS;
  if (v !== undefined) return v.split(':').filter(Boolean);
  return [defaultCaptureDir(env, home)];
}

/** The UTC days (`YYYY-MM-DD`) from `fromMs` to `toMs`. */
export function daysBetween(fromMs: number, toMs: number): string[] {
  const out: string[] = [];
  for (let t = Date.UTC(new Date(fromMs).getUTCFullYear(), new Date(fromMs).getUTCMonth(), new Date(fromMs).getUTCDate()); t <= toMs && out.length < 400; t += 86_400_000) out.push(folderName(null, t));
  return out;
}


/**
 * What the join can look at for a ref, as a cache stamp: the mtimes of the ref's (and its
 * parent's) session folder and of every day folder from the session's start (`startMs`, when
 * known, else the day before its last modification) − 15 min to its last modification + 5 min,
 * per root, absent folders left out (so a folder that appears changes the stamp too). The join's
 * own window (first request − 15 min … last request + 5 min) lies inside: a session starts before
 * its first request and its transcript (or row) is last written after its last request; a body
 * saved after the analysis changes its folder's mtime. Null when no root exists.
 * @param startMs session start, ms since epoch (the transcript's first timestamp, OpenCode's
 *   `time_created`), or null; or a function giving it, called (synchronously, before this
 *   returns its promise) only when a root exists (the warm entry checks runs without any: no
 *   scan of 64 KiB heads for timestamps then)
 */
export async function captureStamp(
  id: string,
  mtimeMs: number,
  roots: string[],
  parentId: string | null = null,
  startMs: number | null | (() => number | null) = null,
): Promise<string | null> {
  // Synchronous stats (a few directories; no thread-pool round trips), so `startMs` is read in the
  // caller's tick (it may read a buffer the caller reuses).
  let days: string[] | null = null;
  const parts: string[] = [];
  for (const root of roots) {
    // A root that does not exist has no folders (one stat instead of one per day: the live tail stamps every update).
    if (!statOrNull(root)) continue;
    if (!days) {
      const start = typeof startMs === 'function' ? startMs() : startMs;
      days = daysBetween(Math.min(start ?? Infinity, mtimeMs - 86_400_000) - BEFORE_MS, mtimeMs + AFTER_MS);
    }
    const names = [folderName(id, 0), ...(parentId ? [folderName(parentId, 0)] : []), ...days];
    for (const n of names) {
      const st = statOrNull(join(root, n));
      if (st) parts.push(`${root}/${n}:${st.mtimeMs}`);
    }
  }
  return parts.length ? parts.join('|') : null;
}

/** The stat of `p`, or null when it cannot be stat'ed (missing, not a folder on the way, no permission). */
function statOrNull(p: string): { mtimeMs: number } | null {
  try {
    return statSync(p, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

/** ISO times in `"timestamp":"…"` members (Pi, Claude Code and Codex transcript lines). */
const TIMESTAMP = /"timestamp"\s*:\s*"(\d{4}-\d\d-\d\dT[^"]{1,40})"/g;

/**
 * The earliest `"timestamp"` ISO time in the head of a transcript (bytes from its start), ms since
 * epoch, or null when there is none: where a JSONL session starts, for captureStamp.
 */
export function headStartMs(head: Uint8Array): number | null {
  const text = Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('latin1');
  let lo: number | null = null;
  for (const m of text.matchAll(TIMESTAMP)) {
    const t = Date.parse(m[1]);
    if (Number.isFinite(t) && (lo === null || t < lo)) lo = t;
  }
  return lo;
}
