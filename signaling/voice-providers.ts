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
 *
 * `alongside` (the WebRTC media workers' warm-up) starts once voice is known to be on and runs
 * while the detector and the recognisers load; this resolves when all are done. When it fails,
 * the providers are closed and its error is thrown, once the recognisers have settled.
 */
export async function createVoiceProviders(config: Config, log: Logger, given: GivenVoiceProviders = {}, alongside?: () => Promise<void>): Promise<VoiceProviders> {
  // Check the recogniser first, so nothing is started (flite workers, media workers) when voice is off anyway.
  const missing = given.asr || config.ASR_PROVIDER !== 'local' ? undefined : recogniserMissing();
  // Whatever loads in threads of its own (recognisers, media workers) starts before the detector
  // loads: none of it waits for another.
  const started = missing === undefined ? { stt: given.asr ?? createSpeechToText(config), tts: given.tts ?? createTextToSpeech(config), warmUp: settled(alongside?.()) } : undefined;
  let vad: VadFactory;
  try {
    vad = given.vad ?? (await loadVadFactory(config.VAD_PROVIDER, {
      aggressiveness: config.VAD_AGGRESSIVENESS,
      quietGate: config.SILERO_QUIET_GATE,
      onError: (error) => log.warn({ err: error.message }, 'voice-activity detection failed; frames counted as silence'),
    }));
  } catch (error) {
    if (started) await Promise.all([started.tts.close?.(), started.stt.close?.()]);
    throw error;
  }
  if (!started) {
    log.warn({ reason: missing }, 'voice sessions disabled');
    return { ok: false, reason: missing! };
  }
  const { stt, tts } = started;
  // Neither the first utterance may wait for a model load nor the first WebRTC call for a worker
  // thread: both load side by side (threads on different cores when free), and the server
  // listens once both are done.
  const [warmUp] = await Promise.all([started.warmUp, stt instanceof PocketsphinxSpeechToText ? stt.whenReady() : undefined]);
  if (warmUp.status === 'rejected') {
    // A start that failed leaves no recogniser thread or synthesiser behind.
    await Promise.all([tts.close?.(), stt.close?.()]);
    throw warmUp.reason;
  }
  log.info({ asr: stt.name, tts: tts.name, vad: vad.provider }, 'voice providers');
  return { ok: true, tts, stt, vad, bargeIn: bargeInPolicy(config) };
}

/** Why the local recogniser cannot run here (SpeechUnavailableError's message), or undefined when it can. */
function recogniserMissing(): string | undefined {
  try {
    PocketsphinxSpeechToText.check();
    return undefined;
  } catch (error) {
    if (!(error instanceof SpeechUnavailableError)) throw error;
    return error.message;
  }
}

/** A task's outcome, for awaiting later: its failure is never unhandled meanwhile. */
export function settled(task: Promise<void> | undefined): Promise<PromiseSettledResult<void>> {
  return Promise.allSettled([task]).then(([outcome]) => outcome!);
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
