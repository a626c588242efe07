// The real system for the plugin tests, started the way tests/browser/lib/
// cluster.js and the C++ tests (tests/integration/cluster.cc) start it:
// nats-server -js (from PATH), folio-ingest and folio-edge (from FOLIO_BIN_DIR,
// default ../../build/bin) on free loopback ports, data in a temp directory.
// stop() kills every process it started; so does this process's exit.
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const kToken = 'plugin-test-token';

const live = new Set<ChildProcess>();
process.on('exit', () => { for (const p of live) { try { p.kill('SIGKILL'); } catch { /* gone */ } } });

export function binDir(): string {
  return process.env.FOLIO_BIN_DIR || path.resolve(process.cwd(), '../../build/bin');
}

// Why the real system cannot run here, or '' when it can.
export function missing(): string {
  for (const b of ['folio-ingest', 'folio-edge']) {
    if (!fs.existsSync(path.join(binDir(), b))) return `no ${path.join(binDir(), b)} (build it, or set FOLIO_BIN_DIR)`;
  }
  if (spawnSync('nats-server', ['--version']).error) return 'no nats-server on PATH';
  return '';
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const a = s.address() as net.AddressInfo; s.close(() => resolve(a.port)); });
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Polls `url` until it answers `status` (redirects not followed).
export async function waitFor(url: string, status: number, timeoutMs = 15000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(2000) });
      if (r.status === status) return r;
      last = `HTTP ${r.status}`;
      await r.arrayBuffer();
    } catch (e) { last = (e as Error).message; }
    await sleep(50);
  }
  throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms (last: ${last})`);
}

export class Cluster {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-plugin-'));
  private procs: ChildProcess[] = [];
  ingestUrl = '';
  edgeUrl = '';

  private run(name: string, argv: string[]): void {
    const log = fs.openSync(path.join(this.dir, name + '.log'), 'a');
    const p = spawn(argv[0], argv.slice(1), { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    this.procs.push(p);
    live.add(p);
    p.once('exit', () => live.delete(p));
  }

  // `ingestFlags`: extra folio-ingest flags (limits, --base-url).
  async start(ingestFlags: string[] = []): Promise<void> {
    const [nats, monitor, ingest, edge] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    this.run('nats', ['nats-server', '-js', '-a', '127.0.0.1', '-p', String(nats), '-m', String(monitor), '-sd', path.join(this.dir, 'nats')]);
    await waitFor(`http://127.0.0.1:${monitor}/healthz?js-enabled-only=true`, 200);
    const natsUrl = `nats://127.0.0.1:${nats}`;
    this.ingestUrl = `http://127.0.0.1:${ingest}`;
    this.edgeUrl = `http://127.0.0.1:${edge}`;
    this.run('ingest', [path.join(binDir(), 'folio-ingest'), '--listen', `127.0.0.1:${ingest}`, '--nats', natsUrl,
      '--data', path.join(this.dir, 'ingest'), '--token', kToken, ...ingestFlags]);
    this.run('edge', [path.join(binDir(), 'folio-edge'), '--listen', `127.0.0.1:${edge}`, '--nats', natsUrl]);
    await waitFor(this.ingestUrl + '/livez', 200);
    await waitFor(this.edgeUrl + '/livez', 200);
  }

  logs(): string {
    return ['nats', 'ingest', 'edge'].map((n) => {
      try { return `--- ${n}.log\n` + fs.readFileSync(path.join(this.dir, n + '.log'), 'utf8').slice(-3000); } catch { return ''; }
    }).join('\n');
  }

  async stop(): Promise<void> {
    for (const p of this.procs.reverse()) {
      if (p.exitCode !== null || p.signalCode !== null) continue;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await Promise.race([exited, sleep(5000)]);
      if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
