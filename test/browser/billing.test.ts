import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorOf } from '../helpers/billing.js';
import { get } from '../helpers/http.js';
import { ROOT } from '../helpers/paths.js';
import { startTestRuntime, type TestRuntime } from '../helpers/runtime.js';
import { waitFor } from '../helpers/wait.js';

// A subscription bought, upgraded and canceled end to end in Debian's Chromium, against the local Stripe emulator as
// `npm start` runs it: /pricing, Checkout with Stripe's test cards, the key on the success page, /account, the customer
// portal. The events reach the service over its webhook, signed and sent by the emulator. Any console error (a
// Content-Security-Policy refusal among them) or uncaught exception fails it. Screenshots go to .cache/test-output/.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUTPUT = join(ROOT, '.cache', 'test-output');

let rt: TestRuntime;
let base: string;
let browser: Browser;
let page: Page;
const problems: string[] = [];
/** Answers of 400 and above the browser loaded, but its icon. */
const failures: string[] = [];

beforeAll(async () => {
  rt = await startTestRuntime({}, { withoutRentHop: true });
  base = await rt.app.listen({ port: 0, host: '127.0.0.1' });
  emulatorOf(rt).forwardTo(`${base}/billing/stripe/webhook`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // A failed load is told by its response, below (the console says only its status).
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      problems.push(`console error: ${message.text()}`);
  });
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (response.status() >= 400 && url.pathname !== '/favicon.ico') failures.push(`${response.status()} ${url.pathname}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('request', (request) => {
    const origin = new URL(request.url()).origin;
    if (origin !== base && origin !== emulatorOf(rt).url) problems.push(`request to another origin: ${request.url()}`);
  });
  mkdirSync(OUTPUT, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await rt?.close();
});

/** Types a card on the emulator's Checkout page and submits it. */
async function pay(card: string): Promise<void> {
  await page.fill('#email', 'subscriber@example.com');
  await page.fill('#cardNumber', card);
  await page.fill('#expiry', '12 / 34');
  await page.fill('#cvc', '123');
  await page.fill('#name', 'A Subscriber');
  await page.click('#submit');
}

const usage = (key: string) => get(rt.app, '/v1/usage', key);

describe('a subscription bought in a browser', () => {
  let key: string;

  it('/pricing shows the four plans and their limits; Checkout declines 4000 0000 0000 0341 with no key, takes 4242 4242 4242 4242 and shows the key once', async () => {
    await page.goto(`${base}/pricing`);
    for (const plan of ['free', 'starter', 'pro', 'business'] as const) {
      const limits = rt.config.plans[plan];
      const column = (await page.locator(`td[data-plan="${plan}"]`).allTextContents()).join(' ');
      for (const figure of [limits.maxPerPage, limits.perMinute, limits.perMonth])
        expect(column, plan).toContain(figure.toLocaleString('en-US'));
    }
    expect(await page.locator('button[data-plan="free"]').count()).toBe(0);
    await page.screenshot({ path: join(OUTPUT, 'billing-pricing.png'), fullPage: true });
    const keysBefore = (await rt.keys.list()).length;
    await page.locator('button[data-plan="starter"]').first().click();
    await page.waitForURL(`${emulatorOf(rt).url}/c/pay/**`);
    await pay('4000 0000 0000 0341');
    await page.waitForSelector('.error');
    expect(await page.textContent('.error')).toBe('Your card was declined.');
    expect((await rt.keys.list()).length).toBe(keysBefore);
    await pay('4242 4242 4242 4242');
    await page.waitForURL(`${base}/billing/success?session_id=**`);
    key = (await page.textContent('#key'))!.trim();
    expect(key).toMatch(/^SERVICE_[0-9a-f-]{36}$/);
    await page.screenshot({ path: join(OUTPUT, 'billing-success.png') });
    // Shown once: the same address again says so.
    await page.reload();
    expect(await page.textContent('h1')).toBe('This key was shown already');
    expect(await page.content()).not.toContain(key);
    expect((await rt.keys.list()).length).toBe(keysBefore + 1);
  });

  it('the key searches at the starter cap; /account shows its plan, its usage by day and its last use', async () => {
    const search = await get(rt.app, '/v1/search/rentals?perPage=500', key);
    expect(search.body.meta.perPage).toBe(50);
    await page.goto(`${base}/account`);
    await page.fill('#key', key);
    await page.click('button[type="submit"]');
    await page.waitForSelector('#plan');
    expect(await page.textContent('#plan')).toBe('Starter');
    expect(await page.textContent('#status')).toContain('active');
    const today = new Date().toISOString().slice(0, 10);
    expect(await page.locator(`rect[data-day="${today}"]`).getAttribute('data-used')).toBe('1');
    expect(await page.textContent('#used')).toBe('1');
    expect(await page.textContent('#last-used')).toContain(today);
    await page.screenshot({ path: join(OUTPUT, 'billing-account.png') });
  });

  it('an upgrade in the customer portal raises the cap at once', async () => {
    await page.click('#manage-billing');
    await page.waitForURL(`${emulatorOf(rt).url}/p/session/**`);
    const pro = rt.config.billing.stripe.prices.pro[0];
    await page.selectOption('select[name="price"]', pro);
    await page.click('button.update');
    await page.waitForURL(`${emulatorOf(rt).url}/p/session/**`);
    await waitFor(async () => (await usage(key)).body.data?.plan === 'pro', 'the upgrade applied');
    expect((await get(rt.app, '/v1/search/rentals?perPage=500', key)).body.meta.perPage).toBe(500);
  });

  it('a cancellation in the portal ends the key: 403 SUBSCRIPTION_INACTIVE', async () => {
    await page.click('button.cancel');
    await page.waitForSelector('text=Canceled on');
    await waitFor(async () => (await usage(key)).status === 403, 'the cancellation applied');
    const res = await get(rt.app, '/v1/search/rentals', key);
    expect({ status: res.status, code: res.body.code, subscriptionStatus: res.body.subscriptionStatus }).toEqual({
      status: 403,
      code: 'SUBSCRIPTION_INACTIVE',
      subscriptionStatus: 'canceled',
    });
    await page.click('#return');
    await page.waitForURL(`${base}/account`);
    expect(problems).toEqual([]);
    // The one refusal on the way: the success page asked again, its key shown already.
    expect(failures).toEqual(['410 /billing/success']);
  });
});
