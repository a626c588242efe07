// The pure half of the plugin (src/sync.ts, src/api.ts): selection, diff,
// batches, base64, the deletion guard, error messages. No server needed.
import './webcrypto';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorForResponse, Manifest, noteSiteUrl, parseManifest } from '../src/api';
import {
  base64, deletionGuard, diff, hasPublishFlag, isAttachmentPath, isSkippedPath, LocalFile, oversized, planBatches,
  selectFiles, sha256Hex, summarize, VaultEntry, VaultSource,
} from '../src/sync';

const f = (path: string, size = 10, sha256 = 'aa'): LocalFile => ({ path, size, sha256 });
const manifest = (notes: LocalFile[] = [], extra: Partial<Manifest> = {}): Manifest => ({
  version: 1, site: 'default', siteUrl: '', limits: { maxNoteBytes: 0, maxAttachmentBytes: 0 },
  notes: notes.map((n) => ({ ...n, url: '/' + n.path.replace(/\.md$/, '').toLowerCase(), warnings: [] })), attachments: [], ...extra,
});

test('skip rules match the CLI: dot folders and dot files', () => {
  for (const p of ['.obsidian/app.json', '.trash/a.md', 'a/.git/x.md', '.hidden.md', 'a//b.md']) assert.ok(isSkippedPath(p), p);
  for (const p of ['a.md', 'Folder/b.md', 'a.b/c.md']) assert.ok(!isSkippedPath(p), p);
  assert.ok(isAttachmentPath('img/A.PNG') && isAttachmentPath('publish.css') && !isAttachmentPath('x.css') && !isAttachmentPath('a.png/b'));
});

test('publish: true in frontmatter', () => {
  assert.ok(hasPublishFlag('---\ntitle: x\npublish: true\n---\nbody'));
  assert.ok(!hasPublishFlag('---\npublish: false\n---\n'));
  assert.ok(!hasPublishFlag('publish: true\n'));
});

test('selectFiles: whole vault, folders, frontmatter with linked attachments', async () => {
  const files: Record<string, string> = {
    'a.md': '---\npublish: true\n---\n![[p.png]]', 'b.md': 'no', 'Pub/c.md': 'x', 'Pub/d.png': '', 'p.png': '', 'q.png': '',
    '.obsidian/app.json': '{}', 'notes.txt': '',
  };
  const entries: VaultEntry[] = Object.keys(files).map((path) => ({ path, size: 1, mtime: 0 }));
  const src: VaultSource = {
    list: async () => entries, read: async (p) => new TextEncoder().encode(files[p]),
    linkedAttachments: (p) => (p === 'a.md' ? ['p.png'] : []),
  };
  const paths = async (s: Parameters<typeof selectFiles>[1]) => (await selectFiles(entries, s, src)).map((e) => e.path);
  assert.deepEqual(await paths({ kind: 'vault' }), ['Pub/c.md', 'Pub/d.png', 'a.md', 'b.md', 'p.png', 'q.png']);
  assert.deepEqual(await paths({ kind: 'folders', folders: ['Pub/'] }), ['Pub/c.md', 'Pub/d.png']);
  assert.deepEqual(await paths({ kind: 'frontmatter' }), ['a.md', 'p.png']);
});

test('diff: new, changed, unchanged, deleted; summary', () => {
  const m = manifest([f('same.md'), f('edit.md', 10, 'AA'), f('gone.md')]);
  m.notes[1].sha256 = 'bb';
  const plan = diff([f('same.md'), f('edit.md'), f('new.md')], [], m);
  assert.deepEqual(plan.notes.added, ['new.md']);
  assert.deepEqual(plan.notes.changed, ['edit.md']);
  assert.equal(plan.notes.unchanged, 1);
  assert.deepEqual(plan.toDelete, ['gone.md']);
  assert.equal(summarize(plan), '1 to add, 1 to change, 1 to delete');
  assert.equal(summarize(diff([f('same.md')], [], manifest([f('same.md')]))), 'in sync');
});

