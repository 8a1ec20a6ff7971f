import type { SpeechToText } from '../providers/asr.ts';
import type { LanguageModel, ModelEvent, ModelRequest } from '../providers/llm.ts';
import { ModelTokens } from './model-tokens.ts';
import type { TokenBucket, UsageMeter } from './usage-meter.ts';

/**
 * A model whose requests are metered into `bucket` (think_deeply's model calls). The reply path
 * meters inline in the turn runner instead: one more async generator per request costs more
 * than the whole of metering.
 */
export function meteredModel(model: LanguageModel, meter: Pick<UsageMeter, 'tokens'>, bucket: TokenBucket): LanguageModel {
  return {
    name: model.name,
    async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
      const tokens = new ModelTokens(request.messages);
      try {
        for await (const event of model.stream(request)) {
          tokens.note(event);
          yield event;
        }
      } finally {
        tokens.commit(meter, bucket);
      }
    },
  };
}

/** A recogniser whose streams count the audio written to them (asr_s). */
export function meteredSpeechToText(stt: SpeechToText, meter: Pick<UsageMeter, 'asr'>): SpeechToText {
  return {
    name: stt.name,
    // partials passes through: the lexical end-of-turn cue is on only for recognisers that have them.
    ...(stt.partials ? { partials: true } : {}),
    open() {
      const stream = stt.open();
      const write = stream.write.bind(stream);
      // The stream is ours for this one utterance: counting at its write keeps every other method as it is.
      stream.write = (samples) => {
        meter.asr(samples.length);
        write(samples);
      };
      return stream;
    },
  };
}
