/**
 * Where `analyze --html FILE` may write. The file is truncated before any input is read, so a
 * session file or a database named by mistake (`--html session.jsonl session.jsonl`, or the file
 * argument left out: `--html session.jsonl`) would be destroyed: only a new file, an empty one,
 * an earlier HTML report or something that is not a regular file (`/dev/null`, a pipe) is written.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** Bytes of an existing file read to tell an HTML report (its doctype) from anything else. */
const HEAD_BYTES = 256;

/**
 * Why `file` must not be written as the HTML report, or null when it may.
 * @param file the `--html` argument (not `-`)
 * @param inputs the paths the run reads (session files, folders, databases)
 */
export function htmlTargetProblem(file: string, inputs: readonly string[]): string | null {
  let st;
  try {
    st = statSync(file);
  } catch {
    return null; // a new file
  }
  if (st.isDirectory()) return 'is a folder';
  if (!st.isFile()) return null;
  for (const p of inputs) {
    try {
      const i = statSync(p);
      if (i.ino === st.ino && i.dev === st.dev) return 'is also an input of this run; it would be overwritten before it is read';
    } catch {
      // an input that does not exist is reported by the reader
    }
  }
  if (st.size === 0) return null;
  const head = Buffer.alloc(Math.min(HEAD_BYTES, st.size));
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    readSync(fd, head, 0, head.length, 0);
  } catch (e) {
    return `cannot be read to check what it holds (${(e as Error).message})`;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const text = head.toString('latin1').replace(/^\xef\xbb\xbf/, '').trimStart();
  return /^<!doctype html/i.test(text) ? null : 'exists and is not an HTML report (a session, a database?); not overwritten: give a new file name';
}
