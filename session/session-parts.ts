import type { ServerFrame } from './protocol/server.ts';
import { ContextInjection } from './context-injection.ts';
import { EndOfCall } from './end-of-call.ts';
import { Floor } from './floor.ts';
import type { ConversationHistory } from './history.ts';
import { newTurnId } from './ids.ts';
import { LiveSettings } from './live-settings.ts';
import type { RoutedParts } from './frame-router.ts';
import type { SessionDeps } from './session-deps.ts';
import type { SessionSettings } from './settings.ts';
import { ToolDesk } from './tools/tool-desk.ts';
import type { TurnRecord } from './turn-contract.ts';
import { meteredModel, meteredSpeechToText } from './usage/metered-providers.ts';
import { SessionAccounting } from './usage/session-accounting.ts';
import type { SpeechOutput } from './voice/speech-output.ts';
import type { VoiceController, VoiceHost } from './voice/voice-controller.ts';
import { openVoiceSide } from './voice/voice-side.ts';
import { NO_OBSERVER, type SessionObserver } from './observer.ts';

/** The parts of one conversation, wired to each other (session.ts holds them and the user turn). */
export interface SessionParts {
  accounting: SessionAccounting;
  desk: ToolDesk;
  floor: Floor;
  speech: SpeechOutput | undefined;
  voice: VoiceController | undefined;
  ending: EndOfCall;
  injection: ContextInjection;
  routed: RoutedParts;
  observer: SessionObserver;
}

/** What the parts ask of the session that holds them; read lazily, the session is still being built. */
export interface PartsOwner {
  /** The session itself: the voice side reaches it as its host. */
  host: VoiceHost;
  history: ConversationHistory;
  closed(): boolean;
  /** Between a drop and the snapshot: no new reply may start. */
  detaching(): boolean;
  finished(record: TurnRecord): void;
  userText(text: string): void;
  reset(): void;
}

/**
 * Which part talks to which: the Floor (one reply at a time), the ToolDesk, the voice side,
 * context injection, live settings, the end of call and the usage accounting, so that no part
 * holds another's internals.
 */
export function assembleParts(settings: SessionSettings, deps: SessionDeps, owner: PartsOwner): SessionParts {
  const { host, history } = owner;
  const observer = deps.observer ?? NO_OBSERVER;
  const send = (frame: ServerFrame): void => host.send(frame);
  // The closures below run only after every part exists.
  let floor: Floor;
  let ending: EndOfCall;
  let speech: SpeechOutput | undefined;
  let voice: VoiceController | undefined;
  const replying = (): boolean => floor.replying;
  const accounting = new SessionAccounting(deps, settings.audio?.sr, {
    send,
    synthesizedChars: () => speech?.synthesizedChars ?? 0,
    wrapUp: () => ending.wrapUp(),
    wrappingUp: () => ending.wrappingUp,
  });
  const meter = accounting.meter;
  const desk: ToolDesk = new ToolDesk(
    {
      settings,
      history,
      // The desk's only model calls are think_deeply's, metered apart.
      llm: meteredModel(deps.llm, meter, 'think'),
      search: deps.search,
      send,
      floorFree: () => !replying() && !voice?.input.speaking && !ending.wrappingUp && !owner.closed() && !owner.detaching(),
      narrate: (instruction, beforeDone) => floor.narrate(instruction, beforeDone),
      // A call the reply in flight waits on raised a question: that turn yields (done) so the
      // question is voiced at once. Not while the user is speaking: the floor would not be free.
      yieldFor: (callId): Promise<void> | undefined => (!desk.calls.awaited(callId) || voice?.input.speaking || owner.closed() ? undefined : floor.yieldCurrent()),
      replyNow: (instruction) => {
        if (!replying() && !owner.detaching()) floor.start({ turnId: newTurnId(), extraInstructions: instruction });
      },
      log: deps.log,
      toolCallEnded: (outcome) => observer.toolCallEnded(outcome),
    },
    deps.tools,
  );
  const metered = deps.voice ? { ...deps, voice: { ...deps.voice, stt: meteredSpeechToText(deps.voice.stt, meter) } } : deps;
  const voiceSide = openVoiceSide(host, settings, metered, () => !owner.closed());
  speech = voiceSide?.speech;
  voice = voiceSide?.voice;
  floor = new Floor({
    send,
    llm: deps.llm,
    history,
    settings,
    speech,
    desk,
    log: deps.log,
    meter,
    observer,
    stopped: (record, seq) => voice?.noteInterrupted(record, seq),
    finished: (record) => owner.finished(record),
  });
  ending = new EndOfCall(
    { send, close: (code, reason) => deps.transport.close(code, reason), log: deps.log, floor },
    deps.endCallGraceMs,
    deps.signOff,
  );
  const injection = new ContextInjection({
    history,
    replying,
    send,
    userSpoke: () => host.userSpoke(),
    userTookFloor: () => desk.interactions.userTookFloor(),
    startReply: (options) => floor.start(options),
  });
  const live = new LiveSettings(settings, deps.voices, desk, send);
  const routed: RoutedParts = {
    settings, floor, desk, injection, live, ending, voice, send,
    userText: (text) => owner.userText(text),
    reset: () => owner.reset(),
  };
  return { accounting, desk, floor, speech, voice, ending, injection, routed, observer };
}
