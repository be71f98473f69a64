#!/usr/bin/env node
// Post-processing for record-pi.sh (no dependencies, Node >= 20).
//
//   node pi-fixtures.mjs finalize --run RUN --dest DEST --replace FROM=TO [--replace FROM=TO]...
//       Copy one recorded scenario from its temp run dir into DEST with machine-specific strings
//       (temp work root, recorder install root, ephemeral port) replaced CONSISTENTLY in the
//       session file, the request bodies, their meta files, the index, models.json/settings.json
//       and steps.tsv. Nothing else in the bodies changes: they stay the bytes pi sent, modulo
//       these replacements. bodyBytes/bodySha256/content-length in meta and index describe the
//       normalized body. The session directory is renamed after the normalized cwd
//       (pi's `--<cwd with / replaced by ->--` encoding). Fails if any original string survives.
//
//   node pi-fixtures.mjs readme OUTDIR
//       Write OUTDIR/README.md: per scenario, step -> invocation -> request numbers -> session lines.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';

const fail = (msg) => {
  console.error(`pi-fixtures: error: ${msg}`);
  process.exit(1);
};
const sha256 = (data) => createHash('sha256').update(data).digest('hex');
/** Pi's session directory name for a cwd (session-manager.ts getDefaultSessionDir, 0.73.1). */
const encodeCwd = (cwd) => `--${cwd.replace(/^[/\\]/, '').replace(/[/\\:]/g, '-')}--`;

// ---------------------------------------------------------------------------------------------
// finalize
// ---------------------------------------------------------------------------------------------

