import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedSince, get } from '../helpers/http.js';
import { ROOT } from '../helpers/paths.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';

// The map explorer (/explore) end to end in Debian's Chromium, driven by Playwright: it loads, pans, filters and
// opens a listing, and flashes the live changes of a sync. Any console error, uncaught exception or request to
// another origin fails it. The screenshot goes to .cache/test-output/explore.png.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUTPUT = join(ROOT, '.cache', 'test-output');
const DAY = 24 * 3_600_000;

let rt: TestRuntime;
let base: string;
let key: string;
/** A secret key, for the test's own expectations (the publishable key is refused without the page's origin). */
let secret: string;
let browser: Browser;
let page: Page;
let now = Date.now();
const problems: string[] = [];
const apiCalls: URL[] = [];

beforeAll(async () => {
  rt = await startTestRuntime(
    { CHANGES_STREAM_POLL_SECONDS: '0.05' },
    { withoutRentHop: true, clock: () => new Date(now), manualMarketClock: true },
  );
  base = await rt.app.listen({ port: 0, host: '127.0.0.1' });
  // The key docs/explorer.md tells a person to issue: publishable, limited to what the page calls.
  const operations = [
    'listAreas',
    'searchRentals',
    'searchSales',
    'clusterRentals',
    'clusterSales',
    'getProperty',
    'getComparables',
    'getPropertyEstimate',
    'getMarket',
    'getUsage',
    'streamChanges',
  ];
  key = await rt.key('business', { origins: [base], label: 'explorer test', operations });
  secret = await rt.key('pro');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Software WebGL (SwiftShader) for MapLibre; no background traffic (the machine's network is closed).
    args: [
      '--no-sandbox',
      '--use-angle=swiftshader',
      '--enable-unsafe-swiftshader',
      '--ignore-gpu-blocklist',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} from ${response.url()}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol === 'data:' || url.protocol === 'blob:') return;
    if (url.origin !== base) problems.push(`request to another origin: ${request.url()}`);
    else if (url.pathname.startsWith('/v1/')) apiCalls.push(url);
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await rt?.close();
});

/** The page's status line once the search it shows has answered. */
async function searched(p: Page): Promise<string> {
  await p.waitForFunction(
    () => document.body.dataset.state === 'ready' && !document.querySelector('#status')!.textContent!.startsWith('Searching'),
  );
  return (await p.textContent('#status'))!;
}

/** The number the status line gives for the listings matching in view. */
const matching = (status: string) => Number(/^([\d,]+) /.exec(status)![1].replaceAll(',', ''));

