// Mermaid diagrams follow the theme toggle (folio.js, issue 28): a page with
// a diagram, served as the edge serves it (the bundled mermaid.min.js, the
// diagram page's policy and inline start script, the real folio.js), is
// redrawn in mermaid's dark theme when the reader switches to dark.
'use strict';
const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { launch, newPage, pageProblems } = require('../lib/browser');

const kSource = process.env.FOLIO_SOURCE_DIR || path.resolve(__dirname, '../../..');

// A C++ string constant of libs/site/src/layout_internal.h, so the page
// carries byte for byte what the layout writes.
function cxxString(name) {
  const h = fs.readFileSync(path.join(kSource, 'libs/site/src/layout_internal.h'), 'utf8');
  const m = h.match(new RegExp(name + ' =\\s*((?:"(?:[^"\\\\]|\\\\.)*"\\s*)+);'));
  if (!m) throw new Error('no ' + name + ' in layout_internal.h');
  return [...m[1].matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((x) => x[1].replace(/\\(.)/g, '$1')).join('');
}

function mermaidFile() {
  const candidates = [process.env.FOLIO_BIN_DIR && path.join(process.env.FOLIO_BIN_DIR, 'mermaid.min.js'),
    path.join(kSource, 'web/mermaid/node_modules/mermaid/dist/mermaid.min.js')].filter(Boolean);
  return candidates.find((f) => fs.existsSync(f));
}

function startServer() {
  const theme = cxxString('kThemeInit'), init = cxxString('kMermaidInit');
  const hash = (s) => "'sha256-" + crypto.createHash('sha256').update(s).digest('base64') + "'";
  const csp = `default-src 'none'; script-src 'self' ${hash(theme)} ${hash(init)}; style-src 'self' 'unsafe-inline'; ` +
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'";
  const page = (title, diagram, link) => '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    `<title>${title}</title>` +
    '<link rel="stylesheet" href="/assets/folio.css"><script src="/_/folio.js" defer></script>' +
    // The theme snippet is body's first child, as the layout writes it.
    `</head><body><script>${theme}</script>` +
    '<header class="site-header"><a class="site-name" href="/">Site</a><nav class="site-nav"></nav></header>' +
    '<div class="site-body"><main class="site-body-center-column" data-folio-swap="main">' +
    `<div class="markdown-preview-view markdown-rendered"><article><h1>${title}</h1><p>${link}</p>` +
    `<pre class="mermaid">${diagram}</pre></article></div></main>` +
    '<aside class="site-body-right-column" data-folio-swap="aside"></aside></div>' +
    `<script src="/mermaid.min.js" defer></script><script>${init}</script></body></html>`;
  const files = {
    '/': ['text/html; charset=utf-8', page('Diagram', 'graph TD; Start--&gt;Middle; Middle--&gt;End',
      '<a href="/two">Another diagram</a>')],
    '/two': ['text/html; charset=utf-8', page('Second', 'graph LR; Second--&gt;Page', '<a href="/">Back</a>')],
    '/_/folio.js': ['text/javascript', fs.readFileSync(path.join(kSource, 'libs/site/src/folio.js'))],
    '/assets/folio.css': ['text/css', fs.readFileSync(path.join(kSource, 'libs/site/src/style.css'))],
    '/mermaid.min.js': ['text/javascript', fs.readFileSync(mermaidFile())],
  };
  const server = http.createServer((req, res) => {
    const f = files[new URL(req.url, 'http://x').pathname];
    res.writeHead(f ? 200 : 404, { 'Content-Type': f ? f[0] : 'text/plain', 'Content-Security-Policy': csp });
    res.end(f ? f[1] : 'not found');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    base: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  })));
}

// Colours of the drawn diagram and the page behind it.
function colours(page) {
  return page.evaluate(() => {
    const svg = document.querySelector('pre.mermaid svg');
    const node = svg.querySelector('.node rect, .node polygon, .node path');
    const edge = svg.querySelector('.flowchart-link, .edgePath path, path[class*="edge"]');
    let bg = 'rgba(0, 0, 0, 0)';
    for (let el = svg.parentElement; el && /rgba\(0, 0, 0, 0\)|transparent/.test(bg); el = el.parentElement) {
      bg = getComputedStyle(el).backgroundColor;
    }
    return { id: svg.id, node: getComputedStyle(node).fill, edge: getComputedStyle(edge).stroke, bg };
  });
}

function luminance(css) {
  const [r, g, b] = (css.match(/[\d.]+/g) || [0, 0, 0]).slice(0, 3).map(Number);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

describe('mermaid follows the theme', () => {
  let server, browser;
  before(async () => {
    assert.ok(mermaidFile(), 'no mermaid.min.js (scripts/install-deps.sh installs it)');
    server = await startServer();
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.close();
    if (server) await server.close();
  });

  it('a theme switch redraws the diagram in the new theme, edges visible on the background', async () => {
    const page = await newPage(browser, { width: 1000, height: 700, scheme: 'light' });
    try {
      await page.goto(server.base + '/', { waitUntil: 'load' });
      await page.waitForSelector('pre.mermaid svg .node');
      const light = await colours(page);
      assert.ok(await page.$eval('pre.mermaid', (p) => /Start/.test(p.getAttribute('data-folio-source') || '')),
        'the diagram source is kept');
      await page.click('.theme-toggle');
      await page.waitForFunction((id) => {
        const svg = document.querySelector('pre.mermaid svg .node') && document.querySelector('pre.mermaid svg');
        return svg && svg.id && svg.id !== id;
      }, {}, light.id).catch(() => {});
      await page.waitForSelector('pre.mermaid svg .node');
      const dark = await colours(page);
      assert.notEqual(dark.node, light.node, 'the nodes kept their light colours');
      assert.notEqual(dark.bg, light.bg, 'the page background did not switch');
      const contrast = Math.abs(luminance(dark.edge) - luminance(dark.bg));
      assert.ok(contrast > 60, `edges ${dark.edge} vanish on the background ${dark.bg}`);
      // And back to light.
      await page.click('.theme-toggle');
      await page.waitForFunction((fill) => {
        const n = document.querySelector('pre.mermaid svg .node rect, pre.mermaid svg .node polygon');
        return n && getComputedStyle(n).fill !== fill;
      }, {}, dark.node);
      assert.equal((await colours(page)).node, light.node);
      // A diagram that arrives by navigation (no reload) is drawn too.
      await page.evaluate(() => { window.__folioMarker = 42; });
      await page.click('a[href="/two"]');
      await page.waitForFunction(() => /Second/.test(document.querySelector('pre.mermaid svg')?.textContent || ''),
        { polling: 100 });
      assert.equal(await page.evaluate(() => window.__folioMarker), 42, 'the navigation reloaded the page');
      assert.deepEqual(await pageProblems(page), [], 'console errors, failed requests or CSP violations');
    } finally {
      await page.closeAll();
    }
  });
});
