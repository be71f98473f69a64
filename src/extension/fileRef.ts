/** A SessionRef for a Pi transcript the user opened by hand (not necessarily in a listed folder). */
import { basename } from 'node:path';
import type { SessionRef } from '../hosts/registry.js';

/** Pi ref of `path` with its size and mtime; key = the path, as the registry keys Pi files. */
export function fileRef(path: string, st: { mtimeMs: number; size: number }): SessionRef {
  const id = basename(path, '.jsonl').replace(/^.*_/, '');
  return { host: 'pi', key: path, path, id, title: null, firstPrompt: null, project: null, mtimeMs: st.mtimeMs, size: st.size, parentId: null };
}
