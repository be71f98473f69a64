// Records OpenCode fixtures: the real `opencode-ai@1.18.33` (pinned in package.json here) against
// fake-provider.mjs on 127.0.0.1, in an isolated HOME/XDG lab. Called by
// scripts/record/record-opencode.sh OUTDIR; see test/fixtures/opencode/README.md for the output.
//
// The lab lives at a fixed path (OPENCODE_RECORD_LAB, default /tmp/prefix-lens-opencode-lab) so
// that machine paths inside the database and the request bodies are the same on every machine
// without rewriting the database; git dates are fixed so project ids are stable; the provider
// port only appears in request headers and is replaced by `<port>` there.
// CAPTURE=1: the capture proxy (`prefix-lens capture`, the repository's dist/cli.js) sits between
// OpenCode and the provider (the providers' `options.baseURL` name the proxy); it saves what it
// forwarded into OUTDIR/captures/ (its own layout: one `session-<x-session-id>` folder per
// session) and the recording fails unless those are exactly the bytes the provider received.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkCapturedBodies, startCaptureProxy } from '../capture-lab.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const VERSION = '1.18.33';
const OUT = path.resolve(process.argv[2] ?? '');
const LAB = path.resolve(process.env.OPENCODE_RECORD_LAB || '/tmp/prefix-lens-opencode-lab');
const LOCK = `${LAB}.lock`;
const OC = path.join(HERE, 'node_modules', 'opencode-ai', 'bin', 'opencode.exe');
const RUN_TIMEOUT_MS = 240_000;
const T0 = Date.now();
const CAPTURE = process.env.CAPTURE === '1';
const CLI = path.join(HERE, '..', '..', '..', 'dist', 'cli.js');

class Failure extends Error {}
const log = (msg) => console.log(`[record-opencode ${((Date.now() - T0) / 1000).toFixed(0).padStart(3)}s] ${msg}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (!process.argv[2]) {
  console.error('usage: record.mjs OUTDIR');
  process.exit(2);
}

const HOME = path.join(LAB, 'home');
const ENV = {
  PATH: process.env.PATH,
  LANG: 'C.UTF-8',
  TZ: 'UTC',
  CI: 'true',
  HOME,
  XDG_DATA_HOME: path.join(HOME, '.local/share'),
  XDG_CONFIG_HOME: path.join(HOME, '.config'),
  XDG_CACHE_HOME: path.join(HOME, '.cache'),
  XDG_STATE_HOME: path.join(HOME, '.local/state'),
  // shared/reference/opencode.md §4: no autoupdate, no share, bundled models snapshot, no LSP
  // downloads, no default plugins, no ~/.claude files, no external skills.
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_DISABLE_CLAUDE_CODE: '1',
  OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
  PHUX_STATE_FILE: path.join(LAB, 'phux-state.json'),
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
  GIT_CONFIG_NOSYSTEM: '1',
};
const DB = path.join(ENV.XDG_DATA_HOME, 'opencode', 'opencode.db');

const children = new Set();
function start(cmd, args, opts = {}) {
  const child = spawn(cmd, args, { env: ENV, stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

/** Runs a command to completion; throws Failure with its stderr tail on non-zero exit or timeout. */
function exec(cmd, args, { cwd, env = {}, timeoutMs = RUN_TIMEOUT_MS, label = cmd } = {}) {
  return new Promise((resolve, reject) => {
    const child = start(cmd, args, { cwd, env: { ...ENV, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => reject(new Failure(`${label}: ${e.message}`)));
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Failure(`${label} failed (${signal ? `killed by ${signal}${signal === 'SIGKILL' ? ', timeout' : ''}` : `exit ${code}`})\n${stderr.slice(-3000)}`));
    });
  });
}

function git(cwd, ...args) {
  return exec('git', args, { cwd, label: `git ${args[0]}` });
}

async function makeProject(name, extraConfig = {}) {
  const dir = path.join(LAB, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'line one of notes\nline two of notes\n');
  fs.writeFileSync(path.join(dir, 'AGENTS.md'), '# Project rules\nAlways answer tersely.\n');
  const model = (limit) => ({ tool_call: true, limit });
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model: 'fake/gpt-5-mini',
    small_model: 'fake/gpt-5-mini',
    ...extraConfig,
    provider: {
      fake: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Fake OpenAI-compatible',
        options: { baseURL: `http://127.0.0.1:${PORT}/v1`, apiKey: 'sk-fake' },
        models: {
          'gpt-5-mini': { name: 'GPT-5 mini (scripted)', ...model({ context: 200000, output: 8000 }) },
          'gpt-4.1': { name: 'GPT-4.1 (scripted)', ...model({ context: 200000, output: 8000 }) },
        },
      },
      fakeant: {
        npm: '@ai-sdk/anthropic',
        name: 'Fake Anthropic',
        options: { baseURL: `http://127.0.0.1:${PORT}/v1`, apiKey: 'sk-ant-fake' },
        models: { 'claude-sonnet-4-5': { name: 'Claude Sonnet 4.5 (scripted)', ...model({ context: 200000, output: 8000 }) } },
      },
    },
  };
  fs.writeFileSync(path.join(dir, 'opencode.json'), JSON.stringify(config, null, 2) + '\n');
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'config', 'user.email', 'recorder@example.com');
  await git(dir, 'config', 'user.name', 'recorder');
  await git(dir, 'add', 'notes.txt', 'AGENTS.md', 'opencode.json');
  await git(dir, 'commit', '-qm', 'init');
  return dir;
}

