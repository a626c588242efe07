// folio.js in headless Chromium against the static harness (always) and the
// real system (nats-server + folio-ingest + folio-edge with examples/vault,
// when FOLIO_BIN_DIR has the binaries and the edge serves the script).
'use strict';
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { launch, newPage, pageProblems, inkedPixels, shot } = require('../lib/browser');
const { startHarness } = require('../lib/harness');
const { startCluster } = require('../lib/cluster');

const kDesktop = { width: 1280, height: 800 };
const kPhone = { width: 390, height: 844, mobile: true };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function assertClean(page) {
  assert.deepEqual(await pageProblems(page), [], 'console errors, failed requests or CSP violations');
}

// The first internal link in the article that a preview is shown for.
const kPreviewLink = 'article a[href^="/"]:not([href^="/_/"]):not([href^="/assets/"]):not([href="/rss.xml"])';

async function titleOf(base, href) {
  const html = await (await fetch(new URL(href, base))).text();
  const m = html.match(/<article[^>]*>[\s\S]*?<h1[^>]*>([\s\S]*?)<\/h1>/);
  return m[1].replace(/<[^>]+>/g, '').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"').replace(/&#39;/g, "'").trim();
}

// `fixtures`: what the suite's site holds for the cases that need a
// particular vault (a folder past the tree cap, a link answering 404); a case
// whose fixture the site lacks is not registered for it, never skipped.
function siteSuite(name, start, { screenshots, fixtures = {} }) {
  const when = (fixture) => (fixtures[fixture] ? it : () => {});
  describe(name, () => {
    let site, browser;
    before(async () => {
      site = await start();
      if (site) browser = await launch();
    });
    after(async () => {
      if (browser) await browser.close();
      if (site) await site.close();
    });
    const skip = (t) => { if (!site) { t.skip('the edge does not serve the site script yet'); return true; } return false; };
    const url = (p) => site.base + p;

    it('theme follows the system, the toggle overrides it and persists across reload', async (t) => {
      if (skip(t)) return;
      for (const scheme of ['light', 'dark']) {
        const page = await newPage(browser, { ...kDesktop, scheme });
        try {
          await page.goto(url(site.pages.note), { waitUntil: 'load' });
          await page.waitForSelector('.theme-toggle');
          assert.equal(await page.$eval('html', (h) => h.dataset.theme ?? null), null);
          assert.ok(await page.$eval('body', (b, s) => b.classList.contains(`theme-${s}`), scheme), `body.theme-${scheme} from the system`);
          const other = scheme === 'dark' ? 'light' : 'dark';
          assert.equal(await page.$eval('.theme-toggle', (b) => b.getAttribute('aria-pressed')), String(scheme === 'dark'));
          const bgBefore = await page.$eval('body', (b) => getComputedStyle(b).backgroundColor);
          await page.click('.theme-toggle');
          assert.equal(await page.$eval('html', (h) => h.dataset.theme), other);
          assert.equal(await page.evaluate(() => localStorage.getItem('folio-theme')), other);
          assert.equal(await page.$eval('.theme-toggle', (b) => b.getAttribute('aria-pressed')), String(other === 'dark'));
          // Obsidian's classes on body follow, and with them the stylesheet's colours.
          assert.equal(await page.$eval('body', (b) => b.className.match(/theme-(light|dark)/g).join(' ')), `theme-${other}`);
          assert.notEqual(await page.$eval('body', (b) => getComputedStyle(b).backgroundColor), bgBefore, 'colours follow the theme class');
          await page.reload({ waitUntil: 'load' });
          assert.equal(await page.$eval('html', (h) => h.dataset.theme), other);
          assert.ok(await page.$eval('body', (b, o) => b.classList.contains(`theme-${o}`), other), 'the saved theme after a reload');
          await page.waitForSelector('.theme-toggle');
          assert.equal(await page.$eval('.theme-toggle', (b) => b.getAttribute('aria-pressed')), String(other === 'dark'));
          await assertClean(page);
        } finally { await page.closeAll(); }
      }
    });

    it('explorer marks the current note, opens its folders, loads a closed folder when opened and remembers it', async (t) => {
      if (skip(t)) return;
      const page = await newPage(browser, kDesktop);
      const asked = [];
      page.on('request', (r) => asked.push(new URL(r.url()).pathname));
      try {
        await page.goto(url(site.pages.note), { waitUntil: 'load' });
        // The root level is filled: more than the server-rendered chain.
        await page.waitForFunction(() => document.querySelectorAll('nav.explorer ul.tree[data-tree] > li').length > 1);
        const cur = await page.$eval('nav.explorer a[aria-current=page]', (a) => {
          const nav = a.closest('.explorer-box').getBoundingClientRect(), r = a.getBoundingClientRect();
          const closedAncestor = [...document.querySelectorAll('nav.explorer details')].some((d) => !d.open && d.contains(a));
          return { href: a.getAttribute('href'), visible: r.top >= nav.top && r.bottom <= nav.bottom, closedAncestor };
        });
        assert.equal(new URL(cur.href, site.base).pathname, site.pages.note);
        assert.ok(cur.visible, 'the current note is scrolled into view in the explorer');
        assert.ok(!cur.closedAncestor, 'every folder around the current note is open');
        const tree = await page.$eval('nav.explorer details[data-tree]:not([open])', (d) => d.dataset.tree);
        assert.ok(!asked.includes(tree), 'a closed folder is not fetched before it is opened');
        const summary = await page.$(`nav.explorer details[data-tree="${tree}"] > summary`);
        const box = await summary.boundingBox();
        await page.mouse.click(box.x + 4, box.y + box.height / 2);  // the disclosure marker, not the link
        await page.waitForFunction((tr) => document.querySelector(`details[data-tree="${tr}"] > ul.tree > li a[href]`), {}, tree);
        assert.ok(asked.includes(tree), `${tree} was fetched when the folder opened`);
        assert.equal(new URL(page.url()).pathname, site.pages.note, 'opening a folder does not navigate');
        await page.reload({ waitUntil: 'load' });
        await page.waitForFunction((tr) => {
          const d = document.querySelector(`details[data-tree="${tr}"]`);
          return d && d.open && d.querySelector('ul.tree > li a[href]');
        }, {}, tree);
        await assertClean(page);
      } finally { await page.closeAll(); }
    });

    when('deep')('a long folder: the current note far down is scrolled into view; the capped rest is a "more" link', async (t) => {
      if (skip(t)) return;
      assert.ok(site.pages.deep, 'the static harness has a folder past the tree cap');
      const page = await newPage(browser, kDesktop);
      try {
        await page.goto(url(site.pages.deep), { waitUntil: 'load' });
        await page.waitForSelector('nav.explorer a[aria-current=page]');
        await page.waitForSelector('nav.explorer .tree-more a');
        // Wait for the last level to render, then find the box that scrolls.
        await sleep(500);
        const r = await page.$eval('nav.explorer a[aria-current=page]', (a) => {
          let box = a.parentElement;
          while (box && !(box.scrollHeight > box.clientHeight + 1 && /auto|scroll/.test(getComputedStyle(box).overflowY))) box = box.parentElement;
          if (!box || !box.closest('nav.explorer')) return { scrolled: 0, inside: false, pageScroll: window.scrollY };
          const br = box.getBoundingClientRect(), ar = a.getBoundingClientRect();
          return { scrolled: box.scrollTop, inside: ar.top >= br.top && ar.bottom <= br.bottom, pageScroll: window.scrollY };
        });
        assert.ok(r.scrolled > 0 && r.inside, `the explorer scrolled to the current note (${JSON.stringify(r)})`);
        assert.equal(r.pageScroll, 0, 'the page itself did not scroll');
        assert.equal(await page.$eval('nav.explorer .tree-more a', (a) => a.textContent), `${site.pages.deepMore} more…`);
        await assertClean(page);
      } finally { await page.closeAll(); }
    });

    it('on a phone the explorer starts closed and opens as a panel from the header', async (t) => {
      if (skip(t)) return;
      for (const scheme of ['light', 'dark']) {
        const page = await newPage(browser, { ...kPhone, scheme });
        try {
          await page.goto(url(site.pages.note), { waitUntil: 'load' });
          await page.waitForSelector('.theme-toggle');
          assert.equal(await page.$eval('nav.explorer', (n) => getComputedStyle(n).display), 'none');
          if (screenshots) await shot(page, `note-phone-${scheme}`);
          await page.tap('.site-explorer-toggle');
          assert.equal(await page.$eval('.site-explorer-toggle', (b) => b.getAttribute('aria-expanded')), 'true');
          await page.waitForFunction(() => document.querySelectorAll('nav.explorer ul.tree[data-tree] > li').length > 1);
          const r = await page.$eval('nav.explorer', (u) => {
            const b = u.getBoundingClientRect();
            const top = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
            return { w: b.width, left: b.left, right: b.right, onTop: u.contains(top), position: getComputedStyle(u).position };
          });
          assert.ok(r.w >= 300 && r.left >= 0 && r.right <= 390, `the panel fits the phone (${JSON.stringify(r)})`);
          assert.ok(r.onTop && r.position === 'fixed', `the panel lies over the page (${JSON.stringify(r)})`);
          if (screenshots) await shot(page, `explorer-phone-${scheme}`);
          await page.keyboard.press('Escape');
          assert.equal(await page.$eval('nav.explorer', (n) => getComputedStyle(n).display), 'none', 'Escape closes it');
          await assertClean(page);
        } finally { await page.closeAll(); }
      }
    });

    it('hovering an internal link shows a preview with the target title; Escape closes it', async (t) => {
      if (skip(t)) return;
      for (const scheme of ['light', 'dark']) {
        const page = await newPage(browser, { ...kDesktop, scheme });
        try {
          await page.goto(url(site.pages.note), { waitUntil: 'load' });
          const href = await page.$eval(kPreviewLink, (a) => a.getAttribute('href'));
          await page.hover(kPreviewLink);
          await page.waitForSelector('.popover[role=tooltip] .popover-body > *');
          assert.equal(await page.$eval('.popover-title', (e) => e.textContent), await titleOf(site.base, href));
          const box = await page.$eval('.popover', (p) => { const r = p.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; });
          assert.ok(box[0] >= 0 && box[1] >= 0 && box[2] <= 1280 && box[3] <= 800, `inside the viewport: ${box}`);
          assert.equal(await page.$$eval('.popover script, .popover [style]', (l) => l.length), 0);
          if (screenshots) await shot(page, `preview-desktop-${scheme}`);
          await page.keyboard.press('Escape');
          assert.equal(await page.$('.popover'), null);
          if (scheme === 'light') {
            // Moving away closes it; moving into it keeps it; its links work.
            await page.mouse.move(5, 795);
            await page.hover(kPreviewLink);
            await page.waitForSelector('.popover .popover-body > *');
            await page.mouse.move(5, 795);
            await page.waitForFunction(() => !document.querySelector('.popover'), { timeout: 3000 });
            await page.hover(kPreviewLink);
            await page.waitForSelector('.popover .popover-title');
            await page.hover('.popover .popover-title');
            await sleep(500);
            assert.ok(await page.$('.popover'), 'the pointer on the preview keeps it open');
            // Focus from the keyboard shows it too.
            await page.mouse.move(5, 795);
            await page.waitForFunction(() => !document.querySelector('.popover'), { timeout: 3000 });
            await page.focus(kPreviewLink);
            await page.waitForSelector('.popover .popover-title');
            await page.hover('.popover .popover-title');
            await Promise.all([page.waitForNavigation(), page.click('.popover .popover-title')]);
            assert.equal(new URL(page.url()).pathname, new URL(href, site.base).pathname);
          }
          await assertClean(page);
        } finally { await page.closeAll(); }
      }
    });

    when('deadLink')('a link to a page that answers 404 shows no preview', async (t) => {
      if (skip(t)) return;
      assert.ok(site.pages.deadLink, 'the static harness has a link to a missing page');
      const page = await newPage(browser, kDesktop);
      try {
        await page.goto(url(site.pages.deadLinkOn), { waitUntil: 'load' });
        const sel = `article a[href="${site.pages.deadLink}"]`;
        const answered = page.waitForResponse((r) => new URL(r.url()).pathname === site.pages.deadLink);
        await page.hover(sel);
        assert.equal((await answered).status(), 404);
        await sleep(500);
        assert.equal(await page.$('.popover'), null);
        // A good link still previews afterwards.
        await page.mouse.move(5, 795);
        await page.hover('article a[href="/docs/setup"]');
        await page.waitForSelector('.popover .popover-title');
        const problems = (await pageProblems(page)).filter((p) => !p.endsWith(site.pages.deadLink));
        assert.deepEqual(problems, []);
      } finally { await page.closeAll(); }
    });

    it('a long press on a phone shows the preview and does not follow the link', async (t) => {
      if (skip(t)) return;
      for (const scheme of ['light', 'dark']) {
        const page = await newPage(browser, { ...kPhone, scheme });
        try {
          await page.goto(url(site.pages.note), { waitUntil: 'load' });
          const link = await page.$(kPreviewLink);
          await link.scrollIntoView();
          const b = await link.boundingBox();
          await page.touchscreen.touchStart(b.x + b.width / 2, b.y + b.height / 2);
          await page.waitForSelector('.popover .popover-body > *', { timeout: 5000 });
          await page.touchscreen.touchEnd();
          await sleep(300);
          assert.equal(new URL(page.url()).pathname, site.pages.note, 'the long press did not navigate');
          const box = await page.$eval('.popover', (p) => { const r = p.getBoundingClientRect(); return [r.left, r.right]; });
          assert.ok(box[0] >= 0 && box[1] <= 390, `inside the phone's viewport: ${box}`);
          if (screenshots) await shot(page, `preview-phone-${scheme}`);
          await assertClean(page);
        } finally { await page.closeAll(); }
      }
    });

    it('a note page and its highlighted code, desktop and phone, light and dark', async (t) => {
      if (skip(t)) return;
      for (const [form, vp] of [['desktop', kDesktop], ['phone', kPhone]]) {
        for (const scheme of ['light', 'dark']) {
          const page = await newPage(browser, { ...vp, scheme });
          try {
            await page.goto(url(site.pages.note), { waitUntil: 'load' });
            await page.waitForSelector('.theme-toggle');
            if (screenshots && form === 'desktop') await shot(page, `note-desktop-${scheme}`);
            await page.goto(url(site.pages.code), { waitUntil: 'load' });
            const pre = await page.$('article pre:has([class^="hl-"])');
            assert.ok(pre, 'a highlighted code block');
            const colours = await page.$$eval('article pre [class^="hl-"]', (l) => new Set(l.map((e) => getComputedStyle(e).color)).size);
            assert.ok(colours >= 2, 'highlight classes have colours');
            await page.evaluate((e) => e.scrollIntoView({ block: 'center' }), pre);
            if (screenshots) await shot(page, `code-${form}-${scheme}`);
            await assertClean(page);
          } finally { await page.closeAll(); }
        }
      }
    });

    it('the local graph loads when scrolled near and draws the note and its neighbours', async (t) => {
      if (skip(t)) return;
      const page = await newPage(browser, { ...kDesktop, dpr: 2 });
      try {
        await page.goto(url(site.pages.note), { waitUntil: 'load' });
        await page.waitForSelector('section.local-graph:not([hidden])');
        await page.evaluate(() => document.querySelector('section.local-graph').scrollIntoView());
        await page.waitForSelector('section.local-graph[data-state=settled] canvas', { timeout: 20000 });
        const size = await page.$eval('section.local-graph canvas', (c) => [c.width, c.clientWidth, c.height, c.clientHeight]);
        assert.equal(size[0], size[1] * 2, 'canvas width in device pixels');
        assert.equal(size[2], size[3] * 2, 'canvas height in device pixels');
        assert.ok(await page.$eval('section.local-graph', (s) => +s.dataset.nodes) >= 2, 'the note and at least one neighbour');
        assert.ok(await inkedPixels(page, 'section.local-graph canvas') > 500, 'the canvas is drawn');
        const depth1 = await page.$eval('section.local-graph', (s) => +s.dataset.nodes);
        await page.click('section.local-graph input[type=checkbox]');
        await page.waitForSelector('section.local-graph[data-state=settled] canvas');
        assert.ok(await page.$eval('section.local-graph', (s) => +s.dataset.nodes) >= depth1, 'depth 2 has at least depth 1');
        await assertClean(page);
      } finally { await page.closeAll(); }
    });

    it('a note with a non-ASCII URL is marked in the explorer and found in the graph', async (t) => {
      if (skip(t)) return;
      if (!site.pages.unicode) { t.skip('the vault has no note with a non-ASCII URL'); return; }
      const page = await newPage(browser, kDesktop);
      try {
        await page.goto(url(encodeURI(site.pages.unicode)), { waitUntil: 'load' });
        await page.waitForFunction(() => document.querySelectorAll('nav.explorer ul.tree[data-tree] > li').length > 1);
        assert.equal(await page.$$eval('nav.explorer a[aria-current=page]', (l) => l.length), 1);
        await page.evaluate(() => document.querySelector('section.local-graph').scrollIntoView());
        await page.waitForSelector('section.local-graph[data-state=settled] canvas', { timeout: 20000 });
        assert.ok(await page.$eval('section.local-graph', (s) => +s.dataset.nodes) >= 1);
        await assertClean(page);
      } finally { await page.closeAll(); }
    });

    it('the graph page draws every note; clicking a node opens it', async (t) => {
      if (skip(t)) return;
      for (const [form, vp] of [['desktop', kDesktop], ['phone', kPhone]]) {
        for (const scheme of ['light', 'dark']) {
          const page = await newPage(browser, { ...vp, scheme });
          try {
            await page.goto(url(site.pages.graph), { waitUntil: 'load' });
            await page.waitForSelector('.global-graph[data-state=settled] canvas', { timeout: 30000 });
            assert.ok(+(await page.$eval('.global-graph', (g) => g.dataset.nodes)) >= 3);
            assert.ok(await inkedPixels(page, '.global-graph canvas') > 500, 'the canvas is drawn');
            if (screenshots) await shot(page, `graph-${form}-${scheme}`);
            await assertClean(page);
          } finally { await page.closeAll(); }
        }
      }
      // Hover label and click: a node's pixel is one of the node colour.
      const page = await newPage(browser, kDesktop);
      try {
        await page.goto(url(site.pages.graph), { waitUntil: 'load' });
        await page.waitForSelector('.global-graph[data-state=settled] canvas', { timeout: 30000 });
        const r = await (await page.$('.global-graph canvas')).boundingBox();
        const spot = await page.$eval('.global-graph canvas', (c) => {
          const want = getComputedStyle(document.body).getPropertyValue('--graph-node').trim();
          const ctx = document.createElement('canvas').getContext('2d');
          ctx.fillStyle = want;
          ctx.fillRect(0, 0, 1, 1);
          const rgb = ctx.getImageData(0, 0, 1, 1).data;
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, k = c.width / c.clientWidth;
          for (let i = 0; i < d.length; i += 4) {
            if (d[i] === rgb[0] && d[i + 1] === rgb[1] && d[i + 2] === rgb[2] && d[i + 3] === 255) {
              const p = i / 4;
              return [(p % c.width) / k, Math.floor(p / c.width) / k];
            }
          }
          return null;
        });
        assert.ok(spot, 'a node is drawn in the node colour');
        // Typing in the highlight box paints matching notes in the accent colour.
        const accentPixels = () => page.$eval('.global-graph canvas', (c) => {
          const ctx = document.createElement('canvas').getContext('2d');
          ctx.fillStyle = getComputedStyle(document.body).getPropertyValue('--graph-node-focused').trim();
          ctx.fillRect(0, 0, 1, 1);
          const rgb = ctx.getImageData(0, 0, 1, 1).data;
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          let n = 0;
          for (let i = 0; i < d.length; i += 4) if (d[i] === rgb[0] && d[i + 1] === rgb[1] && d[i + 2] === rgb[2]) n++;
          return n;
        });
        assert.equal(await accentPixels(), 0);
        const someTitle = (await titleOf(site.base, site.pages.note)).slice(0, 4);
        await page.type('.global-graph .graph-search', someTitle);
        await page.waitForFunction(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true)))));
        assert.ok(await accentPixels() > 0, `notes matching "${someTitle}" are highlighted`);
        await page.$eval('.global-graph .graph-search', (i) => { i.value = ''; i.dispatchEvent(new Event('input')); });
        await page.mouse.move(r.x + spot[0] + 1, r.y + spot[1] + 1);
        await page.waitForFunction(() => document.querySelector('.global-graph canvas').classList.contains('graph-pointer'));
        const hit = [r.x + spot[0] + 1, r.y + spot[1] + 1];
        assert.ok(hit, 'some point of the canvas is over a node');
        const title = await page.$eval('.global-graph canvas', (c) => c.title);
        assert.ok(title.length > 0, 'hovering a node names it');
        await Promise.all([page.waitForNavigation(), page.mouse.click(hit[0], hit[1])]);
        assert.notEqual(new URL(page.url()).pathname, site.pages.graph, 'clicking a node opens its note');
        await assertClean(page);
      } finally { await page.closeAll(); }
    });

    it('without JavaScript the pages are complete: explorer chain, links, no script UI', async (t) => {
      if (skip(t)) return;
      const page = await newPage(browser, { ...kDesktop, js: false });
      try {
        await page.goto(url(site.pages.note), { waitUntil: 'load' });
        const cur = await page.$eval('nav.explorer a[aria-current=page]', (a) => a.getAttribute('href'));
        assert.equal(new URL(cur, site.base).pathname, site.pages.note);
        assert.ok(await page.$$eval('nav.explorer details[data-tree][open] > summary > a[href]', (l) => l.length) >= 1, 'folder links');
        assert.ok(await page.$$eval(kPreviewLink, (l) => l.length) >= 1, 'article links');
        assert.equal(await page.$('.theme-toggle'), null);
        assert.equal(await page.$eval('section.local-graph', (s) => s.hidden), true);
        await page.goto(url(site.pages.graph), { waitUntil: 'load' });
        assert.ok(await page.$eval('noscript', (n) => n.textContent.trim().length > 0), 'the graph page explains itself');
        assert.equal(await page.$('.global-graph canvas'), null);
        assert.deepEqual(await pageProblems(page), []);
      } finally { await page.closeAll(); }
    });
  });
}

