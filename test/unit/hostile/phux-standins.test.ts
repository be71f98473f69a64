/**
 * Generated corpus, phux: misbehaving stand-ins for the phux binary behind `prefix-lens fleet`
 * (test/fixtures/phux/fake-phux.mjs) — mutations of the recorded fleet answer (hostile values in
 * every pane field: 100,000-level nesting, control characters, prototype keys), floods on stderr,
 * exit codes, and stand-ins that hang, flood stdout, or leave a descendant holding stdout. For
 * every run: exit code 0 (every phux state is calm), `--json` valid JSON of the documented shape,
 * nothing a terminal interprets in the text output, and an answer within the 1 s bound plus the
 * start-up of the stand-in (a hang would show as tens of seconds).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { FAKE_PHUX, fixture } from '../phux/helpers.js';
import { checkText, FleetShape, runCli } from './harness.js';
import { applyValueMutations, fieldMutationArb, valueMutationArb, type ValueMutation } from './mutate.js';

const SEED = 20261203;
const RUNS = 25;
/** Generous over the 1 s bound: the stand-in is a Node process that starts on a shared machine. */
const ANSWER_WITHIN_MS = 8_000;

const PANE_FIELDS: Array<Array<string | number>> = ['terminal', 'session', 'window', 'state', 'attention', 'title', 'cwd', 'confidence', 'agent', 'sources'].flatMap((f) => [
  ['agents', 0, f],
  ['agents', 3, f],
]).concat([['agents', 0, 'agent', 'label'], ['agents', 0, 'agent', 'kind'], ['schema_version'], ['agents']]);

describe('hostile corpus: misbehaving phux stand-ins behind prefix-lens fleet', function () {
  this.timeout(240_000);
  let dir: string;
  const saved = { ...process.env };
  before(() => (dir = mkdtempSync(join(tmpdir(), 'prefix-lens-hostile-phux-'))));
  after(() => {
    process.env = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  /** `fleet --json` and `fleet` against the stand-in in `mode`, with extra environment. */
  async function fleet(mode: string, env: Record<string, string>, what: string): Promise<Record<string, unknown>> {
    process.env = { ...saved, PHUX_BIN: '', PHUX_SOCKET: '', FAKE_PHUX_MODE: mode, ...env };
    try {
      const json = await runCli(['fleet', '--json', '--phux-bin', FAKE_PHUX]);
      checkText(json, [0], what);
      assert.ok(json.ms < ANSWER_WITHIN_MS, `${what}: fleet took ${Math.round(json.ms)} ms`);
      const doc = JSON.parse(json.out) as Record<string, unknown>;
      assert.ok(FleetShape.safeParse(doc).success, `${what}: fleet --json shape: ${json.out.slice(0, 300)}`);
      const text = await runCli(['fleet', '--phux-bin', FAKE_PHUX]);
      checkText(text, [0], `${what} (text)`);
      assert.ok(text.ms < ANSWER_WITHIN_MS, `${what} (text): fleet took ${Math.round(text.ms)} ms`);
      return doc;
    } finally {
      process.env = saved;
    }
  }

  it(`${RUNS} generated answers (pane fields, stderr, exit codes): calm, valid, clean, bounded`, async () => {
    const recorded = fixture('phux-agent-list-mixed-fleet.json');
    const answerArb = fc.record({
      muts: fc.array(fc.oneof(valueMutationArb, fieldMutationArb(PANE_FIELDS), fieldMutationArb(PANE_FIELDS)), { minLength: 1, maxLength: 3 }),
      stderr: fc.oneof(fc.constant(''), fc.constant('\u001b]0;pwned\u0007 warning\n'), fc.integer({ min: 65_000, max: 300_000 }).map((n) => 'x'.repeat(n))),
      exit: fc.constantFrom(0, 0, 0, 1, 2, 101),
    });
    await fc.assert(
      fc.asyncProperty(answerArb, async (a: { muts: ValueMutation[]; stderr: string; exit: number }) => {
        writeFileSync(join(dir, 'out.json'), applyValueMutations(recorded, a.muts));
        writeFileSync(join(dir, 'err.txt'), a.stderr);
        const what = `answer ${JSON.stringify({ ...a, stderr: `${a.stderr.length} bytes` }).slice(0, 300)}`;
        const doc = await fleet('file', { FAKE_PHUX_STDOUT_FILE: join(dir, 'out.json'), FAKE_PHUX_STDERR_FILE: join(dir, 'err.txt'), FAKE_PHUX_EXIT: String(a.exit) }, what);
        // A stderr flood is never "stdout too large".
        if (doc.state === 'invalid') assert.notEqual(doc.cause === 'too-large' && readFileSync(join(dir, 'out.json')).length <= 1_048_576, true, `${what}: too-large for a small stdout`);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  for (const [mode, state] of [
    ['hang', 'timeout'],
    ['grandchild-hang', 'invalid'],
    ['fleet-holder', 'ok'],
    ['huge', 'invalid'],
    ['stderr-flood', 'ok'],
    ['crash', 'invalid'],
  ] as const) {
    it(`stand-in "${mode}": ${state}, within the bound`, async () => {
      const doc = await fleet(mode, { FAKE_PHUX_CHILD_PID_FILE: join(dir, `${mode}.pid`) }, mode);
      // Under a loaded machine the stand-in may not even start within 1 s: then it is a timeout.
      assert.ok(doc.state === state || doc.state === 'timeout', `${mode}: ${JSON.stringify(doc).slice(0, 300)}`);
      if (mode === 'fleet-holder') {
        try {
          process.kill(Number(readFileSync(join(dir, `${mode}.pid`), 'utf8')), 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    });
  }

  it('100,000 levels of nesting in a pane field: the fleet is still shown, --json stays JSON', async () => {
    writeFileSync(join(dir, 'out.json'), applyValueMutations(fixture('phux-agent-list-mixed-fleet.json'), [{ op: 'field', field: ['agents', 0, 'title'], value: { t: 'deep-array', depth: 100_000 } }]));
    const doc = await fleet('file', { FAKE_PHUX_STDOUT_FILE: join(dir, 'out.json') }, 'deep pane field');
    assert.ok(['invalid', 'timeout'].includes(String(doc.state)), `a title that is not a string is invalid output: ${JSON.stringify(doc).slice(0, 200)}`);
    writeFileSync(join(dir, 'out.json'), applyValueMutations(fixture('phux-agent-list-mixed-fleet.json'), [{ op: 'field', field: ['agents', 0, 'extra'], value: { t: 'deep-array', depth: 100_000 } }]));
    const kept = await fleet('file', { FAKE_PHUX_STDOUT_FILE: join(dir, 'out.json') }, 'deep unknown pane field');
    assert.ok(['ok', 'timeout'].includes(String(kept.state)), `an unknown deep field is kept (cut): ${JSON.stringify(kept).slice(0, 200)}`);
  });
});
