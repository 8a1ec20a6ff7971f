import fvadFactory from '@echogarden/fvad-wasm';

/**
 * WebRTC voice-activity detection (libfvad compiled to WASM): a per-session detector over
 * 20 ms frames of 16 kHz PCM. The WASM module is loaded once per process.
 */

export const VAD_SAMPLE_RATE = 16000;
export const VAD_FRAME_MS = 20;
export const VAD_FRAME_SAMPLES = (VAD_SAMPLE_RATE / 1000) * VAD_FRAME_MS;

interface FvadModule {
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
export function loadVad(): Promise<FvadModule> {
  modulePromise ??= (fvadFactory as unknown as () => Promise<FvadModule>)();
  return modulePromise;
}

export class VoiceActivityDetector {
  private readonly handle: number;
  private readonly buffer: number;
  private freed = false;

  /** aggressiveness 0 (most sensitive) to 3 (most eager to call audio non-speech). */
  constructor(
    private readonly module: FvadModule,
    aggressiveness = 3,
  ) {
    this.handle = module._fvad_new();
    module._fvad_set_mode(this.handle, aggressiveness);
    module._fvad_set_sample_rate(this.handle, VAD_SAMPLE_RATE);
    this.buffer = module._malloc(VAD_FRAME_SAMPLES * 2);
  }

  static async create(aggressiveness = 3): Promise<VoiceActivityDetector> {
    return new VoiceActivityDetector(await loadVad(), aggressiveness);
  }

  /** One 20 ms frame (320 samples at 16 kHz) → speech or not. */
  isSpeech(frame: Int16Array): boolean {
    if (this.freed) return false;
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
