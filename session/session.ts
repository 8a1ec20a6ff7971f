import type { ClientFrame, ClientFrameOf } from '../signaling/frames/client.ts';
import type { ServerFrame } from '../signaling/frames/server.ts';
import { SESSION_ERRORS, type SessionErrorCode } from './errors.ts';
import { ConversationHistory } from './history.ts';
import { newTurnId } from './ids.ts';
import type { LanguageModel } from './providers/llm.ts';
import type { VoiceCatalog } from './providers/voices.ts';
import type { SessionSettings } from './settings.ts';
import type { Transport } from './transport.ts';
import { TurnRunner, type TurnOptions } from './turn-runner.ts';
import type { SpeechToText } from './providers/asr.ts';
import type { TextToSpeech } from './providers/tts.ts';
import type { VoiceActivityDetector } from '../media/vad.ts';
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
  /** Voice sessions only. */
  voice?: { tts: TextToSpeech; stt: SpeechToText; createVad(): VoiceActivityDetector };
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
  private current: TurnRunner | undefined;
  private readonly speech: SpeechOutput | undefined;
  private readonly voice: VoiceController | undefined;
  private bargeSeq = 0;
  private injectedIds = new Set<string>();
  private ambienceActive = false;
  private closed = false;

  constructor(
    readonly sessionId: string,
    readonly settings: SessionSettings,
    private readonly deps: SessionDeps,
  ) {
    this.history = new ConversationHistory(settings.instructions);
    this.log = deps.log;
    const audio = settings.audio;
    if (settings.modality === 'voice' && audio && deps.voice) {
      this.speech = new SpeechOutput({
        tts: deps.voice.tts,
        outputRate: audio.output_sr,
        encoding: audio.output_encoding,
        sendAudio: (bytes) => {
          if (!this.closed) deps.transport.sendAudio(bytes);
        },
        onError: (error) => deps.log.warn({ err: error.message }, 'speech synthesis failed'),
      });
      this.voice = new VoiceController(this, deps.voice.createVad(), deps.voice.stt);
    }
  }

  get replying(): boolean {
    return this.current?.active === true;
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
    this.greet();
  }

  handle(frame: SessionFrame): void {
    if (this.closed) return;
    switch (frame.type) {
      case 'input_text':
        return this.onInputText(frame);
      case 'inject_context':
        return this.onInjectContext(frame);
      case 'trigger_reply':
        return this.onTriggerReply(frame);
      case 'set_voice':
        return this.onSetVoice(frame);
      case 'reset':
        return this.onReset();
      case 'interrupt':
      case 'cancel':
        return this.interruptReply();
      case 'ambience':
        this.ambienceActive = frame.active;
        this.deps.log.info({ ambience: frame.active }, 'client ambience state');
        return;
      case 'client_event':
        // Text sessions play nothing, so there is nothing to truncate.
        this.voice?.playbackStopped(frame, this.bargeSeq);
        return;
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

  /** A real user turn (typed or spoken) takes the floor and gets a reply. */
  userTurn(text: string, turnId: string, inputSource: 'voice' | 'text' = 'voice'): TurnRunner {
    this.cutIn();
    this.send({ type: 'asr', text, turn_id: turnId, input_source: inputSource });
    this.history.addUser(text);
    return this.startReply({ turnId });
  }

  userSpoke(): void {
    // Hook for end-of-call cancellation; nothing pending yet.
  }

  /** The transport is gone; stop work in flight. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.current?.interrupt(this.bargeSeq);
    this.voice?.close();
    this.speech?.close();
  }

  get ambience(): boolean {
    return this.ambienceActive;
  }

  private onInputText(frame: ClientFrameOf<'input_text'>): void {
    if (this.settings.modality !== 'text') {
      return this.error('modality_mismatch', 'input_text is accepted only when mode.modality is text; use inject_context in voice sessions');
    }
    this.userTurn(frame.text, newTurnId(), 'text');
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
    if (turnId) this.startReply({ turnId });
  }

  private onTriggerReply(frame: ClientFrameOf<'trigger_reply'>): void {
    if (this.replying) return this.error('reply_in_progress', 'a reply is already in flight');
    this.startReply({ turnId: newTurnId(), extraInstructions: frame.instructions });
  }

  private onSetVoice(frame: ClientFrameOf<'set_voice'>): void {
    const voice = this.deps.voices.find(frame.voice);
    if (!voice) return this.error('unknown_voice', `unknown voice "${frame.voice}"; ready.voices lists the choices`);
    this.settings.voice = voice.voice;
    this.send({ type: 'voice', voice: voice.voice, name: voice.name });
  }

  private onReset(): void {
    this.cutIn();
    this.voice?.reset();
    this.history.clear();
    this.injectedIds.clear();
    this.greet();
  }

  private greet(): void {
    if (this.settings.greeting === false) return;
    this.startReply({ turnId: newTurnId(), fixedText: this.settings.greeting, welcome: true });
  }

  /** A new user turn takes the floor from any reply in flight. */
  private cutIn(): void {
    if (this.replying) this.interruptReply();
  }

  interruptReply(): void {
    const runner = this.current;
    if (!runner?.active) return;
    this.bargeSeq += 1;
    const seq = this.bargeSeq;
    runner.interrupt(seq);
    void runner.done.then((record) => this.voice?.noteInterrupted(record, seq));
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
        log: this.deps.log,
      },
      options,
    );
    this.current = runner;
    void runner.start();
    return runner;
  }

  private error(code: SessionErrorCode, detail: string): void {
    this.send({ type: 'error', code, detail, retryable: SESSION_ERRORS[code].retryable });
  }

  send(frame: ServerFrame): void {
    if (this.closed) return;
    this.deps.transport.sendFrame(frame);
  }
}
