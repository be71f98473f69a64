/**
 * Generated corpus, Pi: mutations of the recorded main session (one line changed, inserted,
 * removed, truncated…; hostile values at any path: 100,000-level nesting, numbers outside the
 * Date range or beyond Infinity, prototype keys, control characters) through `analyze --json`,
 * `analyze` and `check`. For every input: no crash, no hang, valid JSON of the documented shape,
 * nothing a terminal interprets in the output, nothing written, and no good line lost — every
 * assistant entry the mutation did not touch still gives its request, at its (shifted) line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { checkJson, checkText, checkUnwritten, runCli, snapshot } from './harness.js';
import { applyLineMutation, applyValueMutations, lineMutationArb, PROTO_KEYS, slotCount, type LineMutation } from './mutate.js';

const SESSIONS = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';
const RECORDED = join(SESSIONS, readdirSync(SESSIONS).find((n) => n.endsWith('.jsonl'))!);
/** Fixed seed and bounded runs: the corpus is the same on every run and fits the test budget. */
const SEED = 20261201;
const RUNS = 150;
/** The fields the Pi reader looks up tables with, turns into times, tokens and prices, or re-encodes. */
/** 0-based lines of the assistant entries and tool results (where arguments and usage live). */
const HOT = original().split('\n').flatMap((l, i) => (/"role":"(assistant|toolResult)"/.test(l) ? [i] : []));
function original(): string {
  return readFileSync(RECORDED, 'utf8');
}
const FIELDS: Array<Array<string | number>> = [
  ['type'],
  ['id'],
  ['parentId'],
  ['timestamp'],
  ['customType'],
  ['thinkingLevel'],
  ['message', 'role'],
  ['message', 'api'],
  ['message', 'provider'],
  ['message', 'model'],
  ['message', 'timestamp'],
  ['message', 'stopReason'],
  ['message', 'content'],
  ['message', 'content', 0, 'type'],
  ['message', 'content', 0, 'text'],
  ['message', 'content', 1, 'arguments'],
  ['message', 'content', 1, 'name'],
  ['message', 'content', 0, 'thinkingSignature'],
  ['message', 'usage', 'input'],
  ['message', 'usage', 'cacheRead'],
  ['message', 'usage', 'cacheWrite'],
  ['message', 'usage', 'cost', 'input'],
  ['message', 'usage', 'cost', 'output'],
  ['message', 'details'],
];

describe('hostile corpus: Pi session mutations', function () {
  this.timeout(120_000);
  let dir: string;
  let baseline: number[];
  const original = readFileSync(RECORDED, 'utf8');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-hostile-pi-'));
    writeFileSync(join(dir, 'session.jsonl'), original);
    const report = checkJson(await runCli(['analyze', '--json', '--no-cache', join(dir, 'session.jsonl')]), 'the recorded session');
    baseline = report.sessions[0].requests.map((r) => r.line);
    // The recorded main session: 13 assistant entries (reconstructed, one request each).
    assert.deepEqual(baseline, [5, 7, 9, 12, 20, 22, 24, 28, 33, 38, 41, 43, 45]);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`${RUNS} generated mutations: no crash, no hang, valid --json, clean terminal, nothing written, no good line lost`, async () => {
    await fc.assert(
      fc.asyncProperty(lineMutationArb(FIELDS, HOT), async (m: LineMutation) => {
        const file = join(dir, 'session.jsonl');
        const mutated = applyLineMutation(original, m);
        writeFileSync(file, mutated.text);
        const before = snapshot(dir);
        const what = `mutation ${JSON.stringify(m).slice(0, 300)}`;

        const report = checkJson(await runCli(['analyze', '--json', '--no-cache', file]), what);
        assert.equal(report.sessions.length, 1, `${what}: one session`);
        const s = report.sessions[0];
        const lines = new Set(s.requests.map((r) => r.line));
        for (const l of baseline) {
          const now = mutated.kept.get(l);
          if (now !== undefined) assert.ok(lines.has(now), `${what}: the untouched assistant entry of line ${l} (now ${now}) lost its request; requests at ${[...lines].join(',')}`);
        }
        // A line that is no longer JSON at all is reported at that line.
        const changedText = mutated.changed ? mutated.text.split('\n')[mutated.changed - 1] : undefined;
        if (changedText !== undefined && changedText.trim() !== '' && !isJson(changedText)) {
          assert.ok(s.diagnostics.some((d) => d.line === mutated.changed), `${what}: no diagnostic at line ${mutated.changed}`);
        }

        checkText(await runCli(['analyze', '--no-cache', file]), [0, 2], `${what} (text)`);
        checkText(await runCli(['check', '--no-cache', file]), [0, 1, 2], `${what} (check)`);
        checkUnwritten(before, dir, what);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('100,000 levels of nesting at every slot of every tool-call and tool-result line: cut with a warning at that line, nothing lost', async () => {
    const file = join(dir, 'session.jsonl');
    const lines = original.split('\n');
    const targets = lines.flatMap((l, i) => (/"type":"toolCall"|"role":"toolResult"/.test(l) ? [i] : []));
    assert.equal(targets.length, 6, 'the recorded session has 3 tool calls and 3 tool results');
    for (const i of targets) {
      for (let pick = 0; pick < slotCount(lines[i]); pick++) {
        const text = [...lines.slice(0, i), applyValueMutations(lines[i], [{ op: 'set', pick, value: { t: 'deep-array', depth: 100_000 } }]), ...lines.slice(i + 1)].join('\n');
        writeFileSync(file, text);
        const what = `100,000 levels at slot ${pick} of line ${i + 1}`;
        const s = checkJson(await runCli(['analyze', '--json', '--no-cache', file]), what).sessions[0];
        assert.ok(s.diagnostics.some((d) => d.line === i + 1 && /nested deeper than 512 levels/.test(d.message)), `${what}: the cut is reported at its line`);
        const lost = baseline.filter((l) => l !== i + 1 && !s.requests.some((r) => r.line === l));
        assert.deepEqual(lost, [], `${what}: requests lost`);
      }
    }
  });

  it('every prototype key as the entry type, role, api, provider and model of every line: all read, counted, nothing lost', async () => {
    const file = join(dir, 'session.jsonl');
    for (const key of PROTO_KEYS) {
      for (const field of [['message', 'api'], ['message', 'provider'], ['message', 'model'], ['message', 'role'], ['type']]) {
        const lines = original.split('\n').filter(Boolean);
        // Line 1 is the header: its type stays `session`.
        const text = [lines[0], ...lines.slice(1).map((l) => applyValueMutations(l, [{ op: 'field', field, value: { t: 'string', s: key } }]))].join('\n') + '\n';
        writeFileSync(file, text);
        const what = `${field.join('.')} = ${key} on every line`;
        const s = checkJson(await runCli(['analyze', '--json', '--no-cache', file]), what).sessions[0];
        if (field[0] === 'message' && field[1] !== 'role') {
          assert.deepEqual(s.requests.map((r) => r.line), baseline, `${what}: every assistant entry still gives its request`);
        } else {
          // Unknown types and roles are kept and counted as ignored, under their own name.
          assert.equal(s.requests.length, 0, what);
          const ignoredKey = field[0] === 'type' ? key : `message:${key}`;
          assert.ok(Object.hasOwn(s.ignored, ignoredKey) && s.ignored[ignoredKey] > 0, `${what}: counted as ignored ${JSON.stringify(s.ignored)}`);
        }
        checkText(await runCli(['analyze', '--no-cache', file]), [0, 2], `${what} (text)`);
      }
    }
  });
});

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
