/**
 * Test harness for the capture proxy: the scripted provider (scripts/record/fake-provider.mjs) as a
 * child process on 127.0.0.1, and a small HTTP client that keeps the chunks as they arrive.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running scripted provider: its port and the folder it records what it received into. */
export interface FakeProvider {
  port: number;
  url: string;
  out: string;
  stop(): Promise<void>;
}

/** Starts scripts/record/fake-provider.mjs on an ephemeral port. */
export async function startFakeProvider(): Promise<FakeProvider> {
  const dir = mkdtempSync(join(tmpdir(), 'prefix-lens-fake-'));
  const out = join(dir, 'requests');
  const portFile = join(dir, 'port');
  const child: ChildProcess = spawn(process.execPath, ['scripts/record/fake-provider.mjs', '--out', out, '--port-file', portFile], { stdio: 'ignore' });
  for (let i = 0; i < 200 && !(existsSync(portFile) && readFileSync(portFile, 'utf8')); i++) await new Promise((r) => setTimeout(r, 25));
  const port = Number(readFileSync(portFile, 'utf8'));
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    out,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/** A response as the client saw it: status, headers, the chunks in arrival order. */
export interface Seen {
  status: number;
  headers: http.IncomingHttpHeaders;
  chunks: Buffer[];
  body: Buffer;
}

/**
 * POSTs `body` to `url` and collects the answer. `onChunk` is called with each chunk as it arrives
 * (e.g. to let a test upstream go on only after the client saw its first chunk).
 */
export function post(url: string, body: string | Buffer, headers: Record<string, string> = {}, onChunk?: (c: Buffer, i: number) => void): Promise<Seen> {
  return new Promise((done, fail) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        onChunk?.(c, chunks.length - 1);
      });
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, chunks, body: Buffer.concat(chunks) }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(body);
  });
}
