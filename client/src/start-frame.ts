import type { StartFrame } from '../../session/protocol/start.ts';
import type { ConnectOptions, Mode } from './types.ts';

export const CLIENT_NAME = 'parley-client';
export const CLIENT_VERSION = '0.1.0';

export interface StartInputs {
  sessionId: string;
  apiKey: string | undefined;
  mode: Mode;
  user: string | undefined;
  timezone: string | undefined;
  transport: 'ws' | 'webrtc';
  resumeToken: string | undefined;
  downlink: { encoding: 'pcm16' | 'pcm_f32le'; sampleRate: number };
  userAgent: string | undefined;
}

/**
 * The mode a start frame carries: the caller's mode with kind filled in, connect()'s
 * temperature and noGreeting applied, and background_audio dropped unless the session really is
 * on WebRTC (SPEC: the server rejects it on the WebSocket transport).
 */
export function effectiveMode(mode: Partial<Mode> | undefined, transport: 'ws' | 'webrtc', connect: ConnectOptions = {}): Mode {
  const out = { ...mode, kind: 'service' } as Mode;
  if (connect.temperature !== undefined) out.temperature = connect.temperature;
  if (connect.noGreeting) out.greeting = false;
  if (transport !== 'webrtc') delete out.background_audio;
  return out;
}

export function isTextMode(mode: Partial<Mode> | undefined): boolean {
  return mode?.modality === 'text';
}

/** The JSON start frame, SPEC-shaped: audio only for voice, no unknown fields. */
export function buildStartFrame(i: StartInputs): StartFrame {
  const client: StartFrame['client'] = { name: CLIENT_NAME, version: CLIENT_VERSION };
  if (i.user) client.user = i.user.slice(0, 256);
  if (i.timezone) client.timezone = i.timezone.slice(0, 64);
  if (i.userAgent) client.user_agent = i.userAgent.slice(0, 512);
  const frame: StartFrame = { type: 'start', session_id: i.sessionId, mode: i.mode, client };
  if (i.apiKey) frame.api_key = i.apiKey;
  if (!isTextMode(i.mode)) frame.audio = { sr: 16000, output_encoding: i.downlink.encoding, output_sr: i.downlink.sampleRate };
  if (i.transport === 'webrtc') frame.transport = { kind: 'webrtc' };
  if (i.resumeToken) frame.resume_token = i.resumeToken;
  return frame;
}

/** A session id the server accepts: `s_` and 24 hex digits from the platform's CSPRNG. */
export function generateSessionId(): string {
  return `s_${randomHex(12)}`;
}

export function randomHex(bytes: number): string {
  const buf = new Uint8Array(bytes);
  crypto.getRandomValues(buf);
  return Array.from(buf, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The browser's IANA zone, if it can tell. */
export function browserTimezone(): string | undefined {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
  } catch {
    return undefined;
  }
}
