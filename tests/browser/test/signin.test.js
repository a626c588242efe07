// Signing in to a private site (issue 29) in Chromium, on the real system
// (nats-server, folio-ingest, folio-edge; examples/vault pushed). The site
// is made private by writing its site record into the "pages" KV bucket, as
// ingest does (a site password whose Argon2id hash is below): a note's URL
// answers the sign-in page; a wrong password shows the error and no session;
// the right one shows the note; signing out brings the sign-in page back.
'use strict';
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { launch, newPage } = require('../lib/browser');
const { startCluster } = require('../lib/cluster');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// crypto_pwhash_str("open sesame") at libsodium's interactive limits.
const kHash = '$argon2id$v=19$m=65536,t=2,p=1$RHlAL974Aq1szPoxTCcMFg$4dnz/Az4OKQHBc9kZG4R3qni8+y5Tr4iUi9S0CZbX9c';

// Publishes one KV value with the NATS text protocol (JetStream stores a
// plain publish to $KV.<bucket>.<key>); resolves once the server answered PING.
function kvPut(natsUrl, bucket, key, value) {
  const { hostname, port } = new URL(natsUrl.replace('nats://', 'http://'));
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), hostname);
    const payload = Buffer.from(value);
    let seen = '';
    s.on('data', (d) => {
      seen += d.toString();
      if (seen.includes('PONG')) { s.end(); resolve(); }
      if (seen.includes('-ERR')) { s.destroy(); reject(new Error(seen)); }
    });
    s.on('error', reject);
    s.write('CONNECT {"verbose":false,"pedantic":false}\r\n');
    s.write(`PUB $KV.${bucket}.${key} ${payload.length}\r\n`);
    s.write(payload);
    s.write('\r\nPING\r\n');
  });
}

async function waitStatus(url, status, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  let last = 0;
  while (Date.now() < deadline) {
    last = (await fetch(url)).status;
    if (last === status) return;
    await sleep(100);
  }
  throw new Error(`${url} answered ${last}, not ${status}`);
}

describe('private site sign-in', () => {
  let cluster, browser;
  before(async () => {
    cluster = await startCluster();
    if (cluster) browser = await launch();
  });
  after(async () => {
    if (browser) await browser.close();
    if (cluster) await cluster.stop();
  });

  it('shows the sign-in page, refuses a wrong password, signs in and out', async (t) => {
    if (!cluster) return t.skip('folio binaries missing or the edge serves no site script');
    const note = cluster.pages.note;
    const open = await (await fetch(cluster.base + note)).text();
    const title = open.match(/<h1[^>]*>([\s\S]*?)<\/h1>/)[1].replace(/<[^>]+>/g, '').trim();
    assert.ok(title.length > 0);
    await kvPut(cluster.natsUrl, 'pages', '_site.default', JSON.stringify({
      schema: 2, site: 'default', hosts: [], title: 'Example Vault',
      access: { private: true, session_key: 'ab'.repeat(32), session_ttl_s: 3600, readers: [{ name: '', hash: kHash, owner: false }] },
    }));
    await waitStatus(cluster.base + note, 401);

    const page = await newPage(browser);
    const first = await page.goto(cluster.base + note);
    assert.equal(first.status(), 401);
    assert.equal(first.headers()['cache-control'], 'no-store');
    assert.ok(!(await page.content()).includes(title), 'the sign-in page shows nothing of the note');
    assert.ok(await page.$('input[type=password]'));

    await page.type('input[type=password]', 'not the password');
    const [wrong] = await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    assert.equal(wrong.status(), 401);
    assert.match(await page.$eval('.signin-error', (e) => e.textContent), /Wrong name or password/);
    assert.equal((await page.cookies()).filter((c) => c.name === 'folio_session').length, 0);

    await page.type('input[type=password]', 'open sesame');
    const [right] = await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    assert.equal(right.status(), 200);
    assert.equal(new URL(page.url()).pathname, note);
    assert.ok((await page.content()).includes(title), 'the note, once signed in');
    const cookie = (await page.cookies()).find((c) => c.name === 'folio_session');
    assert.ok(cookie && cookie.httpOnly && cookie.sameSite === 'Lax');
    // Other pages of the site now open too.
    assert.equal((await page.goto(cluster.base + '/')).status(), 200);

    // The 303 to "/" is followed without the cookie: the sign-in page there.
    const out = await page.evaluate(async () => {
      const r = await fetch('/_/signout', { method: 'POST' });
      return { status: r.status, path: new URL(r.url).pathname, redirected: r.redirected };
    });
    assert.deepEqual(out, { status: 401, path: '/', redirected: true });
    assert.equal((await page.cookies()).filter((c) => c.name === 'folio_session').length, 0);
    const again = await page.goto(cluster.base + note);
    assert.equal(again.status(), 401);
    assert.ok(await page.$('input[type=password]'));
    assert.ok(!(await page.content()).includes(title));
    await page.closeAll();
  });
});
