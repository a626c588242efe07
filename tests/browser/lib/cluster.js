// The real system for the browser tests, started as the C++ integration
// tests start it (tests/integration/cluster.cc): nats-server -js, folio-ingest
// and folio-edge (and, when asked, folio-search) on free loopback ports, data
// in a temp directory, a vault pushed with the folio CLI. Binaries from FOLIO_BIN_DIR. stop() kills every
// process it started (also when a start step failed).
'use strict';
const { spawn, execFile } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const kToken = 'browser-test-token';

// Every process a Cluster started, so that an exit of this process by any
// path short of SIGKILL (a failed assertion, a timeout's SIGTERM, Ctrl-C)
// takes them along.
const live = new Set(), dirs = new Set();
process.on('exit', () => {
  for (const p of live) { try { p.kill('SIGKILL'); } catch (e) { /* gone */ } }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => process.exit(128 + (sig === 'SIGINT' ? 2 : 15)));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls url until it answers `status` (and its body contains needle).
async function waitFor(url, status, timeoutMs, needle = '') {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      const body = await r.text();
      if (r.status === status && body.includes(needle)) return body;
      last = `HTTP ${r.status}`;
    } catch (e) { last = e.message; }
    await sleep(100);
  }
  throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms (last: ${last})`);
}

class Cluster {
  constructor(binDir, { search = false } = {}) {
    this.binDir = binDir;
    this.withSearch = search;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-browser-'));
    dirs.add(this.dir);
    this.procs = [];
  }

  run(name, argv) {
    const log = fs.openSync(path.join(this.dir, name + '.log'), 'a');
    const p = spawn(argv[0], argv.slice(1), { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    this.procs.push(p);
    live.add(p);
    p.once('exit', () => live.delete(p));
    return p;
  }

  bin(name) { return path.join(this.binDir, name); }

  async start() {
    const [nats, monitor, ingest, edge, search] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    this.run('nats', ['nats-server', '-js', '-a', '127.0.0.1', '-p', String(nats), '-m', String(monitor),
      '-sd', path.join(this.dir, 'nats')]);
    await waitFor(`http://127.0.0.1:${monitor}/healthz?js-enabled-only=true`, 200, 15000);
    const natsUrl = `nats://127.0.0.1:${nats}`;
    this.natsUrl = natsUrl;
    this.ingestUrl = `http://127.0.0.1:${ingest}`;
    this.base = `http://127.0.0.1:${edge}`;
    this.run('ingest', [this.bin('folio-ingest'), '--listen', `127.0.0.1:${ingest}`, '--nats', natsUrl,
      '--data', path.join(this.dir, 'ingest'), '--token', kToken, '--site-name', 'Example Vault']);
    this.run('edge', [this.bin('folio-edge'), '--listen', `127.0.0.1:${edge}`, '--nats', natsUrl]);
    if (this.withSearch) {
      this.run('search', [this.bin('folio-search'), '--listen', `127.0.0.1:${search}`, '--nats', natsUrl,
        '--data', path.join(this.dir, 'search')]);
      await waitFor(`http://127.0.0.1:${search}/livez`, 200, 15000);
    }
    await waitFor(this.ingestUrl + '/livez', 200, 15000);
    await waitFor(this.base + '/livez', 200, 15000);
  }

  push(vault) {
    return new Promise((resolve, reject) => {
      execFile(this.bin('folio'), ['push', vault, '--server', this.ingestUrl, '--token', kToken],
        { timeout: 60000 }, (err, stdout, stderr) => {
          if (err) reject(new Error(`folio push failed: ${err.message}\n${stdout}${stderr}`));
          else resolve(stdout);
        });
    });
  }

  logs() {
    return ['nats', 'ingest', 'edge', 'search'].map((n) => {
      try { return `--- ${n}.log\n` + fs.readFileSync(path.join(this.dir, n + '.log'), 'utf8').slice(-4000); } catch (e) { return ''; }
    }).join('\n');
  }

  async stop() {
    for (const p of this.procs.reverse()) {
      if (p.exitCode !== null || p.signalCode !== null) continue;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await Promise.race([exited, sleep(5000)]);
      if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
    dirs.delete(this.dir);
  }
}

// Pages of the pushed vault the tests need, found through the tree JSON:
// a note in a folder with internal links in its article, a note with a
// highlighted code block.
async function discoverPages(base) {
  const tree = async (u) => (await fetch(base + u)).json();
  const notes = [];
  const queue = ['/_/tree/'];
  while (queue.length && notes.length < 200) {
    const t = await tree(queue.shift());
    for (const f of t.folders || []) queue.push(f.tree);
    for (const n of t.notes || []) notes.push({ url: n.url, folder: t.url });
  }
  const pages = { graph: '/_/graph' };
  const unicode = notes.find((n) => /[^\x00-\x7f]/.test(decodeURIComponent(n.url)));
  if (unicode) pages.unicode = decodeURIComponent(unicode.url);
  for (const n of notes) {
    if (pages.note && pages.code) break;
    const html = await (await fetch(base + n.url)).text();
    const article = html.slice(html.indexOf('<article'), html.indexOf('</article>'));
    if (!pages.note && n.folder !== '/' && /<a href="\/(?!_\/|assets\/)[^"]+"/.test(article) && html.includes('local-graph')) pages.note = n.url;
    if (!pages.code && /<pre[^>]*>[\s\S]*class="hl-/.test(article)) pages.code = n.url;
  }
  if (!pages.note || !pages.code) throw new Error('the pushed vault has no note with links in a folder, or none with highlighted code');
  return pages;
}

// Until the search service has indexed the vault: a word of the example
// vault's overview note finds it through the edge.
async function waitForSearch(base, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(base + '/_/search?format=json&k=8&q=architecture', { signal: AbortSignal.timeout(3000) });
      const j = r.status === 200 ? await r.json() : null;
      if (j && j.hits.length > 0) return;
      last = `HTTP ${r.status}` + (j ? ` (${j.hits.length} hits)` : '');
    } catch (e) { last = e.message; }
    await sleep(200);
  }
  throw new Error(`search did not answer for the pushed vault within ${timeoutMs} ms (last: ${last})`);
}

// Starts the system with examples/vault, or resolves null when the binaries
// are missing or the edge's pages lack the explorer markup (the C++ side of
// the script is not there yet). { search: true } adds folio-search (then
// required) and waits until it answers for the pushed vault.
// { vault: dir } pushes that vault instead.
async function startCluster({ search = false, vault = null } = {}) {
  const binDir = process.env.FOLIO_BIN_DIR;
  const source = process.env.FOLIO_SOURCE_DIR || path.resolve(__dirname, '../../..');
  const bins = ['folio-ingest', 'folio-edge', 'folio'].concat(search ? ['folio-search'] : []);
  if (!binDir || !bins.every((b) => fs.existsSync(path.join(binDir, b)))) return null;
  const c = new Cluster(binDir, { search });
  try {
    await c.start();
    await c.push(vault || path.join(source, 'examples/vault'));
    const home = await waitFor(c.base + '/', 200, 20000);
    if (!/<script src="\/[^"]*folio\.[0-9a-f]+\.js"/.test(home) || !(await fetch(c.base + '/_/tree/')).ok) {
      await c.stop();
      return null;
    }
    c.pages = await discoverPages(c.base);
    if (search) await waitForSearch(c.base, 30000);
    return c;
  } catch (e) {
    const logs = c.logs();
    await c.stop();
    throw new Error(e.message + '\n' + logs);
  }
}

module.exports = { startCluster };
