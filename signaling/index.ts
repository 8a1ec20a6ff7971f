/**
 * The package's server API (`import … from 'parley-realtime'`): createServer, server-side tools,
 * and the provider ports a custom model, recogniser or voice implements.
 */
export { createServer } from './create-server.ts';
export type { ConfigInput, KoaMiddleware, ParleyServer, ServerOptions } from './create-server.ts';
export { ConfigError, loadConfig } from './config.ts';
export type { Config } from './config.ts';
export type { Logger } from './log.ts';
export type { KeyStore } from './keys/key-store.ts';
export { MediaWorkerStartError } from '../media/webrtc/worker-peer.ts';

export { defineTool, toolResult, ServerToolResult } from '../session/tools/server-tool.ts';
export type { PartialOutcome, ServerTool, ServerToolContext } from '../session/tools/server-tool.ts';
export type { ToolOutcome } from '../session/tools/types.ts';

export { ModelError } from '../session/providers/llm.ts';
export type { ChatMessage, LanguageModel, ModelEvent, ModelRequest, ModelTool, ModelToolChoice, ToolCallRequest } from '../session/providers/llm.ts';
export { LocalLanguageModel } from '../session/providers/local-llm.ts';
export { OpenAiLanguageModel } from '../session/providers/openai-llm.ts';
export type { OpenAiLanguageModelOptions } from '../session/providers/openai-llm.ts';
export { SpeechUnavailableError } from '../session/providers/asr.ts';
export type { SpeechToText, TranscriptionStream } from '../session/providers/asr.ts';
export { SpeechProviderError } from '../session/providers/tts.ts';
export type { SpeechChunk, TextToSpeech } from '../session/providers/tts.ts';
export { catalogOf } from '../session/providers/voices.ts';
export type { VoiceCatalog } from '../session/providers/voices.ts';
export type { VoiceEntry } from '../session/protocol/server.ts';
export { loadVadFactory } from '../media/vad-factory.ts';
export type { VadDecision, VadFactory, VadProvider, VoiceActivityDetector } from '../media/vad.ts';

export { MemoryResumeStash } from '../session/resume/resume-stash.ts';
export type { ResumeStash } from '../session/resume/resume-stash.ts';
export type { SessionSnapshot, StashEntry } from '../session/resume/snapshot.ts';
