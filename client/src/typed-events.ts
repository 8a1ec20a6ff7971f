import type { LibraryEventDetails, RealtimeClientEventMap } from './types.ts';

/**
 * The client's EventTarget with listeners typed by event name, so that
 * `addEventListener('text_delta', (e) => e.detail.delta)` compiles under strict.
 */
export class RealtimeEventTarget extends EventTarget {
  override addEventListener<K extends keyof RealtimeClientEventMap>(
    type: K,
    listener: ((this: this, event: RealtimeClientEventMap[K]) => unknown) | null,
    options?: boolean | AddEventListenerOptions,
  ): void;
  override addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void;
  override addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void {
    super.addEventListener(type, listener, options);
  }

  override removeEventListener<K extends keyof RealtimeClientEventMap>(
    type: K,
    listener: ((this: this, event: RealtimeClientEventMap[K]) => unknown) | null,
    options?: boolean | EventListenerOptions,
  ): void;
  override removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void;
  override removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | EventListenerOptions): void {
    super.removeEventListener(type, listener, options);
  }

  protected emit<K extends keyof LibraryEventDetails>(type: K, detail: LibraryEventDetails[K]): void;
  protected emit(type: string, detail: unknown): void;
  protected emit(type: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }
}
