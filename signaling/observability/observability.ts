import type { Config } from '../config.ts';
import { parleyMetrics, type ParleyMetrics } from './metrics.ts';
import { Readiness, tcpReachable } from './readiness.ts';
import { Tracing } from './tracing.ts';
import { propagateTraceContext } from './trace-propagation.ts';

/** What the server keeps for its operator: the process's metrics, this server's traces and readiness checks. */
export interface Observability {
  /**
   * False only for the benchmark's baseline server (ServerOverrides.observability = 'off'): no
   * session, turn, provider or media measurement at all, to price what they cost.
   */
  active: boolean;
  metrics: ParleyMetrics;
  tracing: Tracing;
  readiness: Readiness;
}

export function createObservability(config: Config, active = true): Observability {
  const readiness = new Readiness(config.READYZ_TIMEOUT_MS);
  // Remote providers are dependencies: a server that cannot reach its model is not ready.
  const remote = [
    ['llm', config.LLM_PROVIDER === 'openai' ? config.LLM_BASE_URL : undefined],
    ['asr', config.ASR_PROVIDER === 'openai' ? config.ASR_BASE_URL : undefined],
    ['tts', config.TTS_PROVIDER === 'openai' ? config.TTS_BASE_URL : undefined],
  ] as const;
  for (const [name, url] of remote) if (url) readiness.add(name, tcpReachable(url, config.READYZ_TIMEOUT_MS));
  const tracing = new Tracing({ endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, headers: config.OTEL_EXPORTER_OTLP_HEADERS, serviceName: config.OTEL_SERVICE_NAME });
  propagateTraceContext(tracing);
  return { active, metrics: parleyMetrics(active), tracing, readiness };
}
