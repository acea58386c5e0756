import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { request } from 'undici';

/** An open event stream as a client sees it: parsed by an independent SSE parser (eventsource-parser). */
export interface OpenStream {
  status: number;
  headers: Record<string, unknown>;
  events: EventSourceMessage[];
  comments: string[];
  /** The problem document when the server refused the stream. */
  problem: any;
  /** True once the server ended the stream. */
  ended: boolean;
  close: () => void;
}

/** Opens `url` (GET, real HTTP on loopback) and keeps parsing what arrives until closed. */
export async function openStream(url: string, headers: Record<string, string>): Promise<OpenStream> {
  const abort = new AbortController();
  const res = await request(url, { headers, signal: abort.signal });
  const stream: OpenStream = {
    status: res.statusCode,
    headers: res.headers,
    events: [],
    comments: [],
    problem: null,
    ended: false,
    close: () => abort.abort(),
  };
  if (res.statusCode !== 200) {
    stream.problem = await res.body.json();
    stream.ended = true;
    return stream;
  }
  const parser = createParser({ onEvent: (e) => stream.events.push(e), onComment: (c) => stream.comments.push(c) });
  void (async () => {
    try {
      for await (const chunk of res.body) parser.feed(chunk.toString());
    } catch {
      // aborted by close()
    }
    stream.ended = true;
  })();
  return stream;
}
