import { rssMb } from './server-process.js';

export interface RssSampler {
  /** Stops sampling; the highest reading taken. */
  stop(): number;
}

/** Reads a process's resident set every `everyMs`; `onSample` sees each reading in MB. */
export function sampleRss(pid: number, everyMs: number, onSample: (mb: number) => void = () => undefined): RssSampler {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    const mb = rssMb(pid);
    peak = Math.max(peak, mb);
    onSample(mb);
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}
