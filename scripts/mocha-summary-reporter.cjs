// Mocha's spec reporter plus the plain closing line CI reads: "N passed, N failed".
const Mocha = require('mocha');
const { EVENT_RUN_END } = Mocha.Runner.constants;

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats;
      const skipped = s.pending ? `, ${s.pending} skipped` : '';
      process.stdout.write(`\n${s.passes} passed, ${s.failures} failed${skipped}\n`);
    });
  }
}
module.exports = SummaryReporter;
