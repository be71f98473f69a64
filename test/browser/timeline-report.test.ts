/**
 * The standalone HTML report (`prefix-lens analyze --html`) in headless Chromium, on the recorded
 * sessions: request options, the recorded Pi main session's breaks, the detail of a break,
 * keyboard navigation, the session picker, and light/dark screenshots (.tmp/browser/screenshots).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { main } from '../../src/cli/main.js';
import { firstDiff } from '../../src/core/diverge.js';
import type { Report } from '../../src/report/json.js';
import { artifacts, launch, type TestBrowser } from './browser.js';

const PI_MAIN_DIR = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';
const PI_MAIN_REQUESTS = 'test/fixtures/pi/main/requests';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, (s) => out.push(s), (s) => err.push(s), process.cwd());
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The recorded request bodies of Pi main, in send order (request n = bodies[n - 1]). */
function bodies(): Buffer[] {
  return readdirSync(PI_MAIN_REQUESTS)
    .filter((f) => f.endsWith('.body.json'))
    .sort()
    .map((f) => readFileSync(join(PI_MAIN_REQUESTS, f)));
}

/** Accessible name of the selected option. */
async function selectedName(page: Page): Promise<string> {
  return (await page.getByRole('listbox', { name: 'Requests' }).getByRole('option', { selected: true }).getAttribute('aria-label')) ?? '';
}

