// Records Claude Code and Codex fixtures: the real `@anthropic-ai/claude-code` and `@openai/codex`
// (pinned in package.json here) against ../fake-provider.mjs --script hosts on 127.0.0.1, in an isolated lab.
//
//   node record.mjs OUTDIR [claude-code] [codex]        (default: both)
//
// Writes OUTDIR/claude-code/, OUTDIR/claude-code-autocompact/, OUTDIR/codex/ and
// OUTDIR/codex-agents/ (layout in test/fixtures/<host>/README.md):
//   the host's own folders as it left them (CLAUDE_CONFIG_DIR projects/…, CODEX_HOME sessions/…),
//   requests/NNN-<api>.body.json|.meta.json + index.ndjson (every body byte for byte), steps.tsv.
//
// The lab lives at a fixed path (/tmp/prefix-lens-cc-lab, /tmp/prefix-lens-codex-lab) so that the
// machine paths inside transcripts and bodies are the same on every machine without rewriting them
// (they are "normalized" by construction); the provider's ephemeral port only appears in request
// headers and is replaced by `<port>` there. Usage numbers are SYNTHETIC (fake-provider.mjs).
// Each step is one host process (`claude -p …`, `codex exec …`); the number of model requests each
// step makes is checked, so a host that changed behaviour fails the recording instead of silently
// recording something else.
// CAPTURE=1: the capture proxy (`prefix-lens capture`, the repository's dist/cli.js) sits between
// the host and the provider; it saves what it forwarded into OUTDIR/<host>/captures/ (its own
// layout) and the recording fails unless that is exactly the bytes the provider received.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkCapturedBodies, startCaptureProxy } from '../capture-lab.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PKG = JSON.parse(fs.readFileSync(path.join(HERE, 'package.json'), 'utf8'));
const CLAUDE = path.join(HERE, 'node_modules', '@anthropic-ai', 'claude-code-linux-x64', 'claude');
const CODEX = path.join(HERE, 'node_modules', '@openai', 'codex', 'bin', 'codex.js');
const STEP_TIMEOUT_MS = 120_000;
const CAPTURE = process.env.CAPTURE === '1';
const CLI = path.join(HERE, '..', '..', '..', 'dist', 'cli.js');
const T0 = Date.now();

const OUT = process.argv[2] ? path.resolve(process.argv[2]) : null;
const HOSTS = process.argv.slice(3).length ? process.argv.slice(3) : ['claude-code', 'codex'];
if (!OUT) {
  console.error('usage: record.mjs OUTDIR [claude-code] [codex]');
  process.exit(2);
}
const log = (msg) => console.log(`[record-claude-codex ${((Date.now() - T0) / 1000).toFixed(0).padStart(3)}s] ${msg}`);
class Failure extends Error {}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs a command to its end; resolves {code, stdout, stderr}; rejects on timeout. */
function run(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Failure(`${path.basename(cmd)} ${args.join(' ')}: timed out after ${STEP_TIMEOUT_MS} ms`));
    }, STEP_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts the scripted provider; resolves {port, stop()}. */
async function startProvider(requestsDir, logFile, extraArgs) {
  const portFile = path.join(path.dirname(requestsDir), 'port');
  fs.rmSync(portFile, { force: true });
  const out = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, [path.join(HERE, '..', 'fake-provider.mjs'), '--script', 'hosts', '--out', requestsDir, '--port-file', portFile, ...extraArgs], { stdio: ['ignore', out, out] });
  for (let i = 0; i < 100 && !fs.existsSync(portFile); i++) await sleep(50);
  if (!fs.existsSync(portFile)) throw new Failure('the fake provider did not report a port');
  const port = Number(fs.readFileSync(portFile, 'utf8'));
  return {
    port,
    stop: () =>
      new Promise((resolve) => {
        child.on('close', resolve);
        child.kill('SIGTERM');
      }),
  };
}

const countRequests = (dir) => (fs.existsSync(path.join(dir, 'index.ndjson')) ? fs.readFileSync(path.join(dir, 'index.ndjson'), 'utf8').split('\n').filter(Boolean).length : 0);

