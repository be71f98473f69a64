/**
 * The Marketplace package: `npm run package` (production build + vsce) from a clean copy of the
 * project, then the VSIX read back entry by entry. It must hold exactly what the installed extension
 * loads at run time and what the Marketplace shows, nothing else, within the size budget.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join, posix, resolve } from 'node:path';
import { packageVsix, readVsix } from '../../../scripts/vsix/vsix.mjs';

/**
 * Budget for the whole .vsix file, bytes. Measured 2026-12-01: about 0.6 MiB (sql-wasm.wasm alone
 * is 672 KiB, 300 KiB zipped). Raise it only for something the extension needs at run time.
 */
const VSIX_BUDGET_BYTES = 1_200_000;

/** Entries any Prefix Lens VSIX may hold (paths inside the zip). */
const ALLOWED: RegExp[] = [
  /^\[Content_Types\]\.xml$/,
  /^extension\.vsixmanifest$/,
  /^extension\/(package\.json|readme\.md|changelog\.md|LICENSE\.txt)$/,
  /^extension\/dist\/(extension|worker|webview|capture)\.js$/,
  /^extension\/dist\/webview\.css$/,
  /^extension\/dist\/sql-wasm\.wasm$/,
  /^extension\/dist\/THIRD-PARTY-NOTICES\.txt$/,
  /^extension\/resources\/[\w./-]+\.(png|svg|md)$/,
];

/** Node's modules that reach the network (the bundles' only way out besides the webview's CSP). */
const NETWORK = new Set(['http', 'https', 'http2', 'net', 'tls', 'dgram', 'dns', 'dns/promises', 'inspector']);

const repo = resolve('.');
const hasExtension = existsSync(join(repo, 'src/extension/extension.ts'));

