import type { ServerFrame } from './protocol/server.ts';
import { errorFrame, type SessionErrorCode } from './protocol/errors.ts';
import type { ContextInjection } from './context-injection.ts';
import type { EndOfCall } from './end-of-call.ts';
import type { Floor } from './floor.ts';
import { ConversationHistory } from './history.ts';
import { newTurnId } from './ids.ts';
import { routeFrame, type RoutedParts } from './frame-router.ts';
import { assembleParts } from './session-parts.ts';
import type { SessionDeps, SessionFrame, SessionLog } from './session-deps.ts';
import type { SessionSettings } from './settings.ts';
import type { ClosingSchedule } from './closing/closing-schedule.ts';
import { applySnapshot, captureSnapshot, type ResumableParts } from './resume/resumable.ts';
import type { SessionSnapshot } from './resume/snapshot.ts';
import type { ToolDesk } from './tools/tool-desk.ts';
import type { TurnRecord } from './turn-contract.ts';
import type { TurnRunner } from './turn-runner.ts';
import type { SessionAccounting } from './usage/session-accounting.ts';
import type { SpeechOutput } from './voice/speech-output.ts';
import type { VoiceController, VoiceHost } from './voice/voice-controller.ts';
import type { SessionObserver } from './observer.ts';
import { TurnObservation } from './turn-observation.ts';

/** How long a drop waits for the reply in flight to stop before the snapshot is taken anyway. */
const DETACH_SETTLE_MS = 1000;

/**
 * One conversation, transport-agnostic: it receives validated frames and audio, and sends typed
 * frames through its Transport. Its parts (session-parts.ts wires them) each own a piece of the
 * protocol; the session routes each frame to its part, owns the user turn and the resume.
 */
export class Session implements VoiceHost {
  readonly history: ConversationHistory;
  readonly log: SessionLog;
  readonly desk: ToolDesk;
  private readonly accounting: SessionAccounting;
  /** When the conversation first started (epoch ms), kept across resumes. */
  private openedAt = Date.now();
  private readonly floor: Floor;
  private readonly speech: SpeechOutput | undefined;
  private readonly voice: VoiceController | undefined;
  private readonly ending: EndOfCall;
  private readonly injection: ContextInjection;
  private readonly routed: RoutedParts;
  private readonly observer: SessionObserver;
  private greeted = false;
  private closed = false;
  /** Between a drop and the snapshot: no new reply may start. */
  private detaching = false;

  constructor(
    readonly sessionId: string,
    readonly settings: SessionSettings,
    private readonly deps: SessionDeps,
  ) {
    this.history = new ConversationHistory(settings.instructions, deps.historyMaxChars);
    this.log = deps.log;
    const parts = assembleParts(settings, deps, {
      host: this,
      history: this.history,
      closed: () => this.closed,
      detaching: () => this.detaching,
      finished: (record) => this.afterTurn(record),
      userText: (text) => {
        const observation = this.observeTurn();
        observation.mark('inputText');
        void this.userTurn(text, newTurnId(), 'text', observation);
      },
      reset: () => this.onReset(),
    });
    this.accounting = parts.accounting;
    this.desk = parts.desk;
    this.floor = parts.floor;
    this.speech = parts.speech;
    this.voice = parts.voice;
    this.ending = parts.ending;
    this.injection = parts.injection;
    this.routed = parts.routed;
    this.observer = parts.observer;
  }

  get replying(): boolean {
    return this.floor.replying;
  }

  /** Every close the server plans, announced ahead (session_closing_soon). */
  get closing(): ClosingSchedule {
    return this.accounting.closing;
  }

  /** Sends ready and speaks the greeting. */
  begin(resumeToken: string): void {
    const voice = this.deps.voices.find(this.settings.voice);
    const audio = this.settings.audio;
    this.send({
      type: 'ready',
      modality: this.settings.modality,
      voice: this.settings.voice,
      name: voice?.name ?? this.settings.voice,
      voices: [...this.deps.voices.list()],
      ...(audio ? { audio: { output_encoding: audio.output_encoding, output_sr: audio.output_sr } } : {}),
      resume_token: resumeToken,
    });
    if (!this.greeted) this.greet();
    this.announceDeferredJobs();
    this.accounting.begin(this.openedAt);
  }

  /** Routes a client frame to the part that owns it (frame-router.ts). */
  handle(frame: SessionFrame): void {
    if (this.closed) return;
    routeFrame(this.routed, frame);
  }

  /** Uplink microphone audio: PCM16 LE mono at audio.sr. */
  handleAudio(pcm: Uint8Array): void {
    if (this.closed) return;
    if (this.settings.modality === 'text') {
      return this.error('modality_mismatch', 'binary audio is not accepted in a text session');
    }
    if (!this.voice) return;
    this.accounting.uplinkBytes(pcm.byteLength);
    this.voice.input.pushBytes(pcm);
  }

  /** Decoded uplink PCM at the pipeline's input rate (WebRTC). */
  handlePcm(samples: Int16Array): void {
    if (this.closed || !this.voice) return;
    this.accounting.uplinkSamples(samples.length);
    this.voice.input.pushSamples(samples);
  }

