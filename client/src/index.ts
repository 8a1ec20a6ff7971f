export { RealtimeClient, RealtimeError } from './realtime-client.ts';
export { FRAME_EVENT } from './types.ts';
export type { ConnectOptions, RealtimeClientOptions, ServerFrame, Mode } from './types.ts';
