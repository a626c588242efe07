// Headless Chromium (the system's /usr/bin/chromium) through puppeteer-core,
// and a page wrapper that records console errors, uncaught exceptions and
// Content-Security-Policy violations.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const puppeteer = require('puppeteer-core');

const kChromium = process.env.FOLIO_CHROMIUM || '/usr/bin/chromium';

function launch() {
  return puppeteer.launch({
    executablePath: kChromium,
    headless: true,
    pipe: true,
    protocolTimeout: 180000,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--disable-extensions',
      '--font-render-hinting=none', '--disable-background-networking'],
  });
}

// A fresh incognito-like context per call, so storage starts empty.
async function newPage(browser, { width = 1280, height = 800, mobile = false, dpr = 1, scheme = 'light', js = true } = {}) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  await page.setViewport({ width, height, deviceScaleFactor: dpr, isMobile: mobile, hasTouch: mobile });
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
  await page.setJavaScriptEnabled(js);
  const problems = [];
  page.on('console', (m) => {
    // A failed load is reported with its URL by the response handler below.
    if (/^Failed to load resource/.test(m.text())) return;
    // The tests' own pixel checks read canvases back.
    if (/willReadFrequently/.test(m.text())) return;
    if (m.type() === 'error' || m.type() === 'warn') problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !/\/favicon\.ico$/.test(r.url())) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => {
    if (!/ERR_ABORTED/.test(r.failure()?.errorText || '')) problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`);
  });
  if (js) {
    await page.evaluateOnNewDocument(() => {
      window.__csp = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
  }
  page.problems = problems;
  page.closeAll = () => context.close();
  return page;
}

// Everything the page reported that a clean page must not.
async function pageProblems(page) {
  const csp = await page.evaluate(() => window.__csp || []).catch(() => []);
  return page.problems.concat(csp.map((c) => `csp: ${c}`));
}

// Pixels of the canvas that differ from its first pixel (0 = blank).
function inkedPixels(page, selector) {
  return page.$eval(selector, (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i] !== d[0] || d[i + 1] !== d[1] || d[i + 2] !== d[2] || d[i + 3] !== d[3]) n++;
    }
    return n;
  });
}

function screenshotDir() {
  const dir = process.env.FOLIO_SCREENSHOT_DIR ||
    path.join(process.env.FOLIO_BIN_DIR ? path.dirname(process.env.FOLIO_BIN_DIR) : path.resolve(__dirname, '..'), 'screenshots');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(screenshotDir(), name + '.png') });
}

module.exports = { launch, newPage, pageProblems, inkedPixels, shot, screenshotDir };
