/**
 * The Timeline detail of a PI-Desktop system delta ("Parser review (Sonnet)", written with
 * `--html`): the break's section, the delta with its cause, and the re-billed tokens and cost in
 * both shapes (collapsed, sent; mid-conversation, tail only), as the view model gives them.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { main } from '../../src/cli/main.js';
import type { Report } from '../../src/report/json.js';
import { artifacts, launch, type TestBrowser } from './browser.js';

const SESSION = 'test/fixtures/pi-desktop/home/sessions/e5a0c3d8-9b27-4f61-a4e3-0c8d2b6f7a95.jsonl';

describe('timeline: PI-Desktop system deltas', function () {
  this.timeout(60_000);
  let browser: TestBrowser;
  let file: string;
  let report: Report;

  before(async () => {
    file = join(artifacts('reports'), 'pi-desktop-sonnet.html');
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['analyze', SESSION, '--no-cache', '--html', file, '--json'], (s) => out.push(s), (s) => err.push(s), process.cwd());
    assert.equal(code, 0, err.join('\n'));
    report = JSON.parse(out.join('\n')) as Report;
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });

  it('shows the section of the break and both shapes\' re-billed tokens for the settlement (#2)', async () => {
    const d = report.sessions[0].requests[1].systemDeltas!;
    assert.deepEqual([d.collapsed.rebilledTokens, d.midConversation.rebilledTokens], [1516, 0]);
    const page = await browser.page();
    await page.goto(pathToFileURL(file).href);
    await page.getByRole('listbox', { name: 'Requests' }).waitFor();
    await page.getByRole('option', { name: /^Request 2:/ }).click();
    const detail = page.getByRole('region', { name: 'Request detail' });
    const text = (await detail.textContent())!;
    assert.ok(text.includes('Sectionresumable (section) — added, −0 B +138 B'), text);
    assert.ok(text.includes('System messagescollapsed: later system messages folded into the first · models.compat_json (row anthropic/claude-sonnet-4-5)'), text);
    assert.ok(text.includes('resumable added · delegation-settled: delegation reviewer / del-3: review the parser settled (Task at line 5) · sys-2, line 7'), text);
    const rows = await detail.getByRole('table', { name: 'Re-billed by shape' }).locator('tbody tr').allInnerTexts();
    assert.deepEqual(rows.map((r) => r.split('\t')), [
      ['collapsed (folded into the first system message)', '~1,516', '$0.00523', 'system 0 @5,942 (resumable)', 'sent'],
      ['mid-conversation (kept in place)', '~0', '$0', 'tail only', ''],
    ]);
    assert.ok(text.includes('Kept in place saves ~1,516 tokens ($0.00523) on this request (estimated from bytes).'), text);
    assert.ok((await page.locator('.pl-stats').textContent())!.includes('System deltas1 · collapsed ~1,516 vs in place ~0 tokens'));
    assert.deepEqual(browser.pageErrors, []);
    await page.screenshot({ path: join(artifacts('screenshots'), 'timeline-system-deltas.png'), fullPage: true });
    await page.close();
  });
});
