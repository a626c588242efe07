// Navigation without reloads (folio.js, issue 28) on the real system with
// examples/vault: internal links swap the page's [data-folio-swap] parts and
// keep the explorer (open folders, scroll); history works; what cannot be
// swapped is a normal load; no CSP violation.
'use strict';
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { launch, newPage, pageProblems } = require('../lib/browser');
const { startCluster } = require('../lib/cluster');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Internal note links of a page's swapped part, as pathnames.
function pageLinks(html) {
  const start = html.indexOf('data-folio-swap="main"');
  if (start < 0) return [];
  const part = html.slice(start, html.indexOf('</footer>'));
  const out = [];
  for (const m of part.matchAll(/<a href="(\/[^"#?]*)"/g)) {
    if (!/^\/(_\/|assets\/)|\.xml$/.test(m[1])) out.push(m[1]);
  }
  return out;
}

function titleTag(html) {
  return html.match(/<title>([\s\S]*?)<\/title>/)[1].replace(/&amp;/g, '&').replace(/&#39;/g, "'").replace(/&quot;/g, '"');
}

// A note → note → folder → note chain through links on the pages: the start
// note, a note it links to that sits in a folder, that folder's page (its
// breadcrumb), and another note listed there.
async function findChain(base, starts) {
  // Pages with a diagram load mermaid, which the start note does not: they
  // are full loads by design, so the chain avoids them.
  const get = async (u) => {
    const r = await fetch(base + u);
    const t = r.status === 200 ? await r.text() : '';
    return t.includes('class="mermaid"') ? '' : t;
  };
  for (const start of starts) {
  const a = await get(start);
  if (!a) continue;
  for (const b of pageLinks(a)) {
    if (b === start) continue;
    const bHtml = await get(b);
    const crumbs = bHtml.match(/<nav class="breadcrumbs"[\s\S]*?<\/nav>/);
    const folders = crumbs ? [...crumbs[0].matchAll(/<a href="(\/[^"]*\/)"/g)].map((m) => m[1]) : [];
    for (const f of folders.reverse()) {
      const fHtml = await get(f);
      for (const d of pageLinks(fHtml).filter((u) => u !== b && u !== start && !u.endsWith('/'))) {
        if (await get(d)) return [start, b, f, d].map((u) => ({ href: u, url: decodeURI(u), title: '' }));
      }
    }
  }
  }
  return null;
}

async function state(page) {
  return page.evaluate(() => {
    const main = document.querySelector('[data-folio-swap="main"]');
    const box = document.querySelector('nav.explorer');
    const cur = document.querySelector('nav.explorer a[aria-current="page"]');
    return {
      path: decodeURI(location.pathname),
      title: document.title,
      h1: main && main.querySelector('h1') ? main.querySelector('h1').textContent.trim() : '',
      marker: window.__folioMarker === 42,
      open: [...document.querySelectorAll('nav.explorer details[data-tree][open]')].map((d) => d.dataset.tree),
      scroll: box ? box.scrollTop : -1,
      current: cur ? decodeURI(new URL(cur.href).pathname) : null,
      // Publish's class for the current item moves with aria-current.
      activeIsCurrent: [...document.querySelectorAll('nav.explorer .mod-active')].every((a) => a === cur),
      // Publish's page modifiers are the shown page's.
      hasOutline: !!document.querySelector('.published-container.has-outline'),
      outline: !!document.querySelector('[data-folio-swap="aside"] .outline'),
      focused: document.activeElement && document.activeElement.tagName,
    };
  });
}

describe('navigation without reloads (real system, examples/vault)', () => {
  let cluster, browser;
  before(async () => {
    cluster = await startCluster();
    if (cluster) browser = await launch();
  });
  after(async () => {
    if (browser) await browser.close();
    if (cluster) await cluster.stop();
  });

  it('three links and back and forward swap the page, keep the explorer and never reload', async () => {
    assert.ok(cluster, 'the real system did not start (FOLIO_BIN_DIR with folio-ingest, folio-edge, folio)');
    const home = await (await fetch(cluster.base + '/')).text();
    const chain = await findChain(cluster.base, [cluster.pages.note, ...pageLinks(home).filter((u) => !u.endsWith('/'))]);
    assert.ok(chain, 'examples/vault has no note → note → folder → note chain without a diagram');
    for (const step of chain) step.title = titleTag(await (await fetch(cluster.base + step.href)).text());
    const page = await newPage(browser, { width: 1280, height: 520 });
    const requested = [];
    page.on('request', (r) => requested.push(decodeURI(new URL(r.url()).pathname)));
    try {
      await page.goto(cluster.base + chain[0].href, { waitUntil: 'load' });
      // Open every top-level folder, so the explorer holds every note and scrolls.
      await page.$$eval('nav.explorer details[data-tree]', (ds) => ds.forEach((d) => { d.open = true; }));
      await page.waitForFunction(() => !document.querySelector('nav.explorer [aria-busy]'), { polling: 100 });
      await sleep(200);
      await page.$$eval('nav.explorer details[data-tree]', (ds) => ds.forEach((d) => { d.open = true; }));
      await page.waitForFunction(() => !document.querySelector('nav.explorer [aria-busy]'), { polling: 100 });
      await page.evaluate(() => {
        window.__folioMarker = 42;
        const box = document.querySelector('nav.explorer');
        box.scrollTop = Math.min(40, box.scrollHeight - box.clientHeight);
      });
      const first = await state(page);
      assert.ok(first.scroll > 0, 'the explorer does not scroll at this height; the test cannot check its scroll');

      let before = first;
      for (let i = 1; i < chain.length; i++) {
        const target = chain[i];
        const sel = `[data-folio-swap="main"] a[href="${target.href}"]`;
        const link = await page.$(sel);
        assert.ok(link, `no link to ${target.url} on ${before.path}`);
        // Intent prefetches: hovering fetches the page once; the click reuses it.
        await link.hover();
        await sleep(250);
        const fetched = requested.filter((p) => p === target.url).length;
        assert.ok(fetched >= 1, `hovering the link to ${target.url} did not prefetch it`);
        // Enter on the focused link: a real click that a preview shown by
        // the hover cannot intercept.
        await link.focus();
        await page.keyboard.press('Enter');
        await page.waitForFunction((p) => decodeURI(location.pathname) === p && document.title !== '', { polling: 100 }, target.url);
        await page.waitForFunction((t) => document.title === t, { polling: 100 }, target.title);
        const now = await state(page);
        assert.equal(requested.filter((p) => p === target.url).length, fetched, 'the click fetched the page again');
        assert.equal(now.marker, true, `a full page load happened going to ${target.url}`);
        assert.notEqual(now.h1, before.h1, 'the article did not change');
        assert.equal(now.title, target.title);
        for (const t of before.open) assert.ok(now.open.includes(t), `the explorer closed ${t}`);
        assert.equal(now.scroll, first.scroll, "the explorer's scroll moved");
        if (now.current !== null || before.current !== null) assert.equal(now.current, target.url, "the explorer's current item");
        assert.ok(now.activeIsCurrent, 'a .mod-active explorer item that is not the current one');
        assert.equal(now.hasOutline, now.outline, '.published-container.has-outline says whether the page has an outline');
        assert.equal(now.focused, 'H1', 'focus moves to the new heading');
        before = now;
      }
      // Back twice, forward once: content and title each time, no reload.
      for (const [move, want] of [['back', chain[2]], ['back', chain[1]], ['forward', chain[2]]]) {
        await page.evaluate((m) => history[m](), move);
        await page.waitForFunction((t, p) => document.title === t && decodeURI(location.pathname) === p, { polling: 100 }, want.title, want.url);
        const now = await state(page);
        assert.equal(now.marker, true, `history.${move}() reloaded the page`);
        assert.notEqual(now.h1, '', 'no heading after ' + move);
        assert.equal(now.h1 === before.h1, false, `history.${move}() left the article as it was`);
        before = now;
      }
      assert.deepEqual(await pageProblems(page), [], 'console errors, failed requests or CSP violations');

      // What is not a page is a normal load: the footer's RSS link.
      await Promise.all([page.waitForNavigation(), page.click('footer a[href="/rss.xml"]')]);
      assert.equal(new URL(page.url()).pathname, '/rss.xml');
      assert.equal(await page.evaluate(() => window.__folioMarker === 42), false);
    } finally {
      await page.closeAll();
    }
  });

  it('a page whose parts differ is a full load, and a #fragment on the same page only scrolls', async () => {
    assert.ok(cluster);
    const page = await newPage(browser, { width: 1280, height: 700 });
    try {
      await page.goto(cluster.base + cluster.pages.note, { waitUntil: 'load' });
      await page.evaluate(() => {
        window.__folioMarker = 42;
        const a = document.createElement('a');
        a.href = '#folio-nav-target';
        a.id = 'to-fragment';
        a.textContent = 'down';
        const target = document.createElement('p');
        target.id = 'folio-nav-target';
        target.textContent = 'target';
        const main = document.querySelector('[data-folio-swap="main"]');
        main.prepend(a);
        main.appendChild(target);
      });
      const requests = [];
      page.on('request', (r) => requests.push(r.url()));
      await page.click('#to-fragment');
      await page.waitForFunction(() => location.hash === '#folio-nav-target', { polling: 100 });
      assert.equal(await page.evaluate(() => window.__folioMarker === 42), true);
      assert.deepEqual(requests.filter((u) => !/\/_\/(tree|graph)/.test(u)), [], 'a #fragment link fetched something');
      // The search page has no swapped part: a normal load.
      await page.evaluate(() => {
        const a = document.createElement('a');
        a.href = '/_/search?q=edge';
        a.id = 'to-search';
        a.textContent = 'search';
        document.querySelector('[data-folio-swap="main"]').appendChild(a);
      });
      await page.click('#to-search');
      for (let i = 0; i < 100 && new URL(page.url()).pathname !== '/_/search'; i++) await sleep(100);
      assert.equal(new URL(page.url()).pathname, '/_/search');
      await page.waitForFunction(() => document.readyState === 'complete', { polling: 100 });
      assert.equal(await page.evaluate(() => window.__folioMarker === 42), false);
    } finally {
      await page.closeAll();
    }
  });
});
