// The fleet client against the stand-in executable test/fixtures/phux/fake-phux.mjs.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentListArgs, fetchFleet, formatTimeout, type FleetClientOptions, type FleetResult } from '../../../src/phux/client.js';
import { FAKE_PHUX, FIXTURES } from './helpers.js';

describe('phux fleet client (fake phux)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prefix-lens-phux-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // 10 s unless a test is about the deadline itself: on a loaded machine a node stand-in can take
  // more than the default 1 s just to start, and these tests check what phux answered, not speed.
  const run = (mode: string, options: FleetClientOptions = {}, env: NodeJS.ProcessEnv = {}): Promise<FleetResult> =>
    fetchFleet({
      bin: FAKE_PHUX,
      timeoutMs: 10_000,
      ...options,
      // The PHUX_* of the developer's shell must not leak into the tests.
      env: { PHUX_BIN: '', PHUX_SOCKET: '', FAKE_PHUX_MODE: mode, FAKE_PHUX_ARGS_FILE: join(dir, 'args.json'), FAKE_PHUX_PID_FILE: join(dir, 'pid'), ...env },
    });
  const argsSeen = (): string[] => JSON.parse(readFileSync(join(dir, 'args.json'), 'utf8'));

  it('returns the normal fleet as ok with the rows in phux order', async () => {
    const r = await run('fleet');
    assert.equal(r.state, 'ok');
    assert.deepEqual(r.panes.map((p) => p.terminal), ['@1', '@10', '@2', '@4', '@7']);
    assert.deepEqual(argsSeen(), ['agent', 'list', '--json']);
    if (r.state === 'ok') assert.deepEqual(r.warnings, []);
  });

  it('returns the empty fleet as ok with no panes', async () => {
    const r = await run('empty');
    assert.deepEqual([r.state, r.panes], ['ok', []]);
  });

  it('passes --socket from the option, else from PHUX_SOCKET', async () => {
    await run('fleet', { socket: '/tmp/a.sock' });
    assert.deepEqual(argsSeen(), ['--socket', '/tmp/a.sock', 'agent', 'list', '--json']);
    await run('fleet', {}, { PHUX_SOCKET: '/tmp/env.sock' });
    assert.deepEqual(argsSeen(), ['--socket', '/tmp/env.sock', 'agent', 'list', '--json']);
    assert.deepEqual(agentListArgs(), ['agent', 'list', '--json']);
  });

  it('uses PHUX_BIN when no binary option is given', async () => {
    const r = await fetchFleet({ env: { PHUX_BIN: FAKE_PHUX, PHUX_SOCKET: '', FAKE_PHUX_MODE: 'empty' } });
    assert.equal(r.state, 'ok');
  });

  it('maps "no server" (exit 1, prose on stderr) to not-running with the cleaned prose', async () => {
    const r = await run('no-server', { socket: '/run/user/1000/phux/phux.sock' });
    assert.equal(r.state, 'not-running');
    if (r.state !== 'not-running') return;
    assert.equal(
      r.message,
      'phux: no server running at /run/user/1000/phux/phux.sock start one with `phux` (attaches, auto-starting a server) or `phux server` server log: /home/dev/.local/state/phux/server.log run `phux doctor` for a health check',
    );
    assert.deepEqual(r.panes, []);
  });

  it('maps a missing binary (ENOENT) to not-installed', async () => {
    const r = await fetchFleet({ bin: join(dir, 'no-such-phux'), env: { PHUX_SOCKET: '' } });
    assert.equal(r.state, 'not-installed');
    if (r.state === 'not-installed') assert.equal(r.message, `phux executable "${join(dir, 'no-such-phux')}" was not found; install phux or set PHUX_BIN / --phux-bin`);
  });

  it('maps a file that is not executable (EACCES) to not-installed', async () => {
    const r = await fetchFleet({ bin: join(FIXTURES, 'README.md'), env: { PHUX_SOCKET: '' } });
    assert.equal(r.state, 'not-installed');
    if (r.state === 'not-installed') assert.match(r.message, /is not executable/);
  });

  it('kills a phux that never answers (even one ignoring SIGTERM) and reports timeout', async () => {
    const r = await run('hang', { timeoutMs: 1000 });
    assert.equal(r.state, 'timeout');
    if (r.state !== 'timeout') return;
    assert.equal(r.message, 'phux did not answer in 1 s');
    assert.equal(r.timeoutMs, 1000);
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    assert.ok(pid > 0);
    // The child is gone: signal 0 probes existence without sending anything.
    assert.throws(() => process.kill(pid, 0), (err: NodeJS.ErrnoException) => err.code === 'ESRCH');
  });

  it('kills the whole process group when a child of phux keeps stdout open after phux exited', async () => {
    const childPidFile = join(dir, 'child-pid');
    const r = await run('grandchild-hang', {}, { FAKE_PHUX_CHILD_PID_FILE: childPidFile });
    // phux exited 0 having written nothing: after the grace period that is its (invalid) answer.
    assert.deepEqual([r.state, r.state === 'invalid' && r.cause], ['invalid', 'json']);
    // The grandchild sleeps 60 s: answering before the 10 s deadline means it was not waited for.
    assert.ok(r.elapsedMs < 10_000, `answered in ${r.elapsedMs} ms`);
    const pid = Number(readFileSync(childPidFile, 'utf8'));
    assert.ok(pid > 0);
    // SIGKILL is delivered asynchronously, and an orphan stays a zombie until init reaps it.
    const dead = () => {
      try {
        return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return true;
      }
    };
    for (let i = 0; i < 50 && !dead(); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(dead(), `grandchild ${pid} still running`);
  });

  it('caps 5 MB of output at 1 MiB and reports invalid/too-large', async () => {
    const r = await run('huge');
    assert.equal(r.state, 'invalid');
    if (r.state !== 'invalid') return;
    assert.equal(r.cause, 'too-large');
    assert.equal(r.message, 'phux output exceeded 1048576 bytes on stdout and was cut off');
  });

  it('answers with the fleet phux printed although a descendant out of reach of the group kill holds stdout for 30 s', async () => {
    const childPidFile = join(dir, 'child-pid');
    const r = await run('fleet-holder', {}, { FAKE_PHUX_CHILD_PID_FILE: childPidFile });
    try {
      assert.equal(r.state, 'ok');
      assert.deepEqual(r.panes.map((p) => p.terminal), ['@1', '@10', '@2', '@4', '@7']);
      // The holder keeps stdout for 30 s: answering before the 10 s deadline means it was not waited for.
      assert.ok(r.elapsedMs < 10_000, `answered in ${r.elapsedMs} ms`);
    } finally {
      // The holder is in its own session: the test started it, the test ends it.
      try {
        process.kill(Number(readFileSync(childPidFile, 'utf8')), 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });

  it('keeps the first 64 KiB of a stderr flood as warnings and does not call it too-large stdout', async () => {
    const r = await run('stderr-flood');
    assert.equal(r.state, 'ok');
    if (r.state !== 'ok') return;
    assert.equal(r.panes.length, 5);
    assert.ok(r.warnings.length > 0 && r.warnings.length <= 64 * 1024 / 1000 + 1, `${r.warnings.length} warnings`);
    assert.equal(r.warnings[r.warnings.length - 1], '(stderr cut at 64 KiB)');
  });

  it('honours a smaller output cap', async () => {
    const r = await run('fleet', { maxBytes: 1000 });
    assert.deepEqual([r.state, r.state === 'invalid' && r.cause], ['invalid', 'too-large']);
  });

  it('reports truncated JSON as invalid/json', async () => {
    const r = await run('invalid-json');
    assert.deepEqual([r.state, r.state === 'invalid' && r.cause], ['invalid', 'json']);
  });

  it('reports schema_version 2 as invalid/schema with the path', async () => {
    const r = await run('bad-schema');
    assert.equal(r.state, 'invalid');
    if (r.state !== 'invalid') return;
    assert.equal(r.cause, 'schema');
    assert.match(r.issues[0], /^\$\.schema_version: /);
  });

  it('accepts an unknown agent kind', async () => {
    const r = await run('unknown-kind');
    assert.equal(r.state, 'ok');
    assert.deepEqual(r.panes.map((p) => p.agent.kind), ['grok_next', 'open_code', 'pi', 'unknown', 'codex']);
  });

  it('keeps unknown top-level and row fields', async () => {
    const r = await run('extra-field');
    assert.equal(r.state, 'ok');
    if (r.state !== 'ok') return;
    assert.equal(r.document.generated_by, 'phux 0.30.0');
    assert.deepEqual((r.panes[0] as Record<string, unknown>).lease, { holder: 'reviewer', until_ms: 1767225600000 });
  });

  it('keeps the stderr warning of a partial federation view (exit 0) as a warning', async () => {
    const r = await run('federation');
    assert.equal(r.state, 'ok');
    if (r.state === 'ok') assert.deepEqual(r.warnings, ['phux: satellite "buildbox" unreachable; showing local panes only']);
  });

  it('reports another exit code as invalid/exit with the stderr text', async () => {
    const r = await run('crash');
    assert.equal(r.state, 'invalid');
    if (r.state !== 'invalid') return;
    assert.equal(r.cause, 'exit');
    assert.equal(r.message, "phux agent list exited with code 101: thread 'main' panicked at crates/phux/src/commands/agent/mod.rs:88:5");
  });

  it('measures elapsedMs with the injected clock', async () => {
    const ticks = [1000, 1250.4];
    const r = await run('empty', { now: () => ticks.shift() ?? 0 });
    assert.equal(r.elapsedMs, 250);
  });

  it('formats timeouts in seconds from 1 s and in ms below', () => {
    assert.deepEqual([formatTimeout(1000), formatTimeout(1500), formatTimeout(250)], ['1 s', '1.5 s', '250 ms']);
  });
});