function finalize(argv) {
  const { values } = parseArgs({
    args: argv,
    options: { run: { type: 'string' }, dest: { type: 'string' }, replace: { type: 'string', multiple: true, default: [] } },
  });
  const { run, dest } = values;
  if (!run || !dest) fail('finalize needs --run and --dest');
  // Longest first, so a root that contains another root is replaced as a whole.
  const replacements = values.replace
    .map((pair) => {
      const i = pair.indexOf('=');
      if (i <= 0) fail(`--replace expects FROM=TO, got ${pair}`);
      const [from, to] = [pair.slice(0, i), pair.slice(i + 1)];
      // Replacements run on JSON text: refuse strings that JSON would escape.
      if (/["\\\u0000-\u001f]/.test(from + to)) fail(`--replace strings must not need JSON escaping: ${pair}`);
      return [from, to];
    })
    .sort((a, b) => b[0].length - a[0].length);
  const normalize = (text) => replacements.reduce((acc, [from, to]) => acc.split(from).join(to), text);
  const written = [];
  const write = (path, data) => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, data);
    written.push(path);
  };
  const readUtf8 = (path) => {
    const raw = readFileSync(path);
    const text = raw.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(raw)) fail(`${path} is not valid UTF-8; refusing to rewrite it`);
    return text;
  };

  // Session file (exactly one per scenario: pi appends branches and compactions to the same file).
  const sessionsRoot = join(run, 'agent', 'sessions');
  const sessionFiles = existsSync(sessionsRoot)
    ? readdirSync(sessionsRoot).flatMap((d) => readdirSync(join(sessionsRoot, d)).filter((f) => f.endsWith('.jsonl')).map((f) => join(sessionsRoot, d, f)))
    : [];
  if (sessionFiles.length !== 1) fail(`expected exactly one session file under ${sessionsRoot}, found ${sessionFiles.length}`);
  const [sessionPath] = sessionFiles;
  const originalText = readUtf8(sessionPath);
  const originalHeader = JSON.parse(originalText.split('\n')[0]);
  if (basename(join(sessionPath, '..')) !== encodeCwd(originalHeader.cwd)) fail(`session dir ${sessionPath} does not match its cwd ${originalHeader.cwd}`);
  const sessionText = normalize(originalText);
  const header = JSON.parse(sessionText.split('\n')[0]);
  write(join(dest, 'agent', 'sessions', encodeCwd(header.cwd), basename(sessionPath)), sessionText);

  // Pi configuration that shapes the requests (no auth.json exists: keys are literals in models.json).
  for (const f of ['models.json', 'settings.json']) write(join(dest, 'agent', f), normalize(readUtf8(join(run, 'agent', f))));

  // Requests.
  const reqIn = join(run, 'requests');
  if (existsSync(join(reqIn, 'unrouted.log'))) fail(`the fake provider got unrouted requests:\n${readFileSync(join(reqIn, 'unrouted.log'), 'utf8')}`);
  const bodies = readdirSync(reqIn).filter((f) => f.endsWith('.body.json')).sort();
  const byN = new Map();
  for (const f of bodies) {
    const text = normalize(readUtf8(join(reqIn, f)));
    const bytes = Buffer.from(text, 'utf8');
    write(join(dest, 'requests', f), bytes);
    const metaFile = f.replace(/\.body\.json$/, '.meta.json');
    const meta = JSON.parse(normalize(readUtf8(join(reqIn, metaFile))));
    meta.bodyBytes = bytes.length;
    meta.bodySha256 = sha256(bytes);
    if (meta.headers?.['content-length'] !== undefined) meta.headers['content-length'] = String(bytes.length);
    meta.bodyNormalization =
      'machine-specific strings (temp work root, recorder install root, port) were replaced by fixed ones in the body, the session file and this meta; bodyBytes, bodySha256 and content-length describe the normalized body';
    write(join(dest, 'requests', metaFile), `${JSON.stringify(meta, null, 2)}\n`);
    byN.set(meta.n, meta);
  }
  const index = readUtf8(join(reqIn, 'index.ndjson'))
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const entry = JSON.parse(normalize(line));
      const meta = byN.get(entry.n);
      if (!meta) fail(`index.ndjson names request ${entry.n} without a body file`);
      return JSON.stringify({ ...entry, bytes: meta.bodyBytes, sha256: meta.bodySha256 });
    });
  if (index.length !== bodies.length) fail(`index.ndjson has ${index.length} lines for ${bodies.length} bodies`);
  write(join(dest, 'requests', 'index.ndjson'), `${index.join('\n')}\n`);

  // Capture proxy folders (CAPTURE=1): every body the provider received was saved by the proxy,
  // byte for byte (compared before normalization), and nothing else; then normalized like the rest.
  const capIn = join(run, 'captures');
  if (existsSync(capIn)) {
    const captured = readdirSync(capIn).flatMap((d) => readdirSync(join(capIn, d)).filter((f) => f.endsWith('.body.json')).map((f) => join(d, f)));
    const shas = (list) => list.map((b) => sha256(readFileSync(b))).sort();
    const got = shas(captured.map((f) => join(capIn, f)));
    const want = shas(bodies.map((f) => join(reqIn, f)));
    if (got.length !== want.length || got.some((h, i) => h !== want[i])) fail(`the capture proxy saved ${got.length} bodies, not byte-identical to the ${want.length} the provider received`);
    for (const f of captured) {
      write(join(dest, 'captures', f), Buffer.from(normalize(readUtf8(join(capIn, f))), 'utf8'));
      const metaFile = f.replace(/\.body\.json$/, '.meta.json');
      const meta = JSON.parse(normalize(readUtf8(join(capIn, metaFile))));
      meta.bodyBytes = Buffer.byteLength(normalize(readUtf8(join(capIn, f))), 'utf8');
      meta.bodySha256 = sha256(readFileSync(join(dest, 'captures', f)));
      if (meta.headers?.['content-length'] !== undefined) meta.headers['content-length'] = String(meta.bodyBytes);
      write(join(dest, 'captures', metaFile), `${JSON.stringify(meta, null, 2)}\n`);
    }
    console.log(`pi-fixtures: ${dest}: the capture proxy saved all ${got.length} bodies byte for byte`);
  }

  write(join(dest, 'steps.tsv'), normalize(readUtf8(join(run, 'steps.tsv'))));

  // Consistency checks.
  for (const path of written) {
    const text = readFileSync(path, 'utf8');
    for (const [from] of replacements) if (text.includes(from)) fail(`${path} still contains ${from}`);
  }
  const entries = sessionText.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  for (const e of entries) {
    const id = e.type === 'message' && e.message.role === 'assistant' ? e.message.responseId : undefined;
    if (id && !byN.has(requestNumber(id))) fail(`assistant entry ${e.id} has responseId ${id} but no such request was recorded`);
  }
  console.log(`pi-fixtures: ${dest}: ${bodies.length} requests, ${entries.length} session lines`);
}

/** Request number encoded in a fake-provider response id (chatcmpl-fake-N, msg_fake_N, resp_fake_N). */
function requestNumber(responseId) {
  const m = /(?:chatcmpl-fake-|msg_fake_|resp_fake_)(\d+)$/.exec(responseId);
  return m ? Number(m[1]) : undefined;
}