test('planBatches: attachments first, within item and byte limits, a big item alone', () => {
  const notes = Array.from({ length: 7 }, (_, i) => f(`n${i}.md`, 100));
  const plan = diff(notes, [f('a.png', 300)], manifest([f('old.md')]));
  const batches = planBatches(plan, { maxItems: 3, maxBytes: 1000 });
  assert.deepEqual(batches.map((b) => [b.attachments.length, b.notes.length, b.deletes.length]), [[1, 2, 0], [0, 3, 0], [0, 2, 1]]);
  assert.equal(batches[0].bytes, 400 + 200);
  for (const b of batches) assert.ok(b.bytes <= 1000);
  const big = planBatches(diff([f('a.md', 50), f('b.md', 5000), f('c.md', 50)], [], manifest()), { maxItems: 10, maxBytes: 1000 });
  assert.deepEqual(big.map((b) => b.notes.map((n) => n.path)), [['a.md'], ['b.md'], ['c.md']]);
  assert.deepEqual(planBatches(diff([], [], manifest())), []);
});

test('base64 matches Buffer for every tail length; sha256', async () => {
  for (let n = 0; n < 40; n++) {
    const b = Uint8Array.from({ length: n * 997 % 20000 + n }, (_, i) => (i * 131 + n) & 255);
    assert.equal(base64(b), Buffer.from(b).toString('base64'));
  }
  assert.equal(await sha256Hex(new TextEncoder().encode('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('deletion guard: nothing selected, or many notes', () => {
  const held = Array.from({ length: 40 }, (_, i) => f(`n${i}.md`));
  assert.match(deletionGuard(diff([], [], manifest(held)), 0, manifest(held)) ?? '', /nothing is selected.*delete all 40/);
  const most = diff(held.slice(0, 10), [], manifest(held));
  assert.match(deletionGuard(most, 10, manifest(held)) ?? '', /delete 30 of the server's 40 notes/);
  assert.equal(deletionGuard(diff(held.slice(0, 35), [], manifest(held)), 35, manifest(held)), null);
});

test('oversized names the file and both sizes', () => {
  const m = manifest([], { limits: { maxNoteBytes: 100, maxAttachmentBytes: 1000 } });
  assert.deepEqual(oversized([f('big.md', 101), f('ok.md', 100)], [f('a.png', 1001)], m), [
    "big.md: note of 101 bytes is over the server's limit of 100 bytes; not published",
    "a.png: attachment of 1001 bytes is over the server's limit of 1000 bytes; not published"]);
});

test('manifest parsing: optional site_url and warnings; errors for non-folio answers', () => {
  const m = parseManifest(JSON.stringify({ version: 3, site: 's', limits: { max_note_bytes: 5 }, notes: [{ path: 'a.md', sha256: 'x', url: '/a', warnings: ['dangling link [[b]]'] }] }));
  assert.equal(m.siteUrl, '');
  assert.deepEqual(m.notes[0].warnings, ['dangling link [[b]]']);
  assert.deepEqual(m.attachments, []);
  assert.equal(m.limits.maxNoteBytes, 5);
  assert.throws(() => parseManifest('<html>'), /not JSON/);
  assert.throws(() => parseManifest('{}'), /lacks "version"/);
  assert.match(errorForResponse('http://h', '/api/v1/push', 401, '').message, /rejected the token/);
  assert.match(errorForResponse('http://h', '/api/v1/push', 400, '{"error":{"message":"bad\\npath"}}').message, /HTTP 400\): bad path/);
});

test('note URL on the site: site_url, else the server URL origin', () => {
  const m = manifest([f('Dir/A.md')]);
  assert.equal(noteSiteUrl(m, 'https://ingest.example.com/x', 'Dir/A.md'), 'https://ingest.example.com/dir/a');
  assert.equal(noteSiteUrl({ ...m, siteUrl: 'https://notes.example.com/' }, 'http://i', 'Dir/A.md'), 'https://notes.example.com/dir/a');
  assert.equal(noteSiteUrl(m, 'http://i', 'nope.md'), null);
});
