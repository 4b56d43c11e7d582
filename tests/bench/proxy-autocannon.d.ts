// The part of autocannon's API the proxy benchmark uses (the package ships no types).
declare module "autocannon" {
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
  }
  interface Result {
    requests: { average: number; total: number };
    /** Seconds the run took. */
    duration: number;
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
  }
  export default function autocannon(options: Options): Promise<Result>;
}
