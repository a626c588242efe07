// A static stand-in for folio-edge: pages with the note-page markup, the
// tree and graph JSON, the same Content-Security-Policy, and the real
// folio.js and style.css from libs/site/src. Used to test the script before
// (and besides) the real system, and for the 10k-note graph measurement.
'use strict';
const http = require('node:http');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const kSource = process.env.FOLIO_SOURCE_DIR || path.resolve(__dirname, '../../..');
// The theme snippet exactly as the layout writes it (libs/site/src/layout_internal.h), so the
// policy's hash matches.
function themeSnippet() {
  const h = fs.readFileSync(path.join(kSource, 'libs/site/src/layout_internal.h'), 'utf8');
  const decl = h.slice(h.indexOf('kThemeInit ='), h.indexOf(';\n', h.indexOf('kThemeInit =')));
  return [...decl.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1].replace(/\\(.)/g, '$1')).join('');
}
const kThemeSnippet = themeSnippet();
const kCsp = "default-src 'none'; script-src 'self' 'sha256-" +
  crypto.createHash('sha256').update(kThemeSnippet).digest('base64') +
  "'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'";

function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

// The fixture vault: folders and notes with bodies, links between them.
function fixtureNotes() {
  const notes = [
    { url: '/', title: 'Home', folder: '/', body: '<p>Welcome. Start with <a href="/docs/setup">Setup</a> or read <a href="/guides/intro">the intro</a>.</p>' },
    { url: '/docs/setup', title: 'Setup', folder: '/docs/', body:
      '<p>Install the tools, then read <a href="/docs/usage">Usage</a> and <a href="/guides/intro#part-two">part two of the intro</a>.</p>' +
      '<h2 id="build">Build</h2><pre><code class="language-cpp"><span class="hl-preproc">#include</span> <span class="hl-string">&lt;cstdio&gt;</span>\n' +
      '<span class="hl-type">int</span> <span class="hl-function">main</span>() { <span class="hl-keyword">return</span> <span class="hl-number">0</span>; }</code></pre>' +
      '<p>See also <a href="/docs/sub/deep">Deep</a>.</p>' },
    { url: '/docs/usage', title: 'Usage', folder: '/docs/', body: '<p>Run it. Back to <a href="/docs/setup">Setup</a>; <a href="/gone">a page that is gone</a>.</p><h2 id="flags">Flags</h2><p>Flags are listed here.</p>' },
    { url: '/docs/sub/deep', title: 'Deep', folder: '/docs/sub/', body: '<p>A note deep down, linking <a href="/docs/setup">Setup</a>.</p>' },
    { url: '/guides/intro', title: 'Intro', folder: '/guides/', body:
      '<p>The introduction.</p><h2 id="part-one">Part one</h2><p>First part text.</p><h2 id="part-two">Part two</h2><p>Second part, the interesting one.</p>' },
    { url: '/guides/more', title: 'More', folder: '/guides/', body: '<p>More guidance; see <a href="/guides/intro">Intro</a>.</p>' },
    { url: '/guides/多语言', title: '多语言', folder: '/guides/', body: '<p>一个链接: <a href="/guides/intro">Intro</a>.</p>' },
  ];
  // A folder longer than the tree's cap (50): "30 more…".
  for (let i = 0; i < 80; i++) {
    notes.push({ url: `/bulk/n${i}`, title: `Bulk note ${String(i).padStart(2, '0')}`, folder: '/bulk/', body: `<p>Bulk ${i}.</p>` });
  }
  return notes;
}

const kFolderNames = { '/bulk/': 'Bulk', '/docs/': 'Docs', '/docs/sub/': 'Sub', '/guides/': 'Guides' };

function parentFolder(folder) {
  if (folder === '/') return null;
  const parts = folder.split('/').filter(Boolean);
  parts.pop();
  return parts.length ? '/' + parts.join('/') + '/' : '/';
}

function treeJson(folder, notes) {
  const folders = Object.keys(kFolderNames).filter((f) => parentFolder(f) === folder).map((f) => ({
    name: kFolderNames[f], tree: '/_/tree' + f, url: f,
    notes: notes.filter((n) => n.folder.startsWith(f)).length,
  }));
  const inside = notes.filter((n) => n.folder === folder && n.url !== '/').map((n) => ({ title: n.title, url: n.url }));
  return { folders, notes: inside.slice(0, 50), more: Math.max(0, inside.length - 50), url: folder };
}

