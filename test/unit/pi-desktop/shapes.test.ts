/**
 * Collapsed vs mid-conversation (Nib ADR 0337) on the built PI-Desktop sessions: where each
 * system delta breaks the prefix, which section it is and what caused it, and the re-billed tokens
 * (and USD where the bundled rules price the model) in both shapes.
 */
import assert from 'node:assert/strict';
import { ANTHROPIC, analyzed, MIDCONVO, SETTLE } from './helpers.js';

const where = (b: { segment: string; blockIndex: number; path: string; byteOffset: number } | null) => (b ? [b.segment, b.blockIndex, b.path, b.byteOffset] : null);

describe('PI-Desktop system deltas, collapsed vs mid-conversation', () => {
  it('"Parser delegation" (route flag unknown → collapsed): every system delta breaks the head at messages[0].content', async () => {
    const { report } = await analyzed(SETTLE);
    assert.deepEqual(report.requests.map((r) => r.verdict), ['cold', 'break', 'break', 'hit', 'break', 'break', 'break', 'hit', 'break', 'hit']);
    assert.deepEqual(
      report.requests.filter((r) => r.break).map((r) => [r.index, ...where(r.break)!, r.break!.section?.name ?? null, r.break!.section?.change ?? null]),
      [
        [2, 'system', 0, 'messages[0].content', 367, 'resumable', 'appended'],
        [3, 'system', 0, 'messages[0].content', 371, 'skill:pdf', 'appended'],
        [5, 'system', 0, 'messages[0].content', 356, 'skills', 'edited'],
        [6, 'system', 0, 'messages[0].content', 356, 'tool_activation', 'appended'],
        [7, 'system', 0, 'messages[0].content', 461, 'context_budget', 'appended'],
        [9, 'messages', 0, 'messages[1].content[0].text', 973, null, null],
      ],
    );
    // The cause names the section and, where the transcript shows it, what caused the delta.
    assert.equal(report.requests[1].causes[0].detail, 'block 0, line 8: First skill; section `resumable` added (delegation-settled: delegation explorer / del-1: explore the parser settled (Task at line 5))');
    assert.equal(report.requests[2].causes[0].detail, 'block 0, line 10: PDF skill: extract text with pdftotext before reading pages.; section `skill:pdf` added (skill-activation: Skill pdf at line 11 activated skill:pdf)');
    assert.match(report.requests[1].reason, /section `resumable` added \(delegation-settled: /);
    assert.equal(report.requests[4].causes[0].detail, 'block 0, line 8: Second skill; section `skills` edited');
    assert.deepEqual(report.requests[4].break!.section, { name: 'skills', via: 'named', within: [], change: 'edited', whole: true, removedBytes: 5, addedBytes: 6 });
  });

  it('names each delta by its sections and the cause the transcript shows (delegation, skill, tool activation, budget, checkpoint)', async () => {
    const { report } = await analyzed(SETTLE);
    const deltas = report.requests.filter((r) => r.systemDeltas).map((r) => [r.index, ...r.systemDeltas!.deltas.map((d) => [d.line, d.id, d.sections.map((s) => `${s.name} ${s.change}`).join(', '), d.toolsAdded.join(','), d.cause?.kind ?? null])]);
    assert.deepEqual(deltas, [
      [2, [8, 'sys-2', 'resumable added', '', 'delegation-settled']],
      [3, [12, 'sys-3', 'skill:pdf added', '', 'skill-activation']],
      [5, [17, 'sys-4', 'skills replaced', '', null]],
      [6, [21, 'sys-5', 'tool_activation added', 'Grep', 'tool-activation']],
      [7, [23, 'sys-6', 'context_budget added', '', 'context-budget']],
      [9, [26, 'cp1', 'context_budget removed', '', 'compaction-checkpoint']],
    ]);
    const cause = (i: number) => report.requests[i - 1].systemDeltas!.deltas[0].cause!.detail;
    assert.equal(cause(2), 'delegation explorer / del-1: explore the parser settled (Task at line 5)');
    assert.equal(cause(3), 'Skill pdf at line 11 activated skill:pdf');
    assert.equal(cause(6), 'ToolSearch at line 20 activated Grep');
    assert.equal(cause(9), 'compaction cp1 folded the system messages into one checkpoint (context_budget removed)');
  });

  it('"Parser delegation": re-billed tokens both ways per delta; kept in place only the tools change (#6) and the checkpoint (#9) break', async () => {
    const { report } = await analyzed(SETTLE);
    const both = report.requests
      .filter((r) => r.systemDeltas)
      .map((r) => {
        const d = r.systemDeltas!;
        return [r.index, d.comparedWith, d.collapsed.rebilledTokens, where(d.collapsed.break), d.midConversation.rebilledTokens, where(d.midConversation.break), d.savedTokens];
      });
    assert.deepEqual(both, [
      [2, 1, 64, ['system', 0, 'messages[0].content', 367], 0, null, 64],
      [3, 2, 256, ['system', 0, 'messages[0].content', 371], 0, null, 256],
      [5, 4, 384, ['system', 0, 'messages[0].content', 356], 0, null, 384],
      // Grep is a new tool in both shapes (DeepSeek renders tools after the system text).
      [6, 5, 448, ['system', 0, 'messages[0].content', 356], 384, ['tools', 1, 'tools[1]', 526], 64],
      [7, 6, 576, ['system', 0, 'messages[0].content', 461], 0, null, 576],
      // After the compaction the checkpoint folds every delta into the head: the mid-conversation head changes at last.
      // The compaction replaced the history after the change, so collapsed re-bills nothing, and
      // kept in place only what lies between the head's change and the compacted history (64).
      [9, 6, 0, ['messages', 0, 'messages[1].content[0].text', 973], 64, ['system', 0, 'messages[0].content', 356], -64],
    ]);
    assert.deepEqual(report.systemShapes, {
      used: ['collapsed'],
      unknownRoute: true,
      requestsWithDeltas: 6,
      deltas: 6,
      collapsed: { rebilledTokens: 1728, costUSD: null },
      midConversation: { rebilledTokens: 448, costUSD: null },
      savedTokens: 1280,
    });
    // The judge's own figure for the shape sent (bounded by the observed usage).
    assert.deepEqual(report.requests.map((r) => r.lostTokens), [0, 64, 256, 0, 384, 448, 576, 0, 0, 0]);
  });

  it('"Lexer delegate (flash)" (flagged mid-conversation): the settlement is tail only, so a hit; collapsed it would have broken at byte 367', async () => {
    const { report } = await analyzed(MIDCONVO);
    assert.deepEqual(report.requests.map((r) => r.verdict), ['cold', 'hit', 'hit']);
    const d = report.requests[1].systemDeltas!;
    assert.deepEqual([d.used, d.known, d.comparedWith], ['mid-conversation', true, 1]);
    assert.deepEqual([d.midConversation.rebilledTokens, d.midConversation.break], [0, null]);
    assert.deepEqual([d.collapsed.rebilledTokens, where(d.collapsed.break), d.collapsed.break!.section?.name], [64, ['system', 0, 'messages[0].content', 367], 'resumable']);
    assert.equal(d.deltas[0].cause!.detail, 'delegation explorer / del-7: explore the lexer settled (Task at line 5)');
    assert.deepEqual(report.requests[1].systemShape, { used: 'mid-conversation', known: true, source: 'models.compat_json (row deepseek/deepseek-v4-flash)' });
  });

  it('"Parser review (Sonnet)" (flag false → collapsed, priced): the settlement re-bills the whole cached head, ~1516 tokens ($0.00523) vs 0 kept in place', async () => {
    const { report } = await analyzed(ANTHROPIC);
    assert.deepEqual(report.requests.map((r) => r.verdict), ['cold', 'break', 'hit']);
    const r = report.requests[1];
    assert.deepEqual([...where(r.break)!, r.break!.section!.name, r.break!.section!.addedBytes], ['system', 0, 'system[0].text', 5942, 'resumable', 138]);
    const d = r.systemDeltas!;
    assert.deepEqual([d.collapsed.rebilledTokens, d.collapsed.costUSD!.toFixed(7), d.midConversation.rebilledTokens, d.midConversation.costUSD, d.savedTokens, d.savedUSD!.toFixed(7)], [1516, '0.0052302', 0, 0, 1516, '0.0052302']);
    // The judge's figure for what was sent, from the observed usage: the 1507 tokens #1 wrote.
    assert.deepEqual([r.lostTokens, r.costUSD!.toFixed(7)], [1507, '0.0051992']);
  });
});
