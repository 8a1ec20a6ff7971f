import { CLIENT_FRAME_TYPES } from './frames.ts';
import type { Rng } from '../../../session/testing/rng.ts';

/** One thing a fuzzing client sends: text or binary bytes, and the name of the mutation that made it. */
export interface Shot {
  kind: string;
  payload: string | Buffer;
  binary: boolean;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Values of every JSON type and of awkward shapes, for fields that expect something else. */
function oddValue(rng: Rng): Json {
  return rng.pick<() => Json>([
    () => null,
    () => true,
    () => -1,
    () => 0,
    () => 1e308,
    () => -0.5,
    () => 2 ** 53 + 1,
    () => '',
    () => 'x'.repeat(rng.int(300)),
    () => '\ud800\udfff\u0000\u202e\u200b😀',
    () => '\ud800',
    () => [],
    () => [null, 1, 'a', {}],
    () => ({}),
    () => ({ type: 'start' }),
    () => ({ __proto__: { polluted: true } }) as unknown as Json,
    () => ({ constructor: { prototype: { polluted: true } } }),
    () => '{"type":"reset"}',
  ])();
}

const KNOWN_KEYS = ['id', 'text', 'content', 'type', 'tools', 'mode', 'interaction', 'resolver', 'args', 'handle', 'note', 'state', 'voice', 'approval_id', 'message_id', 'tool_choice', 'barge_seq', 'remaining_ms'];

/** Paths to every value inside a JSON value (objects and arrays), root first. */
function paths(value: Json, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (out.length > 200) return out;
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...prefix, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) paths(v, [...prefix, k], out);
  return out;
}

function setAt(root: Json, path: (string | number)[], replace: (old: Json) => Json | undefined): Json {
  if (path.length === 0) return replace(root) ?? null;
  const parent = path.slice(0, -1).reduce<Json>((node, key) => (node as Record<string, Json>)[key as string] as Json, root);
  const key = path.at(-1)!;
  const next = replace((parent as Record<string, Json>)[key as string] as Json);
  if (Array.isArray(parent)) {
    if (next === undefined) parent.splice(key as number, 1);
    else parent[key as number] = next;
  } else if (parent && typeof parent === 'object') {
    if (next === undefined) delete (parent as Record<string, Json>)[key as string];
    else (parent as Record<string, Json>)[key as string] = next;
  }
  return root;
}

/** JSON nested `levels` deep, as text (JSON.stringify would overflow on the deep ones). */
const deepText = (levels: number): string => `${'{"a":['.repeat(levels)}1${']}'.repeat(levels)}`;

/** Structural mutations: the result is still JSON text. */
const STRUCTURAL: Array<[string, (frame: Json, rng: Rng) => string]> = [
  ['drop-field', (f, rng) => JSON.stringify(setAt(f, rng.pick(paths(f).slice(1).concat([[]])), () => undefined))],
  ['odd-value', (f, rng) => JSON.stringify(setAt(f, rng.pick(paths(f)), () => oddValue(rng)))],
  ['extra-field', (f, rng) => JSON.stringify({ ...(f as object), [rng.pick(KNOWN_KEYS)]: oddValue(rng) })],
  ['other-type', (f, rng) => JSON.stringify({ ...(f as object), type: rng.chance(0.8) ? rng.pick(CLIENT_FRAME_TYPES) : `x${rng.int(1e6)}` })],
  ['huge-string', (f, rng) => JSON.stringify(setAt(f, rng.pick(paths(f)), () => 'h'.repeat(rng.pick([5_000, 25_000, 200_000]))))],
  ['huge-array', (f, rng) => JSON.stringify(setAt(f, rng.pick(paths(f)), () => Array.from({ length: rng.pick([1000, 20000]) }, (_, i) => i)))],
  // Deep JSON anywhere inside the frame, e.g. in a tool's parameters, where it is otherwise valid.
  ['deep-json', (f, rng) => JSON.stringify(setAt(f, rng.pick(paths(f)), () => '__DEEP__')).replace('"__DEEP__"', deepText(rng.pick([30, 65, 5000, 5000])))],
  // JSON.parse keeps the last of two equal keys: the frame's body arrives under another type.
  ['duplicate-key', (f, rng) => JSON.stringify(f).replace(/\}$/, `,"type":"${rng.pick(CLIENT_FRAME_TYPES)}"}`)],
];

/** Byte-level mutations of the frame's text, or no frame at all. */
const RAW: Array<[string, (text: string, rng: Rng) => Shot]> = [
  ['truncated', (t, rng) => ({ kind: 'truncated', payload: t.slice(0, rng.int(t.length)), binary: false })],
  ['not-an-object', (_t, rng) => ({ kind: 'not-an-object', payload: rng.pick(['', ' ', 'null', '[]', '"start"', '1', 'true', '{}', '{"type":null}', '{"type":7}', '\u0000']), binary: false })],
  ['bad-utf8', (t, rng) => {
    const bytes = Buffer.from(t, 'utf8');
    const bad = Buffer.concat([bytes.subarray(0, rng.int(bytes.length)), Buffer.from(rng.pick([[0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]])), bytes.subarray(rng.int(bytes.length))]);
    return { kind: 'bad-utf8', payload: bad, binary: false };
  }],
  ['binary-json', (t) => ({ kind: 'binary-json', payload: Buffer.from(t, 'utf8'), binary: true })],
  ['random-bytes', (_t, rng) => ({ kind: 'random-bytes', payload: Buffer.from(Array.from({ length: rng.int(700) }, () => rng.int(256))), binary: rng.chance(0.7) })],
  ['flipped-bytes', (t, rng) => {
    const chars = [...t];
    for (let i = 0; i < 1 + rng.int(4); i += 1) chars[rng.int(chars.length)] = String.fromCharCode(rng.int(128));
    return { kind: 'flipped-bytes', payload: chars.join(''), binary: false };
  }],
  ['oversize', (_t, rng) => ({ kind: 'oversize', payload: `{"type":"input_text","text":"${'o'.repeat(rng.pick([300_000, 1_200_000]))}"}`, binary: false })],
];

/**
 * A mutation of `frame`: most are structural (the JSON stays JSON but breaks the schema in
 * some way), the rest byte-level (broken JSON, invalid UTF-8, binary where text belongs,
 * oversize). Oversize and invalid UTF-8 end the socket (ws closes 1009 / 1007), so they are rare.
 */
export function mutate(frame: Record<string, unknown>, rng: Rng, kind?: string): Shot {
  const text = JSON.stringify(frame);
  const raw = kind ? RAW.find(([name]) => name === kind) : rng.chance(0.25) ? rng.pick(RAW.filter(([name]) => (name === 'oversize' || name === 'bad-utf8' ? rng.chance(0.05) : true))) : undefined;
  if (raw) return raw[1](text, rng);
  const [name, structural] = (kind && STRUCTURAL.find(([n]) => n === kind)) || rng.pick(STRUCTURAL);
  return { kind: name, payload: structural(JSON.parse(text) as Json, rng), binary: false };
}

/** Every mutation by name: a sweep sends each frame type through each of them once. */
export const MUTATIONS: readonly string[] = [...STRUCTURAL.map(([name]) => name), ...RAW.map(([name]) => name)];
