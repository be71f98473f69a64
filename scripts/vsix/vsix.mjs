// Builds the VSIX the way a clean clone would and reads it back; shared by the package-contents
// test (test/unit/package/) and the install test (scripts/vscode/, installed mode).
//   node scripts/vsix/vsix.mjs [out.vsix]   builds and prints the entries with their sizes
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import yauzl from 'yauzl';

/**
 * Runs `npm run package -- --out <outFile>` (production build + vsce) in a copy of the files git
 * tracks or would track (no ignored or local files: dist/, .tmp/, a local VS Code env, old VSIXs),
 * with node_modules linked in, so the result does not depend on the worktree's leftovers and the
 * worktree's own dist/ (the development build the other suites use) is left alone.
 * @param {string} repo the project root (a git checkout)
 * @param {string} outFile absolute path of the .vsix to write
 * @returns {{log: string, dist: string[]}} npm's and vsce's output, stdout then stderr (vsce prints the file tree and
 *   warnings), and the files the production build wrote to dist/ (what could be loaded at run time)
 * @throws {Error} with that output when packaging fails
 */
export function packageVsix(repo, outFile) {
  const stage = mkdtempSync(join(tmpdir(), 'prefix-lens-vsix-'));
  try {
    const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo, encoding: 'utf8' }).split('\0').filter(Boolean);
    for (const f of files) {
      const src = join(repo, f);
      if (!existsSync(src) || !lstatSync(src).isFile()) continue; // deleted in the worktree, or a link
      mkdirSync(dirname(join(stage, f)), { recursive: true });
      copyFileSync(src, join(stage, f));
    }
    symlinkSync(join(repo, 'node_modules'), join(stage, 'node_modules'), 'dir');
    const r = spawnSync('npm', ['run', '--silent', 'package', '--', '--out', outFile], { cwd: stage, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const log = `${r.stdout ?? ''}${r.stderr ?? ''}`;
    if (r.status !== 0) throw new Error(`npm run package failed (${r.error?.message ?? `exit ${r.status}`}):\n${log}`);
    return { log, dist: readdirSync(join(stage, 'dist')).sort() };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * Every entry of a VSIX (a zip) with its sizes and bytes.
 * @param {string} file path of the .vsix
 * @returns {Promise<Map<string, {size: number, compressedSize: number, data: Buffer}>>} by entry path
 *   (`extension/…`, `extension.vsixmanifest`, `[Content_Types].xml`); sizes in bytes
 */
export function readVsix(file) {
  return new Promise((done, fail) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err) return fail(err);
      const entries = new Map();
      zip.on('error', fail);
      zip.on('end', () => done(entries));
      zip.on('entry', (e) => {
        if (e.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(e, (err2, stream) => {
          if (err2) return fail(err2);
          const parts = [];
          stream.on('data', (c) => parts.push(c));
          stream.on('error', fail);
          stream.on('end', () => {
            entries.set(e.fileName, { size: e.uncompressedSize, compressedSize: e.compressedSize, data: Buffer.concat(parts) });
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  const out = resolve(process.argv[2] ?? join(repo, 'prefix-lens.vsix'));
  packageVsix(repo, out);
  // no top-level await: the tests load this module through tsx as CommonJS
  readVsix(out).then((entries) => {
    for (const [name, e] of entries) console.log(`${String(e.size).padStart(9)}  ${name}`);
    console.log(`${out}: ${entries.size} entries`);
  });
}
