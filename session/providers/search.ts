import { ProviderError } from './provider-error.ts';

/** The WebSearch port for the managed web_search tool. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export interface WebSearch {
  readonly name: string;
  search(query: string, signal: AbortSignal): Promise<SearchResult[]>;
}

/** The search backend failed; `publicDetail` is what the model and the client may read. */
export class SearchError extends ProviderError {
  override name = 'SearchError';
}
