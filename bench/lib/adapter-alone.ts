import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LanguageModel, ModelRequest } from '../../session/providers/llm.ts';

/**
 * The model adapter alone, in this process, against the fake OpenAI-compatible server in its
 * own: CPU of this process's main thread per streamed reply (request, SSE parsing, events), with
 * no session, WebSocket or client around it. With a baseline tree, its adapter runs in the same
 * process in alternating blocks, so the two are measured under the same load.
 */

const BLOCK = 100;
const BLOCKS = 6;

export interface AloneFigures {
  label: string;
  cpuUsPerReply: number[];
}

/** On-CPU time of this process's main thread, ms (/proc schedstat, ns resolution). */
function mainThreadCpuMs(): number {
  return Number(readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

async function load(root: string, baseUrl: string): Promise<LanguageModel & { close(): Promise<void> }> {
  const mod = (await import(join(root, 'session/providers/openai-llm.ts'))) as typeof import('../../session/providers/openai-llm.ts');
  return new mod.OpenAiLanguageModel({ baseUrl, apiKey: 'sk-bench', model: 'bench' });
}

async function reply(model: LanguageModel): Promise<void> {
  const request: ModelRequest = { messages: [{ role: 'user', content: 'hello' }], tools: [], toolChoice: 'auto', signal: new AbortController().signal };
  let finished = false;
  for await (const event of model.stream(request)) if (event.type === 'finish') finished = true;
  if (!finished) throw new Error('adapter-alone: a reply did not finish');
}

/** `trees`: label → repository root whose adapter to run. */
export async function adapterAlone(baseUrl: string, trees: Record<string, string>): Promise<AloneFigures[]> {
  const models = await Promise.all(Object.entries(trees).map(async ([label, root]) => ({ label, model: await load(root, baseUrl), samples: [] as number[] })));
  try {
    for (const m of models) for (let i = 0; i < 50; i += 1) await reply(m.model); // warm-up (JIT, connections)
    for (let block = 0; block < BLOCKS; block += 1) {
      for (const m of block % 2 === 0 ? models : [...models].reverse()) {
        const cpu = mainThreadCpuMs();
        for (let i = 0; i < BLOCK; i += 1) await reply(m.model);
        m.samples.push(((mainThreadCpuMs() - cpu) * 1000) / BLOCK);
      }
    }
  } finally {
    await Promise.all(models.map((m) => m.model.close()));
  }
  return models.map((m) => ({ label: m.label, cpuUsPerReply: m.samples }));
}
