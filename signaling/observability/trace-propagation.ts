import { subscribe } from 'node:diagnostics_channel';
import type { Tracing } from './tracing.ts';

let propagating: Tracing | undefined;

/**
 * W3C trace context on every outgoing provider request: undici (fetch, and the adapters' own
 * pools) announces each request it creates on this diagnostics channel, in the caller's async
 * context, so the active span (the provider call's) is written as `traceparent` on it. This is
 * how OpenTelemetry's own undici instrumentation does it; the adapters stay free of tracing.
 * Requests made outside any span carry nothing; with tracing off nothing is subscribed.
 */
export function propagateTraceContext(tracing: Tracing): void {
  if (!tracing.enabled || propagating) return;
  propagating = tracing;
  subscribe('undici:request:create', (message) => {
    const { request } = message as { request: { headers: unknown; addHeader(name: string, value: string): unknown } };
    if (hasTraceparent(request.headers)) return;
    for (const [name, value] of Object.entries(propagating!.headers())) request.addHeader(name, value);
  });
}

/** undici keeps request headers as a flat [name, value, ...] array (or, in older versions, a string block). */
function hasTraceparent(headers: unknown): boolean {
  if (Array.isArray(headers)) return headers.some((h, i) => i % 2 === 0 && String(h).toLowerCase() === 'traceparent');
  return typeof headers === 'string' && /^traceparent:/im.test(headers);
}
