import type { ChatMessage, ModelEvent } from '../providers/llm.ts';
import type { TokenBucket, UsageMeter } from './usage-meter.ts';

/** A rough, stable token count for text no provider counted: about four characters a token. */
const CHARS_PER_TOKEN = 4;
/** Per message: the role and the separators a chat template adds. */
const TOKENS_PER_MESSAGE = 4;

export function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

export function estimateInputTokens(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const message of messages) {
    chars += message.content.length;
    if (message.role === 'assistant' && message.tool_calls) {
      for (const call of message.tool_calls) chars += call.name.length + JSON.stringify(call.args).length;
    }
  }
  return estimateTokens(chars) + TOKENS_PER_MESSAGE * messages.length;
}

/**
 * One model request's tokens: the provider's own count when its stream reports one (a `usage`
 * event), otherwise an estimate from the request and the text that came back, marked so. Fed
 * every event of the stream, committed once, however the request ends (an interrupted one was
 * still paid for up to where it stopped).
 */
export class ModelTokens {
  private reported: { input: number; output: number } | undefined;
  private outputChars = 0;
  private committed = false;

  constructor(private readonly messages: readonly ChatMessage[]) {}

  note(event: ModelEvent): void {
    if (this.committed) return;
    if (event.type === 'text') this.outputChars += event.delta.length;
    else if (event.type === 'usage') this.reported = { input: event.inputTokens, output: event.outputTokens };
  }

  /** Once only: the turn commits a request it cut short, and the request's own end finds it done. */
  commit(meter: Pick<UsageMeter, 'tokens'>, bucket: TokenBucket): void {
    if (this.committed) return;
    this.committed = true;
    if (this.reported) meter.tokens(bucket, this.reported.input, this.reported.output, false);
    else meter.tokens(bucket, estimateInputTokens(this.messages), estimateTokens(this.outputChars), true);
  }
}
