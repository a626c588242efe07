#!/usr/bin/env node
// Screenshots of one note with folio's own look and with each community
// Obsidian Publish theme pinned in docs/themes/themes.tsv, at three widths,
// light and dark, side by side in a markdown gallery (docs/themes-gallery.md).
//
//   docs/themes/fetch-themes.sh                   # once, into .themes/; needs the internet
//   node tests/browser/tools/theme-screenshots.js [--themes .themes] [--out docs/screenshots/themes]
//       [--gallery docs/themes-gallery.md] [--list docs/themes/themes.tsv] [--only name,...]
//
// Paths are relative to the repository; the binaries come from FOLIO_BIN_DIR
// (default build/bin).
//
// It starts the real system (tests/browser/lib/cluster.js: nats-server,
// folio-ingest, folio-edge), pushes a copy of examples/vault plus
// theme-preview.md (a note with callouts, a table, code, tags and headings
// high on the page), then for "none" and each theme puts the theme's
// publish.css at the vault root, pushes again, waits until the edge serves
// it, and takes viewport-sized screenshots (device scale 1) in headless
// Chromium with the reader's theme set the way folio.js keeps it
// (localStorage "folio-theme", and prefers-color-scheme). For each theme it
// also counts the style rules of publish.css that match an element of the
// page, and lists the selectors that match nothing: what folio's markup lacks.
// report.json in the output directory holds those numbers. With pngquant on
// PATH the PNGs are quantized.
'use strict';
const { execFileSync, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startCluster } = require('../lib/cluster');
const { launch, newPage } = require('../lib/browser');

const kSource = process.env.FOLIO_SOURCE_DIR || path.resolve(__dirname, '../../..');
const kWidths = [{ width: 1400, height: 900 }, { width: 900, height: 900 }, { width: 400, height: 800, mobile: true }];
const kSchemes = ['light', 'dark'];
const kNoteTitle = 'Theme preview';

function parseArgs(argv) {
  const args = { themes: '.themes', out: 'docs/screenshots/themes', gallery: 'docs/themes-gallery.md', list: 'docs/themes/themes.tsv', only: null };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in args) || i + 1 >= argv.length) throw new Error(`usage: theme-screenshots.js [--themes DIR] [--out DIR] [--gallery FILE] [--list themes.tsv] [--only a,b]; bad argument ${argv[i]}`);
    args[key] = argv[++i];
  }
  for (const k of ['themes', 'out', 'gallery', 'list']) args[k] = path.resolve(kSource, args[k]);
  if (args.only) args.only = args.only.split(',');
  return args;
}

// docs/themes/themes.tsv: name, repository, commit, path, sha256, title.
function pinnedThemes(list, dir, only) {
  const lines = fs.readFileSync(list, 'utf8').split('\n');
  const themes = [];
  for (const line of lines) {
    if (!line.trim() || line.startsWith('#')) continue;
    const [name, repo, commit, file, sha256, title] = line.split('\t');
    if (only && !only.includes(name)) continue;
    const cssPath = path.join(dir, name, 'publish.css');
    if (!fs.existsSync(cssPath)) throw new Error(`${cssPath} is missing: run docs/themes/fetch-themes.sh ${dir}`);
    const css = fs.readFileSync(cssPath);
    const got = crypto.createHash('sha256').update(css).digest('hex');
    if (got !== sha256) throw new Error(`${cssPath}: sha256 ${got}, pinned ${sha256}: fetch it again`);
    themes.push({ name, repo, commit, file, sha256, title, css });
  }
  return themes;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The URL of the author's stylesheet a page links ("/publish.css" today), or null.
function publishCssHref(html) {
  const m = html.match(/<link[^>]+href="([^"]*publish[^"]*\.css[^"]*)"/);
  return m ? m[1] : null;
}

