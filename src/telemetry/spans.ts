import { type Attributes, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * The service's own spans (OpenTelemetry's API): a search's stages, a sync's crawl, write and hydration, a webhook
 * attempt. Without a tracer provider (OTEL_EXPORTER_OTLP_ENDPOINT unset) the API's spans record nothing and cost next
 * to nothing; with one (telemetry/tracing.ts), they join the request's or the sync's trace.
 */
const tracer = trace.getTracer('nyc-listings');

/**
 * Runs `work` inside a span `name` with `attributes`: a child of the span active now, or the first of a new trace with
 * `root` (background work a request only started). A failure is recorded on the span and thrown again.
 */
export function inSpan<T>(name: string, attributes: Attributes, work: () => Promise<T>, options: { root?: boolean } = {}): Promise<T> {
  return tracer.startActiveSpan(name, { attributes, root: options.root }, async (span) => {
    try {
      return await work();
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The id of the trace recorded now (32 hex digits), or null when none is (tracing off, or outside any span). */
export function currentTraceId(): string | null {
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span.spanContext().traceId : null;
}