// The chrome every page shares (docs/themes.md): header, explorer | main | aside, footer.
function head(title, { outline = false, explorerHtml = null } = {}) {
  return '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1">' +
    `<title>${esc(title)} · Test Site</title>` +
    '<link rel="stylesheet" href="/assets/folio.css"><script src="/_/folio.js" defer></script></head><body>' +
    `<script>${kThemeSnippet}</script><div class="published-container has-navigation is-readable-line-width">` +
    '<header class="site-header"><button class="site-explorer-toggle" type="button" aria-controls="explorer" aria-expanded="false" ' +
    'aria-label="Explorer" title="Explorer"><span class="toggle-icon" aria-hidden="true"></span></button>' +
    '<a class="site-name site-body-left-column-site-name" href="/">Test Site</a>' +
    '<nav class="site-nav"><a href="/_/recent">Recent</a> <a href="/_/tags">Tags</a> <a href="/_/graph">Graph</a></nav>' +
    '<form class="search-box" role="search" action="/search" method="get"><label><span class="visually-hidden">Search</span>' +
    '<input type="search" name="q" placeholder="Search"></label><button type="submit">Search</button></form>' +
    '<button class="site-outline-toggle" type="button" aria-controls="outline" aria-expanded="false" aria-label="Outline" title="Outline"' +
    (outline ? '' : ' hidden') + '><span class="toggle-icon" aria-hidden="true"></span></button></header>' +
    '<div class="site-body">' + (explorerHtml || explorer(null)) +
    '<main class="site-body-center-column" data-folio-swap="main"><div class="publish-renderer">' +
    '<div class="markdown-preview-view markdown-rendered"><div class="markdown-preview-sizer markdown-preview-section">';
}

function tail(aside = '') {
  return `</div></div></div></main><aside class="site-body-right-column" data-folio-swap="aside">${aside}</aside></div></div>` +
    '<footer class="site-footer"><p>Published with folio</p></footer></body></html>';
}

// The server-rendered explorer: root → the note's folders → the note.
function explorer(note) {
  const chain = [];
  for (let f = note ? note.folder : '/'; f && f !== '/'; f = parentFolder(f)) chain.unshift(f);
  // Like the edge: hrefs and data-tree percent-encoded, the JSON raw.
  let inner = note ? `<li class="tree-note"><a href="${esc(encodeURI(note.url))}" aria-current="page">${esc(note.title)}</a></li>` : '';
  for (let i = chain.length - 1; i >= 0; i--) {
    const f = chain[i];
    inner = `<li class="tree-folder"><details open data-tree="/_/tree${f}"><summary><a href="${f}">${kFolderNames[f]}</a></summary>` +
      `<ul class="tree">${inner}</ul></details></li>`;
  }
  return '<nav class="site-body-left-column explorer" id="explorer" aria-label="Explorer"><details class="explorer-box" open>' +
    `<summary>Explorer</summary><ul class="tree" data-tree="/_/tree/">${inner}</ul></details></nav>`;
}

function notePage(note, notes) {
  const backlinks = notes.filter((n) => n.body.includes(`href="${note.url}"`) || n.body.includes(`href="${note.url}#`));
  const heads = [...note.body.matchAll(/<h2 id="([^"]+)">([^<]*)<\/h2>/g)];
  let html = head(note.title, { outline: heads.length >= 2, explorerHtml: explorer(note) });
  html += `<nav class="breadcrumbs" aria-label="Breadcrumbs"><a href="/">Home</a> <span>/</span> <span aria-current="page">${esc(note.title)}</span></nav>`;
  html += `<article><h1>${esc(note.title)}</h1><p class="meta">Updated <time>2026-12-01</time></p>` + note.body + '</article>';
  let aside = '';
  if (heads.length >= 2) {
    aside += '<nav class="outline" id="outline" aria-labelledby="outline-title"><h2 class="outline-title" id="outline-title">On this page</h2><ul>' +
      heads.map((m) => `<li class="toc-h2"><a href="#${m[1]}">${m[2]}</a></li>`).join('') + '</ul></nav>';
  }
  if (backlinks.length) {
    aside += '<section class="backlinks"><h2>Backlinks</h2><ul>' +
      backlinks.map((b) => `<li><a href="${b.url}">${esc(b.title)}</a></li>`).join('') + '</ul></section>';
  }
  aside += `<section class="local-graph" data-graph="/_/graph.json" data-url="${esc(encodeURI(note.url))}" hidden><h2>Graph</h2></section>`;
  return html + tail(aside);
}

