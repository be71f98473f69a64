/**
 * The folders named by `--requests DIR` and `--captures DIR` (analyze, check, diff): a name that
 * is not a folder is a usage error (exit 2, one line), not a run that reads no bodies without a
 * word (`--captures`) or says so only inside the report (`--requests`).
 */
import { statSync } from 'node:fs';
import { safe } from '../sanitize.js';

/** What is wrong with `dir` named by `option`: `--requests x: no such folder`, `…: not a folder`; null when it is a folder. */
export function folderProblem(option: string, dir: string): string | null {
  let st;
  try {
    st = statSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return `${option} ${safe(dir)}: ${code === 'ENOENT' || code === 'ENOTDIR' ? 'no such folder' : safe((e as Error).message)}`;
  }
  return st.isDirectory() ? null : `${option} ${safe(dir)}: not a folder`;
}

/** The first problem of the folders the options name (`--requests`, then each `--captures` in order), or null. */
export function namedFoldersProblem(values: { requests?: string; captures?: string[] }): string | null {
  const named: Array<[string, string]> = [
    ...(values.requests === undefined ? [] : [['--requests', values.requests] as [string, string]]),
    ...(values.captures ?? []).map((d): [string, string] => ['--captures', d]),
  ];
  for (const [option, dir] of named) {
    const problem = folderProblem(option, dir);
    if (problem) return problem;
  }
  return null;
}
