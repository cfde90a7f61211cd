/**
 * GET /docs in a real browser: Debian's chromium driven by playwright-core loads the page from
 * the running server (the renderer comes from node_modules, no network beyond the server),
 * every family's operations are listed, one operation expands, and a screenshot is saved
 * under var/. Without a chromium binary the test says so and is skipped (CI installs it).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { chromium, type BrowserContext } from 'playwright-core';
import { openApiDocument } from '../../http/openapi/index.js';
import { startTestService, withoutProcesses, type TestService } from '../support/http.js';
import { newClient } from '../connect/support.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOT = path.resolve('var/docs-screenshot.png');

describe('API reference page /docs in a real browser', function () {
  this.timeout(120000);
  let t: TestService;
  let browser: BrowserContext | null = null;
  let profile = '';

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.log('      skipped: no chromium');
      this.skip();
    }
    t = await startTestService({ processes: withoutProcesses, startWorkers: false });
    profile = mkdtempSync(path.join(tmpdir(), 'docs-browser-'));
    // A fresh profile directory (--user-data-dir) per run.
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 1600 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('lists every family\'s operations, expands one, and saves a screenshot', async () => {
    const page = await browser!.newPage();
    const outside: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith(t.url) && !req.url().startsWith('data:')) outside.push(req.url());
    });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    const res = await page.goto(`${t.url}/docs`);
    expect(res?.status()).to.equal(200);
    await page.waitForSelector('.opblock', { timeout: 60000 });

    const doc = openApiDocument() as { paths: Record<string, Record<string, { tags: string[] }>> };
    const listed = await page.$$eval('.opblock', (blocks) =>
      blocks.map((b) => {
        const method = [...b.classList].find((c) => /^opblock-(get|post|put|patch|delete)$/.test(c))?.slice('opblock-'.length) ?? '';
        const p = b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
        return `${method} ${p}`;
      }),
    );
    const tags = new Set<string>();
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        expect(listed, `${method} ${p} is listed`).to.include(`${method} ${p}`);
        tags.add(op.tags[0]!);
      }
    }
    const shownTags = await page.$$eval('.opblock-tag', (hs) => hs.map((h) => h.getAttribute('data-tag')));
    expect(shownTags).to.include.members([...tags]);
    expect(shownTags).to.include.members(['Unify', 'Documents', 'Connect', 'Credits', 'System']);

    // Expand the Unify submit operation: its description, parameters and responses appear.
    const submit = page.locator('.opblock-post', { has: page.locator('.opblock-summary-path[data-path="/api/v3/unify"]') }).first();
    await submit.locator('.opblock-summary').first().click();
    await submit.locator('.opblock-body').waitFor({ state: 'visible', timeout: 30000 });
    const body = await submit.locator('.opblock-body').innerText();
    expect(body).to.contain('new-api');
    expect(body).to.contain('422');
    expect(await submit.getAttribute('class')).to.contain('is-open');

    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(existsSync(SCREENSHOT)).to.equal(true);
    expect(outside, 'requests outside the server').to.deep.equal([]);
    expect(errors, 'page errors').to.deep.equal([]);
  });

  it('shows no empty tag, and has a favicon', async () => {
    const page = await browser!.newPage();
    await page.goto(`${t.url}/docs`);
    await page.waitForSelector('.opblock', { timeout: 60000 });
    const sections = await page.$$eval('.opblock-tag-section', (ss) => ss.map((s) => ({ tag: s.querySelector('.opblock-tag')?.getAttribute('data-tag'), operations: s.querySelectorAll('.opblock').length })));
    expect(sections.length).to.be.greaterThan(5);
    expect(sections.filter((s) => s.operations === 0), 'tags without an operation').to.deep.equal([]);
    const icons = await page.$$eval('link[rel="icon"]', (ls) => ls.map((l) => (l as unknown as { href: string }).href));
    expect(icons.length).to.be.greaterThan(0);
    for (const href of [...icons, `${t.url}/favicon.ico`]) {
      const r = await page.request.get(href);
      expect(r.status(), href).to.equal(200);
      expect(r.headers()['content-type'], href).to.equal('image/png');
    }
  });

  it('submits the page\'s example invoice with "Try it out" and gets 200', async () => {
    // The examples' source: a sandbox company "Acme ERP" v1 of a fresh workspace.
    const c = await newClient(t);
    await c.onboard({ sourceName: 'Acme ERP', sourceVersion: 'v1' });
    const page = await browser!.newPage();
    await page.goto(`${t.url}/docs`);
    await page.waitForSelector('.opblock', { timeout: 60000 });
    await page.evaluate((key) => (globalThis as unknown as { ui: { preauthorizeApiKey(name: string, value: string): void } }).ui.preauthorizeApiKey('bearerAuth', key), c.apiKey);

    const submit = page.locator('.opblock-post', { has: page.locator('.opblock-summary-path[data-path="/api/v3/unify"]') }).first();
    await submit.locator('.opblock-summary').first().click();
    await submit.locator('.try-out__btn').click();
    await submit.locator('tr[data-param-name="new-api"] select').selectOption('true');
    const requestBody = await submit.locator('.body-param textarea').inputValue();
    expect(JSON.parse(requestBody), 'the first example is the UAE tax invoice').to.deep.equal(JSON.parse(JSON.stringify((await import('../../http/openapi/schema.js')).exampleFile('ae-tax-invoice.json'))));
    await submit.locator('.execute').click();
    const status = submit.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor({ state: 'visible', timeout: 60000 });
    const responseText = await submit.locator('.live-responses-table tbody .response-col_description').first().innerText();
    expect((await status.innerText()).trim(), responseText.slice(0, 500)).to.equal('200');
    expect(responseText).to.contain('"kind": "document"');
  });
});
