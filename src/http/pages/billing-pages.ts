import type { Plan, PlanLimits } from '../../config.js';
import type { ProviderPrice } from '../../billing/provider.js';
import { keyAccess } from '../../domain/subscription.js';
import { html, type Raw } from './html.js';
import { usageChart } from './usage-chart.js';

const number = (n: number) => n.toLocaleString('en-US');
const title = (plan: string) => plan[0].toUpperCase() + plan.slice(1);

/** `$79.00 a month`, or the price's id when the provider could not say. */
export function priceLabel(price: ProviderPrice | { id: string }): string {
  if (!('unitAmount' in price) || price.unitAmount === null) return price.id;
  const amount = (price.unitAmount / 100).toLocaleString('en-US', { style: 'currency', currency: price.currency.toUpperCase() });
  return price.interval ? `${amount} a ${price.interval}` : amount;
}

/** One plan as the pricing page shows it: its limits, the endpoints it adds, and the prices it is sold at. */
export interface PlanOffer {
  plan: Plan;
  limits: PlanLimits;
  /** `GET /v1/...` paths with their summaries: what this plan reaches that the plan before it does not. */
  adds: { path: string; summary: string }[];
  /** Empty: not sold (free, or no price configured). */
  prices: (ProviderPrice | { id: string })[];
}

/** The pricing page: the four plans side by side, each paid plan with a Subscribe button a price. */
export function pricingPage(offers: PlanOffer[]): Raw {
  const cell = (o: PlanOffer, content: Raw | string) => html`<td data-plan="${o.plan}">${content}</td>`;
  const row = (label: string, content: (o: PlanOffer) => Raw | string) =>
    html`<tr><th scope="row">${label}</th>${offers.map((o) => cell(o, content(o)))}</tr>`;
  return html`<h1>Plans</h1>
<p>New York City's sale and rental listings, buildings, areas and recorded sales, as a JSON API. Searches work without a
key, as the Free plan; every other endpoint needs a key, which a subscription gives you at once.</p>
<table><thead><tr><th></th>${offers.map((o) => html`<th scope="col">${title(o.plan)}</th>`)}</tr></thead><tbody>
${row('Price', (o) => (o.plan === 'free' ? 'Free, without a key' : o.prices.length ? o.prices.map(priceLabel).join(' or ') : 'Not sold here'))}
${row('Results a page (perPage)', (o) => number(o.limits.maxPerPage))}
${row('Requests a minute', (o) => number(o.limits.perMinute))}
${row('Requests a month', (o) => number(o.limits.perMonth))}
${row('Endpoints', (o) => {
  const before = offers[offers.indexOf(o) - 1];
  return html`${before ? html`<p class="muted">Everything in ${title(before.plan)}, and:</p>` : ''}<ul class="endpoints">${o.adds.map((a) => html`<li><code>GET ${a.path}</code> ${a.summary}</li>`)}</ul>`;
})}
<tr><th></th>${offers.map((o) =>
    cell(
      o,
      html`${o.prices.map(
        (
          p,
        ) => html`<form method="post" action="/billing/checkout"><input type="hidden" name="plan" value="${o.plan}"><input type="hidden" name="price" value="${p.id}">
<button type="submit" data-plan="${o.plan}">Subscribe${o.prices.length > 1 ? html` (${priceLabel(p)})` : ''}</button></form>`,
      )}`,
    ),
  )}</tr></tbody></table>
<p class="muted">Payments are taken by Stripe. Manage or cancel a subscription, and see a key's usage, at <a href="/account">/account</a>.</p>`;
}

/** The success page the first time: the key, shown once. */
export function keyShownPage(key: string, plan: Plan): Raw {
  return html`<h1>Your API key</h1>
<p>Your ${title(plan)} subscription is active. This is its key:</p>
<p><code id="key">${key}</code></p>
<p class="notice">Keep it now: it is shown this once. Only a digest of it is stored, so no one can show it again.</p>
<p>Send it as a bearer token:</p>
<pre><code>curl -H "Authorization: Bearer ${key}" "/v1/search/rentals?areas=100&amp;perPage=50"</code></pre>
<p>See its usage, manage billing or rotate it at <a href="/account">/account</a>.</p>`;
}

