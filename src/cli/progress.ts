import cliProgress from 'cli-progress';

/** A progress bar on a TTY (stderr), nothing otherwise: --json output stays one clean line. */
export function progressBar(label: string) {
  if (!process.stderr.isTTY) return { update: (_done: number, _total: number) => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {percentage}% {value}/{total}`, stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done: number, total: number) {
      if (!started) {
        bar.start(total, done);
        started = true;
      }
      bar.setTotal(Math.max(total, done));
      bar.update(done);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
