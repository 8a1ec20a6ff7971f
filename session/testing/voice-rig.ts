/**
 * Voice sessions in the unit ring: the real VAD and endpointer (media/), a recogniser that knows
 * the fixture clips by their samples (fixtures/audio/transcripts.json), a synthesiser whose audio
 * length follows the text, and a microphone that sends 20 ms frames on the (fake) clock.
 */
import { readFileSync } from 'node:fs';
import { loadFixture, streamRealtime } from '../../media/testing/audio-stream.ts';
import { createFvadFactory } from '../../media/fvad-vad.ts';
import type { VadFactory } from '../../media/vad.ts';
import { clipTranscriber, FakeSpeechToText, FakeTextToSpeech, type FakeTtsOptions } from './fake-speech.ts';
import { openTestSession, type TestSession, type TestSessionOptions } from './test-session.ts';

// Loaded once, on the real clock, before any test installs the fake one. fvad decides each frame
// as it is pushed, so simulated time stays exact; Silero (batched off the event loop) is covered
// by media/silero-vad.test.ts, media/endpointer.test.ts and the voice tests over the socket.
const vads = new Map<number, VadFactory>();
for (const aggressiveness of [0, 1, 2, 3]) vads.set(aggressiveness, await createFvadFactory(aggressiveness));

const transcripts = JSON.parse(readFileSync(new URL('../../fixtures/audio/transcripts.json', import.meta.url), 'utf8')) as Record<string, string>;

/** What the fake recogniser hears in each spoken fixture clip. */
export const fixtureTranscriber = clipTranscriber(
  Object.fromEntries(Object.entries(transcripts).filter(([, text]) => text !== '').map(([file, text]) => [text, loadFixture(file)])),
);

export interface VoiceSession {
  client: TestSession;
  stt: FakeSpeechToText;
  tts: FakeTextToSpeech;
}

/** A voice session (no greeting unless mode sets one) at audio.sr 16 kHz unless `audio` says otherwise. */
export function openVoiceSession(
  options: TestSessionOptions & {
    tts?: FakeTtsOptions;
    vadAggressiveness?: number;
    /** Another detector in fvad's place (one that decides as it is pushed, so time stays exact). */
    vad?: VadFactory;
    transcriber?: (audio: Int16Array) => string;
    partials?: boolean;
    posterior?: (audio: Int16Array) => number | undefined;
    sentenceEnd?: (audio: Int16Array) => number | undefined;
  } = {},
): VoiceSession {
  const stt = new FakeSpeechToText(options.transcriber ?? fixtureTranscriber, { partials: options.partials ?? false, posterior: options.posterior, sentenceEnd: options.sentenceEnd });
  const tts = new FakeTextToSpeech(options.tts);
  const client = openTestSession({
    ...options,
    mode: { modality: 'voice', greeting: false, ...options.mode },
    audio: options.audio ?? { sr: 16000 },
    voice: { stt, tts, vad: options.vad ?? vads.get(options.vadAggressiveness ?? 3)! },
  });
  return { client, stt, tts };
}

/** A microphone: `samples` go out as binary 20 ms frames, one per 20 ms of the clock, the first at once. */
export async function speak(client: TestSession, samples: Int16Array, rate = 16000): Promise<void> {
  await streamRealtime(client, samples, rate);
}

/** Milliseconds of downlink audio received, for `bytesPerSample` and `rate`. */
export function audioMs(client: TestSession, bytesPerSample = 2, rate = 16000): number {
  return (client.audio.reduce((sum, b) => sum + b.length, 0) / bytesPerSample / rate) * 1000;
}
