import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, LevelWithSilentOrString, Logger } from 'pino';

/** A log line's arguments: an object of facts or a message, then the message and its format values. */
type LogArgs = [obj: unknown, msg?: string, ...values: unknown[]];

/**
 * A request's logger (`request.log`): the service's logger with the request's id among its bindings, made only when
 * the request logs a line. Most requests log none (a quick success is a debug line, off by default), and pino's
 * child serializes its bindings and sets up its level and redaction each time it is made.
 */
export class RequestLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** pino's child logger, made on first use. */
  private get logger(): Logger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): LevelWithSilentOrString {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.logger.level = level;
  }

  /** Whether a line at `level` would be written (asked before the line's facts are gathered). */
  isLevelEnabled(level: Level): boolean {
    if (this.made || this.options.level !== undefined) return this.logger.isLevelEnabled(level);
    return this.parent.isLevelEnabled(level);
  }

  // Methods on the prototype, not arrow fields: a request would make seven closures where it saved one child.
  fatal(...args: LogArgs): void {
    this.logger.fatal(...args);
  }
  error(...args: LogArgs): void {
    this.logger.error(...args);
  }
  warn(...args: LogArgs): void {
    this.logger.warn(...args);
  }
  info(...args: LogArgs): void {
    this.logger.info(...args);
  }
  debug(...args: LogArgs): void {
    this.logger.debug(...args);
  }
  trace(...args: LogArgs): void {
    this.logger.trace(...args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options) as FastifyBaseLogger;
  }
}

/** Fastify's `childLoggerFactory`: a {@link RequestLogger} of the service's logger. */
export function requestLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLogger(parent as Logger, bindings, options) as unknown as FastifyBaseLogger;
}