describe('VSIX package (npm run package)', function () {
  this.timeout(180_000);
  let dir: string;
  let file: string;
  let built: { log: string; dist: string[] };
  let entries: Map<string, { size: number; compressedSize: number; data: Buffer }>;
  let manifest: Record<string, any>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-vsix-test-'));
    file = join(dir, 'prefix-lens.vsix');
    built = packageVsix(repo, file);
    entries = await readVsix(file);
    manifest = JSON.parse(entries.get('extension/package.json')!.data.toString('utf8'));
    const size = statSync(file).size;
    console.log(`      VSIX: ${entries.size} entries, ${size} bytes (${(size / 1024).toFixed(1)} KiB; budget ${VSIX_BUDGET_BYTES} bytes)`);
    for (const [name, e] of entries) console.log(`        ${String(e.size).padStart(8)}  ${name}`);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('holds no entry outside the allowlist (no sources, tests, fixtures, scripts, maps, CLI, local env)', () => {
    const unexpected = [...entries.keys()].filter((n) => !ALLOWED.some((re) => re.test(n)));
    assert.deepEqual(unexpected, []);
  });

  it('packages without a vsce warning (license, repository, readme, activation)', () => {
    assert.deepEqual(built.log.split('\n').filter((l) => /WARNING/i.test(l)), []);
    assert.match(built.log, /DONE\s+Packaged:/);
  });

  it('stays within the size budget', () => {
    assert.ok(statSync(file).size <= VSIX_BUDGET_BYTES, `${statSync(file).size} bytes > budget ${VSIX_BUDGET_BYTES}`);
  });

  it('holds every file the production build writes for the extension (all but the two CLI bundles)', () => {
    const wanted = built.dist.filter((f) => f !== 'cli.js' && f !== 'cli-main.js').map((f) => `extension/dist/${f}`);
    assert.ok(wanted.includes('extension/dist/sql-wasm.wasm'), 'the build ships sql.js’s wasm');
    assert.deepEqual(wanted.filter((n) => !entries.has(n)), []);
    assert.ok(!built.dist.some((f) => f.endsWith('.map')), `no source maps in a production build: ${built.dist}`);
  });

  it('ships minified bundles without source maps that need nothing outside the package at run time', () => {
    const bundles = [...entries.keys()].filter((n) => n.endsWith('.js'));
    assert.ok(bundles.includes('extension/dist/webview.js'));
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    for (const name of bundles) {
      const js = entries.get(name)!.data.toString('utf8');
      assert.ok(!/sourceMappingURL/.test(js), `${name} points at a source map`);
      const lines = js.split('\n').length;
      assert.ok(js.length / lines > 400, `${name} does not look minified (${lines} lines for ${js.length} bytes)`);
      // --no-dependencies ships no node_modules: a bare require would fail once installed.
      const required = [...js.matchAll(/\brequire\(\s*["'`]([^"'`]+)["'`]\s*\)/g)].map((m) => m[1]);
      const foreign = [...new Set(required)].filter((m) => !builtins.has(m) && m !== 'vscode');
      assert.deepEqual(foreign, [], `${name} requires modules that are not in the VSIX`);
      // The privacy promise (MARKETPLACE.md): nothing is sent anywhere, so no network module is
      // loaded — except by the capture proxy's own bundle, loaded only by "Start Capture Proxy",
      // which forwards the agent's requests (http and https, nothing else).
      const network = [...new Set(required)].filter((m) => NETWORK.has(m.replace(/^node:/, ''))).map((m) => m.replace(/^node:/, '')).sort();
      assert.deepEqual(network, name === 'extension/dist/capture.js' ? ['http', 'https'] : [], `${name} loads a network module`);
    }
  });

  it('carries the Marketplace metadata, readme, changelog and MIT license', () => {
    for (const k of ['displayName', 'description', 'publisher', 'icon', 'categories', 'keywords', 'repository', 'license', 'galleryBanner']) {
      assert.ok(manifest[k], `package.json has ${k}`);
    }
    assert.equal(manifest.license, 'MIT');
    assert.match(entries.get('extension/LICENSE.txt')!.data.toString('utf8'), /^MIT License/);
    assert.match(entries.get('extension/changelog.md')!.data.toString('utf8'), /Keep a Changelog/);
    const readme = entries.get('extension/readme.md')!.data.toString('utf8');
    assert.equal(readme.split('\n')[0], '# Prefix Lens');
    // vsce rewrote every relative image to the repository's raw URL; each one exists in the project.
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)\s]+)/g)].map((m) => m[1]);
    // the Timeline, and the Sessions and Fleet views (screenshots from the browser suites)
    for (const shot of [/\/vscode\/timeline-light\.png$/, /\/vscode\/sessions-fleet-light\.png$/]) {
      assert.ok(images.some((s) => shot.test(s)), `the readme shows ${shot} (${images})`);
    }
    const raw = `${manifest.repository.url.replace(/\.git$/, '')}/raw/HEAD/`;
    for (const src of images) {
      assert.ok(src.startsWith(raw), `${src} is served from the repository`);
      assert.ok(existsSync(join(repo, src.slice(raw.length))), `${src.slice(raw.length)} exists`);
    }
  });

  it('carries the license notice of every package its bundles and the wasm come from', () => {
    const notices = entries.get('extension/dist/THIRD-PARTY-NOTICES.txt')?.data.toString('utf8');
    assert.ok(notices, 'dist/THIRD-PARTY-NOTICES.txt is in the VSIX');
    const listed = [...notices.matchAll(/^- (\S+)@\S+ \(/gm)].map((m) => m[1]);
    const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8'));
    // the webview bundles zod; the wasm is sql.js's; the extension adds execa's tree
    const wanted = ['zod', 'sql.js', ...(hasExtension ? ['execa'] : [])];
    assert.deepEqual(wanted.filter((p) => !listed.includes(p)), []);
    for (const p of listed) {
      const version = lock.packages[`node_modules/${p}`]?.version;
      assert.ok(notices.includes(`${p}@${version} (`), `${p} is listed at the locked version ${version}`);
    }
    assert.ok(!/no license file in the package/.test(notices), 'every bundled package has its license text');
  });

  it('documents every setting with its default in the readme settings table, and no other', () => {
    const props: Record<string, { default: unknown }> = manifest.contributes?.configuration?.properties ?? {};
    const readme = entries.get('extension/readme.md')!.data.toString('utf8');
    const rows = [...readme.matchAll(/^\| `(prefixLens\.[\w.]+)` \| `([^`]*)` \|/gm)].map((m) => [m[1], m[2]]);
    assert.deepEqual(rows, Object.entries(props).map(([k, v]) => [k, JSON.stringify(v.default)]));
  });

  it('has a 128×128 PNG icon inside the package', () => {
    const png = entries.get(`extension/${posix.normalize(manifest.icon)}`)?.data;
    assert.ok(png, `icon ${manifest.icon} is in the VSIX`);
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [128, 128]);
  });

  it('finds every file the manifest names (main, view and walkthrough media) inside the package', () => {
    const named: string[] = [];
    if (manifest.main) named.push(manifest.main);
    const c = manifest.contributes ?? {};
    for (const list of Object.values<any[]>(c.viewsContainers ?? {})) for (const v of list) if (v.icon) named.push(v.icon);
    for (const list of Object.values<any[]>(c.views ?? {})) for (const v of list) if (typeof v.icon === 'string') named.push(v.icon);
    for (const w of c.walkthroughs ?? []) {
      for (const s of w.steps) {
        const m = s.media ?? {};
        for (const p of [m.markdown, m.svg, ...(typeof m.image === 'string' ? [m.image] : Object.values(m.image ?? {}))]) if (p) named.push(p);
      }
    }
    const missing = named.filter((p) => !entries.has(`extension/${posix.normalize(p)}`));
    assert.deepEqual(missing, []);
    if (hasExtension) {
      assert.equal(manifest.main, './dist/extension.js');
      assert.ok((c.walkthroughs ?? []).length >= 1, 'a walkthrough is contributed');
    }
  });

  it('is a workspace (Node) extension for the VS Code its API types are pinned to, with limited untrusted and no virtual workspace support', () => {
    const vsixManifest = entries.get('extension.vsixmanifest')!.data.toString('utf8');
    const prop = (id: string) => new RegExp(`Id="${id.replace(/\./g, '\\.')}" Value="([^"]*)"`).exec(vsixManifest)?.[1];
    assert.equal(prop('Microsoft.VisualStudio.Code.Engine'), manifest.engines.vscode);
    if (!hasExtension) return; // before the extension exists the package is an empty shell
    assert.equal(prop('Microsoft.VisualStudio.Code.ExtensionKind'), 'workspace');
    const types = manifest.devDependencies['@types/vscode'];
    assert.ok(types, '@types/vscode is a devDependency');
    // engines.vscode ^X.Y.0 = the oldest VS Code whose API is used; the types pinned to that minor.
    assert.equal(types.replace(/^[~^]/, '').split('.').slice(0, 2).join('.'), manifest.engines.vscode.replace(/^\^/, '').split('.').slice(0, 2).join('.'));
    assert.equal(manifest.capabilities?.untrustedWorkspaces?.supported, 'limited');
    assert.ok((manifest.capabilities.untrustedWorkspaces.restrictedConfigurations ?? []).includes('prefixLens.phux.path'));
    assert.equal(manifest.capabilities?.virtualWorkspaces?.supported ?? manifest.capabilities?.virtualWorkspaces, false);
  });
});
