// Runs every mocha suite (unit tests over the recorded fixtures). Exit code = mocha's.
import { execa } from 'execa';
import { ensureChromium } from './ensure-chromium.mjs';

// The browser suites (test/browser) drive Debian's Chromium: install it first when missing.
ensureChromium();

const extra = process.argv.slice(2);
const result = await execa('npx', ['mocha', ...extra], { stdio: 'inherit', reject: false });
process.exit(result.exitCode ?? 1);
