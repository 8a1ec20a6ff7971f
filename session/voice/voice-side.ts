import type { SessionDeps } from '../session-deps.ts';
import type { SessionSettings } from '../settings.ts';
import { SpeechOutput } from './speech-output.ts';
import { VoiceController, type VoiceHost } from './voice-controller.ts';

export interface VoiceSide {
  speech: SpeechOutput;
  voice: VoiceController;
}

/**
 * A voice session's two halves: speech out, paced for the transport, and the listening side
 * that takes turns. Undefined for a text session (or a host that wired no speech providers).
 */
export function openVoiceSide(host: VoiceHost, settings: SessionSettings, deps: SessionDeps, isOpen: () => boolean): VoiceSide | undefined {
  const audio = settings.audio;
  if (settings.modality !== 'voice' || !audio || !deps.voice) return undefined;
  const { transport } = deps;
  // The pipeline runs at the wire format unless the transport brings its own (WebRTC).
  const media = deps.media ?? { inputRate: audio.sr, outputRate: audio.output_sr, encoding: audio.output_encoding };
  const speech = new SpeechOutput({
    tts: deps.voice.tts,
    outputRate: media.outputRate,
    encoding: media.encoding,
    sendAudio: (bytes) => {
      if (isOpen()) transport.sendAudio(bytes);
    },
    ...(transport.downlinkLeadMs === undefined ? {} : { leadMs: transport.downlinkLeadMs }),
    discardAudio: () => transport.discardAudio?.(),
    pauseAudio: () => transport.pauseAudio?.(),
    resumeAudio: () => transport.resumeAudio?.(),
    ...(transport.sendAheadMs === undefined ? {} : { sendAheadMs: transport.sendAheadMs }),
    ...(transport.pacedLate ? { pacedLate: (ms: number) => transport.pacedLate!(ms) } : {}),
  });
  return { speech, voice: new VoiceController(host, media.inputRate, deps.voice) };
}
