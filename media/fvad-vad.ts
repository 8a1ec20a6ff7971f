import fvadFactory from '@echogarden/fvad-wasm';
import { VAD_FRAME_SAMPLES, VAD_SAMPLE_RATE, type VadDecision, type VadFactory, type VoiceActivityDetector } from './vad.ts';

/**
 * WebRTC voice-activity detection (libfvad compiled to WASM): a per-session detector over
 * 20 ms frames, deciding at once. The WASM module is loaded once per process. It calls any
 * voiced-looking sound speech (a tone, a click train), which is why Silero is the default.
 */

export interface FvadModule {
  HEAP16: Int16Array;
  _fvad_new(): number;
  _fvad_free(handle: number): void;
  _fvad_set_mode(handle: number, mode: number): number;
  _fvad_set_sample_rate(handle: number, rate: number): number;
  _fvad_process(handle: number, ptr: number, samples: number): number;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
}

let modulePromise: Promise<FvadModule> | undefined;

/** Loads the WASM once; call at startup so the first voice session pays nothing. */
export function loadFvad(): Promise<FvadModule> {
  modulePromise ??= (fvadFactory as unknown as () => Promise<FvadModule>)();
  return modulePromise;
}

/** aggressiveness 0 (most sensitive) to 3 (most eager to call audio non-speech). */
export async function createFvadFactory(aggressiveness = 3): Promise<VadFactory> {
  const module = await loadFvad();
  return { provider: 'webrtc', create: (onDecision) => new FvadDetector(new FvadClassifier(module, aggressiveness), onDecision) };
}

/** One fvad instance deciding 20 ms frames at once: the webrtc detector's, and Silero's fallback while its thread lags. */
export class FvadClassifier {
  private readonly handle: number;
  private readonly buffer: number;
  private freed = false;

  constructor(
    private readonly module: FvadModule,
    aggressiveness: number,
  ) {
    this.handle = module._fvad_new();
    module._fvad_set_mode(this.handle, aggressiveness);
    module._fvad_set_sample_rate(this.handle, VAD_SAMPLE_RATE);
    this.buffer = module._malloc(VAD_FRAME_SAMPLES * 2);
  }

  speech(frame: Int16Array): boolean {
    this.module.HEAP16.set(frame, this.buffer >> 1);
    return this.module._fvad_process(this.handle, this.buffer, VAD_FRAME_SAMPLES) === 1;
  }

  free(): void {
    if (this.freed) return;
    this.freed = true;
    this.module._free(this.buffer);
    this.module._fvad_free(this.handle);
  }
}

class FvadDetector implements VoiceActivityDetector {
  private freed = false;
  readonly pending = 0;

  constructor(
    private readonly fvad: FvadClassifier,
    private readonly onDecision: VadDecision,
  ) {}

  push(frame: Int16Array): void {
    if (this.freed) return;
    this.onDecision(frame, this.fvad.speech(frame));
  }

  free(): void {
    this.freed = true;
    this.fvad.free();
  }
}
