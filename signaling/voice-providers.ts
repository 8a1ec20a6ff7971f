import type { Config } from './config.ts';
import type { VoiceProviders } from './context.ts';
import type { Logger } from './log.ts';
import { loadVadFactory } from '../media/vad-factory.ts';
import type { VadFactory } from '../media/vad.ts';
import type { BargeInPolicy } from '../session/voice/barge-in.ts';
import { FliteTextToSpeech } from '../session/providers/flite-tts.ts';
import { OpenAiSpeechToText } from '../session/providers/openai-asr.ts';
import { OpenAiTextToSpeech } from '../session/providers/openai-tts.ts';
import { PocketsphinxSpeechToText } from '../session/providers/pocketsphinx-asr.ts';
import { SpeechUnavailableError, type SpeechToText } from '../session/providers/asr.ts';
import type { TextToSpeech } from '../session/providers/tts.ts';

/** Providers handed over by the caller (createServer); they win over configuration. */
export interface GivenVoiceProviders {
  asr?: SpeechToText;
  tts?: TextToSpeech;
  vad?: VadFactory;
}

/**
 * Builds the voice pipeline's providers from configuration (ASR_PROVIDER, TTS_PROVIDER). A
 * missing local dependency does not stop the server: voice sessions are refused with the
 * reason, text sessions go on. The openai recogniser needs no local packages.
 */
export async function createVoiceProviders(config: Config, log: Logger, given: GivenVoiceProviders = {}): Promise<VoiceProviders> {
  const vad = given.vad ?? (await loadVadFactory(config.VAD_PROVIDER, {
    aggressiveness: config.VAD_AGGRESSIVENESS,
    quietGate: config.SILERO_QUIET_GATE,
    onError: (error) => log.warn({ err: error.message }, 'voice-activity detection failed; frames counted as silence'),
  }));
  // Check the recogniser first, so nothing is started (flite workers) when voice is off anyway.
  if (!given.asr && config.ASR_PROVIDER === 'local') {
    try {
      PocketsphinxSpeechToText.check();
    } catch (error) {
      if (!(error instanceof SpeechUnavailableError)) throw error;
      log.warn({ reason: error.message }, 'voice sessions disabled');
      return { ok: false, reason: error.message };
    }
  }
  const stt = given.asr ?? createSpeechToText(config);
  const tts = given.tts ?? createTextToSpeech(config);
  // The first utterance must not wait for a model load: the server listens once recognisers are warm.
  if (stt instanceof PocketsphinxSpeechToText) await stt.whenReady();
  log.info({ asr: stt.name, tts: tts.name, vad: vad.provider }, 'voice providers');
  return { ok: true, tts, stt, vad, bargeIn: bargeInPolicy(config) };
}

export function bargeInPolicy(config: Config): BargeInPolicy {
  return {
    confirm: config.BARGE_IN_CONFIRM,
    sustainedSpeechMs: config.BARGE_IN_SPEECH_MS,
    maxPauseMs: config.BARGE_IN_MAX_PAUSE_MS,
    backchannels: config.BACKCHANNELS,
    interruptionWords: config.BARGE_IN_WORDS,
    shortSpeechMs: config.BARGE_IN_SHORT_SPEECH_MS,
    levelGateDb: config.BARGE_IN_LEVEL_GATE_DB,
  };
}

function createSpeechToText(config: Config): SpeechToText {
  if (config.ASR_PROVIDER === 'openai') {
    return new OpenAiSpeechToText({
      baseUrl: config.ASR_BASE_URL as string,
      apiKey: config.ASR_API_KEY,
      model: config.ASR_MODEL,
      timeoutMs: config.ASR_TIMEOUT_MS,
      connections: config.PROVIDER_CONNECTIONS,
    });
  }
  return new PocketsphinxSpeechToText(config.ASR_WARM_PROCESSES);
}

function createTextToSpeech(config: Config): TextToSpeech {
  if (config.TTS_PROVIDER === 'openai') {
    return new OpenAiTextToSpeech({
      baseUrl: config.TTS_BASE_URL as string,
      apiKey: config.TTS_API_KEY,
      model: config.TTS_MODEL,
      voices: config.TTS_VOICES,
      timeoutMs: config.TTS_TIMEOUT_MS,
      idleTimeoutMs: config.TTS_IDLE_TIMEOUT_MS,
      connections: config.PROVIDER_CONNECTIONS,
    });
  }
  return new FliteTextToSpeech(config.TTS_WORKERS, config.TTS_TIMEOUT_MS);
}
