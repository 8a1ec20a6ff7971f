import { z } from 'zod';
import type { SearchResult, WebSearch } from './search.ts';

const Response = z.object({
  results: z.array(z.object({ title: z.string().default(''), url: z.string().default(''), content: z.string().optional() }).loose()).default([]),
});

/** SearXNG's JSON API (`/search?format=json`), the self-hostable search backend. */
export class SearxngSearch implements WebSearch {
  readonly name = 'searxng';

  constructor(
    private readonly baseUrl: string,
    private readonly maxResults = 5,
    private readonly timeoutMs = 8000,
  ) {}

  async search(query: string, signal: AbortSignal): Promise<SearchResult[]> {
    const url = new URL('search', this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`);
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    const response = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(this.timeoutMs)]), headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`search backend answered ${response.status}`);
    const parsed = Response.safeParse(await response.json());
    if (!parsed.success) throw new Error('search backend sent an unexpected body');
    return parsed.data.results.slice(0, this.maxResults).map((r) => ({ title: r.title, url: r.url, snippet: (r.content ?? '').slice(0, 500) }));
  }
}
