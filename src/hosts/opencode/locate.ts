/**
 * Finds OpenCode's data on disk (reference/opencode.md §1.1):
 *  - data dir: `$XDG_DATA_HOME/opencode`, default `~/.local/share/opencode`;
 *  - database (1.2 … 1.18.x): `<data>/opencode.db`; `OPENCODE_DB` overrides it (absolute, or
 *    relative to the data dir; `:memory:` means there is no file). Other release channels write
 *    `opencode-<channel>.db` next to it; those are listed too.
 *  - legacy JSON layout (< 1.2): `<data>/storage/{project,session,message,part}/…json`.
 * The environment is a parameter so tests pass their own; nothing is created or written.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** Where OpenCode keeps its data for an environment. Paths are listed only when they exist. */
export interface OpenCodeLocation {
  /** The data dir (whether or not it exists). */
  dataDir: string;
  /** The database OpenCode 1.18 uses (`OPENCODE_DB` or `<data>/opencode.db`), when it exists. */
  db: string | null;
  /** Other channels' databases in the data dir (`opencode-<channel>.db`). */
  channelDbs: string[];
  /** The legacy `storage` folder, when it has a `session` folder. */
  storage: string | null;
}

/** OpenCode's data dir: `$XDG_DATA_HOME/opencode` or `~/.local/share/opencode`. */
export function openCodeDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.HOME || homedir();
  const xdg = env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : join(home, '.local', 'share');
  return join(xdg, 'opencode');
}

const isFile = (p: string) => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/**
 * Locates OpenCode's database(s) and legacy storage for an environment.
 * @param env reads `XDG_DATA_HOME`, `HOME`, `OPENCODE_DB`
 */
export function locateOpenCode(env: NodeJS.ProcessEnv = process.env): OpenCodeLocation {
  const dataDir = openCodeDataDir(env);
  let dbPath: string | null = join(dataDir, 'opencode.db');
  const override = env.OPENCODE_DB;
  if (override) dbPath = override === ':memory:' ? null : isAbsolute(override) ? override : join(dataDir, override);
  let channelDbs: string[] = [];
  try {
    channelDbs = readdirSync(dataDir)
      .filter((n) => /^opencode-.+\.db$/.test(n))
      .sort()
      .map((n) => join(dataDir, n))
      .filter((p) => p !== dbPath && isFile(p));
  } catch {
    channelDbs = [];
  }
  const storage = join(dataDir, 'storage');
  return {
    dataDir,
    db: dbPath && isFile(dbPath) ? dbPath : null,
    channelDbs,
    storage: existsSync(join(storage, 'session')) ? storage : null,
  };
}