// Until the edge serves the note with (css) or without (null) the theme.
async function waitForTheme(base, noteUrl, css) {
  const want = css ? crypto.createHash('sha256').update(css).digest('hex') : null;
  const deadline = Date.now() + 30000;
  let last = '';
  while (Date.now() < deadline) {
    const href = publishCssHref(await (await fetch(base + noteUrl)).text());
    if (!css && !href) return;
    if (css && href) {
      const r = await fetch(new URL(href, base + noteUrl));
      const got = crypto.createHash('sha256').update(Buffer.from(await r.arrayBuffer())).digest('hex');
      if (r.ok && got === want) return;
      last = `${href} answers ${r.status} with sha256 ${got}`;
    } else {
      last = href ? `the page still links ${href}` : 'the page does not link publish.css yet';
    }
    await sleep(200);
  }
  throw new Error(`the edge did not serve ${css ? 'the theme' : 'the page without publish.css'} within 30 s: ${last}`);
}

// The note's URL: from the explorer's tree JSON, else from a link on the home page.
async function findNote(base, title) {
  try {
    const tree = await (await fetch(base + '/_/tree/')).json();
    const note = (tree.notes || []).find((n) => n.title === title);
    if (note) return note.url;
  } catch (e) { /* no tree JSON: try the home page */ }
  const home = await (await fetch(base + '/')).text();
  const m = home.match(new RegExp(`<a[^>]+href="([^"]+)"[^>]*>\\s*${title}\\s*</a>`));
  if (m) return m[1];
  throw new Error(`no note titled "${title}" in the tree JSON or on the home page`);
}

// Runs in the page: what of publish.css took effect. Every style rule
// (inside @media and @supports too) counts as matched when one of its
// selectors, without pseudo-elements and state pseudo-classes, matches an
// element; the selectors that match nothing are returned (and how often).
function probePage() {
  const kState = /::?(hover|focus|focus-within|focus-visible|active|visited|target|checked|before|after|marker|selection|placeholder|first-line|first-letter|-webkit-[\w-]+|-moz-[\w-]+)\b(\([^)]*\))?/g;
  const splitTop = (s) => {
    const out = []; let depth = 0; let cur = '';
    for (const ch of s) {
      if (ch === '(' || ch === '[') depth++;
      if (ch === ')' || ch === ']') depth--;
      if (ch === ',' && depth === 0) { out.push(cur.trim()); cur = ''; } else cur += ch;
    }
    if (cur.trim()) out.push(cur.trim());
    return out;
  };
  const matches = (sel) => {
    const bare = sel.replace(kState, '').trim() || '*';
    try { return document.querySelector(bare) !== null; } catch (e) { return false; }
  };
  const sheet = [...document.styleSheets].find((s) => s.ownerNode && /publish[^/]*\.css/.test(s.ownerNode.getAttribute('href') || ''));
  const result = { linked: !!sheet, rules: 0, matched: 0, unmatched: {} };
  const walk = (rules) => {
    for (const r of rules) {
      if (r.selectorText !== undefined) {
        result.rules++;
        const sels = splitTop(r.selectorText);
        const hit = sels.filter(matches);
        if (hit.length) result.matched++;
        else for (const s of sels) result.unmatched[s] = (result.unmatched[s] || 0) + 1;
      } else if (r.cssRules) walk(r.cssRules);
    }
  };
  if (sheet) walk(sheet.cssRules);
  result.bodyClass = document.body.className;
  result.htmlTheme = document.documentElement.dataset.theme || '';
  const style = (el) => {
    if (!el) return null;
    const s = getComputedStyle(el);
    return { color: s.color, background: s.backgroundColor, font: s.fontFamily.split(',')[0] };
  };
  result.looks = {
    body: style(document.body),
    paragraph: style(document.querySelector('article p')),
    h2: style(document.querySelector('article h2')),
    internalLink: style(document.querySelector('article a[href^="/"]:not(.tag)')),
    tag: style(document.querySelector('article a.tag')),
    callout: style(document.querySelector('.callout')),
  };
  return result;
}

async function shoot(browser, base, noteUrl, variant, outDir) {
  const probes = {};
  for (const w of kWidths) {
    for (const scheme of kSchemes) {
      const page = await newPage(browser, { width: w.width, height: w.height, mobile: !!w.mobile, dpr: 1, scheme });
      try {
        await page.evaluateOnNewDocument((s) => { try { localStorage.setItem('folio-theme', s); } catch (e) { /* none */ } }, scheme);
        await page.goto(base + noteUrl, { waitUntil: 'load' });
        await page.evaluate(() => document.fonts.ready.then(() => true));
        await sleep(400);  // themes' transitions
        const file = `${variant}-${w.width}-${scheme}.png`;
        await page.screenshot({ path: path.join(outDir, file) });
        if (w.width === 1400) {
          probes[scheme] = await page.evaluate(probePage);
          probes[scheme].cspViolations = await page.evaluate(() => window.__csp || []);
        }
      } finally {
        await page.closeAll();
      }
    }
  }
  return probes;
}

