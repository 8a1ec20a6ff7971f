import { publicDetail, type Failure } from './http/failure.ts';

/**
 * A provider failed. `message` is for the log (redacted when it quotes the provider);
 * `publicDetail` is what a client may read in an error frame: our words only.
 */
export class ProviderError extends Error {
  readonly publicDetail: string;

  constructor(
    message: string,
    readonly retryable = true,
    readonly status?: number,
    publicText?: string,
  ) {
    super(message);
    this.name = 'ProviderError';
    // Messages we write ourselves (flite, an unknown voice) hold nothing secret.
    this.publicDetail = publicText ?? message;
  }
}

/** The constructor shape of ProviderError's subclasses, for building one from a Failure. */
export type ProviderErrorClass<E extends ProviderError> = new (message: string, retryable?: boolean, status?: number, publicText?: string) => E;

export function errorFromFailure<E extends ProviderError>(Kind: ProviderErrorClass<E>, failure: Failure): E {
  return new Kind(`${failure.service}: ${failure.kind}${failure.status ? ` HTTP ${failure.status}` : ''}: ${failure.logDetail}`, failure.retryable, failure.status, publicDetail(failure));
}

/** What a client may read about a failure: a ProviderError's public words, else only `fallback`. */
export function clientDetail(error: unknown, fallback: string): string {
  return error instanceof ProviderError ? error.publicDetail : fallback;
}
