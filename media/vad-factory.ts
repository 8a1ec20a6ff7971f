import { createFvadFactory } from './fvad-vad.ts';
import { createSileroFactory } from './silero-vad.ts';
import type { VadFactory, VadProvider } from './vad.ts';

export interface VadFactoryOptions {
  /** fvad's mode, 0 (most sensitive) to 3: the webrtc detector's, and Silero's fallback while its thread lags. */
  aggressiveness?: number;
  /** Silero only: inference failed (never expected). */
  onError?(error: Error): void;
  /** Silero only: skip the network on known-quiet windows (silero-gate.ts). */
  quietGate?: boolean;
}

/** Loads the chosen detector once per process (the WASM module or the ONNX session). */
export function loadVadFactory(provider: VadProvider, options: VadFactoryOptions = {}): Promise<VadFactory> {
  if (provider === 'webrtc') return createFvadFactory(options.aggressiveness ?? 3);
  return createSileroFactory({ fallbackAggressiveness: options.aggressiveness ?? 3, quietGate: options.quietGate ?? false, ...(options.onError ? { onError: options.onError } : {}) });
}
