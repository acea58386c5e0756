import { escapeHtml } from '../../lib/escape-html.js';
import type { EmulatedCheckoutSession, EmulatedPrice, EmulatedProduct, EmulatedSubscription } from './records.js';

/** `$79.00 per month`. */
export function priceText(price: EmulatedPrice): string {
  return `$${(price.unitAmount / 100).toFixed(2)} per ${price.interval}`;
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f9fc;color:#1a1f36}
main{max-width:28rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 2px 8px #0002}
label{display:block;margin:.75rem 0 .25rem}input,select{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}
button{margin-top:1rem;width:100%;padding:.75rem;font:inherit;background:#635bff;color:#fff;border:0;border-radius:6px}
.error{color:#c0123c}.notice{font-size:.85rem;color:#697386}.danger{background:#c0123c}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}
<p class="notice">Local Stripe emulator, test mode: nothing is charged.</p></main></body></html>`;
}

/** Checkout's payment page for an open session, with the error of the last attempt when there was one. */
export function checkoutPage(
  session: EmulatedCheckoutSession,
  items: { price: EmulatedPrice; product: EmulatedProduct }[],
  form: { email?: string; error?: string },
): string {
  const lines = items.map((i) => `<p><strong>${escapeHtml(i.product.name)}</strong>: ${escapeHtml(priceText(i.price))}</p>`).join('');
  return page(
    'Checkout',
    `<h1>Subscribe</h1>${lines}
<p class="notice">Test card: 4242 4242 4242 4242, any future date and CVC. Declined: 4000 0000 0000 0341.</p>
${form.error ? `<p class="error" role="alert">${escapeHtml(form.error)}</p>` : ''}
<form method="post" action="/c/pay/${escapeHtml(session.id)}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="email" value="${escapeHtml(form.email ?? session.customerEmail ?? '')}">
<label for="cardNumber">Card number</label><input id="cardNumber" name="cardNumber" inputmode="numeric" autocomplete="cc-number" placeholder="1234 1234 1234 1234">
<label for="expiry">Expiry</label><input id="expiry" name="expiry" autocomplete="cc-exp" placeholder="MM / YY">
<label for="cvc">CVC</label><input id="cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc" placeholder="CVC">
<label for="name">Name on card</label><input id="name" name="name" autocomplete="cc-name">
<button type="submit" id="submit">Subscribe</button></form>
${session.cancelUrl ? `<p><a href="${escapeHtml(session.cancelUrl)}">Back</a></p>` : ''}`,
  );
}

/** A page that says a session or portal link is no longer usable. */
export function endedPage(text: string): string {
  return page('Stripe', `<h1>${escapeHtml(text)}</h1>`);
}

/** The customer portal: the customer's subscriptions, each with a plan change and a cancellation, and the way back. */
export function portalPage(input: {
  secret: string;
  email: string;
  returnUrl: string | null;
  subscriptions: { sub: EmulatedSubscription; price: EmulatedPrice; product: EmulatedProduct }[];
  choices: { price: EmulatedPrice; product: EmulatedProduct }[];
  cancelAtPeriodEnd: boolean;
}): string {
  const date = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
  const subscriptions = input.subscriptions
    .map(({ sub, price, product }) => {
      const state =
        sub.status === 'canceled'
          ? `Canceled on ${date(sub.endedAt ?? sub.canceledAt ?? sub.created)}`
          : sub.cancelAtPeriodEnd
            ? `Cancels on ${date(sub.cancelAt ?? sub.currentPeriodEnd)}`
            : `Renews on ${date(sub.currentPeriodEnd)} (${sub.status})`;
      const options = input.choices
        .filter((c) => c.price.id !== price.id)
        .map((c) => `<option value="${escapeHtml(c.price.id)}">${escapeHtml(`${c.product.name}, ${priceText(c.price)}`)}</option>`)
        .join('');
      const actions =
        sub.status === 'canceled'
          ? ''
          : `<form method="post" action="/p/session/${escapeHtml(input.secret)}/update">
<input type="hidden" name="subscription" value="${escapeHtml(sub.id)}">
<label for="price-${escapeHtml(sub.id)}">Update plan</label><select id="price-${escapeHtml(sub.id)}" name="price">${options}</select>
<button type="submit" class="update">Update plan</button></form>
${
  sub.cancelAtPeriodEnd
    ? ''
    : `<form method="post" action="/p/session/${escapeHtml(input.secret)}/cancel">
<input type="hidden" name="subscription" value="${escapeHtml(sub.id)}">
<button type="submit" class="danger cancel">Cancel plan${input.cancelAtPeriodEnd ? ' at the end of the period' : ''}</button></form>`
}`;
      return `<section data-subscription="${escapeHtml(sub.id)}"><h2>${escapeHtml(product.name)}</h2>
<p>${escapeHtml(priceText(price))}. <span class="state">${escapeHtml(state)}</span></p>${actions}</section>`;
    })
    .join('');
  return page(
    'Billing',
    `<h1>Billing</h1><p>${escapeHtml(input.email)}</p>${subscriptions || '<p>No subscriptions.</p>'}
${input.returnUrl ? `<p><a id="return" href="${escapeHtml(input.returnUrl)}">Return</a></p>` : ''}`,
  );
}
