import type { VoiceActivityDetector } from '../media/vad.ts';
import type { OutputEncoding } from '../media/pcm.ts';
import type { ClientFrame, ClientFrameOf } from './protocol/client.ts';
import type { ServerFrame } from './protocol/server.ts';
import { checkToolChoice, validateTools } from './protocol/tools.ts';
import { EndOfCall } from './end-of-call.ts';
import { errorFrame, type SessionErrorCode } from './protocol/errors.ts';
import { ConversationHistory } from './history.ts';
import { newTurnId } from './ids.ts';
import type { SpeechToText } from './providers/asr.ts';
import type { LanguageModel } from './providers/llm.ts';
import type { WebSearch } from './providers/search.ts';
import type { TextToSpeech } from './providers/tts.ts';
import type { VoiceCatalog } from './providers/voices.ts';
import type { SessionSettings } from './settings.ts';
import type { SessionSnapshot } from './resume/snapshot.ts';
import { ToolDesk, type ToolDeskOptions } from './tools/tool-desk.ts';
import type { Transport } from './transport.ts';
import { TurnRunner, type TurnOptions, type TurnStatus } from './turn-runner.ts';
import { SpeechOutput } from './voice/speech-output.ts';
import { VoiceController, type VoiceHost } from './voice/voice-controller.ts';

export interface SessionLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface SessionDeps {
  transport: Transport;
  llm: LanguageModel;
  voices: VoiceCatalog;
  log: SessionLog;
  search?: WebSearch;
  tools: ToolDeskOptions;
  endCallGraceMs: number;
  signOff: string;
  /** Voice sessions only. */
  voice?: { tts: TextToSpeech; stt: SpeechToText; createVad(): VoiceActivityDetector };
  /** The pipeline's own formats when the transport is not the wire format (WebRTC: 48 kHz PCM16 both ways). */
  media?: { inputRate: number; outputRate: number; encoding: OutputEncoding };
  /** Called after every reply ends (its done sent): the moment to write the conversation through. */
  onTurnEnd?(): void;
}

/** Frames the session core handles; start is the connection's business. */
export type SessionFrame = Exclude<ClientFrame, { type: 'start' }>;

/**
 * One conversation, transport-agnostic: it receives validated frames and audio, and sends typed
 * frames through its Transport. Turn-taking rule: at most one assistant reply is active; a new
 * user turn (typed or spoken) cuts in on the reply in flight.
 */
export class Session implements VoiceHost {
  readonly history: ConversationHistory;
  readonly log: SessionLog;
  readonly desk: ToolDesk;
  private current: TurnRunner | undefined;
  private readonly speech: SpeechOutput | undefined;
  private readonly voice: VoiceController | undefined;
  private readonly ending: EndOfCall;
  private bargeSeq = 0;
  private injectedIds = new Set<string>();
  private ambienceActive = false;
  private greeted = false;
  private closed = false;

  constructor(
    readonly sessionId: string,
    readonly settings: SessionSettings,
    private readonly deps: SessionDeps,
  ) {
    this.history = new ConversationHistory(settings.instructions);
    this.log = deps.log;
    this.ending = new EndOfCall({ send: (f) => this.send(f), close: (code, reason) => deps.transport.close(code, reason), log: deps.log }, deps.endCallGraceMs);
    this.desk = new ToolDesk(
      {
        settings,
        history: this.history,
        llm: deps.llm,
        search: deps.search,
        send: (f) => this.send(f),
        floorFree: () => !this.replying && !this.voice?.input.speaking && !this.ending.wrappingUp && !this.closed,
        narrate: (instruction, beforeDone) => {
          const runner = this.startReply({ turnId: newTurnId(), extraInstructions: instruction, beforeDone });
          return { stop: () => this.stopReply(runner) };
        },
        yieldFor: (callId) => this.yieldFor(callId),
        replyNow: (instruction) => {
          if (!this.replying) this.startReply({ turnId: newTurnId(), extraInstructions: instruction });
        },
        log: deps.log,
      },
      deps.tools,
    );
    const audio = settings.audio;
    if (settings.modality === 'voice' && audio && deps.voice) {
      const media = deps.media ?? { inputRate: audio.sr, outputRate: audio.output_sr, encoding: audio.output_encoding };
      this.speech = new SpeechOutput({
        tts: deps.voice.tts,
        outputRate: media.outputRate,
        encoding: media.encoding,
        sendAudio: (bytes) => {
          if (!this.closed) deps.transport.sendAudio(bytes);
        },
        ...(deps.transport.downlinkLeadMs === undefined ? {} : { leadMs: deps.transport.downlinkLeadMs }),
        discardAudio: () => deps.transport.discardAudio?.(),
        ...(deps.transport.sendAheadMs === undefined ? {} : { sendAheadMs: deps.transport.sendAheadMs }),
        onError: (error) => deps.log.warn({ err: error.message }, 'speech synthesis failed'),
      });
      this.voice = new VoiceController(this, media.inputRate, deps.voice.createVad(), deps.voice.stt);
    }
  }

