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
