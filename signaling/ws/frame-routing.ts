import type { Session } from '../../session/session.ts';
import type { ClientFrameOf } from '../../session/protocol/client.ts';
import { errorFrame, type ErrorCode } from '../../session/protocol/errors.ts';
import type { ServerFrame } from '../../session/protocol/server.ts';
import { parseClientFrame } from '../../session/protocol/parse.ts';
import type { StartFrame } from '../../session/protocol/start.ts';
import type { AccountLimit } from '../../session/protocol/usage.ts';
import type { AccountLimits } from '../usage/account-limits.ts';
import { gateInputText } from '../usage/input-text-gate.ts';
import type { WebRtcSetup } from '../webrtc/webrtc-setup.ts';

/** What may open a socket: a conversation's start, or a report on a socket of its own. */
export type FirstFrame =
  | { kind: 'start'; frame: StartFrame }
  | { kind: 'one-shot'; frame: ClientFrameOf<'feedback' | 'client_error'> }
  | { kind: 'refused'; detail: string };

export function readFirstFrame(bytes: Buffer, isBinary: boolean): FirstFrame {
  if (isBinary) return { kind: 'refused', detail: 'the first frame must be the JSON start frame, not audio' };
  const parsed = parseClientFrame(bytes.toString('utf8'));
  if (!parsed.ok) {
    const own = parsed.type === 'start' || parsed.type === 'feedback' || parsed.type === 'client_error';
    return { kind: 'refused', detail: own ? parsed.detail : `the first frame must be a valid start frame: ${parsed.detail}` };
  }
  const { frame } = parsed;
  if (frame.type === 'feedback' || frame.type === 'client_error') return { kind: 'one-shot', frame };
  if (frame.type !== 'start') return { kind: 'refused', detail: `the first frame must be start, got ${frame.type}` };
  return { kind: 'start', frame };
}

export interface ErrorExtra {
  retry_after_ms?: number | undefined;
  limit?: AccountLimit | undefined;
}

/** An error frame with the fields a refusal carries (left out when undefined). */
export function errorWith(code: ErrorCode, detail: string, extra: ErrorExtra): ServerFrame {
  const defined = Object.fromEntries(Object.entries(extra).filter(([, value]) => value !== undefined));
  return { ...errorFrame(code, detail), ...defined };
}

/** The connection as a JSON frame inside a call sees it. */
export interface CallFrameTarget {
  session: Session | undefined;
  webrtc: WebRtcSetup | undefined;
  limits: AccountLimits;
  account: string;
  sendError(code: ErrorCode, detail: string, extra?: ErrorExtra): void;
  /** Holds every later frame until the promise settles, so frames keep their order. */
  hold(verdict: Promise<void>): void;
}

/** A JSON frame after the start, from the socket or the control data channel, to where it belongs. */
export function routeCallFrame(target: CallFrameTarget, text: string): void {
  const parsed = parseClientFrame(text);
  if (!parsed.ok) return target.sendError(parsed.code, parsed.detail);
  const frame = parsed.frame;
  if (frame.type === 'start') return target.sendError('already_started', 'this connection already has a session; open a new socket for another');
  if (frame.type === 'feedback' || frame.type === 'client_error') {
    return target.sendError('invalid_frame', `${frame.type} goes on a socket of its own as the first frame, not inside a conversation`);
  }
  if (frame.type === 'webrtc_offer') {
    if (!target.webrtc) return target.sendError('unexpected_offer', 'webrtc_offer is only accepted after a start frame with transport kind webrtc');
    void target.webrtc.offer(frame.sdp);
    return;
  }
  const session = target.session;
  if (!session) return target.sendError('not_ready', `${frame.type} arrived before ready; the call is still connecting`);
  if (frame.type !== 'input_text') return session.handle(frame);
  const held = gateInputText(target.limits, target.account, {
    pass: () => session.handle(frame),
    refuse: (detail, retryAfterMs, limit) => target.sendError('rate_limited', detail, { retry_after_ms: retryAfterMs, limit }),
  });
  if (held) target.hold(held);
}
