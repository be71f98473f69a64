/**
 * The capture proxy in the extension host: Start/Stop commands with the scripted provider as the
 * upstream, the status-bar count, and the opt-in toggle that points new terminals at the proxy
 * through the environment variable collection only while the proxy runs.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { api, fileText, testEnv, until } from './helpers.js';

let n = 0;
/** What a newly created terminal sees in $ANTHROPIC_BASE_URL and $OPENAI_BASE_URL (`unset` when not set). */
async function baseUrlsOfNewTerminal(): Promise<string> {
  const out = join(testEnv.tmp, `capture-env-${++n}.txt`);
  const t = vscode.window.createTerminal({ name: `capture env ${n}`, shellPath: '/bin/sh', shellArgs: ['-c', `printf '%s %s\\n' "\${ANTHROPIC_BASE_URL-unset}" "\${OPENAI_BASE_URL-unset}" > '${out}'`] });
  try {
    return await fileText(out);
  } finally {
    t.dispose();
  }
}

function post(url: string, body: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'sk-vscode-test-key' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

describe('capture proxy', () => {
  let provider: ChildProcess;
  let upstream: string;
  const out = join(testEnv.tmp, 'vscode-captures');
  const received = join(testEnv.tmp, 'vscode-provider');
  before(async () => {
    mkdirSync(testEnv.tmp, { recursive: true });
    const portFile = join(testEnv.tmp, 'vscode-provider.port');
    provider = spawn(process.execPath, [join(testEnv.repo, 'scripts/record/fake-provider.mjs'), '--out', received, '--port-file', portFile], { stdio: 'ignore' });
    await until('the scripted provider', () => existsSync(portFile) && readFileSync(portFile, 'utf8'));
    upstream = `http://127.0.0.1:${readFileSync(portFile, 'utf8')}`;
  });
  after(async () => {
    await vscode.commands.executeCommand('prefixLens.stopCaptureProxy');
    provider.kill();
  });

  it('is off until started: no status-bar item, no variables for new terminals', async () => {
    const a = await api();
    assert.equal(a.capture.url, null);
    assert.equal(a.capture.statusText, '');
    assert.equal(a.capture.terminalsEnabled, false);
    assert.equal(a.toggle.collection.get('ANTHROPIC_BASE_URL'), undefined);
    assert.equal(await baseUrlsOfNewTerminal(), 'unset unset');
  });

  it('Start Capture Proxy: forwards to the upstream, saves the body byte for byte, counts it in the status bar', async () => {
    const a = await api();
    const url = await vscode.commands.executeCommand<string>('prefixLens.startCaptureProxy', { port: 0, upstream: [upstream], out });
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(a.capture.statusText, '$(record) capture 0');
    const body = readFileSync(join(testEnv.repo, 'test/fixtures/pi/main/requests/005-anthropic-messages.body.json'));
    const r = await post(`${url}/v1/messages`, body);
    assert.equal(r.status, 200);
    assert.match(r.body, /^event: message_start\n/);
    await until('the request to be counted', () => a.capture.recorded === 1);
    assert.equal(a.capture.statusText, '$(record) capture 1');
    const day = readdirSync(out)[0];
    assert.ok(readFileSync(join(out, day, '000001-anthropic-messages.body.json')).equals(body));
    assert.ok(readFileSync(join(received, '001-anthropic-messages.body.json')).equals(body), 'the provider received the same bytes');
    assert.ok(!readFileSync(join(out, day, '000001-anthropic-messages.meta.json'), 'utf8').includes('sk-vscode-test-key'));
  });

  it('the terminal toggle (opt-in) sets both base URLs for new terminals while the proxy runs', async () => {
    const a = await api();
    assert.equal(await vscode.commands.executeCommand('prefixLens.toggleCaptureTerminals'), true);
    const url = a.capture.url!;
    assert.equal(a.toggle.collection.get('ANTHROPIC_BASE_URL')?.value, url);
    assert.equal(a.toggle.collection.get('OPENAI_BASE_URL')?.value, `${url}/v1`);
    assert.equal(await baseUrlsOfNewTerminal(), `${url} ${url}/v1`);
  });

  it('Stop Capture Proxy: the variables go with it (a new terminal is never pointed at a stopped proxy)', async () => {
    const a = await api();
    assert.equal(await vscode.commands.executeCommand('prefixLens.stopCaptureProxy'), 1);
    assert.equal(a.capture.url, null);
    assert.equal(a.capture.statusText, '');
    assert.equal(a.toggle.collection.get('ANTHROPIC_BASE_URL'), undefined);
    assert.equal(a.toggle.collection.get('OPENAI_BASE_URL'), undefined);
    assert.equal(await baseUrlsOfNewTerminal(), 'unset unset');
    assert.equal(a.capture.terminalsEnabled, true, 'the choice is kept for the next start');
    assert.equal(await vscode.commands.executeCommand('prefixLens.toggleCaptureTerminals', false), false);
  });

  it('shows its store folder in the status-bar tooltip as text: a folder named with backticks, Markdown, a command link and HTML ends no code span, links nothing', async () => {
    const a = await api();
    const name = 'caps `x` **b** [l](command:foo) <img src=x> #1';
    const dir = join(testEnv.tmp, name);
    const url = await vscode.commands.executeCommand<string>('prefixLens.startCaptureProxy', { port: 0, upstream: [upstream], out: dir });
    try {
      const tip = a.capture.tooltip!;
      assert.deepEqual([tip.isTrusted, tip.supportHtml, tip.supportThemeIcons], [false, false, false]);
      const [first, ...rest] = tip.value.split('\n\n');
      // appendText's escapes (a backslash before each Markdown character, &nbsp; for a space), and `<` escaped too.
      const shown = 'caps&nbsp;\\`x\\`&nbsp;\\*\\*b\\*\\*&nbsp;\\[l\\]\\(command:foo\\)&nbsp;\\<img&nbsp;src=x\\>&nbsp;\\#1';
      assert.ok(first.startsWith(`**Capture proxy on** at \`${url}\`: 0 requests recorded to /`), first);
      assert.ok(first.endsWith(`/${shown}`), first);
      // The folder's part holds no backtick, bracket or `<` that Markdown would read.
      assert.doesNotMatch(first.slice(first.indexOf(' recorded to ')), /(^|[^\\])[`[\]()<*]/);
      assert.equal(first.slice(first.indexOf(' recorded to ') + 13).replaceAll('&nbsp;', ' ').replace(/\\([\\`*_{}[\]()#+\-!~<>])/g, '$1'), dir);
      assert.deepEqual(rest, ['Point your agent here (see the log for the line per host), or turn on "Capture Proxy for New Terminals".', 'Click to stop.']);
    } finally {
      await vscode.commands.executeCommand('prefixLens.stopCaptureProxy');
    }
  });
});