let turn = 0;
/** One turn = one `opencode run` process; returns the session id from its JSON event stream. */
async function run(dir, words, { env = {}, args = [] } = {}) {
  turn += 1;
  const t = Date.now();
  const { stdout, stderr } = await exec(OC, ['run', '--format', 'json', ...args, ...words], { cwd: dir, env, label: `turn ${turn} (${path.basename(dir)}: ${words.join(' ')})` });
  fs.writeFileSync(path.join(LAB, 'runs', `${String(turn).padStart(2, '0')}.jsonl`), stdout);
  fs.writeFileSync(path.join(LAB, 'runs', `${String(turn).padStart(2, '0')}.err`), stderr);
  const ids = [...stdout.matchAll(/"sessionID"\s*:\s*"(ses_[A-Za-z0-9]+)"/g)].map((m) => m[1]);
  if (!ids.length) throw new Failure(`turn ${turn}: no sessionID in the output of opencode run\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`);
  if (/"type"\s*:\s*"error"/.test(stdout)) throw new Failure(`turn ${turn}: opencode reported an error\n${stdout.slice(-2000)}`);
  log(`turn ${turn} ${path.basename(dir)} "${words.join(' ').slice(0, 50)}" ${args.join(' ')} → ${ids[0]} (${((Date.now() - t) / 1000).toFixed(1)}s)`);
  return ids[0];
}

async function http(method, url, body, timeoutMs = 180_000) {
  const res = await fetch(url, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  if (!res.ok) throw new Failure(`${method} ${url} → HTTP ${res.status}: ${text.slice(0, 500)}`);
  return text;
}

async function stop(child, name) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  for (let i = 0; i < 50 && child.exitCode === null && child.signalCode === null; i++) await sleep(100);
  if (child.exitCode === null && child.signalCode === null) {
    log(`${name} did not stop on SIGTERM; killing`);
    child.kill('SIGKILL');
    await sleep(200);
  }
}

async function freePort() {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The lab is a fixed path: one recording at a time. A lock left by a dead recorder is taken over. */
function takeLock() {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.mkdirSync(LOCK);
      fs.writeFileSync(path.join(LOCK, 'pid'), String(process.pid));
      return;
    } catch {
      let pid = NaN;
      try {
        pid = Number(fs.readFileSync(path.join(LOCK, 'pid'), 'utf8'));
      } catch {}
      let alive = false;
      try {
        if (pid > 0) process.kill(pid, 0);
        alive = pid > 0;
      } catch {}
      if (alive) throw new Failure(`${LOCK} is held by process ${pid}: another recording is running`);
      fs.rmSync(LOCK, { recursive: true, force: true });
    }
  }
  throw new Failure(`cannot take ${LOCK}`);
}

