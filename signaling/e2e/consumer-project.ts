import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A fresh application project with the package installed from its tarball, as `npm install
 * ./parley-realtime-x.tgz` lays it out, without the network: the tarball is unpacked into
 * node_modules/parley-realtime, and each dependency the package declares (and the application's
 * own) is linked from this repository's node_modules, which `npm ci` filled from the lockfile.
 * Only declared dependencies are there, so one missing from package.json fails here.
 */

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const NAME = 'parley-realtime';

/** `npm pack` as a user's publish would run it (prepare builds dist/); returns the tarball's path. */
export function packRepository(destination: string): string {
  execFileSync('npm', ['pack', '--pack-destination', destination, '--silent'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'], timeout: 240_000 });
  const tarball = readdirSync(destination).find((name) => name.startsWith(`${NAME}-`) && name.endsWith('.tgz'));
  if (!tarball) throw new Error('npm pack wrote no tarball');
  return join(destination, tarball);
}

export function tarballFiles(tarball: string): string[] {
  return execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).trim().split('\n').map((path) => path.replace(/^package\//, ''));
}

export interface PackageJson {
  name: string;
  bin?: Record<string, string>;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  exports?: Record<string, unknown>;
}

/** Installs the tarball into `project` with the application's own dependencies `appDependencies`. */
export function installTarball(tarball: string, project: string, appDependencies: string[]): PackageJson {
  const target = join(project, 'node_modules', NAME);
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['xzf', tarball, '-C', target, '--strip-components=1']);
  const manifest = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as PackageJson;
  for (const dependency of new Set([...Object.keys(manifest.dependencies ?? {}), ...appDependencies])) {
    const link = join(project, 'node_modules', dependency);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join(REPO, 'node_modules', dependency), link, 'dir');
  }
  mkdirSync(join(project, 'node_modules/.bin'), { recursive: true });
  for (const [command, path] of Object.entries(manifest.bin ?? {})) symlinkSync(join('..', NAME, path), join(project, 'node_modules/.bin', command));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer-app', private: true, type: 'module' }, null, 2));
  return manifest;
}

const STRICT = { strict: true, target: 'ES2022', lib: ['ES2022', 'DOM'], types: ['node'], skipLibCheck: false, noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true };

/** tsconfig files for both resolutions a consumer may use: node16 (compiled to run) and bundler. */
export function writeTsconfigs(project: string, files: string[]): void {
  const node16 = { compilerOptions: { ...STRICT, module: 'node16', moduleResolution: 'node16', outDir: 'build', rootDir: '.' }, files };
  const bundler = { compilerOptions: { ...STRICT, module: 'esnext', moduleResolution: 'bundler', noEmit: true }, files };
  writeFileSync(join(project, 'tsconfig.node16.json'), JSON.stringify(node16, null, 2));
  writeFileSync(join(project, 'tsconfig.bundler.json'), JSON.stringify(bundler, null, 2));
}

/** Runs this repository's TypeScript on a consumer tsconfig; resolves with its diagnostics ('' when clean). */
export function compile(project: string, tsconfig: string): string {
  try {
    execFileSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(project, tsconfig)], { cwd: project, encoding: 'utf8', timeout: 120_000 });
    return '';
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    return `${failed.stdout ?? ''}${failed.stderr ?? ''}` || failed.message;
  }
}

/**
 * The application: the server API with a server-side tool, the client from Node over `ws`, and
 * the protocol's types, all from the package by name. It prints one JSON line about its turns.
 */
export const APP_SOURCE = `import { createServer, defineTool } from 'parley-realtime';
import { RealtimeClient } from 'parley-realtime/client';
import type { ServerFrameOf } from 'parley-realtime/protocol';
import WebSocket from 'ws';
import { z } from 'zod';

const seen: { city: string; session: string }[] = [];
const weather = defineTool({
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: z.object({ city: z.string() }),
  run: async ({ city }, context) => {
    seen.push({ city, session: context.sessionId });
    return { city, temperature_c: 19 };
  },
});

const server = await createServer({ config: { PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', LOCAL_LLM_WORD_DELAY_MS: 0 }, tools: [weather] });
const url = await server.listen();
const { key } = await server.keys.create('consumer');
const client = new RealtimeClient({ url: url.replace('http', 'ws') + '/ws', apiKey: key, WebSocket, mode: { modality: 'text', greeting: false } });

async function turn(text: string): Promise<{ status: ServerFrameOf<'done'>['status']; reply: string }> {
  let reply = '';
  const onDelta = (e: CustomEvent<ServerFrameOf<'text_delta'>>): void => {
    reply += e.detail.delta;
  };
  client.addEventListener('text_delta', onDelta);
  const done = new Promise<ServerFrameOf<'done'>>((resolve) => client.addEventListener('done', (e) => resolve(e.detail), { once: true }));
  client.sendText(text);
  const { status } = await done;
  client.removeEventListener('text_delta', onDelta);
  return { status, reply };
}

const ready = await client.connect();
const arithmetic = await turn('What is twelve times seven?');
const tool = await turn('get weather city=Lyon');
await client.closeAndWait();
await server.close();
console.log(JSON.stringify({ modality: ready.modality, arithmetic, tool, seen }));
`;

/**
 * The README's code as a reader would paste it: the browser example (the page script, importing
 * the package instead of the served /client.js), the package example, and the client README's
 * Node example. Names a snippet leaves to the reader are declared.
 */
export function readmeExamples(): Record<string, string> {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const clientReadme = readFileSync(join(REPO, 'client/README.md'), 'utf8');
  const page = between(readme, '<script type="module">', '</script>').replace("'/client.js'", "'parley-realtime/client'");
  return {
    'readme-browser.ts': `declare const scopedKey: string;\n${page}`,
    'readme-package.ts': fenced(readme.slice(readme.indexOf('## As a package')), 'ts'),
    'readme-node.ts': `declare const key: string;\n${fenced(clientReadme.slice(clientReadme.indexOf('## In Node')), 'ts')}`,
  };
}

function between(text: string, open: string, close: string): string {
  const start = text.indexOf(open);
  const end = start < 0 ? -1 : text.indexOf(close, start + open.length);
  if (end < 0) throw new Error(`no ${open}…${close} in the README`);
  return text.slice(start + open.length, end);
}

function fenced(text: string, language: string): string {
  return between(text, `\`\`\`${language}\n`, '```');
}
