import { afterAll, beforeAll } from 'vitest';
import { startFakeOpenAiSpeechServer, type FakeOpenAiSpeechServer } from '../../session/testing/fake-openai-speech-server.ts';
import { startTestServer, type TestServer } from './test-server.ts';

export interface RemoteSpeech {
  /** The OpenAI-compatible speech endpoints the server talks to (script them, read what they got). */
  fake: FakeOpenAiSpeechServer;
  t: TestServer;
}

/**
 * For a test file: a real server whose recogniser and voice are OpenAI-compatible endpoints (the
 * fake speech server), so voice works with no Debian package; started before the file's tests,
 * stopped after. The fields are filled once the tests run.
 */
export function useRemoteSpeechServer(env: Record<string, string> = {}): RemoteSpeech {
  const rig = {} as RemoteSpeech;
  beforeAll(async () => {
    rig.fake = await startFakeOpenAiSpeechServer();
    rig.t = await startTestServer({
      ASR_PROVIDER: 'openai',
      ASR_BASE_URL: rig.fake.url,
      ASR_API_KEY: 'sk-asr',
      TTS_PROVIDER: 'openai',
      TTS_BASE_URL: rig.fake.url,
      TTS_VOICES: 'alloy,nova',
      ...env,
    });
  });
  afterAll(async () => {
    await rig.t?.stop();
    await rig.fake?.close();
  });
  return rig;
}
