import type { ContextInjection } from './context-injection.ts';
import type { EndOfCall } from './end-of-call.ts';
import type { Floor } from './floor.ts';
import { newTurnId } from './ids.ts';
import type { LiveSettings } from './live-settings.ts';
import { errorFrame } from './protocol/errors.ts';
import type { ServerFrame } from './protocol/server.ts';
import type { SessionFrame } from './session-deps.ts';
import type { SessionSettings } from './settings.ts';
import type { ToolDesk } from './tools/tool-desk.ts';
import type { VoiceController } from './voice/voice-controller.ts';

/** The session's parts a client frame can reach. */
export interface RoutedParts {
  settings: SessionSettings;
  floor: Floor;
  desk: ToolDesk;
  injection: ContextInjection;
  live: LiveSettings;
  ending: EndOfCall;
  voice: VoiceController | undefined;
  send(frame: ServerFrame): void;
  /** A typed user turn takes the floor (the session owns user turns). */
  userText(text: string): void;
  reset(): void;
}

/** Each client frame (start aside, which is the connection's) to the part that owns it. */
export function routeFrame(parts: RoutedParts, frame: SessionFrame): void {
  const { floor, desk, send } = parts;
  switch (frame.type) {
    case 'input_text':
      if (parts.settings.modality !== 'text') {
        return send(errorFrame('modality_mismatch', 'input_text is accepted only when mode.modality is text; use inject_context in voice sessions'));
      }
      return parts.userText(frame.text);
    case 'inject_context':
      return parts.injection.inject(frame);
    case 'trigger_reply':
      if (floor.replying) return send(errorFrame('reply_in_progress', 'a reply is already in flight'));
      floor.start({ turnId: newTurnId(), extraInstructions: frame.instructions });
      return;
    case 'set_voice':
      return parts.live.setVoice(frame);
    case 'set_tools':
      return parts.live.setTools(frame);
    case 'set_tool_choice':
      return parts.live.setToolChoice(frame);
    case 'reset':
      return parts.reset();
    case 'interrupt':
    case 'cancel':
      // The client stopped the reply; not a user turn (an unheard interaction ask is requeued).
      return floor.stop();
    case 'ambience':
      // SPEC: the client's own ambience bed; the server's audio does not change.
      return;
    case 'client_event':
      // Text sessions play nothing, so a playback report has nothing to truncate there.
      parts.voice?.playbackStopped(frame, floor.bargeSeq);
      return;
    case 'wrap_up':
      return parts.ending.wrapUp();
    case 'tool_result':
    case 'tool_cancel':
    case 'tool_deferred':
    case 'tool_progress':
    case 'tool_partial_result':
    case 'confirm_tool_permission': {
      const problem = desk.handle(frame);
      if (problem) send(errorFrame(problem.code, problem.detail));
      return;
    }
    case 'tool_interaction_update':
      return send(desk.updateInteraction(frame));
    default:
      return send(errorFrame('unsupported_frame', `${frame.type} is not supported by this server yet`));
  }
}
