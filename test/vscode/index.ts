/**
 * Entry of the extension-host suite (loaded by VS Code's extension host through the workbench's
 * `extensionTestsPath`). Runs one suite bundle with mocha and writes its counts to
 * `$PREFIX_LENS_TEST_RESULTS` (JSON) for scripts/test.mjs, which runs in another process.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Mocha from 'mocha';

export async function run(): Promise<void> {
  const suite = process.env.PREFIX_LENS_TEST_SUITE ?? 'main';
  const grep = process.env.PREFIX_LENS_TEST_GREP;
  const mocha = new Mocha({ ui: 'bdd', timeout: 90_000, color: false, reporter: 'spec', ...(grep ? { grep } : {}) });
  mocha.addFile(join(__dirname, `${suite}.js`));
  const failures: Array<{ title: string; error: string }> = [];
  await new Promise<void>((resolve, reject) => {
    const runner = mocha.run((failed) => {
      const s = runner.stats!;
      const out = process.env.PREFIX_LENS_TEST_RESULTS;
      if (out) writeFileSync(out, JSON.stringify({ passed: s.passes, failed: s.failures, skipped: s.pending, failures }));
      if (failed) reject(new Error(`${failed} extension-host test(s) failed`));
      else resolve();
    });
    runner.on('fail', (test, err: Error) => {
      failures.push({ title: test.fullTitle(), error: err.message });
      // Printed at once too: a later test that hangs must not hide why this one failed.
      console.log(`      FAILED: ${err.stack ?? err.message}`);
    });
  });
}