/** Labs whose provider is running: stopped on a failure, so no provider outlives the recorder. */
const openLabs = new Set();

/** One scenario run: lab dirs, provider, steps.tsv. */
class Lab {
  constructor(name, root, providerArgs = []) {
    this.name = name;
    this.providerArgs = providerArgs;
    this.root = root;
    this.project = path.join(root, 'project');
    this.home = path.join(root, 'home');
    this.requests = path.join(root, 'requests');
    this.steps = ['step\trequests_before\tdescription\tinvocation'];
    this.n = 0;
  }
  async open() {
    fs.rmSync(this.root, { recursive: true, force: true });
    for (const d of [this.project, this.home, this.requests]) fs.mkdirSync(d, { recursive: true });
    this.provider = await startProvider(this.requests, path.join(this.root, 'provider.log'), this.providerArgs);
    openLabs.add(this);
    log(`[${this.name}] fake provider on 127.0.0.1:${this.provider.port}`);
    /** The port the host is pointed at: the provider's, or the capture proxy's in front of it. */
    this.port = this.provider.port;
    if (CAPTURE) {
      this.captures = path.join(this.root, 'captures');
      this.proxy = await startCaptureProxy({ cli: CLI, upstreamPort: this.provider.port, out: this.captures, spawnNode: (args) => spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] }) }).catch((e) => {
        throw new Failure(e.message);
      });
      this.port = this.proxy.port;
      log(`[${this.name}] capture proxy on 127.0.0.1:${this.port}`);
    }
  }
  /** Runs one host process; fails unless it made `expected` model requests (a number or [min, max]). */
  async step(expected, desc, cmd, args, env, pre) {
    this.n++;
    const before = countRequests(this.requests);
    const shownArgs = cmd === process.execPath && args[0] === CODEX ? args.slice(1) : args;
    const shown = `${pre ? `${pre.label}; ` : ''}${cmd === process.execPath && args[0] === CODEX ? 'codex' : path.basename(cmd)} ${shownArgs.map((a) => (/^[\w./:=@%+,-]+$/.test(a) ? a : JSON.stringify(a))).join(' ')}`;
    this.steps.push(`${this.n}\t${before}\t${desc}\t${shown}`);
    log(`[${this.name}] step ${this.n}: ${desc}`);
    if (pre) pre.run();
    const r = await run(cmd, args, { cwd: this.project, env });
    const got = countRequests(this.requests) - before;
    const [lo, hi] = Array.isArray(expected) ? expected : [expected, expected];
    if (r.code !== 0 || got < lo || got > hi) {
      throw new Failure(`[${this.name}] step ${this.n} (${shown}): exit ${r.code}, ${got} model requests (expected ${lo}${hi !== lo ? `..${hi}` : ''})\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
    }
  }
  async close() {
    openLabs.delete(this);
    await this.provider.stop();
    if (this.proxy) {
      await new Promise((resolve) => {
        this.proxy.child.on('close', resolve);
        this.proxy.child.kill('SIGTERM');
      });
      if (/warning/.test(this.proxy.output())) throw new Failure(`[${this.name}] the capture proxy reported problems:\n${this.proxy.output()}`);
      let saved;
      try {
        saved = checkCapturedBodies(this.captures, this.requests);
      } catch (e) {
        throw new Failure(`[${this.name}] ${e.message}`);
      }
      log(`[${this.name}] the capture proxy saved all ${saved} bodies byte for byte`);
    }
    this.steps.push(`end\t${countRequests(this.requests)}\t-\t-`);
    const unrouted = path.join(this.requests, 'unrouted.log');
    if (fs.existsSync(unrouted)) log(`[${this.name}] requests the provider did not serve:\n${fs.readFileSync(unrouted, 'utf8')}`);
    const plog = fs.readFileSync(path.join(this.root, 'provider.log'), 'utf8').split('\n').filter((l) => l && !l.startsWith('fake provider listening'));
    if (plog.length) throw new Failure(`[${this.name}] the fake provider reported errors:\n${plog.join('\n')}`);
  }
}

/** Copies the recorded requests, replacing the port in the meta headers (bodies are untouched). */
function copyRequests(lab, dest) {
  fs.mkdirSync(dest, { recursive: true });
  for (const f of fs.readdirSync(lab.requests).sort()) {
    if (f === 'unrouted.log') continue;
    let data = fs.readFileSync(path.join(lab.requests, f));
    if (f.endsWith('.meta.json')) data = Buffer.from(data.toString('utf8').split(`127.0.0.1:${lab.provider.port}`).join('127.0.0.1:<port>'));
    const body = f.endsWith('.body.json') ? data.toString('utf8') : '';
    if (body.includes(String(lab.provider.port)) && body.includes(`127.0.0.1:${lab.provider.port}`)) throw new Failure(`${f}: the body names the provider port`);
    fs.writeFileSync(path.join(dest, f), data);
  }
}

/** Copies the capture proxy's folders (CAPTURE=1), the proxy's and provider's ports replaced in the metas. */
function copyCaptures(lab, dest) {
  if (!lab.captures) return;
  for (const d of fs.readdirSync(lab.captures)) {
    fs.mkdirSync(path.join(dest, d), { recursive: true });
    for (const f of fs.readdirSync(path.join(lab.captures, d))) {
      let data = fs.readFileSync(path.join(lab.captures, d, f));
      if (f.endsWith('.meta.json')) data = Buffer.from(data.toString('utf8').split(`127.0.0.1:${lab.port}`).join('127.0.0.1:<port>').split(`127.0.0.1:${lab.provider.port}`).join('127.0.0.1:<port>'));
      fs.writeFileSync(path.join(dest, d, f), data);
    }
  }
}

function copyTree(from, to) {
  fs.cpSync(from, to, { recursive: true });
}

// ---------------------------------------------------------------------------------------------
// Claude Code
// ---------------------------------------------------------------------------------------------

function writeProject(lab, instructionsFile) {
  fs.writeFileSync(path.join(lab.project, 'hello.txt'), ['Hello from hello.txt!', ...Array.from({ length: 8 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`)].join('\n') + '\n');
  fs.writeFileSync(path.join(lab.project, instructionsFile), '# Lab project\nThese instructions are loaded into the host\'s context.\n');
}

