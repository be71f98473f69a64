// The capture proxy in a recording lab: `prefix-lens capture` started in front of the scripted
// provider, and the check that it saved exactly the bodies the provider received.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const LISTENING = /listening on http:\/\/127\.0\.0\.1:(\d+)/;

/**
 * Starts `node <cli> capture` on an ephemeral port, forwarding to 127.0.0.1:`upstreamPort` and
 * saving under `out`; waits up to 10 s for its "listening on" line.
 * @param spawnNode (args) => ChildProcess with piped stdout/stderr (the lab's own spawn, so it is cleaned up with the lab)
 * @returns the child, the proxy's port and everything it printed so far
 * @throws Error with the proxy's output when it did not start
 */
export async function startCaptureProxy({ cli, upstreamPort, out, spawnNode }) {
  const child = spawnNode([cli, 'capture', '--port', '0', '--upstream', `http://127.0.0.1:${upstreamPort}`, '--out', out, '--quiet']);
  let text = '';
  child.stdout.on('data', (d) => (text += d));
  child.stderr.on('data', (d) => (text += d));
  for (let i = 0; i < 200 && !LISTENING.test(text); i++) await sleep(50);
  const m = LISTENING.exec(text);
  if (!m) throw new Error(`the capture proxy did not start:\n${text}`);
  return { child, port: Number(m[1]), output: () => text };
}

/**
 * Compares the bodies the proxy saved (`<captures>/<folder>/*.body.json`) with those the
 * provider received (`<requests>/*.body.json`), as sorted SHA-256 lists.
 * @returns the number of bodies, when byte-identical
 * @throws Error saying how many were saved and received otherwise
 */
export function checkCapturedBodies(captures, requests) {
  const sha = (f) => createHash('sha256').update(fs.readFileSync(f)).digest('hex');
  const got = fs.readdirSync(captures).flatMap((d) => fs.readdirSync(path.join(captures, d)).filter((f) => f.endsWith('.body.json')).map((f) => sha(path.join(captures, d, f)))).sort();
  const want = fs.readdirSync(requests).filter((f) => f.endsWith('.body.json')).map((f) => sha(path.join(requests, f))).sort();
  if (got.length !== want.length || got.some((h, i) => h !== want[i])) throw new Error(`the capture proxy saved ${got.length} bodies, not byte-identical to the ${want.length} the provider received`);
  return got.length;
}
