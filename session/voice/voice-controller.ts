import { endpointerOptions } from '../../media/endpointer.ts';
import type { VadFactory } from '../../media/vad.ts';
import { errorFrame } from '../protocol/errors.ts';
import type { ServerFrame } from '../protocol/server.ts';
import { clientDetail } from '../providers/provider-error.ts';
import type { ConversationHistory } from '../history.ts';
import { newTurnId } from '../ids.ts';
import type { SpeechToText } from '../providers/asr.ts';
import type { SessionSettings } from '../settings.ts';
import type { TurnRecord } from '../turn-contract.ts';
import type { TurnRunner } from '../turn-runner.ts';
import { BargeIn, DEFAULT_BARGE_IN, type BargeInHost, type BargeInPolicy } from './barge-in.ts';
import { lexicalCue } from './lexical-cue.ts';
import type { TurnObservation } from '../turn-observation.ts';
import type { TurnEndTiming } from './frame-arrivals.ts';
import { VoiceInput } from './voice-input.ts';

/** What the voice side needs from its session. */
export interface VoiceHost extends BargeInHost {
  readonly settings: SessionSettings;
  readonly history: ConversationHistory;
  send(frame: ServerFrame): void;
  /** A real user turn: asr, then a reply. Returns the reply's runner (none when the words only answered a permission). */
  userTurn(text: string, turnId: string, inputSource: 'voice', observation: TurnObservation): TurnRunner | undefined;
  /** A turn's waterfall, from the end-of-turn decision on. */
  observeTurn(): TurnObservation;
  /** Real user speech was heard (cancels a pending end of call). */
  userSpoke(): void;
  /** The playback report of an interrupted turn: how much of its audio was heard (usage). */
  playbackHeard(turnId: string, heardMs: number): void;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/**
 * Turn-taking for a voice session: the reply pauses on sound and is interrupted or resumed
 * (barge-in.ts), transcripts are taken in order, eager replies in flow mode (retracted with
 * `canceled` if the user goes on), and the playback report that truncates an interrupted reply
 * to what was heard.
 */
export class VoiceController {
  readonly input: VoiceInput;
  private readonly bargeIn: BargeIn;
  private transcripts: Promise<void> = Promise.resolve();
  private eager: { runner: TurnRunner; text: string } | undefined;
  /** Bumped when speech starts or resumes after a probe; stale probe transcripts check it. */
  private epoch = 0;
  private lastInterrupted: { record: TurnRecord; bargeSeq: number; corrected: boolean } | undefined;
  /** Flow mode: how long after a probe the pause must last before an eager reply starts. */
  private readonly eagerDelayMs: number;

  constructor(
    private readonly host: VoiceHost,
    inputRate: number,
    voice: { vad: VadFactory; stt: SpeechToText; bargeIn?: BargeInPolicy },
  ) {
    const policy = voice.bargeIn ?? DEFAULT_BARGE_IN;
    this.bargeIn = new BargeIn(host, policy);
    const endpointing = endpointerOptions(host.settings.turnEndThreshold, host.settings.flow, voice.stt.partials === true, policy.sustainedSpeechMs);
    this.eagerDelayMs = Math.max(0, endpointing.eagerSilenceMs - endpointing.probeSilenceMs);
    this.input = new VoiceInput(inputRate, endpointing, voice.vad, voice.stt, {
      onSoundOnset: () => {
        if (!this.eager) this.bargeIn.onSoundOnset();
      },
      onOnsetDropped: () => this.bargeIn.onOnsetDropped(),
      onSpeechStart: () => {
        // A probe of the segment before can no longer settle anything.
        this.epoch += 1;
        if (!this.eager) this.bargeIn.onSpeechStart();
      },
      onSpeechConfirmed: () => this.onSpeechConfirmed(),
      onSpeechSustained: () => this.bargeIn.onSpeechSustained(this.input.speech),
      onProbe: (timing, transcript) => this.onProbe(timing, transcript),
      onSpeechResumed: () => this.onSpeechResumed(),
      onNoise: () => this.bargeIn.onNoise(),
      onTurnEnd: (timing, transcribe) => this.onTurnEnd(timing, transcribe),
      onSilentMic: (w) => host.send({ type: 'silent_mic', reason: w.reason, duration_ms: w.duration_ms, peak: w.peak }),
    });
  }

  /** Called by the session when a reply it started was interrupted, for the playback report. */
  noteInterrupted(record: TurnRecord, bargeSeq: number): void {
    if (record.speech) this.lastInterrupted = { record, bargeSeq, corrected: false };
  }

