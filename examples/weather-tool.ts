/**
 * A server-side tool: the model can ask for the weather, and this server answers it itself; the
 * browser never sees the call. Run: `npx tsx examples/weather-tool.ts`, then ask the demo page
 * "get weather in city=Paris".
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createServer, defineTool, toolResult } from 'parley-realtime';
import { z } from 'zod';

// Stands in for a weather service; a real tool would call one, passing `signal` along.
const FORECASTS: Record<string, { temperature_c: number; sky: string }> = {
  paris: { temperature_c: 21, sky: 'clear' },
  oslo: { temperature_c: 4, sky: 'snow' },
};

const getWeather = defineTool({
  name: 'get_weather',
  description: 'The current weather in a city.',
  parameters: z.object({ city: z.string().min(1).describe('the city, e.g. Paris') }),
  timeoutMs: 5000,
  async run({ city }, { signal, progress }) {
    progress(`looking up ${city}`);
    await sleep(50, undefined, { signal });
    const forecast = FORECASTS[city.toLowerCase()];
    // Not an error of the tool: an honest "no" the model passes on.
    if (!forecast) return toolResult({ outcome: 'failed', content: `no forecast for ${city}` });
    return { city, ...forecast };
  },
});

const server = await createServer({ tools: [getWeather] });
console.log(`weather example listening on ${await server.listen()}`);
process.once('SIGTERM', () => void server.close());
process.once('SIGINT', () => void server.close());
