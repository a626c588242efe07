// The header's search box on every page (folio.js SearchBox, issue 27), in
// headless Chromium against the real system: nats-server, folio-ingest,
// folio-edge and folio-search with examples/vault. Results as you type on a
// note page (debounced, <mark> in snippets, breadcrumbs), the combobox's
// keyboard (arrows, Enter, Escape; Ctrl-K, Cmd-K and "/" focus it), a mouse
// click, an older slow answer aborted, a typo that still finds its note, the panel at 400 px, the search
// page's own live results, and the form without JavaScript.
'use strict';
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { launch, newPage, pageProblems, shot } = require('../lib/browser');
const { startCluster } = require('../lib/cluster');

const kDesktop = { width: 1280, height: 800 };
const kPhone = { width: 400, height: 800, mobile: true };
const kInput = '.site-header form.search-box input[name=q]';
const kPanel = '.site-header .search-panel';
const kOpenPanel = kPanel + ':not([hidden])';

async function assertClean(page) {
  assert.deepEqual(await pageProblems(page), [], 'console errors, failed requests or CSP violations');
}

// What the open panel shows: its options (id, href, title, breadcrumb, the
// snippet's marks, aria-selected, height) and the combobox's state.
function panelState(page) {
  return page.evaluate((sel) => {
    const input = document.querySelector(sel);
    const list = document.getElementById(input.getAttribute('aria-controls'));
    const options = [...list.querySelectorAll('[role=option]')].map((li) => {
      const a = li.querySelector('a');
      return {
        id: li.id, href: a.getAttribute('href'), text: a.textContent, all: li.classList.contains('search-all'),
        title: li.querySelector('.search-hit-title')?.textContent ?? null,
        crumb: li.querySelector('.search-hit-crumb')?.textContent ?? null,
        marks: [...li.querySelectorAll('.search-hit-snippet mark')].map((m) => m.textContent),
        selected: li.getAttribute('aria-selected'), height: a.getBoundingClientRect().height,
      };
    });
    const empty = list.parentElement.querySelector('.search-panel-empty');
    return {
      role: input.getAttribute('role'), expanded: input.getAttribute('aria-expanded'),
      active: input.getAttribute('aria-activedescendant'), listRole: list.getAttribute('role'),
      noResults: !!empty && !empty.hidden && empty.textContent, options, hits: options.filter((o) => !o.all),
    };
  }, kInput);
}

// Types `text` into the header box (after clearing it) and waits until the
// panel shows the answer for it. Resolves the milliseconds from the last
// keystroke to the answer on screen (debounce, request, DOM), as the page
// measures them.
async function typeQuery(page, text, delay = 25) {
  await page.click(kInput, { clickCount: 3 });
  await page.keyboard.press('Backspace');
  await page.evaluate((sel) => {
    document.querySelector(sel).addEventListener('input', () => { window.__lastKey = performance.now(); });
  }, kInput);
  await page.type(kInput, text, { delay });
  const shownAt = await page.waitForFunction((sel, q) => {
    const all = document.querySelector(sel + ' .search-all a');
    return all && all.textContent === 'All results for \u201c' + q + '\u201d' && !all.closest('[hidden]') && performance.now();
  }, { polling: 'mutation' }, kPanel, text);
  return (await shownAt.jsonValue()) - (await page.evaluate(() => window.__lastKey));
}

const pathOf = (href, base) => decodeURIComponent(new URL(href, base).pathname);