function graphPage() {
  return head('Graph') + '<article><h1>Graph</h1><div class="global-graph" data-graph="/_/graph.json">' +
    '<noscript><p>The graph needs JavaScript; every note is listed under <a href="/_/recent">Recent</a>.</p></noscript></div></article>' + tail();
}

function noteGraph(notes) {
  const nodes = notes.map((n) => [n.url, n.title, [...n.body.matchAll(/href="(\/[^"#]*)/g)].map((m) => m[1])]);
  nodes[0][2].push('/not/a/note');  // a target outside the graph: ignored
  return { meta: { notes: nodes.length, links: 0, chunks: ['/_/graph/0.json', '/_/graph/1.json'] },
    chunks: [{ nodes: nodes.slice(0, 3) }, { nodes: nodes.slice(3) }] };
}

// n notes, m directed links in clusters (a few hubs, like a real vault);
// deterministic.
function syntheticGraph(n, m) {
  let seed = 12345;
  const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
  const nodes = [];
  for (let i = 0; i < n; i++) nodes.push([`/n/${i}`, `Note ${i}`, []]);
  for (let e = 0; e < m; e++) {
    const s = Math.floor(rnd() * n);
    const cluster = Math.floor(s / 100) * 100;
    const t = rnd() < 0.8 ? cluster + Math.floor(rnd() * Math.min(100, n - cluster)) : Math.floor(Math.pow(rnd(), 3) * n);
    if (t !== s) nodes[s][2].push(`/n/${t}`);
  }
  const chunks = [];
  for (let i = 0; i < n; i += 1000) chunks.push({ nodes: nodes.slice(i, i + 1000) });
  return { meta: { notes: n, links: m, chunks: chunks.map((_, i) => `/_/graph/${i}.json`) }, chunks };
}

// Starts the server on a free loopback port. opts.graph: {nodes, links}
// replaces the fixture's graph with a synthetic one. Resolves
// {base, requests (paths asked for), close()}.
function startHarness(opts = {}) {
  const notes = fixtureNotes();
  const graph = opts.graph ? syntheticGraph(opts.graph.nodes, opts.graph.links) : noteGraph(notes);
  const requests = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const p = decodeURIComponent(url.pathname);
    requests.push(p);
    // ?lang=ru: the page in another language (issue 29), as <html lang> says.
    const lang = /^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{1,8})*$/.test(url.searchParams.get('lang') || '') ? url.searchParams.get('lang') : '';
    const send = (status, type, body) => {
      if (lang && /^text\/html/.test(type)) body = body.replace('<html lang="en">', `<html lang="${lang}">`);
      res.writeHead(status, { 'Content-Type': type, 'Content-Security-Policy': kCsp, 'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'no-cache' });
      res.end(body);
    };
    if (p === '/_/folio.js') return send(200, 'text/javascript; charset=utf-8', fs.readFileSync(path.join(kSource, 'libs/site/src/folio.js')));
    if (p === '/assets/folio.css') {
      return send(200, 'text/css; charset=utf-8', fs.readFileSync(path.join(kSource, 'libs/site/src/style.css'), 'utf8'));
    }
    if (p === '/_/graph.json') return send(200, 'application/json', JSON.stringify(graph.meta));
    const chunk = p.match(/^\/_\/graph\/(\d+)\.json$/);
    if (chunk && graph.chunks[+chunk[1]]) return send(200, 'application/json', JSON.stringify(graph.chunks[+chunk[1]]));
    if (p === '/_/graph') return send(200, 'text/html; charset=utf-8', graphPage());
    if (p.startsWith('/_/tree/')) {
      const folder = p.slice('/_/tree'.length);
      if (folder === '/' || kFolderNames[folder]) return send(200, 'application/json', JSON.stringify(treeJson(folder, notes)));
    }
    const note = notes.find((n) => n.url === p);
    if (note) return send(200, 'text/html; charset=utf-8', notePage(note, notes));
    if (kFolderNames[p] || ['/_/recent', '/_/tags'].includes(p)) {
      return send(200, 'text/html; charset=utf-8', head(p) + `<article><h1>${esc(p)}</h1></article>` + tail());
    }
    send(404, 'text/html; charset=utf-8', head('Not found') + '<article><h1>Not found</h1></article>' + tail());
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const base = `http://127.0.0.1:${server.address().port}`;
      resolve({
        base, requests,
        pages: { note: '/docs/setup', code: '/docs/setup', graph: '/_/graph', unicode: '/guides/多语言', deep: '/bulk/n45', deepMore: 30, deadLinkOn: '/docs/usage', deadLink: '/gone' },
        close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
      });
    });
  });
}

module.exports = { startHarness };
