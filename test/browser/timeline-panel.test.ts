/**
 * The same bundle as the VS Code Timeline panel: the panel shell (webviewShellHtml, CSP with a
 * nonce) with a stand-in `acquireVsCodeApi` that records what the app posts and saves. Checks the
 * conversation of src/protocol.ts: ready first, load, select, selected, revealInTranscript,
 * exportHtml, invalid messages dropped, WebviewState saved and restored; and the --vscode-*
 * theme variables (dark, high contrast).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { buildReport } from '../../src/cli/main.js';
import type { Report } from '../../src/report/json.js';
import { webviewShellHtml } from '../../src/report/webviewHtml.js';
import { artifacts, launch, type TestBrowser } from './browser.js';

const PI_MAIN_DIR = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';
const PI_MAIN_REQUESTS = 'test/fixtures/pi/main/requests';

interface Recorded {
  posted: unknown[];
  states: unknown[];
}

/** Opens the panel shell with a recording stand-in for VS Code's API (and an optional saved state). */
async function openPanel(browser: TestBrowser, shell: string, savedState?: unknown, bodyClass = 'vscode-light'): Promise<Page> {
  const page = await browser.page();
  // A string, not a function: the test runner's transform would add helpers the page lacks.
  await page.addInitScript(`(() => {
    const rec = { posted: [], states: [] };
    window.__rec = rec;
    let state = ${JSON.stringify(savedState ?? null)} ?? undefined;
    window.acquireVsCodeApi = () => ({
      postMessage: (m) => rec.posted.push(JSON.parse(JSON.stringify(m))),
      getState: () => state,
      setState: (s) => { state = s; rec.states.push(JSON.parse(JSON.stringify(s))); },
    });
    document.addEventListener('DOMContentLoaded', () => document.body.classList.add(${JSON.stringify(bodyClass)}));
  })();`);
  await page.goto(pathToFileURL(shell).href);
  return page;
}

const recorded = (page: Page) => page.evaluate(() => (window as unknown as { __rec: Recorded }).__rec);
const post = (page: Page, message: unknown) => page.evaluate((m) => window.postMessage(m, '*'), message);
const requestOptions = (page: Page) => page.getByRole('listbox', { name: 'Requests' }).getByRole('option');
const selectedName = (page: Page) => page.getByRole('listbox', { name: 'Requests' }).getByRole('option', { selected: true }).getAttribute('aria-label');

