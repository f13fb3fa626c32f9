// Preloaded into a Shiri process started with --expose-gc by a test that measures memory: on
// SIGUSR2 it runs a full garbage collection, and another once the first one's finalizers have
// run (buffers are freed only then), so what remains is what the process holds, not garbage
// waiting for V8's next major collection.
process.on("SIGUSR2", () => {
  globalThis.gc?.();
  setTimeout(() => globalThis.gc?.(), 50);
});
