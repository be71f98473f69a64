/**
 * Hand-made corpus: special files where a regular file is expected — a FIFO (whose open would
 * block), a socket, a directory, a symlink to /dev/zero (endless bytes) — named like a Pi session,
 * an OpenCode WAL, a legacy storage session or message, a capture body or meta; and a legacy
 * storage project folder that is a file. Run as child processes (a blocked thread or an endless
 * read must be observable as a hang) with a timeout and a 512 MB heap cap; several placements
 * share one run to keep the corpus within its time budget. Each gives its
 * diagnostic (or its usage error), and everything else is still read.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeLegacyStorage } from '../opencode/helpers.js';
import { checkText, ReportShape, runCliProcess, snapshot, checkUnwritten } from './harness.js';

type Special = 'fifo' | 'socket' | 'directory' | 'dev-zero';
const SPECIALS: Special[] = ['fifo', 'socket', 'directory', 'dev-zero'];

/** Puts a special file at `path` (replacing what is there). Sockets stay open until `servers` are closed. */
async function makeSpecial(path: string, kind: Special, servers: Server[]): Promise<void> {
  rmSync(path, { recursive: true, force: true });
  if (kind === 'fifo') execFileSync('mkfifo', [path]);
  else if (kind === 'directory') mkdirSync(path);
  else if (kind === 'dev-zero') symlinkSync('/dev/zero', path);
  else {
    const server = createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(path, resolve));
    servers.push(server);
  }
  // A socket path longer than sun_path (108 bytes) would be cut short: make sure the file is there.
  assert.ok(lstatSync(path), `${kind} at ${path}`);
}

const PI_SESSIONS = 'test/fixtures/pi/main/agent/sessions/--home-user-pi-lab-main-project--';
const PI_FILE = readdirSync(PI_SESSIONS).find((n) => n.endsWith('.jsonl'))!;

/** What the words of a refusal say for each kind. */
const SAYS: Record<Special, RegExp> = {
  fifo: /FIFO/,
  socket: /socket/,
  directory: /directory/,
  'dev-zero': /character device/,
};

