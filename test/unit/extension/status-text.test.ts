import assert from 'node:assert/strict';
import { buildReport } from '../../../src/cli/main.js';
import { shortName, statusText } from '../../../src/extension/format.js';
import { summarize } from '../../../src/extension/summaryCache.js';

const PI_MAIN = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';
const PI_LONG = 'test/fixtures/pi/long/agent/sessions/--home-user-pi-lab-long-project--';

/** The summary the Sessions view keeps for a recorded session (transcript only, as the view reads it). */
async function summaryOf(dir: string) {
  const { report } = await buildReport([dir], undefined, process.cwd());
  return summarize(report.sessions[0]);
}

describe('status bar text of the session being written now (format.ts statusText)', () => {
  it('names the main Pi recording with its hit rate and breaks, the warning icon because its latest request (#13) broke the cache', async () => {
    const s = await summaryOf(PI_MAIN);
    assert.deepEqual(s.last, { index: 13, number: '13', verdict: 'break', lostTokens: 0 });
    assert.equal(statusText(s.title ?? '', s), '$(warning) pi lab session · 64% hit · 3 breaks');
  });

  it('names the long Pi recording by its first prompt cut at a word (24 characters at most), the pulse icon: it ends on a model switch', async () => {
    const s = await summaryOf(PI_LONG);
    assert.equal(s.last?.verdict, 'model-switch');
    assert.equal(statusText('Hello with long cache retention.', s), '$(pulse) Hello with long cache… · 40% hit · 1 break');
  });

  it('says analyzing… with the name before the summary is known', () => {
    assert.equal(statusText('pi lab session', undefined), '$(loading~spin) pi lab session · analyzing…');
  });

  it('shows an untrusted name as text: one line, icon syntax escaped', () => {
    assert.equal(statusText('$(zap) x\n$(bug)', undefined), '$(loading~spin) \\$(zap) x \\$(bug) · analyzing…');
  });

  it('cuts a name without a space in its first half mid-word', () => {
    assert.equal(shortName('abcdefghijklmnopqrstuvwxyz0123', 24), 'abcdefghijklmnopqrstuvw…');
    assert.equal(shortName('pi lab session', 24), 'pi lab session');
  });
});