// ---------------------------------------------------------------------------------------------
// readme
// ---------------------------------------------------------------------------------------------

function readTsv(path) {
  const [head, ...rows] = readFileSync(path, 'utf8').split('\n').filter(Boolean);
  const cols = head.split('\t');
  return rows.map((r) => Object.fromEntries(r.split('\t').map((v, i) => [cols[i], v])));
}

function describeEntry(e, lineOf) {
  switch (e.type) {
    case 'session':
      return 'session header';
    case 'message': {
      const m = e.message;
      if (m.role === 'assistant') {
        const n = requestNumber(m.responseId ?? '');
        const extra = m.stopReason === 'toolUse' ? ', toolCall' : m.stopReason === 'error' ? ', **error**, no request id' : '';
        return `assistant${n ? ` (#${n}${extra})` : ` (${extra.slice(2)})`}`;
      }
      if (m.role === 'toolResult') return `toolResult(${m.toolName})`;
      return m.role;
    }
    case 'custom_message':
      return e.customType === 'phux-context' ? `custom_message(phux ${e.details?.kind} seq ${e.details?.seq})` : `custom_message(${e.customType})`;
    case 'model_change':
      return `model_change(${e.provider}/${e.modelId})`;
    case 'thinking_level_change':
      return `thinking_level_change(${e.thinkingLevel})`;
    case 'branch_summary':
      return `branch_summary(parent = line ${lineOf.get(e.parentId)})`;
    case 'compaction':
      return `compaction(first kept = line ${lineOf.get(e.firstKeptEntryId)})`;
    case 'label':
      return `label(${e.label} on line ${lineOf.get(e.targetId)})`;
    case 'session_info':
      return 'session_info';
    case 'custom':
      return `custom(${e.customType})`;
    default:
      return e.type;
  }
}

function describeRequest(meta) {
  const d = meta.decision ?? {};
  const what =
    d.kind === 'summary' ? `${d.summaryOf} summary` : d.kind === 'http-500' ? '**HTTP 500**' : d.kind === 'tool' ? 'tool call' : null;
  return `#${meta.n}${what ? ` ${what}` : ''}`;
}

function scenarioSection(dir, name) {
  const steps = readTsv(join(dir, 'steps.tsv'));
  const sessionsDir = join(dir, 'agent', 'sessions');
  const [cwdDir] = readdirSync(sessionsDir);
  const [file] = readdirSync(join(sessionsDir, cwdDir));
  const entries = readFileSync(join(sessionsDir, cwdDir, file), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const lineOf = new Map(entries.map((e, i) => [e.id, i + 1]));
  const metas = readdirSync(join(dir, 'requests'))
    .filter((f) => f.endsWith('.meta.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, 'requests', f), 'utf8')));
  const end = steps.find((s) => s.step === 'end');
  const out = [];
  out.push(`## ${name}: ${metas.length} requests, ${entries.length} session lines`, '');
  out.push(`Session: \`${name}/agent/sessions/${cwdDir}/${file}\``, '');
  out.push('| step | what | invocation | requests | session lines |', '| --- | --- | --- | --- | --- |');
  const real = steps.filter((s) => s.step !== 'end');
  real.forEach((s, i) => {
    const next = real[i + 1] ?? end;
    const reqs = metas.filter((m) => m.n > Number(s.requests_before) && m.n <= Number(next.requests_before)).map(describeRequest);
    const lines = entries
      .map((e, j) => [j + 1, e])
      .filter(([ln]) => ln > Number(s.session_lines_before) && ln <= Number(next.session_lines_before))
      .map(([ln, e]) => `${ln} ${describeEntry(e, lineOf)}`);
    const cell = (v) => v.replace(/\|/g, '\\|');
    out.push(`| ${s.step} | ${cell(s.description)} | \`${cell(s.invocation)}\` | ${reqs.join(', ') || 'none'} | ${lines.join(', ') || 'none'} |`);
  });
  out.push('');
  return out.join('\n');
}

function readme(argv) {
  const [outdir] = argv;
  if (!outdir) fail('readme needs OUTDIR');
  const order = ['main', 'long'];
  const scenarios = readdirSync(outdir)
    .filter((d) => statSync(join(outdir, d)).isDirectory() && existsSync(join(outdir, d, 'steps.tsv')))
    .sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99) || a.localeCompare(b));
  if (!scenarios.length) fail(`no recorded scenarios in ${outdir}`);
  const version = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).dependencies['@mariozechner/pi-coding-agent'];
  const captured = scenarios.some((d) => existsSync(join(outdir, d, 'captures')));
  const text = `# Pi fixtures (real pi ${version} against a scripted model server)

Generated by ${captured ? '\`npm run record:pi-capture\` (\`CAPTURE=1 scripts/record/record-pi.sh test/fixtures/pi-capture\`)' : '\`npm run record:pi\` (\`scripts/record/record-pi.sh test/fixtures/pi\`)'}; do not edit by hand.
Real \`@mariozechner/pi-coding-agent@${version}\` (print mode, \`-e scripts/record/pi-lab-ext.ts\`) talked to
\`scripts/record/fake-provider.mjs\` on 127.0.0.1, which saved every request body byte-for-byte.${
    captured
      ? `
Through the capture proxy: pi's \`models.json\` named \`prefix-lens capture\` (normalized port 8711), which forwarded
every request to the provider and saved it in \`<scenario>/captures/\` in its own layout (\`session-<id>/\` for
requests with a session header — pi sends \`session_id\` on OpenAI Responses only — else the UTC day); the
recording fails unless the proxy saved exactly the bytes the provider received (compared before normalization).`
      : ''
  }

**All usage numbers are SYNTHETIC** (in the sessions and in \`requests/*.meta.json\`): tokens = ceil(bytes/4)
of a canonical serialization; cache fields come from a simulated prefix cache (Anthropic: entries written at
\`cache_control\` breakpoints >= 1024 tokens, read = longest earlier breakpoint prefix within 20 blocks;
OpenAI: longest common prefix with an earlier request of the same api/model/prompt_cache_key, floored to
128-token steps, 0 below 1024). Only the request bytes and the session files are real.

Layout per scenario: \`<scenario>/agent/\` is a Pi agent dir (point \`PI_CODING_AGENT_DIR\` at it):
\`sessions/--<encoded cwd>--/<timestamp>_<uuidv7>.jsonl\`, \`models.json\`, \`settings.json\`;
\`<scenario>/requests/NNN-<api>.body.json\` (+ \`.meta.json\`, \`index.ndjson\`); \`<scenario>/steps.tsv\`
(step, requests before the step, session lines before the step, invocation).

Normalized: the temp work root is \`/home/user/pi-lab\` (cwd \`/home/user/pi-lab/<scenario>/project\`), the
recorder dir is \`/home/user/pi-recorder\` (pi installed in its \`node_modules\`), the port is 43210. Bodies are
otherwise untouched (meta sha256 = normalized body). Dates and timestamps are as recorded (TZ=UTC).
Response ids embed the request number (\`chatcmpl-fake-N\`, \`msg_fake_N\`, \`resp_fake_N\`), so an assistant
entry's \`responseId\` names its request. Summary and failed requests have no assistant entry with an id.
phux context messages use phux's exact text format; seq 1/2 equal phux's own checkpoint/delta fixtures;
compaction and tree navigation force a checkpoint (sent at once, like phux's Pi integration).

Worth knowing when writing tests (pi behaviour, not recorder artefacts):
- Summary requests (compaction, split-turn prefix, branch) leave no assistant entry and no usage in the session.
- The retry after an HTTP 500 sends a body byte-identical to the failed one; the session keeps the
  \`stopReason:"error"\` assistant entry and the retry's assistant entry is its child.
- \`--model\` together with \`--continue\` writes no \`model_change\`; only the assistant entry names the model.
- After in-process tree navigation pi keeps the in-memory thinking level, so a request can use a level
  that the \`thinking_level_change\` entries on its path do not say.
- Responses bodies (and every body with \`PI_CACHE_RETENTION=long\`) carry \`prompt_cache_key\` = the session
  id, so they change with each recording; all other bodies are identical across recordings.

${scenarios.map((s) => scenarioSection(join(outdir, s), s)).join('\n')}`;
  writeFileSync(join(outdir, 'README.md'), text);
  console.log(`pi-fixtures: wrote ${join(outdir, 'README.md')}`);
}

const [cmd, ...rest] = process.argv.slice(2);
if (cmd === 'finalize') finalize(rest);
else if (cmd === 'readme') readme(rest);
else fail('usage: pi-fixtures.mjs finalize --run RUN --dest DEST --replace FROM=TO... | readme OUTDIR');
