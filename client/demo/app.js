import { RealtimeClient } from '/client.js';
import { sampleTool, transcript } from './transcript.js';
import { agentState, devicePicker, micMeter, micStatus, silentMic, voiceAvailability, voicePicker } from './voice-panel.js';
import { turnLatency } from './latency.js';
import { closingCountdown } from './closing.js';
import { turnWaterfall } from './waterfall.js';

/**
 * The demo page. Everything it shows is a feature: one function that takes the page and
 * subscribes to what it needs (`page.on`: a library event or frame type of the current client,
 * or a page event: `connected`, `disconnected`, `sent`, `mic`). Adding a panel is one more
 * function in FEATURES; none of them knows about the others.
 */
const FEATURES = [transcript, sampleTool, agentState, micMeter, micStatus, silentMic, devicePicker, voicePicker, turnLatency, turnWaterfall, voiceAvailability, closingCountdown];

// The page keeps the resume state in sessionStorage (tab-scoped; it is a short-lived
// credential), with its transcript, modality and transport so a reload rebuilds the same call.
const STORE = 'parley.demo';

const page = new (class DemoPage {
  client = undefined;
  events = new EventTarget();
  handlers = [];

  $(id) {
    return document.getElementById(id);
  }
  /** Subscribes to `type` on the current and every later client, and to page events of that name. */
  on(type, handler) {
    this.handlers.push({ type, handler });
    this.client?.addEventListener(type, (e) => handler(e.detail, this.client));
    this.events.addEventListener(type, (e) => handler(e.detail, this.client));
  }
  emit(type, detail = {}) {
    this.events.dispatchEvent(new CustomEvent(type, { detail }));
  }
  adopt(client) {
    this.client = client;
    window.parleyClient = client; // for poking around in the console
    for (const { type, handler } of this.handlers) client.addEventListener(type, (e) => client === this.client && handler(e.detail, client));
  }
  status(text, kind = '') {
    this.$('status').textContent = text;
    this.$('status').className = kind;
  }
  load() {
    try {
      return JSON.parse(sessionStorage.getItem(STORE) ?? 'null');
    } catch {
      return null;
    }
  }
  save(patch) {
    if (patch === null) return sessionStorage.removeItem(STORE);
    const saved = this.load();
    if (saved || patch.state) sessionStorage.setItem(STORE, JSON.stringify({ ...saved, ...patch }));
  }
})();

function setConnected(on) {
  const voice = page.client?.mode.modality === 'voice';
  for (const id of ['connect', 'modality', 'transport']) page.$(id).disabled = on;
  page.$('disconnect').disabled = !on;
  page.$('text').disabled = !on;
  page.$('send').disabled = !on;
  page.$('stop').disabled = !on || !page.client?.responding;
  page.$('talk').hidden = !voice;
  page.$('talk').disabled = !on;
  page.$('voice-panel').hidden = !voice;
  if (!on) page.$('talk').setAttribute('aria-pressed', 'false');
}

async function obtainKey(sessionId) {
  const pasted = page.$('key').value.trim();
  if (pasted) return pasted;
  const res = await fetch('/dev/session-key', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ session_id: sessionId }) });
  if (!res.ok) throw new Error('no dev key here: paste an API key (npm run keys -- create --account you), or start the server with DEV_ROUTES=on');
  return (await res.json()).api_key;
}

async function start(saved) {
  const modality = saved?.modality ?? page.$('modality').value;
  // Voice goes over WebRTC unless the toggle says WebSocket; the library falls back to the
  // WebSocket on Safari by itself. Text always uses the WebSocket.
  const transport = modality === 'voice' ? (saved?.transport ?? page.$('transport').value) : 'ws';
  const sessionId = saved?.state.sessionId ?? `demo-${Math.random().toString(36).slice(2, 10)}`;
  page.status(saved ? 'resuming the previous conversation…' : 'connecting…');
  try {
    const apiKey = await obtainKey(sessionId);
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
    const client = new RealtimeClient({ url, sessionId, apiKey, transport, mode: { kind: 'service', modality, tools: page.tools ?? [] }, resumeState: saved?.state ?? null });
    page.adopt(client);
    client.addEventListener('resume_state', (e) => page.save(e.detail.state ? { state: e.detail.state, modality, transport } : null));
    if (modality === 'voice') await client.unlockAudio();
    let ready;
    let resumed = Boolean(saved);
    try {
      ready = await client.connect();
    } catch (error) {
      if (error.code !== 'resume_failed') throw error;
      // Stale state: the library cleared it; start fresh on the same client.
      resumed = false;
      page.emit('expired');
      ready = await client.connect();
    }
    setConnected(true);
    page.$('modality').value = modality;
    page.$('transport').value = transport;
    const how = (name) => (ready.modality === 'text' ? 'text' : `voice ${name} · ${client.transport === 'webrtc' ? 'WebRTC' : 'WebSocket'}`);
    page.status(`connected · ${resumed ? 'resumed · ' : ''}${how(ready.name)}`, 'ok');
    client.addEventListener('voice', (e) => page.status(`connected · ${how(e.detail.name)}`, 'ok'));
    page.emit('connected', { ready, resumed });
    page.$('text').focus();
  } catch (error) {
    page.status(`could not connect: ${error.code ?? ''} ${error.message}`, 'bad');
    setConnected(false);
  }
}

page.on('reconnecting', (d) => page.status(`connection lost · reconnecting (attempt ${d.attempt})…`, 'warn'));
page.on('reconnected', () => page.status('connected · resumed after a drop', 'ok'));
page.on('close', (d) => {
  setConnected(false);
  page.status(`disconnected (${d.code})`);
  page.emit('disconnected');
});
page.on('turn', () => (page.$('stop').disabled = false));
page.on('done', () => (page.$('stop').disabled = true));

page.$('connect').onclick = () => start(page.load());
page.$('disconnect').onclick = () => {
  page.client?.close();
  page.save(null);
};
page.$('stop').onclick = () => page.client?.interrupt();
page.$('modality').onchange = () => (page.$('transport').hidden = page.$('modality').value !== 'voice');
page.$('talk').onclick = async () => {
  const talk = page.$('talk');
  if (talk.getAttribute('aria-pressed') === 'true') {
    page.client.stopMic();
    talk.setAttribute('aria-pressed', 'false');
    return page.emit('mic', { on: false });
  }
  talk.setAttribute('aria-pressed', 'true');
  try {
    await page.client.startMic();
    page.emit('mic', { on: true });
  } catch (error) {
    talk.setAttribute('aria-pressed', 'false');
    page.emit('mic', { on: false, error: error.code ?? error.message });
  }
};
page.$('composer').onsubmit = (event) => {
  event.preventDefault();
  const text = page.$('text').value.trim();
  if (!text || !page.client) return;
  // Text modality: input_text. Voice: typed words join the spoken conversation as user text.
  if (page.client.mode.modality === 'text') page.client.sendText(text);
  else page.client.injectContext(text).catch((error) => page.emit('notice', { text: `not delivered: ${error.code}` }));
  page.emit('sent', { text, at: performance.now() });
  page.$('text').value = '';
};

for (const feature of FEATURES) feature(page);

// After a reload: the features put their part back (the transcript), then the call resumes.
const saved = page.load();
page.emit('restore', { saved });
page.$('transport').hidden = page.$('modality').value !== 'voice';
if (saved?.state) {
  page.$('modality').value = saved.modality;
  start(saved);
}