// What the theme changed, against folio's own look in the same scheme: the
// probed elements whose colour, background or font differ.
function effects(probe, baseline) {
  const changed = [];
  for (const [el, look] of Object.entries(probe.looks)) {
    const base = baseline.looks[el];
    if (!look || !base) continue;
    const what = ['color', 'background', 'font'].filter((k) => look[k] !== base[k]);
    if (what.length) changed.push(`${el} (${what.join(', ')})`);
  }
  return changed;
}

// The classes named by the theme's selectors that matched nothing, most
// used first: what folio's markup would need for the rest of the theme.
function missingClasses(probe) {
  const count = {};
  for (const [sel, n] of Object.entries(probe.unmatched)) {
    for (const m of new Set(sel.match(/\.[A-Za-z_][\w-]*/g) || [])) count[m] = (count[m] || 0) + n;
  }
  return Object.entries(count).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

// With pngquant (Debian package pngquant) on PATH, the PNGs are reduced to
// a palette: about 3.5 times smaller, no visible difference for pages.
function quantize(files) {
  if (spawnSync('pngquant', ['--version']).status !== 0) return false;
  execFileSync('pngquant', ['--force', '--skip-if-larger', '--strip', '--quality', '70-95', '--speed', '3', '--ext', '.png', ...files]);
  return true;
}

function rel(from, to) { return path.relative(path.dirname(from), to).split(path.sep).join('/'); }

function img(gallery, outDir, file, alt) {
  const p = rel(gallery, path.join(outDir, file));
  return `[![${alt}](${p})](${p})`;
}

function writeGallery(args, themes, report, seconds) {
  const g = args.gallery;
  let md = '# Community Obsidian Publish themes on folio\n\n' +
    'Each row: the same note ([`tests/browser/tools/theme-preview.md`](' + rel(g, path.join(kSource, 'tests/browser/tools/theme-preview.md')) +
    ')) at one width, with folio\'s own look and with the theme\'s `publish.css` at the vault root, light and dark. ' +
    'The themes are fetched from their repositories at a pinned commit, never committed; ' +
    '"rules matched" counts the style rules of the theme that match an element of the page.\n\n' +
    'Made with (from the repository\'s root, after building `folio-ingest`, `folio-edge` and `folio` in `build/`):\n\n' +
    '```\ndocs/themes/fetch-themes.sh      # the pinned themes of docs/themes/themes.tsv into .themes/\n' +
    'node tests/browser/tools/theme-screenshots.js\n```\n\n' +
    `(${report.variants.length} variants × ${kWidths.length} widths × ${kSchemes.length} schemes in ${seconds} s; ` +
    `the PNGs are ${Math.round(report.pngBytes / 1024)} KB together; in dark mode the page's body had class ` +
    `"${report.probes.none.dark.bodyClass}", its html data-theme "${report.probes.none.dark.htmlTheme}".)\n`;
  for (const t of themes) {
    const p = report.probes[t.name].light;
    const s = report.summary[t.name];
    const list = (xs) => (xs.length ? xs.join('; ') : 'nothing');
    md += `\n## ${t.title}\n\n[${t.repo}](https://github.com/${t.repo}/blob/${t.commit}/${t.file}) at \`${t.commit.slice(0, 12)}\`` +
      ` · ${p.matched} of ${p.rules} style rules matched on this page\n\n` +
      `- Changed, light: ${list(s.light)}.\n- Changed, dark: ${list(s.dark)}.\n` +
      `- Classes its unmatched selectors name (uses): ${s.missing.slice(0, 20).map(([c, n]) => `\`${c}\` ${n}`).join(', ') || 'none'}.\n` +
      (p.cspViolations.length ? `- Blocked by the Content-Security-Policy: ${[...new Set(p.cspViolations)].join(', ')}.\n` : '') + '\n' +
      '| width | folio, light | theme, light | folio, dark | theme, dark |\n|---|---|---|---|---|\n';
    for (const w of kWidths) {
      const cells = [];
      for (const scheme of kSchemes) {
        cells.push(img(g, args.out, `none-${w.width}-${scheme}.png`, `folio, ${scheme}, ${w.width} px`));
        cells.push(img(g, args.out, `${t.name}-${w.width}-${scheme}.png`, `${t.title}, ${scheme}, ${w.width} px`));
      }
      md += `| ${w.width} px | ${cells.join(' | ')} |\n`;
    }
  }
  fs.mkdirSync(path.dirname(g), { recursive: true });
  fs.writeFileSync(g, md);
}

function vaultCopy() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-theme-vault-'));
  fs.cpSync(path.join(kSource, 'examples/vault'), dir, { recursive: true, filter: (src) => path.basename(src) !== '.folio' });
  fs.copyFileSync(path.join(__dirname, 'theme-preview.md'), path.join(dir, 'Theme preview.md'));
  return dir;
}

async function main() {
  const t0 = Date.now();
  const args = parseArgs(process.argv.slice(2));
  const themes = pinnedThemes(args.list, args.themes, args.only);
  fs.mkdirSync(args.out, { recursive: true });
  process.env.FOLIO_BIN_DIR = process.env.FOLIO_BIN_DIR || path.join(kSource, 'build/bin');
  const cluster = await startCluster();
  if (!cluster) throw new Error(`the system did not start: FOLIO_BIN_DIR (${process.env.FOLIO_BIN_DIR}) needs folio-ingest, folio-edge and folio`);
  const vault = vaultCopy();
  const browser = await launch();
  const report = { noteUrl: null, variants: ['none'].concat(themes.map((t) => t.name)), probes: {}, pngBytes: 0 };
  try {
    await cluster.push(vault);
    let noteUrl = null;
    for (const variant of report.variants) {
      const theme = themes.find((t) => t.name === variant);
      const cssPath = path.join(vault, 'publish.css');
      if (theme) fs.writeFileSync(cssPath, theme.css); else fs.rmSync(cssPath, { force: true });
      await cluster.push(vault);
      noteUrl = noteUrl || await findNote(cluster.base, kNoteTitle);
      report.noteUrl = noteUrl;
      await waitForTheme(cluster.base, noteUrl, theme ? theme.css : null);
      const t = Date.now();
      report.probes[variant] = await shoot(browser, cluster.base, noteUrl, variant, args.out);
      console.log(`${variant}: ${kWidths.length * kSchemes.length} screenshots in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    }
  } finally {
    await browser.close();
    await cluster.stop();
    fs.rmSync(vault, { recursive: true, force: true });
  }
  const pngs = [];
  for (const v of report.variants) for (const w of kWidths) for (const s of kSchemes) pngs.push(path.join(args.out, `${v}-${w.width}-${s}.png`));
  report.quantized = quantize(pngs);
  for (const f of pngs) report.pngBytes += fs.statSync(f).size;
  report.summary = {};
  for (const t of themes) {
    const p = report.probes[t.name];
    report.summary[t.name] = { light: effects(p.light, report.probes.none.light), dark: effects(p.dark, report.probes.none.dark),
      missing: missingClasses(p.light) };
  }
  const seconds = Math.round((Date.now() - t0) / 1000);
  report.seconds = seconds;
  fs.writeFileSync(path.join(args.out, 'report.json'), JSON.stringify(report, null, 1) + '\n');
  writeGallery(args, themes, report, seconds);
  for (const t of themes) {
    const p = report.probes[t.name].light;
    console.log(`${t.name}: ${p.matched}/${p.rules} rules matched; body class "${p.bodyClass}"; changed: ${report.summary[t.name].light.join('; ') || 'nothing'}`);
  }
  console.log(`${report.pngBytes} bytes of PNG (${report.quantized ? '' : 'not '}quantized) in ${args.out}; gallery ${args.gallery}; ${seconds} s`);
}

main().catch((e) => { console.error(e.stack || e.message); process.exit(1); });