  get replying(): boolean {
    return this.current?.active === true;
  }

  get ambience(): boolean {
    return this.ambienceActive;
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
  }

  handle(frame: SessionFrame): void {
    if (this.closed) return;
    switch (frame.type) {
      case 'input_text':
        if (this.settings.modality !== 'text') {
          return this.error('modality_mismatch', 'input_text is accepted only when mode.modality is text; use inject_context in voice sessions');
        }
        return this.onUserText(frame.text, 'text');
      case 'inject_context':
        return this.onInjectContext(frame);
      case 'trigger_reply':
        if (this.replying) return this.error('reply_in_progress', 'a reply is already in flight');
        this.startReply({ turnId: newTurnId(), extraInstructions: frame.instructions });
        return;
      case 'set_voice':
        return this.onSetVoice(frame);
      case 'reset':
        return this.onReset();
      case 'interrupt':
      case 'cancel':
        // The client stopped the reply; not a user turn (an unheard interaction ask is requeued).
        return this.stopReply(this.current);
      case 'ambience':
        this.ambienceActive = frame.active;
        return;
      case 'client_event':
        // Text sessions play nothing, so a playback report has nothing to truncate there.
        this.voice?.playbackStopped(frame, this.bargeSeq);
        return;
      case 'set_tools':
        return this.onSetTools(frame);
      case 'set_tool_choice': {
        const bad = checkToolChoice(frame.tool_choice, this.settings.tools, { webSearch: this.settings.webSearch, endCall: this.settings.endCall });
        if (bad) return this.send(errorFrame('invalid_tools', `${bad}; the previous tool choice stays`));
        this.desk.setToolChoice(frame);
        return;
      }
      case 'wrap_up':
        return this.onWrapUp();
      case 'tool_result':
      case 'tool_cancel':
      case 'tool_deferred':
      case 'tool_progress':
      case 'tool_partial_result':
      case 'confirm_tool_permission': {
        const problem = this.desk.handle(frame);
        if (problem) this.send(errorFrame(problem.code, problem.detail));
        return;
      }
      case 'tool_interaction_update':
        return this.send(this.desk.updateInteraction(frame));
      default:
        return this.error('unsupported_frame', `${frame.type} is not supported by this server yet`);
    }
  }

  /** Uplink microphone audio: PCM16 LE mono at audio.sr. */
  handleAudio(pcm: Uint8Array): void {
    if (this.closed) return;
    if (this.settings.modality === 'text') {
      return this.error('modality_mismatch', 'binary audio is not accepted in a text session');
    }
    this.voice?.input.pushBytes(pcm);
  }

  /** Decoded uplink PCM at the pipeline's input rate (WebRTC). */
  handlePcm(samples: Int16Array): void {
    if (this.closed) return;
    this.voice?.input.pushSamples(samples);
  }