  /**
   * client_event playback_stopped: the client says how much sent audio was never heard. The
   * interrupted utterance is cut to the heard text, in history and with `utterance corrected`.
   */
  playbackStopped(report: { remaining_ms?: number; discarded_ms?: number; barge_seq?: number }, currentBargeSeq: number): void {
    const last = this.lastInterrupted;
    const seq = report.barge_seq ?? currentBargeSeq;
    if (!last || last.corrected || last.bargeSeq !== seq || !last.record.speech) return;
    last.corrected = true;
    const speech = last.record.speech;
    const unheard = Math.max(report.remaining_ms ?? 0, report.discarded_ms ?? 0);
    const heardMs = Math.max(0, speech.sentMs - unheard);
    const heard = speech.timeline.textAt(heardMs);
    this.host.playbackHeard(last.record.turnId, heardMs);
    if (last.record.historySlot) this.host.history.correctAssistant(last.record.historySlot, heard);
    this.host.send({ type: 'utterance', text: heard, turn_id: last.record.turnId, barge_seq: seq, corrected: true });
  }

  reset(): void {
    this.bargeIn.forget();
    this.input.resetTurn();
    this.eager = undefined;
    this.epoch += 1;
  }

  close(): void {
    this.bargeIn.forget();
    this.input.close();
  }

  private onSpeechConfirmed(): void {
    this.host.userSpoke();
    if (!this.eager) this.bargeIn.onSpeechConfirmed();
  }

  /**
   * A pause inside the user's speech, with the words so far: words that are not backchannels
   * confirm a pending barge-in; in flow mode a reply may start early, unless the words trail off.
   */
  private onProbe(timing: TurnEndTiming, transcript: Promise<string>): void {
    const epoch = this.epoch;
    const probedAt = performance.now();
    const speech = this.input.speech;
    let heardAt: number | undefined;
    transcript.then(() => (heardAt = performance.now()), () => undefined);
    this.enqueue(async () => {
      // A probe that failed only loses its cue and settles no barge-in; the turn's own transcript decides what was said.
      const text = await transcript.then((t) => t.trim(), () => undefined);
      if (epoch !== this.epoch || text === undefined) return;
      // Words that settle a pending barge-in as a false interruption never start an eager reply.
      const mayTakeTurn = this.bargeIn.onWords(text, false, speech);
      if (!this.host.settings.flow || !text || !mayTakeTurn || this.bargeIn.pending || lexicalCue(text) === 'incomplete') return;
      const wait = this.eagerDelayMs - (performance.now() - probedAt);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (epoch !== this.epoch) return;
      // An eager reply's end of turn is the moment it starts; its transcript was already there.
      const observation = this.host.observeTurn();
      observation.mark('lastVoiced', timing.lastVoicedAt);
      observation.mark('endOfTurn');
      observation.mark('asrFinal', heardAt);
      const runner = this.host.userTurn(text, newTurnId(), 'voice', observation);
      if (runner) this.eager = { runner, text };
      else observation.end(undefined);
    });
  }

  /** The turn's waterfall opens at the decision; its transcription runs inside it. */
  private observeEnd(timing: TurnEndTiming, transcribe: () => Promise<string>): { observation: TurnObservation; transcript: Promise<string> } {
    const observation = this.host.observeTurn();
    observation.mark('lastVoiced', timing.lastVoicedAt);
    observation.mark('endOfTurn', timing.decidedAt);
    const transcript = observation.run(transcribe);
    transcript.then(() => observation.mark('asrFinal'), () => observation.end(undefined));
    return { observation, transcript };
  }

  private onSpeechResumed(): void {
    this.epoch += 1;
    const eager = this.eager;
    if (!eager) return this.bargeIn.onSpeechResumed();
    this.eager = undefined;
    eager.runner.cancel();
    this.host.history.dropLastUser(eager.text);
    this.host.log.info({ turn_id: eager.runner.turnId }, 'eager reply retracted: the user went on');
  }

  private onTurnEnd(timing: TurnEndTiming, transcribe: () => Promise<string>): void {
    const { observation, transcript } = this.observeEnd(timing, transcribe);
    const speech = this.input.speech;
    this.enqueue(async () => {
      if (this.eager) {
        // The eager reply already answers this speech: it is now committed.
        this.eager = undefined;
        observation.end(undefined);
        return;
      }
      const text = (await transcript).trim();
      // Settles a pending barge-in; a backchannel over the reply never becomes a turn.
      if (!this.bargeIn.onWords(text, true, speech)) return observation.end(undefined);
      if (!text) {
        this.host.log.info({}, 'speech ended with an empty transcript; no turn');
        return observation.end(undefined);
      }
      this.bargeIn.onUserTurn(speech);
      this.host.userTurn(text, newTurnId(), 'voice', observation);
    });
  }

  /**
   * Transcripts resolve asynchronously; turns are taken strictly in the order spoken. A failed
   * recognition loses the utterance: the client is told (asr_error), so the user can repeat it.
   */
  private enqueue(task: () => Promise<void>): void {
    this.transcripts = this.transcripts.then(task).catch((error: unknown) => {
      this.host.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'speech recognition failed: the utterance is lost');
      this.host.send(errorFrame('asr_error', clientDetail(error, 'speech recognition failed')));
    });
  }
}
