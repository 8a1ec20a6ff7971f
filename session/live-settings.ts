import type { ClientFrameOf } from './protocol/client.ts';
import { errorFrame } from './protocol/errors.ts';
import type { ServerFrame } from './protocol/server.ts';
import { checkToolChoice, validateTools } from './protocol/tools.ts';
import type { VoiceCatalog } from './providers/voices.ts';
import type { SessionSettings } from './settings.ts';
import type { ToolDesk } from './tools/tool-desk.ts';

/**
 * Mid-session changes to the start frame's choices: set_voice, set_tools, set_tool_choice. A
 * refused change answers with an error frame and leaves the previous choice in force.
 */
export class LiveSettings {
  constructor(
    private readonly settings: SessionSettings,
    private readonly voices: VoiceCatalog,
    private readonly desk: ToolDesk,
    private readonly send: (frame: ServerFrame) => void,
  ) {}

  setVoice(frame: ClientFrameOf<'set_voice'>): void {
    const voice = this.voices.find(frame.voice);
    if (!voice) return this.send(errorFrame('unknown_voice', `unknown voice "${frame.voice}"; ready.voices lists the choices`));
    this.settings.voice = voice.voice;
    this.send({ type: 'voice', voice: voice.voice, name: voice.name });
  }

  setTools(frame: ClientFrameOf<'set_tools'>): void {
    const checked = validateTools(frame.tools, this.managed());
    if (!checked.ok) return this.send(errorFrame('invalid_tools', `${checked.detail}; the previous tools stay in force`));
    this.settings.tools = checked.tools;
    this.desk.toolsChanged();
  }

  setToolChoice(frame: ClientFrameOf<'set_tool_choice'>): void {
    const bad = checkToolChoice(frame.tool_choice, this.settings.tools, this.managed());
    if (bad) return this.send(errorFrame('invalid_tools', `${bad}; the previous tool choice stays`));
    this.desk.setToolChoice(frame);
  }

  private managed(): { webSearch: boolean; endCall: boolean } {
    return { webSearch: this.settings.webSearch, endCall: this.settings.endCall };
  }
}