  /** A real user turn (typed or spoken) takes the floor and gets a reply. */
  userTurn(text: string, turnId: string, inputSource: 'voice' | 'text' = 'voice'): TurnRunner | undefined {
    this.ending.userSpoke();
    // A clear yes or no while a permission is held answers it instead of starting a turn.
    if (this.desk.permissions.waiting && this.desk.permissions.answer(text)) {
      this.send({ type: 'asr', text, input_source: inputSource });
      this.history.addUser(text);
      return undefined;
    }
    this.desk.interactions.userTookFloor();
    this.cutIn();
    this.send({ type: 'asr', text, turn_id: turnId, input_source: inputSource });
    this.history.addUser(text);
    return this.startReply({ turnId, afterUserTurn: true });
  }

  userSpoke(): void {
    this.ending.userSpoke();
  }

  /** Barge-in: real user speech took the floor from the reply in flight. */
  interruptReply(): void {
    if (!this.replying) return;
    this.desk.interactions.userTookFloor();
    this.stopReply(this.current);
  }

  /** Stops this reply if it is still in flight (interrupted, done) and keeps it for the playback report. */
  private stopReply(runner: TurnRunner | undefined): void {
    if (!runner?.active || runner !== this.current) return;
    this.bargeSeq += 1;
    const seq = this.bargeSeq;
    runner.interrupt(seq);
    void runner.done.then((record) => this.voice?.noteInterrupted(record, seq));
  }

  send(frame: ServerFrame): void {
    if (this.closed) return;
    this.deps.transport.sendFrame(frame);
  }

  /** Restores a stashed conversation before begin(): no greeting is spoken again. */
  restore(snapshot: SessionSnapshot): void {
    this.history.restore(snapshot.history);
    for (const id of snapshot.injectedIds) this.injectedIds.add(id);
    this.bargeSeq = snapshot.bargeSeq;
    this.greeted = snapshot.greeted;
    this.desk.calls.adopt(snapshot.pendingCalls, this.deps.tools.defaultTimeoutMs);
  }

  /** Deferred jobs that survived a resume: the host re-associates them. */
  announceDeferredJobs(): void {
    for (const job of this.desk.calls.jobs()) {
      this.send({ type: 'tool_deferred_resume', id: job.callId, handle: job.handle, name: job.name, job_id: job.jobId, status_label: job.statusLabel });
    }
  }

  /**
   * The connection dropped: stop the reply in flight (its delivered part stays in the history),
   * then capture what a resume needs, then close.
   */
  detach(): SessionSnapshot {
    this.current?.interrupt(this.bargeSeq);
    const snapshot = this.snapshot();
    this.close();
    return snapshot;
  }

  /** What a resume needs, as plain data, taken without stopping anything. */
  snapshot(): SessionSnapshot {
    return {
      settings: structuredClone(this.settings),
      history: this.history.snapshot(),
      injectedIds: [...this.injectedIds],
      pendingCalls: this.desk.calls.pending(),
      bargeSeq: this.bargeSeq,
      greeted: this.greeted,
    };
  }

  /** The transport is gone; stop work in flight. */
  close(): void {
    if (this.closed) return;
    this.current?.interrupt(this.bargeSeq);
    this.closed = true;
    this.desk.close();
    this.ending.close();
    this.voice?.close();
    this.speech?.close();
  }

  private onUserText(text: string, source: 'voice' | 'text'): void {
    this.userTurn(text, newTurnId(), source);
  }

  private onInjectContext(frame: ClientFrameOf<'inject_context'>): void {
    const { message_id: messageId, role, text } = frame;
    const inputSource = role === 'user' ? 'text' : 'context';
    if (this.injectedIds.has(messageId)) {
      // Idempotent retry: the first delivery stands, nothing is added twice.
      return this.send({
        type: 'inject_context_ack', message_id: messageId, accepted: true, role, input_source: inputSource,
        reply_started: false, detail: 'duplicate message_id: already delivered',
      });
    }
    this.injectedIds.add(messageId);
    const wantsReply = frame.reply ?? role === 'user';
    const canReply = wantsReply && !this.replying;
    const turnId = canReply ? newTurnId() : undefined;
    if (role === 'user') {
      this.ending.userSpoke();
      if (canReply) this.desk.interactions.userTookFloor();
      this.history.addUser(text);
      this.send({ type: 'asr', text, message_id: messageId, input_source: 'text', ...(turnId ? { turn_id: turnId } : {}) });
    } else {
      this.history.addContext(text);
    }
    this.send({
      type: 'inject_context_ack', message_id: messageId, accepted: true, role, input_source: inputSource,
      reply_started: canReply, ...(turnId ? { turn_id: turnId } : {}),
      ...(wantsReply && !canReply ? { detail: 'delivered; no reply started because another reply is in flight' } : {}),
    });
    if (turnId) this.startReply({ turnId, afterUserTurn: role === 'user' });
  }