/** The success page on a later visit: the key was shown, and how to get a new one. */
export function keyAlreadyShownPage(revealedAt: string | null): Raw {
  return html`<h1>This key was shown already</h1>
<p>The key of this subscription was shown${revealedAt ? html` on ${revealedAt.slice(0, 16).replace('T', ' ')} UTC` : ''}. Only a digest of it
is stored, so it cannot be shown again.</p>
<p>To get a new key, open <a href="/account">/account</a> with the key and press <em>Rotate key</em>: the new key is
shown once, and the old one keeps working for a while beside it. If the key is lost, the service's operator can
rotate it for you (<code>nyc-listings keys rotate &lt;id&gt;</code>).</p>`;
}

/** The account page's form: a key pasted, posted to /account. */
export function accountFormPage(error?: string): Raw {
  return html`<h1>Your account</h1>${error ? html`<p class="error">${error}</p>` : ''}
<form method="post" action="/account"><label for="key">API key</label>
<input id="key" name="key" autocomplete="off" placeholder="SERVICE_..." required>
<p><button type="submit">Show my account</button></p></form>`;
}

/** What the account page shows of a key. Instants are UTC ISO 8601. */
export interface AccountView {
  key: string;
  plan: Plan;
  limits: PlanLimits;
  source: string;
  label: string | null;
  state: string;
  subscription: { status: string; currentPeriodEnd: string | null; cancelAt: string | null } | null;
  month: string;
  used: number;
  days: { day: string; used: number }[];
  lastUsedAt: string | null;
  replacedAt: string | null;
  expiresAt: string | null;
}

/** The account page of a key: plan, status, this month's usage with its chart by day, last use, and its two buttons. */
export function accountPage(view: AccountView): Raw {
  const status = view.subscription?.status ?? null;
  const access = status ? keyAccess(status) : 'works';
  const hidden = html`<input type="hidden" name="key" value="${view.key}">`;
  return html`<h1>Your account</h1>
<table><tbody>
<tr><th scope="row">Plan</th><td id="plan">${title(view.plan)}</td></tr>
<tr><th scope="row">Status</th><td id="status">${status ?? (view.source === 'stripe' ? 'unknown' : 'complimentary key (issued by the operator)')}${view.state !== 'active' ? html` · ${view.state}` : ''}</td></tr>
${view.subscription?.currentPeriodEnd ? html`<tr><th scope="row">${view.subscription.cancelAt ? 'Ends' : 'Renews'}</th><td>${(view.subscription.cancelAt ?? view.subscription.currentPeriodEnd).slice(0, 10)}</td></tr>` : ''}
<tr><th scope="row">This month (${view.month}, UTC)</th><td><span id="used">${number(view.used)}</span> of ${number(view.limits.perMonth)} requests</td></tr>
<tr><th scope="row">Last used</th><td id="last-used">${view.lastUsedAt ? `${view.lastUsedAt.slice(0, 16).replace('T', ' ')} UTC` : 'never'}</td></tr>
<tr><th scope="row">Limits</th><td>${number(view.limits.maxPerPage)} results a page, ${number(view.limits.perMinute)} requests a minute</td></tr>
</tbody></table>
${access === 'grace' ? html`<p class="notice" id="notice">The last payment failed. Stripe is retrying it, and the key keeps working meanwhile: update the payment method under Manage billing.</p>` : ''}
${access === 'refused' ? html`<p class="notice" id="notice">This key no longer works: its subscription is ${status}. A new subscription at <a href="/pricing">/pricing</a> comes with a new key.</p>` : ''}
${view.replacedAt ? html`<p class="notice">This key was replaced by a rotation on ${view.replacedAt.slice(0, 16).replace('T', ' ')} UTC; it works until ${view.expiresAt?.slice(0, 16).replace('T', ' ')} UTC.</p>` : ''}
<h2>Requests a day</h2>${usageChart(view.month, view.days)}
<p>
${view.subscription ? html`<form method="post" action="/billing/portal" style="display:inline">${hidden}<button type="submit" id="manage-billing">Manage billing</button></form>` : ''}
${view.replacedAt || access === 'refused' ? '' : html`<form method="post" action="/account/keys/rotate" style="display:inline">${hidden}<button type="submit" class="secondary" id="rotate-key">Rotate key</button></form>`}
</p>`;
}

/** The page after a rotation: the new key, once, and until when the old one works. */
export function keyRotatedPage(key: string, previousExpiresAt: string): Raw {
  return html`<h1>Your new API key</h1>
<p><code id="key">${key}</code></p>
<p class="notice">Keep it now: it is shown this once. The old key keeps working until ${previousExpiresAt.slice(0, 16).replace('T', ' ')} UTC, then only this one does.</p>
<p><a href="/account">Back to your account</a></p>`;
}
