/**
 * Voice-activity detection behind one interface, so the uplink pipeline does not care which
 * detector runs: Silero (a small neural network, the default) or WebRTC's fvad (the fallback).
 * The pipeline works in 20 ms frames of 16 kHz PCM. A detector may decide later than it is fed
 * (Silero looks at 32 ms windows and runs batched off the event loop), so decisions come back
 * through a callback, always in the order the frames went in.
 */

export const VAD_SAMPLE_RATE = 16000;
export const VAD_FRAME_MS = 20;
export const VAD_FRAME_SAMPLES = (VAD_SAMPLE_RATE / 1000) * VAD_FRAME_MS;

export type VadProvider = 'silero' | 'webrtc';

/** One frame's verdict: the frame itself (for the endpointer's preroll) and speech or not. */
export type VadDecision = (frame: Int16Array, speech: boolean) => void;

export interface VoiceActivityDetector {
  /** One 20 ms frame; its decision arrives through the callback given at creation. */
  push(frame: Int16Array): void;
  /** Frames pushed whose decision has not come back yet. */
  readonly pending: number;
  /** Drops pending frames and releases the detector; no decision follows. */
  free(): void;
}

/** Makes per-session detectors; the heavy part (WASM module, ONNX session) is shared. */
export interface VadFactory {
  readonly provider: VadProvider;
  create(onDecision: VadDecision): VoiceActivityDetector;
}
