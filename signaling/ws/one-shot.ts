import type { ClientFrameOf } from '../../session/protocol/client.ts';
import type { ServerContext } from '../context.ts';
import { randomId } from '../../session/ids.ts';
import type { WsErrorCode } from '../../session/protocol/errors.ts';
import { StoreUnavailableError } from '../stores/unavailable.ts';
import { authenticateStart, type HandshakeAuth } from './authenticate.ts';
import type { StartRefusals } from './start-refusals.ts';
import type { WebSocketTransport } from './ws-transport.ts';

export type OneShotResult = { ok: true; ack: { type: 'feedback_ack' | 'client_error_ack'; id: string } } | { ok: false; detail: string };

/**
 * sendFeedback / sendClientError: a socket of their own whose only frame is the report. The key
 * rules are the conversation's (a scoped key works for its session id), so a report can still
 * be sent after the conversation socket closed. The ack is sent only once the report is stored;
 * a store that cannot take it rejects (StoreUnavailableError) and nothing is acknowledged.
 */
export async function acceptOneShot(
  server: ServerContext,
  handshake: HandshakeAuth | undefined,
  frame: ClientFrameOf<'feedback' | 'client_error'>,
): Promise<OneShotResult> {
  const auth = await authenticateStart(server, handshake, frame.api_key, frame.session_id);
  if (!auth.ok) return { ok: false, detail: auth.detail };
  const id = randomId(frame.type === 'feedback' ? 'fb' : 'ce', 9);
  const { type, api_key: _key, ...report } = frame;
  await server.stores.reports.append(type, { id, received_at: new Date().toISOString(), account: auth.credential.account, ...report });
  server.log.info({ id, kind: type, session_id: frame.session_id }, 'report stored');
  return { ok: true, ack: { type: type === 'feedback' ? 'feedback_ack' : 'client_error_ack', id } };
}

/** The report's socket, as the connection lends it: the ack goes out on it, or a fatal error. */
export interface OneShotSocket {
  transport: Pick<WebSocketTransport, 'sendFrame' | 'close'>;
  refusals: StartRefusals;
  fail(code: WsErrorCode, detail: string): void;
}

/** Stores the report and answers: the ack and a clean close, or the error that ends the socket. */
export function answerOneShot(server: ServerContext, handshake: HandshakeAuth | undefined, frame: ClientFrameOf<'feedback' | 'client_error'>, socket: OneShotSocket): void {
  void acceptOneShot(server, handshake, frame).then(
    async (result) => {
      if (!result.ok) {
        await socket.refusals.keyRefused(result.detail, frame.api_key, frame.session_id);
        return socket.fail('unauthorized', result.detail);
      }
      socket.transport.sendFrame(result.ack);
      socket.transport.close(1000, 'reported');
    },
    (error: unknown) => {
      if (error instanceof StoreUnavailableError) return socket.fail('store_unavailable', 'the report could not be stored right now; send it again shortly');
      server.log.error({ err: String(error) }, 'storing a report failed');
      socket.fail('internal_error', 'the report could not be stored');
    },
  );
}
