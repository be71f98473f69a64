// Bundles the CLI (and, when present, the extension and the webview) with esbuild.
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const common = { bundle: true, platform: 'node', target: 'node20', sourcemap: true, logLevel: 'warning' };
const jobs = [
  build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', format: 'cjs', banner: { js: '#!/usr/bin/env node' } }),
];
if (existsSync('src/extension/extension.ts')) {
  jobs.push(build({ ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js', format: 'cjs', external: ['vscode'] }));
}
if (existsSync('media/main.ts')) {
  jobs.push(build({ ...common, platform: 'browser', target: 'es2022', entryPoints: ['media/main.ts'], outfile: 'dist/webview.js', format: 'iife' }));
}
await Promise.all(jobs);
// sql.js (OpenCode's SQLite) loads its WebAssembly at run time: ship it beside the bundles.
const sqlDist = dirname(createRequire(import.meta.url).resolve('sql.js'));
mkdirSync('dist', { recursive: true });
copyFileSync(join(sqlDist, 'sql-wasm.wasm'), 'dist/sql-wasm.wasm');