/** Environment of a Claude Code step (reference/claude-code-codex.md §0): API key + base URL, no telemetry, no updater, no traffic besides the model API. */
function claudeEnv(lab, configDir, extra = {}) {
  return {
    PATH: process.env.PATH,
    HOME: lab.home,
    TERM: 'dumb',
    TZ: 'UTC',
    LANG: 'C.UTF-8',
    CLAUDE_CONFIG_DIR: configDir,
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${lab.port}`,
    ANTHROPIC_API_KEY: 'sk-ant-fake-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    ...extra,
  };
}

/** Copies a Claude Code lab's projects folder, bodies and steps into `dest`. */
function saveClaude(lab, configDir, dest) {
  fs.rmSync(dest, { recursive: true, force: true });
  copyTree(path.join(configDir, 'projects'), path.join(dest, 'claude', 'projects'));
  copyRequests(lab, path.join(dest, 'requests'));
  copyCaptures(lab, path.join(dest, 'captures'));
  fs.writeFileSync(path.join(dest, 'steps.tsv'), lab.steps.join('\n') + '\n');
  log(`[${lab.name}] ${countRequests(lab.requests)} requests recorded into ${dest}`);
}

/**
 * Auto-compaction: Claude Code compacts on its own when the context it believes it has passes
 * its threshold — the model window minus min(max output tokens, 20,000) minus 13,000 (about 167k
 * of claude-sonnet-4-5's 200k; read from the 2.1.328 binary's bundled code, `s4`/`jQ`), counted
 * from the last response's usage. The scripted answer to GROW_CONTEXT reports 170,000 more input
 * tokens than were sent, so the next turn starts with an auto-compaction.
 */
async function recordClaudeAutoCompact(dest) {
  const lab = new Lab('claude-code-autocompact', '/tmp/prefix-lens-cc-lab', ['--diagnostics']);
  await lab.open();
  writeProject(lab, 'CLAUDE.md');
  const configDir = path.join(lab.home, '.claude');
  const env = () => claudeEnv(lab, configDir);
  const cc = (...args) => ['-p', ...args];
  await lab.step(1, 'new session (claude-sonnet-4-5)', CLAUDE, cc('--model', 'claude-sonnet-4-5', 'Hello. Say hi.'), env());
  await lab.step(1, 'a turn whose answer reports a nearly full context (GROW_CONTEXT)', CLAUDE, cc('--continue', 'GROW_CONTEXT please'), env());
  // CLAUDE_CODE_AUTO_COMPACT_WINDOW: the window this version resolves for claude-sonnet-4-5 without
  // it is larger (no compaction at 191,916 tokens); 200,000 puts the threshold at 167,000.
  await lab.step(2, 'next turn: auto-compaction (CLAUDE_CODE_AUTO_COMPACT_WINDOW=200000), then the turn', CLAUDE, cc('--continue', 'First turn after auto-compaction.'), claudeEnv(lab, configDir, { CLAUDE_CODE_AUTO_COMPACT_WINDOW: '200000' }));
  await lab.step(1, 'turn after auto-compaction', CLAUDE, cc('--continue', 'Second turn after auto-compaction.'), env());
  await lab.close();
  saveClaude(lab, configDir, dest);
}

async function recordClaudeCode() {
  // --diagnostics: the scripted API returns cache diagnostics unasked; Claude Code stores what
  // arrives as message.diagnostics (the real API sends them only when a request asks).
  const lab = new Lab('claude-code', '/tmp/prefix-lens-cc-lab', ['--diagnostics']);
  await lab.open();
  writeProject(lab, 'CLAUDE.md');
  const configDir = path.join(lab.home, '.claude');
  const env = (extra = {}) => claudeEnv(lab, configDir, extra);
  const cc = (...args) => ['-p', ...args];
  await lab.step(1, 'new session (claude-sonnet-4-5)', CLAUDE, cc('--model', 'claude-sonnet-4-5', 'Hello. Say hi.'), env());
  await lab.step(2, 'tool call (Read), --continue', CLAUDE, cc('--continue', '--allowedTools', 'Read', '--', 'Please read hello.txt and tell me what it says.'), env());
  // The Agent tool runs a general-purpose sub-agent (its own file under <session>/subagents/);
  // the parent answers the tool result and then the sub-agent's completion notification.
  await lab.step(4, 'sub-agent (Agent tool), --continue', CLAUDE, cc('--continue', '--allowedTools', 'Read,Agent', '--', 'DELEGATE a small task to a sub-agent.'), env());
  await lab.step(2, 'HTTP 500, then Claude Code retries', CLAUDE, cc('--continue', 'FAIL500 once please'), env());
  await lab.step(1, 'manual /compact (the compaction call is not in the transcript)', CLAUDE, cc('--continue', '/compact'), env());
  await lab.step(1, 'first prompt after compaction', CLAUDE, cc('--continue', 'First prompt after compaction.'), env());
  await lab.step(1, 'model switch (--model claude-haiku-4-5 with --continue)', CLAUDE, cc('--continue', '--model', 'claude-haiku-4-5', 'Now on another model.'), env());
  await lab.step(1, 'CLAUDE.md edited mid-session', CLAUDE, cc('--continue', '--model', 'claude-haiku-4-5', 'Turn after CLAUDE.md edit.'), env(), {
    label: "echo 'Edited: be very brief.' >>CLAUDE.md",
    run: () => fs.appendFileSync(path.join(lab.project, 'CLAUDE.md'), 'Edited: be very brief.\n'),
  });
  await lab.step(1, '1 h cache (ENABLE_PROMPT_CACHING_1H=1)', CLAUDE, cc('--continue', '--model', 'claude-haiku-4-5', 'Turn with 1h cache.'), env({ ENABLE_PROMPT_CACHING_1H: '1' }));
  await lab.close();
  saveClaude(lab, configDir, path.join(OUT, 'claude-code'));
}

// ---------------------------------------------------------------------------------------------
// Codex
// ---------------------------------------------------------------------------------------------

/** Writes the Codex config (reference/claude-code-codex.md §0) for a lab's provider. */
function codexConfig(lab, codexHome, extra = []) {
  fs.mkdirSync(codexHome, { recursive: true });
  fs.writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      'model = "gpt-5"',
      'model_provider = "fake"',
      ...extra,
      '[model_providers.fake]',
      'name = "fake"',
      `base_url = "http://127.0.0.1:${lab.port}/v1"`,
      'env_key = "FAKE_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 2',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
}

const codexEnv = (lab, codexHome) => ({ PATH: process.env.PATH, HOME: lab.home, CODEX_HOME: codexHome, FAKE_KEY: 'fake-key', TERM: 'dumb', TZ: 'UTC', LANG: 'C.UTF-8', NO_COLOR: '1' });

/** Copies a Codex lab's sessions folder, bodies and steps into `dest`. */
function saveCodex(lab, codexHome, dest) {
  fs.rmSync(dest, { recursive: true, force: true });
  copyTree(path.join(codexHome, 'sessions'), path.join(dest, 'codex', 'sessions'));
  copyRequests(lab, path.join(dest, 'requests'));
  copyCaptures(lab, path.join(dest, 'captures'));
  fs.writeFileSync(path.join(dest, 'steps.tsv'), lab.steps.join('\n') + '\n');
  log(`[${lab.name}] ${countRequests(lab.requests)} requests recorded into ${dest}`);
}

/** The session_meta payloads of the rollouts below `codexHome`/sessions. */
function rolloutMetas(codexHome) {
  const found = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(d, e.name));
      else if (/^rollout-.*\.jsonl$/.test(e.name)) found.push(JSON.parse(fs.readFileSync(path.join(d, e.name), 'utf8').split('\n')[0]).payload);
    }
  };
  walk(path.join(codexHome, 'sessions'));
  return found;
}

/** The conversation id of the one rollout of `codexHome` that `pick` selects; fails unless exactly one. */
function onlyRollout(codexHome, what, pick) {
  const all = rolloutMetas(codexHome);
  const hits = all.filter(pick);
  if (hits.length !== 1) throw new Failure(`expected one ${what} in ${codexHome}, found ${hits.length} (of ${all.length} rollouts)`);
  return hits[0].id;
}

/** The top-level conversation (not a sub-agent's: session_meta `source` "exec"). */
const topConversation = (codexHome) => onlyRollout(codexHome, 'top-level rollout', (m) => m.source === 'exec');
/** The fork of `parent` (session_meta `forked_from_id`). */
const forkOf = (codexHome, parent) => onlyRollout(codexHome, `fork of ${parent}`, (m) => m.forked_from_id === parent);

/**
 * Sub-agent and fork: the parent spawns a sub-agent (multi_agent_v1 `spawn_agent`, then
 * `wait_agent` on it; the sub-agent is a thread with its own rollout), then `codex exec fork`
 * copies the conversation into a new one and goes on there.
 */
async function recordCodexAgents(dest) {
  const lab = new Lab('codex-agents', '/tmp/prefix-lens-codex-lab');
  await lab.open();
  writeProject(lab, 'AGENTS.md');
  const codexHome = path.join(lab.home, '.codex');
  codexConfig(lab, codexHome);
  const env = codexEnv(lab, codexHome);
  const cx = (...args) => [CODEX, 'exec', '--skip-git-repo-check', ...args];
  const node = process.execPath;
  await lab.step(1, 'new session (gpt-5)', node, cx('Hello codex. Say hi.'), env);
  await lab.step(4, 'sub-agent: spawn_agent, the sub-agent answers, wait_agent, then the answer', node, cx('resume', '--last', 'SPAWN a sub-agent please.'), env);
  const parent = topConversation(codexHome);
  await lab.step(1, 'fork of the parent conversation (exec fork <id>)', node, cx('fork', parent, 'Turn in the fork.'), env);
  // A parameter change: the reasoning effort (turn_context `effort`, the body's reasoning.effort).
  await lab.step(1, 'the fork resumed with another reasoning effort (-c model_reasoning_effort="high")', node, cx('resume', forkOf(codexHome, parent), '-c', 'model_reasoning_effort="high"', 'Turn with high effort.'), env);
  await lab.close();
  saveCodex(lab, codexHome, dest);
}

async function recordCodex() {
  const lab = new Lab('codex', '/tmp/prefix-lens-codex-lab');
  await lab.open();
  writeProject(lab, 'AGENTS.md');
  const codexHome = path.join(lab.home, '.codex');
  // One retry after an HTTP error, no stream retries (so the scripted 500 is one failed attempt
  // and one retry); auto-compaction once the reported context passes 14000 tokens (the scripted
  // usage crosses it after the switch to gpt-5-codex).
  codexConfig(lab, codexHome, ['model_auto_compact_token_limit = 14000']);
  const env = codexEnv(lab, codexHome);
  const cx = (...args) => [CODEX, 'exec', '--skip-git-repo-check', ...args];
  const node = process.execPath;
  await lab.step(1, 'new session (gpt-5)', node, cx('Hello codex. Say hi.'), env);
  await lab.step(2, 'tool call (exec_command), resume --last', node, cx('resume', '--last', 'Please read hello.txt and tell me what it says.'), env);
  await lab.step(2, 'HTTP 500, then Codex retries', node, cx('resume', '--last', 'FAIL500 once please'), env);
  await lab.step(1, 'AGENTS.md edited mid-session', node, cx('resume', '--last', 'Turn after AGENTS.md edit.'), env, {
    label: "echo 'Edited: be very brief.' >>AGENTS.md",
    run: () => fs.appendFileSync(path.join(lab.project, 'AGENTS.md'), 'Edited: be very brief.\n'),
  });
  await lab.step(1, 'model switch (resume --last -m gpt-5-codex)', node, cx('resume', '--last', '-m', 'gpt-5-codex', 'Now on another model.'), env);
  await lab.step(2, 'auto-compaction (context over model_auto_compact_token_limit), then the turn', node, cx('resume', '--last', '-m', 'gpt-5-codex', 'Another turn to grow the context.'), env);
  await lab.step(1, 'turn after compaction', node, cx('resume', '--last', '-m', 'gpt-5-codex', 'And another turn.'), env);
  await lab.close();
  saveCodex(lab, codexHome, path.join(OUT, 'codex'));
}

// ---------------------------------------------------------------------------------------------

async function main() {
  for (const [pkg, file] of [
    ['@anthropic-ai/claude-code', CLAUDE],
    ['@openai/codex', CODEX],
  ]) {
    if (!fs.existsSync(file)) throw new Failure(`${pkg} is not installed in ${HERE} (run record-claude-codex.sh, which installs it)`);
  }
  if (CAPTURE && !fs.existsSync(CLI)) throw new Failure(`CAPTURE=1 needs ${CLI} (npm run build)`);
  fs.mkdirSync(OUT, { recursive: true });
  if (HOSTS.includes('claude-code')) {
    await recordClaudeCode();
    await recordClaudeAutoCompact(path.join(OUT, 'claude-code-autocompact'));
  }
  if (HOSTS.includes('codex')) {
    await recordCodex();
    await recordCodexAgents(path.join(OUT, 'codex-agents'));
  }
  log(`done: ${HOSTS.join(', ')} (claude-code ${PKG.dependencies['@anthropic-ai/claude-code']}, codex ${PKG.dependencies['@openai/codex']})`);
}

main().catch(async (e) => {
  console.error(e instanceof Failure ? `record-claude-codex: ${e.message}` : e);
  for (const lab of openLabs) {
    lab.proxy?.child.kill('SIGTERM');
    await lab.provider.stop();
  }
  process.exit(1);
});
