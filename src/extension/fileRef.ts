/** A SessionRef for a Pi transcript the user opened by hand (not necessarily in a listed folder). */
import type { SessionRef } from '../hosts/registry.js';
import { piSessionIdOfFile } from '../hosts/pi/locate.js';

/** Pi ref of `path` with its size and mtime; key = the path, as the registry keys Pi files. */
export function fileRef(path: string, st: { mtimeMs: number; size: number }): SessionRef {
  return { host: 'pi', key: path, path, id: piSessionIdOfFile(path), title: null, firstPrompt: null, project: null, mtimeMs: st.mtimeMs, size: st.size, parentId: null };
}
