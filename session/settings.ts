import type { AudioConfig, Mode } from './protocol/start.ts';
import type { ToolChoice } from './protocol/common.ts';
import type { ToolDeclaration } from './protocol/tools.ts';

/** Deployment defaults a session falls back on when the start frame leaves a field out. */
export interface SessionDefaults {
  greeting: string;
  voice: string;
  temperature: number;
}

/** A session's configuration with every default resolved. */
export interface SessionSettings {
  modality: 'voice' | 'text';
  voice: string;
  instructions: string | undefined;
  /** The opening greeting text, or false for none. */
  greeting: string | false;
  temperature: number;
  webSearch: boolean;
  endCall: boolean;
  flow: boolean;
  backgroundAudio: boolean;
  turnEndThreshold: number | undefined;
  toolChoice: ToolChoice;
  /** Client-declared tools, already validated. */
  tools: ToolDeclaration[];
  /** Downlink/uplink formats; absent in text modality. */
  audio: AudioConfig | undefined;
}

export function resolveSettings(
  mode: Mode,
  audio: AudioConfig | undefined,
  tools: ToolDeclaration[],
  defaults: SessionDefaults,
): SessionSettings {
  const modality = mode.modality ?? 'voice';
  return {
    modality,
    voice: mode.voice ?? defaults.voice,
    instructions: mode.instructions,
    greeting: mode.greeting === undefined ? defaults.greeting : mode.greeting,
    temperature: mode.temperature ?? defaults.temperature,
    webSearch: mode.web_search ?? false,
    endCall: mode.end_call ?? false,
    flow: mode.flow ?? false,
    backgroundAudio: mode.background_audio ?? false,
    turnEndThreshold: mode.turn_end_threshold,
    toolChoice: mode.tool_choice ?? 'auto',
    tools,
    audio: modality === 'text' ? undefined : audio,
  };
}

/**
 * SPEC: explicit mode fields in a resuming start frame override the restored configuration;
 * absent fields keep it. Audio always follows the new start frame (it describes this socket).
 */
export function mergeOnResume(
  restored: SessionSettings,
  mode: Mode,
  audio: AudioConfig | undefined,
  tools: ToolDeclaration[] | undefined,
): SessionSettings {
  const modality = mode.modality ?? restored.modality;
  return {
    modality,
    voice: mode.voice ?? restored.voice,
    instructions: mode.instructions ?? restored.instructions,
    greeting: mode.greeting === undefined ? restored.greeting : mode.greeting,
    temperature: mode.temperature ?? restored.temperature,
    webSearch: mode.web_search ?? restored.webSearch,
    endCall: mode.end_call ?? restored.endCall,
    flow: mode.flow ?? restored.flow,
    backgroundAudio: mode.background_audio ?? restored.backgroundAudio,
    turnEndThreshold: mode.turn_end_threshold ?? restored.turnEndThreshold,
    toolChoice: mode.tool_choice ?? restored.toolChoice,
    tools: tools ?? restored.tools,
    audio: modality === 'text' ? undefined : audio,
  };
}
