// tools/theme-screenshots.js (the community-theme gallery, issue 28) end to
// end on the real system, with a small fixture theme pinned in a temporary
// list instead of the fetched ones: every screenshot at its width, folio's
// own look in both schemes, the theme's rules counted (matched and not), what
// it changed, and a gallery whose every image exists.
'use strict';
const { describe, it } = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const kTool = path.resolve(__dirname, '../tools/theme-screenshots.js');
// Three rules: one matches the page's body, one folio's callouts, one a class
// folio never writes.
const kCss = 'body { background-color: rgb(1, 2, 3); }\n.callout { border-style: dotted; }\n.no-such-class-anywhere p { color: red; }\n';

function run(args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [kTool, ...args], { timeout: 300000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stdout}${stderr}`)); else resolve(stdout);
    });
  });
}

// A PNG's width, from its IHDR chunk.
function pngWidth(file) {
  const b = fs.readFileSync(file);
  assert.equal(b.subarray(1, 4).toString(), 'PNG', `${file} is a PNG`);
  return b.readUInt32BE(16);
}

describe('theme-screenshots tool', () => {
  it('screenshots folio and a pinned theme at three widths, light and dark, and writes the gallery', async (t) => {
    const bin = process.env.FOLIO_BIN_DIR;
    if (!bin || !['folio-ingest', 'folio-edge', 'folio'].every((b) => fs.existsSync(path.join(bin, b)))) {
      t.skip('FOLIO_BIN_DIR has no folio-ingest, folio-edge and folio');
      return;
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'folio-theme-tool-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.mkdirSync(path.join(dir, 'themes/fixture'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'themes/fixture/publish.css'), kCss);
    const sha = crypto.createHash('sha256').update(kCss).digest('hex');
    fs.writeFileSync(path.join(dir, 'list.tsv'), `# a comment\nfixture\towner/repo\t${'0'.repeat(40)}\tpublish.css\t${sha}\tFixture theme\n`);
    const out = path.join(dir, 'out');
    const gallery = path.join(dir, 'gallery.md');

    await run(['--list', path.join(dir, 'list.tsv'), '--themes', path.join(dir, 'themes'), '--out', out, '--gallery', gallery]);

    for (const v of ['none', 'fixture']) {
      for (const w of [1400, 900, 400]) {
        for (const s of ['light', 'dark']) assert.equal(pngWidth(path.join(out, `${v}-${w}-${s}.png`)), w, `${v}-${w}-${s}.png`);
      }
    }
    const report = JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8'));
    assert.deepEqual(report.variants, ['none', 'fixture']);
    assert.notEqual(report.probes.none.light.looks.body.background, report.probes.none.dark.looks.body.background,
      'the dark screenshots are in the dark scheme');
    assert.equal(report.probes.none.light.linked, false, 'folio alone links no publish.css');
    for (const s of ['light', 'dark']) {
      const p = report.probes.fixture[s];
      assert.equal(p.linked, true);
      assert.equal(p.rules, 3);
      assert.equal(p.matched, 2);
      assert.deepEqual(Object.keys(p.unmatched), ['.no-such-class-anywhere p']);
      assert.equal(p.looks.body.background, 'rgb(1, 2, 3)');
      assert.ok(report.summary.fixture[s].includes('body (background)'), report.summary.fixture[s].join('; '));
    }
    assert.deepEqual(report.summary.fixture.missing, [['.no-such-class-anywhere', 1]]);

    const md = fs.readFileSync(gallery, 'utf8');
    assert.match(md, /## Fixture theme/);
    assert.match(md, /2 of 3 style rules matched/);
    const images = [...md.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1]);
    assert.equal(images.length, 12, 'per width: folio and theme, light and dark');
    for (const src of images) assert.ok(fs.existsSync(path.resolve(path.dirname(gallery), src)), src);
  });
});
