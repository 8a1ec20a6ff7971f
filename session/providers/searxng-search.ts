import { z } from 'zod';
import { SearchError, type SearchResult, type WebSearch } from './search.ts';
import { Upstream } from './http/upstream.ts';

const Response = z.object({
  results: z.array(z.object({ title: z.string().default(''), url: z.string().default(''), content: z.string().optional() }).loose()).default([]),
});

export interface SearxngSearchOptions {
  maxResults?: number;
  /** Bounds the answer's headers and any gap in its body. Default 8000. */
  timeoutMs?: number;
  connections?: number;
}

/** SearXNG's JSON API (`/search?format=json`), the self-hostable search backend. */
export class SearxngSearch implements WebSearch {
  readonly name = 'searxng';
  private readonly upstream: Upstream<SearchError>;
  private readonly maxResults: number;

  constructor(baseUrl: string, options: SearxngSearchOptions = {}) {
    const timeoutMs = options.timeoutMs ?? 8000;
    this.maxResults = options.maxResults ?? 5;
    this.upstream = new Upstream('web search', SearchError, {
      baseUrl,
      firstByteMs: timeoutMs,
      idleMs: timeoutMs,
      ...(options.connections === undefined ? {} : { connections: options.connections }),
    });
  }

  /** Resolves [] when `signal` aborts first; throws SearchError (our words in publicDetail) on failure. */
  async search(query: string, signal: AbortSignal): Promise<SearchResult[]> {
    const params = new URLSearchParams({ q: query, format: 'json' });
    const body = await this.upstream.request({ method: 'GET', path: `search?${params}`, accept: 'application/json', signal });
    if (!body) return [];
    let text: string;
    try {
      text = await body.text();
    } catch (error) {
      if (signal.aborted) return [];
      throw this.upstream.bodyFailure(error);
    }
    let parsed: ReturnType<typeof Response.safeParse>;
    try {
      parsed = Response.safeParse(JSON.parse(text));
    } catch {
      throw this.upstream.fail('malformed', 'answer is not JSON');
    }
    if (!parsed.success) throw this.upstream.fail('malformed', 'answer does not have the results shape');
    return parsed.data.results.slice(0, this.maxResults).map((r) => ({ title: r.title, url: r.url, snippet: (r.content ?? '').slice(0, 500) }));
  }

  close(): Promise<void> {
    return this.upstream.close();
  }
}
