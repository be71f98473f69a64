// Third-party notices for what a build bundles: every npm package esbuild took code from (its
// metafile inputs under node_modules/), with its version, license and license text. The MIT and
// similar licenses ask that their notice ship with copies of the code; the VSIX carries this file.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * @param {Array<{inputs: Record<string, unknown>}>} metafiles esbuild metafiles of the shipped bundles
 * @param {string} outFile where to write the notices (plain text)
 * @param {string[]} [more] roots of packages shipped as files rather than bundled (sql.js's wasm)
 * @returns {string[]} the packages, as `name@version`, sorted
 */
export function writeNotices(metafiles, outFile, more = []) {
  const roots = new Set(more);
  for (const m of metafiles) {
    for (const input of Object.keys(m.inputs)) {
      // the innermost node_modules/<name> or node_modules/@scope/<name>
      const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
      if (match) roots.add(match[1]);
    }
  }
  const packages = [...roots].map((root) => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const file = readdirSync(root).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
    const text = file ? readFileSync(join(root, file), 'utf8').trim() : `(no license file in the package; package.json says ${pkg.license ?? 'nothing'})`;
    return { id: `${pkg.name}@${pkg.version}`, license: pkg.license ?? 'unknown', text };
  });
  packages.sort((a, b) => a.id.localeCompare(b.id));
  const unique = packages.filter((p, i) => i === 0 || p.id !== packages[i - 1].id);
  const body = unique.map((p) => `${'='.repeat(78)}\n${p.id} (${p.license})\n${'='.repeat(78)}\n\n${p.text}\n`).join('\n');
  writeFileSync(outFile, `Prefix Lens bundles code from these packages (npm), under their licenses:\n\n${unique.map((p) => `- ${p.id} (${p.license})`).join('\n')}\n\n${body}`);
  return unique.map((p) => p.id);
}

