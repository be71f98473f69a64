import assert from 'node:assert/strict';
import { buildReport } from '../../../src/cli/main.js';
import { countsMarkdown, figuresText } from '../../../src/extension/format.js';
import { summarize } from '../../../src/extension/summaryCache.js';

/** The PI-Desktop recording "Parser review (Sonnet)": 3 requests, 1 break. */
const PARSER_REVIEW = 'test/fixtures/pi-desktop/home/sessions/e5a0c3d8-9b27-4f61-a4e3-0c8d2b6f7a95.jsonl';
const PI_MAIN = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';

const summaryOf = async (path: string) => summarize((await buildReport([path], undefined, process.cwd())).report.sessions[0]);

describe('session figures in the Sessions view rows, hovers and the session picker (format.ts)', () => {
  it('says "1 break" of the PI-Desktop session with one break, in the row and the hover (the hover said "1 breaks")', async () => {
    const s = await summaryOf(PARSER_REVIEW);
    assert.equal(figuresText(s), '1 break · 31% hit · 3 req');
    assert.equal(countsMarkdown(s), '**3** requests · **1** break · hit rate **31%**');
  });

  it('keeps the plural of the Pi main recording: 13 requests, 3 breaks, 64 % hit', async () => {
    const s = await summaryOf(PI_MAIN);
    assert.equal(figuresText(s), '3 breaks · 64% hit · 13 req');
    assert.equal(countsMarkdown(s), '**13** requests · **3** breaks · hit rate **64%**');
  });

  it('says "1 request" of the OpenCode sub-agent session with one request', async () => {
    const { report } = await buildReport(['test/fixtures/opencode'], undefined, process.cwd());
    const sub = report.sessions.find((x) => x.title === 'Scripted subtask (@general subagent)');
    assert.ok(sub);
    const s = summarize(sub);
    assert.equal(figuresText(s), '0 breaks · 0% hit · 1 req');
    assert.equal(countsMarkdown(s), '**1** request · **0** breaks · hit rate **0%**');
  });
});
