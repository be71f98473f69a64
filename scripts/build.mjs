// Bundles the CLI (and, when present, the extension, its analysis worker and the webview) with esbuild.
//   --production  (vscode:prepublish, i.e. `npm run package`): minified, no source maps (the VSIX ships none).
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { writeNotices } from './notices.mjs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const production = process.argv.includes('--production');
const common = { bundle: true, platform: 'node', target: 'node20', sourcemap: !production, minify: production, metafile: production, logLevel: 'warning' };
// A production build leaves no maps of an earlier development build behind in dist/.
if (production) for (const f of existsSync('dist') ? readdirSync('dist') : []) if (f.endsWith('.map')) rmSync(join('dist', f));
const jobs = [
  // The bin is a small entry (src/cli/entry.ts) that answers a warm `analyze --json` from the
  // caches and otherwise loads the CLI bundle beside it (dist/cli-main.js, also the workers' script).
  build({ ...common, entryPoints: ['src/cli/entry.ts'], outfile: 'dist/cli.js', format: 'cjs', banner: { js: '#!/usr/bin/env node' } }),
  build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli-main.js', format: 'cjs' }),
];
if (existsSync('src/extension/extension.ts')) {
  jobs.push(build({ ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js', format: 'cjs', external: ['vscode'] }));
  // Reading and analysis run in a worker thread, off the extension host's thread.
  jobs.push(build({ ...common, entryPoints: ['src/extension/worker.ts'], outfile: 'dist/worker.js', format: 'cjs' }));
  // The capture proxy's server (node:http/https): its own bundle, loaded only by "Start Capture Proxy".
  jobs.push(build({ ...common, entryPoints: ['src/capture/server.ts'], outfile: 'dist/capture.js', format: 'cjs' }));
}
const webview = existsSync('media/main.ts');
if (webview) {
  // The timeline app: one bundle for the VS Code panel and the standalone report (minified: the
  // report inlines it). `charset: 'utf8'` keeps non-ASCII glyphs as they are instead of escapes.
  const browser = { ...common, platform: 'browser', target: 'es2022', minify: true, charset: 'utf8' };
  jobs.push(build({ ...browser, entryPoints: ['media/main.ts'], outfile: 'dist/webview.js', format: 'iife' }));
  jobs.push(build({ ...browser, entryPoints: ['media/main.css'], outfile: 'dist/webview.css' }));
}
const results = await Promise.all(jobs);
if (webview) {
  const kb = (f) => `${(statSync(f).size / 1024).toFixed(1)} KiB (${(gzipSync(readFileSync(f)).length / 1024).toFixed(1)} KiB gzip)`;
  console.log(`webview bundle: dist/webview.js ${kb('dist/webview.js')}, dist/webview.css ${kb('dist/webview.css')}`);
}
// sql.js (OpenCode's SQLite) loads its WebAssembly at run time: ship it beside the bundles.
const sqlDist = dirname(createRequire(import.meta.url).resolve('sql.js'));
mkdirSync('dist', { recursive: true });
copyFileSync(join(sqlDist, 'sql-wasm.wasm'), 'dist/sql-wasm.wasm');
// The VSIX ships the extension's bundles (not the CLI, jobs 0 and 1) and that wasm: their packages' license notices go with them.
if (production && results.length > 2) {
  const ids = writeNotices(results.slice(2).map((r) => r.metafile), 'dist/THIRD-PARTY-NOTICES.txt', [dirname(sqlDist)]);
  console.log(`third-party notices: dist/THIRD-PARTY-NOTICES.txt (${ids.join(', ')})`);
}
