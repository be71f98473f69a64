/**
 * Counting folder listings in a test: `spyOnReaddir` registers mocha hooks that wrap
 * `fs/promises.readdir` for the enclosing `describe` (installed in `before`, restored in `after`)
 * and call `seen(path, options)` for each call with a string path, before the real readdir runs.
 */
import fsp = require('node:fs/promises');

/** The options of a readdir call as the code under test passed them (`{ withFileTypes: true }` = a typed listing). */
export type ReaddirOptions = { withFileTypes?: boolean } | undefined;

export function spyOnReaddir(seen: (path: string, options: ReaddirOptions) => void): void {
  const realReaddir = fsp.readdir;
  before(() => {
    (fsp as { readdir: unknown }).readdir = function (this: unknown, p: unknown, ...rest: unknown[]) {
      if (typeof p === 'string') seen(p, rest[0] as ReaddirOptions);
      return (realReaddir as (...a: unknown[]) => unknown).call(this, p, ...rest);
    };
  });
  after(() => {
    (fsp as { readdir: unknown }).readdir = realReaddir;
  });
}
