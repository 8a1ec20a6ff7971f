import type { ServerFrame } from '../../signaling/frames/server.ts';
import type { Mode } from '../../signaling/frames/start.ts';

/** Wire types come from the server's zod schemas, as types only: no zod in the bundle. */
export type { ServerFrame, Mode };

export interface RealtimeClientOptions {
  /** {ws_url}/ws */
  url: string;
  /** Must equal the scoped key's session id; generated when absent. */
  sessionId?: string;
  apiKey?: string;
  mode?: Partial<Mode>;
  user?: string;
  timezone?: string;
}

export interface ConnectOptions {
  temperature?: number;
  noGreeting?: boolean;
}

/** The catch-all event name: every inbound JSON frame is dispatched under it too. */
export const FRAME_EVENT = 'frame';
