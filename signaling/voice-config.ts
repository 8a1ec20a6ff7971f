import { DEFAULT_BARGE_IN } from '../session/voice/barge-in.ts';
import { z } from 'zod';
import { flag, optionalUrl, positiveInt, wordList } from './config-fields.ts';

/**
 * The voice pipeline's settings, part of ConfigSchema (config.ts): which recogniser and
 * synthesiser, the voice-activity detector, and what confirms an interruption.
 */
export const VOICE_SETTINGS = {
  /** Speech recognition: offline pocketsphinx, or any OpenAI-compatible /audio/transcriptions. */
  ASR_PROVIDER: z.enum(['local', 'openai']).default('local'),
  ASR_BASE_URL: optionalUrl,
  ASR_API_KEY: z.string().min(1).optional(),
  ASR_MODEL: z.string().min(1).default('whisper-1'),
  /** Utterance uploaded → the transcription's headers, and any gap in its body (asr_error past it). */
  ASR_TIMEOUT_MS: positiveInt.default(15000),
  /** Speech synthesis: offline flite, or any OpenAI-compatible /audio/speech (pcm output). */
  TTS_PROVIDER: z.enum(['local', 'openai']).default('local'),
  TTS_BASE_URL: optionalUrl,
  TTS_API_KEY: z.string().min(1).optional(),
  TTS_MODEL: z.string().min(1).default('tts-1'),
  /** Sentence sent → audio headers; then the longest gap between audio chunks (tts_error past either). */
  TTS_TIMEOUT_MS: positiveInt.default(10000),
  TTS_IDLE_TIMEOUT_MS: positiveInt.default(5000),
  /** Comma-separated voice keys the openai TTS endpoint accepts; they fill ready.voices. */
  TTS_VOICES: z
    .string()
    .default('alloy,echo,fable,onyx,nova,shimmer')
    .transform((list) => [...new Set(list.split(',').map((v) => v.trim()).filter(Boolean))])
    .refine((voices) => voices.length > 0, 'must list at least one voice'),

  /** Voice-activity detector: Silero (neural, ignores tones and most noise) or WebRTC's fvad. */
  VAD_PROVIDER: z.enum(['silero', 'webrtc']).default('silero'),
  /** WebRTC VAD aggressiveness 0..3 (VAD_PROVIDER=webrtc): higher calls more borderline audio non-speech. */
  VAD_AGGRESSIVENESS: z.coerce.number().int().min(0).max(3).default(3),
  /** Silero only: skip the network on quiet windows after 512 ms of quiet (media/silero-gate.ts). */
  SILERO_QUIET_GATE: flag.default(false),
  /**
   * What confirms sound during a reply as a real interruption (the downlink pauses at once
   * either way): `speech` (BARGE_IN_SPEECH_MS of voiced speech), `words` (recognised words not
   * all backchannels), `speech_or_words`, or `immediate` (the old rule: 100 ms of speech stops
   * the reply, no pause and no resume).
   */
  BARGE_IN_CONFIRM: z.enum(['speech', 'words', 'speech_or_words', 'immediate']).default(DEFAULT_BARGE_IN.confirm),
  BARGE_IN_SPEECH_MS: z.coerce.number().int().min(100).max(5000).default(DEFAULT_BARGE_IN.sustainedSpeechMs),
  /** A pause no rule confirmed within this time resumes the reply. */
  BARGE_IN_MAX_PAUSE_MS: z.coerce.number().int().min(200).max(10000).default(DEFAULT_BARGE_IN.maxPauseMs),
  /** Comma-separated words and phrases that never take the floor while the assistant speaks. */
  BACKCHANNELS: wordList(DEFAULT_BARGE_IN.backchannels),
  /** Comma-separated single words that confirm an interruption on their own ("stop", "wait"). */
  BARGE_IN_WORDS: wordList(DEFAULT_BARGE_IN.interruptionWords),
  /** Speech with less voiced time than this confirms by words only with a BARGE_IN_WORDS word (0: off). */
  BARGE_IN_SHORT_SPEECH_MS: z.coerce.number().int().min(0).max(5000).default(DEFAULT_BARGE_IN.shortSpeechMs),
  /** Sound more than this many dB below the user's own speech level never confirms an interruption (0: off). */
  BARGE_IN_LEVEL_GATE_DB: z.coerce.number().min(0).max(40).default(DEFAULT_BARGE_IN.levelGateDb),
  TTS_WORKERS: z.coerce.number().int().min(1).max(16).default(1),
  /** Recognisers (threads with a decoder loaded) always kept, so an utterance never waits for a model load; 0 keeps none (a text-only deployment). */
  ASR_WARM_PROCESSES: z.coerce.number().int().min(0).max(32).default(2),
};
