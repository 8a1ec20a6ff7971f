import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export interface TracingConfig {
  /** OTLP/HTTP base URL (traces go to <endpoint>/v1/traces); tracing is off without it. */
  endpoint: string | undefined;
  /** Extra request headers for the collector (e.g. an API key). */
  headers: Record<string, string>;
  serviceName: string;
}

/** A span the session layer opened; ends once. */
export interface TraceSpan {
  /** False for the no-op span of a server without tracing: `run` is then a plain call. */
  readonly traced: boolean;
  /** Runs `fn` with this span as the active one (what it starts asynchronously stays inside). */
  run<T>(fn: () => T): T;
  child(name: string, attributes: Attributes, kind?: SpanKind): TraceSpan;
  end(attributes?: Attributes, failed?: string): void;
}

/**
 * OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set: a span per session, per turn
 * (its child) and per provider call (the turn's child, found through the active context), with
 * W3C trace context carried to OpenAI-compatible providers (`traceparent`). Off, every span is
 * the one no-op object and `run` is a plain call: nothing is allocated, no async context is kept.
 */
export class Tracing {
  private readonly tracer: Tracer | undefined;
  private readonly provider: NodeTracerProvider | undefined;

  constructor(config: TracingConfig) {
    if (!config.endpoint) return;
    const exporter = new OTLPTraceExporter({ url: `${config.endpoint.replace(/\/+$/, '')}/v1/traces`, headers: config.headers });
    this.provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.serviceName }),
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
    });
    registerContextOnce(this.provider);
    this.tracer = this.provider.getTracer('parley');
  }

  get enabled(): boolean {
    return this.tracer !== undefined;
  }

  /** A root span (a session). */
  root(name: string, attributes: Attributes): TraceSpan {
    return this.tracer ? new LiveSpan(this.tracer, this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, ROOT_CONTEXT)) : NO_SPAN;
  }

  /** A child of whatever span is active here (a provider call inside a turn); a root when none is. */
  active(name: string, attributes: Attributes): TraceSpan {
    return this.tracer ? new LiveSpan(this.tracer, this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, context.active())) : NO_SPAN;
  }

  /** `traceparent` (and `tracestate`) of the active span, for an outgoing request; empty when off. */
  headers(): Record<string, string> {
    if (!this.tracer) return {};
    const carrier: Record<string, string> = {};
    propagation.inject(context.active(), carrier);
    return carrier;
  }

  /** Sends the spans still buffered and stops; an unreachable collector delays a drain by at most a second. */
  async shutdown(): Promise<void> {
    if (!this.provider) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.provider.shutdown().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, 1000)))]);
    clearTimeout(timer);
  }
}

class LiveSpan implements TraceSpan {
  readonly traced = true;
  private readonly context: Context;
  private ended = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
  ) {
    this.context = trace.setSpan(ROOT_CONTEXT, span);
  }

  run<T>(fn: () => T): T {
    return context.with(this.context, fn);
  }

  child(name: string, attributes: Attributes, kind: SpanKind = SpanKind.INTERNAL): TraceSpan {
    return new LiveSpan(this.tracer, this.tracer.startSpan(name, { kind, attributes }, this.context));
  }

  end(attributes?: Attributes, failed?: string): void {
    if (this.ended) return;
    this.ended = true;
    if (attributes) this.span.setAttributes(attributes);
    if (failed !== undefined) this.span.setStatus({ code: SpanStatusCode.ERROR, message: failed });
    this.span.end();
  }
}

const NO_SPAN: TraceSpan = { traced: false, run: (fn) => fn(), child: () => NO_SPAN, end: () => undefined };

let registered = false;

/**
 * The async context manager and the W3C propagator are process-wide in OpenTelemetry: the first
 * tracing server registers them; each server keeps its own provider and exporter.
 */
function registerContextOnce(provider: NodeTracerProvider): void {
  if (registered) return;
  registered = true;
  provider.register();
}
