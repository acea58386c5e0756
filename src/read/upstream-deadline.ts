import { SingleFlight } from '../lib/single-flight.js';
import { UpstreamError } from '../upstream/errors.js';

/**
 * The bound on a request that waits for the upstream (`REQUEST_DEADLINE_SECONDS`): a lookup a caller waits for past it
 * is answered 504 UPSTREAM_TIMEOUT, and goes on in the background, so that the next call for the same thing joins it,
 * or finds its result stored. A lookup that fails after its caller left is logged, never dropped quietly.
 */
export class UpstreamDeadline {
  private readonly lookups = new SingleFlight<string, unknown>();

  constructor(
    private readonly seconds: number,
    private readonly warn: (message: string, error: unknown) => void,
  ) {}

  /**
   * `work` (an upstream lookup of what `key` names), shared with any call for `key` under way.
   * @throws UpstreamError `timeout` past the deadline; whatever `work` throws before it
   */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const lookup = this.lookups.run(key, work) as Promise<T>;
    let waited = true;
    lookup.catch((error: unknown) => {
      if (!waited) this.warn(`upstream lookup ${key} failed after its caller was answered 504`, error);
    });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        waited = false;
        reject(new UpstreamError('timeout', `no answer within REQUEST_DEADLINE_SECONDS (${this.seconds} s); the lookup goes on`));
      }, this.seconds * 1000);
    });
    try {
      return await Promise.race([lookup, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}
