import type { Config } from './config.ts';
import type { VoiceProviders } from './context.ts';
import type { Logger } from './log.ts';
import { loadVad, VoiceActivityDetector } from '../media/vad.ts';
import { FliteTextToSpeech } from '../session/providers/flite-tts.ts';
import { PocketsphinxSpeechToText } from '../session/providers/pocketsphinx-asr.ts';
import { SpeechUnavailableError } from '../session/providers/asr.ts';

/**
 * Builds the voice pipeline's providers from configuration. A missing local dependency does not
 * stop the server: voice sessions are refused with the reason, text sessions go on.
 */
export async function createVoiceProviders(config: Config, log: Logger): Promise<VoiceProviders> {
  const vadModule = await loadVad();
  const createVad = (): VoiceActivityDetector => new VoiceActivityDetector(vadModule, config.VAD_AGGRESSIVENESS);
  const tts = new FliteTextToSpeech(config.TTS_WORKERS);
  try {
    PocketsphinxSpeechToText.check();
  } catch (error) {
    if (!(error instanceof SpeechUnavailableError)) throw error;
    log.warn({ reason: error.message }, 'voice sessions disabled');
    return { ok: false, reason: error.message };
  }
  return { ok: true, tts, stt: new PocketsphinxSpeechToText(config.ASR_WARM_PROCESSES), createVad };
}
