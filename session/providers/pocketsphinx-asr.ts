import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { int16ToBytes } from '../../media/pcm.ts';
import { SpeechUnavailableError, type SpeechToText, type TranscriptionStream } from './asr.ts';

const BINARY = 'pocketsphinx_continuous';
const MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

/**
 * Offline recognition with Debian's pocketsphinx. Loading the model takes most of a second, so
 * processes are started ahead of need: each one loads the model and blocks opening its named
 * pipe. An utterance takes a warm process, streams its audio into the pipe while the user
 * speaks, and closes the pipe at the end of the turn; the process prints the transcript and
 * exits, and a fresh one is warmed in its place. One process per utterance means transcripts
 * can never be attributed to the wrong turn.
 */
export class PocketsphinxSpeechToText implements SpeechToText {
  readonly name = 'pocketsphinx';
  private readonly dir = mkdtempSync(join(tmpdir(), 'parley-asr-'));
  private readonly warm: WarmProcess[] = [];
  private counter = 0;
  private closed = false;

  constructor(private readonly spares = 2) {
    for (let i = 0; i < spares; i += 1) this.warm.push(this.startProcess());
  }

  /** Throws SpeechUnavailableError naming the fix when pocketsphinx is not installed. */
  static check(): void {
    const probe = spawnSync('sh', ['-c', `command -v ${BINARY}`], { encoding: 'utf8' });
    if (probe.status !== 0 || !existsSync(MODEL_DIR)) {
      throw new SpeechUnavailableError(
        'offline speech recognition needs Debian packages pocketsphinx and pocketsphinx-en-us (apt-get install pocketsphinx pocketsphinx-en-us), or ASR_PROVIDER=openai',
      );
    }
  }

  open(): TranscriptionStream {
    const process = this.warm.shift() ?? this.startProcess();
    if (!this.closed) this.warm.push(this.startProcess());
    return process.stream();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.warm.splice(0)) w.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private startProcess(): WarmProcess {
    this.counter += 1;
    return new WarmProcess(join(this.dir, `utt-${this.counter}.raw`));
  }
}

class WarmProcess {
  private readonly child: ChildProcess;
  private readonly output: Promise<string>;
  private pipe: WriteStream | undefined;

  constructor(private readonly fifo: string) {
    const made = spawnSync('mkfifo', [fifo]);
    if (made.status !== 0) throw new SpeechUnavailableError(`mkfifo failed: ${made.stderr}`);
    // The .raw suffix tells pocketsphinx there is no WAV header: plain 16 kHz PCM16.
    this.child = spawn(BINARY, ['-infile', fifo, '-logfn', '/dev/null'], { stdio: ['ignore', 'pipe', 'ignore'] });
    this.child.unref();
    this.output = new Promise((resolve) => {
      let text = '';
      this.child.stdout?.setEncoding('utf8');
      this.child.stdout?.on('data', (chunk: string) => (text += chunk));
      this.child.on('close', () => {
        rmSync(fifo, { force: true });
        resolve(text.split('\n').map((l) => l.trim()).filter(Boolean).join(' '));
      });
      this.child.on('error', () => resolve(''));
    });
  }

  stream(): TranscriptionStream {
    // Opening a FIFO for writing blocks until the reader has it open; the warm process already
    // waits there, and the open happens on libuv's pool, not the event loop.
    this.pipe = createWriteStream(this.fifo);
    this.pipe.on('error', () => this.child.kill());
    let ended = false;
    return {
      write: (samples) => {
        if (!ended) this.pipe?.write(int16ToBytes(samples));
      },
      finish: () => {
        if (!ended) {
          ended = true;
          this.pipe?.end();
        }
        return this.output;
      },
      abort: () => {
        ended = true;
        this.pipe?.destroy();
        this.kill();
      },
    };
  }

  kill(): void {
    this.child.kill('SIGKILL');
    rmSync(this.fifo, { force: true });
  }
}