  private onSetVoice(frame: ClientFrameOf<'set_voice'>): void {
    const voice = this.deps.voices.find(frame.voice);
    if (!voice) return this.error('unknown_voice', `unknown voice "${frame.voice}"; ready.voices lists the choices`);
    this.settings.voice = voice.voice;
    this.send({ type: 'voice', voice: voice.voice, name: voice.name });
  }

  private onSetTools(frame: ClientFrameOf<'set_tools'>): void {
    const checked = validateTools(frame.tools, { webSearch: this.settings.webSearch, endCall: this.settings.endCall });
    if (!checked.ok) {
      this.send(errorFrame('invalid_tools', `${checked.detail}; the previous tools stay in force`));
      return;
    }
    this.settings.tools = checked.tools;
    this.desk.toolsChanged();
  }

  private onWrapUp(): void {
    if (!this.ending.startWrapUp()) return;
    const signOff = (): void => {
      const runner = this.startReply({ turnId: newTurnId(), fixedText: this.deps.signOff });
      void runner.done.then(() => this.ending.signedOff());
    };
    // The reply in flight is allowed to finish first.
    if (this.current?.active) void this.current.done.then(signOff);
    else signOff();
  }

  private onReset(): void {
    // Open asks leave the old conversation first, so the reply cut below does not requeue them.
    this.desk.interactions.reset();
    this.cutIn();
    this.voice?.reset();
    this.desk.completions.clear();
    this.history.clear();
    this.injectedIds.clear();
    this.greet();
  }

  private greet(): void {
    this.greeted = true;
    if (this.settings.greeting === false) return;
    this.startReply({ turnId: newTurnId(), fixedText: this.settings.greeting, welcome: true });
  }

  /** A new user turn takes the floor from any reply in flight. */
  private cutIn(): void {
    this.stopReply(this.current);
  }

  /**
   * A call the reply in flight waits on raised a question: that turn yields (done) so the
   * question is voiced at once. Not while the user is speaking: the floor would not be free.
   */
  private yieldFor(callId: string): Promise<void> | undefined {
    const runner = this.current;
    if (!runner?.active || !this.desk.calls.awaited(callId) || this.voice?.input.speaking || this.closed) return undefined;
    return runner.yieldFloor();
  }

  private startReply(options: TurnOptions): TurnRunner {
    const runner = new TurnRunner(
      {
        send: (frame) => this.send(frame),
        llm: this.deps.llm,
        history: this.history,
        settings: this.settings,
        speech: this.speech,
        bargeSeq: () => this.bargeSeq,
        tools: () => this.desk.tools(),
        toolChoice: (round, afterUserTurn) => this.desk.toolChoice(round, afterUserTurn),
        runTools: (calls, signal) => this.desk.runRound(calls, signal),
        claimCallId: (modelId) => this.desk.calls.claimId(modelId),
        log: this.deps.log,
      },
      options,
    );
    this.current = runner;
    void runner.start();
    void runner.done.then((record) => this.afterTurn(record.status, record.farewell));
    return runner;
  }

  private afterTurn(_status: TurnStatus, farewell: string | undefined): void {
    if (this.closed) return;
    this.deps.onTurnEnd?.();
    if (farewell !== undefined) return this.ending.agentEnded(farewell);
    if (this.ending.wrappingUp) return;
    // The floor may be free: deliver waiting interaction asks, then background-job voiceovers.
    queueMicrotask(() => this.desk.pumpDeliveries());
  }

  private error(code: SessionErrorCode, detail: string): void {
    this.send(errorFrame(code, detail));
  }
}
