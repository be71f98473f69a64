/**
 * The live tail (`analyze --watch`, the extension's timeline) joins captured bodies as a full
 * analysis does: a Pi session recorded through the capture proxy is wire while it grows, and bodies
 * saved after the transcript line they belong to are joined at the next update.
 */
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeRefUncached } from '../../../src/cache/results.js';
import { piRef } from '../../../src/hosts/pi/discover.js';
import { LiveAnalysis } from '../../../src/live/session.js';

const FX = 'test/fixtures/pi-capture/main';
const sub = readdirSync(join(FX, 'agent/sessions'))[0];
const NAME = readdirSync(join(FX, 'agent/sessions', sub))[0];
const TEXT = readFileSync(join(FX, 'agent/sessions', sub, NAME), 'utf8');

describe('live tail: the capture join', () => {
  const saved = process.env.PREFIX_LENS_CAPTURE_DIRS;
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-livecap-'));
    process.env.PREFIX_LENS_CAPTURE_DIRS = join(dir, 'captures');
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    if (saved === undefined) delete process.env.PREFIX_LENS_CAPTURE_DIRS;
    else process.env.PREFIX_LENS_CAPTURE_DIRS = saved;
  });
  const full = async (file: string) => JSON.stringify((await analyzeRefUncached((await piRef(file, 'named'))!))[0]);

  it('bodies captured after the session was opened: the next update joins them (wire, as a full analysis)', async () => {
    const file = join(dir, NAME);
    writeFileSync(file, TEXT);
    const live = await LiveAnalysis.open((await piRef(file, 'named'))!);
    assert.equal(live.report.evidence, 'reconstructed');
    assert.equal((await live.update()).change, 'unchanged');
    cpSync(join(FX, 'captures'), join(dir, 'captures'), { recursive: true });
    const u = await live.update();
    assert.notEqual(u.change, 'unchanged');
    assert.equal(u.report.evidence, 'wire');
    assert.equal(u.report.requests.length, 16);
    assert.equal(JSON.stringify(u.report), await full(file));
  });

  it('a session growing with its bodies already captured stays wire at every step', async () => {
    cpSync(join(FX, 'captures'), join(dir, 'captures'), { recursive: true });
    const lines = TEXT.split('\n').filter(Boolean);
    const file = join(dir, NAME);
    const half = Math.floor(lines.length / 2);
    writeFileSync(file, lines.slice(0, half).map((l) => `${l}\n`).join(''));
    const live = await LiveAnalysis.open((await piRef(file, 'named'))!);
    assert.notEqual(live.report.evidence, 'reconstructed');
    assert.equal(JSON.stringify(live.report), await full(file));
    appendFileSync(file, lines.slice(half).map((l) => `${l}\n`).join(''));
    const u = await live.update();
    assert.equal(u.report.evidence, 'wire');
    assert.equal(u.report.requests.length, 16);
    assert.equal(JSON.stringify(u.report), await full(file));
  });
});
