import type { FastifyReply } from 'fastify';

/**
 * One Server-Sent Events response (WHATWG HTML "server-sent events"), written straight to the socket
 * after `reply.hijack()`: no compression, no buffering, the headers the hooks set (request id, CORS,
 * rate limits) carried over. Writes wait for the socket to drain, so a slow reader holds the writer
 * back instead of growing memory.
 */
export class EventStreamWriter {
  private ended = false;

  /** Sends the status line and headers; `retrySeconds` tells the client how soon to reconnect. */
  constructor(
    private readonly reply: FastifyReply,
    retrySeconds: number,
  ) {
    const headers = { ...reply.getHeaders() } as Record<string, string | number | string[]>;
    reply.hijack();
    reply.raw.writeHead(200, {
      ...headers,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
      Connection: 'keep-alive',
    });
    void this.write(`retry: ${Math.round(retrySeconds * 1000)}\n\n`);
  }

  /** False once the client went away or {@link end} was called. */
  get open(): boolean {
    return !this.ended && !this.reply.raw.destroyed && this.reply.raw.writable;
  }

  /** One event: `id`, `event` and the JSON `data` on one line. */
  event(id: string, type: string, data: unknown): Promise<void> {
    return this.write(`id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** A comment line, which clients ignore: keeps proxies and idle timers from closing the connection. */
  comment(text: string): Promise<void> {
    return this.write(`: ${text}\n\n`);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.reply.raw.end();
  }

  private write(text: string): Promise<void> {
    if (!this.open) return Promise.resolve();
    if (this.reply.raw.write(text)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.reply.raw.off('drain', done);
        this.reply.raw.off('close', done);
        resolve();
      };
      this.reply.raw.once('drain', done);
      this.reply.raw.once('close', done);
    });
  }
}
