/**
 * Finds Pi session files on disk.
 *
 * Locations (reference/pi.md §1 "Location and naming"; Pi 0.73.1):
 *  - agent dir: `$PI_CODING_AGENT_DIR` (a leading `~` is the home dir) or `~/.pi/agent`
 *    (`config.ts` getAgentDir ~l.454);
 *  - default sessions: `<agentDir>/sessions/--<cwd>--/*.jsonl`, `<cwd>` with its leading `/` or `\`
 *    removed and every `/`, `\`, `:` replaced by `-` (`session-manager.ts` getDefaultSessionDir l.428);
 *  - `$PI_CODING_AGENT_SESSION_DIR`: a flat directory of `*.jsonl` (no per-cwd subdirectory;
 *    `main.ts` ~l.496). Both places are listed: sessions written before the override stay in the
 *    default tree.
 * The environment is a parameter (no `process.env` reads) so tests can pass their own.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { readLines } from '../lines.js';
import { withHostValues } from '../numbers.js';
import { HeaderSchema, PI_VALUES } from './schema.js';

/** One session file found on disk. */
export interface PiSessionFile {
  /** Absolute path of the `.jsonl` file. */
  file: string;
  /** Where it was found: the default per-cwd tree or the flat `PI_CODING_AGENT_SESSION_DIR`. */
  origin: 'agent-dir' | 'session-dir';
  /** Working directory of the session, from the file's header line when readable. */
  cwd?: string;
  /**
   * Working directory decoded from the `--<cwd>--` folder name when the header has none. Lossy:
   * Pi maps `/`, `\` and `:` to `-`, so every `-` is shown as `/`.
   */
  cwdFromDir?: string;
  /** Session id: the header's (UUIDv7 in 0.73), else the file name's (piSessionIdOfFile). */
  id: string;
  /** Modification time (ms since epoch) and size (bytes). */
  mtimeMs: number;
  size: number;
}

/**
 * Pi's file name: `<header timestamp, ':' and '.' as '-'>_<session id>.jsonl`
 * (reference/pi.md §1, `newSession()` l.730), e.g. `2026-12-01T09-25-42-095Z_01a230ec-….jsonl`.
 */
const PI_FILE_NAME = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z_(.+)$/;

/**
 * The session id a Pi file's name gives: the part after `<time>_` in Pi's own naming, else the
 * name without `.jsonl` (a file Pi did not name). The one rule for a file whose header is missing
 * or damaged (the reader, discovery, `pi:<id prefix>`, the extension's refs).
 * @param file path or name of the `.jsonl` file
 */
export function piSessionIdOfFile(file: string): string {
  const stem = basename(file, '.jsonl');
  return PI_FILE_NAME.exec(stem)?.[1] ?? stem;
}

/** Pi's agent directory for an environment and home directory. */
export function piAgentDir(env: NodeJS.ProcessEnv, home: string): string {
  const dir = env.PI_CODING_AGENT_DIR;
  if (dir) return dir === '~' ? home : dir.startsWith('~/') ? join(home, dir.slice(2)) : dir;
  return join(home, '.pi', 'agent');
}

/** `--home-dev-project--` → `/home/dev/project` (lossy, see PiSessionFile.cwdFromDir); undefined if not that shape. */
export function decodeCwdDir(name: string): string | undefined {
  const m = /^--(.*)--$/.exec(name);
  return m ? `/${m[1].replace(/-/g, '/')}` : undefined;
}

/**
 * Lists Pi session files, newest first (mtime), then by path.
 * @param env environment (reads `PI_CODING_AGENT_DIR`, `PI_CODING_AGENT_SESSION_DIR`)
 * @param home the user's home directory
 * Missing directories yield nothing; never throws for unreadable entries (they are skipped).
 */
export async function locatePiSessions(env: NodeJS.ProcessEnv, home: string): Promise<PiSessionFile[]> {
  const out: PiSessionFile[] = [];
  const seen = new Set<string>();
  const add = async (file: string, origin: PiSessionFile['origin'], cwdFromDir?: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    let st;
    try {
      st = await stat(file);
    } catch {
      return;
    }
    if (!st.isFile()) return;
    const header = await readHeader(file);
    const f: PiSessionFile = { file, origin, id: header?.id ?? piSessionIdOfFile(file), mtimeMs: st.mtimeMs, size: st.size };
    if (header?.cwd) f.cwd = header.cwd;
    else if (cwdFromDir) f.cwdFromDir = cwdFromDir;
    out.push(f);
  };

  const flat = env.PI_CODING_AGENT_SESSION_DIR;
  if (flat) for (const name of await list(flat)) if (name.endsWith('.jsonl')) await add(join(flat, name), 'session-dir');

  const sessions = join(piAgentDir(env, home), 'sessions');
  for (const dir of await list(sessions)) {
    const full = join(sessions, dir);
    for (const name of await list(full)) if (name.endsWith('.jsonl')) await add(join(full, name), 'agent-dir', decodeCwdDir(dir));
  }
  return out.sort((a, b) => b.mtimeMs - a.mtimeMs || a.file.localeCompare(b.file));
}

async function list(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}

/** The header of a session file (its first line, when at most 64 KiB), or undefined. */
async function readHeader(file: string): Promise<{ id: string; cwd?: string } | undefined> {
  try {
    for await (const l of readLines(file, { maxLineBytes: 64 * 1024 })) {
      const h = HeaderSchema.safeParse(withHostValues(JSON.parse(l.text), PI_VALUES));
      return h.success ? { id: h.data.id, cwd: h.data.cwd } : undefined;
    }
  } catch {
    // unreadable file or a first line that is not JSON
  }
  return undefined;
}
