import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEFT_OUT, README_MARKERS } from '../../scripts/readme-answers.js';
import { get } from '../helpers/http.js';
import { ROOT } from '../helpers/paths.js';
import { useSharedTestRuntime } from '../helpers/runtime.js';

// The README's own key is a Pro one (`keys issue --plan pro`); its calls run against the default data set, as a
// newcomer's fresh `npm start` serves it.
const t = useSharedTestRuntime('pro');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** Every `curl` of the README that calls the service: its path and query, and whether it sends the key. */
function curlCalls(): { url: string; keyed: boolean }[] {
  return [...readme.matchAll(/^curl .*$/gm)].flatMap(([line]) => {
    const url = /localhost:8080(\/[^'\s]*)/.exec(line)?.[1];
    return url ? [{ url, keyed: line.includes('Authorization: Bearer') }] : [];
  });
}

/** The generated block's calls: `GET <url>` (`(with a key)` when keyed), then the abridged answer as JSON. */
function printedAnswers(): { url: string; keyed: boolean; printed: unknown }[] {
  const block = readme.slice(readme.indexOf(README_MARKERS[0]), readme.indexOf(README_MARKERS[1]));
  return [...block.matchAll(/^GET (\S+)( +\(with a key\))?\n([\s\S]*?)(?=\n\nGET |\n```)/gm)].map(([, url, keyed, json]) => ({
    url,
    keyed: Boolean(keyed),
    printed: JSON.parse(json),
  }));
}

const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * Asserts that the live answer has the shape the README prints: every printed member is there with a value of the
 * same kind; an object's `…: "N more"` counts the members left out, a list's `… N more` the items.
 */
function expectShape(live: unknown, printed: unknown, path: string): void {
  expect(kind(live), path).toBe(kind(printed));
  if (Array.isArray(printed)) {
    const more =
      printed.length > 1 && typeof printed.at(-1) === 'string' && (printed.at(-1) as string).startsWith(LEFT_OUT)
        ? Number((printed.at(-1) as string).split(' ')[1])
        : 0;
    const shown = more ? printed.slice(0, -1) : printed;
    expect((live as unknown[]).length, path).toBe(shown.length + more);
    for (const [i, item] of shown.entries()) expectShape((live as unknown[])[i], item, `${path}[${i}]`);
  } else if (printed !== null && typeof printed === 'object') {
    const { [LEFT_OUT]: left, ...shown } = printed as Record<string, unknown>;
    const members = Object.keys(live as object);
    expect(members.length, path).toBe(Object.keys(shown).length + (left ? Number(String(left).split(' ')[0]) : 0));
    for (const [name, value] of Object.entries(shown)) {
      expect(members, path).toContain(name);
      expectShape((live as Record<string, unknown>)[name], value, `${path}.${name}`);
    }
  }
}

describe('the README: every call it shows', () => {
  it('each curl line answers 200 on the default data set, with or without the key as it is written', async () => {
    const calls = curlCalls();
    expect(calls.length).toBeGreaterThanOrEqual(8);
    for (const { url, keyed } of calls) {
      const res = await get(t.rt.app, url, keyed ? t.key : undefined);
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.data, url).toBeDefined();
    }
  });

  it('each printed answer is what the call answers now: status 200 and the shape printed, down to the counts of what is left out', async () => {
    const answers = printedAnswers();
    expect(answers.length).toBeGreaterThanOrEqual(6);
    for (const { url, keyed, printed } of answers) {
      const res = await get(t.rt.app, url, keyed ? t.key : undefined);
      expect(res.status, url).toBe(200);
      expectShape(res.body, printed, url);
    }
  });
});