/** The port OpenCode is pointed at (the provider's, or the capture proxy's with CAPTURE=1), and the provider's. */
let PORT = 0;
let PROVIDER_PORT = 0;
/** Replaces the ephemeral ports by `<port>` (the provider already writes `127.0.0.1:<port>` for its own Host header). */
const ports = (text) => text.split(`127.0.0.1:${PORT}`).join('127.0.0.1:<port>').split(`127.0.0.1:${PROVIDER_PORT}`).join('127.0.0.1:<port>');
async function main() {
  if (CAPTURE && !fs.existsSync(CLI)) throw new Failure(`CAPTURE=1 needs ${CLI} (npm run build)`);
  if (!fs.existsSync(OC)) throw new Failure(`${OC} is missing: run \`npm ci\` in ${HERE}`);
  const version = (await exec(OC, ['--version'], { label: 'opencode --version', cwd: HERE })).stdout.trim();
  if (version !== VERSION) throw new Failure(`opencode --version says ${version}, expected ${VERSION} (npm ci in ${HERE})`);
  takeLock();
  fs.rmSync(LAB, { recursive: true, force: true });
  fs.mkdirSync(path.join(LAB, 'runs'), { recursive: true });
  fs.mkdirSync(path.join(LAB, 'plugins'), { recursive: true });
  fs.mkdirSync(HOME, { recursive: true });
  for (const f of ['phux-stream.mjs', 'phux-v1.mjs', 'phux-v2.mjs']) fs.copyFileSync(path.join(HERE, 'plugins', f), path.join(LAB, 'plugins', f));

  // ---- scripted provider
  const portFile = path.join(LAB, 'provider.port');
  const provider = start(process.execPath, [path.join(HERE, 'fake-provider.mjs')], {
    env: { ...ENV, PORT: '0', PORT_FILE: portFile, REQ_DIR: path.join(LAB, 'requests') },
  });
  const providerLog = fs.createWriteStream(path.join(LAB, 'runs', 'provider.log'));
  provider.stdout.pipe(providerLog);
  provider.stderr.pipe(providerLog);
  for (let i = 0; i < 100 && !fs.existsSync(portFile); i++) await sleep(50);
  if (!fs.existsSync(portFile)) throw new Failure('fake provider did not start (see runs/provider.log in the lab)');
  PROVIDER_PORT = PORT = Number(fs.readFileSync(portFile, 'utf8'));
  log(`fake provider on 127.0.0.1:${PORT}; lab ${LAB}`);
  let proxy = null;
  if (CAPTURE) {
    // OpenCode is pointed at the proxy, which forwards to the provider (PORT = the proxy's port).
    proxy = await startCaptureProxy({ cli: CLI, upstreamPort: PROVIDER_PORT, out: path.join(LAB, 'captures'), spawnNode: (args) => start(process.execPath, args) }).catch((e) => {
      throw new Failure(e.message);
    });
    PORT = proxy.port;
    log(`capture proxy on 127.0.0.1:${PORT}`);
  }

  const proj = await makeProject('proj');
  const v1 = await makeProject('proj-phux-v1', { plugin: [`file://${path.join(LAB, 'plugins', 'phux-v1.mjs')}`] });
  const v2 = await makeProject('proj-phux-v2', { plugin: [`file://${path.join(LAB, 'plugins', 'phux-v2.mjs')}`] });
  const notes = (dir) => path.join(dir, 'notes.txt');
  const sessions = {};
  const w = (s) => s.split(' ');

  // ---- basic: openai-compatible, new session, read tool call, --continue, model switch and back
  sessions.basic = await run(proj, w('Hello, this is turn one.'));
  await run(proj, ['READ_FILE', notes(proj), 'and', 'summarize'], { args: ['--continue'] });
  await run(proj, w('Turn three, plain.'), { args: ['--continue'] });
  await run(proj, w('Turn four on another model.'), { args: ['--continue', '-m', 'fake/gpt-4.1'] });
  await run(proj, w('Turn five back on the first model.'), { args: ['--continue', '-m', 'fake/gpt-5-mini'] });

  // ---- anthropic: Messages API with cache_control breakpoints; read tool; task tool → child session
  const ant = ['-m', 'fakeant/claude-sonnet-4-5'];
  sessions.anthropic = await run(proj, w('Anthropic turn one.'), { args: ant });
  await run(proj, ['READ_FILE', notes(proj)], { args: ['--continue', ...ant] });
  await run(proj, w('SUBTASK please delegate'), { args: ['--continue', ...ant] });

  // ---- compaction: a reported prompt near the context limit → auto compaction (+ "Continue…")
  sessions.compaction = await run(proj, w('Compaction session turn one.'));
  await run(proj, ['READ_FILE', notes(proj)], { args: ['--continue'] });
  await run(proj, w('Turn three BIGUSAGE please'), { args: ['--continue'] });
  await run(proj, w('Turn four after compaction.'), { args: ['--continue'] });

  // ---- phux v1: fleet context as a synthetic part at the tail of the user message
  const step = (n) => ({ env: { PHUX_FLEET_STEP: String(n) } });
  sessions.phuxV1 = await run(v1, w('Phux v1 turn one.'), step(1));
  await run(v1, ['READ_FILE', notes(v1)], { ...step(2), args: ['--continue'] });
  await run(v1, w('Phux v1 turn three, fleet changed.'), { ...step(3), args: ['--continue'] });
  await run(v1, w('Phux v1 turn four BIGUSAGE, fleet changed again.'), { ...step(4), args: ['--continue'] });
  await run(v1, w('Phux v1 turn five after compaction.'), { ...step(5), args: ['--continue'] });

  // ---- phux v2: latest fleet context pushed into the system prompt on every request
  sessions.phuxV2 = await run(v2, w('Phux v2 turn one.'), step(1));
  await run(v2, ['READ_FILE', notes(v2)], { ...step(2), args: ['--continue'] });
  await run(v2, w('Phux v2 turn three, fleet changed.'), { ...step(3), args: ['--continue'] });
  await run(v2, w('Phux v2 turn four, fleet unchanged.'), { ...step(3), args: ['--continue'] });

  // ---- opencode serve: manual compaction (TUI /compact) and one more turn of the compaction
  // session; while the server still runs, its newest rows are only in opencode.db-wal → snapshot.
  const servePort = await freePort();
  const serve = start(OC, ['serve', '--port', String(servePort)], { cwd: proj });
  const serveLog = fs.createWriteStream(path.join(LAB, 'runs', 'serve.log'));
  serve.stdout.pipe(serveLog);
  serve.stderr.pipe(serveLog);
  const base = `http://127.0.0.1:${servePort}`;
  const q = `directory=${encodeURIComponent(proj)}`;
  const sid = sessions.compaction;
  let up = false;
  for (let i = 0; i < 300 && !up; i++) {
    try {
      await http('GET', `${base}/session/${sid}?${q}`, undefined, 2000);
      up = true;
    } catch {
      await sleep(200);
    }
  }
  if (!up) throw new Failure('opencode serve did not answer within 60 s (see runs/serve.log in the lab)');
  let summarized = '';
  for (let i = 0; i < 5 && summarized !== 'true'; i++) {
    summarized = await http('POST', `${base}/session/${sid}/summarize?${q}`, { providerID: 'fake', modelID: 'gpt-5-mini', auto: false }).catch((e) => String(e.message));
    if (summarized !== 'true') await sleep(3000);
  }
  if (summarized !== 'true') throw new Failure(`POST /session/${sid}/summarize did not succeed: ${summarized}`);
  log('manual compaction done');
  await http('POST', `${base}/session/${sid}/message?${q}`, { parts: [{ type: 'text', text: 'Turn six after manual compaction.' }] });
  log('turn after manual compaction done');
  await sleep(1000);
  const walDir = path.join(LAB, 'wal-snapshot');
  fs.mkdirSync(walDir);
  fs.copyFileSync(DB, path.join(walDir, 'opencode.db'));
  if (!fs.existsSync(`${DB}-wal`) || fs.statSync(`${DB}-wal`).size === 0) throw new Failure('no opencode.db-wal while opencode serve runs: cannot record the WAL-only state');
  fs.copyFileSync(`${DB}-wal`, path.join(walDir, 'opencode.db-wal'));
  await stop(serve, 'opencode serve');
  await stop(provider, 'fake provider');
  if (proxy) {
    await stop(proxy.child, 'capture proxy');
    if (/warning/.test(proxy.output())) throw new Failure(`the capture proxy reported problems:\n${proxy.output()}`);
    let saved;
    try {
      saved = checkCapturedBodies(path.join(LAB, 'captures'), path.join(LAB, 'requests'));
    } catch (e) {
      throw new Failure(e.message);
    }
    log(`the capture proxy saved all ${saved} bodies byte for byte`);
  }

  // ---- checkpoint: the last connection's close folds the WAL into opencode.db
  if (fs.existsSync(`${DB}-wal`) && fs.statSync(`${DB}-wal`).size > 0) {
    await exec(OC, ['db', 'PRAGMA wal_checkpoint(TRUNCATE);'], { cwd: proj, label: 'opencode db checkpoint' });
  }
  if (fs.existsSync(`${DB}-wal`) && fs.statSync(`${DB}-wal`).size > 0) throw new Failure('opencode.db-wal still holds frames after the checkpoint');

  // ---- output
  const requests = fs.readdirSync(path.join(LAB, 'requests')).filter((f) => /^\d{3}-\w+\.(body|meta)\.json$/.test(f)).sort();
  if (requests.length === 0) throw new Failure('the fake provider saw no requests');
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(path.join(OUT, 'requests'), { recursive: true });
  fs.mkdirSync(path.join(OUT, 'wal'), { recursive: true });
  fs.copyFileSync(DB, path.join(OUT, 'opencode.db'));
  for (const f of ['opencode.db', 'opencode.db-wal']) fs.copyFileSync(path.join(walDir, f), path.join(OUT, 'wal', f));
  for (const f of requests) {
    let data = fs.readFileSync(path.join(LAB, 'requests', f));
    if (CAPTURE && f.endsWith('.meta.json')) data = Buffer.from(ports(data.toString('utf8')));
    fs.writeFileSync(path.join(OUT, 'requests', f), data);
  }
  if (CAPTURE) {
    // The proxy's folders; its port and the provider's replaced in the metas (bodies untouched).
    const caps = path.join(LAB, 'captures');
    for (const d of fs.readdirSync(caps)) {
      fs.mkdirSync(path.join(OUT, 'captures', d), { recursive: true });
      for (const f of fs.readdirSync(path.join(caps, d))) {
        let data = fs.readFileSync(path.join(caps, d, f));
        if (f.endsWith('.meta.json')) data = Buffer.from(ports(data.toString('utf8')));
        fs.writeFileSync(path.join(OUT, 'captures', d, f), data);
      }
    }
  }
  const metas = requests.filter((f) => f.endsWith('.meta.json')).map((f) => ({ file: f, ...JSON.parse(fs.readFileSync(path.join(LAB, 'requests', f), 'utf8')) }));
  const childSessions = {};
  for (const m of metas) {
    const parent = m.headers['x-parent-session-id'];
    if (parent) childSessions[m.headers['x-session-id']] = parent;
  }
  fs.writeFileSync(
    path.join(OUT, 'sessions.json'),
    JSON.stringify({ opencode: VERSION, lab: LAB, recorded: new Date().toISOString().slice(0, 10), sessions, children: childSessions }, null, 2) + '\n',
  );
  writeReadme(metas, sessions, childSessions);
  log(`wrote ${OUT}: ${metas.length} requests, ${Object.keys(sessions).length} root sessions (+${Object.keys(childSessions).length} child)`);
}

