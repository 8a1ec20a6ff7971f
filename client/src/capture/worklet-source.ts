/** The processor name a custom worklet (startMic({workletUrl})) must register. */
export const CAPTURE_PROCESSOR = 'parley-capture';

/**
 * The capture AudioWorklet, shipped as a string inside the bundle and loaded from a Blob URL, so
 * the server needs no extra route. It mixes the input down to mono and posts chunks of
 * `processorOptions.chunkSamples` samples (about 20 ms at the context's rate) to the main
 * thread, transferring each buffer. Input with no channels (an inactive source) posts nothing.
 */
export const CAPTURE_WORKLET_SOURCE = `
class ParleyCaptureProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const n = (options && options.processorOptions && options.processorOptions.chunkSamples) || 960;
    this.size = n;
    this.buf = new Float32Array(n);
    this.fill = 0;
  }
  process(inputs) {
    const input = inputs[0];
    if (!input || input.length === 0) return true;
    const channels = input.length;
    const frames = input[0].length;
    for (let i = 0; i < frames; i++) {
      let s = 0;
      for (let c = 0; c < channels; c++) s += input[c][i];
      this.buf[this.fill++] = s / channels;
      if (this.fill === this.size) {
        this.port.postMessage(this.buf, [this.buf.buffer]);
        this.buf = new Float32Array(this.size);
        this.fill = 0;
      }
    }
    return true;
  }
}
registerProcessor('${'parley-capture'}', ParleyCaptureProcessor);
`;

let blobUrl: string | undefined;

/** A Blob URL for the built-in worklet, created once per page. */
export function captureWorkletUrl(): string {
  blobUrl ??= URL.createObjectURL(new Blob([CAPTURE_WORKLET_SOURCE], { type: 'text/javascript' }));
  return blobUrl;
}
