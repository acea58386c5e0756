import type { FastifyPluginAsync } from 'fastify';

/** A tracer provider started by {@link startTracing}: what the app registers, and how to flush and stop it. */
interface Started {
  fastifyPlugin: FastifyPluginAsync;
  shutdown: () => Promise<void>;
}

let started: Started | null = null;

/**
 * Starts OpenTelemetry tracing to an OTLP/HTTP collector at `endpoint` (`OTEL_EXPORTER_OTLP_ENDPOINT`; spans are sent
 * as JSON to `<endpoint>/v1/traces`, in batches): a tracer provider, the context kept across awaits, and the
 * well-kept instrumentations of Fastify (@fastify/otel), `pg`, `ioredis` and undici, beside the service's own spans
 * (telemetry/spans.ts). Call it before the modules they instrument are loaded (main.ts does, before any command runs);
 * the SDK itself is loaded only then, so a service without tracing loads none of it.
 */
export async function startTracing(options: { endpoint: string; serviceName: string; version: string }): Promise<void> {
  if (started) return;
  // The store's and Redis' clients are CommonJS modules the service imports as ES modules: their instrumentations patch
  // them through import-in-the-middle's loader hook, which must be registered before they are imported.
  const { register } = await import('node:module');
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: ['pg', 'ioredis'] } });
  const [
    { NodeTracerProvider },
    { BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    instrumentation,
    pg,
    ioredis,
    undici,
    otel,
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('@opentelemetry/instrumentation-undici'),
    import('@fastify/otel'),
  ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': options.version }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` }))],
  });
  provider.register();
  const { FastifyOtelInstrumentation: FastifyOtel } = otel as unknown as typeof import('@fastify/otel');
  const fastify = new FastifyOtel();
  instrumentation.registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [new pg.PgInstrumentation(), new ioredis.IORedisInstrumentation(), new undici.UndiciInstrumentation(), fastify],
  });
  started = { fastifyPlugin: fastify.plugin() as unknown as FastifyPluginAsync, shutdown: () => provider.shutdown() };
}

/** The Fastify plugin that makes each request a span, when tracing is on; null when it is off. */
export function tracingPlugin(): FastifyPluginAsync | null {
  return started?.fastifyPlugin ?? null;
}

/** Sends the spans not yet sent, and stops tracing (on shutdown). */
export async function stopTracing(): Promise<void> {
  await started?.shutdown();
  started = null;
}
