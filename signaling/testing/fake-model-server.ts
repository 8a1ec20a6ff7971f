import { afterAll, beforeAll } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../session/testing/fake-openai-server.ts';
import { startTestServer, type TestServer } from './test-server.ts';

/**
 * A test server whose model is the fake OpenAI-compatible server, started before the file's
 * tests and stopped after them. Read `t` and `fake` inside tests (they exist from beforeAll on).
 */
export function useServerWithFakeModel(env: Record<string, string> = {}): { readonly t: TestServer; readonly fake: FakeOpenAiServer } {
  let t: TestServer | undefined;
  let fake: FakeOpenAiServer | undefined;
  beforeAll(async () => {
    fake = await startFakeOpenAiServer();
    t = await startTestServer({ LLM_PROVIDER: 'openai', LLM_BASE_URL: fake.url, ...env });
  });
  afterAll(async () => {
    await t?.stop();
    await fake?.close();
  });
  return {
    get t(): TestServer {
      if (!t) throw new Error('the test server starts in beforeAll');
      return t;
    },
    get fake(): FakeOpenAiServer {
      if (!fake) throw new Error('the fake model server starts in beforeAll');
      return fake;
    },
  };
}
