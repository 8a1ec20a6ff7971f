import type { Config } from './config.ts';
import type { LanguageModel } from '../session/providers/llm.ts';
import { LocalLanguageModel } from '../session/providers/local-llm.ts';
import { OpenAiLanguageModel } from '../session/providers/openai-llm.ts';
import type { Logger } from './log.ts';

/** Picks the model adapter named by configuration. */
export function createLanguageModel(config: Config, log: Logger): LanguageModel {
  if (config.LLM_PROVIDER === 'openai') {
    return new OpenAiLanguageModel({
      baseUrl: config.LLM_BASE_URL as string,
      apiKey: config.LLM_API_KEY,
      model: config.LLM_MODEL,
      timeoutMs: config.LLM_TIMEOUT_MS,
      idleTimeoutMs: config.LLM_IDLE_TIMEOUT_MS,
      connections: config.PROVIDER_CONNECTIONS,
      streamUsage: config.LLM_STREAM_USAGE,
      onWarning: (message) => log.warn({ provider: 'openai' }, message),
    });
  }
  return new LocalLanguageModel(config.LOCAL_LLM_WORD_DELAY_MS);
}
