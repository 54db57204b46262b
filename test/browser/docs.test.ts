import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { test } from 'node:test';
import { launchChromium } from './chromium.js';
import { buildApp } from '../../src/app.js';

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url);

test('the docs page, in a real browser: every operation listed, one tried live, nothing loaded from outside', async (t) => {
  const app = await buildApp({}, { logger: false });
  t.after(() => app.close());
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const browser = await launchChromium();
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const outside: string[] = [];
  const errors: string[] = [];
  const loaded: string[] = [];
  page.on('request', (request) => {
    loaded.push(request.url());
    if (!request.url().startsWith(base) && !request.url().startsWith('data:')) outside.push(request.url());
  });
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });

  await page.goto(`${base}/api/docs`);
  await page.locator('.opblock').first().waitFor();
  // The service's own page: its name first, no framework logo, no "Explore" bar to load another document.
  assert.match(await page.locator('.information-container .title').innerText(), /^JSON utility service/);
  assert.equal(await page.locator('.topbar, .download-url-input, .topbar-wrapper img').count(), 0);
  assert.equal(await page.title(), 'JSON utility service: API reference');
  // One name for the OpenAPI document: the page loads it from /api/openapi.json and links it there.
  assert.ok(loaded.includes(`${base}/api/openapi.json`), loaded.join('\n'));
  assert.ok(!loaded.includes(`${base}/api/docs/json`));
  assert.equal((await page.locator('.information-container .url').innerText()).trim(), '/api/openapi.json');
  const listed = await page.locator('.opblock-summary-path, .opblock-summary-path__deprecated').allInnerTexts();
  const expected = [
    '/api/sort',
    '/api/isEven',
    '/api/isEven/{number}',
    '/api/isOdd',
    '/api/isOdd/{number}',
    '/api/isNumber',
    '/api/isNumber/{number}',
    '/api/toString',
    '/api/stringSplit',
    '/api/batch',
    '/api/stream',
    '/sort',
    '/is-odd',
    '/is-even',
    '/toString',
  ];
  assert.deepEqual(listed.map((path) => path.replace(/\u200b/g, '')).sort(), expected.sort());
  // The named schemas, each once: the batch's discriminated items and the stream's lines among them.
  const schemas = await page
    .locator('section.models .json-schema-2020-12[data-json-schema-level="0"] > .json-schema-2020-12-head .json-schema-2020-12__title')
    .allInnerTexts();
  for (const name of ['Problem', 'SortRequest', 'BatchItem', 'SortItem', 'BatchAnswer', 'StreamLine', 'StreamAnswerLine', 'StreamShutdownLine']) {
    assert.ok(schemas.includes(name), `${name} in the page's schemas: ${schemas.join(', ')}`);
  }
  // UPDATE_DOCS_SCREENSHOT=1 npm test: the README's pictures, the page's first screen with the operations and its schemas.
  if (process.env.UPDATE_DOCS_SCREENSHOT === '1') {
    await page.screenshot({ path: new URL('../../docs/api-docs.png', import.meta.url).pathname });
    await page.locator('section.models').screenshot({ path: new URL('../../docs/api-schemas.png', import.meta.url).pathname });
  }

  const operation = page.locator('#operations-parity-isEven');
  await operation.locator('.opblock-summary').click();
  const sent = page.waitForRequest((request) => request.url() === `${base}/api/isEven` && request.method() === 'POST');
  await operation.getByRole('button', { name: 'Execute' }).click();
  assert.equal((await sent).postData()?.replace(/\s/g, ''), '{"input":4}');
  const status = operation.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor();
  assert.equal((await status.innerText()).trim(), '200');
  assert.deepEqual(JSON.parse(await operation.locator('.live-responses-table .microlight').first().innerText()), { ret: true });

  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: new URL('docs-page.png', ARTIFACTS).pathname, fullPage: true });
  await page.screenshot({ path: new URL('docs-top.png', ARTIFACTS).pathname });
  assert.deepEqual(outside, []);
  assert.deepEqual(errors, []);
});