describe('the header search box on the real system', () => {
  let site, browser;
  before(async () => {
    site = await startCluster({ search: true });
    if (site) browser = await launch();
  });
  after(async () => {
    if (browser) await browser.close();
    if (site) await site.stop();
  });
  const skip = (t) => { if (!site) { t.skip('no folio binaries in FOLIO_BIN_DIR'); return true; } return false; };
  const url = (p) => site.base + p;

  it('a note page: results with marks as you type, debounced; arrows move, Enter opens the selected note', async (t) => {
    if (skip(t)) return;
    const page = await newPage(browser, kDesktop);
    const asked = [];
    page.on('request', (r) => { if (/\/_\/search\?/.test(r.url())) asked.push(new URL(r.url())); });
    try {
      await page.goto(url(site.pages.note), { waitUntil: 'load' });
      await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('role') === 'combobox', {}, kInput);
      assert.equal(await page.$eval(kInput, (i) => i.placeholder), 'Search notes (Ctrl K)');
      assert.equal(await page.$eval(kInput, (i) => i.getAttribute('aria-expanded')), 'false');
      assert.ok(await page.$eval(kPanel, (p) => p.hidden), 'the panel starts closed');

      const ms = await typeQuery(page, 'jetstream', 30);
      t.diagnostic(`last keystroke to results on screen: ${ms.toFixed(0)} ms (120 ms of it the debounce)`);
      assert.ok(ms >= 100, 'the request waits for the debounce');
      // Keystrokes 30 ms apart, a 120 ms debounce: one request for the word, not one per letter.
      assert.ok(asked.length >= 1 && asked.length <= 2, `requests while typing: ${asked.map(String)}`);
      const last = asked[asked.length - 1];
      assert.equal(last.searchParams.get('format'), 'json');
      assert.equal(last.searchParams.get('q'), 'jetstream');
      assert.equal(last.searchParams.get('k'), '8');

      const s = await panelState(page);
      assert.equal(s.role, 'combobox');
      assert.equal(s.expanded, 'true');
      assert.equal(s.listRole, 'listbox');
      assert.ok(s.hits.length >= 2 && s.hits.length <= 8, `hits shown: ${s.hits.length}`);
      assert.equal(s.noResults, false);
      assert.ok(s.hits.some((h) => h.marks.some((m) => /jetstream/i.test(m))), 'a snippet marks the word');
      assert.ok(s.hits.every((h) => h.title && h.href.startsWith('/')));
      assert.ok(s.hits.some((h) => h.crumb), 'notes in folders show their folder');
      const last1 = s.options[s.options.length - 1];
      assert.ok(last1.all);
      assert.equal(last1.href, '/_/search?q=jetstream');
      assert.equal(s.active, null);

      await page.keyboard.press('ArrowDown');
      let st = await panelState(page);
      assert.equal(st.active, st.options[0].id);
      assert.equal(st.options[0].selected, 'true');
      await page.keyboard.press('ArrowDown');
      st = await panelState(page);
      assert.equal(st.active, st.options[1].id);
      assert.equal(st.options[0].selected, 'false');
      await page.keyboard.press('ArrowUp');
      st = await panelState(page);
      assert.equal(st.active, st.options[0].id);
      await shot(page, 'search-box-desktop');

      // Open another note than this one (this page may itself rank first).
      let pick = 0;
      if (pathOf(st.options[0].href, site.base) === site.pages.note) {
        await page.keyboard.press('ArrowDown');
        pick = 1;
      }
      const target = pathOf(st.options[pick].href, site.base);
      await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.keyboard.press('Enter')]);
      assert.equal(decodeURIComponent(new URL(page.url()).pathname), target, 'Enter opens the selected note');
      assert.notEqual(target, site.pages.note);
      await assertClean(page);
    } finally { await page.closeAll(); }
  });

  it('a slow answer to an older query is aborted and never replaces a newer one', async (t) => {
    if (skip(t)) return;
    const page = await newPage(browser, kDesktop);
    const aborted = [];
    try {
      await page.goto(url(site.pages.note), { waitUntil: 'load' });
      await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('role') === 'combobox', {}, kInput);
      // The answer for "jet" is held back 700 ms; "jetstream" goes straight through.
      await page.setRequestInterception(true);
      page.on('request', (r) => {
        const q = /\/_\/search\?/.test(r.url()) ? new URL(r.url()).searchParams.get('q') : null;
        const go = () => r.continue().catch(() => { /* aborted by the page meanwhile */ });
        if (q === 'jet') setTimeout(go, 700); else go();
      });
      page.on('requestfailed', (r) => { if (/[?&]q=jet(&|$)/.test(r.url())) aborted.push(r.failure()?.errorText); });
      await page.click(kInput);
      await page.type(kInput, 'jet');
      await new Promise((r) => setTimeout(r, 250));  // past the debounce: "jet" is on its way
      await page.type(kInput, 'stream');
      await page.waitForFunction((sel) => document.querySelector(sel + ' .search-all a')?.textContent === 'All results for \u201cjetstream\u201d', {}, kPanel);
      await new Promise((r) => setTimeout(r, 900));  // the held answer's time has come and gone
      assert.equal(await page.$eval(kPanel + ' .search-all a', (a) => a.textContent), 'All results for \u201cjetstream\u201d');
      assert.deepEqual(aborted, ['net::ERR_ABORTED'], 'the older request was aborted');
    } finally { await page.closeAll(); }
  });

  it('Escape closes the panel; Enter with nothing selected goes to /_/search, whose own live results still work', async (t) => {
    if (skip(t)) return;
    const page = await newPage(browser, kDesktop);
    try {
      await page.goto(url(site.pages.note), { waitUntil: 'load' });
      await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('role') === 'combobox', {}, kInput);
      await typeQuery(page, 'edge');
      await page.keyboard.press('Escape');
      assert.ok(await page.$eval(kPanel, (p) => p.hidden), 'Escape closes the panel');
      assert.equal(await page.$eval(kInput, (i) => i.getAttribute('aria-expanded')), 'false');
      assert.equal(await page.$eval(kInput, (i) => i.value), 'edge', 'Escape keeps the text');
      await page.keyboard.press('ArrowDown');  // opens it again, selection on the first
      assert.equal((await panelState(page)).expanded, 'true');
      await page.keyboard.press('Escape');

      await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.keyboard.press('Enter')]);
      const at = new URL(page.url());
      assert.equal(at.pathname, '/_/search');
      assert.equal(at.searchParams.get('q'), 'edge');
      await page.waitForSelector('#search-results .search-hits li a');
      // The search page keeps its own live results: no panel there.
      assert.equal(await page.$(kPanel), null);
      await page.click(kInput, { clickCount: 3 });
      await page.type(kInput, 'jetstream');
      await page.waitForFunction(() => /jetstream/i.test(document.querySelector('#search-results .meta')?.textContent || ''));
      assert.ok(await page.$('#search-results .snippet mark'));
      await assertClean(page);
    } finally { await page.closeAll(); }
  });

  it('a click on a result opens it; a query without hits says "No results"', async (t) => {
    if (skip(t)) return;
    const page = await newPage(browser, kDesktop);
    try {
      await page.goto(url(site.pages.note), { waitUntil: 'load' });
      await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('role') === 'combobox', {}, kInput);
      await typeQuery(page, 'zqxwvbnmkj');
      let s = await panelState(page);
      assert.equal(s.hits.length, 0);
      assert.equal(s.noResults, 'No results');

      await typeQuery(page, 'storage');
      s = await panelState(page);
      assert.ok(s.hits.length >= 2);
      const target = pathOf(s.hits[1].href, site.base);
      // A same-origin link: the page is swapped in (navigation without reloads).
      await page.click(`#${s.hits[1].id} a`);
      await page.waitForFunction((p) => decodeURIComponent(location.pathname) === p, { polling: 100 }, target);
      assert.equal(decodeURIComponent(new URL(page.url()).pathname), target);
      assert.equal(await page.$eval(kInput, (i) => i.getAttribute('aria-expanded')), 'false', 'the panel closes');
      await assertClean(page);
    } finally { await page.closeAll(); }
  });

  it('Ctrl-K, Cmd-K and "/" focus the box and select its text; "/" typed in another field stays there', async (t) => {
    if (skip(t)) return;
    const page = await newPage(browser, kDesktop);
    try {
      await page.goto(url(site.pages.note), { waitUntil: 'load' });
      await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('role') === 'combobox', {}, kInput);
      await page.$eval(kInput, (i) => { i.value = 'graph'; });
      const focusState = () => page.$eval(kInput, (i) => ({
        focused: document.activeElement === i, start: i.selectionStart, end: i.selectionEnd, len: i.value.length,
      }));
      const blur = () => page.evaluate(() => { document.activeElement.blur(); document.body.focus(); });
      for (const mod of ['Control', 'Meta']) {
        await blur();
        assert.equal((await focusState()).focused, false);
        await page.keyboard.down(mod);
        await page.keyboard.press('k');
        await page.keyboard.up(mod);
        assert.deepEqual(await focusState(), { focused: true, start: 0, end: 5, len: 5 }, `${mod}-K`);
      }
      await blur();
      await page.keyboard.press('/');
      assert.deepEqual(await focusState(), { focused: true, start: 0, end: 5, len: 5 }, '"/"');
      assert.equal(await page.$eval(kInput, (i) => i.value), 'graph', 'the "/" itself is not typed');

      // Another field of the page keeps its "/" (a field added here, as a page's own form would be).
      await page.evaluate(() => { const f = document.createElement('textarea'); f.id = 'other'; document.querySelector('article').append(f); });
      await page.focus('#other');
      await page.keyboard.type('a/b');
      assert.equal(await page.$eval('#other', (f) => f.value), 'a/b');
      assert.equal(await page.evaluate(() => document.activeElement.id), 'other');
      await assertClean(page);
    } finally { await page.closeAll(); }
  });

  // Typo tolerance (issue 27): a word of 5+ characters the vault does not
  // have matches the vault's words within one edit (two from 8 characters).
  it('a typo still finds its note: "overvew" finds "Architecture overview", and Enter opens it', async (t) => {
    if (skip(t)) return;
    const page = await newPage(browser, kDesktop);
    try {
      await page.goto(url(site.pages.note), { waitUntil: 'load' });
      await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('role') === 'combobox', {}, kInput);
      await typeQuery(page, 'overvew');
      const s = await panelState(page);
      const hit = s.hits.find((h) => /overview/i.test(h.title));
      assert.ok(hit, `"overvew" finds the overview note; shown: ${s.hits.map((h) => h.title)}`);
      assert.equal(pathOf(hit.href, site.base), '/architecture/overview');
      // The keyboard opens it: down to its row, Enter.
      const index = s.hits.indexOf(hit);
      for (let i = 0; i <= index; ++i) await page.keyboard.press('ArrowDown');
      await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.keyboard.press('Enter')]);
      assert.equal(pathOf(page.url(), site.base), '/architecture/overview');
    } finally { await page.closeAll(); }
  });

  it('at 400 px the panel spans the viewport below the header, its rows are touch targets, a tap opens one', async (t) => {
    if (skip(t)) return;
    const page = await newPage(browser, kPhone);
    try {
      await page.goto(url(site.pages.note), { waitUntil: 'load' });
      await page.waitForFunction((sel) => document.querySelector(sel).getAttribute('role') === 'combobox', {}, kInput);
      await typeQuery(page, 'search');
      const box = await page.evaluate((panelSel, inputSel) => {
        const p = document.querySelector(panelSel).getBoundingClientRect();
        const i = document.querySelector(inputSel).getBoundingClientRect();
        return { left: p.left, right: p.right, top: p.top, inputBottom: i.bottom, vw: document.documentElement.clientWidth,
          scrollW: document.documentElement.scrollWidth };
      }, kOpenPanel, kInput);
      assert.ok(box.left >= 0 && box.right <= box.vw, `panel ${box.left}..${box.right} in a ${box.vw} px viewport`);
      assert.ok(box.right - box.left >= box.vw - 2, `the panel is full width (${box.right - box.left} of ${box.vw} px)`);
      assert.ok(box.top >= box.inputBottom, 'the panel is below the field');
      assert.equal(box.scrollW, box.vw, 'nothing scrolls sideways');
      const s = await panelState(page);
      assert.ok(s.options.length >= 2);
      for (const o of s.options) assert.ok(o.height >= 40, `row "${o.text.slice(0, 30)}" is ${o.height} px tall`);
      await shot(page, 'search-box-phone');
      const target = pathOf(s.hits[0].href, site.base);
      await page.tap(`#${s.hits[0].id} a`);  // a swap (navigation without reloads), not a full load
      await page.waitForFunction((p) => decodeURIComponent(location.pathname) === p, { polling: 100 }, target);
      assert.equal(decodeURIComponent(new URL(page.url()).pathname), target, 'a tap opens the result');
      await assertClean(page);
    } finally { await page.closeAll(); }
  });

  it('without JavaScript the header form goes to /_/search', async (t) => {
    if (skip(t)) return;
    const page = await newPage(browser, { ...kDesktop, js: false });
    try {
      await page.goto(url(site.pages.note), { waitUntil: 'load' });
      assert.equal(await page.$eval(kInput, (i) => i.placeholder), 'Search notes');
      await page.type(kInput, 'jetstream');
      await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.keyboard.press('Enter')]);
      const at = new URL(page.url());
      assert.equal(at.pathname, '/_/search');
      assert.equal(at.searchParams.get('q'), 'jetstream');
      assert.ok(await page.$('#search-results .search-hits li a'));
      assert.equal(await page.$(kPanel), null);
    } finally { await page.closeAll(); }
  });
});