describe('hostile corpus: special files where a regular file is expected', function () {
  this.timeout(240_000);
  let dir: string;
  const servers: Server[] = [];
  // Short: socket paths deep in a storage folder must stay under sun_path's 108 bytes.
  beforeEach(() => (dir = mkdtempSync(join(process.platform === 'linux' ? '/tmp' : tmpdir(), 'plh-'))));
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs analyze --json (and with `all`, analyze and check too) on `args`; returns the parsed report. */
  async function analyze(args: string[], what: string, all = false) {
    const json = await runCliProcess(['analyze', '--json', '--no-cache', ...args], { timeoutMs: 30_000 });
    assert.ok(!json.timedOut, `${what}: hang (killed after 30 s)`);
    checkText(json, [0, 2], what);
    const report = ReportShape.parse(JSON.parse(json.out));
    for (const cmd of all ? [['analyze'], ['check']] : []) {
      const r = await runCliProcess([...cmd, '--no-cache', ...args], { timeoutMs: 30_000 });
      assert.ok(!r.timedOut, `${what} (${cmd[0]}): hang`);
      checkText(r, cmd[0] === 'check' ? [0, 1, 2] : [0, 2], `${what} (${cmd[0]})`);
    }
    return { report, err: json.err, code: json.code };
  }

  for (const kind of SPECIALS) {
    it(`a ${kind} named like a Pi session, as an OpenCode WAL, as a legacy message, as a capture body and meta: each named, everything else read`, async () => {
      // Four inputs in one run: a Pi folder, an OpenCode data dir, a legacy data dir, a capture folder.
      const pi = join(dir, 'pi');
      mkdirSync(pi);
      cpSync(join(PI_SESSIONS, PI_FILE), join(pi, PI_FILE));
      await makeSpecial(join(pi, 'zz-special.jsonl'), kind, servers);
      const oc = join(dir, 'oc');
      mkdirSync(oc);
      cpSync('test/fixtures/opencode/opencode.db', join(oc, 'opencode.db'));
      await makeSpecial(join(oc, 'opencode.db-wal'), kind, servers);
      const legacy = join(dir, 'lg');
      const storage = await writeLegacyStorage(legacy);
      const msgDir = join(storage, 'message', readdirSync(join(storage, 'message')).sort()[0]);
      const message = join(msgDir, readdirSync(msgDir).sort()[0]);
      await makeSpecial(message, kind, servers);
      const cap = join(dir, 'cap');
      cpSync('test/fixtures/pi/main/requests', cap, { recursive: true });
      const bodies = readdirSync(cap).filter((n) => n.endsWith('.body.json')).sort();
      const body = join(cap, bodies[2]);
      const meta = join(cap, bodies[4].replace('.body.json', '.meta.json'));
      await makeSpecial(body, kind, servers);
      await makeSpecial(meta, kind, servers);
      const before = snapshot(dir);

      const { report } = await analyze([pi, oc, cap], kind, true);
      // The legacy store holds the same session ids as the database (a ref is analyzed once): its own run.
      const legacyReport = (await analyze([legacy], `${kind} legacy`)).report;
      const under = (p: string) => report.sessions.filter((s) => s.path === p || s.path.startsWith(`${p}/`));
      const said = (p: string, file: string) => under(p).some((s) => s.diagnostics.some((d) => d.file === file && SAYS[kind].test(d.message)) || s.diagnostics.some((d) => d.message.includes(file) && SAYS[kind].test(d.message)));

      // Pi: the real session in full; the special one named (a directory is a folder to a walk: it holds nothing).
      assert.equal(under(pi).find((s) => s.path.endsWith(PI_FILE))?.requests.length, 13, 'the real Pi session is read in full');
      if (kind !== 'directory') assert.ok(said(pi, join(pi, 'zz-special.jsonl')), `the special .jsonl is named: ${JSON.stringify(under(pi).map((s) => s.diagnostics))}`);
      // OpenCode: every recorded request, the WAL named.
      assert.equal(under(oc).reduce((n, s) => n + s.requests.length, 0), 34, 'every recorded OpenCode request is read');
      assert.ok(under(oc).some((s) => s.diagnostics.some((d) => /opencode\.db-wal/.test(d.message) && SAYS[kind].test(d.message))), 'the WAL is named');
      // Legacy storage: the message named, the others read.
      assert.ok(legacyReport.sessions.some((s) => s.diagnostics.some((d) => d.file === message && SAYS[kind].test(d.message))), `the legacy message file is named: ${JSON.stringify(legacyReport.sessions.map((s) => s.diagnostics))}`);
      assert.ok(legacyReport.sessions.reduce((n, s) => n + s.requests.length, 0) >= 30, 'the other legacy messages are read');
      // Capture: every other body a request, the body and the meta named.
      const c = under(cap)[0];
      assert.equal(c.requests.length, bodies.length - 1, 'every other body is a request');
      assert.ok(said(cap, body), 'the body is named');
      assert.ok(said(cap, meta), 'the meta is named');
      checkUnwritten(before, dir, kind);
    });

    it(`a ${kind} named as the session argument itself: exit 2 with a message saying what it is`, async () => {
      await makeSpecial(join(dir, 'session.jsonl'), kind, servers);
      const r = await runCliProcess(['analyze', '--no-cache', join(dir, 'session.jsonl')], { timeoutMs: 30_000 });
      assert.ok(!r.timedOut, `${kind}: hang`);
      checkText(r, [2], kind);
      assert.match(r.err, kind === 'directory' ? /no sessions found/ : SAYS[kind]);
    });
  }

  it('a legacy storage project folder that is a file: its sessions are reported as unread, the others read', async () => {
    const storage = await writeLegacyStorage(dir);
    writeFileSync(join(storage, 'session', 'zz-broken-project'), 'not a folder');
    const { report } = await analyze([dir], 'project folder is a file');
    assert.equal(report.sessions.reduce((n, s) => n + s.requests.length, 0), 34, 'the readable project is read in full');
    const unread = report.sessions.find((s) => s.diagnostics.some((d) => /zz-broken-project: cannot list this session folder \(ENOTDIR/.test(d.message)));
    assert.ok(unread, `a diagnostic names the project folder: ${JSON.stringify(report.sessions.map((s) => s.diagnostics))}`);
  });
});
