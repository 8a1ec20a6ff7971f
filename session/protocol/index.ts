/**
 * The protocol's vocabulary as the package exports it (`parley-realtime/protocol`): every frame's
 * zod schema and type, the error and limit tables. The schemas validate at run time; the types
 * need no zod in a consumer's bundle when imported with `import type`.
 */
export { ClientFrame, CLIENT_FRAME_TYPES } from './client.ts';
export type { ClientFrameOf, ClientFrameType } from './client.ts';
export { ServerFrame, VoiceEntry } from './server.ts';
export type { ServerFrameOf } from './server.ts';
export { AudioConfig, ClientInfo, Mode, StartFrame, TransportConfig } from './start.ts';
export { ToolChoice, TOOL_NAME_PATTERN } from './common.ts';
export { ToolDeclaration } from './tools.ts';
export { errorFrame, HTTP_ERRORS, SESSION_ERRORS, TOOL_ERRORS, WS_ERRORS } from './errors.ts';
export type { ErrorCode, ErrorSpec, HttpErrorCode, SessionErrorCode, ToolErrorCode, WsErrorCode } from './errors.ts';
export { LIMITS, SESSION_ID_PATTERN } from './limits.ts';
export { parseClientFrame } from './parse.ts';
export type { ParseResult } from './parse.ts';
