// Preloaded (-r) into the service when the benchmark profiles it (BENCH_CPU_PROF=1). Node writes a
// --cpu-prof profile only on a normal exit, but Nest re-raises SIGTERM after its shutdown hooks; this
// listener, registered first, lets Nest's run on the first signal and exits normally on the re-raised one.
process.on('SIGTERM', () => {
  if (process.listenerCount('SIGTERM') === 1) process.exit(0);
});