  /**
   * A real user turn (typed or spoken) takes the floor and gets a reply; `observation` holds the
   * stages timed before the reply (end of turn, transcription, input_text).
   */
  userTurn(text: string, turnId: string, inputSource: 'voice' | 'text' = 'voice', observation?: TurnObservation): TurnRunner | undefined {
    this.userSpoke();
    // A clear yes or no while a permission is held answers it instead of starting a turn.
    if (this.desk.permissions.waiting && this.desk.permissions.answer(text)) {
      this.send({ type: 'asr', text, input_source: inputSource });
      this.history.addUser(text);
      observation?.end(undefined);
      return undefined;
    }
    this.desk.interactions.userTookFloor();
    this.floor.stop();
    this.send({ type: 'asr', text, turn_id: turnId, input_source: inputSource });
    this.history.addUser(text);
    return this.floor.start({ turnId, afterUserTurn: true, ...(observation ? { observation } : {}) });
  }

  /** A turn's waterfall from its first stage on (the end-of-turn decision, input_text). */
  observeTurn(): TurnObservation {
    return new TurnObservation(this.observer.openTurn());
  }

  /** Real user input (speech, typed or injected text): cancels a pending end of call, restarts the idle wait. */
  userSpoke(): void {
    this.ending.userSpoke();
    this.accounting.userActive();
  }

  playbackHeard(turnId: string, heardMs: number): void {
    this.accounting.meter.heard(turnId, heardMs);
  }

  /** Sound during the reply: its audio pauses until the sound is judged (voice/barge-in.ts). */
  pauseReply(): boolean {
    return this.replying && this.speech?.pause() === true;
  }

  resumeReply(): void {
    this.speech?.resume();
  }

  /** Barge-in: real user speech took the floor from the reply in flight. */
  interruptReply(): void {
    if (!this.replying) return;
    this.desk.interactions.userTookFloor();
    this.floor.stop(undefined, this.voice?.input.speechOnsetAt);
  }

  send(frame: ServerFrame): void {
    if (this.closed) return;
    this.deps.transport.sendFrame(frame);
  }

  /** Restores a stashed conversation before begin(): no greeting is spoken again. */
  restore(snapshot: SessionSnapshot): void {
    applySnapshot(this.resumable(), snapshot, this.deps.tools.defaultTimeoutMs);
    this.greeted = snapshot.greeted;
    if (snapshot.openedAt !== undefined) this.openedAt = snapshot.openedAt;
  }

  /** Deferred jobs that survived a resume: the host re-associates them. */
  announceDeferredJobs(): void {
    for (const job of this.desk.calls.jobs()) {
      this.send({ type: 'tool_deferred_resume', id: job.callId, handle: job.handle, name: job.name, job_id: job.jobId, status_label: job.statusLabel });
    }
  }

  /**
   * The connection dropped: stop the reply in flight (its delivered part stays in the history),
   * let its tool round record the results that had arrived, then capture what a resume needs,
   * then close. Waiting is bounded, for a provider that does not stop when asked.
   */
  async detach(settleBoundMs = DETACH_SETTLE_MS): Promise<SessionSnapshot> {
    this.detaching = true;
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([this.floor.halt(), new Promise<void>((resolve) => (bound = setTimeout(resolve, settleBoundMs)))]);
    clearTimeout(bound);
    const snapshot = this.snapshot();
    this.close();
    return snapshot;
  }

  /** What a resume needs, as plain data, taken without stopping anything. */
  snapshot(): SessionSnapshot {
    return { ...captureSnapshot(this.resumable(), this.greeted), openedAt: this.openedAt };
  }

  /** The same without copies, to be serialized at once (write-through at every turn end). */
  view(): SessionSnapshot {
    return { ...captureSnapshot(this.resumable(), this.greeted, false), openedAt: this.openedAt };
  }

  /** The transport is gone; stop work in flight. */
  close(): void {
    if (this.closed) return;
    this.floor.halt();
    this.closed = true;
    this.accounting.close();
    this.desk.close();
    this.ending.close();
    this.voice?.close();
    this.speech?.close();
  }

  private resumable(): ResumableParts {
    return { settings: this.settings, history: this.history, injection: this.injection, floor: this.floor, calls: this.desk.calls };
  }

  private onReset(): void {
    // Open asks leave the old conversation first, so the reply cut below does not requeue them.
    this.desk.interactions.reset();
    this.floor.stop();
    this.voice?.reset();
    this.desk.completions.clear();
    this.history.clear();
    this.injection.clear();
    this.greet();
  }

  private greet(): void {
    this.greeted = true;
    if (this.settings.greeting === false) return;
    this.floor.start({ turnId: newTurnId(), fixedText: this.settings.greeting, welcome: true });
  }

  private afterTurn(record: TurnRecord): void {
    if (this.closed || this.detaching) return;
    this.accounting.turnEnded();
    this.deps.onTurnEnd?.();
    if (record.farewell !== undefined) return this.ending.agentEnded(record.farewell);
    if (this.ending.wrappingUp) return;
    // The floor may be free: deliver waiting interaction asks, then background-job voiceovers.
    queueMicrotask(() => this.desk.pumpDeliveries());
  }

  private error(code: SessionErrorCode, detail: string): void {
    this.send(errorFrame(code, detail));
  }
}
