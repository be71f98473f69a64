/**
 * Where DSH and BotHarness keep their files (reference/botharness.md A.1 "Default directories",
 * "DSH session log"):
 *  - `$DSH_HOME` = the `DSH_HOME` environment variable when non-blank, else `~/.dsh`
 *    (`@deepseek-ai/dsh-home-paths` semantics);
 *  - session logs: `$DSH_HOME/sessions/--<normalized cwd>--/<session dir>/session.jsonl.zstd`, newer
 *    generations `session.v3.jsonl.zstd` / `session.v4.jsonl.zstd`, raw `session.jsonl` when DSH
 *    runs with `compression:'none'`;
 *  - BotHarness's database: `$DSH_HOME/botharness/botharness.db` (ADR-0041).
 * The environment is a parameter (no `process.env` reads) so tests pass their own.
 */
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** File names of a session log, any generation, compressed or raw. */
export const LOG_NAME = /^session(\.v(\d+))?\.jsonl(\.zstd)?$/;

/** DSH's home for an environment and home directory. */
export function dshHome(env: NodeJS.ProcessEnv, home: string): string {
  const v = env.DSH_HOME;
  if (v && v.trim()) return v === '~' ? home : v.startsWith('~/') ? join(home, v.slice(2)) : v;
  return join(home, '.dsh');
}

/** BotHarness's database under a DSH home. */
export function botharnessDbPath(home: string): string {
  return join(home, 'botharness', 'botharness.db');
}

/** The DSH home a session log lies in (`<home>/sessions/<cwd dir>/<session dir>/<log>`), or null. */
export function dshHomeOfLog(file: string): string | null {
  const sessionDir = dirname(file);
  const cwdDir = dirname(sessionDir);
  const sessions = dirname(cwdDir);
  return basename(sessions) === 'sessions' ? dirname(sessions) : null;
}

/** Rank of a log name: the newest generation, then compressed, is the one DSH writes. */
function rank(name: string): number {
  const m = LOG_NAME.exec(name);
  if (!m) return -1;
  return (m[2] ? Number(m[2]) : 0) * 2 + (m[3] ? 1 : 0);
}

/** The log file of a session folder (the highest-ranked name), or null. */
export async function logOfSessionDir(dir: string): Promise<string | null> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return null;
  }
  const logs = names.filter((n) => LOG_NAME.test(n)).sort((a, b) => rank(b) - rank(a));
  return logs.length ? join(dir, logs[0]) : null;
}

/** `--home-dev-project--` → `/home/dev/project` (lossy, like Pi's folder names); undefined if not that shape. */
export function decodeCwdDir(name: string): string | undefined {
  const m = /^--(.*)--$/.exec(name);
  return m ? `/${m[1].replace(/-/g, '/')}` : undefined;
}

/**
 * Every session log under a DSH home's `sessions/` (one per session folder), sorted by path.
 * Missing folders yield nothing.
 */
export async function listDshLogs(home: string): Promise<string[]> {
  const root = join(home, 'sessions');
  const out: string[] = [];
  let cwdDirs: string[];
  try {
    cwdDirs = (await readdir(root)).sort();
  } catch {
    return out;
  }
  for (const c of cwdDirs) {
    let dirs: string[];
    try {
      dirs = (await readdir(join(root, c))).sort();
    } catch {
      continue;
    }
    for (const d of dirs) {
      const log = await logOfSessionDir(join(root, c, d));
      if (log) out.push(log);
    }
  }
  return out;
}
