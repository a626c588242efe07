// The ingest API's golden fixtures (tests/fixtures/api/*.json, the contract
// of libs/ingest_api that the C++ server and CLI round-trip in
// libs/ingest_api/src/fixtures_test.cc): src/api.ts must read every reply
// fixture, and what it sends must have the request fixture's shape, so the
// plugin cannot drift from the server. No server needed.
import './webcrypto';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { errorForResponse, FolioApi, HttpRequest, parseManifest, parsePushReply, PushBody } from '../src/api';

// npm test runs in clients/obsidian.
const kFixtures = join(process.cwd(), '..', '..', 'tests', 'fixtures', 'api');
const text = (name: string): string => readFileSync(join(kFixtures, name), 'utf8').trimEnd();
const fixture = (name: string): any => JSON.parse(text(name));

// An HttpFn answering every request with `body`, keeping what was sent.
function fake(body: string, status = 200) {
  const sent: HttpRequest[] = [];
  const api = new FolioApi('http://folio.test', 'token', async (req) => { sent.push(req); return { status, text: body }; });
  return { api, sent };
}

// The same keys with values of the same JSON type, recursively (arrays: each
// item against the fixture's first item); `sent` may leave out what the
// fixture has (the plugin sends no settings), never add to it.
function sameShape(sent: any, want: any, where = 'body'): void {
  if (Array.isArray(want)) {
    assert.ok(Array.isArray(sent), `${where} must be an array`);
    for (const [i, item] of sent.entries()) sameShape(item, want[0], `${where}[${i}]`);
    return;
  }
  if (want !== null && typeof want === 'object') {
    assert.ok(sent !== null && typeof sent === 'object' && !Array.isArray(sent), `${where} must be an object`);
    for (const key of Object.keys(sent)) {
      assert.ok(key in want, `${where}.${key} is not in the request fixture`);
      sameShape(sent[key], want[key], `${where}.${key}`);
    }
    return;
  }
  assert.equal(typeof sent, typeof want, `${where} has the wrong type`);
}

test('fixtures: the full manifest and a delta parse with every field', () => {
  const want = fixture('manifest.json');
  const m = parseManifest(text('manifest.json'));
  assert.equal(m.version, want.version);
  assert.equal(m.site, want.site);
  assert.equal(m.siteUrl, want.site_url);
  assert.deepEqual(m.limits, { maxNoteBytes: want.limits.max_note_bytes, maxAttachmentBytes: want.limits.max_attachment_bytes });
  assert.deepEqual(m.notes.map((n) => [n.path, n.sha256, n.url, n.warnings]),
    want.notes.map((n: any) => [n.path, n.sha256, n.url, n.warnings ?? []]));
  assert.deepEqual(m.attachments.map((a) => [a.path, a.sha256, a.url]), want.attachments.map((a: any) => [a.path, a.sha256, a.url]));
  const delta = parseManifest(text('manifest_delta.json'));
  assert.equal(delta.notes.length, fixture('manifest_delta.json').notes.length);
  // A too-old delta has no notes: the plugin never asks for deltas, and says so if one came.
  assert.throws(() => parseManifest(text('manifest_too_old.json')), /lacks "version" or "notes"/);
});

test('fixtures: push replies parse, replayed or not', () => {
  for (const name of ['push_reply.json', 'push_reply_replayed.json']) {
    const want = fixture(name);
    const r = parsePushReply(text(name));
    assert.equal(r.version, want.version, name);
    assert.deepEqual(r.notes, want.notes.map((n: any) => ({ path: n.path, url: n.url, warnings: n.warnings })), name);
  }
});

test('fixtures: a staged batch reply is staged; a push reply to a batch is applied', async () => {
  const staged = fake(text('stage_reply.json'));
  const body: PushBody = { notes: [], attachments: [], delete: [] };
  assert.equal(await staged.api.stageBatch('ab12', 2, body), null);
  const applied = fake(text('push_reply.json'));
  assert.equal((await applied.api.stageBatch('ab12', 0, body))?.version, fixture('push_reply.json').version);
});

test('fixtures: the error body becomes the user-facing message', () => {
  const want = fixture('error.json');
  const e = errorForResponse('http://folio.test', '/api/v1/push', 413, text('error.json'));
  assert.equal(e.status, 413);
  assert.ok(e.message.includes(want.error.message), e.message);
});

test('fixtures: what the plugin sends has the request fixture shape', async () => {
  const want = fixture('push_request.json');
  const { api, sent } = fake(text('push_reply.json'));
  const body: PushBody = {
    notes: want.notes.map((n: any) => ({ path: n.path, content: n.content })),
    attachments: want.attachments.map((a: any) => ({ path: a.path, data: a.data })),
    delete: want.delete,
  };
  await api.push(body);
  await api.stageBatch('ab12', 0, body);
  for (const req of sent) {
    assert.equal(req.method, 'POST');
    assert.match(req.headers['Content-Type'] ?? '', /^application\/json/);
    const got = JSON.parse(req.body ?? '');
    sameShape(got, want);
    assert.deepEqual(got.notes, want.notes);
    assert.deepEqual(got.attachments, want.attachments);
    assert.deepEqual(got.delete, want.delete);
  }
  assert.match(sent[0].url, /\/api\/v1\/push$/);
  assert.match(sent[0].headers['Idempotency-Key'], /^[0-9a-f]{32}$/);
  assert.match(sent[1].url, /\/api\/v1\/push\?stage=ab12&batch=0$/);
});