describe('the map explorer', () => {
  it('without a key asks for one, and calls nothing', async () => {
    await page.goto(`${base}/explore`);
    await page.waitForFunction(() => document.body.dataset.state === 'needs-key');
    expect(await page.textContent('#status')).toMatch(/publishable key/);
    expect(await page.textContent('.hint code')).toContain(`--origins ${base}`);
    expect(apiCalls).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('draws the city and the listings in view, pans, finds a 2-bedroom rental in Williamsburg under $3,500 and opens it with its comparables', async () => {
    // The key given in the address of the page already open: it starts again with it, and the key leaves the
    // address (it is kept in the browser); the city's outlines and the listings are drawn.
    await page.goto(`${base}/explore#key=${key}`);
    await page.waitForURL(`${base}/explore`);
    const first = await searched(page);
    const inView = await page.evaluate(() => {
      const { map } = (window as any).explorer;
      const b = map.getBounds();
      return {
        bbox: [b.getWest(), b.getSouth(), b.getEast(), b.getNorth()].map((v: number) => v.toFixed(6)).join(','),
        boroughs: map.querySourceFeatures('boroughs').length,
      };
    });
    expect(inView.boroughs).toBeGreaterThan(0);
    const expectedInView = await get(rt.app, `/v1/search/rentals?bbox=${inView.bbox}&perPage=1`, secret);
    expect(matching(first)).toBe(expectedInView.body.meta.total);
    expect(expectedInView.body.meta.total).toBeGreaterThan(100);
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, 'explore-city.png') });

    // Pan: a new search of the new bounds.
    const before = apiCalls.length;
    await page.evaluate(() => (window as any).explorer.map.panBy([300, 0], { duration: 0 }));
    await page.waitForFunction((n) => (window as any).explorer.state.searches > n, 1);
    await searched(page);
    const pannedTo = apiCalls
      .slice(before)
      .filter((u) => u.pathname === '/v1/search/rentals')
      .at(-1)!;
    expect(pannedTo.searchParams.get('bbox')).not.toBe(inView.bbox);

    // Filter, through the panel's own controls: the map fits Williamsburg and searches it.
    await page.fill('#param-areas', 'williamsburg');
    await page.fill('#param-minBeds', '2');
    await page.fill('#param-maxBeds', '2');
    await page.fill('#param-maxPrice', '3500');
    // At or under the estimate of what each is worth.
    await page.fill('#param-maxPricePosition', '0');
    await page.selectOption('#param-sort', 'PRICE');
    await page.selectOption('#param-sortDir', 'ASC');
    await page.press('#param-maxPrice', 'Tab');
    await page.waitForFunction(() => location.search.includes('maxPrice=3500') && location.search.includes('sortDir=ASC'));
    await page.waitForFunction(() => {
      const calls = performance.getEntriesByType('resource').map((e) => e.name);
      return calls.some(
        (u) =>
          u.includes('/v1/search/rentals') && u.includes('areas=williamsburg') && u.includes('maxPrice=3500') && u.includes('sortDir=ASC'),
      );
    });
    const filtered = await searched(page);
    const last = apiCalls.filter((u) => u.pathname === '/v1/search/rentals').at(-1)!;
    expect(Object.fromEntries([...last.searchParams].filter(([name]) => name !== 'bbox'))).toEqual({
      areas: 'williamsburg',
      minBeds: '2',
      maxBeds: '2',
      maxPrice: '3500',
      maxPricePosition: '0',
      sort: 'PRICE',
      sortDir: 'ASC',
      format: 'geojson',
      perPage: '500',
    });
    const expected = await get(
      rt.app,
      `/v1/search/rentals?areas=williamsburg&minBeds=2&maxBeds=2&maxPrice=3500&maxPricePosition=0&sort=PRICE&sortDir=ASC&bbox=${last.searchParams.get('bbox')}&perPage=500`,
      secret,
    );
    expect(expected.body.meta.total).toBeGreaterThan(0);
    expect(matching(filtered)).toBe(expected.body.meta.total);
    const listed = await page.$$eval('#results button', (buttons) => buttons.map((b) => (b as HTMLElement).dataset.id));
    expect(listed).toEqual(expected.body.data.slice(0, 25).map((l: { id: string }) => l.id));

    // Open the cheapest that has a point of its own on the map (not one of several at one address) with a click on it.
    const at = (l: { geoPoint: { longitude: number; latitude: number } | null }) =>
      l.geoPoint ? `${l.geoPoint.longitude},${l.geoPoint.latitude}` : null;
    const cheapest = expected.body.data.find((l: any) => at(l) && expected.body.data.filter((o: any) => at(o) === at(l)).length === 1);
    await page.evaluate(
      ([lon, lat]) => (window as any).explorer.map.jumpTo({ center: [lon, lat], zoom: 17 }),
      [cheapest.geoPoint.longitude, cheapest.geoPoint.latitude],
    );
    await searched(page);
    await page.waitForFunction(() => (window as any).explorer.map.queryRenderedFeatures({ layers: ['listings'] }).length > 0);
    const point = await page.evaluate((id) => {
      const { map } = (window as any).explorer;
      const feature = map.queryRenderedFeatures({ layers: ['listings'] }).find((f: any) => String(f.properties.id) === id);
      if (!feature) return null;
      const at = map.project(feature.geometry.coordinates);
      const canvas = map.getCanvas().getBoundingClientRect();
      return { x: canvas.left + at.x, y: canvas.top + at.y };
    }, cheapest.id);
    expect(point).not.toBeNull();
    await page.mouse.click(point!.x, point!.y);
    await page.waitForSelector(`#listing h2[data-listing-id="${cheapest.id}"]`);
    await page.waitForSelector('#comparables tr');
    const comparables = await get(rt.app, `/v1/property/${cheapest.id}/comparables?limit=5`, secret);
    expect(await page.$$eval('#comparables tr', (rows) => rows.length)).toBe(comparables.body.data.length);
    const detail = await get(rt.app, `/v1/property/${cheapest.id}`, secret);
    const market = await get(rt.app, `/v1/market?kind=rental&areas=${detail.body.data.areaId}`, secret);
    expect(await page.textContent('#market')).toContain(market.body.data.activeCount.toLocaleString('en-US'));
    const estimate = (await get(rt.app, `/v1/property/${cheapest.id}/estimate`, secret)).body.data;
    const shown = await page.textContent('#estimate');
    if (estimate.estimate === null) expect(shown).toContain(estimate.reason);
    else expect(shown).toContain(`$${estimate.estimate.toLocaleString('en-US')}`);

    // The screenshot: the listing open, over its neighbourhood's matches.
    await page.evaluate(() => (window as any).explorer.map.zoomTo(14, { duration: 0 }));
    await searched(page);
    await page.screenshot({ path: join(OUTPUT, 'explore.png') });
    expect(problems).toEqual([]);
  }, 120_000);

  it('flashes the listings a sync changes, from the change stream the page opened with its publishable key', async () => {
    await page.waitForFunction(() => (window as any).explorer.state.stream?.readyState === 1);
    const start = await rt.changes.latestId();
    rt.marketClock!.advance(DAY);
    now += DAY;
    await rt.syncer.syncScope('rental', 200);
    const events = (await feedSince(rt.app, secret, start)).filter((e) => e.kind === 'rental' && e.type.startsWith('listing.'));
    expect(events.length).toBeGreaterThan(0);
    await page.waitForFunction((n) => Number(document.body.dataset.changesSeen ?? 0) >= n, events.length);
    expect(Number(await page.evaluate(() => document.body.dataset.changesSeen))).toBe(events.length);
    const stream = apiCalls.find((u) => u.pathname === '/v1/changes/stream')!;
    expect(stream.searchParams.get('access_token')).toBe(key);
    expect(problems).toEqual([]);
  }, 120_000);
});
