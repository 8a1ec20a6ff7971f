import { createServer, type Server } from 'node:http';
import { closeServer, listenOnLoopback, readBody } from '../../session/testing/fake-http.ts';

/** One span as an OTLP collector receives it. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
}

/**
 * An OpenTelemetry collector's OTLP/HTTP trace endpoint (`POST /v1/traces`, JSON encoding), in
 * process: what the exporter sends arrives here as plain spans. Ids are kept as lowercase hex,
 * as in a `traceparent` header.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly requests: Array<Record<string, string | string[] | undefined>> = [];
  url = '';
  private readonly server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      this.requests.push(req.headers);
      this.take(JSON.parse(body.toString('utf8')) as ExportRequest);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });

  static async start(): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver();
    receiver.url = await listenOnLoopback(receiver.server);
    return receiver;
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }

  private take(request: ExportRequest): void {
    for (const resource of request.resourceSpans ?? []) {
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            traceId: hex(span.traceId),
            spanId: hex(span.spanId),
            parentSpanId: span.parentSpanId ? hex(span.parentSpanId) : '',
            name: span.name,
            kind: span.kind ?? 0,
            attributes: Object.fromEntries((span.attributes ?? []).map((a) => [a.key, a.value.stringValue ?? a.value.boolValue ?? Number(a.value.intValue ?? a.value.doubleValue)])),
            status: span.status ?? {},
          });
        }
      }
    }
  }
}

interface ExportRequest {
  resourceSpans?: Array<{
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: Array<{ key: string; value: { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean } }>;
        status?: { code?: number; message?: string };
      }>;
    }>;
  }>;
}

/** OTLP/JSON writes ids as hex; some encoders use base64 (the protobuf JSON mapping). */
function hex(id: string): string {
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}