describe('timeline report in Chromium (recorded sessions)', function () {
  this.timeout(60_000);
  let browser: TestBrowser;
  let dir: string;
  let piMain: string;
  let examples: string;
  let report: Report;

  before(async () => {
    dir = artifacts('reports');
    piMain = join(dir, 'pi-main.html');
    examples = join(dir, 'examples.html');
    const a = await cli(['analyze', PI_MAIN_DIR, '--requests', PI_MAIN_REQUESTS, '--html', piMain]);
    assert.equal(a.code, 0, a.err);
    const b = await cli(['analyze', '--examples', '--html', examples, '--json']);
    assert.equal(b.code, 0, b.err);
    report = JSON.parse(b.out) as Report;
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });
  afterEach(() => {
    assert.deepEqual(browser.pageErrors.splice(0), [], 'no page errors');
  });

  it('shows one request option per request of the recorded Pi main session (16), in the listbox "Requests"', async () => {
    const page = await browser.page();
    await page.goto(pathToFileURL(piMain).href);
    const list = page.getByRole('listbox', { name: 'Requests' });
    await list.waitFor();
    assert.equal(await list.getByRole('option').count(), 16);
    const names = await list.getByRole('option').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    assert.deepEqual(
      names.map((n) => n!.match(/^Request (\d+(?:\.\d+)?): ([a-z-]+)/)!.slice(1).join(' ')),
      // The summary requests only the wire shows are numbered after the agent request before them (8.1, 8.2, 9.1).
      ['1 cold', '2 hit', '3 hit', '4 hit', '5 model-switch', '6 hit', '7 hit', '8 hit', '8.1 below-minimum', '8.2 below-minimum', '9 break', '9.1 cold', '10 break', '11 model-switch', '12 hit', '13 break'],
    );
    await page.close();
  });

  it('marks the breaks where the recording has them: #9 (compaction, step 8), #10 (branch, step 9), #13 (back on gpt-5 after the branch), the numbers of the reconstructed report', async () => {
    const page = await browser.page();
    await page.goto(pathToFileURL(piMain).href);
    const breaks = page.getByRole('option', { name: /^Request \d+: break/ });
    assert.deepEqual(await breaks.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label'))), [
      'Request 9: break, history-rewritten',
      'Request 10: break, history-rewritten',
      'Request 13: break, history-rewritten',
    ]);
    await page.close();
  });

  it('clicking a break shows its segment, block, JSON path and byte offset (= first differing byte of the recorded bodies) in "Request detail"', async () => {
    const page = await browser.page();
    await page.goto(pathToFileURL(piMain).href);
    const body = bodies();
    const detail = page.getByRole('region', { name: 'Request detail' });
    // [request number, its body (send order), number and body of the request it was compared with, …]
    for (const [n, sent, matched, matchedSent, segment, block, path] of [
      ['9', 11, '8', 8, 'messages', '0', 'messages[0].content[0].text'],
      ['10', 13, '8', 8, 'messages', '2', 'messages[2].content[0].text'],
      ['13', 16, '4', 4, 'messages', '2', 'messages[3].content[0].text'],
    ] as const) {
      await page.getByRole('option', { name: new RegExp(`^Request ${n}: break`) }).click();
      assert.equal(await detail.getByRole('heading', { level: 2 }).textContent(), `✕ break Request ${n}`);
      const loc = detail.getByLabel('Break location');
      const facts = await loc.locator('dt').allTextContents();
      const values = await loc.locator('dd').allTextContents();
      const got = Object.fromEntries(facts.map((f, i) => [f, values[i]]));
      const offset = firstDiff(body[matchedSent - 1], body[sent - 1]);
      assert.deepEqual(got, { Segment: segment, Block: block, 'JSON path': path, 'Byte offset': `${offset.toLocaleString('en-US')} in the request body` });
      assert.match((await detail.textContent())!, new RegExp(`Compared withrequest #${matched},`));
      // The first changed character is marked on both sides.
      const marks = await detail.locator('mark').allTextContents();
      assert.equal(marks.length, 2);
      assert.equal(marks[1], body[sent - 1].subarray(offset, offset + 1).toString());
    }
    await page.close();
  });

  it('moves the selection with ←/→, Home/End and n/p (next/previous break)', async () => {
    const page = await browser.page();
    await page.goto(pathToFileURL(piMain).href);
    const list = page.getByRole('listbox', { name: 'Requests' });
    // The first break is selected when the report opens.
    assert.match(await selectedName(page), /^Request 9: break/);
    await list.focus();
    const steps: Array<[string, RegExp]> = [
      ['Home', /^Request 1: cold/],
      ['ArrowRight', /^Request 2: hit/],
      ['ArrowRight', /^Request 3: hit/],
      ['ArrowLeft', /^Request 2: hit/],
      ['n', /^Request 9: break/],
      ['n', /^Request 10: break/],
      ['n', /^Request 13: break/],
      ['n', /^Request 13: break/],
      ['p', /^Request 10: break/],
      ['End', /^Request 13: break/],
      ['ArrowRight', /^Request 13: break/],
      ['ArrowLeft', /^Request 12: hit/],
      ['Home', /^Request 1: cold/],
      ['End', /^Request 13: break/],
      ['ArrowLeft', /^Request 12: hit/],
      ['ArrowLeft', /^Request 11: model-switch/],
      ['ArrowLeft', /^Request 10: break/],
      ['ArrowLeft', /^Request 9\.1: cold/],
    ];
    for (const [key, want] of steps) {
      await page.keyboard.press(key);
      const name = await selectedName(page);
      assert.match(name, want, `after ${key}`);
      // The listbox points at the selected option, and the detail follows it.
      const active = await list.getAttribute('aria-activedescendant');
      assert.equal(await page.locator(`#${active}`).getAttribute('aria-label'), name);
      const n = name.match(/^Request (\d+(?:\.\d+)?)/)![1];
      assert.match((await page.getByRole('region', { name: 'Request detail' }).getByRole('heading', { level: 2 }).textContent())!, new RegExp(`Request ${n.replace('.', '\\.')}( \\(summary\\))?$`));
    }
    assert.equal(await page.getByRole('status').textContent(), 'No later break.');
    await page.close();
  });

  it('hovering the lanes of break #9 tells its tokens (reported), cause and gap vs TTL', async () => {
    const page = await browser.page();
    await page.goto(pathToFileURL(piMain).href);
    const r = report.sessions[0].requests[10];
    const opt = (await page.getByRole('option', { name: /^Request 9: break/ }).boundingBox())!;
    const canvas = (await page.locator('canvas').boundingBox())!;
    const at = async (y: number) => {
      await page.mouse.move(opt.x + opt.width / 2, canvas.y + y);
      return page.locator('canvas').getAttribute('title');
    };
    const n = (x: number) => x.toLocaleString('en-US');
    // Lanes: axis 16 px, tokens 72, chips 37, verdict 28, cause 16, gap 26.
    assert.equal(await at(16 + 36), `#9 break: read ${n(r.usage!.cacheRead!)}, written ${n(r.usage!.cacheWrite!)}, uncached ${n(r.usage!.uncached!)} (reported); expected read ~${n(r.expectedRead!)} (estimated)`);
    assert.equal(await at(16 + 72 + 37 + 28 + 8), `#9 break: history-rewritten: ${r.causes[0].detail}`);
    assert.ok(r.gapMs! < 60_000 && r.ttlMs === 300_000 && r.matched === 8);
    assert.equal(await at(16 + 72 + 37 + 28 + 16 + 13), `#9 break: ${Math.round(r.gapMs! / 1000)} s after #8; its entry's TTL 5 min`);
    await page.close();
  });

  it('the examples report has a session picker; each session shows one option per request', async () => {
    const page = await browser.page();
    await page.goto(pathToFileURL(examples).href);
    const picker = page.getByRole('combobox', { name: 'Session' });
    assert.equal(await picker.locator('option').count(), report.sessions.length);
    assert.equal(report.sessions.length, 11);
    const counts: number[] = [];
    for (let i = 0; i < report.sessions.length; i++) {
      await picker.selectOption(String(i));
      await page.getByRole('heading', { level: 1 }).filter({ hasText: report.sessions[i].title ?? report.sessions[i].id }).waitFor();
      counts.push(await page.getByRole('listbox', { name: 'Requests' }).getByRole('option').count());
    }
    assert.deepEqual(counts, report.sessions.map((s) => s.requests.length));
    assert.deepEqual(counts, [16, 8, 7, 6, 1, 10, 9, 6, 12, 1, 9]);
    await page.close();
  });

  it('words counts of one in the singular: "1 request", "1 break" in the session picker, "1 request with Claude Code\'s verdict" and "1 pane carried" in the detail (they said "1 requests", "1 breaks", "1 request(s)", "1 pane(s)")', async () => {
    const page = await browser.page();
    await page.goto(pathToFileURL(examples).href);
    const picker = page.getByRole('combobox', { name: 'Session' });
    const options = await picker.locator('option').allTextContents();
    assert.ok(options.includes('Scripted subtask (@general subagent) — opencode, 1 request, 0 breaks'), options.join('\n'));
    assert.ok(options.includes('01a230ec-991a-7497-9a50-b9f4f6517541 — pi, 8 requests, 1 break'), options.join('\n'));
    assert.ok(options.includes('pi lab session — pi, 16 requests, 3 breaks'), options.join('\n'));
    const detail = page.getByRole('region', { name: 'Request detail' });
    const open = async (title: string, request: string) => {
      await picker.selectOption(String(report.sessions.findIndex((s) => s.title === title)));
      await page.getByRole('heading', { level: 1 }).filter({ hasText: title }).waitFor();
      await page.getByRole('option', { name: new RegExp(`^Request ${request}: `) }).click();
      await detail.getByRole('heading', { level: 2 }).filter({ hasText: `Request ${request}` }).waitFor();
    };
    // The Claude Code sub-agent: one request, with Claude Code's own verdict.
    await open('general-purpose: Scripted sub-task', '1');
    const verdict = detail.getByLabel("Claude Code's verdict");
    const facts = await verdict.locator('dt').allTextContents();
    const values = await verdict.locator('dd').allTextContents();
    assert.equal(values[facts.indexOf('This session')], "1 request with Claude Code's verdict, 0 disagree");
    // OpenCode's phux v1 recording: request #5 carries delta seq 3, which upserts one pane.
    await open('Recorded: Phux v1 turn one.', '5');
    assert.deepEqual(await detail.locator('h3:text-is("phux context carried") + ul > li').allTextContents(), ['delta seq 3 (base_seq 2) · 443 B · 1 pane carried, 5 known · tail · line 8']);
    await page.close();
  });

  it('the filter "Breaks only" leaves the 3 breaks of Pi main', async () => {
    const page = await browser.page();
    await page.goto(pathToFileURL(piMain).href);
    await page.getByRole('combobox', { name: 'Show' }).selectOption('breaks');
    const list = page.getByRole('listbox', { name: 'Requests' });
    const names = await list.getByRole('option').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    assert.deepEqual(names.map((n) => n!.split(':')[0]), ['Request 9', 'Request 10', 'Request 13']);
    assert.equal(await page.getByRole('status').textContent(), '3 of 16 requests shown');
    await page.close();
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`renders in the ${scheme} palette (prefers-color-scheme) and saves a screenshot`, async () => {
      const page = await browser.page();
      await page.setViewportSize({ width: 1100, height: 900 });
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(pathToFileURL(piMain).href);
      await page.getByRole('listbox', { name: 'Requests' }).waitFor();
      const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      assert.equal(bg, scheme === 'light' ? 'rgb(255, 255, 255)' : 'rgb(30, 30, 30)');
      await page.screenshot({ path: join(artifacts('screenshots'), `timeline-${scheme}-full.png`), fullPage: true });
      // The README's picture: the first screen (header, lanes, start of the detail).
      await page.screenshot({ path: join(artifacts('screenshots'), `timeline-${scheme}.png`), clip: { x: 0, y: 0, width: 1100, height: 720 } });
      await page.close();
    });
  }
});