describe('timeline in the VS Code panel shell (protocol messages)', function () {
  this.timeout(60_000);
  let browser: TestBrowser;
  let shell: string;
  let report: Report;
  let sessionPath: string;

  before(async () => {
    const built = await buildReport([PI_MAIN_DIR], PI_MAIN_REQUESTS, process.cwd());
    report = built.report;
    sessionPath = report.sessions[0].path;
    const dist = resolve('dist');
    shell = join(artifacts('panel'), 'panel.html');
    writeFileSync(
      shell,
      webviewShellHtml({
        cspSource: 'file:',
        nonce: randomBytes(16).toString('base64'),
        scriptUri: pathToFileURL(join(dist, 'webview.js')).href,
        styleUri: pathToFileURL(join(dist, 'webview.css')).href,
        title: 'Prefix Lens — <pi lab session>',
      }),
    );
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
  });
  afterEach(() => {
    assert.deepEqual(browser.pageErrors.splice(0), [], 'no page errors');
  });

  it('posts ready first and renders nothing before load; load shows the 16 requests with the first break selected', async () => {
    const page = await openPanel(browser, shell);
    await page.waitForFunction(() => (window as unknown as { __rec: Recorded }).__rec.posted.length > 0);
    assert.deepEqual((await recorded(page)).posted, [{ type: 'ready' }]);
    assert.equal(await requestOptions(page).count(), 0);
    await post(page, { type: 'load', report, live: true });
    const list = page.getByRole('listbox', { name: 'Requests' });
    await list.getByRole('option').first().waitFor();
    assert.equal(await list.getByRole('option').count(), 16);
    // Named by its number (agent request 9), kept by its send-order index (11th in this wire report).
    assert.equal(await selectedName(page), 'Request 9: break, history-rewritten');
    assert.equal(await page.getByText('live', { exact: true }).count(), 1);
    const rec = await recorded(page);
    assert.deepEqual(rec.states.at(-1), { sessionPath, selected: { sessionIndex: 0, requestIndex: 11 }, filter: 'all' });
    await page.close();
  });

  it('clicking posts selected; select moves the selection; the detail posts revealInTranscript; the toolbar posts exportHtml; the header Copy button posts copyPath', async () => {
    const page = await openPanel(browser, shell);
    await post(page, { type: 'load', report, live: false });
    await page.getByRole('option', { name: /^Request 10: break/ }).click();
    await post(page, { type: 'select', ref: { sessionIndex: 0, requestIndex: 5 } });
    await page.waitForFunction(() => document.querySelector('[role="option"][aria-selected="true"]')?.getAttribute('aria-label')?.startsWith('Request 5:'));
    assert.equal(await selectedName(page), 'Request 5: model-switch, model-switch');
    await page.getByRole('button', { name: 'Reveal in transcript' }).click();
    await page.getByRole('button', { name: 'Export HTML report…' }).click();
    await page.getByRole('button', { name: 'Copy the session path' }).click();
    const rec = await recorded(page);
    assert.deepEqual(rec.posted, [
      { type: 'ready' },
      { type: 'selected', ref: { sessionIndex: 0, requestIndex: 13 } },
      { type: 'revealInTranscript', file: sessionPath, line: report.sessions[0].requests[4].line },
      { type: 'exportHtml' },
      { type: 'copyPath', sessionIndex: 0 },
    ]);
    assert.equal(report.sessions[0].requests[4].line, 20);
    assert.deepEqual(rec.states.at(-1), { sessionPath, selected: { sessionIndex: 0, requestIndex: 5 }, filter: 'all' });
    await page.close();
  });

  it('patch (live tail, an append judged alone): the new header and requests on top of what is shown, selection kept; a patch that does not follow asks for the whole report', async () => {
    const page = await openPanel(browser, shell);
    const s = report.sessions[0];
    await post(page, { type: 'load', report: { version: 1, sessions: [{ ...s, requests: s.requests.slice(0, 12) }] }, live: true });
    await requestOptions(page).first().waitFor();
    assert.equal(await requestOptions(page).count(), 12);
    assert.equal(await selectedName(page), 'Request 9: break, history-rewritten');
    await post(page, { type: 'patch', sessionIndex: 0, patch: { header: { ...s, requests: [] }, added: s.requests.slice(12), revised: [] } });
    await page.waitForFunction(() => document.querySelectorAll('[role="listbox"][aria-label="Requests"] [role="option"]').length === 16);
    assert.equal(await selectedName(page), 'Request 9: break, history-rewritten');
    assert.equal(await page.getByRole('combobox', { name: 'Show' }).locator('option').first().textContent(), 'All requests (16)');
    // Requests #11… again: not the continuation of the 16 shown, so nothing changes and the app asks for the whole report.
    await post(page, { type: 'patch', sessionIndex: 0, patch: { header: { ...s, requests: [] }, added: s.requests.slice(10), revised: [] } });
    await page.waitForFunction(() => (window as unknown as { __rec: Recorded }).__rec.posted.filter((m) => (m as { type: string }).type === 'ready').length === 2);
    const warned = browser.pageErrors.splice(0);
    assert.equal(warned.length, 1);
    assert.match(warned[0], /live patch: request #11 does not follow #16; asking for the whole report/);
    assert.equal(await requestOptions(page).count(), 16);
    await page.close();
  });

  it('drops messages that do not match the protocol (logged, not acted on)', async () => {
    const page = await openPanel(browser, shell);
    await post(page, { type: 'load', report, live: false });
    await requestOptions(page).first().waitFor();
    await post(page, { type: 'load', report: { version: 2, sessions: [] }, live: false });
    await post(page, { type: 'select', ref: { sessionIndex: 0, requestIndex: -3 } });
    await post(page, { type: 'rm -rf' });
    await page.waitForTimeout(100);
    const dropped = browser.pageErrors.splice(0);
    assert.equal(dropped.length, 3);
    for (const e of dropped) assert.match(e, /^console: prefix-lens: dropped a message that does not match the protocol/);
    assert.equal(await page.getByRole('listbox', { name: 'Requests' }).getByRole('option').count(), 16);
    assert.equal(await selectedName(page), 'Request 9: break, history-rewritten');
    await page.close();
  });

  it('restores the saved WebviewState (selection and filter) when load names no request', async () => {
    const page = await openPanel(browser, shell, { sessionPath, selected: { sessionIndex: 0, requestIndex: 13 }, filter: 'breaks' });
    await post(page, { type: 'load', report, live: false });
    await requestOptions(page).first().waitFor();
    assert.equal(await selectedName(page), 'Request 10: break, history-rewritten');
    assert.equal(await page.getByRole('listbox', { name: 'Requests' }).getByRole('option').count(), 3);
    assert.equal(await page.getByRole('combobox', { name: 'Show' }).inputValue(), 'breaks');
    await page.close();
  });

  it('in a narrow panel (380 px) keeps the lanes wide: a 76 px label column whose labels wrap inside their lanes, none cut', async () => {
    const page = await openPanel(browser, shell);
    await page.setViewportSize({ width: 380, height: 900 });
    await post(page, { type: 'load', report, live: false });
    await requestOptions(page).first().waitFor();
    const got = await page.evaluate(() => {
      const labels = [...document.querySelectorAll<HTMLElement>('.pl-lane-label')];
      return {
        column: Math.round(document.querySelector<HTMLElement>('.pl-lane-labels')!.getBoundingClientRect().width),
        cut: labels.filter((l) => l.scrollWidth > l.clientWidth || l.scrollHeight > l.clientHeight).map((l) => l.textContent),
        chips: [...document.querySelectorAll<HTMLElement>('.pl-lane-chips span')].filter((e) => e.getBoundingClientRect().width > e.parentElement!.clientWidth).map((e) => e.textContent),
        labels: labels.map((l) => l.textContent),
      };
    });
    assert.equal(got.column, 76);
    assert.deepEqual(got.labels, ['Request', 'Prompt tokens', 'tools / headsystemmessages', 'Verdict', 'Cause', 'Gap / TTL', 'phux context']);
    assert.deepEqual(got.cut, []);
    assert.deepEqual(got.chips, []);
    await page.screenshot({ path: join(artifacts('screenshots'), 'panel-narrow.png'), fullPage: true });
    await page.close();
  });

  for (const [cls, vars] of [
    ['vscode-dark', { '--vscode-editor-background': '#1f1f1f', '--vscode-editor-foreground': '#cccccc', '--vscode-charts-green': '#89d185' }],
    ['vscode-high-contrast', { '--vscode-editor-background': '#000000', '--vscode-editor-foreground': '#ffffff', '--vscode-contrastBorder': '#6fc3df', '--vscode-charts-green': '#89d185' }],
  ] as const) {
    it(`takes its colours from the --vscode-* variables (${cls})`, async () => {
      const page = await openPanel(browser, shell, undefined, cls);
      await page.evaluate((v) => {
        for (const [k, x] of Object.entries(v)) document.documentElement.style.setProperty(k, x);
      }, vars);
      await post(page, { type: 'load', report, live: false });
      await requestOptions(page).first().waitFor();
      const got = await page.evaluate(() => {
        const cs = getComputedStyle(document.body);
        const hit = document.querySelector('.pl-v-hit')!;
        const chip = document.querySelector('.pl-sw-chip')!;
        return { bg: cs.backgroundColor, fg: cs.color, hit: getComputedStyle(hit).color, edge: getComputedStyle(chip).backgroundImage.split(' 0px')[0], chipLegend: chip.parentElement!.querySelector('.pl-legend-long')!.textContent, chipTitle: chip.parentElement!.getAttribute('title') };
      });
      const rgb = (hex: string) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;
      // The changed-chip edge is drawn in the text colour (light here): the legend says so, not "dark".
      assert.deepEqual(got, {
        bg: rgb(vars['--vscode-editor-background']),
        fg: rgb(vars['--vscode-editor-foreground']),
        hit: rgb(vars['--vscode-charts-green']),
        edge: `linear-gradient(90deg, ${rgb(vars['--vscode-editor-foreground'])}`,
        chipLegend: 'hash chip: same colour = same prefix; a bar at its left edge (text colour) = changed here',
        chipTitle: 'hash chip: same colour = same prefix; a bar at its left edge (text colour) = changed here',
      });
      await page.screenshot({ path: join(artifacts('screenshots'), `panel-${cls}.png`), fullPage: true });
      await page.close();
    });
  }
});
