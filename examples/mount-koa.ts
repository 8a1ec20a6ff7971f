/**
 * Parley inside an application you already have: its HTTP routes as Koa middleware beside your
 * own, and its WebSocket on your server's upgrade event. Run: `npx tsx examples/mount-koa.ts`.
 */
import { createServer as createHttpServer } from 'node:http';
import Koa from 'koa';
import { createServer } from 'parley-realtime';

const parley = await createServer();
const app = new Koa();
app.use(async (ctx, next) => {
  if (ctx.path !== '/hello') return next();
  ctx.body = { hello: 'from your own app' };
});
// /healthz, /api/v1/session-keys and /client.js; everything else goes on to the next middleware.
app.use(parley.middleware());

const http = createHttpServer(app.callback());
http.on('upgrade', (req, socket, head) => {
  // /ws is Parley's; any other upgrade is yours (here: refused).
  if (!parley.handleUpgrade(req, socket, head)) socket.destroy();
});
http.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => {
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  console.log(`koa example listening on http://${process.env.HOST ?? '127.0.0.1'}:${port}`);
});

process.once('SIGTERM', async () => {
  await parley.close();
  http.close();
});
