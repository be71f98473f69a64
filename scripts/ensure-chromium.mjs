// Makes sure Debian's Chromium is installed and returns its path; the browser tests, the timeline
// benchmark and the extension's webview screenshots drive it with playwright-core (which downloads
// no browser of its own). Idempotent: when the binary is there it only returns the path.
// Run directly (`node scripts/ensure-chromium.mjs`) it prints the path.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** Where Debian's `chromium` package puts the launcher. `PREFIX_LENS_CHROMIUM` overrides it. */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/**
 * Flags every headless run uses: no sandbox (root in CI), no GPU, and nothing that reaches the
 * network by itself (the tests and the report must work offline).
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Returns the path of a Chromium binary, installing Debian's `chromium` package with
 * `apt-get update && apt-get install -y chromium` when it is missing (says so on stderr first).
 * @param {{ log?: (line: string) => void }} [options]
 * @returns {string} absolute path of the browser executable
 * @throws Error when it is missing and cannot be installed (not root, no apt-get, apt failed)
 */
export function ensureChromium(options = {}) {
  const log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  const override = process.env.PREFIX_LENS_CHROMIUM;
  if (override) {
    if (!existsSync(override)) throw new Error(`PREFIX_LENS_CHROMIUM=${override}: no such file`);
    return override;
  }
  if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  if (!existsSync('/usr/bin/apt-get')) {
    throw new Error(`${DEBIAN_CHROMIUM} is missing and there is no apt-get to install it: install Chromium and set PREFIX_LENS_CHROMIUM to its path`);
  }
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new Error(`${DEBIAN_CHROMIUM} is missing: run "sudo apt-get update && sudo apt-get install -y chromium" (or set PREFIX_LENS_CHROMIUM)`);
  }
  log(`ensure-chromium: ${DEBIAN_CHROMIUM} is missing; installing Debian's chromium package (apt-get update, apt-get install -y chromium) — this takes a few minutes once`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  execFileSync('apt-get', ['install', '-y', 'chromium'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  if (!existsSync(DEBIAN_CHROMIUM)) throw new Error(`apt-get installed chromium but ${DEBIAN_CHROMIUM} is still missing`);
  log(`ensure-chromium: installed ${DEBIAN_CHROMIUM}`);
  return DEBIAN_CHROMIUM;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${ensureChromium()}\n`);
}
