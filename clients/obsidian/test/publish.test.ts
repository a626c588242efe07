// The plugin's publish path (src/sync.ts + src/api.ts over Node's fetch)
// against a real nats-server, folio-ingest and folio-edge: first publish,
// edit, rename (301 at the edge), delete (410), attachment, limits and
// batches, the deletion guard, a wrong token, the server down. Skipped with
// a message when the binaries or nats-server are missing.
import './webcrypto';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiError, FolioApi, HttpFn, fetchHttp, noteSiteUrl } from '../src/api';
import { computeStatus, planChanges, publish, PublishResult, Scope, sha256Hex } from '../src/sync';
import { Cluster, freePort, kToken, missing, waitFor } from './cluster';
import { DiskVault } from './vault';

const why = missing();
if (why) console.log(`# plugin integration tests skipped: ${why}`);

const kMaxNote = 16 * 1024;     // ingest --max-note, advertised in the manifest
const kMaxPerPush = 20;         // ingest --max-notes: notes plus deletions per push
const kSiteUrl = 'https://notes.example.com';
const vaultScope: Scope = { kind: 'vault' };

describe('publishing from the plugin to a real folio', { skip: why || false }, () => {
  const cluster = new Cluster();
  const vault = new DiskVault();
  let requests = 0;
  const counting: HttpFn = (req) => { if (req.method === 'POST') requests++; return fetchHttp(req); };
  let api: FolioApi;

  const publishAll = async (scope: Scope = vaultScope): Promise<PublishResult> => {
    const st = await computeStatus(api, vault, scope);
    return publish(api, vault, st, { limits: { maxItems: kMaxPerPush, maxBytes: 8 << 20 } });
  };
  const edge = (url: string, status: number) => waitFor(cluster.edgeUrl + url, status, 15000);

  before(async () => {
    try {
      await cluster.start(['--max-note', String(kMaxNote), '--max-notes', String(kMaxPerPush), '--base-url', kSiteUrl]);
    } catch (e) {
      throw new Error((e as Error).message + '\n' + cluster.logs());
    }
    api = new FolioApi(cluster.ingestUrl + '/', kToken, counting);
  });
  after(async () => { await cluster.stop(); vault.dispose(); });

  it('first publish: notes served by the edge, dot folders left out, then in sync', async () => {
    vault.write('Hello.md', '# Hello\n\nSee [[Folder/Second]] and [[Nowhere]].\n');
    vault.write('Folder/Second.md', '# Second\n');
    vault.write('Old name.md', '# Same bytes\n');
    vault.write('Bye.md', '# Bye\n');
    vault.write('.obsidian/app.json', '{}');
    vault.write('.obsidian/plugins/x/readme.md', '# not published');
    vault.write('.trash/Thrown.md', '# thrown away');
    const st = await computeStatus(api, vault, vaultScope);
    assert.deepEqual(st.plan.notes.added, ['Bye.md', 'Folder/Second.md', 'Hello.md', 'Old name.md']);
    assert.equal(st.plan.toDelete.length, 0);
    const r = await publish(api, vault, st);
    assert.equal(r.sent, 4);
    assert.equal(r.urls.get('Hello.md'), '/hello');
    assert.ok((r.warnings.get('Hello.md') ?? []).some((w) => w.includes('Nowhere')), JSON.stringify([...r.warnings]));
    const page = await edge('/hello', 200);
    assert.match(await page.text(), /Hello/);
    await edge('/folder/second', 200);
    const after = await computeStatus(api, vault, vaultScope);
    assert.equal(planChanges(after.plan), 0);
    assert.ok(after.manifest.notes.every((n) => !n.path.startsWith('.')));
    // The note's page on the site: the manifest's site_url (ingest's --base-url).
    assert.equal(after.manifest.siteUrl, kSiteUrl);
    assert.equal(noteSiteUrl(after.manifest, cluster.ingestUrl, 'Hello.md'), kSiteUrl + '/hello');
    // The server's warnings for the note come with the manifest too.
    const hello = after.manifest.notes.find((n) => n.path === 'Hello.md');
    assert.ok((hello?.warnings ?? []).some((w) => w.includes('Nowhere')), JSON.stringify(hello));
  });

  it('edit: only the changed note is sent and the edge serves the new text', async () => {
    vault.write('Folder/Second.md', '# Second, edited\n');
    const st = await computeStatus(api, vault, vaultScope);
    assert.deepEqual(st.plan.notes.changed, ['Folder/Second.md']);
    assert.equal(st.plan.notes.toSend.length, 1);
    await publish(api, vault, st);
    const deadline = Date.now() + 10000;
    let text = '';
    while (Date.now() < deadline && !text.includes('edited')) text = await (await edge('/folder/second', 200)).text();
    assert.match(text, /Second, edited/);
  });

  it('rename: a delete plus an add in one push; the old URL answers 301', async () => {
    vault.rename('Old name.md', 'Moved/New name.md');
    const st = await computeStatus(api, vault, vaultScope);
    assert.deepEqual(st.plan.notes.added, ['Moved/New name.md']);
    assert.deepEqual(st.plan.toDelete, ['Old name.md']);
    const before = requests;
    await publish(api, vault, st);
    assert.equal(requests - before, 1);
    await edge('/moved/new-name', 200);
    const moved = await edge('/old-name', 301);
    assert.equal(moved.headers.get('location'), '/moved/new-name');
  });

  it('delete: the note is gone from the server and its URL answers 410', async () => {
    vault.remove('Bye.md');
    const st = await computeStatus(api, vault, vaultScope);
    assert.deepEqual(st.plan.toDelete, ['Bye.md']);
    assert.equal(st.guard, null);
    const r = await publish(api, vault, st);
    assert.equal(r.deleted, 1);
    await edge('/bye', 410);
    assert.ok(!(await api.manifest()).notes.some((n) => n.path === 'Bye.md'));
  });

  it('attachment: sent as base64, served byte for byte, embedded by a note', async () => {
    const png = Uint8Array.from({ length: 3001 }, (_, i) => (i * 37 + 11) & 255);
    png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    vault.write('img/Pic.png', png);
    vault.write('Gallery.md', '# Gallery\n\n![[Pic.png]]\n');
    const st = await computeStatus(api, vault, vaultScope);
    assert.deepEqual(st.plan.attachments.added, ['img/Pic.png']);
    const r = await publish(api, vault, st);
    assert.ok(!(r.warnings.get('Gallery.md') ?? []).length, JSON.stringify([...r.warnings]));
    const m = await api.manifest();
    const a = m.attachments.find((x) => x.path === 'img/Pic.png');
    assert.ok(a, 'the attachment is in the manifest');
    assert.equal(a.sha256, await sha256Hex(png));
    const served = new Uint8Array(await (await edge(a.url, 200)).arrayBuffer());
    assert.deepEqual(served, png);
    assert.ok((await (await edge('/gallery', 200)).text()).includes(a.url));
  });

  it('limits: a note over max_note_bytes is refused client-side, naming it; nothing is sent', async () => {
    const m = await api.manifest();
    assert.equal(m.limits.maxNoteBytes, kMaxNote);
    vault.write('Huge.md', '# Huge\n' + 'x'.repeat(kMaxNote));
    vault.write('Small.md', '# Small\n');
    const st = await computeStatus(api, vault, vaultScope);
    assert.equal(st.tooLarge.length, 1);
    assert.match(st.tooLarge[0], new RegExp(`^Huge\\.md: note of ${kMaxNote + 7} bytes is over the server's limit of ${kMaxNote} bytes`));
    const before = requests;
    await assert.rejects(publish(api, vault, st), /Huge\.md: note of .* over the server's limit/);
    assert.equal(requests, before);
    assert.ok(!(await api.manifest()).notes.some((n) => n.path === 'Small.md'));
    vault.remove('Huge.md');
    vault.remove('Small.md');
  });

  it('batching: 45 notes go in pushes within the server limit of 20 per push', async () => {
    for (let i = 0; i < 45; i++) vault.write(`Many/Note ${String(i).padStart(2, '0')}.md`, `# Note ${i}\n`);
    // One request with all of them is more than this server takes.
    const st = await computeStatus(api, vault, vaultScope);
    await assert.rejects(publish(api, vault, st), (e: Error) =>
      e instanceof ApiError && /too many notes in one push; the limit is 20/.test(e.message));
    const before = requests, versionBefore = (await api.manifest()).version;
    const r = await publishAll();
    // Three staged batches, then one commit: one new version for all 45.
    assert.equal(requests - before, 4);
    assert.equal(r.requests, 4);
    assert.equal(r.version, versionBefore + 1);
    await edge('/many/note-00', 200);
    await edge('/many/note-44', 200);
    assert.equal(planChanges((await computeStatus(api, vault, vaultScope)).plan), 0);
  });

  it('deletion guard: a selection with no notes deletes nothing without confirmation', async () => {
    const held = (await api.manifest()).notes.length;
    const st = await computeStatus(api, vault, { kind: 'folders', folders: ['No such folder'] });
    assert.match(st.guard ?? '', /nothing is selected to publish; this would delete all \d+ files/);
    await assert.rejects(publish(api, vault, st), /confirm to go ahead/);
    assert.equal((await api.manifest()).notes.length, held);
    // Narrowing to one folder: its notes stay, the rest would go (over the guard's threshold).
    const narrow = await computeStatus(api, vault, { kind: 'folders', folders: ['Folder'] });
    assert.match(narrow.guard ?? '', /this would delete \d+ of the server's \d+ notes/);
  });

  it('wrong token: a clear error, nothing changed', async () => {
    const wrong = new FolioApi(cluster.ingestUrl, 'not-the-token');
    await assert.rejects(computeStatus(wrong, vault, vaultScope), (e: Error) =>
      e instanceof ApiError && e.message === "the server rejected the token (check the token in folio's settings)");
    await assert.rejects(wrong.push({ notes: [{ path: 'X.md', content: 'x' }], attachments: [], delete: [] }), /rejected the token/);
    assert.ok(!(await api.manifest()).notes.some((n) => n.path === 'X.md'));
  });

  it('server down: a clear error naming the server, as a rejection', async () => {
    const port = await freePort();
    const down = new FolioApi(`http://127.0.0.1:${port}`, kToken);
    await assert.rejects(computeStatus(down, vault, vaultScope), (e: Error) =>
      e instanceof ApiError && e.message.startsWith(`cannot reach http://127.0.0.1:${port}: `) && /ECONNREFUSED/.test(e.message));
    vault.write('Late.md', '# Late\n');
    const later = await computeStatus(api, vault, vaultScope);
    await assert.rejects(publish(down, vault, later), /cannot reach/);
    // Back at the right server: only what changed meanwhile is sent.
    const r = await publishAll();
    assert.equal(r.sent, 1);
    await edge('/late', 200);
  });
});
