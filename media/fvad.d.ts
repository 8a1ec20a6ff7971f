declare module '@echogarden/fvad-wasm' {
  const factory: (options?: Record<string, unknown>) => Promise<unknown>;
  export default factory;
}