const haveRealSystem = !!process.env.FOLIO_BIN_DIR;
let clusterOrNull;
siteSuite('static harness', async () => {
  const h = await startHarness();
  return { base: h.base, pages: h.pages, close: h.close };
}, { screenshots: !haveRealSystem, fixtures: { deep: true, deadLink: true } });

siteSuite('real system (examples/vault)', async () => {
  clusterOrNull = await startCluster();
  if (!clusterOrNull) return null;
  return { base: clusterOrNull.base, pages: clusterOrNull.pages, close: () => clusterOrNull.stop() };
}, { screenshots: true });

// Issue 29: the script's words follow <html lang> (its tables in folio.js),
// English for a language it does not ship.
describe('the site script speaks the page\'s language', () => {
  let site, browser;
  before(async () => { site = await startHarness(); browser = await launch(); });
  after(async () => { if (browser) await browser.close(); if (site) await site.close(); });
  const labels = (page) => page.evaluate(() => ({
    theme: document.querySelector('.theme-toggle').getAttribute('aria-label'),
    themeTitle: document.querySelector('.theme-toggle').title,
    search: document.querySelector('.site-header form.search-box input[name=q]').placeholder,
  }));
  for (const [lang, want] of [
    ['ru', { theme: 'Тёмная тема', themeTitle: /^Включить (светлую|тёмную) тему$/, search: /^Поиск по заметкам \((Ctrl|⌘) K\)$/ }],
    ['ja', { theme: 'ダークテーマ', themeTitle: /切り替える$/, search: /^ノートを検索 \((Ctrl|⌘) K\)$/ }],
    ['pt-BR', { theme: 'Tema escuro', themeTitle: /^Mudar para o tema (claro|escuro)$/, search: /^Pesquisar notas/ }],
    ['nl', { theme: 'Dark theme', themeTitle: /^Switch to the (light|dark) theme$/, search: /^Search notes \((Ctrl|⌘) K\)$/ }],
  ]) {
    it(`${lang}: the theme toggle and the search box`, async () => {
      const page = await newPage(browser, kDesktop);
      try {
        await page.goto(`${site.base}${site.pages.note}?lang=${lang}`, { waitUntil: 'load' });
        await page.waitForSelector('.theme-toggle');
        assert.equal(await page.$eval('html', (h) => h.lang), lang);
        const got = await labels(page);
        assert.equal(got.theme, want.theme);
        assert.match(got.themeTitle, want.themeTitle);
        assert.match(got.search, want.search);
        await page.click('.theme-toggle');  // the label is written again on each switch
        assert.match((await labels(page)).themeTitle, want.themeTitle);
        await assertClean(page);
      } finally { await page.closeAll(); }
    });
  }
});
