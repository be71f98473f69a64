/**
 * Where PI-Desktop keeps its files (project reference `reference/botharness.md` B.1 "Data directory
 * and process layout", from `crates/host-core/src/main.rs` and `apps/desktop/electron/main/index.ts`;
 * `docs/spec/03-runtime/04-data-storage.md`, schema v11):
 *  - data dir: `$PI_DESKTOP_DATA_DIR` when non-blank, else `~/.pi-desktop`;
 *  - transcripts: `<data>/sessions/<sessionId>.jsonl`, archived regenerate branches beside them in
 *    `<sessionId>.revisions.jsonl`;
 *  - index database: `<data>/pi.sqlite` (WAL; the Rust host-core is its only writer, ADR 0011).
 * The environment is a parameter (no `process.env` reads) so tests pass their own.
 */
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** A transcript file name (not a revisions file). */
export const TRANSCRIPT_NAME = /^(?!.*\.revisions\.jsonl$)(.+)\.jsonl$/;

/** PI-Desktop's data dir for an environment and home directory. */
export function piDesktopDataDir(env: NodeJS.ProcessEnv, home: string): string {
  const v = env.PI_DESKTOP_DATA_DIR;
  if (v && v.trim()) return v === '~' ? home : v.startsWith('~/') ? join(home, v.slice(2)) : v;
  return join(home, '.pi-desktop');
}

/** The data dir a transcript lies in (`<data>/sessions/<id>.jsonl`), or null when it is not in a `sessions/` folder. */
export function dataDirOf(file: string): string | null {
  const dir = dirname(file);
  return basename(dir) === 'sessions' ? dirname(dir) : null;
}

/** `<data>/pi.sqlite`. */
export function dbPathOf(dataDir: string): string {
  return join(dataDir, 'pi.sqlite');
}

/** The archived regenerate branches of a transcript (`<id>.revisions.jsonl` beside it). */
export function revisionsOf(file: string): string {
  return file.replace(/\.jsonl$/, '.revisions.jsonl');
}

/** Transcript files under `<data>/sessions/`, sorted by name; a missing folder yields none. */
export async function listTranscripts(dataDir: string): Promise<string[]> {
  const dir = join(dataDir, 'sessions');
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  return names.filter((n) => TRANSCRIPT_NAME.test(n)).sort().map((n) => join(dir, n));
}
