/**
 * The persona lane on a BotHarness session (the `bh-drift` scenario of test/unit/botharness: persona
 * taken at #1, SOUL.md drift at #3, MEMORY.md into the head at #4), written with `--html`: the lane
 * exists only when the report has persona events, its marks sit at those requests, and the detail
 * of #3 shows the event with its offset and before/after excerpts.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { main } from '../../src/cli/main.js';
import type { Report } from '../../src/report/json.js';
import { buildScenarios } from '../unit/botharness/scenarios.js';
import { artifacts, launch, type TestBrowser } from './browser.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, (s) => out.push(s), (s) => err.push(s), process.cwd());
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('timeline: persona lane (BotHarness bh-drift)', function () {
  this.timeout(60_000);
  let browser: TestBrowser;
  let file: string;
  let report: Report;
  let pi: string;

  before(async () => {
    const built = await buildScenarios();
    file = join(artifacts('reports'), 'bh-drift.html');
    const r = await cli(['analyze', built.logs['bh-drift'], '--no-cache', '--html', file, '--json']);
    assert.equal(r.code, 0, r.err);
    report = JSON.parse(r.out) as Report;
    pi = join(artifacts('reports'), 'pi-main-no-persona.html');
    assert.equal((await cli(['analyze', 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--', '--html', pi])).code, 0);
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });

  it('draws the persona lane at #1 (taken), #3 (drift), #4 (memory-head) and shows the drift in the detail', async () => {
    const s = report.sessions[0];
    assert.deepEqual(s.persona!.events.map((e) => [e.request, e.kind]), [[1, 'taken'], [3, 'drift'], [4, 'memory-head']]);
    const page = await browser.page();
    await page.goto(pathToFileURL(file).href);
    await page.getByRole('listbox', { name: 'Requests' }).waitFor();
    assert.deepEqual(await page.locator('.pl-lane-label').allTextContents(), ['Request', 'Prompt tokens', 'tools / headsystemmessages', 'Verdict', 'Cause', 'Gap / TTL', 'Persona']);
    // The lane's tooltip at each request's column.
    const canvas = (await page.locator('canvas').boundingBox())!;
    const personaTop = 16 + 72 + 37 + 28 + 16 + 26;
    const tips: string[] = [];
    for (const r of s.requests) {
      const opt = (await page.getByRole('option', { name: new RegExp(`^Request ${r.index}:`) }).boundingBox())!;
      await page.mouse.move(opt.x + opt.width / 2, canvas.y + personaTop + 11);
      tips.push((await page.locator('canvas').getAttribute('title'))!);
    }
    const drift = s.persona!.events[1];
    assert.equal(tips[0], `persona taken ${s.persona!.events[0].hash}: ${s.persona!.events[0].detail}`);
    assert.equal(tips[1], `#2 ${s.requests[1].verdict}: no persona event`);
    assert.equal(tips[2], `persona drift ${drift.hash}: ${drift.detail}`);
    assert.match(tips[3], /^persona memory-head /);

    await page.getByRole('option', { name: /^Request 3:/ }).click();
    const detail = page.getByRole('region', { name: 'Request detail' });
    const text = (await detail.textContent())!;
    assert.ok(text.includes(`drift ${drift.hash}: ${drift.detail} · at byte ${drift.offset} of the system prompt · line ${drift.line}`), text);
    const figures = await detail.locator('figure').filter({ hasText: 'Persona' }).locator('pre').allTextContents();
    const visible = (x: string) => x.replace(/\n/g, '↵');
    assert.deepEqual(figures, [visible(drift.before!), visible(drift.after!)]);
    assert.deepEqual(browser.pageErrors, []);
    await page.screenshot({ path: join(artifacts('screenshots'), 'timeline-persona.png'), fullPage: true });
    await page.close();
  });

  it('has no persona lane when the report has no persona (Pi)', async () => {
    const page = await browser.page();
    await page.goto(pathToFileURL(pi).href);
    await page.getByRole('listbox', { name: 'Requests' }).waitFor();
    assert.ok(!(await page.locator('.pl-lane-label').allTextContents()).includes('Persona'));
    await page.close();
  });
});
