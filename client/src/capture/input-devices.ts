import type { InputDevice } from '../types.ts';

/** Microphones the page may use; labels are empty until the user granted access once. */
export async function listInputDevices(): Promise<InputDevice[]> {
  if (!navigator.mediaDevices?.enumerateDevices) return [];
  const all = await navigator.mediaDevices.enumerateDevices();
  return all.filter((d) => d.kind === 'audioinput').map((d) => ({ deviceId: d.deviceId, label: d.label, groupId: d.groupId }));
}

/** Calls `onChange` on every devicechange; returns the unsubscribe function. */
export function watchInputDevices(onChange: () => void): () => void {
  const devices = navigator.mediaDevices;
  if (!devices?.addEventListener) return () => undefined;
  devices.addEventListener('devicechange', onChange);
  return () => devices.removeEventListener('devicechange', onChange);
}
