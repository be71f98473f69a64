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
