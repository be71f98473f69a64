/** Locating OpenCode's data: XDG data dir, OPENCODE_DB, channel databases, legacy storage. */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { locateOpenCode, openCodeDataDir } from '../../../src/hosts/opencode/index.js';
import { cleanup, tempDir } from './helpers.js';

describe('OpenCode locate', () => {
  let dir: string;
  beforeEach(() => (dir = tempDir()));
  afterEach(() => cleanup(dir));

  it('uses $XDG_DATA_HOME/opencode, else ~/.local/share/opencode', () => {
    assert.equal(openCodeDataDir({ HOME: '/home/u', XDG_DATA_HOME: '/data' }), '/data/opencode');
    assert.equal(openCodeDataDir({ HOME: '/home/u' }), '/home/u/.local/share/opencode');
    // a relative XDG_DATA_HOME is invalid per the XDG spec and ignored
    assert.equal(openCodeDataDir({ HOME: '/home/u', XDG_DATA_HOME: 'rel' }), '/home/u/.local/share/opencode');
  });

  it('lists only what exists: the database, other channels\' databases, the legacy storage', () => {
    const data = join(dir, 'opencode');
    const env = { HOME: '/nowhere', XDG_DATA_HOME: dir };
    assert.deepEqual(locateOpenCode(env), { dataDir: data, db: null, channelDbs: [], storage: null });
    mkdirSync(join(data, 'storage', 'session'), { recursive: true });
    writeFileSync(join(data, 'opencode.db'), '');
    writeFileSync(join(data, 'opencode-beta.db'), '');
    assert.deepEqual(locateOpenCode(env), {
      dataDir: data,
      db: join(data, 'opencode.db'),
      channelDbs: [join(data, 'opencode-beta.db')],
      storage: join(data, 'storage'),
    });
  });

  it('OPENCODE_DB overrides the database: absolute, relative to the data dir, or :memory: (no file)', () => {
    const data = join(dir, 'opencode');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'custom.db'), '');
    writeFileSync(join(dir, 'abs.db'), '');
    const env = { HOME: '/nowhere', XDG_DATA_HOME: dir };
    assert.equal(locateOpenCode({ ...env, OPENCODE_DB: 'custom.db' }).db, join(data, 'custom.db'));
    assert.equal(locateOpenCode({ ...env, OPENCODE_DB: join(dir, 'abs.db') }).db, join(dir, 'abs.db'));
    assert.equal(locateOpenCode({ ...env, OPENCODE_DB: ':memory:' }).db, null);
  });
});