const SCENARIOS = {
  basic: 'openai-compatible `fake/gpt-5-mini`: new session, `read` tool call, `--continue` turns, switch to `fake/gpt-4.1` and back',
  anthropic: '`@ai-sdk/anthropic` `fakeant/claude-sonnet-4-5` (`/v1/messages`, cache_control breakpoints): `read` tool call, `task` tool → child session',
  compaction: 'auto compaction (reported prompt near the limit) + "Continue…" message, then manual compaction and one more turn through `opencode serve`',
  phuxV1: 'plugin `phux-v1.mjs`: phux context appended as a synthetic `prt_z…` part to the user message (tail); compaction with the compacting hook',
  phuxV2: 'plugin `phux-v2.mjs`: latest phux context pushed into the system prompt on every request (2nd system message)',
};

function writeReadme(metas, sessions, children) {
  const bySession = new Map();
  for (const m of metas) {
    const sid = m.headers['x-session-id'];
    if (!bySession.has(sid)) bySession.set(sid, []);
    bySession.get(sid).push(`${m.file.slice(0, 3)} ${m.kind}`);
  }
  const rows = [];
  for (const [name, sid] of Object.entries(sessions)) {
    rows.push(`| ${name} | \`${sid}\` | ${(bySession.get(sid) ?? []).join(', ')} | ${SCENARIOS[name]} |`);
    for (const [child, parent] of Object.entries(children)) {
      if (parent === sid) rows.push(`| ${name} (child) | \`${child}\` | ${(bySession.get(child) ?? []).join(', ')} | subagent session of the \`task\` tool (\`parent_id\` = ${name}) |`);
    }
  }
  const text = `# OpenCode ${VERSION} fixtures

Recorded by \`npm run record:opencode\` (\`scripts/record/record-opencode.sh\`): the real
\`opencode-ai@${VERSION}\` from npm (pinned in \`scripts/record/opencode/package.json\`) against the
scripted provider \`scripts/record/opencode/fake-provider.mjs\` on 127.0.0.1, with HOME and the XDG
dirs inside the lab \`${LAB}\` (a fixed path, so paths are the same on every machine).
**Usage numbers are SYNTHETIC** (the provider's prefix-cache simulation); everything else —
bodies, rows, ids, timestamps — is what OpenCode sent and stored. Each turn is one
\`opencode run --format json\` process (\`--continue\` for follow-ups); the compaction session's
manual compaction and last turn go through \`opencode serve\`.
The provider SDKs (\`@ai-sdk/openai-compatible\`, \`@ai-sdk/anthropic\`) are bundled in the OpenCode
binary, so nothing is installed for them; the only network use is npm (\`npm ci\` of the pinned
package, and OpenCode's own background install of \`@opencode-ai/plugin\` into the lab's config dir).
The phux plugins (\`scripts/record/opencode/plugins/\`) emit the real ADR-0067 text format from a
scripted fleet (one fleet step per turn).

| path | what |
| --- | --- |
| \`opencode.db\` | \`$XDG_DATA_HOME/opencode/opencode.db\` after the run (WAL folded in) |
| \`wal/opencode.db\` + \`wal/opencode.db-wal\` | copied while \`opencode serve\` was still running: the manual compaction and the turn after it exist only in the WAL |
| \`requests/NNN-<kind>.body.json\` | every request body byte for byte (kind: agent, title, summary) |
| \`requests/NNN-<kind>.meta.json\` | url, headers (secrets redacted, port replaced), api, scripted reply, synthetic usage |
| \`sessions.json\` | scenario → root session id; child → parent session id |${CAPTURE ? '\n| \`captures/session-<id>/NNNNNN-<api>.body.json + .meta.json\` | CAPTURE=1: what the capture proxy saved (byte-identical to \`requests/\`), its meta with credentials redacted, ports replaced |' : ''}

| scenario | session id | requests (NNN kind) | what |
| --- | --- | --- | --- |
${rows.join('\n')}

Request kinds: \`title\` = title generation (small model, stores only \`session.title\`),
\`summary\` = compaction summary (assistant message \`mode: "compaction"\`, \`summary: true\`),
\`agent\` = one agent-loop step (one assistant message each).
`;
  fs.writeFileSync(path.join(OUT, 'README.md'), text);
}

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    console.error(`record-opencode: ${sig}: stopping`);
    for (const c of children) c.kill('SIGKILL');
    try {
      if (fs.readFileSync(path.join(LOCK, 'pid'), 'utf8') === String(process.pid)) fs.rmSync(LOCK, { recursive: true, force: true });
    } catch {}
    process.exit(1);
  });
}

let code = 0;
try {
  await main();
} catch (e) {
  code = 1;
  console.error(`record-opencode: FAILED: ${e instanceof Failure ? e.message : e?.stack ?? e}`);
  console.error(`(lab kept at ${LAB} for inspection)`);
} finally {
  for (const c of children) c.kill('SIGKILL');
  try {
    if (fs.readFileSync(path.join(LOCK, 'pid'), 'utf8') === String(process.pid)) fs.rmSync(LOCK, { recursive: true, force: true });
  } catch {}
}
log(code === 0 ? 'done' : 'failed');
process.exit(code);
