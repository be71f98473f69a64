/**
 * A change in the messages after a compaction is named as the compaction even when the history
 * first differs past the summary. Recording: OpenCode's compaction session (test/fixtures/opencode,
 * `ses_dcf12063affe59b8qPYo2NJTOV`): the auto compaction (summary request 020) and then a manual
 * one (038) wrote the same synthetic summary, so the request after the manual one (039) first
 * differs from the request before it (022) at the turn after the summary, messages[3]
 * ("Continue if you have next steps…" → "Turn six after manual compaction."). It was an
 * "edit at message 2".
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { analyzeSession } from '../../../src/core/analyze.js';
import { readOpenCode } from '../../../src/hosts/opencode/index.js';
import { readCaptureSession } from '../../../src/hosts/capture/index.js';
import { readCodexSession } from '../../../src/hosts/codex/index.js';
import { readPiSession } from '../../../src/hosts/pi/index.js';
import { rollout } from '../codex/helpers.js';
import { readdirSync } from 'node:fs';

const DIR = 'test/fixtures/opencode';
const ID = 'ses_dcf12063affe59b8qPYo2NJTOV';

describe('a messages break after a compaction', () => {
  for (const [mode, opts, index, matched, summary] of [
    ['wire', { requestsDir: join(DIR, 'requests') }, 10, 8, 9],
    ['reconstructed', {}, 9, 7, 8],
  ] as const) {
    it(`${mode}: the request after the manual compaction (#${index}, vs #${matched}) is named as the compaction, the summary (#${summary}) between them`, async () => {
      const s = (await readOpenCode(DIR, opts)).find((x) => x.id === ID)!;
      const a = analyzeSession(s).requests;
      assert.equal(a[summary - 1].request.kind, 'summary');
      const r = a[index - 1];
      assert.deepEqual([r.verdict, r.matched, r.break!.segment, r.break!.blockIndex, r.break!.path], ['break', matched, 'messages', 2, 'messages[3].content']);
      assert.deepEqual(
        r.causes.map((c) => [c.kind, c.detail, c.certainty]),
        [['history-rewritten', 'compaction: history replaced by a summary (a summary request came after the compared one), first changed at message 2', 'certain']],
      );
      // The auto compaction before it still names the summary block itself.
      const first = a.find((x) => x.verdict === 'break')!;
      assert.equal(first.causes[0].detail, 'compaction: history replaced by a summary at message 0');
    });
  }
});

/**
 * The compaction is named wherever the request first differs after it, on every host, and its
 * certainty follows the evidence: `certain` when the transcript (or the recorder) says a
 * compaction or summary request came between, `likely` when the only witness is a summary
 * request recognized by its body's text (a folder of captured bodies read alone).
 */
describe('a break after a compaction names it, with the certainty of its evidence', () => {
  const causes = (r: { causes: Array<{ kind: string; certainty: string; detail: string }> }) => r.causes.map((c) => [c.kind, c.certainty, c.detail]);
  const SKILLS = ['system-changed', 'certain', 'block 1 removed; element `<skills_instructions>` removed'];

  it('Codex bodies alone: #9 breaks at system 1 (the developer item the replacement history drops); the compaction (#8, recognized by its prompt) is named as likely', async () => {
    const a = analyzeSession(await readCaptureSession('test/fixtures/codex/requests')).requests;
    assert.deepEqual([a[7].request.kind, a[7].request.kindEvidence], ['summary', 'heuristic']);
    const r = a[8];
    assert.deepEqual([r.verdict, r.matched, r.break!.segment, r.break!.blockIndex], ['break', 7, 'system', 1]);
    assert.deepEqual(causes(r), [
      ['history-rewritten', 'likely', 'compaction: history replaced by a summary (a request recognized as a summary by its text came after the compared one); system 1 changed with it'],
      SKILLS,
    ]);
  });

  it('Codex rollout with its bodies: the same break; the rollout records the compaction (`compacted`), so it is certain', async () => {
    const [s] = await readCodexSession(rollout('test/fixtures/codex'), { requestsDir: 'test/fixtures/codex/requests' });
    const a = analyzeSession(s).requests;
    assert.deepEqual([a[7].request.kind, a[7].request.kindEvidence], ['summary', undefined]);
    assert.deepEqual(causes(a[8]), [
      ['history-rewritten', 'certain', 'compaction: history replaced by a summary (a summary request came after the compared one); system 1 changed with it'],
      SKILLS,
    ]);
  });

  it('Codex rollout alone: #8 breaks at system 1 (the leading developer item the replacement history dropped); the compaction is named before that change', async () => {
    const [s] = await readCodexSession(rollout('test/fixtures/codex'));
    const r = analyzeSession(s).requests[7];
    assert.deepEqual([r.verdict, r.matched, r.break!.segment, r.break!.blockIndex], ['break', 6, 'system', 1]);
    assert.deepEqual(causes(r), [
      ['history-rewritten', 'certain', 'compaction: history replaced by a summary (a summary request came after the compared one); system 1 changed with it'],
      ['system-changed', 'certain', 'block 1 removed; element `<skills_instructions>` removed'],
    ]);
  });

  it('Pi bodies alone: the summaries are recognized by their system prompt, so the compaction (#11) and the branch (#13) after them are likely; with the session they are certain (its summary blocks)', async () => {
    const alone = analyzeSession(await readCaptureSession('test/fixtures/pi/main/requests')).requests;
    assert.deepEqual(
      alone.filter((r) => r.request.kind === 'summary').map((r) => [r.request.index, r.request.kindEvidence]),
      [[9, 'heuristic'], [10, 'heuristic'], [12, 'heuristic']],
    );
    assert.deepEqual(causes(alone[10]), [['history-rewritten', 'likely', 'compaction: history replaced by a summary (a request recognized as a summary by its text came after the compared one), first changed at message 0']]);
    assert.deepEqual(causes(alone[12]), [['history-rewritten', 'likely', 'compaction: history replaced by a summary (a request recognized as a summary by its text came after the compared one), first changed at message 2']]);
    const base = 'test/fixtures/pi/main/agent/sessions';
    const sub = join(base, readdirSync(base)[0]);
    const joined = await readPiSession(join(sub, readdirSync(sub).find((f) => f.endsWith('.jsonl'))!), { requestsDir: 'test/fixtures/pi/main/requests' });
    const b = analyzeSession(joined).requests;
    assert.deepEqual(causes(b[10]), [['history-rewritten', 'certain', 'compaction: history replaced by a summary at message 0']]);
    assert.deepEqual(causes(b[12]), [['history-rewritten', 'certain', 'branch: the conversation moved to another branch at message 2']]);
  });

  it('OpenCode bodies alone: kinds from the recorder meta, none a guess', async () => {
    const s = await readCaptureSession('test/fixtures/opencode/requests');
    assert.deepEqual(s.requests.filter((r) => r.kindEvidence !== undefined), []);
  });
});
