// Mocha's spec reporter plus the plain closing line CI reads: "N passed, N failed".
// Under scripts/test.mjs (PREFIX_LENS_RESULTS set) it writes the counts to that JSON file instead,
// and test.mjs prints the one closing line summing every suite.
const fs = require('node:fs');
const Mocha = require('mocha');
const { EVENT_RUN_END, EVENT_TEST_FAIL } = Mocha.Runner.constants;

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const failures = [];
    runner.on(EVENT_TEST_FAIL, (test, err) => failures.push({ title: test.fullTitle(), error: String(err && err.message) }));
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats;
      const out = process.env.PREFIX_LENS_RESULTS;
      if (out) {
        fs.writeFileSync(out, JSON.stringify({ passed: s.passes, failed: s.failures, skipped: s.pending, failures }));
        return;
      }
      const skipped = s.pending ? `, ${s.pending} skipped` : '';
      process.stdout.write(`\n${s.passes} passed, ${s.failures} failed${skipped}\n`);
    });
  }
}
module.exports = SummaryReporter;
