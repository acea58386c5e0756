import type { FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from '../../lib/escape-html.js';
import type { Problem } from '../problem.js';

/** A template literal whose interpolations are escaped, unless given as {@link raw} (HTML made by another `html`). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Raw {
  let out = strings[0];
  values.forEach((value, i) => {
    const text = Array.isArray(value)
      ? value.map((v) => (v instanceof Raw ? v.text : escapeHtml(String(v)))).join('')
      : value instanceof Raw
        ? value.text
        : value === null || value === undefined || value === false
          ? ''
          : escapeHtml(String(value));
    out += text + strings[i + 1];
  });
  return new Raw(out);
}

/** HTML that is already safe. */
export class Raw {
  constructor(readonly text: string) {}
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#17202a;background:#fafafa}
main{max-width:60rem;margin:2rem auto;padding:0 1rem}table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:.5rem;text-align:left;vertical-align:top}
code{background:#eef;padding:.1rem .3rem;border-radius:3px;word-break:break-all}
button{font:inherit;padding:.5rem 1rem;border-radius:4px;border:1px solid #335;background:#335;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#335}input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}
.notice{background:#fff4ce;padding:.75rem;border-radius:4px}.error{color:#b00020}.muted{color:#667}
ul.endpoints{padding-left:1.1rem;margin:0;font-size:.9rem}svg text{font:11px system-ui,sans-serif}`;

/**
 * Sends a page: `<title>` and a body, with headers for a page that may hold a key: no caching, no referrer (a success
 * page's address holds its checkout session), and a Content-Security-Policy that loads nothing but the page and lets
 * its forms go to this service and to `formTargets` (the provider's checkout and portal, which a form's redirect
 * reaches).
 */
export function sendPage(
  reply: FastifyReply,
  title: string,
  body: Raw,
  options: { status?: number; formTargets?: string[] } = {},
): FastifyReply {
  const forms = ["'self'", ...(options.formTargets ?? [])].join(' ');
  return reply
    .code(options.status ?? 200)
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff')
    .header(
      'Content-Security-Policy',
      `default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action ${forms}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .send(
      html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${title} · nyc-listings</title><style>${new Raw(STYLE)}</style></head><body><main>
<nav class="muted"><a href="/pricing">Plans</a> · <a href="/account">Account</a> · <a href="/docs">API docs</a></nav>
${body}</main></body></html>`.text,
    );
}

/** Whether the client wants a page (a browser) rather than JSON. */
export function wantsHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('text/html') && !accept.startsWith('application/json');
}

/** A problem shown to a person as a page of its own, with its status. */
export function sendProblemPage(reply: FastifyReply, problem: Problem, formTargets: string[] = []): FastifyReply {
  for (const [name, value] of Object.entries(problem.extra.headers ?? {})) reply.header(name, value);
  const body = problem.body('') as { title: string; detail: string; code: string };
  return sendPage(reply, body.title, html`<h1>${body.title}</h1><p class="error" data-code="${body.code}">${body.detail}</p>`, {
    status: problem.status,
    formTargets,
  });
}
